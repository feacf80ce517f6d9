package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func init() { register(newExportCmd) }

func newExportCmd() *cobra.Command {
	var dir, out string
	cmd := &cobra.Command{
		Use:   "export --store DIR --out FILE",
		Short: "Write the store's current un-noised state as a snapshot (for inspection; NOT a release)",
		Long: `export writes the store's current state as an olbfgs-state/v1 snapshot, the
format 'unlearn train' writes. It is for inspection and tests and is NOT a
release: it holds every ingested sample's influence and, after an approximate
forget, forgotten samples' influence too. Publish only a certified release.`,
		Example: `  unlearn export --store model --out state.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return flagError("out", "required")
			}
			if err := new(paths).store("--store", dir).out("--out", out).check(); err != nil {
				return err
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := writeAtomic(out, func(w io.Writer) error { return s.Export(w) }); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (the un-noised state: NOT a release)\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory (required)")
	f.StringVarP(&out, "out", "o", "", "output snapshot file (required)")
	return cmd
}
