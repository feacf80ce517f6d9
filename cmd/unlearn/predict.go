package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"unlearn/dataset"
	"unlearn/model"
	"unlearn/stream"
)

func init() { register(newPredictCmd) }

func newPredictCmd() *cobra.Command {
	var (
		dir, stateFile, releaseFile string
		data, in, out               string
		asJSON, force               bool
		df                          dataFlags
		trust                       releaseTrust
	)
	cmd := &cobra.Command{
		Use:   "predict (--store DIR | --state FILE | --release FILE (--certificate FILE --public-key NAME.pub | --unverified)) (--data FILE | --stream FILE) [--out FILE] [--json]",
		Short: "Apply a store's model, a snapshot or a release to new rows: predicted label and class probabilities",
		Long: `predict applies a model — a store's current state (--store), a snapshot
(--state, from 'unlearn train' or 'unlearn export') or a release (--release,
from 'unlearn release' or 'unlearn certify') — to the rows of a data file
(--data: CSV, LIBSVM or IDX) or a stream file (--stream), and writes one line
per row, in the file's order: CSV with a header row, or JSON Lines with --json.

A release is used only once it verifies: --certificate (the release's
certificate) and --public-key (the certifier's key) are required with
--release, and the release is checked as 'unlearn verify' checks it — the
signature, the release file's SHA-256, its configuration, loss and
dimension — before any row is read; a release that does not verify is refused
and nothing is written. --unverified uses the file unchecked (an edited w, or
another loss kind, would be predicted with) and says so on standard error.

Columns: id, the row's id (a CSV id column's value, string ids included, or
the 1-based row number; a stream event's id); for a classifier, label, the
predicted class in the data's own class names (those of --classes; a binary
model trained without them names its classes -1 and 1, a multinomial one
trained on a stream 0 … K−1), and p_CLASS, the probability of each class (one
column per class; --kind multinomial with --classes all records the training
file's labels); for a regression, prediction. The scores are the learner's own:
the deployed parameters (the average of the iterates with --average or the
practitioner's profile), the standardized features with --standardize, the
intercept. A binary classifier predicts the positive class when its score is ≥
0, a multinomial one the class of the largest score (probabilities: the
softmax), the rule of evaluate's accuracy, so the accuracy computed from
predict's labels is evaluate's. Numbers are the shortest decimals that read
back to the same float64: a store and its exact release write the same bytes.

The rows need no label: a CSV's label column may be absent (it is skipped when
present), a LIBSVM line may start with its first index:value, and an IDX image
file is read without its label file; every row is predicted, whatever its
class. The file is read as the model's data was: the model's contract (the
format, the CSV's label, id and excluded columns, the classes, the IDX scale)
gives every data flag not on the command line, and data that does not fit the
contract — other or reordered CSV feature columns, another format, classes or
image scale — is refused, naming the field, what the model expects and what
the data has (--force-features takes the features by position when they are
the model's under other names).

The input is streamed and the output written as it goes: memory stays one
row whatever the number of rows, and the input may be a pipe (--data
/dev/stdin --format csv; a pipe's format is not guessed). --out FILE writes the file atomically (a
temporary file renamed when complete); without it the lines go to standard
output.`,
		Example: `  unlearn predict --store model --data new-patients.csv > predictions.csv
  unlearn predict --release release.json --certificate cert.json --public-key certifier.pub --data t10k-images-idx3-ubyte.gz --json --out predictions.jsonl
  unlearn predict --state state.json --stream heldout.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			given := 0
			for _, v := range []string{dir, stateFile, releaseFile} {
				if v != "" {
					given++
				}
			}
			switch {
			case given == 0:
				return flagError("store", "required (or --state FILE, or --release FILE)")
			case given > 1:
				return flagError("store", "give one of --store, --state and --release")
			case data == "" && in == "":
				return flagError("data", "required (a data set, or a stream file; or --stream FILE)")
			case data != "" && in != "":
				return flagError("data", "give either --data or --stream, not both")
			}
			// A pipe (--data /dev/stdin --format csv) is read once: its first
			// bytes are not sniffed for a stream's header.
			src := heldOut{path: in, flag: "stream"}
			if data != "" {
				src = heldOut{path: data, flag: "data"}
				isStream := false
				if !fl.Changed("format") && regularFile(data) {
					var err error
					if isStream, err = looksLikeStream(data); err != nil {
						return flagError("data", "%v", err)
					}
				}
				if !isStream {
					src.df = &df
				}
			}
			if src.df == nil {
				if err := onlyWithData(fl); err != nil {
					return err
				}
				if regularFile(src.path) {
					if err := notADataFile("--"+src.flag, src.path); err != nil {
						return err
					}
				}
			}
			var releases []string
			if releaseFile != "" {
				releases = []string{releaseFile}
			}
			if err := trust.check(fl, releases); err != nil {
				return err
			}
			if out != "" {
				if err := outputGuard(out, dir, append([]string{src.path, stateFile, releaseFile, trust.publicKey}, trust.certificates...)...); err != nil {
					return err
				}
			}
			var m namedModel
			var err error
			switch {
			case releaseFile != "":
				m, err = releaseModel(releaseFile, &trust, 0, cmd.ErrOrStderr())
			case stateFile != "":
				m, err = snapshotModel(stateFile)
			default:
				var ms []namedModel
				ms, err = storeModels(dir, false, nil)
				if err == nil {
					m = ms[0]
				}
			}
			if err != nil {
				return err
			}
			mm, err := m.apply()
			if err != nil {
				return err
			}
			rows, closeRows, err := src.predictRows(cmd, m, force)
			if err != nil {
				return err
			}
			defer closeRows()
			write := func(w io.Writer) error {
				n, err := model.WritePredictions(w, mm, rows, model.Output{JSON: asJSON})
				if err != nil {
					if src.df != nil {
						return dataError(err)
					}
					return fmt.Errorf("%s: %w", src.path, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "predicted %s with %s\n", plural(n, "row", "rows"), m.name)
				return nil
			}
			if out == "" {
				bw := bufio.NewWriter(cmd.OutOrStdout())
				if err := write(bw); err != nil {
					return err
				}
				return bw.Flush()
			}
			if err := writeAtomic(out, write); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory: predict with its current state")
	f.StringVar(&stateFile, "state", "", "state snapshot to predict with")
	f.StringVar(&releaseFile, "release", "", "release file (unlearn release, unlearn certify) to predict with")
	f.StringVar(&data, "data", "", "rows to predict: a data set (CSV, LIBSVM or IDX; the data flags say how to read it, the model's contract by default) or a stream file")
	f.StringVar(&in, "stream", "", "rows to predict: a stream file (JSON Lines, spec §1.1)")
	f.StringVarP(&out, "out", "o", "", "write the predictions to this file (default: standard output)")
	f.BoolVar(&asJSON, "json", false, "write JSON Lines (one object per row) instead of CSV")
	f.BoolVar(&force, "force-features", false, forceFeaturesHelp)
	trust.register(f)
	df.keys = "string ids are written as they are, in the id column"
	df.lossFrom = "the model's"
	df.add(f, 0)
	return cmd
}

// predictRows opens the rows predict reads: a data file read unlabeled as
// the model reads its data, or a stream file; both checked against the
// model's loss and contract. close releases the file.
func (h heldOut) predictRows(cmd *cobra.Command, m namedModel, force bool) (model.Rows, func() error, error) {
	fl := cmd.Flags()
	in := m.into(force)
	kind, d, k := m.l.Loss().Kind(), m.l.Config().Dim, m.l.Config().Outputs
	if h.df == nil {
		f, err := os.Open(h.path)
		if err != nil {
			return nil, nil, err
		}
		rd, err := stream.NewReader(f)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", h.path, err)
		}
		// The contract first: it names the field (classes, features) that
		// makes the loss differ.
		if err := in.checkContract(cmd.ErrOrStderr(), h.flag, h.path, rd.Header(), nil); err != nil {
			f.Close()
			return nil, nil, err
		}
		if hd := rd.Header(); hd.Kind != kind || hd.D != d || hd.K != k {
			f.Close()
			return nil, nil, flagError(h.flag, "%s has %s, the model %s", h.path, lossShape(hd.Kind, hd.D, hd.K), lossShape(kind, d, k))
		}
		return rd, f.Close, nil
	}
	opts, err := h.df.options(fl)
	if err != nil {
		return nil, nil, err
	}
	opts.Unlabeled = true
	lossFromModel(fl, &opts, h.path, kind, d, m.hdr.Lambda)
	in.contractDefaults(fl, &opts, h.path)
	unnamedClasses(fl, &opts, m)
	hdr, r, err := in.openData(h.path, opts)
	if err != nil {
		return nil, nil, err
	}
	if hdr.Kind == kind {
		// The contract before d: a CSV with a column missing or extra has
		// another d, and the contract says which column.
		if err := in.checkContract(cmd.ErrOrStderr(), "data", h.path, hdr, r); err != nil {
			r.Close()
			return nil, nil, err
		}
	}
	switch {
	case hdr.Kind != kind:
		r.Close()
		return nil, nil, flagError("kind", "%s, but the model's loss is %s", hdr.Kind, kind)
	case hdr.D != d && fl.Changed("d"):
		r.Close()
		return nil, nil, flagError("d", "%d, but the model's d is %d", hdr.D, d)
	case hdr.D != d:
		r.Close()
		return nil, nil, fmt.Errorf("--data %s: d = %d (the file's features), but the model's d is %d", h.path, hdr.D, d)
	case hdr.K != k:
		r.Close()
		return nil, nil, flagError("classes", "%d classes, but the model has %d", hdr.K, k)
	}
	return r, r.Close, nil
}

// unnamedClasses sets, for a multinomial model that records no class
// names (trained on a stream), the classes of an unlabeled read to its
// class indices 0 … K−1 unless --classes gives them: the read needs K.
func unnamedClasses(fl *pflag.FlagSet, o *dataset.Options, m namedModel) {
	if m.l.Loss().Kind() != stream.KindMultinomial || len(o.Classes) > 0 || fl.Changed("classes") {
		return
	}
	for c := range m.l.Config().Outputs {
		o.Classes = append(o.Classes, strconv.Itoa(c))
	}
}

// lossShape describes a loss for a message: "a logistic loss with d = 5",
// "a multinomial loss with d = 4 and k = 3 classes".
func lossShape(kind stream.Kind, d, k int) string {
	if kind == stream.KindMultinomial {
		return fmt.Sprintf("a %s loss with d = %d and k = %d classes", kind, d, k)
	}
	return fmt.Sprintf("a %s loss with d = %d", kind, d)
}

// regularFile reports whether name is a regular file (not a pipe or a
// device, which can be read only once).
func regularFile(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// outputGuard refuses an output file that is one of the command's inputs
// or lies inside the store directory dir.
func outputGuard(out, dir string, inputs ...string) error {
	if dir != "" && insideDir(dir, out) {
		return flagError("out", "%s is inside the store directory %s: write it elsewhere", out, dir)
	}
	oi, err := os.Stat(out)
	if err != nil {
		return nil // a new file
	}
	for _, p := range inputs {
		if p == "" {
			continue
		}
		if pi, err := os.Stat(p); err == nil && os.SameFile(oi, pi) {
			return flagError("out", "%s is an input of the command (%s): write the predictions elsewhere", out, p)
		}
	}
	return nil
}
