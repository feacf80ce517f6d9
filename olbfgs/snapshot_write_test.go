package olbfgs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/stream"
)

// marshalSnapshotIndent is MarshalSnapshot as it was before WriteSnapshot
// streamed: json.MarshalIndent of the snapshot layout. WriteSnapshot must
// write the same bytes.
func marshalSnapshotIndent(l *Learner, h stream.Header) ([]byte, error) {
	hdr, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	s := snapshot{
		Format: snapshotFormat(l.cfg), Config: configJSON(l.cfg), T: l.t, Skipped: l.skipped, W: l.w,
		Memory: make([]snapshotPair, l.mem.Len()), Deleted: l.deleted, Stream: hdr,
	}
	if l.cfg.HasOptions() {
		o := &l.opt
		s.Inserts = &o.inserts
		if l.cfg.Standardize {
			s.Standardization = &snapshotStandardize{N: o.n, Mean: o.mean, M2: o.m2}
		}
		if l.cfg.Average {
			s.Average = &snapshotAverage{N: o.avgN, W: o.avg}
		}
		if l.cfg.Progress {
			p := o.prog
			s.Progress = &snapshotProgress{N: p.N, LossSum: p.LossSum, Correct: p.Correct, RecentLoss: p.RecentLoss,
				RecentZeroLoss: p.RecentZeroLoss, RecentAccuracy: p.RecentAccuracy,
				RecentPredicted: p.RecentPredicted, RecentLabels: p.RecentLabels}
			if s.Progress.RecentPredicted == nil {
				s.Progress.RecentPredicted, s.Progress.RecentLabels = []float64{}, []float64{}
			}
		}
	}
	if s.Deleted == nil {
		s.Deleted = []int64{}
	}
	for i := range s.Memory {
		s.Memory[i] = snapshotPair(l.mem.Pair(i))
	}
	out, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// requireSameAsIndent checks that MarshalSnapshot and WriteSnapshot (into
// a writer that takes a few bytes at a time) give json.MarshalIndent's
// bytes.
func requireSameAsIndent(t require.TestingT, l *Learner, h stream.Header) {
	want, err := marshalSnapshotIndent(l, h)
	require.NoError(t, err)
	got, err := MarshalSnapshot(l, h)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	var b bytes.Buffer
	require.NoError(t, WriteSnapshot(&shortWriter{w: &b}, l, h))
	require.Equal(t, string(want), b.String())
}

// shortWriter passes at most 7 bytes per Write call on to w (in a loop,
// so it is a correct io.Writer): a streaming writer must not depend on
// how its output is cut.
type shortWriter struct{ w *bytes.Buffer }

func (s *shortWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 7 {
		s.w.Write(p[i:min(i+7, len(p))])
	}
	return len(p), nil
}

func TestWriteSnapshotMatchesMarshalIndent(t *testing.T) {
	q, qh, qe := quadraticStream(t, 21, 4, 60)
	lg, lh, le := logisticStream(t, 21, 6, 60)
	require.NoError(t, qh.SetMeta("seed", 21))
	certifiable := DefaultConfig(6)
	certifiable.Radius, certifiable.SampleBound = 5, 3
	certifiable.PairAngle, certifiable.PairMin, certifiable.PairMax = 0.01, 0.01, 100

	sparseH := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 5000, Lambda: 0.05}
	sparseLoss, err := sparseH.Loss()
	require.NoError(t, err)
	gen := newSparseEvents(3, sparseH.D, 8)
	var sparse []stream.Event
	for range 40 {
		sparse = append(sparse, gen.next())
	}
	sparseCfg := DefaultConfig(sparseH.D)
	sparseCfg.Memory = 4
	practitioner := allOptions(DefaultConfig(6))
	sparsePractitioner := allOptions(sparseCfg)
	multi, mh, me := multinomialStream(t, 21, 5, 3, 60)

	for _, c := range []struct {
		name   string
		cfg    Config
		loss   stream.Loss
		h      stream.Header
		events []stream.Event
	}{
		{"quadratic", DefaultConfig(4), q, qh, append(qe, stream.DeleteEvent(3), stream.DeleteEvent(50))},
		{"quadratic-empty-memory", DefaultConfig(4), q, qh, nil},
		{"logistic", DefaultConfig(6), lg, lh, le},
		{"logistic-one-event", DefaultConfig(6), lg, lh, le[:1]},
		{"logistic-certifiable", certifiable, lg, lh, le},
		{"sparse-d5000", sparseCfg, sparseLoss, sparseH, append(sparse, stream.DeleteEvent(7))},
		{"sparse-empty-memory", sparseCfg, sparseLoss, sparseH, sparse[:0]},
		{"logistic-options", practitioner, lg, lh, le},
		{"logistic-options-empty", practitioner, lg, lh, nil},
		{"sparse-options", sparsePractitioner, sparseLoss, sparseH, append(sparse, stream.DeleteEvent(7))},
		{"multinomial", DefaultConfig(5).ForLoss(multi), multi, mh, me},
		{"multinomial-options", allOptions(DefaultConfig(5)).ForLoss(multi), multi, mh, me},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := mustReplay(t, c.cfg, c.loss, c.events)
			if len(c.events) == 0 {
				require.Zero(t, l.Memory().Len(), "the case must have an empty memory")
			} else if len(c.events) > 1 {
				require.NotZero(t, l.Memory().Len(), "the case must have pairs")
			}
			requireSameAsIndent(t, l, c.h)
		})
	}
}

// TestWriteSnapshotFloatForms sets w to numbers at encoding/json's
// boundaries between the 'f' and 'e' forms and the extremes of float64.
func TestWriteSnapshotFloatForms(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, -1e-6, math.Nextafter(1e-6, 0), 1e-7, 1.5e-7,
		1e20, 1e21, -1e21, math.Nextafter(1e21, 0), 123456789012345678, 1e100, 1e-100, 1e-300,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 1.0 / 3}
	lg, lh, _ := logisticStream(t, 2, len(special), 1)
	l, err := New(DefaultConfig(len(special)), lg)
	require.NoError(t, err)
	copy(l.w, special)
	requireSameAsIndent(t, l, lh)
}

// TestWriteSnapshotMatchesMarshalIndentRapid draws streams, sizes, memory
// sizes and deletions and checks the bytes against json.MarshalIndent.
func TestWriteSnapshotMatchesMarshalIndentRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		d := rapid.IntRange(1, 8).Draw(rt, "d")
		n := rapid.IntRange(0, 40).Draw(rt, "n")
		cfg := DefaultConfig(d)
		cfg.Memory = rapid.IntRange(1, 6).Draw(rt, "tau")
		var (
			loss   stream.Loss
			h      stream.Header
			events []stream.Event
		)
		if rapid.Bool().Draw(rt, "quadratic") {
			loss, h, events = quadraticStream(t, seed, d, n)
		} else {
			loss, h, events = logisticStream(t, seed, d, n)
		}
		for _, id := range rapid.SliceOfDistinct(rapid.Int64Range(1, int64(n)+1), func(v int64) int64 { return v }).Draw(rt, "deleted") {
			events = append(events, stream.DeleteEvent(id))
		}
		requireSameAsIndent(rt, mustReplay(rt, cfg, loss, events), h)
	})
}

func TestWriteSnapshotErrors(t *testing.T) {
	lg, lh, le := logisticStream(t, 4, 3, 20)
	l := mustReplay(t, DefaultConfig(3), lg, le)

	// A non-finite number is an error naming the field, as json.Marshal's
	// is an error.
	bad := l.Clone()
	bad.w[1] = math.Inf(1)
	_, err := marshalSnapshotIndent(bad, lh)
	require.Error(t, err)
	_, err = MarshalSnapshot(bad, lh)
	require.ErrorIs(t, err, ErrSnapshot)
	require.ErrorContains(t, err, `"w"`)

	// The writer's error is returned.
	errDisk := errors.New("disk full")
	err = WriteSnapshot(failWriter{errDisk}, l, lh)
	require.ErrorIs(t, err, errDisk)

	// A header for another learner is rejected before anything is written.
	var b bytes.Buffer
	err = WriteSnapshot(&b, l, stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 4, Lambda: 0.05})
	require.ErrorIs(t, err, ErrSnapshot)
	require.Zero(t, b.Len())
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// BenchmarkSnapshot encodes a full-memory sparse logistic state at
// d = 10⁵, τ = 10 (the state of train --data after the memory filled; its
// document is 14.8 MB here) with json.MarshalIndent as
// MarshalSnapshot did before, and with WriteSnapshot to io.Discard: B/op
// is what the encoding allocates beyond the state.
//
//	go test ./olbfgs -run '^$' -bench Snapshot -benchtime 5x
func BenchmarkSnapshot(b *testing.B) {
	const d, tau = 100000, 10
	loss, err := stream.NewLogistic(d, 0.05)
	if err != nil {
		b.Fatal(err)
	}
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: 0.05}
	cfg := DefaultConfig(d)
	cfg.Memory = tau
	l, err := New(cfg, loss)
	if err != nil {
		b.Fatal(err)
	}
	gen := newSparseEvents(1, d, 20)
	for range 4 * tau {
		if err := l.Step(gen.next()); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("MarshalIndent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := marshalSnapshotIndent(l, h)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
		}
	})
	b.Run("WriteSnapshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var n countWriter
			if err := WriteSnapshot(&n, l, h); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n))
		}
	})
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
