package olbfgs

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// Learner is the online L-BFGS learner of spec §2: state θ = (w, Z), the
// ids deleted so far, and counters. Create it with [New]; a Learner is not
// safe for concurrent use.
type Learner struct {
	cfg  Config
	loss stream.Loss
	lin  stream.Linear // the loss as a linear model, if it is one

	w   []float64 // the last iterate, of the parameter dimension p
	mem *Memory

	t       int     // events applied
	skipped int     // inserts whose pair failed the curvature guard
	deleted []int64 // ids recorded as deleted, ascending

	// scratch for Step and Direction
	g, p, wNew, gNew, s, y []float64

	// The direction cache of NextDirection: g and p hold ∇ℓ_z(w) and
	// H_Z ∇ℓ_z(w) for the sample dirZ (its bits copied; dirSparse records
	// whether Idx was set), computed at memory version dirVer and left valid
	// by every change of w (insert, SetW, Reset, CopyFrom clear dirOK).
	dirOK     bool
	dirVer    uint64
	dirZ      stream.Sample
	dirSparse bool

	ckpt *checkpoints

	// last describes the last successful Step, for Follow: valid while
	// last.t == t, w is unchanged (every method that changes w other than
	// Step clears last.ok) and Z still has version last.ver.
	last lastStep

	// opt is the state of the practitioner's options (options.go); its
	// vectors are nil for the options that are off.
	opt optState
}

// lastStep is what Follow needs of a learner's last Step.
type lastStep struct {
	ok     bool
	t      int   // the event count after the step
	id     int64 // the inserted sample's id
	ver    uint64
	pushed bool // the step pushed a pair (as the newest)
}

// New returns a learner at θ0 = (0, ∅) for the given loss. It returns an
// error wrapping ErrConfig if cfg is invalid or its dimension differs from
// the loss's.
func New(cfg Config, loss stream.Loss) (*Learner, error) {
	if err := cfg.ValidateFor(loss); err != nil {
		return nil, err
	}
	lin, _ := loss.(stream.Linear)
	d := cfg.ParamDim()
	buf := make([]float64, 7*d)
	l := &Learner{
		cfg:  cfg,
		loss: loss,
		lin:  lin,
		w:    buf[0*d : 1*d : 1*d],
		g:    buf[1*d : 2*d : 2*d],
		p:    buf[2*d : 3*d : 3*d],
		wNew: buf[3*d : 4*d : 4*d],
		gNew: buf[4*d : 5*d : 5*d],
		s:    buf[5*d : 6*d : 6*d],
		y:    buf[6*d : 7*d : 7*d],
		mem:  NewMemory(d, cfg.Memory, cfg.InitialScale),
	}
	l.opt = newOptState(cfg, lin)
	return l, nil
}

// Config returns the learner's configuration.
func (l *Learner) Config() Config { return l.cfg }

// Loss returns the learner's loss.
func (l *Learner) Loss() stream.Loss { return l.loss }

// W returns the parameter vector w, the last iterate, of the parameter
// dimension Config.ParamDim() (see [Learner.Deployed] for the parameters
// predictions use). The slice aliases the learner's state: read it, copy
// it, but modify it only through SetW.
func (l *Learner) W() []float64 { return l.w }

// ParamDim returns the parameter dimension p = len(W()) (Config.ParamDim).
func (l *Learner) ParamDim() int { return len(l.w) }

// SetW overwrites the last iterate w with a copy of w (for interventions
// that edit the parameters). The options' state — the average of
// Config.Average, the statistics of Config.Standardize — is not changed.
// Past states can no longer be rebuilt by replaying logged events, so kept
// checkpoints are discarded (see KeepCheckpoints). It panics if len(w) is
// not the parameter dimension.
func (l *Learner) SetW(w []float64) {
	if len(w) != len(l.w) {
		panic(fmt.Sprintf("olbfgs: SetW: len(w)=%d, want %d", len(w), len(l.w)))
	}
	copy(l.w, w)
	l.dirOK = false
	l.last.ok = false
	l.ckpt = nil
}

// Memory returns the curvature memory Z (aliased, not copied).
func (l *Learner) Memory() *Memory { return l.mem }

// T returns the number of events applied since θ0.
func (l *Learner) T() int { return l.t }

// Skipped returns the number of inserts whose curvature pair failed the
// guard sᵀy > tol·‖s‖‖y‖ and was not stored.
func (l *Learner) Skipped() int { return l.skipped }

// Deleted returns the ids recorded as deleted, ascending. The slice is the
// learner's own; do not modify it.
func (l *Learner) Deleted() []int64 { return l.deleted }

// IsDeleted reports whether id has been recorded as deleted.
func (l *Learner) IsDeleted(id int64) bool {
	_, ok := slices.BinarySearch(l.deleted, id)
	return ok
}

// MarkDeleted records ids as deleted without a delete event (for
// interventions that act on a deletion set at once). Already recorded ids
// are ignored. It changes neither w nor Z; if it records a new id, kept
// checkpoints are discarded, as for SetW.
func (l *Learner) MarkDeleted(ids ...int64) {
	for _, id := range ids {
		if i, ok := slices.BinarySearch(l.deleted, id); !ok {
			l.deleted = slices.Insert(l.deleted, i, id)
			l.last.ok = false
			l.ckpt = nil
		}
	}
}

// Step applies one event (spec §2). An insert moves w along the quasi-Newton
// direction and may push a curvature pair (and, with the options of spec
// §2.1, updates the standardization statistics, the average and the
// progressive statistics); a delete records the id. Step assumes the event
// sequence is valid (see stream.Validator); it checks only what it can in
// O(d) without extra state: payload dimension, repeated deletion, a
// non-finite result (ErrDiverged; the state is then left unchanged). Step
// does not allocate, apart from growing the deleted-id list.
func (l *Learner) Step(e stream.Event) error {
	switch e.Op {
	case stream.Insert:
		if !e.Sample.FitsDim(l.cfg.Dim) {
			return fmt.Errorf("%w: event %d (id %d): payload length %d, want %d", ErrEvent, l.t+1, e.ID, len(e.Sample.V), l.cfg.Dim)
		}
		if l.cfg.Certifiable() {
			// A certifiable learner enforces what its certificates rest on:
			// every payload is one the loss accepts (a label in {−1, +1}, a
			// curvature weight in [0, 1], finite values), not only bounded.
			if field, err := l.loss.CheckSample(e.Sample); err != nil {
				return fmt.Errorf("%w: event %d (id %d): %s: %w", ErrEvent, l.t+1, e.ID, field, err)
			}
		}
		if b := l.cfg.SampleBound; b > 0 {
			if n := floats.Norm(e.Sample.V, 2); !(n <= b) {
				return fmt.Errorf("%w: event %d (id %d): ‖payload‖ = %v > the sample bound B = %v", ErrSampleBound, l.t+1, e.ID, n, b)
			}
		}
		skipped0 := l.skipped
		l.last.ok = false
		if err := l.insert(e.ID, e.Sample); err != nil {
			return fmt.Errorf("event %d (id %d): %w", l.t+1, e.ID, err)
		}
		l.last = lastStep{ok: true, t: l.t + 1, id: e.ID, ver: l.mem.ver, pushed: l.skipped == skipped0}
	case stream.Delete:
		l.last.ok = false
		i, ok := slices.BinarySearch(l.deleted, e.ID)
		if ok {
			return fmt.Errorf("%w: event %d: id %d: %w", ErrEvent, l.t+1, e.ID, stream.ErrRepeatedDeletion)
		}
		l.deleted = slices.Insert(l.deleted, i, e.ID)
	default:
		return fmt.Errorf("%w: event %d (id %d): unknown op %v", ErrEvent, l.t+1, e.ID, e.Op)
	}
	l.t++
	if l.ckpt != nil {
		l.ckpt.record(l, e)
	}
	return nil
}

// insert is the o-LBFGS update for one sample (spec §2); a learner with
// options takes insertOptions (spec §2.1) instead.
func (l *Learner) insert(id int64, z stream.Sample) error {
	if l.cfg.HasOptions() {
		return l.insertOptions(id, z)
	}
	eta := l.cfg.StepSize
	if !l.cachedDirection(z) {
		l.loss.Grad(l.g, l.w, z)
		l.mem.Apply(l.p, l.g)
	}
	l.dirOK = false // w changes below (or the step fails and nothing is kept)
	for i, w := range l.w {
		l.wNew[i] = w - float64(eta*l.p[i]) // w + η·p with p = −H_Z g; η·p rounded, never fused
	}
	if !finite(l.wNew) {
		return ErrDiverged
	}
	if l.cfg.Radius > 0 {
		project(l.wNew, l.cfg.Radius)
	}
	for i, w := range l.w {
		l.s[i] = l.wNew[i] - w
	}
	l.loss.Grad(l.gNew, l.wNew, z)
	for i, g := range l.g {
		l.y[i] = l.gNew[i] - g
	}
	l.pushPair(id)
	copy(l.w, l.wNew)
	return nil
}

// pushPair applies the curvature guard (and the pair guard of a guarded
// learner) to the pair (s, y) in the scratch and pushes it with source
// {id}, or counts it as skipped.
func (l *Learner) pushPair(id int64) {
	sy := floats.Dot(l.s, l.y)
	accept := sy > l.cfg.CurvatureTol*floats.Norm(l.s, 2)*floats.Norm(l.y, 2) && !math.IsInf(sy, 0)
	if accept && l.cfg.Guarded() {
		accept = l.cfg.acceptPair(floats.Dot(l.s, l.s), sy, floats.Dot(l.y, l.y))
	}
	if accept {
		l.mem.push(l.s, l.y, sy, []int64{id})
	} else {
		l.skipped++
	}
}

// Direction stores the quasi-Newton direction −H_Z ∇ℓ_z(w) for sample z at
// the current state in dst (the direction the next insert of z would take;
// spec §3's update direction). It does not allocate.
//
// With Config.Intercept or Config.Standardize the gradient is that of the
// model the options define, with the standardization statistics updated
// by z as its insert would update them (the learner's statistics do not
// change).
func (l *Learner) Direction(dst []float64, z stream.Sample) {
	if len(dst) != len(l.w) {
		panic(fmt.Sprintf("olbfgs: Direction: len(dst)=%d, want %d", len(dst), len(l.w)))
	}
	l.dirOK = false // l.g is overwritten
	l.gradAt(l.g, l.w, z)
	l.mem.Apply(dst, l.g)
	floats.Scale(-1, dst)
}

// gradAt stores in dst the gradient the next insert of z would take at w:
// the loss's, or the affine path's with the statistics updated by z.
func (l *Learner) gradAt(dst, w []float64, z stream.Sample) {
	if l.cfg.Affine() {
		l.affineGrad(dst, w, l.prepare(z), z.S)
		return
	}
	l.loss.Grad(dst, w, z)
}

// NextDirection returns H_Z ∇ℓ_z(w) for sample z at the current state: the
// two-loop image of the gradient, which the next insert of z would move w
// against (w ← w − η·H_Z ∇ℓ_z(w), spec §2), and −1 times spec §3's update
// direction. The slice aliases the learner's scratch: it is valid until the
// next call of a method that changes the learner (Step, SetW, Reset,
// CopyFrom, Direction, NextDirection); do not modify it.
//
// The learner keeps the result: if the next insert Step applies is of a
// sample with the same bits as z (V, S, Idx), and neither w nor the memory
// has changed since (delete events in between change neither), that insert
// uses these values instead of computing them again. They are the values it
// would compute — the same calls (Loss.Grad, then Memory.Apply) on the same
// inputs — so the trajectory is bit-identical with or without the call
// (TestNextDirectionSameBits); align.Engine uses it so that the update-
// direction metric D_upd costs the learner nothing extra. A change of the
// memory through Memory() (Push, Reset, DropTouching, CopyFrom) is seen by
// its version counter and makes the insert compute afresh. NextDirection
// does not allocate once it has held a sample of z's size.
//
// With Config.Intercept or Config.Standardize the result is computed as
// Direction computes it and is not kept.
func (l *Learner) NextDirection(z stream.Sample) []float64 {
	if l.cfg.Affine() {
		l.dirOK = false
		l.gradAt(l.g, l.w, z)
		l.mem.Apply(l.p, l.g)
		return l.p
	}
	if l.cachedDirection(z) {
		return l.p
	}
	l.loss.Grad(l.g, l.w, z)
	l.mem.Apply(l.p, l.g)
	l.dirOK, l.dirVer = true, l.mem.ver
	l.dirZ.V = append(l.dirZ.V[:0], z.V...)
	l.dirZ.S = z.S
	l.dirZ.Idx = append(l.dirZ.Idx[:0], z.Idx...)
	l.dirSparse = z.Idx != nil
	return l.p
}

// cachedDirection reports whether l.g and l.p hold the gradient and
// direction of z at the current state (see NextDirection).
func (l *Learner) cachedDirection(z stream.Sample) bool {
	return l.dirOK && l.dirVer == l.mem.ver &&
		l.dirSparse == (z.Idx != nil) && slices.Equal(l.dirZ.Idx, z.Idx) &&
		math.Float64bits(l.dirZ.S) == math.Float64bits(z.S) && floatbits.Equal(l.dirZ.V, z.V)
}

// Run applies the events in order, stopping at the first error.
func (l *Learner) Run(events []stream.Event) error {
	for _, e := range events {
		if err := l.Step(e); err != nil {
			return err
		}
	}
	return nil
}

// Replay returns the state reached by applying events in order from
// θ0 = (0, ∅) (spec §2). Replaying the same events always gives bit-identical
// states.
func Replay(cfg Config, loss stream.Loss, events []stream.Event) (*Learner, error) {
	l, err := New(cfg, loss)
	if err != nil {
		return nil, err
	}
	if err := l.Run(events); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	return l, nil
}

// ReplaySkipping applies events in order, skipping every event whose id is in
// skip or already recorded as deleted (the learner's rule that deleted data is
// excluded from any later replay or fine-tuning), and returns the number of
// events applied.
func (l *Learner) ReplaySkipping(events []stream.Event, skip stream.IDSet) (int, error) {
	n := 0
	for _, e := range events {
		if skip.Has(e.ID) || (e.Op == stream.Insert && l.IsDeleted(e.ID)) {
			continue
		}
		if err := l.Step(e); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Reset returns the learner to θ0 = (0, ∅), keeping its configuration, its
// deleted ids and its event count (the "drop and refill" intervention).
// The options' state returns to its start too (no insert counted, no
// statistics, no average, no progress). Checkpoints are discarded.
func (l *Learner) Reset() {
	clear(l.w)
	l.mem.Reset()
	l.opt.reset()
	l.dirOK = false
	l.last.ok = false
	l.ckpt = nil
}

// CopyFrom makes l an exact copy of src's state (w, Z, deleted ids,
// counters, and the options' state). Both must have the same configuration; the loss is taken from
// src. Checkpoints are not copied (l keeps none). It does not allocate once
// l has held a state of the same size.
func (l *Learner) CopyFrom(src *Learner) {
	if l == src {
		return
	}
	if l.cfg != src.cfg {
		panic(fmt.Sprintf("olbfgs: Learner.CopyFrom: configurations differ (%+v vs %+v)", l.cfg, src.cfg))
	}
	l.loss = src.loss
	l.lin = src.lin
	l.dirOK = false
	l.last.ok = false
	copy(l.w, src.w)
	l.mem.CopyFrom(src.mem)
	l.opt.copyFrom(&src.opt)
	l.t, l.skipped = src.t, src.skipped
	l.deleted = append(l.deleted[:0], src.deleted...)
	l.ckpt = nil
}

// Follow applies the insert e to l by copying the outcome of src's last
// Step — which must have been Step(e), taken from the same w and Z as l's
// (bitwise: floatbits.Equal of W, Memory.Equal) — instead of computing it:
// w is copied and the pair src pushed, if any, is pushed (O(d) instead of
// the two-loop's O(τd)); l's event count, and its skipped count if src
// skipped the pair, go up by one. An insert depends on nothing else than
// w, Z, the configuration, the loss and the sample (not on the counters nor
// the deleted ids), and Step is deterministic, so l ends bitwise as its own
// Step(e) would leave it. A learner stepping in lockstep with another (a
// state that the deletion left equal to the reference) then costs no
// two-loop of its own.
//
// The caller vouches for the equality of w and Z before src's step (for
// the experiment runner, align's Identical at the previous step); Follow
// checks the rest and returns false without changing l unless it applies:
// the event is an insert with the id of src's last step, src has not
// changed since that step (event count, w, Z version), l has src's
// configuration and loss, keeps no checkpoints and has not just taken e
// itself (a second Follow of the same step). Then l.Step(e) is the
// way to step it. A learner with options (Config.HasOptions) never
// follows: its state holds more than w and Z.
func (l *Learner) Follow(src *Learner, e stream.Event) bool {
	ls := src.last
	if l == src || l.ckpt != nil || l.cfg.HasOptions() || e.Op != stream.Insert || !ls.ok || ls.t != src.t || ls.id != e.ID ||
		ls.ver != src.mem.ver || l.cfg != src.cfg || !SameLoss(l.loss, src.loss) ||
		(l.last.ok && l.last.t == l.t && l.last.id == e.ID && l.last.ver == l.mem.ver) {
		return false
	}
	if ls.pushed {
		if n := src.mem.Len(); n > 0 {
			p := src.mem.Pair(n - 1)
			l.mem.push(p.S, p.Y, src.mem.Curvature(n-1), p.Source)
		} else { // capacity 0: push stored nothing
			l.mem.push(nil, nil, 0, nil)
		}
	} else {
		l.skipped++
	}
	l.dirOK = false
	copy(l.w, src.w)
	l.t++
	l.last = lastStep{ok: true, t: l.t, id: e.ID, ver: l.mem.ver, pushed: ls.pushed}
	return true
}

// SameLoss reports whether a and b are the same loss (a == b, false where
// the dynamic types are not comparable): the loss identity Follow requires.
func SameLoss(a, b stream.Loss) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// Clone returns a deep copy of the learner's state (without checkpoints).
func (l *Learner) Clone() *Learner {
	c, err := New(l.cfg, l.loss)
	if err != nil {
		panic("olbfgs: Clone: " + err.Error()) // cannot happen: l was valid
	}
	c.CopyFrom(l)
	return c
}

// Equal reports whether l and o have bit-identical states: w, Z (pairs,
// sources, order), deleted ids, counters, configuration and the options'
// state (statistics, average, progress).
func (l *Learner) Equal(o *Learner) bool {
	return l.cfg == o.cfg && l.t == o.t && l.skipped == o.skipped &&
		floatbits.Equal(l.w, o.w) && l.mem.Equal(o.mem) && slices.Equal(l.deleted, o.deleted) &&
		l.opt.equal(&o.opt)
}
