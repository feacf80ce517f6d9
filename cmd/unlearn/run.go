package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"unlearn/dataset"
	"unlearn/experiment"
	"unlearn/internal/atomicfile"
	"unlearn/stream"
)

func newRunCmd() *cobra.Command {
	var (
		in, out, seriesCSV, probesFile string
		data                           string
		df                             dataFlags
		kind, mode                     string
		kappa, eta, lambdaZ, scale     float64
		seed                           uint64
		d, events, tdel, horizon, tau  int
		count, mq                      int
		deleted                        []string
		noDrift, zero                  bool
	)
	def := experiment.Experiment2()
	cmd := &cobra.Command{
		Use:   "run [--stream FILE | --data FILE] --t-del N --horizon H --tau T --eta E (--deleted IDS | --mode MODE --seed S)",
		Short: "Run one configuration: every intervention beside the counterfactual, with per-step metrics",
		Long: `run trains the o-LBFGS learner on the prefix e_1..e_{t_del} of a stream, deletes
U at t_del, applies every unlearning operator of the paper (spec §5), propagates
each intervened state beside the deletion-edited counterfactual on the same
future events e_{t_del+1}..e_{t_del+H}, and records E_w, E_Z, E_Θ, D_upd and
M_direct at every step (spec §3). It prints a summary table and, with --out,
writes the run record: the resolved configuration, the stream file's SHA-256,
U, the probes (by generator, seed and m_q; given vectors as given) and the
command line — all another implementation of the spec needs to reproduce the
series from the same file — with the per-step series in a CSV file beside it
(--out run.json writes run.series.csv, one row per method and step, named in
the record; "unlearn report FILE" reads both and draws the figures).

U is --deleted, or chosen by --mode (recent, old, random, high-gradient) with
--count ids (random mode seeded by --seed); delete events inside the prefix
join U (spec §8). Without --stream, a stream is generated (--kind, --kappa,
--seed, --events, --d) and --seed also seeds it. The probes are m_q seeded unit
vectors (--mq, --seed), or those of --probes FILE (a JSON array of vectors).

--data FILE runs on a data set (CSV, LIBSVM or IDX) read as "unlearn convert"
reads it, with the same flags (--format, --label, --id, --classes, …; --kind
is then the data's loss kind, logistic by default or regression, and --d the
LIBSVM dimension): the run is that of --stream on the converted file, in file
order unless --shuffle-seed. --events T keeps the first T selected rows. The
record names the file with its SHA-256; string ids are mapped to row numbers,
the mapping written beside --out as OUT.ids.csv, and --deleted takes the
mapped ids or the keys themselves (--deleted u-14,u-22).`,
		Example: `  unlearn gen --kind quadratic --seed 1 --out q.jsonl
  unlearn run --stream q.jsonl --t-del 500 --horizon 4500 --tau 10 --eta 0.1 --mode recent --out run.json
  unlearn run --stream q.jsonl --t-del 500 --deleted 17,42,99 --probes probes.json --out run.json
  unlearn run --kind logistic --kappa 100 --seed 2 --events 1000 --t-del 300 --mode random
  unlearn run --data heart_scale --format libsvm --t-del 100 --mode random --out heart-run.json
  unlearn run --data users.csv --label clicked --id user --t-del 500 --deleted u-14,u-22 --out users-run.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			// The generated stream's defaults (with --data, only flags given
			// count: runDataFile checks fl.Changed).
			if !fl.Changed("kind") {
				kind = string(def.Stream.Kind)
			}
			if !fl.Changed("events") {
				events = def.Stream.T
			}
			if !fl.Changed("d") {
				d = def.Stream.D
			}
			if fl.Changed("deleted") && (fl.Changed("mode") || fl.Changed("count")) {
				return flagError("deleted", "give either --deleted or --mode/--count, not both")
			}
			if _, err := stream.ParseMode(mode); err != nil && !fl.Changed("deleted") {
				return flagError("mode", "%q: want recent, old, random or high-gradient", mode)
			}
			if in != "" && data != "" {
				return flagError("data", "give either --stream or --data, not both")
			}
			if in != "" {
				for _, gen := range []string{"kind", "kappa", "events", "d", "no-drift", "feature-scale"} {
					if fl.Changed(gen) {
						return flagError(gen, "only for generated streams; the stream comes from --stream %s", in)
					}
				}
			}
			if data != "" {
				for _, gen := range []string{"kappa", "no-drift", "feature-scale"} {
					if fl.Changed(gen) {
						return flagError(gen, "only for generated streams; the stream comes from --data %s", data)
					}
				}
			} else if err := onlyWithData(fl, "kind", "d", "feature-scale"); err != nil {
				return err
			}
			if err := positiveFlags(map[string]float64{"t-del": float64(tdel), "tau": float64(tau), "eta": eta,
				"count": float64(count), "mq": float64(mq), "d": float64(d), "events": float64(events), "kappa": kappa}); err != nil {
				return err
			}
			ids, keys, derr := splitDeleted(deleted)
			if derr != nil {
				return derr
			}
			if len(keys) > 0 && data == "" {
				return flagError("deleted", "%q is not an id (an integer); keys (string ids) are accepted with --data FILE --id COLUMN", keys[0])
			}
			if horizon < 0 {
				return flagError("horizon", "%d must be non-negative (0: T − t_del)", horizon)
			}
			// Check the outputs before computing: a long run must not fail
			// at the end on a missing or read-only folder, nor write over
			// its inputs.
			fs := new(paths).in("--stream", in).dataFile("--data", data, &df).in("--probes", probesFile).
				out("--out", out).mapping(out, data).out("--series-csv", seriesCSV)
			if out != "" {
				fs.out("--out (its series)", filepath.Join(filepath.Dir(out), experiment.SeriesFileName(out)))
			}
			if err := fs.check(); err != nil {
				return err
			}
			for _, o := range []struct{ flag, path string }{{"out", out}, {"series-csv", seriesCSV}} {
				if o.path == "" {
					continue
				}
				if err := checkWritable(o.path); err != nil {
					return flagError(o.flag, "%v", err)
				}
			}
			cfg := experiment.Config{
				Stream: experiment.StreamSpec{Kind: stream.Kind(kind), D: d, T: events, Kappa: kappa, Seed: seed, NoDrift: noDrift, FeatureScale: scale},
				TDel:   tdel, Horizon: horizon, Tau: tau, Eta: eta,
				Mode: mode, Count: count, Deleted: ids,
				Probes: mq, LambdaZ: new(lambdaZ),
			}
			if probesFile != "" {
				pv, err := readProbes(probesFile)
				if err != nil {
					return flagError("probes", "%v", err)
				}
				cfg.ProbeVectors = pv
			}
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			var (
				rec *experiment.Record
				err error
				bar *progress
			)
			opt := experiment.Options{KeepSeries: true, ZeroTiming: zero, StepProgress: func(k, h int) {
				if bar == nil {
					bar = newProgress(cmd.ErrOrStderr(), h, "run")
				}
				bar.update(k, h)
			}}
			var mapping []dataset.Mapping
			if in != "" || data != "" {
				var (
					h    *stream.History
					src  experiment.Source
					err2 error
				)
				flag, file := "stream", in
				if data != "" {
					flag, file = "data", data
					h, src, mapping, err2 = runDataFile(cmd.ErrOrStderr(), fl, data, &df, kind, d, events)
					switch {
					case err2 == nil && len(mapping) > 0 && len(deleted) > 0:
						// The --id column holds strings: every value is looked
						// up as a key first, so a key that looks like a number
						// ("0007") is never taken for another row's id.
						cfg.Deleted, err2 = resolveDeleted(deleted, mapping, data)
					case err2 == nil && len(keys) > 0:
						cfg.Deleted, err2 = resolveKeys(cfg.Deleted, keys, mapping, data)
					}
				} else if err2 = notADataFile("--stream", in); err2 == nil {
					h, src, err2 = experiment.StreamFile(in)
				}
				if err2 != nil {
					return err2
				}
				if len(h.Events) < 2 {
					return fmt.Errorf("--%s %s: the stream has %d event(s); run needs at least 2 (a prefix and a future event)", flag, file, len(h.Events))
				}
				rec, err = experiment.RunHistory(ctx, h, src, cfg, "run", opt)
			} else {
				if err := cfg.Validate(); err != nil {
					return configFlag(err)
				}
				rec, err = experiment.Run(ctx, "run", cfg, opt)
			}
			if bar != nil {
				bar.finish()
			}
			if err != nil {
				return interrupted(configFlag(err))
			}
			if out != "" {
				rec.Provenance = provenance(cmd, nil)
				if err := experiment.WriteRecordFiles(out, rec); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", filepath.Join(filepath.Dir(out), experiment.SeriesFileName(out)))
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", out)
				if err := writeMapping(cmd.ErrOrStderr(), dataset.MappingFile(out), mapping); err != nil {
					return err
				}
			}
			if seriesCSV != "" {
				if err := writeAtomic(seriesCSV, rec.WriteSeriesCSV); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", seriesCSV)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "stream %s (%s, d=%d, T=%d), t_del=%d, H=%d, τ=%d, η=%.4g, U=%v (%s)\n\n",
				rec.ID, rec.Source.Kind, rec.Source.D, rec.Source.T, rec.Config.TDel, rec.Config.Horizon,
				rec.Config.Tau, rec.Config.Eta, rec.U, rec.Config.Mode)
			return experiment.RunTable(rec).WriteMarkdown(w)
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "stream", "", "stream file (JSON Lines, spec §1.1); without it a stream is generated")
	f.StringVarP(&out, "out", "o", "", "write the run record (JSON) to this file")
	f.StringVar(&seriesCSV, "series-csv", "", "write the per-step series (CSV) to this file")
	f.IntVar(&tdel, "t-del", def.TDel, "deletion time t_del: the prefix is e_1..e_{t_del}")
	f.IntVar(&horizon, "horizon", 0, "post-deletion horizon H (0: T − t_del)")
	f.IntVar(&tau, "tau", def.Tau, "memory size τ")
	f.Float64Var(&eta, "eta", def.Eta, "step size η")
	f.StringSliceVar(&deleted, "deleted", nil, "deletion set U, as ids of inserts of the prefix (ID,ID,…); with --data and a CSV --id column of strings, its keys too")
	f.StringVar(&mode, "mode", def.Mode, "deletion mode: recent, old, random or high-gradient")
	f.IntVar(&count, "count", def.Count, "deletion size |U| for --mode")
	f.Uint64Var(&seed, "seed", 1, "seed of the random deletion mode, the probes and a generated stream")
	f.StringVar(&probesFile, "probes", "", "probe vectors: a JSON array of m_q unit vectors of length d")
	f.IntVar(&mq, "mq", def.Probes, "number of seeded probe vectors m_q (without --probes)")
	f.Float64Var(&lambdaZ, "lambda-z", *def.LambdaZ, "memory weight λ_Z of E_Θ = E_w + λ_Z E_Z")
	f.StringVar(&data, "data", "", "run on this data set (CSV, LIBSVM or IDX; the data flags say how to read it) instead of a stream file")
	// --kind, --events and --d have one default per input, so they are
	// registered without one (pflag would print a second) and resolved in
	// RunE.
	f.StringVar(&kind, "kind", "", fmt.Sprintf("loss kind: a generated stream's, %s (the default) or logistic; with --data the data's, logistic (the default there) or regression", def.Stream.Kind))
	f.Float64Var(&kappa, "kappa", def.Stream.Kappa, "generated stream: condition number κ")
	f.IntVar(&events, "events", 0, fmt.Sprintf("generated stream: number of events T (default %d); with --data the first T selected rows (default: all)", def.Stream.T))
	f.IntVar(&d, "d", 0, fmt.Sprintf("generated stream: dimension d (default %d); with --data the LIBSVM dimension (default: the largest index)", def.Stream.D))
	f.BoolVar(&noDrift, "no-drift", false, "generated stream: turn curvature drift off")
	f.Float64Var(&scale, "feature-scale", 0, "generated logistic stream: largest feature-covariance eigenvalue (0: 1; κ gives the chaotic regime)")
	f.BoolVar(&zero, "zero-timing", false, "omit wall-clock times from the record")
	df.keys = mappingBesideOut
	df.add(f, withShuffle|ownKindAndD|withoutFeatureScale)
	return cmd
}

// runDataFile reads the data file of run --data whole (run needs every
// event: the prefix, U and the future), hashing it for the record. --kind
// and --d, registered by run for generated streams too, mean the data's
// loss kind (logistic unless given) and the LIBSVM dimension (the largest
// index unless given); --events T keeps the first T selected rows.
func runDataFile(stderr io.Writer, fl *pflag.FlagSet, path string, df *dataFlags, kind string, d, events int) (*stream.History, experiment.Source, []dataset.Mapping, error) {
	df.kind, df.d = "", 0
	if fl.Changed("kind") {
		df.kind = kind
	}
	if fl.Changed("d") {
		df.d = d
	}
	opts, err := df.options(fl)
	if err != nil {
		return nil, experiment.Source{}, nil, err
	}
	if fl.Changed("events") {
		opts.Limit = events
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return nil, experiment.Source{}, nil, flagError("data", "%v", err)
	}
	ds, err := dataset.Load(path, opts)
	if err != nil {
		return nil, experiment.Source{}, nil, dataError(err)
	}
	reportDataStats(stderr, ds.Stats, opts.Classes)
	h := ds.History
	if fl.Changed("events") && len(h.Events) < events {
		return nil, experiment.Source{}, nil, flagError("events", "%d, but %s selects %d rows", events, path, len(h.Events))
	}
	src := experiment.Source{File: path, SHA256: sum, Kind: string(h.Header.Kind), D: h.Header.D, T: len(h.Events)}
	return h, src, ds.Mapping, nil
}

// splitDeleted splits the values of --deleted into integer ids and keys
// (string ids of a CSV --id column, resolved by resolveKeys).
func splitDeleted(vals []string) (ids []int64, keys []string, err error) {
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, nil, flagError("deleted", "empty value in the list")
		}
		id, perr := strconv.ParseInt(v, 10, 64)
		if perr == nil {
			ids = append(ids, id)
			continue
		}
		if ne, ok := perr.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, nil, flagError("deleted", "%q is out of the range of int64 ids", v)
		}
		keys = append(keys, v)
	}
	return ids, keys, nil
}

// resolveKeys appends to ids the ids of keys under the data file's
// string-id mapping (the mapping written as OUT.ids.csv).
func resolveKeys(ids []int64, keys []string, m []dataset.Mapping, path string) ([]int64, error) {
	if len(m) == 0 {
		return nil, flagError("deleted", "%q is a key, but %s has no string ids (ids are integers: its --id column's, or row numbers); give --id COLUMN for a column of keys", keys[0], path)
	}
	byKey := make(map[string]int64, len(m))
	for _, e := range m {
		byKey[e.Key] = e.ID
	}
	for _, k := range keys {
		id, ok := byKey[k]
		if !ok {
			return nil, flagError("deleted", "key %q is not in the --id column of %s (of the rows read)", k, path)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// resolveDeleted maps the values of --deleted to ids when the data file
// has string ids (mapping m, the rows' keys): a value that is a key is that
// row's id; a value that is not a key must be an integer id. A value that is
// a key and, read as an integer, also the id of another row is ambiguous and
// refused, so a numeric-looking key is never silently another person's row.
func resolveDeleted(vals []string, m []dataset.Mapping, path string) ([]int64, error) {
	byKey := make(map[string]int64, len(m))
	byID := make(map[int64]string, len(m))
	for _, e := range m {
		byKey[e.Key] = e.ID
		byID[e.ID] = e.Key
	}
	var ids []int64
	for _, v := range vals {
		v = strings.TrimSpace(v)
		n, perr := strconv.ParseInt(v, 10, 64)
		id, isKey := byKey[v]
		other, nIsRow := byID[n]
		switch {
		case isKey && perr == nil && nIsRow && n != id:
			return nil, flagError("deleted", "%q is ambiguous in %s: it is the key of row id %d and also row id %d (key %q); give %d for the first or the key %q for the second", v, path, id, n, other, id, other)
		case isKey:
			ids = append(ids, id)
		case perr == nil:
			ids = append(ids, n)
		default:
			return nil, flagError("deleted", "key %q is not in the --id column of %s (of the rows read)", v, path)
		}
	}
	return ids, nil
}

// fileSHA256 returns the hex SHA-256 of a file's bytes.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readProbes reads a JSON array of probe vectors.
func readProbes(path string) ([][]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pv [][]float64
	if err := json.Unmarshal(b, &pv); err != nil {
		return nil, fmt.Errorf("%s: want a JSON array of vectors: %w", path, err)
	}
	if len(pv) == 0 {
		return nil, fmt.Errorf("%s: no probe vectors", path)
	}
	return pv, nil
}

// configFlag turns an experiment configuration error into an error naming
// the command-line flag that sets the field; other errors pass through.
func configFlag(err error) error {
	var ce *experiment.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	field := ce.Field
	if strings.HasPrefix(field, "ProbeVectors") {
		field = "ProbeVectors"
	}
	flag, ok := map[string]string{
		"TDel": "t-del", "Horizon": "horizon", "Tau": "tau", "Eta": "eta", "Mode": "mode",
		"Count": "count", "Deleted": "deleted", "Probes": "mq", "ProbeVectors": "probes",
		"LambdaZ": "lambda-z", "Stream.Kind": "kind", "Stream.D": "d", "Stream.T": "events",
		"Stream.Kappa": "kappa", "Stream.FeatureScale": "feature-scale",
	}[field]
	if !ok {
		return err
	}
	return flagError(flag, "%v: %s", ce.Value, ce.Want)
}

// checkWritable reports whether a file can be created at path: its folder
// exists and accepts a new file (tried with a temporary file, removed at
// once), and path is not a folder. Nothing at path is touched.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a folder, want a file path", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("folder of %s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	f, err := os.CreateTemp(dir, ".unlearn-check-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// writeAtomic writes a file through a temporary file and a rename.
func writeAtomic(path string, write func(io.Writer) error) error {
	return atomicfile.WriteFile(path, 0o644, write)
}

// positiveFlags returns a flag error for the first (in name order) of the
// given flags whose value is not positive: the experiment configuration
// reads 0 as "default", which a command line must not do silently.
func positiveFlags(vals map[string]float64) error {
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if !(vals[n] > 0) {
			return flagError(n, "%v must be positive", vals[n])
		}
	}
	return nil
}
