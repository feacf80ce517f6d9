package dataset

import (
	"math"
	"path/filepath"
	"slices"
	"strings"

	"unlearn/stream"
)

// Format names an input format.
type Format string

// The input formats.
const (
	// CSV is comma-separated values with a header row (RFC 4180 quoting).
	CSV Format = "csv"
	// LIBSVM is the sparse LIBSVM/svmlight text format:
	// "label [qid:n] index:value …" with 1-based indices.
	LIBSVM Format = "libsvm"
	// IDX is the binary format of MNIST and Fashion-MNIST: an unsigned-byte
	// 3-D image file and an unsigned-byte 1-D label file.
	IDX Format = "idx"
)

// DefaultLambda is the ridge λ written to the header when Options.Lambda
// is nil: the synthetic logistic streams' default (stream.LogisticOptions).
const DefaultLambda = 0.05

// DefaultIDXScale divides IDX pixel values, mapping 0..255 onto [0, 1].
const DefaultIDXScale = 255.0

// Options say how to read a data file. The zero value reads a logistic
// stream with λ = 0.05 in the format the file name suggests; CSV needs
// Label, IDX needs Classes for a logistic stream.
type Options struct {
	// Format is the input format. If empty, it is guessed from the file
	// name: .csv (or .csv.gz) is CSV; .svm, .libsvm, .svmlight, .txt or a
	// name ending in "_scale" is LIBSVM; a name containing "idx" is IDX.
	Format Format `json:"format,omitempty"`
	// Kind is the loss kind of the stream: stream.KindLogistic (labels
	// mapped to ±1), stream.KindMultinomial (labels mapped to class
	// indices 0 … K−1, see Classes) or stream.KindRegression (real
	// targets). If empty, defaults to logistic.
	Kind stream.Kind `json:"kind,omitempty"`
	// Lambda is the ridge λ ≥ 0 of the header. If nil, defaults to
	// DefaultLambda.
	Lambda *float64 `json:"lambda,omitempty"`

	// Label is the CSV label column: its header name or, if no column has
	// that name, its 1-based index. Required for CSV.
	Label string `json:"label,omitempty"`
	// ID is the CSV id column (name or 1-based index). Integer ids are used
	// as they are; otherwise every id is a string and is mapped to the
	// 1-based number of its data row (stable for the file: the same file
	// always gives the same mapping, whatever the shuffle), listed by
	// [Reader.Mapping]. If empty, the id of a row is its data row number.
	ID string `json:"id,omitempty"`
	// Exclude lists CSV columns (names or 1-based indices) that are not
	// features. Every column other than the label, the id and these is a
	// feature, in file order.
	Exclude []string `json:"exclude,omitempty"`
	// SkipLines is the number of CSV lines skipped before the header row
	// (or the first data row with NoHeader), such as the "569,30,…" summary
	// line of scikit-learn's bundled CSVs. Line numbers in errors count them.
	SkipLines int `json:"skip_lines,omitempty"`
	// NoHeader says the CSV file has no header row: columns are named by
	// their 1-based index ("1", "2", …).
	NoHeader bool `json:"no_header,omitempty"`
	// Comma is the CSV field delimiter. If zero, defaults to ','.
	Comma rune `json:"comma,omitempty"`

	// D is the LIBSVM dimension: indices must be in 1..D. If zero, d is
	// the largest index in the file (found by a first pass over it).
	D int `json:"d,omitempty"`
	// Sparse makes LIBSVM rows sparse payloads (stream.Sample.Idx, the
	// file's indices minus one): O(nnz) memory per event and O(nnz) loss
	// data terms instead of O(d).
	Sparse bool `json:"sparse,omitempty"`

	// Labels is the IDX label file. If empty, it is the image file's name
	// with "images-idx3" replaced by "labels-idx1" (the MNIST naming).
	Labels string `json:"labels,omitempty"`
	// Scale divides IDX pixel values. If zero, defaults to 255 (features
	// in [0, 1]).
	Scale float64 `json:"scale,omitempty"`
	// FeatureScale declares a fixed map of some CSV or LIBSVM features
	// (a divisor or a range each, see [FeatureScale]; [ReadFeatureScale]
	// reads one from a file), applied to every row read; the header's
	// metadata "source" records it resolved to coordinates. A feature it
	// does not name is taken as it is.
	FeatureScale []FeatureScale `json:"feature_scale,omitempty"`

	// Classes selects the classes of a classification stream; rows of
	// other classes are skipped and counted in Stats.Skipped. Labels
	// compare as numbers when both parse as numbers (so "1.0" is class
	// "1"), else as strings.
	//
	// For a logistic stream, two labels NEG, POS, mapped to −1 and +1.
	// Required for IDX; without it, CSV and LIBSVM labels must be 0/1 or
	// −1/+1 (0 and −1 mixed in one file is an error).
	//
	// For a multinomial stream (required), the K ≥ 2 labels in class
	// order, label Classes[k] becoming class index k; or ["all"]
	// (AllClasses): every label of the file, numeric labels by value and
	// then the others in byte order (found by a first pass over the file).
	// The header's metadata "source" records the resolved list.
	//
	// Not allowed for regression.
	Classes []string `json:"classes,omitempty"`

	// Shuffle, if set, streams the rows in a seeded random order (a
	// Fisher–Yates permutation of the selected rows drawn from
	// rand.NewPCG(*Shuffle, ShuffleStream)). Ids are those of the
	// unshuffled file. A shuffled read makes two passes over the file and
	// holds the emitted rows in memory; an unshuffled one streams.
	Shuffle *uint64 `json:"shuffle_seed,omitempty"`
	// Limit, if positive, emits only the first Limit rows of the (shuffled)
	// order: a seeded sub-sample with Shuffle.
	Limit int `json:"limit,omitempty"`

	// Unlabeled reads rows to predict on, whose labels are unknown or
	// ignored: no label is read (a CSV's label column may be absent, and is
	// skipped when present; a LIBSVM line may start with its first
	// index:value; an IDX read opens no label file), no row is skipped for
	// its class, and every event carries a placeholder label, +1 for a
	// logistic stream and 0 otherwise, which means nothing. A CSV's ID and
	// Exclude columns may be absent too (rows are then numbered). Ids are
	// not checked for repeats, so memory stays one row whatever the file's
	// length (a repeated id is predicted twice).
	Unlabeled bool `json:"unlabeled,omitempty"`
}

// placeholderLabel is the label of an Options.Unlabeled event: a valid
// payload scalar for the kind.
func placeholderLabel(k stream.Kind) float64 {
	if k == stream.KindLogistic {
		return 1
	}
	return 0
}

// ShuffleStream is the PCG stream word of the shuffle's random source.
const ShuffleStream = 0x73687566666c65 // "shuffle"

func (o Options) kind() stream.Kind {
	if o.Kind == "" {
		return stream.KindLogistic
	}
	return o.Kind
}

func (o Options) lambda() float64 {
	if o.Lambda == nil {
		return DefaultLambda
	}
	return *o.Lambda
}

// DetectFormat returns the format Open reads path in: o.Format if set
// (an *OptionError if it is not a known format), else the format its
// name suggests (see Options.Format), else an *OptionError for Format.
func DetectFormat(path string, o Options) (Format, error) { return o.format(path) }

// format returns the resolved format of path.
func (o Options) format(path string) (Format, error) {
	if o.Format != "" {
		switch o.Format {
		case CSV, LIBSVM, IDX:
			return o.Format, nil
		}
		return "", optErr("Format", "%q: want csv, libsvm or idx", o.Format)
	}
	name := strings.ToLower(strings.TrimSuffix(filepath.Base(path), ".gz"))
	ext := filepath.Ext(name)
	switch {
	case ext == ".csv":
		return CSV, nil
	case ext == ".svm" || ext == ".libsvm" || ext == ".svmlight" || ext == ".txt" || strings.HasSuffix(name, "_scale"):
		return LIBSVM, nil
	case strings.Contains(name, "idx"):
		return IDX, nil
	}
	return "", optErr("Format", "cannot tell the format of %q from its name: give it (csv, libsvm or idx)", path)
}

// MaxDim is the largest dimension a reader accepts: the largest d an o-LBFGS
// learner accepts (olbfgs.MaxStateFloats/7, a learner of 7d words at most
// 2³⁰). A LIBSVM index or a --d above it is an error naming the line and
// column or the option, not a dense row of up to 2³¹ floats (16 GiB) that
// the allocator would fail on.
const MaxDim = 1 << 30 / 7

// validate checks the options that do not depend on the file.
func (o Options) validate(f Format) error {
	multi := o.kind() == stream.KindMultinomial
	switch k := o.kind(); {
	case k != stream.KindLogistic && k != stream.KindRegression && k != stream.KindMultinomial:
		return optErr("Kind", "%q: want logistic, multinomial or regression", k)
	case math.IsNaN(o.lambda()) || math.IsInf(o.lambda(), 0) || o.lambda() < 0:
		return optErr("Lambda", "%v: want a finite λ ≥ 0", o.lambda())
	case o.Limit < 0:
		return optErr("Limit", "%d: want a non-negative count (0: every row)", o.Limit)
	case o.D < 0:
		return optErr("D", "%d: want a positive dimension (0: the largest index)", o.D)
	case o.D > MaxDim:
		return optErr("D", "%d: want at most %d, the largest dimension a learner accepts (7d words at most 2^30)", o.D, MaxDim)
	case o.D > 0 && f != LIBSVM:
		return optErr("D", "applies to LIBSVM files only")
	case o.Sparse && f != LIBSVM:
		return optErr("Sparse", "applies to LIBSVM files only")
	case math.IsNaN(o.Scale) || math.IsInf(o.Scale, 0) || o.Scale < 0:
		return optErr("Scale", "%v: want a positive finite divisor (0: 255)", o.Scale)
	case o.Scale != 0 && f != IDX:
		return optErr("Scale", "applies to IDX files only")
	case len(o.FeatureScale) > 0 && f == IDX:
		return optErr("FeatureScale", "applies to CSV and LIBSVM files only (IDX pixels have Scale)")
	case o.Sparse && slices.ContainsFunc(o.FeatureScale, func(fs FeatureScale) bool { return fs.Range != nil }):
		return optErr("FeatureScale", "a range maps 0 to another value and a sparse read stores no zeros: declare divisors, or read the file dense")
	case o.Labels != "" && f != IDX:
		return optErr("Labels", "applies to IDX files only")
	case o.Labels != "" && o.Unlabeled:
		return optErr("Labels", "an unlabeled read opens no label file")
	case f != CSV && o.csvOnly() != "":
		return optErr(o.csvOnly(), "applies to CSV files only")
	case o.SkipLines < 0:
		return optErr("SkipLines", "%d: want a non-negative number of lines", o.SkipLines)
	case f == CSV && o.Label == "" && !o.Unlabeled:
		return optErr("Label", "required for CSV: the label column's name or 1-based index")
	case len(o.Classes) != 0 && o.kind() == stream.KindRegression:
		return optErr("Classes", "a regression stream keeps every row with its real target; classes are for logistic and multinomial streams")
	case multi && len(o.Classes) == 0:
		return optErr("Classes", "required for a multinomial stream: the class labels in class order (such as 0,1,2) or all")
	case multi && o.allClasses() && o.Unlabeled:
		return optErr("Classes", "all is resolved from the labels of the data, and an unlabeled read has none: give the model's class labels in class order")
	case multi && o.allClasses():
	case multi && len(o.Classes) < 2:
		return optErr("Classes", "%d value: want at least two class labels, or all", len(o.Classes))
	case multi && len(o.Classes) > stream.MaxClasses:
		return optErr("Classes", "%d values: at most %d classes", len(o.Classes), stream.MaxClasses)
	case !multi && o.allClasses():
		return optErr("Classes", "all selects every class of a multinomial stream (--kind multinomial); a logistic stream takes two labels NEG,POS")
	case !multi && len(o.Classes) != 0 && len(o.Classes) != 2:
		return optErr("Classes", "%d values: want two (negative, positive) for a logistic stream, or --kind multinomial for more", len(o.Classes))
	case f == IDX && o.kind() == stream.KindLogistic && len(o.Classes) == 0 && !o.Unlabeled:
		return optErr("Classes", "required for an IDX logistic stream: two class labels such as 0,6")
	}
	for i, a := range o.Classes {
		if strings.TrimSpace(a) == "" {
			return optErr("Classes", "label %d is empty", i+1)
		}
		for _, b := range o.Classes[:i] {
			if SameLabel(a, b) {
				return optErr("Classes", "%q and %q are the same class", b, a)
			}
		}
	}
	return nil
}

// allClasses reports whether Classes is ["all"].
func (o Options) allClasses() bool {
	return len(o.Classes) == 1 && strings.EqualFold(strings.TrimSpace(o.Classes[0]), AllClasses)
}

// csvOnly returns the first option set that applies to CSV files only
// (Label, ID, Exclude, Comma, SkipLines, NoHeader), or "".
func (o Options) csvOnly() string {
	switch {
	case o.Label != "":
		return "Label"
	case o.ID != "":
		return "ID"
	case len(o.Exclude) > 0:
		return "Exclude"
	case o.Comma != 0:
		return "Comma"
	case o.SkipLines != 0:
		return "SkipLines"
	case o.NoHeader:
		return "NoHeader"
	}
	return ""
}
