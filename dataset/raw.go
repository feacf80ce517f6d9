package dataset

import (
	"fmt"
	"math"
	"strings"

	"unlearn/stream"
)

// RawRows applies a data source's preprocessing to rows and labels given in
// the data's own units — the values a CSV or LIBSVM file holds, an IDX
// image's pixels 0…255, the labels in the data's class names — with the
// code the readers apply to a file's rows: an IDX image's pixels divided by
// the scale (scalePixels), a label mapped to the stream's y by the labeler
// of the classes. It is how rows that do not come from a file (a service's
// request) become the same events a file's rows would. A RawRows is safe
// for concurrent use.
type RawRows struct {
	format  Format // "" for a stream that records no source: values as given
	scale   float64
	kind    stream.Kind
	classes []string
	fscale  []FeatureScale // a CSV or LIBSVM source's declared feature scale
}

// NewRawRows returns the preprocessing of a data source (from [SourceOf];
// nil for a stream that records none, whose rows and labels are the
// stream's own values) for a stream of kind whose classes — in the data's
// names, in the order of the model's outputs — are classes: a binary
// logistic stream's two (the one mapped to y = −1, then +1; "-1" and "1"
// when the source names none), a multinomial one's K (y = 0 … K−1), none
// for the other kinds, whose labels are numbers.
func NewRawRows(src *Source, kind stream.Kind, classes []string) (*RawRows, error) {
	r := &RawRows{kind: kind, classes: classes}
	switch kind {
	case stream.KindLogistic:
		if len(classes) != 2 {
			return nil, fmt.Errorf("dataset: a binary logistic stream has 2 classes, not %d", len(classes))
		}
	case stream.KindMultinomial:
		if len(classes) < 2 {
			return nil, fmt.Errorf("dataset: a multinomial stream has at least 2 classes, not %d", len(classes))
		}
	default:
		r.classes = nil
	}
	if src != nil {
		r.format = src.Format
		r.fscale = src.FeatureScale
		if src.Format == IDX {
			r.scale = src.Scale
			if r.scale == 0 {
				r.scale = DefaultIDXScale
			}
		}
	}
	return r, nil
}

// Classes returns the class names a label may take, in the order of the
// model's outputs (nil when labels are numbers).
func (r *RawRows) Classes() []string { return r.classes }

// Features turns a row of raw values into the stream's feature vector, in
// place, as the reader of the source's format does: an IDX image's pixels,
// each an integer 0…255 (a byte of the file), are divided by the scale; a
// CSV's or a LIBSVM file's values are taken as they are. A value that the
// format cannot hold (a pixel that is not a byte) is an error naming its
// 0-based index (errors.Is ErrValue); x is then unchanged. A CSV's or
// LIBSVM file's declared feature scale (Source.FeatureScale) is applied as
// the reader applies it: each declared feature divided by its divisor or
// mapped from its range onto [0, 1], a value outside the range refused
// (ErrValue, naming the feature).
func (r *RawRows) Features(x []float64) error {
	if r.format != IDX {
		if len(r.fscale) == 0 {
			return nil
		}
		if err := scaleFeatures(r.fscale, x, nil); err != nil {
			return &rawError{msg: strings.TrimSuffix(err.Error(), ": "+ErrValue.Error()), err: ErrValue}
		}
		return nil
	}
	for j, p := range x {
		if !(p >= 0 && p <= 255) || p != math.Trunc(p) {
			return &PixelError{Index: j, Value: p, Scale: r.scale}
		}
	}
	scalePixels(x, r.scale)
	return nil
}

// Label returns the stream's y of a label cell s — a class name (numbers
// compared as numbers: "6.0" is class "6"), or for a stream without
// classes a finite number — as the reader maps a file's label column. A
// label that is not one of the classes is an error naming them (errors.Is
// ErrLabel); one that is empty or not a number where a number is wanted,
// ErrValue.
func (r *RawRows) Label(s string) (float64, error) {
	var y float64
	var err error
	keep := true
	if r.classes == nil {
		y, err = parseNumber(s)
	} else {
		l := labeler{kind: r.kind, classes: r.classes}
		y, keep, err = l.label(s)
	}
	switch {
	case err != nil:
		return 0, &rawError{msg: strings.TrimSuffix(err.Error(), ": "+ErrValue.Error()), err: err}
	case !keep:
		return 0, rawErr(ErrLabel, "%q is not a class of the model: want %s", strings.TrimSpace(s), classList(r.classes))
	}
	return y, nil
}

// A PixelError is a value of an IDX image's row that is not a raw pixel,
// an integer 0…255 (RawRows.Features); errors.Is(err, ErrValue).
type PixelError struct {
	// Index is the value's position in the row, from 0.
	Index int
	Value float64
	// Scale is what the pixels are divided by (Options.Scale).
	Scale float64
}

func (e *PixelError) Error() string {
	return fmt.Sprintf("value %d is %v: %s", e.Index, e.Value, e.Reason())
}

// Reason says what a pixel must be, without naming the value.
func (e *PixelError) Reason() string {
	return fmt.Sprintf("an IDX pixel is an integer 0…255 (send the image's raw pixels; they are divided by the scale %v)", e.Scale)
}

func (e *PixelError) Unwrap() error { return ErrValue }

// rawError is an error of RawRows: its message in the user's words alone,
// wrapping the sentinel (ErrValue, ErrLabel) for errors.Is.
type rawError struct {
	msg string
	err error
}

func (e *rawError) Error() string { return e.msg }
func (e *rawError) Unwrap() error { return e.err }

func rawErr(sentinel error, format string, args ...any) error {
	return &rawError{msg: fmt.Sprintf(format, args...), err: sentinel}
}

// classList names classes for an error: "0 or 6", "cat, dog or eel".
func classList(cs []string) string {
	q := make([]string, len(cs))
	for i, c := range cs {
		q[i] = fmt.Sprintf("%q", c)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// scalePixels divides an image's pixel values by scale, in place: the IDX
// reader's preprocessing (Options.Scale).
func scalePixels(x []float64, scale float64) {
	for j := range x {
		x[j] /= scale
	}
}
