package stream

import (
	"fmt"
	"math"
	"strconv"
)

// IsSparse reports whether the payload is sparse (Idx is set).
func (z Sample) IsSparse() bool { return z.Idx != nil }

// FitsDim reports whether the payload's vector has dimension d: len(V) = d
// for a dense payload; for a sparse one, as many values as indices and the
// last (largest) index below d. It is the O(1) check of the learner; the
// full check (indices strictly increasing, values finite) is the loss's
// CheckSample.
func (z Sample) FitsDim(d int) bool {
	if z.Idx == nil {
		return len(z.V) == d
	}
	n := len(z.Idx)
	return len(z.V) == n && (n == 0 || (z.Idx[0] >= 0 && int(z.Idx[n-1]) < d))
}

// Dense returns the payload's vector as a dense d-vector: V itself for a
// dense payload, a new vector with V scattered at Idx for a sparse one.
func (z Sample) Dense(d int) []float64 {
	if z.Idx == nil {
		return z.V
	}
	out := make([]float64, d)
	for k, j := range z.Idx {
		out[j] = z.V[k]
	}
	return out
}

// SparseSample returns the sparse payload (values v at the 0-based indices
// idx, every other entry zero) with scalar s. The slices are not copied.
func SparseSample(idx []int32, v []float64, s float64) Sample {
	if idx == nil {
		idx = []int32{}
	}
	return Sample{V: v, S: s, Idx: idx}
}

// checkSparse checks a sparse payload of dimension d: as many values as
// indices, indices strictly increasing in [0, d), values finite. field is
// the name of the index field for index errors, "" for value errors.
func checkSparse(z Sample, d int) (indexField bool, err error) {
	if len(z.Idx) != len(z.V) {
		return true, fmt.Errorf("%d indices for %d values: %w", len(z.Idx), len(z.V), ErrDimension)
	}
	prev := int32(-1)
	for k, j := range z.Idx {
		switch {
		case j < 0 || int(j) >= d:
			return true, fmt.Errorf("index %d = %d outside [0, d = %d): %w", k, j, d, ErrDimension)
		case j <= prev:
			return true, fmt.Errorf("index %d = %d after %d: indices must increase strictly: %w", k, j, prev, ErrInvalidValue)
		}
		prev = j
		if x := z.V[k]; math.IsNaN(x) || math.IsInf(x, 0) {
			return false, fmt.Errorf("entry %d = %v: %w", k, x, ErrNonFinite)
		}
	}
	return false, nil
}

// checkPayload checks a payload of a loss that accepts sparse vectors,
// returning the offending field's name: vec for values, vec+"_index" for
// indices.
func checkPayload(z Sample, d int, vec string) (string, error) {
	if z.Idx == nil {
		if err := checkVector(z.V, d); err != nil {
			return vec, err
		}
		return "", nil
	}
	if idx, err := checkSparse(z, d); err != nil {
		if idx {
			return vec + indexSuffix, err
		}
		return vec, err
	}
	return "", nil
}

// indexSuffix makes the name of a sparse payload's index field from its
// vector field's: "x" and "x_index".
const indexSuffix = "_index"

// sparseDot returns Σ_k v[k]·w[idx[k]] in increasing k, each product
// rounded before it is added: the dense sum's nonzero terms in the same
// order.
func sparseDot(idx []int32, v, w []float64) float64 {
	var m float64
	for k, j := range idx {
		m += float64(v[k] * w[j])
	}
	return m
}

// indices consumes an array of integer literals in the int32 range,
// appending them to dst.
func (s *scanner) indices(dst []int32) ([]int32, error) {
	if err := s.expect('['); err != nil {
		return nil, err
	}
	if s.peek() == ']' {
		s.i++
		return dst, nil
	}
	for {
		start := s.i
		v, err := s.int64()
		if err != nil {
			return nil, err
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			s.i = start
			return nil, s.fail(ErrInvalidValue, "index %d out of range", v)
		}
		dst = append(dst, int32(v))
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return dst, nil
		default:
			return nil, s.fail(ErrFormat, "want ',' or ']', found %s", s.describe())
		}
	}
}

// appendInts appends idx as a JSON array.
func appendInts(b []byte, idx []int32) []byte {
	b = append(b, '[')
	for i, j := range idx {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(j), 10)
	}
	return append(b, ']')
}

// hasIndex is the presence bit of a sparse payload's index field in
// parseEvent (after the bits of format.go).
const hasIndex = hasScalar << 1

// sparseName returns the name of the index field of kind's sparse
// payloads ("x_index"), or "" if the kind has none.
func sparseName(kind Kind) string {
	spec, ok := LookupLoss(kind)
	if !ok || !spec.Sparse {
		return ""
	}
	return spec.Vector + indexSuffix
}
