package dataset

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"unlearn/stream"
)

// labeler turns label cells into the stream's scalar payload y.
type labeler struct {
	kind    stream.Kind
	classes []string
	// seenZero and seenMinus record which negative label a logistic file
	// without Classes uses: 0 (0/1 labels) or −1 (±1 labels).
	seenZero, seenMinus bool
	// unlabeled: Options.Unlabeled (no label is read).
	unlabeled bool
	// collect, if not nil, makes label record every label it sees (keeping
	// every row): the pass that resolves Classes = all.
	collect *labelSet
}

// newLabeler returns the labeler of the options (Classes resolved).
func newLabeler(o Options) labeler {
	return labeler{kind: o.kind(), classes: o.Classes, unlabeled: o.Unlabeled}
}

// label returns y for the label cell s, and keep = false for a row of a
// class that Classes does not select. Errors wrap ErrValue or ErrLabel.
func (l *labeler) label(s string) (y float64, keep bool, err error) {
	if l.unlabeled {
		return placeholderLabel(l.kind), true, nil
	}
	s = strings.TrimSpace(s)
	if l.collect != nil {
		if s == "" {
			return 0, false, fmt.Errorf("empty label: %w", ErrValue)
		}
		l.collect.add(s)
		return 0, true, nil
	}
	if l.kind == stream.KindRegression {
		v, err := parseNumber(s)
		if err != nil {
			return 0, false, fmt.Errorf("target: %w", err)
		}
		return v, true, nil
	}
	if l.kind == stream.KindMultinomial {
		for k, c := range l.classes {
			if SameLabel(s, c) {
				return float64(k), true, nil
			}
		}
		if s == "" {
			return 0, false, fmt.Errorf("empty label: %w", ErrValue)
		}
		return 0, false, nil
	}
	if len(l.classes) == 2 {
		switch {
		case SameLabel(s, l.classes[0]):
			return -1, true, nil
		case SameLabel(s, l.classes[1]):
			return 1, true, nil
		}
		if s == "" {
			return 0, false, fmt.Errorf("empty label: %w", ErrValue)
		}
		return 0, false, nil
	}
	v, err := parseNumber(s)
	if err != nil {
		return 0, false, fmt.Errorf("label: %w", err)
	}
	switch v {
	case 1:
		return 1, true, nil
	case 0:
		if l.seenMinus {
			return 0, false, fmt.Errorf("label 0 in a file whose earlier labels include -1 (0/1 and ±1 mixed): %w", ErrLabel)
		}
		l.seenZero = true
		return -1, true, nil
	case -1:
		if l.seenZero {
			return 0, false, fmt.Errorf("label -1 in a file whose earlier labels include 0 (0/1 and ±1 mixed): %w", ErrLabel)
		}
		l.seenMinus = true
		return -1, true, nil
	}
	return 0, false, fmt.Errorf("label %s: want 0/1 or -1/+1 for a logistic stream (select two classes with Classes, or use a regression stream): %w", s, ErrLabel)
}

// SameLabel reports whether two class labels name the same class: compared
// as numbers when both parse as numbers (so "1.0" is class "1"), else as
// strings, surrounding spaces ignored. It is how Options.Classes selects
// rows, and how a model's classes are compared with the data's.
func SameLabel(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		return x == y
	}
	return a == b
}

// parseNumber parses a finite float64 from a cell (surrounding spaces
// allowed). Errors wrap ErrValue and say why: empty, not a number, not
// finite, or out of the float64 range.
func parseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty cell: %w", ErrValue)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		// s must not escape (the readers pass cells converted from bytes,
		// which then need no allocation): messages use a copy.
		return 0, numberError(strings.Clone(s), v, err)
	}
	return v, nil
}

func numberError(s string, v float64, err error) error {
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && math.IsInf(v, 0) {
			return fmt.Errorf("%q overflows float64: %w", s, ErrValue)
		}
		return fmt.Errorf("%q is not a number: %w", s, ErrValue)
	}
	return fmt.Errorf("%q is not finite: %w", s, ErrValue)
}

// AllClasses is the Options.Classes value ["all"] that selects every label
// of the file for a multinomial stream.
const AllClasses = "all"

// labelSet collects the distinct labels of a file, numbers compared as
// numbers (SameLabel).
type labelSet struct {
	nums map[float64]string // a numeric label's value → its first spelling
	strs map[string]bool
}

func (s *labelSet) add(label string) {
	if v, err := strconv.ParseFloat(label, 64); err == nil {
		if s.nums == nil {
			s.nums = map[float64]string{}
		}
		if _, ok := s.nums[v]; !ok {
			s.nums[v] = label
		}
		return
	}
	if s.strs == nil {
		s.strs = map[string]bool{}
	}
	s.strs[label] = true
}

// sorted returns the labels in class order: the numeric ones by value,
// then the others in byte order.
func (s *labelSet) sorted() []string {
	var vals []float64
	for v := range s.nums {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	out := make([]string, 0, len(vals)+len(s.strs))
	for _, v := range vals {
		out = append(out, s.nums[v])
	}
	var strs []string
	for v := range s.strs {
		strs = append(strs, v)
	}
	slices.Sort(strs)
	return append(out, strs...)
}
