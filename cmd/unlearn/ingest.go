package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"unlearn/store"
)

func init() { register(newIngestCmd) }

func newIngestCmd() *cobra.Command {
	var (
		dir   string
		batch int
	)
	cmd := &cobra.Command{
		Use:   "ingest --store DIR FILE...",
		Short: "Append the events of stream files to a store and train on them",
		Long: `ingest reads each stream file one line at a time (memory does not grow with its
length), checks that its header defines the store's loss, appends its inserts to
the store's log and trains the learner on them (one o-LBFGS step each), storing a
checkpoint every K events.

Every --batch events are one transaction: after a crash, reopening the store
finds every batch that was reported committed. A failing event (a duplicate or
forgotten id, a bad payload) rolls back its batch, and the error names its file
and line; the batches before it stay.

Delete events are refused: a deletion request is served by 'unlearn forget',
which erases the data (a delete event would only mark the id).`,
		Example: `  unlearn ingest --store model day1.jsonl day2.jsonl`,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			if len(files) == 0 {
				return usageError{fmt.Errorf("no stream file to ingest (give one or more FILE arguments)")}
			}
			if batch < 0 {
				return flagError("batch", "%d: must be non-negative (0: one transaction per file)", batch)
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			for _, name := range files {
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				res, err := s.Ingest(f, store.IngestOptions{BatchSize: batch})
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d events in %d transactions, %d checkpoints; log head at seq %d\n",
					name, res.Events, res.Batches, res.Checkpoints, res.Head)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory (required)")
	f.IntVar(&batch, "batch", 10000, "events per transaction (0: one transaction per file)")
	return cmd
}
