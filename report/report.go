package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"unlearn/experiment"
	"unlearn/internal/atomicfile"
)

// Report is a self-contained account of a results folder or of a run
// record: what made it (command, version, seeds), its configuration, its
// tables and its figures.
type Report struct {
	// Title heads the report.
	Title string
	// Source is the folder or file it was made from, as given.
	Source string
	// Provenance names the command and version that made the results; nil
	// when they did not record it.
	Provenance *experiment.Provenance
	// Setup is the configuration, as name–value pairs.
	Setup []Item
	// Notes are remarks on the results (partial grids, timing).
	Notes []string
	// Tables are the results' summary tables.
	Tables []*experiment.Table
	// Figures are the figures the records support.
	Figures *Set
}

// Item is one line of a report's setup.
type Item struct {
	Name, Value string
}

// FromResults builds the report of a results folder read with
// experiment.ReadResults (a bench grid, merged shards or a decay folder);
// source names the folder.
func FromResults(res *experiment.Results, source string, opt Options) (*Report, error) {
	if len(res.Records) == 0 {
		return nil, fmt.Errorf("%w: %s: no records", ErrRecords, source)
	}
	tables, err := res.Tables(experiment.TableOptions{})
	if err != nil {
		return nil, fmt.Errorf("report: %s: tables: %w", source, err)
	}
	set, err := Figures(res.Records, opt)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", source, err)
	}
	m := res.Manifest
	r := &Report{
		Title:      experimentTitle(m.Grid.Experiment) + ", grid “" + m.Grid.Name + "”",
		Source:     source,
		Provenance: m.Provenance,
		Tables:     tables,
		Figures:    set,
	}
	r.Setup = gridSetup(m.Grid)
	r.Setup = append(r.Setup,
		Item{"configurations", fmt.Sprintf("%d of %d (shards %s)", len(res.Records), len(m.Grid.Configs), strings.Join(m.Shards, ", "))},
		Item{"methods", strings.Join(methodLabels(res.Records[0]), ", ")},
		Item{"grid hash", m.Hash})
	if !res.Complete() {
		r.Notes = append(r.Notes, fmt.Sprintf("Partial results: %d of the grid's %d configurations; tables and figures cover those present only.",
			len(res.Records), len(m.Grid.Configs)))
	}
	if t := m.Timing; t != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("The grid ran in %.1f s of wall time on %d workers.", t.Wall.Seconds(), t.Workers))
	}
	return r, nil
}

// FromRecord builds the report of one run record (unlearn run --out);
// source names the file.
func FromRecord(rec *experiment.Record, source string, opt Options) (*Report, error) {
	set, err := Figures([]*experiment.Record{rec}, opt)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", source, err)
	}
	table := experiment.RunTable(rec)
	if rec.Experiment == experiment.ExperimentDecay {
		table = experiment.DecayTable([]*experiment.Record{rec})
	}
	c := rec.Config
	r := &Report{
		Title:      experimentTitle(rec.Experiment) + ", run " + rec.ID,
		Source:     source,
		Provenance: rec.Provenance,
		Tables:     []*experiment.Table{table},
		Figures:    set,
	}
	stream := fmt.Sprintf("%s, d = %d, T = %d", rec.Source.Kind, rec.Source.D, rec.Source.T)
	if g := rec.Source.Generated; g != nil {
		stream += fmt.Sprintf(", generated: κ = %s, seed %d, drift %s", fmtKappa(g.Kappa), g.Seed, onOff(!g.NoDrift))
	}
	if rec.Source.File != "" {
		stream += fmt.Sprintf(", file %s (SHA-256 %s)", rec.Source.File, rec.Source.SHA256)
	}
	r.Setup = []Item{
		{"stream", stream},
		{"deletion", fmt.Sprintf("mode %s, t_del = %d, U = %v", c.Mode, c.TDel, rec.U)},
		{"learner", fmt.Sprintf("τ = %d, η = %g, γ₀ = %g", rec.Learner.Tau, rec.Learner.Eta, rec.Learner.Gamma0)},
		{"metrics", fmt.Sprintf("H = %d, m_q = %d, λ_Z = %s", c.Horizon, rec.NumProbes(), lambdaZ(c))},
		{"seeds", seedsOf(rec)},
		{"methods", strings.Join(methodLabels(rec), ", ")},
	}
	return r, nil
}

func experimentTitle(e string) string {
	switch e {
	case experiment.ExperimentDecay:
		return "Experiment 1, finite-memory decay"
	case experiment.ExperimentBenchmark:
		return "Experiment 2, state-aware benchmark"
	}
	return "Run"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func lambdaZ(c experiment.Config) string {
	if c.LambdaZ == nil {
		return strconv.FormatFloat(experiment.DefaultLambdaZ, 'g', -1, 64)
	}
	return strconv.FormatFloat(*c.LambdaZ, 'g', -1, 64)
}

// seedsOf names the seeds of a run: the stream's (the generator's, or the
// one a stream file's header records; a file run's Config.Stream is empty,
// so its Seed is not the stream's), the random deletions' and the probes'.
func seedsOf(rec *experiment.Record) string {
	c := rec.Config
	var s string
	switch {
	case rec.Source.Generated != nil:
		s = "stream " + strconv.FormatUint(rec.Source.Generated.Seed, 10)
	case rec.Source.Seed != nil:
		s = "stream " + strconv.FormatUint(*rec.Source.Seed, 10) + " (from the file's header)"
	case rec.Source.File != "":
		s = "stream: none in the file's header"
	default:
		s = "stream " + strconv.FormatUint(c.Stream.Seed, 10)
	}
	if c.DeletionSeed != nil {
		s += ", deletions " + strconv.FormatUint(*c.DeletionSeed, 10)
	}
	if c.ProbeSeed != nil {
		s += ", probes " + strconv.FormatUint(*c.ProbeSeed, 10)
	}
	return s
}

func methodLabels(r *experiment.Record) []string {
	out := make([]string, len(r.Methods))
	for i, m := range r.Methods {
		out[i] = m.Label
	}
	return out
}

// gridSetup lists the distinct values of every configuration field over
// the grid, in grid order.
func gridSetup(g experiment.Grid) []Item {
	fields := []struct {
		name string
		get  func(c experiment.Config) string
	}{
		{"stream kind", func(c experiment.Config) string { return string(c.Stream.Kind) }},
		{"memory size τ", func(c experiment.Config) string { return strconv.Itoa(c.Tau) }},
		{"deletion mode", func(c experiment.Config) string { return c.Mode }},
		{"condition number κ", func(c experiment.Config) string { return fmtKappa(c.Stream.Kappa) }},
		// The grids seed each configuration's stream, random deletions
		// and probes with its seed-axis value (experiment.GridAxes.Grid).
		{"seeds (stream, random deletions, probes)", func(c experiment.Config) string { return strconv.FormatUint(c.Stream.Seed, 10) }},
		{"dimension d", func(c experiment.Config) string { return strconv.Itoa(c.Stream.D) }},
		{"events T", func(c experiment.Config) string { return strconv.Itoa(c.Stream.T) }},
		{"deletion time t_del", func(c experiment.Config) string { return strconv.Itoa(c.TDel) }},
		{"horizon H", func(c experiment.Config) string { return strconv.Itoa(c.Horizon) }},
		{"deletion size |U|", func(c experiment.Config) string { return strconv.Itoa(c.Count) }},
		{"probes m_q", func(c experiment.Config) string { return strconv.Itoa(c.Probes) }},
		{"memory weight λ_Z", lambdaZ},
		{"step size η", func(c experiment.Config) string { return strconv.FormatFloat(c.Eta, 'g', -1, 64) }},
		{"curvature drift", func(c experiment.Config) string { return onOff(!c.Stream.NoDrift) }},
		{"logistic feature scale", func(c experiment.Config) string {
			if c.Stream.FeatureScale == 0 {
				return "1"
			}
			return strconv.FormatFloat(c.Stream.FeatureScale, 'g', -1, 64)
		}},
	}
	items := []Item{{"experiment", g.Experiment}}
	for _, f := range fields {
		var vals []string
		for _, c := range g.Configs {
			if v := f.get(c); !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		items = append(items, Item{f.name, strings.Join(vals, ", ")})
	}
	return items
}

// rendered is a figure's images.
type rendered struct{ png, svg []byte }

// render draws every figure as PNG and SVG, figures in parallel.
func (r *Report) render() ([]rendered, error) {
	out := make([]rendered, len(r.Figures.Figures))
	var eg errgroup.Group
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range r.Figures.Figures {
		eg.Go(func() error {
			var p, s bytes.Buffer
			if err := f.WritePNG(&p); err != nil {
				return err
			}
			if err := f.WriteSVG(&s); err != nil {
				return err
			}
			out[i] = rendered{p.Bytes(), s.Bytes()}
			return nil
		})
	}
	return out, eg.Wait()
}

// Files written by [Report.Write].
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
	FiguresDir   = "figures"
	DataFile     = "figures.json"
)

// Write writes the report into the folder dir, atomically (a temporary
// folder beside it, renamed at the end):
//
//	report.html         the self-contained page: tables, and figures as
//	                    embedded PNG (no external files)
//	report.md           the same in Markdown, linking figures/ID.png
//	figures/ID.png      each figure, and figures/ID.svg
//	figures.json        the data every figure plots (see Figure)
//
// An existing dir is replaced only if it is empty or a report folder
// (it holds report.md or report.html); anything else is refused.
func (r *Report) Write(dir string) error {
	imgs, err := r.render()
	if err != nil {
		return err
	}
	err = atomicfile.ReplaceDir(dir, isReportDir, func(tmp string) error {
		if err := os.Mkdir(filepath.Join(tmp, FiguresDir), 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for i, f := range r.Figures.Figures {
			for _, w := range []struct {
				ext string
				b   []byte
			}{{".png", imgs[i].png}, {".svg", imgs[i].svg}} {
				if err := writeFile(filepath.Join(tmp, FiguresDir, f.ID+w.ext), bytesWriter(w.b)); err != nil {
					return err
				}
			}
		}
		if err := writeFile(filepath.Join(tmp, DataFile), func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(r.Figures)
		}); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(tmp, MarkdownFile), r.WriteMarkdown); err != nil {
			return err
		}
		return writeFile(filepath.Join(tmp, HTMLFile), func(w io.Writer) error { return r.writeHTML(w, imgs) })
	})
	if err != nil {
		return fmt.Errorf("report: writing %s: %w", dir, err)
	}
	return nil
}

func isReportDir(dir string) error {
	for _, f := range []string{MarkdownFile, HTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return fmt.Errorf("not a report folder (no %s or %s)", MarkdownFile, HTMLFile)
}

func bytesWriter(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

func writeFile(path string, write func(io.Writer) error) error {
	if err := atomicfile.WriteFile(path, 0o644, write); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}
