package store

import (
	"encoding/binary"
	"fmt"
	"math"

	"unlearn/stream"
)

// The log stores each insert's sample as a BLOB in one of two encodings,
// whichever is shorter (encodePayload):
//
//   - dense: S, then V[0..d), each a float64 little-endian: 8·(1+d) bytes;
//   - sparse: the tag byte 'S', S as a float64 little-endian, then one
//     12-byte entry per component whose bits are not all zero — its index
//     as a uint32 little-endian and its value as a float64 little-endian —
//     in increasing index order: 9 + 12·nnz bytes.
//
// A dense blob's length is a multiple of 8 and a sparse blob's is 1 or 5
// modulo 8, so the length alone tells them apart (the tag is checked too),
// and stores written before the sparse encoding (schema version 4 and
// earlier, every blob dense) read unchanged. A component is left out of the
// sparse form only when it is +0.0 (all bits zero): −0.0, subnormals and
// every other value are stored, so decoding gives V back bit for bit — the
// dense d-vector the learner stepped (IngestEvents densifies sparse
// samples), and the replay of an exact forget repeats that step exactly.
const (
	sparseTag       = 'S'
	sparseHeadBytes = 9  // tag and S
	sparseEntry     = 12 // uint32 index, float64 value
)

// encodePayload returns the stored bytes of a dense sample (len(z.V) = d):
// the sparse encoding when it is shorter than the dense one, else the
// dense one. A sparse sample must be densified first (IngestEvents does):
// Idx is not read.
func encodePayload(z stream.Sample) []byte {
	nnz := 0
	for _, v := range z.V {
		if math.Float64bits(v) != 0 {
			nnz++
		}
	}
	d := len(z.V)
	if sparseHeadBytes+sparseEntry*nnz >= 8*(1+d) || d > math.MaxUint32 {
		b := make([]byte, 8*(1+d))
		binary.LittleEndian.PutUint64(b, math.Float64bits(z.S))
		for i, v := range z.V {
			binary.LittleEndian.PutUint64(b[8*(i+1):], math.Float64bits(v))
		}
		return b
	}
	b := make([]byte, sparseHeadBytes, sparseHeadBytes+sparseEntry*nnz)
	b[0] = sparseTag
	binary.LittleEndian.PutUint64(b[1:], math.Float64bits(z.S))
	for i, v := range z.V {
		if bits := math.Float64bits(v); bits != 0 {
			b = binary.LittleEndian.AppendUint32(b, uint32(i))
			b = binary.LittleEndian.AppendUint64(b, bits)
		}
	}
	return b
}

// decodePayload is the inverse of encodePayload for dimension d.
func decodePayload(b []byte, d int) (stream.Sample, error) {
	z := stream.Sample{V: make([]float64, d)}
	var s [1]float64
	if err := decodePayloadInto(s[:], z.V, b); err != nil {
		return stream.Sample{}, err
	}
	z.S = s[0]
	return z, nil
}

// decodePayloadInto decodes an encodePayload blob into s[0] and v without
// allocating; len(v) is the dimension. A blob that is neither encoding for
// this dimension — a wrong length, a bad tag, an index out of range or out
// of order — is an ErrInconsistent error, never a panic.
func decodePayloadInto(s, v []float64, b []byte) error {
	d := len(v)
	if len(b) == 8*(1+d) {
		s[0] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return nil
	}
	if len(b) < sparseHeadBytes || (len(b)-sparseHeadBytes)%sparseEntry != 0 {
		return fmt.Errorf("%w: payload of %d bytes: neither dense (%d bytes at d = %d) nor sparse (9 + 12·nnz)", ErrInconsistent, len(b), 8*(1+d), d)
	}
	if b[0] != sparseTag {
		return fmt.Errorf("%w: payload of %d bytes with tag %#x, want %#x (sparse)", ErrInconsistent, len(b), b[0], sparseTag)
	}
	s[0] = math.Float64frombits(binary.LittleEndian.Uint64(b[1:]))
	clear(v)
	prev := int64(-1)
	for e := b[sparseHeadBytes:]; len(e) > 0; e = e[sparseEntry:] {
		j := int64(binary.LittleEndian.Uint32(e))
		if j <= prev || j >= int64(d) {
			return fmt.Errorf("%w: sparse payload: index %d after %d (want increasing indices below d = %d)", ErrInconsistent, j, prev, d)
		}
		bits := binary.LittleEndian.Uint64(e[4:])
		if bits == 0 {
			return fmt.Errorf("%w: sparse payload: index %d stores +0 (left out of the encoding)", ErrInconsistent, j)
		}
		v[j] = math.Float64frombits(bits)
		prev = j
	}
	return nil
}
