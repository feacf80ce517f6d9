package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"unlearn/dataset"
	"unlearn/internal/atomicfile"
	"unlearn/stream"
)

func init() { register(newConvertCmd) }

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
			if err := new(paths).dataFile("argument 1", in, &df).out("--out", out).mapping(out, in).check(); err != nil {
				return err
			}
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
			if pe := (*dataset.PosError)(nil); errors.As(err, &pe) {
				return fmt.Errorf("%w%s", err, stringColumnHint(pe))
			}
			if err != nil {
				return err
			}
			st := r.Stats()
			stderr := cmd.ErrOrStderr()
			reportDataStats(stderr, st, opts.Classes)
			fmt.Fprintf(stderr, "wrote %s\n", out)
			if err := writeMapping(stderr, dataset.MappingFile(out), r.Mapping()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "events %d, kind %s, d %d, lambda %.4g, rows read %d\n", n, hdr.Kind, hdr.D, hdr.Lambda, st.Rows)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "output stream file (required)")
	df.keys = mappingBesideOut
	df.add(f, withShuffle|withLimit)
	return cmd
}
