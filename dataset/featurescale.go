package dataset

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"unlearn/internal/strictjson"
)

// FeatureScale declares how the raw values of one feature of a CSV or
// LIBSVM file map onto the stream's: divided by Divisor, or, with a Range
// [lo, hi], mapped onto [0, 1] as (v − lo)/(hi − lo). It is written by the
// user from the data's documentation (a feature's unit, its documented
// maximum or range), never computed from the rows, so that it is a public
// fact: a model's data contract records it, and every reader of rows into
// the model applies it with the same code (Reader.Next, RawRows.Features).
//
// A value outside a declared range is refused (ErrValue, naming the line
// and the feature), not clipped: the declaration or the row is wrong, and a
// row silently moved onto the range would be another row than the one the
// user sent. A divisor bounds nothing; the certifiable profile's sample
// bound is kept by its own clip of each row onto ‖x‖ ≤ B
// (olbfgs.Config.ClipToBound), applied after the scale.
type FeatureScale struct {
	// Feature names the feature: a CSV feature column's header name (its
	// 1-based column index with Options.NoHeader), a LIBSVM index ("1" … "d").
	Feature string `json:"feature"`
	// Index is the feature's 1-based coordinate in the stream's x, set
	// when a reader resolves the name (Open); 0 in a declaration.
	Index int `json:"index,omitempty"`
	// Divisor divides the value (positive, finite); zero when Range is set.
	Divisor float64 `json:"divisor,omitempty"`
	// Range is [lo, hi], lo < hi, both finite; empty when Divisor is set.
	Range []float64 `json:"range,omitempty"`
}

// check reports whether f declares exactly one of a positive finite
// divisor and a finite range lo < hi whose width is finite.
func (f FeatureScale) check() error {
	switch {
	case strings.TrimSpace(f.Feature) == "":
		return fmt.Errorf("a feature without a name")
	case f.Divisor != 0 && f.Range != nil:
		return fmt.Errorf("feature %q: a divisor and a range: give one", f.Feature)
	case f.Range == nil && !(f.Divisor > 0 && !math.IsInf(f.Divisor, 0)):
		return fmt.Errorf("feature %q: divisor %v: want a positive finite number", f.Feature, f.Divisor)
	case f.Range == nil && math.IsInf(1/f.Divisor, 0):
		return fmt.Errorf("feature %q: divisor %v: too small (1/divisor overflows): want at least %v", f.Feature, f.Divisor, 1/math.MaxFloat64)
	case f.Range != nil && len(f.Range) != 2:
		return fmt.Errorf("feature %q: range of %d numbers: want [lo, hi]", f.Feature, len(f.Range))
	case f.Range != nil && !(f.Range[0] < f.Range[1] && !math.IsInf(f.Range[1]-f.Range[0], 0)):
		return fmt.Errorf("feature %q: range [%v, %v]: want finite lo < hi", f.Feature, f.Range[0], f.Range[1])
	}
	return nil
}

// Equal reports whether f and g declare the same map of the same feature.
func (f FeatureScale) Equal(g FeatureScale) bool {
	return f.Feature == g.Feature && f.Index == g.Index && f.Divisor == g.Divisor && slices.Equal(f.Range, g.Range)
}

// String describes the map: "area / 2600", "age in [18, 90]".
func (f FeatureScale) String() string {
	if f.Range != nil {
		return fmt.Sprintf("%q in [%s, %s]", f.Feature, fnum(f.Range[0]), fnum(f.Range[1]))
	}
	return fmt.Sprintf("%q / %s", f.Feature, fnum(f.Divisor))
}

func fnum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// ReadFeatureScale reads a feature scale declaration: a JSON object of
// feature name → divisor (a number) or range ([lo, hi]), or a CSV file of
// rows "name,divisor" or "name,lo,hi" (a first row whose second field is
// not a number is a header and skipped). Features it does not name are
// taken as they are. Errors name the file and the feature or line.
func ReadFeatureScale(path string) ([]FeatureScale, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fs []FeatureScale
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		fs, err = featureScaleJSON(t)
	} else {
		fs, err = featureScaleCSV(b)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(fs) == 0 {
		return nil, fmt.Errorf("%s: declares no feature", path)
	}
	for i, f := range fs {
		if err := f.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, g := range fs[:i] {
			if g.Feature == f.Feature {
				return nil, fmt.Errorf("%s: feature %q is declared twice", path, f.Feature)
			}
		}
	}
	return fs, nil
}

func featureScaleJSON(b []byte) ([]FeatureScale, error) {
	// The toolkit's strict grammar: a feature named twice, trailing data
	// or a byte-order mark is refused, as in every other JSON it reads.
	var m map[string]json.RawMessage
	if err := strictjson.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("want a JSON object of feature name → divisor or [lo, hi]: %v", err)
	}
	fs := make([]FeatureScale, 0, len(m))
	for name, raw := range m {
		f := FeatureScale{Feature: name}
		if json.Unmarshal(raw, &f.Divisor) != nil {
			if err := json.Unmarshal(raw, &f.Range); err != nil || f.Range == nil {
				return nil, fmt.Errorf("feature %q: %s: want a divisor or [lo, hi]", name, raw)
			}
		}
		fs = append(fs, f)
	}
	slices.SortFunc(fs, func(a, b FeatureScale) int { return strings.Compare(a.Feature, b.Feature) })
	return fs, nil
}

func featureScaleCSV(b []byte) ([]FeatureScale, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	r.Comment = '#'
	var fs []FeatureScale
	for n := 1; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			return fs, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := r.FieldPos(0)
		if len(rec) != 2 && len(rec) != 3 {
			return nil, fmt.Errorf("line %d: %d fields: want name,divisor or name,lo,hi", line, len(rec))
		}
		v := make([]float64, len(rec)-1)
		bad := false
		for i, s := range rec[1:] {
			if v[i], err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
				bad = true
			}
		}
		if bad {
			if n == 1 {
				continue // a header row
			}
			return nil, fmt.Errorf("line %d: %q: want numbers after the feature name", line, strings.Join(rec[1:], ","))
		}
		f := FeatureScale{Feature: strings.TrimSpace(rec[0])}
		if len(v) == 1 {
			f.Divisor = v[0]
		} else {
			f.Range = v
		}
		fs = append(fs, f)
	}
}

// resolveFeatureScale returns the declaration fs with each feature's
// 1-based coordinate among names (the CSV's feature columns, a LIBSVM
// file's indices "1" … "d"), in coordinate order. A name that is not a
// feature is an error naming the features.
func resolveFeatureScale(fs []FeatureScale, names []string) ([]FeatureScale, error) {
	out := make([]FeatureScale, len(fs))
	for i, f := range fs {
		if err := f.check(); err != nil {
			return nil, optErr("FeatureScale", "%v", err)
		}
		j := slices.Index(names, f.Feature)
		if j < 0 {
			return nil, optErr("FeatureScale", "%q is not a feature of the data (its features: %s)", f.Feature, nameList(names))
		}
		if f.Index != 0 && f.Index != j+1 {
			return nil, optErr("FeatureScale", "%q is feature %d of the data, not %d", f.Feature, j+1, f.Index)
		}
		f.Index = j + 1
		out[i] = f
	}
	slices.SortFunc(out, func(a, b FeatureScale) int { return a.Index - b.Index })
	for i := 1; i < len(out); i++ {
		if out[i].Index == out[i-1].Index {
			return nil, optErr("FeatureScale", "feature %q is declared twice", out[i].Feature)
		}
	}
	return out, nil
}

func nameList(names []string) string {
	if len(names) > 6 {
		return strings.Join(names[:5], ", ") + ", …, " + names[len(names)-1]
	}
	return strings.Join(names, ", ")
}

// indexNames returns "1" … "d": the names of a LIBSVM file's features.
func indexNames(d int) []string {
	n := make([]string, d)
	for i := range n {
		n[i] = strconv.Itoa(i + 1)
	}
	return n
}

// scaleFeatures applies a resolved feature scale (coordinate order) to a
// payload, in place: dense x (idx nil) or sparse (x[k] is coordinate
// idx[k]; a range is refused for sparse reads, so absent entries stay 0).
// A value outside a declared range is an error naming the feature
// (ErrValue); x is then unchanged.
func scaleFeatures(fs []FeatureScale, x []float64, idx []int32) error {
	for pass := range 2 {
		k := 0
		for _, f := range fs {
			j := f.Index - 1
			if idx != nil {
				for k < len(idx) && int(idx[k]) < j {
					k++
				}
				if k == len(idx) || int(idx[k]) != j {
					continue
				}
				j = k
			} else if j >= len(x) {
				return fmt.Errorf("feature %q is coordinate %d of %d: %w", f.Feature, f.Index, len(x), ErrValue)
			}
			v := x[j]
			if pass == 0 {
				if f.Range != nil && !(v >= f.Range[0] && v <= f.Range[1]) {
					return fmt.Errorf("feature %q is %v, outside its declared range [%s, %s]: %w", f.Feature, v, fnum(f.Range[0]), fnum(f.Range[1]), ErrValue)
				}
				if f.Range == nil && math.IsInf(v/f.Divisor, 0) {
					return fmt.Errorf("feature %q is %v: divided by its declared divisor %s it overflows: %w", f.Feature, v, fnum(f.Divisor), ErrValue)
				}
				continue
			}
			if f.Range != nil {
				x[j] = (v - f.Range[0]) / (f.Range[1] - f.Range[0])
			} else {
				x[j] = v / f.Divisor
			}
		}
	}
	return nil
}
