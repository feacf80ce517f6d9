package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"unlearn/experiment"
	"unlearn/report"
)

// writeTightness runs the tightness of the certified α over grid (and,
// with isotropic, over experiment.IsotropicGrid) and writes it into the
// results folder dir (experiment.WriteTightnessFiles).
func writeTightness(ctx context.Context, w io.Writer, dir string, grid experiment.Grid, isotropic bool, workers int) error {
	start := time.Now()
	grids := []experiment.Grid{grid}
	if isotropic {
		grids = append(grids, experiment.IsotropicGrid())
	}
	var ts []*experiment.Tightness
	n := 0
	for _, g := range grids {
		t, err := experiment.RunTightness(ctx, g, experiment.TightnessOptions{Workers: workers})
		if err != nil {
			return fmt.Errorf("tightness of grid %s: %w", g.Name, err)
		}
		ts = append(ts, t)
		n += len(t.Records)
	}
	if err := experiment.WriteTightnessFiles(dir, ts); err != nil {
		return err
	}
	fmt.Fprintf(w, "tightness: %d configurations with the certifiable learner in %.1f s; wrote %s\n",
		n, time.Since(start).Seconds(), filepath.Join(dir, experiment.TightnessFile))
	return nil
}

// addTightness adds the tightness of the results folder dir, if it has
// one, to its report.
func addTightness(rep *report.Report, dir string) error {
	ts, err := experiment.ReadTightnessFiles(dir)
	if err != nil {
		return err
	}
	return rep.AddTightness(ts)
}
