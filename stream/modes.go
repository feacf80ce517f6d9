package stream

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"
)

// Mode is a deletion mode of spec §4: the rule that chooses the deletion
// set U from the inserts of a prefix e_1..e_{t_del}. The zero Mode is
// invalid.
type Mode uint8

const (
	// Recent chooses the |U| latest inserts.
	Recent Mode = iota + 1
	// Old chooses the |U| earliest inserts.
	Old
	// Random chooses |U| inserts uniformly at random without replacement
	// (seeded).
	Random
	// HighGradient chooses the |U| inserts z with the largest ‖∇ℓ_z(w)‖ at
	// the actual parameters w at deletion time, ties broken by smaller id.
	HighGradient
)

// DefaultDeletionCount is the paper's deletion size |U| = 5 (Table 1).
const DefaultDeletionCount = 5

// ModeStream is the second (stream-selection) word of the PCG source of the
// Random mode: rand.NewPCG(seed, ModeStream). It is the ASCII of "olbfgs-u",
// fixed once, since it fixes every random deletion set.
const ModeStream uint64 = 0x6f6c626667732d75

var modeNames = [...]string{Recent: "recent", Old: "old", Random: "random", HighGradient: "high-gradient"}

// Modes returns the four deletion modes in the order of spec §4.
func Modes() []Mode { return []Mode{Recent, Old, Random, HighGradient} }

// String returns the mode's name: "recent", "old", "random" or
// "high-gradient" (or "Mode(n)" for an invalid mode).
func (m Mode) String() string {
	if m >= Recent && m <= HighGradient {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode returns the mode named s, one of "recent", "old", "random" and
// "high-gradient" (exact, lower case). Other names are an error wrapping
// ErrInvalidValue.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if modeNames[m] == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("stream: unknown deletion mode %q (want %s): %w", s, modeList(), ErrInvalidValue)
}

func modeList() string {
	names := make([]string, 0, 4)
	for _, m := range Modes() {
		names = append(names, modeNames[m])
	}
	return strings.Join(names, ", ")
}

// MarshalText returns the mode's name; an invalid mode is an error.
func (m Mode) MarshalText() ([]byte, error) {
	if m < Recent || m > HighGradient {
		return nil, fmt.Errorf("stream: invalid deletion mode %d: %w", uint8(m), ErrInvalidValue)
	}
	return []byte(modeNames[m]), nil
}

// UnmarshalText parses a mode name as [ParseMode] does, so a Mode works with
// flag.TextVar and encoding/json.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ChooseOptions are the inputs of [ChooseDeletions] that only some modes
// use.
type ChooseOptions struct {
	// Seed seeds the Random mode; every value, zero included, is a seed.
	// Ignored by the other modes.
	Seed uint64
	// Loss is the stream's loss. Required for HighGradient, ignored
	// otherwise.
	Loss Loss
	// W is the learner's parameter vector w_{t_del} at deletion time, of
	// length Loss.Dim(). Required for HighGradient, ignored otherwise.
	W []float64
}

// ChooseDeletions chooses a deletion set U of count ids by mode from the
// inserts of prefix = e_1..e_{t_del} (spec §4) and returns its ids in
// ascending order. The candidates are the inserts of the prefix whose id is
// not deleted within it, in stream order; the prefix must be valid (as
// [History.Prefix] is).
//
//   - Recent: the count last candidates.
//   - Old: the count first candidates.
//   - Random: a partial Fisher–Yates shuffle of the candidates with
//     r = rand.New(rand.NewPCG(o.Seed, ModeStream)): for i = 0..count−1,
//     swap c[i] and c[i + r.IntN(n−i)] (n candidates); U = c[0..count−1]. Each
//     count-subset is equally likely.
//   - HighGradient: the count candidates z with the largest ‖∇ℓ_z(w)‖₂
//     (gonum floats.Norm) at w = o.W under o.Loss, ties broken by smaller
//     id. It costs one gradient per candidate.
//
// Errors wrap ErrInvalidValue for an invalid mode, count < 1 (use
// [DefaultDeletionCount] for the paper's |U|), count larger than the number
// of candidates, or a HighGradient call without Loss or W; ErrDimension or
// ErrNonFinite for a bad W or candidate payload.
func ChooseDeletions(prefix []Event, mode Mode, count int, o ChooseOptions) ([]int64, error) {
	if mode < Recent || mode > HighGradient {
		return nil, fmt.Errorf("stream: choosing deletions: invalid mode %v: %w", mode, ErrInvalidValue)
	}
	if count < 1 {
		return nil, fmt.Errorf("stream: choosing deletions: count = %d must be at least 1: %w", count, ErrInvalidValue)
	}
	deleted := DeletedIDs(prefix)
	var cand []Event
	for _, e := range prefix {
		if e.Op == Insert && !deleted.Has(e.ID) {
			cand = append(cand, e)
		}
	}
	n := len(cand)
	if count > n {
		return nil, fmt.Errorf("stream: choosing deletions: count = %d exceeds the %d undeleted inserts of the prefix: %w",
			count, n, ErrInvalidValue)
	}
	var chosen []Event
	switch mode {
	case Recent:
		chosen = cand[n-count:]
	case Old:
		chosen = cand[:count]
	case Random:
		r := rand.New(rand.NewPCG(o.Seed, ModeStream))
		for i := 0; i < count; i++ {
			j := i + r.IntN(n-i)
			cand[i], cand[j] = cand[j], cand[i]
		}
		chosen = cand[:count]
	case HighGradient:
		var err error
		if chosen, err = highestGradients(cand, count, o); err != nil {
			return nil, err
		}
	}
	ids := make([]int64, len(chosen))
	for i, e := range chosen {
		ids[i] = e.ID
	}
	slices.Sort(ids)
	return ids, nil
}

// highestGradients returns the count candidates with the largest gradient
// norm at o.W, ties broken by smaller id.
func highestGradients(cand []Event, count int, o ChooseOptions) ([]Event, error) {
	if o.Loss == nil || o.W == nil {
		return nil, fmt.Errorf("stream: choosing deletions: high-gradient mode needs Loss and W: %w", ErrInvalidValue)
	}
	d := o.Loss.Dim()
	if len(o.W) != d {
		return nil, fmt.Errorf("stream: choosing deletions: len(W) = %d, want d = %d: %w", len(o.W), d, ErrDimension)
	}
	for i, v := range o.W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("stream: choosing deletions: W[%d] = %v: %w", i, v, ErrNonFinite)
		}
	}
	type scored struct {
		e    Event
		norm float64
	}
	s := make([]scored, len(cand))
	g := make([]float64, d)
	for i, e := range cand {
		if field, err := o.Loss.CheckSample(e.Sample); err != nil {
			return nil, fmt.Errorf("stream: choosing deletions: insert id %d, field %q: %w", e.ID, field, err)
		}
		o.Loss.Grad(g, o.W, e.Sample)
		s[i] = scored{e, floats.Norm(g, 2)}
	}
	// Largest norm first (a NaN norm sorts last), then smaller id.
	slices.SortFunc(s, func(a, b scored) int {
		if c := cmp.Compare(b.norm, a.norm); c != 0 {
			return c
		}
		return cmp.Compare(a.e.ID, b.e.ID)
	})
	out := make([]Event, count)
	for i := range out {
		out[i] = s[i].e
	}
	return out, nil
}
