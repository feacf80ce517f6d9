package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

func init() { register(newStatusCmd) }

func newStatusCmd() *cobra.Command {
	var (
		dir           string
		asJSON, check bool
	)
	cmd := &cobra.Command{
		Use:   "status --store DIR [--check] [--json]",
		Short: "Summarize a store: log, checkpoints, deletion requests, whether a release needs noise",
		Long: `status prints the store's configuration, the size of its log and checkpoints,
the deletion requests served, and whether the state carries forgotten samples'
influence (after an approximate forget not yet resolved by an exact one), in
which case only a noised release may be published; the pending approximate
requests are listed with what such a release must cover.

--check also verifies the store bit for bit: every exact checkpoint and the
state against the replay of the stored log from θ0 (one pass of training).`,
		Example: `  unlearn status --store model --check`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.Status()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(st, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s\n", b)
			} else {
				c := st.Learner
				fmt.Fprintf(out, "store %s (schema %d, %.4g MB)\n", st.Dir, st.SchemaVersion, float64(st.Bytes)/1e6)
				fmt.Fprintf(out, "learner: %s loss, d = %d, τ = %d, η = %.4g, γ0 = %.4g; checkpoint every %d events\n",
					st.Kind, c.Dim, c.Memory, c.StepSize, c.InitialScale, st.CheckpointEvery)
				fmt.Fprintf(out, "log: %d events (%d erased), head seq %d; state has applied %d events\n", st.Events, st.Erased, st.Head, st.T)
				fmt.Fprintf(out, "checkpoints: %d (%d carry forgotten samples' influence)\n", st.Checkpoints, st.InexactCheckpoints)
				fmt.Fprintf(out, "deletion requests: %d; forgotten ids: %d; releases kept: %d (unlearn releases)\n", st.Requests, st.Forgotten, st.Releases)
				if st.NeedsNoise {
					fmt.Fprintf(out, "release: NEEDS NOISE — %d approximate requests pending:\n", len(st.Pending))
					for _, r := range st.Pending {
						fmt.Fprintf(out, "  request %d: %s, |U| = %d, ages %v\n", r.Request, r.Intervention, r.USize, r.Ages)
					}
				} else {
					fmt.Fprintln(out, "release: the state is exact (the replay of the deletion-edited log)")
				}
			}
			if check {
				rep, err := s.Check()
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "check: OK (%d events replayed, %d checkpoints verified, %d inexact skipped, state from θ0: %v)\n",
					rep.EventsReplayed, rep.CheckpointsVerified, rep.InexactSkipped, rep.StateFromScratch)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory (required)")
	f.BoolVar(&check, "check", false, "verify every exact checkpoint and the state by replay of the log")
	f.BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}
