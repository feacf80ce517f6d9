package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"unlearn/experiment"
	"unlearn/report"
)

// reportDirName is the report folder inside a results folder.
const reportDirName = "report"

func newReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report PATH [--out DIR]",
		Short: "Write the HTML and Markdown report (tables and figures) of a results folder or run record",
		Long: `report reads a results folder (written by bench, decay or merge) or a single
run record (run --out FILE) and writes a self-contained report: report.html, one
page with the configuration, the summary tables and every figure of the paper's
results section that the records support, embedded as PNG; report.md, the same
in Markdown, with the figures beside it in figures/ (PNG and SVG); and
figures.json, the data each figure plots. The report names the command,
version and seeds that made the results.

Experiment 1 figures (decay rates, state error by memory size and by deletion
mode, residual-error heat map, direct memory mass) come from decay folders;
Experiment 2 figures (trajectories of every intervention, efficiency, errors by
deletion mode) from bench folders and run records. Figures drawn from per-step
series need records that kept them: decay keeps them by default, bench keeps
one representative configuration's.

The report folder (default: PATH/report for a folder, PATH without its
extension plus "-report" for a file) is written atomically and replaced only if
it is empty or a previous report. bench, decay and merge write the report of
their results by default (--no-report to skip).`,
		Example: `  unlearn report results                 # writes results/report/
  unlearn report run.json --out run-report`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			fi, err := os.Stat(path)
			if err != nil {
				return err
			}
			if out == "" {
				out = defaultReportDir(path, fi.IsDir())
			}
			fs := new(paths)
			if fi.IsDir() {
				fs.inDir("argument 1", path)
			} else {
				fs.in("argument 1", path).in("argument 1 (its series)", filepath.Join(filepath.Dir(path), experiment.SeriesFileName(path)))
			}
			if err := fs.outDir("--out", out).check(); err != nil {
				return err
			}
			start := time.Now()
			var rep *report.Report
			if fi.IsDir() {
				res, err := experiment.ReadResults(path)
				if err != nil {
					return err
				}
				rep, err = report.FromResults(res, path, report.Options{})
				if err != nil {
					return err
				}
				if err := addTightness(rep, path); err != nil {
					return err
				}
			} else {
				rec, err := readRecordFile(path)
				if err != nil {
					return err
				}
				rep, err = report.FromRecord(rec, path, report.Options{})
				if err != nil {
					return err
				}
			}
			if err := rep.Write(out); err != nil {
				return err
			}
			reportDone(cmd.ErrOrStderr(), rep, out, time.Since(start))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "report folder (default: PATH/report, or PATH-report for a record file)")
	return cmd
}

// defaultReportDir is PATH/report for a folder and PATH without its
// extension plus "-report" for a file.
func defaultReportDir(path string, dir bool) string {
	if dir {
		return filepath.Join(path, reportDirName)
	}
	return strings.TrimSuffix(path, filepath.Ext(path)) + "-report"
}

// readRecordFile reads a run record and the series file it names.
func readRecordFile(path string) (*experiment.Record, error) {
	return experiment.ReadRecordFile(path)
}

// writeResultsReport writes the report of results written to dir into
// dir/report, unless skip; it is what bench, decay and merge do at the end.
func writeResultsReport(w io.Writer, res *experiment.Results, dir string, skip bool) error {
	if skip {
		return nil
	}
	start := time.Now()
	rep, err := report.FromResults(res, dir, report.Options{})
	if err != nil {
		return err
	}
	if err := addTightness(rep, dir); err != nil {
		return err
	}
	out := filepath.Join(dir, reportDirName)
	if err := rep.Write(out); err != nil {
		return err
	}
	reportDone(w, rep, out, time.Since(start))
	return nil
}

func reportDone(w io.Writer, rep *report.Report, out string, took time.Duration) {
	fmt.Fprintf(w, "report: %d figures in %.2f s; wrote %s\n", len(rep.Figures.Figures), took.Seconds(),
		filepath.Join(out, report.HTMLFile))
}

// provenance returns what made the current command's output: its command
// line, rebuilt from the flags the user set (in name order, so that it does
// not depend on how they were typed) and its arguments, and the version.
func provenance(cmd *cobra.Command, args []string) *experiment.Provenance {
	line := strings.Fields(cmd.CommandPath())
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch v := f.Value.(type) {
		case pflag.SliceValue:
			line = append(line, "--"+f.Name+"="+strings.Join(v.GetSlice(), ","))
		default:
			if f.Value.Type() == "bool" {
				if f.Value.String() == "true" {
					line = append(line, "--"+f.Name)
				} else {
					line = append(line, "--"+f.Name+"=false")
				}
				return
			}
			line = append(line, "--"+f.Name, f.Value.String())
		}
	})
	return &experiment.Provenance{Command: append(line, args...), Version: version}
}
