package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/floats"

	"unlearn/dataset"
	"unlearn/olbfgs"
	"unlearn/stream"
)

func newTrainCmd() *cobra.Command {
	var (
		in, out, data string
		upTo          int
		lf            learnerFlags
		df            dataFlags
	)
	cmd := &cobra.Command{
		Use:   "train (--stream FILE | --data FILE) --out FILE",
		Short: "Replay a stream or data file through the o-LBFGS learner and save the state",
		Long: `train replays the events of a stream file (deletions included: a delete
records the id as deleted and changes neither w nor Z, spec §2) from θ0 and
writes the learner's full state — parameters, curvature memory with the source
ids of every pair, deleted ids, configuration and stream header — as a
versioned JSON snapshot (olbfgs-state/v1).

--data FILE trains on a data set (CSV, LIBSVM or IDX) read as "unlearn
convert" reads it, with the same flags (--format, --label, --id, --kind,
--classes, …): the state equals training on the converted stream file, bit for
bit. The file is streamed (memory does not grow with its length) unless
--shuffle-seed asks for a seeded order, which holds the selected rows (at most
--events of them). String ids are mapped to row numbers, the mapping written
beside --out as OUT.ids.csv. Errors name the file, line and column.

--profile practitioner trains the model a practitioner deploys (docs/spec.md
§2.1): an intercept, features standardized online, averaged iterates (weighted
to forget the early ones), damped
curvature pairs, η = 0.1 decaying as η·(1 + 0.0003·t)^(−3/4), λ = 0.003 for a data
set (unless --lambda), and progressive statistics — every option part of the
state, so a forget replays it exactly. --profile paper (the default) is the
paper's learner, bit for bit. Each option's flag overrides the profile.

With progressive statistics (--progress, on in the practitioner profile) train
prints the loss and accuracy of predicting each insert before training on it,
and warns when the model does worse than the zero model or predicts one class.
Whatever the options, it then scores up to 1000 rows of the data (the first of
a data file, the last inserts of a stream) with the trained model and warns
when it predicts a single class on them.`,
		Example: `  unlearn gen --out q.jsonl && unlearn train --stream q.jsonl --out state.json
  unlearn train --data train-images-idx3-ubyte.gz --classes 0,6 --profile practitioner --out fm.state.json
  unlearn train --data train-images-idx3-ubyte.gz --kind multinomial --classes all --profile practitioner --out fm10.state.json
  unlearn train --data heart_scale --format libsvm --tau 10 --out heart.state.json
  unlearn train --data patients.csv --label outcome --id name --out state.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case in == "" && data == "":
				return flagError("stream", "required (or --data FILE)")
			case in != "" && data != "":
				return flagError("data", "give either --stream or --data, not both")
			case data == "":
				if err := onlyWithData(cmd.Flags()); err != nil {
					return err
				}
			}
			if out == "" {
				return flagError("out", "required")
			}
			if err := new(paths).in("--stream", in).dataFile("--data", data, &df).out("--out", out).mapping(out, data).check(); err != nil {
				return err
			}
			if err := lf.check(); err != nil {
				return err
			}
			if upTo < 0 {
				return flagError("events", "%d must be non-negative (0: all)", upTo)
			}
			if data != "" {
				if err := lf.lambdaDefault(cmd.Flags(), &df); err != nil {
					return err
				}
				return trainData(cmd, data, out, &df, upTo, &lf)
			}
			if err := notADataFile("--stream", in); err != nil {
				return err
			}
			h, err := stream.ReadFile(in)
			if err != nil {
				return err
			}
			events := h.Events
			if upTo < 0 || upTo > len(events) {
				return flagError("events", "%d outside [0, %d] (the stream has %d events)", upTo, len(events), len(events))
			}
			if upTo > 0 {
				events = events[:upTo]
			}
			cfg, err := lf.config(cmd.Flags(), h.Header)
			if err != nil {
				var ce *olbfgs.ConfigError
				if errors.As(err, &ce) && ce.Field == "Dim" {
					return fmt.Errorf("%s: header field \"d\": %w", in, err)
				}
				return err
			}
			if err := firstStepsError(cfg, h.Header, cmd.Flags().Changed, "--stream "+in); err != nil {
				return err
			}
			if lf.certifiableProfile() {
				clipped := 0
				for _, e := range events {
					if e.Op == stream.Insert && cfg.ClipToBound(e.Sample.V) {
						clipped++
					}
				}
				clipNote(cmd.ErrOrStderr(), clipped, cfg)
			}
			l, err := olbfgs.Replay(cfg, h.Loss, events)
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			if err := writeTrained(cmd, out, l, h.Header); err != nil {
				return err
			}
			// The last inserts, newest first, for the check of the model.
			i := len(events)
			warnSingleClass(cmd.ErrOrStderr(), l, h.Header, func() (stream.Sample, bool) {
				for i > 0 {
					i--
					if events[i].Op == stream.Insert {
						return events[i].Sample, true
					}
				}
				return stream.Sample{}, false
			})
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "stream", "", "input stream file (this or --data is required)")
	f.StringVar(&data, "data", "", "train on this data set (CSV, LIBSVM or IDX; the data flags below say how to read it) instead of a stream file")
	f.StringVarP(&out, "out", "o", "", "output state snapshot (required)")
	lf.register(f)
	f.IntVar(&upTo, "events", 0, "replay only the first N events (0: all)")
	df.keys = mappingBesideOut
	df.add(f, withShuffle)
	return cmd
}

// writeTrained writes the snapshot of l and prints its summary. The
// snapshot is streamed into the file (olbfgs.WriteSnapshot): at d = 10⁵ its
// JSON is about as large as the state, and is never held whole in memory.
func writeTrained(cmd *cobra.Command, out string, l *olbfgs.Learner, hdr stream.Header) error {
	if err := writeAtomic(out, func(w io.Writer) error { return olbfgs.WriteSnapshot(w, l, hdr) }); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", out)
	fmt.Fprintf(cmd.OutOrStdout(), "events %d, pairs %d/%d (%d rejected by the curvature guard), deleted %d, ‖w‖ = %.4g\n",
		l.T(), l.Memory().Len(), l.Config().Memory, l.Skipped(), len(l.Deleted()), floats.Norm(l.W(), 2))
	if l.Config().HasOptions() {
		fmt.Fprintln(cmd.OutOrStdout(), optionsSummary(l.Config()))
	}
	printProgress(cmd.OutOrStdout(), cmd.ErrOrStderr(), l, hdr)
	return nil
}

// trainData is train --data: the events of the data file, streamed
// through the learner one step at a time (as olbfgs.Replay steps through a
// slice, so the state is that of training on the converted stream).
// --events N reads only the first N selected rows.
func trainData(cmd *cobra.Command, path, out string, df *dataFlags, upTo int, lf *learnerFlags) error {
	opts, err := df.options(cmd.Flags())
	if err != nil {
		return err
	}
	opts.Limit = upTo
	if err := requireEveryClass(path, opts); err != nil {
		return err
	}
	hdr, r, err := openData(path, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	cfg, err := lf.config(cmd.Flags(), hdr)
	if err != nil {
		var ce *olbfgs.ConfigError
		if errors.As(err, &ce) && ce.Field == "Dim" {
			return fmt.Errorf("--data %s: d: %w", path, err)
		}
		return err
	}
	if err := firstStepsError(cfg, hdr, cmd.Flags().Changed, ""); err != nil {
		return err
	}
	loss, err := hdr.Loss()
	if err != nil {
		return fmt.Errorf("--data %s: %w", path, err)
	}
	l, err := olbfgs.New(cfg, loss)
	if err != nil {
		return configFlagError(err)
	}
	n, clipped, clip := 0, 0, lf.certifiableProfile()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return dataError(err)
		}
		if clip && cfg.ClipToBound(e.Sample.V) {
			clipped++
		}
		if err := l.Step(e); err != nil {
			return fmt.Errorf("--data %s: line %d (id %d): replay: %w", path, r.Line(), e.ID, err)
		}
		n++
	}
	if clip {
		clipNote(cmd.ErrOrStderr(), clipped, cfg)
	}
	if upTo > n {
		return flagError("events", "%d, but %s selects %d rows", upTo, path, n)
	}
	reportDataStats(cmd.ErrOrStderr(), r.Stats(), opts.Classes)
	if err := writeTrained(cmd, out, l, hdr); err != nil {
		return err
	}
	if err := writeMapping(cmd.ErrOrStderr(), dataset.MappingFile(out), r.Mapping()); err != nil {
		return err
	}
	checkTrainedOnData(cmd, l, hdr, path, opts)
	return nil
}

// checkTrainedOnData warns when the trained model predicts a single class
// on the first rows of the data file (read again, in file order; a read
// error only skips the check).
func checkTrainedOnData(cmd *cobra.Command, l *olbfgs.Learner, hdr stream.Header, path string, opts dataset.Options) {
	opts.Shuffle, opts.Limit = nil, finalCheckRows
	_, r, err := dataset.Open(path, opts)
	if err != nil {
		return
	}
	defer r.Close()
	warnSingleClass(cmd.ErrOrStderr(), l, hdr, func() (stream.Sample, bool) {
		e, err := r.Next()
		return e.Sample, err == nil
	})
}

// clipNote says how many rows the certifiable profile scaled onto the
// sample bound's ball (olbfgs.Config.ClipToBound).
func clipNote(w io.Writer, clipped int, cfg olbfgs.Config) {
	fmt.Fprintf(w, "clipped %s to ‖x‖ ≤ B = %.4g (the certifiable profile's sample bound)\n", plural(clipped, "row", "rows"), cfg.SampleBound)
}
