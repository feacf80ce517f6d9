package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"unlearn/experiment"
)

func newMergeCmd() *cobra.Command {
	var (
		out           string
		partial, zero bool
		noReport      bool
	)
	cmd := &cobra.Command{
		Use:   "merge DIR... --out DIR",
		Short: "Join the results folders of bench shards into one and print its tables",
		Long: `merge reads results folders written by "unlearn bench --shard K/N" (or "unlearn
decay") and writes one results folder with every record, the summaries and the
tables, exactly as a single run of the whole grid writes them: the tables are
byte for byte those of a single run.

It refuses folders from different grids, operators or record formats, and two
folders holding the same configuration (overlapping shards); unless
--allow-partial, it also refuses a union that misses configurations of the
grid, and says which. The merged manifest records the merge command and the
commands of the parts. At the end, merge writes the report of the merged results
into DIR/report (see "unlearn report"; --no-report skips it).`,
		Example: `  unlearn merge results-0 results-1 results-2 results-3 --out results`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if out == "" {
				return flagError("out", "required")
			}
			fs := new(paths)
			for i, d := range dirs {
				fs.inDir(fmt.Sprintf("argument %d", i+1), d)
			}
			if err := fs.outDir("--out", out).check(); err != nil {
				return err
			}
			parts := make([]*experiment.Results, len(dirs))
			for i, d := range dirs {
				r, err := experiment.ReadResults(d)
				if err != nil {
					return fmt.Errorf("reading %s: %w", d, err)
				}
				parts[i] = r
			}
			res, err := experiment.Merge(parts, partial)
			if err != nil {
				return err
			}
			if zero {
				res.ZeroTiming()
			}
			res.Manifest.Provenance = provenance(cmd, dirs)
			for _, p := range parts {
				if p.Manifest.Provenance != nil {
					res.Manifest.Provenance.Parts = append(res.Manifest.Provenance.Parts, *p.Manifest.Provenance)
				}
			}
			if err := experiment.WriteResults(out, res, experiment.TableOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "merged %d folders, %d of %d configurations; wrote %s\n",
				len(dirs), len(res.Records), len(res.Manifest.Grid.Configs), out)
			if err := writeResultsReport(cmd.ErrOrStderr(), res, out, noReport); err != nil {
				return err
			}
			return printTables(cmd.OutOrStdout(), res)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "merged results folder (required)")
	f.BoolVar(&partial, "allow-partial", false, "merge even if configurations of the grid are missing")
	f.BoolVar(&zero, "zero-timing", false, "omit wall-clock times from the merged folder")
	f.BoolVar(&noReport, "no-report", false, "do not write the report (DIR/report) at the end")
	return cmd
}
