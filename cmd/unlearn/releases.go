package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"unlearn/store"
)

func init() { register(newReleasesCmd) }

func newReleasesCmd() *cobra.Command {
	var (
		dir, out, certFile string
		id                 int64
		asJSON             bool
	)
	cmd := &cobra.Command{
		Use:   "releases --store DIR [--get ID --out FILE [--certificate FILE]] [--json]",
		Short: "List the releases kept in a model store, or fetch one with its certificate",
		Long: `releases lists the certified releases kept in the model store ('unlearn release'
keeps each one, byte for byte, with its certificate and the log position of the
released state): id, time, log position, path (exact, derived, diameter), ε and δ.

With --get ID it writes that release to --out and its certificate to
--certificate, the same bytes that release wrote, after checking them
against the SHA-256 the store keeps with them: a damaged release is
refused, nothing written (the listing marks it DAMAGED).

An approximate forget (forget --max-replay) keeps its own release here: the
noised state the store continues from, certified for that deletion.

A forget of a sample that a kept release's state included erases the release
from the store, in the forget's own transaction; a release made before the
sample was ingested, or after an approximate forget of it (its noise covers
that deletion), stays. Copies published elsewhere cannot be recalled.`,
		Example: `  unlearn releases --store model
  unlearn releases --store model --get 3 --out release.json --certificate cert.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			get := cmd.Flags().Changed("get")
			if get && out == "" {
				return flagError("out", "required with --get")
			}
			if !get && (out != "" || certFile != "") {
				return flagError("get", "required with --out and --certificate: the id of the release to fetch")
			}
			if err := new(paths).store("--store", dir).out("--out", out).out("--certificate", certFile).check(); err != nil {
				return err
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			if get {
				r, err := s.GetRelease(id)
				if errors.Is(err, store.ErrUnknownRelease) {
					return flagError("get", "%v", err)
				}
				if err != nil {
					return err
				}
				if err := writeFileAtomic(out, r.File); err != nil {
					return err
				}
				wrote := out
				if certFile != "" {
					if err := writeFileAtomic(certFile, r.Certificate); err != nil {
						return err
					}
					wrote += " and " + certFile
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", wrote)
				return nil
			}
			rs, err := s.Releases()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if rs == nil {
					rs = []store.StoredRelease{}
				}
				b, err := json.MarshalIndent(rs, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "%s\n", b)
				return nil
			}
			if len(rs) == 0 {
				fmt.Fprintln(w, "no releases kept")
				return nil
			}
			fmt.Fprintf(w, "%-6s %-20s %10s %-9s %8s %8s\n", "id", "time", "log pos", "path", "ε", "δ")
			for _, r := range rs {
				fmt.Fprintf(w, "%-6d %-20s %10d %-9s %8.4g %8.4g", r.ID, r.Time.Format("2006-01-02T15:04:05Z"), r.Head, r.Path, r.Epsilon, r.Delta)
				if r.Damaged {
					fmt.Fprint(w, "  DAMAGED (fails its checksum; --get refuses it)")
				}
				fmt.Fprintln(w)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "model store directory (required)")
	f.Int64Var(&id, "get", 0, "fetch the release with this id")
	f.StringVarP(&out, "out", "o", "", "with --get: release file to write")
	f.StringVar(&certFile, "certificate", "", "with --get: certificate file to write")
	f.BoolVar(&asJSON, "json", false, "print the listing as JSON")
	return cmd
}
