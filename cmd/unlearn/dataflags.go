package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"unlearn/dataset"
	"unlearn/stream"
)

// dataFlags are the flags that say how to read a data file (package
// dataset). They mean the same in every command that reads one: convert
// (the file is its argument), and train, run, bench and ingest (--data
// FILE).
type dataFlags struct {
	format, label, id, kind, labels string
	exclude, classes                []string
	comma                           string
	// featureScale is --feature-scale: the file declaring the per-feature
	// scale of a CSV or LIBSVM file (dataset.ReadFeatureScale).
	featureScale        string
	lambda, scale       float64
	d, limit, skipLines int
	noHeader, sparse    bool
	shuffle             uint64
	// keys, set before add, says what becomes of a CSV's string ids in
	// the command (the --id help); default: only that they are mapped.
	keys string
	// lossFrom, set before add, names what fixes the loss when the data
	// is read into an existing model ("the store's", "the model's"):
	// --kind, --lambda and --d then default to it (see lossFromModel).
	lossFrom string
}

// dataFlagSet says which of the optional data flags a command registers.
type dataFlagSet uint8

const (
	// withShuffle registers --shuffle-seed (the reader then holds the
	// selected rows in memory: not for ingest, which streams).
	withShuffle dataFlagSet = 1 << iota
	// withLimit registers --limit (commands with an --events flag use it
	// instead).
	withLimit
	// ownKindAndD leaves --kind and --d to the command, which registers
	// them with a meaning for its other inputs too (run: a generated
	// stream's kind and d) and copies them into dataFlags.kind and .d.
	ownKindAndD
	// withoutFeatureScale leaves --feature-scale out: the command (run)
	// gives the name to its generated stream's covariance.
	withoutFeatureScale
)

// mappingBesideOut is the --id help's keys text of the commands that
// write the string-id mapping beside their --out (convert, train, run).
const mappingBesideOut = "string ids are mapped to row numbers, the mapping written beside --out as OUT.ids.csv"

// add registers the flags.
func (df *dataFlags) add(f *pflag.FlagSet, set dataFlagSet) {
	f.StringVar(&df.format, "format", "", "input format: csv, libsvm or idx (default: from the file name)")
	switch {
	case set&ownKindAndD != 0:
	case df.lossFrom != "":
		f.StringVar(&df.kind, "kind", "", "loss kind of the data: logistic (labels 0/1 or ±1, or --classes), multinomial (--classes) or regression (real targets) (default: "+df.lossFrom+"; another is an error)")
	default:
		f.StringVar(&df.kind, "kind", "logistic", "loss kind of the stream: logistic (labels 0/1 or ±1, or --classes NEG,POS), multinomial (K classes: --classes) or regression (real targets)")
	}
	if df.lossFrom != "" {
		f.Float64Var(&df.lambda, "lambda", 0, "ridge λ of the data's loss (default: "+df.lossFrom+"; another is an error)")
	} else {
		f.Float64Var(&df.lambda, "lambda", dataset.DefaultLambda, "ridge λ of the data's loss, written to the header")
	}
	f.StringVar(&df.label, "label", "", "CSV: the label column, by header name or 1-based index (required for CSV)")
	keys := df.keys
	if keys == "" {
		keys = "string ids are mapped to row numbers"
	}
	f.StringVar(&df.id, "id", "", "CSV: the id column, not a feature (integer ids are kept; "+keys+")")
	f.StringSliceVar(&df.exclude, "exclude", nil, "CSV: columns that are not features (names or 1-based indices, comma-separated)")
	f.StringVar(&df.comma, "comma", "", "CSV: the field delimiter (default ,)")
	f.IntVar(&df.skipLines, "skip-lines", 0, "CSV: lines to skip before the header row (scikit-learn's CSVs: 1)")
	f.BoolVar(&df.noHeader, "no-header", false, "CSV: the file has no header row; columns are named 1, 2, …")
	switch {
	case set&ownKindAndD != 0:
	case df.lossFrom != "":
		f.IntVar(&df.d, "d", 0, "LIBSVM: the dimension d (default: "+df.lossFrom+"; another is an error)")
	default:
		f.IntVar(&df.d, "d", 0, "LIBSVM: the dimension d (0: the largest index in the file)")
	}
	f.BoolVar(&df.sparse, "sparse", false, "LIBSVM: sparse payloads (x and x_index, 0-based): O(nnz) per event instead of O(d)")
	f.StringVar(&df.labels, "labels", "", "IDX: the label file (default: the image file's name with images-idx3 replaced by labels-idx1)")
	f.Float64Var(&df.scale, "scale", 0, "IDX: divide pixels by this (0: 255, features in [0,1])")
	if set&withoutFeatureScale == 0 {
		f.StringVar(&df.featureScale, "feature-scale", "", "CSV, LIBSVM: a file declaring a fixed scale of features, from the data's documentation, not its rows: JSON {\"name\": divisor or [lo, hi], …} or CSV rows name,divisor or name,lo,hi; a value is divided by its divisor or mapped from [lo, hi] onto [0, 1] (a value outside the range is refused); recorded in the model's data contract and applied to every row read into it")
	}
	f.StringSliceVar(&df.classes, "classes", nil, "logistic: two class labels NEG,POS mapped to -1 and +1 (required for IDX); multinomial: the K labels in class order, or all (every label of the file); rows of other classes are skipped and counted")
	if set&withShuffle != 0 {
		f.Uint64Var(&df.shuffle, "shuffle-seed", 0, "stream the rows in a seeded random order (default: file order; holds the selected rows in memory)")
	}
	if set&withLimit != 0 {
		f.IntVar(&df.limit, "limit", 0, "keep only the first N rows of the (shuffled) order (0: all)")
	}
}

// dataFlagNames are the names of every flag add may register.
var dataFlagNames = []string{"format", "kind", "lambda", "label", "id", "exclude", "comma", "skip-lines",
	"no-header", "d", "sparse", "labels", "scale", "feature-scale", "classes", "shuffle-seed", "limit"}

// onlyWithData returns a flag error for the first data flag set on the
// command line when no data file is read (--data not given); except names
// flags that also have another meaning in the command.
func onlyWithData(fl *pflag.FlagSet, except ...string) error {
	for _, name := range dataFlagNames {
		if fl.Lookup(name) == nil || !fl.Changed(name) {
			continue
		}
		skip := false
		for _, e := range except {
			skip = skip || e == name
		}
		if !skip {
			return flagError(name, "only with --data")
		}
	}
	return nil
}

// lossFromModel sets in o the loss that an existing model fixes (kind,
// d and λ of hdr; a store's or a snapshot's header) for each of --kind,
// --lambda and --d that the command line does not give, so that a user
// need not repeat them; a flag given explicitly stays, and a mismatch is
// the caller's error naming it. A model of a kind no data file has (the
// synthetic quadratic) keeps the default, for the caller's check to name.
func lossFromModel(fl *pflag.FlagSet, o *dataset.Options, path string, kind stream.Kind, d int, lambda float64) {
	if !fl.Changed("kind") && (kind == stream.KindLogistic || kind == stream.KindRegression || kind == stream.KindMultinomial) {
		o.Kind = kind
	}
	if !fl.Changed("lambda") {
		o.Lambda = new(lambda)
	}
	if f, err := dataset.DetectFormat(path, *o); err == nil && f == dataset.LIBSVM && !fl.Changed("d") {
		o.D = d // the model's d, not the largest index of this file
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
	if df.featureScale != "" {
		fs, err := dataset.ReadFeatureScale(df.featureScale)
		if err != nil {
			return o, flagError("feature-scale", "%v", err)
		}
		o.FeatureScale = fs
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
	flag := fieldFlags[oe.Field]
	if flag == "" {
		return err
	}
	return flagError(flag, "%s", oe.Msg)
}

// dataError names the flag that gave a data file in an error about it:
// option errors name their own flag; errors about the data (a
// *dataset.PosError, which names the file, line and column) are prefixed
// with --data, and a word in the first row's feature cell gets the flags
// that make its column row ids or not a feature.
func dataError(err error) error {
	if err == nil {
		return nil
	}
	var oe *dataset.OptionError
	if errors.As(err, &oe) {
		return dataOptionError(err)
	}
	var pe *dataset.PosError
	if errors.As(err, &pe) {
		return fmt.Errorf("--data %w%s", err, stringColumnHint(pe))
	}
	return fmt.Errorf("--data: %w", err)
}

// stringColumnHint returns, for an error in a column of strings (see
// dataset.PosError.StringColumn), the flags that make it row ids or not a
// feature; "" for any other error.
func stringColumnHint(pe *dataset.PosError) string {
	if !pe.StringColumn {
		return ""
	}
	col := pe.ColumnName
	if col == "" || strings.ContainsAny(col, " ,\"'\\") || col != strings.TrimSpace(col) {
		col = fmt.Sprint(pe.Field) // the 1-based index names it as well
	}
	return fmt.Sprintf("; a column of strings: use --id %s (row ids) or --exclude %s", col, col)
}

// openData opens the data file of --data with the options of the flags.
// Errors name the flag (see dataError).
func openData(path string, o dataset.Options) (stream.Header, *dataset.Reader, error) {
	hdr, r, err := dataset.Open(path, o)
	if err != nil {
		return stream.Header{}, nil, dataError(err)
	}
	return hdr, r, nil
}

// writeMapping writes the string-id mapping of a data read to name
// (dataset.MappingFile of the output, as convert does), if there is one,
// and says so on stderr-like w.
func writeMapping(w interface{ Write([]byte) (int, error) }, name string, m []dataset.Mapping) error {
	if len(m) == 0 {
		return nil
	}
	if err := dataset.WriteMappingFile(name, m); err != nil {
		return fmt.Errorf("id mapping: %w", err)
	}
	fmt.Fprintf(w, "wrote %s (%d string ids)\n", name, len(m))
	return nil
}

// reportDataStats says on w what a data file's read left out, so that no
// row is dropped silently: rows of classes --classes does not select,
// LIBSVM comment lines and ignored qid tokens.
func reportDataStats(w io.Writer, st dataset.Stats, classes []string) {
	if st.Skipped > 0 {
		fmt.Fprintf(w, "skipped %d of %d rows (classes other than %v)\n", st.Skipped, st.Rows, classes)
	}
	if st.QIDs > 0 {
		fmt.Fprintf(w, "ignored %d qid tokens (ranking groups have no meaning in a stream)\n", st.QIDs)
	}
	if st.Comments > 0 {
		fmt.Fprintf(w, "skipped %d comment lines\n", st.Comments)
	}
}

// looksLikeStream reports whether the file name starts as a stream file
// does (spec §1.1: a JSON header object on the first line), that is,
// whether its first non-blank byte is '{'. A CSV file starts with a
// header row or a value, a LIBSVM file with a label, an IDX file with two
// zero bytes; none starts with '{'.
func looksLikeStream(name string) (bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return false, err
	}
	b := bytes.TrimLeft(buf[:n], " \t\r\n\ufeff")
	return len(b) > 0 && b[0] == '{', nil
}

// notADataFile returns an error that says how to read the file name with
// --data when a stream file was expected (a positional file of ingest,
// --stream of train and run) but the file does not start like a stream
// and its name says it is a CSV, LIBSVM or IDX file; nil otherwise (the
// stream reader then reports what is wrong, with its line). what names
// the flag that gave the file ("--stream"), or is empty for an argument.
func notADataFile(what, name string) error {
	ok, err := looksLikeStream(name)
	if err != nil || ok {
		return nil
	}
	f, err := dataset.DetectFormat(name, dataset.Options{})
	if err != nil {
		return nil
	}
	with := map[dataset.Format]string{
		dataset.CSV:    " (with --label COLUMN, and --id COLUMN for row ids)",
		dataset.LIBSVM: "",
		dataset.IDX:    " (with --classes NEG,POS)",
	}[f]
	article := "a"
	if f == dataset.IDX {
		article = "an"
	}
	if what != "" {
		what += " "
	}
	return usageError{fmt.Errorf("%s%s looks like %s %s file, not a stream: use --data %s%s",
		what, name, article, strings.ToUpper(string(f)), name, with)}
}
