package model

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"unlearn/dataset"
	"unlearn/stream"
)

// Contract is what a model needs of its data to be applied to raw rows, and
// what data read into it must match: the format of the file it was trained
// on and, for CSV, its feature columns by name and order, for IDX the image
// shape and the divisor of the pixels, and the class labels in the order of
// the model's outputs. The loss kind and d are the loss header's; the
// learner's own preprocessing (an intercept, standardization statistics),
// when it has any, is part of its state and travels with it.
//
// A contract is recorded where the model's loss is: a stream header read
// from a data file carries it as its metadata "source" and "features"
// (package dataset), so a store created from a data file (unlearn init
// --data), a snapshot trained on one and a converted stream have one;
// [ContractOf] reads it back. A release carries it as its field "contract"
// (package certify), bound by the certificate's hash of the release.
//
// Nothing in a contract depends on the rows: it holds the CSV's header row,
// the IDX header's shape and the options the user gave.
type Contract struct {
	// Format is the data file's format: csv, libsvm or idx.
	Format dataset.Format `json:"format"`
	// Features are the CSV feature columns' names, in the order of the
	// model's coordinates (CSV only).
	Features []string `json:"features,omitempty"`
	// Label, ID and Exclude are how the CSV was read: the label column, the
	// id column and the columns that are not features (names or 1-based
	// indices, as given). A command reading a CSV into the model uses them
	// unless told otherwise.
	Label   string   `json:"label,omitempty"`
	ID      string   `json:"id,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// Classes are the class labels in the data's own names, in the order of
	// the model's outputs: for a binary logistic model, the class mapped to
	// y = −1, then the one mapped to +1; for a multinomial model of K
	// classes, the label of class 0 (y = 0), then of class 1, … — with
	// dataset.Options.Classes = all, every label of the training file in
	// class order (numbers by value), as found when the model was made.
	// Empty for a binary model trained on labels 0/1 or ±1 without naming
	// them (its classes are then "-1" and "1", [UnnamedClasses]), for a
	// multinomial stream whose header names none (classes "0" … "K−1") and
	// for regression.
	Classes []string `json:"classes,omitempty"`
	// Scale divides the IDX pixel values (IDX only).
	Scale float64 `json:"scale,omitempty"`
	// Shape is the IDX image's rows and columns, rows·cols = d (IDX only;
	// absent in contracts recorded before it was).
	Shape []int `json:"shape,omitempty"`
	// FeatureScale is the CSV's or LIBSVM file's declared per-feature map
	// (dataset.FeatureScale: a divisor or a range [lo, hi] of each named
	// feature, with its 1-based coordinate, in coordinate order), applied
	// to every row read into the model; absent when none was declared.
	FeatureScale []dataset.FeatureScale `json:"feature_scale,omitempty"`
}

// UnnamedClasses are the class labels of a binary logistic model whose
// contract names none: the stream's y, −1 and +1.
var UnnamedClasses = []string{"-1", "1"}

// ContractOf returns the contract a stream header records (its metadata
// "source" and "features", written by package dataset), or nil when it
// records none: a synthetic stream, a header written by hand, a store
// created from flags. A record that does not decode is an error.
func ContractOf(h stream.Header) (*Contract, error) {
	src, features, ok, err := dataset.SourceOf(h)
	if err != nil || !ok {
		return nil, err
	}
	c := &Contract{Format: src.Format, Label: src.Label, ID: src.ID,
		Exclude: slices.Clone(src.Exclude), Classes: slices.Clone(src.Classes), FeatureScale: slices.Clone(src.FeatureScale)}
	switch src.Format {
	case dataset.CSV:
		c.Features = features
	case dataset.IDX:
		c.Scale, c.Shape = src.Scale, slices.Clone(src.Shape)
	}
	return c, nil
}

// Validate reports whether c can describe a model of the given loss kind,
// dimension d and number of classes k (the multinomial header's k;
// ignored for the other kinds): a known format; for CSV, d distinct
// non-empty feature names; for IDX, a positive finite scale and, if
// recorded, a shape of d pixels; two distinct classes or none for a binary
// logistic model, k distinct classes or none for a multinomial one, none
// for regression. Errors are *ContractError values (ErrContract).
func (c *Contract) Validate(kind stream.Kind, d, k int) error {
	switch c.Format {
	case dataset.CSV, dataset.LIBSVM, dataset.IDX:
	default:
		return contractErr("format", "%q: want csv, libsvm or idx", c.Format)
	}
	if c.Format == dataset.CSV {
		if len(c.Features) != d {
			return contractErr("features", "%d names for d = %d", len(c.Features), d)
		}
		seen := make(map[string]bool, d)
		for i, f := range c.Features {
			if seen[f] {
				return contractErr("features", "feature %d: %q repeats an earlier name", i+1, f)
			}
			seen[f] = true
		}
	} else if len(c.Features) > 0 || c.Label != "" || c.ID != "" || len(c.Exclude) > 0 {
		return contractErr("features", "CSV columns in a %s contract", c.Format)
	}
	if c.Format == dataset.IDX {
		if !(c.Scale > 0) || math.IsInf(c.Scale, 0) {
			return contractErr("scale", "%v: want a positive finite divisor", c.Scale)
		}
		if c.Shape != nil && (len(c.Shape) != 2 || c.Shape[0] < 1 || c.Shape[1] < 1 || c.Shape[0]*c.Shape[1] != d) {
			return contractErr("shape", "%v: want rows and columns with rows·cols = d = %d", c.Shape, d)
		}
	} else if c.Scale != 0 || c.Shape != nil {
		return contractErr("scale", "an image scale or shape in a %s contract", c.Format)
	}
	if err := c.validateFeatureScale(d); err != nil {
		return err
	}
	switch {
	case kind == stream.KindRegression && len(c.Classes) > 0:
		return contractErr("classes", "a regression model has no classes")
	case kind == stream.KindLogistic && len(c.Classes) != 0 && len(c.Classes) != 2:
		return contractErr("classes", "%d labels: a binary model has two (negative, positive) or none", len(c.Classes))
	case kind == stream.KindMultinomial && len(c.Classes) != 0 && len(c.Classes) != k:
		return contractErr("classes", "%d labels: the multinomial model has k = %d classes", len(c.Classes), k)
	}
	for i := range c.Classes {
		for j := range i {
			if dataset.SameLabel(c.Classes[i], c.Classes[j]) {
				return contractErr("classes", "%q and %q are the same class", c.Classes[j], c.Classes[i])
			}
		}
	}
	return nil
}

// validateFeatureScale checks the declared feature scale: none for IDX;
// each entry a positive finite divisor or a finite range lo < hi, of a
// coordinate 1 … d in increasing order, named as the CSV's feature there
// (a LIBSVM feature is named by its index).
func (c *Contract) validateFeatureScale(d int) error {
	if len(c.FeatureScale) > 0 && c.Format == dataset.IDX {
		return contractErr("feature_scale", "a per-feature scale in an idx contract (its pixels have scale)")
	}
	for i, f := range c.FeatureScale {
		name := strconv.Itoa(f.Index)
		if c.Format == dataset.CSV && f.Index >= 1 && f.Index <= len(c.Features) {
			name = c.Features[f.Index-1]
		}
		switch {
		case f.Index < 1 || f.Index > d:
			return contractErr("feature_scale", "entry %d: coordinate %d outside 1…%d", i+1, f.Index, d)
		case i > 0 && f.Index <= c.FeatureScale[i-1].Index:
			return contractErr("feature_scale", "entry %d: coordinate %d after %d: want increasing coordinates", i+1, f.Index, c.FeatureScale[i-1].Index)
		case f.Feature != name:
			return contractErr("feature_scale", "entry %d: %q at coordinate %d, whose feature is %q", i+1, f.Feature, f.Index, name)
		case f.Divisor != 0 && f.Range != nil,
			f.Range == nil && !(f.Divisor > 0 && !math.IsInf(f.Divisor, 0)),
			f.Range != nil && (len(f.Range) != 2 || !(f.Range[0] < f.Range[1]) || math.IsInf(f.Range[1]-f.Range[0], 0)):
			return contractErr("feature_scale", "entry %d (%q): want a positive finite divisor or a finite range lo < hi", i+1, f.Feature)
		}
	}
	return nil
}

// CheckOptions say how far data may differ from a contract.
type CheckOptions struct {
	// ByPosition takes the data's features by position: another format,
	// other CSV column names or another image shape are accepted, as long
	// as d is the model's (which the caller checks). It is for a user who
	// knows the columns are the model's features under other names; the
	// classes and the IDX scale are compared all the same.
	ByPosition bool
	// Kind is the model's loss kind: the classes of a binary logistic
	// model are described with the labels they map to (−1, +1), a
	// multinomial model's by their order alone. Its zero value describes
	// two classes as a binary model's.
	Kind stream.Kind
	// Column, if not nil, returns the 1-based column of the data file
	// that holds the named feature (0 if none): a features mismatch then
	// names each column the data file's way, its number and header name
	// ("column 6 \"area\""). Nil names the data's feature columns by
	// their position among the features.
	Column func(name string) int
}

// Check compares the contract of data read into the model (data, from
// [ContractOf] of the data's stream header) with the model's, c: the
// format, the CSV feature columns (names and order), the classes and their
// order, the IDX scale and image shape. It returns a *MismatchError for
// the first field that differs (ErrMismatch), naming what the model expects
// and what the data has. data == nil (a stream that records no source)
// compares nothing: the caller checks the loss's kind, d and constants,
// and may say that nothing else could be.
func (c *Contract) Check(data *Contract, o CheckOptions) error {
	if data == nil {
		return nil
	}
	if !o.ByPosition {
		if c.Format != data.Format {
			return &MismatchError{Field: "format", Want: c.describeFormat(), Got: data.describeFormat()}
		}
		if c.Format == dataset.CSV && !slices.Equal(c.Features, data.Features) {
			return &MismatchError{Field: "features", Want: columns(c.Features), Got: columns(data.Features),
				Detail: featureDiff(c.Features, data.Features, o.Column)}
		}
		if c.Format == dataset.IDX && c.Shape != nil && data.Shape != nil && !slices.Equal(c.Shape, data.Shape) {
			return &MismatchError{Field: "shape", Want: shape(c.Shape), Got: shape(data.Shape)}
		}
	}
	if !sameClasses(c.Classes, data.Classes) {
		binary := o.Kind != stream.KindMultinomial
		return &MismatchError{Field: "classes", Want: classes(c.Classes, binary), Got: classes(data.Classes, binary)}
	}
	if !slices.EqualFunc(c.FeatureScale, data.FeatureScale, dataset.FeatureScale.Equal) {
		return &MismatchError{Field: "feature_scale", Want: featureScale(c.FeatureScale), Got: featureScale(data.FeatureScale)}
	}
	if c.Format == dataset.IDX && data.Format == dataset.IDX && c.Scale != data.Scale {
		return &MismatchError{Field: "scale", Want: "pixels divided by " + num(c.Scale), Got: "pixels divided by " + num(data.Scale)}
	}
	return nil
}

// featureScale describes a declared feature scale for a mismatch.
func featureScale(fs []dataset.FeatureScale) string {
	if len(fs) == 0 {
		return "no feature scale (values as they are)"
	}
	q := make([]string, len(fs))
	for i, f := range fs {
		q[i] = f.String()
	}
	if len(q) > 4 {
		q = append(q[:3], "…", q[len(q)-1])
	}
	return fmt.Sprintf("feature scale of %d features: %s", len(fs), strings.Join(q, ", "))
}

func sameClasses(a, b []string) bool {
	return slices.EqualFunc(a, b, dataset.SameLabel)
}

func (c *Contract) describeFormat() string {
	switch c.Format {
	case dataset.CSV:
		return "CSV data"
	case dataset.LIBSVM:
		return "LIBSVM data"
	case dataset.IDX:
		return "IDX images"
	}
	return fmt.Sprintf("%q data", c.Format)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func shape(s []int) string { return fmt.Sprintf("%d×%d images", s[0], s[1]) }

// classes describes a class list: "classes 0, 6 (0 → −1, 6 → +1)" for a
// binary model, "classes 0, 1, 2" (in class order) otherwise.
func classes(cs []string, binary bool) string {
	switch {
	case len(cs) == 0 && binary:
		return "no named classes (labels 0/1 or ±1)"
	case len(cs) == 0:
		return "no named classes (labels 0 … K−1)"
	case len(cs) == 2 && binary:
		return fmt.Sprintf("classes %s, %s (%s → −1, %s → +1)", quoteLabel(cs[0]), quoteLabel(cs[1]), quoteLabel(cs[0]), quoteLabel(cs[1]))
	}
	q := make([]string, len(cs))
	for i, c := range cs {
		q[i] = quoteLabel(c)
	}
	return "classes " + strings.Join(q, ", ")
}

// quoteLabel quotes a label that a reader could not tell apart otherwise.
func quoteLabel(s string) string {
	if s == "" || strings.ContainsAny(s, " ,\"") {
		return strconv.Quote(s)
	}
	return s
}

// columns describes a list of feature columns, eliding the middle of a
// long one.
func columns(names []string) string {
	const show = 8
	q := make([]string, 0, min(len(names), show+1))
	for i, n := range names {
		if len(names) > show && i == show-2 {
			q = append(q, "…")
			q = append(q, strconv.Quote(names[len(names)-1]))
			break
		}
		q = append(q, strconv.Quote(n))
	}
	return fmt.Sprintf("%d feature columns %s", len(names), strings.Join(q, ", "))
}

// featureDiff says where the data's feature columns first differ from the
// model's: a missing or extra column, a renamed one, or two swapped.
func featureDiff(want, got []string, column func(string) int) string {
	in := func(s []string, x string) bool { return slices.Contains(s, x) }
	// at names the data's feature column g the data file's way, its
	// column number and header name, when column says them.
	at := func(g string) (string, bool) {
		if column == nil {
			return "", false
		}
		n := column(g)
		return fmt.Sprintf("column %d %q", n, g), n > 0
	}
	for _, w := range want {
		if !in(got, w) {
			for i, g := range got {
				if i < len(want) && want[i] == w && !in(want, g) {
					if c, ok := at(g); ok {
						return fmt.Sprintf("%s is where the model has %q: renamed?", c, w)
					}
					return fmt.Sprintf("column %d is %q where the model has %q: renamed?", i+1, g, w)
				}
			}
			return fmt.Sprintf("the model's feature %q is missing", w)
		}
	}
	for _, g := range got {
		if !in(want, g) {
			if c, ok := at(g); ok {
				return fmt.Sprintf("%s is not a feature of the model: exclude it if it is not a feature", c)
			}
			return fmt.Sprintf("column %q is not a feature of the model: exclude it if it is not a feature", g)
		}
	}
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			if c, ok := at(got[i]); ok {
				return fmt.Sprintf("%s is where the model has %q: columns in another order", c, want[i])
			}
			return fmt.Sprintf("feature %d is %q, the model's is %q: columns in another order", i+1, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d columns, the model has %d: a name repeats", len(got), len(want))
}

// RawRowsOf returns the preprocessing that turns rows in the data's own
// units into the rows of the stream whose header is h — the contract's
// (an IDX image's pixels divided by its scale; a label in the data's class
// names mapped to y), with the code the data readers apply to a file
// (dataset.RawRows) — and the contract it follows (nil when h records
// none: the rows are then the stream's values and the labels its y, a
// binary model's classes "-1" and "1", a multinomial one's "0" … "K−1").
// A contract that cannot describe the header's model is an error
// (ErrContract).
func RawRowsOf(h stream.Header) (*dataset.RawRows, *Contract, error) {
	c, err := ContractOf(h)
	if err != nil {
		return nil, nil, err
	}
	var src *dataset.Source
	classes := unnamedClasses(h.Kind, h.K)
	if c != nil {
		if err := c.Validate(h.Kind, h.D, h.K); err != nil {
			return nil, nil, err
		}
		s, _, _, _ := dataset.SourceOf(h)
		src = &s
		if len(c.Classes) > 0 {
			classes = c.Classes
		}
	}
	r, err := dataset.NewRawRows(src, h.Kind, classes)
	if err != nil {
		return nil, nil, err
	}
	return r, c, nil
}
