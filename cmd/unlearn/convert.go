package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"unlearn/dataset"
	"unlearn/internal/atomicfile"
	"unlearn/stream"
)

func init() { register(newConvertCmd) }

// dataFlags are the flags that say how to read a data file (package
// dataset), shared by convert and bench --data.
type dataFlags struct {
	format, label, id, kind, labels string
	exclude, classes                []string
	comma                           string
	lambda, scale                   float64
	d, limit, skipLines             int
	noHeader, sparse                bool
	shuffle                         uint64
}

// add registers the flags; withOrder adds --shuffle-seed and --limit.
func (df *dataFlags) add(f *pflag.FlagSet, withOrder bool) {
	f.StringVar(&df.format, "format", "", "input format: csv, libsvm or idx (default: from the file name)")
	f.StringVar(&df.kind, "kind", "logistic", "loss kind of the stream: logistic (labels 0/1 or ±1, or --classes) or regression (real targets)")
	f.Float64Var(&df.lambda, "lambda", dataset.DefaultLambda, "ridge λ written to the stream header")
	f.StringVar(&df.label, "label", "", "CSV: the label column, by header name or 1-based index (required for CSV)")
	f.StringVar(&df.id, "id", "", "CSV: the id column (integer ids are kept; string ids are mapped to row numbers, mapping written beside --out)")
	f.StringSliceVar(&df.exclude, "exclude", nil, "CSV: columns that are not features (names or 1-based indices, comma-separated)")
	f.StringVar(&df.comma, "comma", "", "CSV: the field delimiter (default ,)")
	f.IntVar(&df.skipLines, "skip-lines", 0, "CSV: lines to skip before the header row (scikit-learn's CSVs: 1)")
	f.BoolVar(&df.noHeader, "no-header", false, "CSV: the file has no header row; columns are named 1, 2, …")
	f.IntVar(&df.d, "d", 0, "LIBSVM: the dimension d (0: the largest index in the file)")
	f.BoolVar(&df.sparse, "sparse", false, "LIBSVM: write sparse payloads (x and x_index, 0-based): O(nnz) per event instead of O(d)")
	f.StringVar(&df.labels, "labels", "", "IDX: the label file (default: the image file's name with images-idx3 replaced by labels-idx1)")
	f.Float64Var(&df.scale, "scale", 0, "IDX: divide pixels by this (0: 255, features in [0,1])")
	f.StringSliceVar(&df.classes, "classes", nil, "two class labels NEG,POS mapped to -1 and +1; rows of other classes are skipped and counted (required for IDX)")
	if withOrder {
		f.Uint64Var(&df.shuffle, "shuffle-seed", 0, "stream the rows in a seeded random order (default: file order)")
		f.IntVar(&df.limit, "limit", 0, "keep only the first N rows of the (shuffled) order (0: all)")
	}
}

// options returns the dataset options the flags describe.
func (df *dataFlags) options(fl *pflag.FlagSet) (dataset.Options, error) {
	o := dataset.Options{
		Format: dataset.Format(df.format), Kind: stream.Kind(df.kind), Lambda: new(df.lambda),
		Label: df.label, ID: df.id, Exclude: df.exclude, D: df.d, Labels: df.labels, Scale: df.scale,
		Classes: df.classes, Limit: df.limit, SkipLines: df.skipLines, NoHeader: df.noHeader, Sparse: df.sparse,
	}
	if df.comma != "" {
		r := []rune(df.comma)
		if len(r) != 1 {
			return o, flagError("comma", "%q: want a single character", df.comma)
		}
		o.Comma = r[0]
	}
	if fl.Lookup("shuffle-seed") != nil && fl.Changed("shuffle-seed") {
		o.Shuffle = new(df.shuffle)
	}
	return o, nil
}

// dataOptionError rewords a dataset option error as an error naming the
// flag that sets the field.
func dataOptionError(err error) error {
	var oe *dataset.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	flag := map[string]string{
		"Format": "format", "Kind": "kind", "Lambda": "lambda", "Label": "label", "ID": "id",
		"Exclude": "exclude", "Comma": "comma", "D": "d", "Labels": "labels", "Scale": "scale",
		"Classes": "classes", "Limit": "limit", "Shuffle": "shuffle-seed", "SkipLines": "skip-lines", "NoHeader": "no-header", "Sparse": "sparse",
	}[oe.Field]
	if flag == "" {
		return err
	}
	return flagError(flag, "%s", oe.Msg)
}

func newConvertCmd() *cobra.Command {
	var (
		out string
		df  dataFlags
	)
	cmd := &cobra.Command{
		Use:   "convert [--format csv|libsvm|idx] [--label COL] [--id COL] [--kind logistic|regression] IN --out OUT",
		Short: "Convert a CSV, LIBSVM or IDX data set to a stream file of insert events",
		Long: `convert reads a data set — CSV with a header row, LIBSVM/svmlight (sparse,
1-based indices) or IDX (MNIST, Fashion-MNIST; gzip is read transparently) — and
writes it as a stream file (olbfgs-stream/v1): one insert event per selected row,
for a logistic stream (labels 0/1 or ±1 mapped to ±1, or two --classes) or a
ridge regression stream (real targets). The output is written atomically and is
ready for train, run and bench --data.

Ids: the CSV --id column's integers, or the 1-based data row number (the image
number for IDX). A CSV id column of strings maps each string to its row number;
the mapping is written beside the output as OUT.ids.csv (columns id, key).

Nothing is dropped silently: an empty or non-numeric cell, a label outside the
allowed set, a repeated id or a malformed line stops the conversion with the
file, line and column (byte offset for IDX), and no output is written. Rows of
classes --classes does not select are skipped and counted on stderr.

--shuffle-seed streams the rows in a seeded random order (a Fisher–Yates
permutation; the same seed gives the same file), and --limit keeps the first N
of that order: a seeded random sub-sample. See docs/data.md.`,
		Example: `  unlearn convert --label target --id name patients.csv --out patients.jsonl
  unlearn convert --format libsvm heart_scale --out heart.jsonl
  unlearn convert --classes 0,6 --shuffle-seed 1 --limit 5000 \
      /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz --out fashion-0-6.jsonl
  unlearn convert --kind regression --label price houses.csv --out houses.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return flagError("out", "required")
			}
			opts, err := df.options(cmd.Flags())
			if err != nil {
				return err
			}
			in := args[0]
			hdr, r, err := dataset.Open(in, opts)
			if err != nil {
				return dataOptionError(err)
			}
			defer r.Close()
			n := 0
			err = atomicfile.WriteFile(out, 0o644, func(w io.Writer) error {
				sw, err := stream.NewWriter(w, hdr)
				if err != nil {
					return err
				}
				for {
					e, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						return err
					}
					if err := sw.Write(e); err != nil {
						return fmt.Errorf("%s: %w", in, err)
					}
				}
				n = sw.Count()
				return sw.Flush()
			})
			if err != nil {
				return err
			}
			st := r.Stats()
			stderr := cmd.ErrOrStderr()
			if st.Skipped > 0 {
				fmt.Fprintf(stderr, "skipped %d of %d rows (classes other than %v)\n", st.Skipped, st.Rows, opts.Classes)
			}
			if st.QIDs > 0 {
				fmt.Fprintf(stderr, "ignored %d qid tokens (ranking groups have no meaning in a stream)\n", st.QIDs)
			}
			if st.Comments > 0 {
				fmt.Fprintf(stderr, "skipped %d comment lines\n", st.Comments)
			}
			fmt.Fprintf(stderr, "wrote %s\n", out)
			if m := r.Mapping(); len(m) > 0 {
				mf := dataset.MappingFile(out)
				if err := dataset.WriteMappingFile(mf, m); err != nil {
					return fmt.Errorf("id mapping: %w", err)
				}
				fmt.Fprintf(stderr, "wrote %s (%d string ids)\n", mf, len(m))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "events %d, kind %s, d %d, lambda %.4g, rows read %d\n", n, hdr.Kind, hdr.D, hdr.Lambda, st.Rows)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "output stream file (required)")
	df.add(f, true)
	return cmd
}
