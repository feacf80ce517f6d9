package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"unlearn/dataset"
	"unlearn/store"
	"unlearn/stream"
)

func init() { register(newInitCmd) }

func newInitCmd() *cobra.Command {
	var (
		dir, kind, headerFile, data string
		d, every, k                 int
		resolveAfter                int64
		resolveWithin               time.Duration
		df                          dataFlags
		lf                          learnerFlags
	)
	cmd := &cobra.Command{
		Use:   "init --store DIR (--data FILE [data flags] | --header FILE | --kind logistic|regression|multinomial --d N) [--profile paper|practitioner] [--tau --eta --gamma0 --checkpoint-every K]",
		Short: "Create a model store: a live learner's log, checkpoints and state on disk",
		Long: `init creates a model store in DIR: one SQLite database (DIR/store.db) that will
hold the learner's event log, a checkpoint of the full state every K events, the
current state and the record of deletion requests (docs/deployment.md).

The loss — kind, d and constants — comes from one of:

  --data FILE   a data set (CSV, LIBSVM or IDX) read with the data flags, as
                "unlearn ingest --data" will read it (docs/data.md): the kind is
                --kind (logistic by default, multinomial with --classes, or
                regression), d the file's feature count, λ --lambda. Only what
                fixes the loss is read (and the labels, for --classes all): a CSV's
                header row and first data row, an IDX file's headers, a LIBSVM
                file's first row — and the whole LIBSVM file once for the largest
                index unless --d gives d (give --d if later files may use larger
                indices). No event is stored: ingest the file next.
  --header FILE the header of a stream file (its first line: kind, d and the
                loss constants). A quadratic loss needs this (H0 and H1 are d×d
                matrices).
  --kind logistic|regression --d N [--lambda L]
  --kind multinomial --d N --k K [--lambda L]
                written out from the flags.

Every stream or data file ingested later must have the same kind, d and
constants.

--profile practitioner makes the store's learner the one a practitioner
deploys (an intercept, standardized features, averaged iterates, damped pairs,
a decaying step, progressive statistics; λ = 0.003 for a data set unless
--lambda; docs/spec.md §2.1): every option is part of the state, so an exact
forget replays it bit for bit. The paper profile is the default. Each option's
flag overrides the profile.

The checkpoint interval K trades storage (one full state every K events) against
the cost of an exact forget (a replay of up to K events after the checkpoint
before the oldest deleted sample, plus everything after it).

--resolve-after-events N and --resolve-within DURATION (e.g. 24h) set the
store's resolution policy: pending approximate requests (forget --max-replay)
are resolved by exact replay once N events have been ingested since the
oldest one, or once it is DURATION old; ingest applies the policy after its
last batch, and a service can apply it on its own schedule
(store.ResolutionDue, store.ResolveIfDue). Without them, a pending request
stays until an exact forget or 'forget --resolve'.`,
		Example: `  unlearn init --store model --data patients.csv --label outcome --id name --profile practitioner
  unlearn ingest --store model --data patients.csv --label outcome --id name

  unlearn gen --kind logistic --events 10000 --out l.jsonl
  unlearn init --store model --header l.jsonl --tau 10 --checkpoint-every 1000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return flagError("store", "required")
			}
			if err := new(paths).dataFile("--data", data, &df).in("--header", headerFile).newStore("--store", dir).check(); err != nil {
				return err
			}
			fl := cmd.Flags()
			if data == "" {
				if err := onlyWithData(fl, "kind", "d", "lambda"); err != nil {
					return err
				}
			}
			if err := lf.check(); err != nil {
				return err
			}
			if err := lf.lambdaDefault(fl, &df); err != nil {
				return err
			}
			var h stream.Header
			switch {
			case data != "" && headerFile != "":
				return flagError("data", "give either --header or --data, not both")
			case data != "":
				if fl.Changed("k") {
					return flagError("k", "only without --data (a data file's --classes gives the classes)")
				}
				var err error
				if h, err = initDataHeader(fl, data, &df, kind, d); err != nil {
					return err
				}
			case headerFile != "":
				f, err := os.Open(headerFile)
				if err != nil {
					return err
				}
				rd, err := stream.NewReader(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", headerFile, err)
				}
				h = rd.Header()
				if kind != "" && stream.Kind(kind) != h.Kind {
					return flagError("kind", "%q, but the header of %s says %q", kind, headerFile, h.Kind)
				}
			case kind == string(stream.KindLogistic), kind == string(stream.KindRegression), kind == string(stream.KindMultinomial):
				if d < 1 {
					return flagError("d", "%d: must be at least 1 (required with --kind %s and no --header or --data)", d, kind)
				}
				h = stream.Header{Format: stream.FormatV1, Kind: stream.Kind(kind), D: d, Lambda: df.lambda}
				if kind == string(stream.KindMultinomial) {
					if k < 2 {
						return flagError("k", "%d: the number of classes, at least 2 (required with --kind multinomial and no --header or --data)", k)
					}
					h.K = k
				} else if fl.Changed("k") {
					return flagError("k", "only with --kind multinomial")
				}
				if _, err := h.Loss(); err != nil {
					var fe *stream.FieldError
					if errors.As(err, &fe) && fe.Field == "k" {
						return flagError("k", "%v", err)
					}
					return flagError("lambda", "%v", err)
				}
			case kind == string(stream.KindQuadratic):
				return flagError("header", "required for --kind quadratic: H0 and H1 come from a stream file's header")
			case kind == "":
				return flagError("data", "required (or --header FILE, or --kind logistic|regression|multinomial --d N)")
			default:
				return flagError("kind", "%q: want logistic, multinomial, regression or quadratic", kind)
			}
			if every < 1 {
				return flagError("checkpoint-every", "%d: must be at least 1", every)
			}
			cfg, err := lf.config(fl, h)
			if err != nil {
				return configFlagError(err)
			}
			from := ""
			switch {
			case headerFile != "":
				from = "--header " + headerFile
			case data != "" && !fl.Changed("lambda"):
				from = "--data " + data
			}
			if err := firstStepsError(cfg, h, fl.Changed, from); err != nil {
				return err
			}
			if resolveAfter < 0 {
				return flagError("resolve-after-events", "%d: must be non-negative (0: no event count)", resolveAfter)
			}
			if resolveWithin < 0 {
				return flagError("resolve-within", "%s: must be non-negative (0: no deadline)", resolveWithin)
			}
			pol := store.ResolvePolicy{AfterEvents: resolveAfter, Within: resolveWithin}
			s, err := store.Create(dir, store.Config{Header: h, Learner: cfg, CheckpointEvery: every, Resolve: pol, ClipToBound: lf.certifiableProfile()})
			if err != nil {
				if errors.Is(err, store.ErrExists) {
					return flagError("store", "%v", err)
				}
				return err
			}
			defer s.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "store %s: %s loss, d = %d, %sτ = %d, η = %.4g, γ0 = %.4g, checkpoint every %d events\n",
				dir, h.Kind, h.D, lambdaNote(h), cfg.Memory, cfg.StepSize, cfg.InitialScale, every)
			fmt.Fprintln(cmd.OutOrStdout(), optionsSummary(cfg))
			fmt.Fprintln(cmd.OutOrStdout(), certifiableSummary(cfg))
			if lf.certifiableProfile() {
				fmt.Fprintln(cmd.OutOrStdout(), clipWords(cfg))
			}
			if !pol.IsZero() {
				fmt.Fprintf(cmd.OutOrStdout(), "resolution policy: %s\n", policyWords(pol))
			}
			if data != "" && !fl.Changed("d") {
				if f, err := dataset.DetectFormat(data, dataset.Options{Format: dataset.Format(df.format)}); err == nil && f == dataset.LIBSVM {
					fmt.Fprintf(cmd.OutOrStdout(), "d = %d: the largest feature index in %s; the store's d is fixed now (give --d at init if later files may use larger indices)\n", h.D, data)
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", dir)
			return nil
		},
	}
	f := cmd.Flags()
	lf.register(f)
	f.StringVar(&dir, "store", "", "store directory to create (required)")
	f.StringVar(&data, "data", "", "data set (CSV, LIBSVM or IDX; the data flags say how to read it) whose loss the store takes: kind, d (its features) and λ")
	f.StringVar(&headerFile, "header", "", "stream file whose header defines the loss")
	f.StringVar(&kind, "kind", "", "loss kind: logistic, multinomial or regression (with --d, --lambda, or with --data: default logistic), or quadratic (needs --header)")
	f.IntVar(&d, "d", 0, "feature dimension d (--kind without --header; with --data, a LIBSVM file's d: 0 for its largest index)")
	f.IntVar(&k, "k", 0, "number of classes K of --kind multinomial without --header or --data")
	f.IntVar(&every, "checkpoint-every", store.DefaultCheckpointEvery, "checkpoint interval K in events")
	f.Int64Var(&resolveAfter, "resolve-after-events", 0, "resolution policy: resolve pending approximate requests once this many events were ingested since the oldest (0: never on a count)")
	f.DurationVar(&resolveWithin, "resolve-within", 0, "resolution policy: resolve pending approximate requests once the oldest is this old, e.g. 24h (0: no deadline)")
	df.add(f, ownKindAndD) // --lambda is the data flags' (the same default, 0.05)
	return cmd
}

// lambdaNote is "λ = L, " for a loss with a ridge λ, else "".
func lambdaNote(h stream.Header) string {
	if h.Kind == stream.KindQuadratic {
		return ""
	}
	return fmt.Sprintf("λ = %.4g, ", h.Lambda)
}

// initDataHeader is the header of init --data: the stream header
// dataset.Open gives the data file (kind, d, λ, and the metadata "source"
// and "features"), checked on the file's first row, which is read so that
// a wrong --label, --kind or --classes shows at init, not at the first
// ingest.
func initDataHeader(fl *pflag.FlagSet, path string, df *dataFlags, kind string, d int) (stream.Header, error) {
	df.kind, df.d = "", 0
	if fl.Changed("kind") {
		if kind == string(stream.KindQuadratic) {
			return stream.Header{}, flagError("kind", "quadratic: a data file has no quadratic loss (want logistic, multinomial or regression)")
		}
		df.kind = kind
	}
	if fl.Changed("d") {
		df.d = d
	}
	opts, err := df.options(fl)
	if err != nil {
		return stream.Header{}, err
	}
	h, r, err := openData(path, opts)
	if err != nil {
		return stream.Header{}, err
	}
	defer r.Close()
	if _, err := r.Next(); err != nil && err != io.EOF {
		return stream.Header{}, dataError(err)
	}
	return h, nil
}

// openStore opens the store named by --store.
func openStore(dir string) (*store.Store, error) {
	if dir == "" {
		return nil, flagError("store", "required")
	}
	s, err := store.Open(dir)
	if errors.Is(err, store.ErrNotStore) {
		return nil, flagError("store", "%v; create one with unlearn init --store %s", err, dir)
	}
	return s, err
}
