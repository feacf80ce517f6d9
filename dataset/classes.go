package dataset

import (
	"io"

	"unlearn/stream"
)

// ClassCounts reads the data file path with options o, as a reader opened
// with them would return its events, and returns the number of rows of
// each class, in the order of the model's outputs: for a logistic stream
// the class mapped to y = −1, then +1; for a multinomial one class 0, 1,
// …, K−1. It returns nil for a regression stream.
func ClassCounts(path string, o Options) ([]int, error) {
	hdr, r, err := Open(path, o)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var counts []int
	switch hdr.Kind {
	case stream.KindLogistic:
		counts = make([]int, 2)
	case stream.KindMultinomial:
		counts = make([]int, hdr.K)
	default:
		return nil, nil
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return counts, nil
		}
		if err != nil {
			return nil, err
		}
		countClass(counts, hdr.Kind, e.Sample.S)
	}
}

// countClass adds an event of label s, of a stream of kind, to counts (as
// ClassCounts does).
func countClass(counts []int, kind stream.Kind, s float64) {
	k := int(s)
	if kind == stream.KindLogistic {
		k = 0
		if s > 0 {
			k = 1
		}
	}
	if k >= 0 && k < len(counts) {
		counts[k]++
	}
}

// CountClasses returns the number of events of each class among events of
// a stream of kind with k classes (k is ignored for a logistic stream),
// as ClassCounts does for a file; nil for regression.
func CountClasses(events []stream.Event, kind stream.Kind, k int) []int {
	var counts []int
	switch kind {
	case stream.KindLogistic:
		counts = make([]int, 2)
	case stream.KindMultinomial:
		counts = make([]int, k)
	default:
		return nil
	}
	for _, e := range events {
		if e.Op == stream.Insert {
			countClass(counts, kind, e.Sample.S)
		}
	}
	return counts
}
