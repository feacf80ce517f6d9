package audit

import (
	"fmt"
	"slices"

	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Mechanism is the release of one world: given a trial's randomness, it
// returns the released artifact as a flat vector of length Dim(). The
// artifact is everything an observer sees — the parameters w and, if the
// release publishes it, the curvature memory — flattened in a fixed order
// (for a learner, [Flatten]'s: w, then the memory pairs). The audit never
// looks inside: the black-box test reads the whole vector, memory
// included.
//
// A mechanism must draw all of its randomness from the sampler it is given
// (so that a seeded audit is reproducible and a secure one is secure) and
// must not keep state between calls: every call is an independent trial.
// The deterministic part of a world — training, the intervention — should
// be done once, before the audit, and only the noise drawn per call (see
// [Gaussian]).
type Mechanism interface {
	// Dim returns the length of a released artifact.
	Dim() int
	// Release stores one released artifact in dst (of length Dim()),
	// drawing its randomness from s.
	Release(dst []float64, s noise.Sampler) error
}

// gaussian is the mechanism of Gaussian.
type gaussian struct {
	w, memory []float64
	sigma     float64
}

// Gaussian returns the mechanism that releases w + N(0, σ²I) followed by
// memory unchanged: the Gaussian release of the paper's Theorem "o-LBFGS
// Unlearning Certificate" (noise on w only, as one mechanism), with the
// published memory appended (nil or empty: no memory is released, the
// "reset" policy). It copies w and memory. σ = 0 releases w unchanged
// (a deliberately broken pipeline, or exact unlearning); a negative or
// non-finite σ makes every Release fail with the sampler's error.
//
// # Why the un-noised part is computed once
//
// In the audited pipelines the un-noised state of each world — training on
// the full stream and the intervention (world A), or retraining on the
// deletion-edited stream (world B) — is a deterministic function of the
// data and the configuration: o-LBFGS has no randomness of its own and the
// operators of package unlearn are deterministic. So the distribution of
// a world's release is that of (w + N(0, σ²I), memory) for ONE w and ONE
// memory, and n independent trials of the whole pipeline have the same
// joint distribution as n independent draws of the noise around the state
// computed once. Auditing a pipeline with randomness of its own (a
// randomized intervention, sampled minibatches) needs a Mechanism that
// redraws that randomness from the sampler in every call.
func Gaussian(w, memory []float64, sigma float64) Mechanism {
	return &gaussian{w: slices.Clone(w), memory: slices.Clone(memory), sigma: sigma}
}

func (g *gaussian) Dim() int { return len(g.w) + len(g.memory) }

func (g *gaussian) Release(dst []float64, s noise.Sampler) error {
	if len(dst) != g.Dim() {
		panic(fmt.Sprintf("audit: Gaussian.Release: len(dst) = %d, want %d", len(dst), g.Dim()))
	}
	if _, err := s.AddNoise(dst[:len(g.w)], g.w, g.sigma); err != nil {
		return err
	}
	copy(dst[len(g.w):], g.memory)
	return nil
}

// Flatten returns the memory Z of a learner as a flat vector of length
// 2·τ·d, the layout in which a release publishes it: slot k = 0..τ−1
// (oldest stored pair first) holds s_k then y_k, each of length d, at
// offset 2·k·d; slots beyond the stored pairs are zero. The length depends
// only on (d, τ), so two learners of the same configuration flatten to
// vectors of the same length whatever the number of pairs they hold, and a
// difference in that number shows as coordinates that are zero in one world
// and not in the other. Pair sources (ids) are not part of it.
func Flatten(m *olbfgs.Memory) []float64 {
	d := m.Dim()
	out := make([]float64, 2*m.Cap()*d)
	for k := range m.Len() {
		p := m.Pair(k)
		copy(out[2*k*d:], p.S)
		copy(out[(2*k+1)*d:], p.Y)
	}
	return out
}

// Worlds computes the un-noised states of the two worlds of an unlearning
// audit, once (see [Gaussian] for why once suffices):
//
//   - A, unlearned: the learner trained on prefix from θ0 (keeping
//     checkpoints with window 5τ, as window replay needs), then the
//     intervention op applied through unlearn.Run with deletion set u;
//   - B, retrained: the learner replayed from θ0 on the deletion-edited
//     prefix stream.Counterfactual(prefix, u) (the oracle), with u marked
//     deleted.
//
// u must contain the id of every delete event of the prefix (a realized
// deletion joins U, spec §8). Errors of training and of the intervention
// are returned wrapped with the world they occurred in.
func Worlds(cfg olbfgs.Config, loss stream.Loss, prefix []stream.Event, u stream.IDSet, op unlearn.Operator) (a, b *olbfgs.Learner, err error) {
	actual, err := olbfgs.New(cfg, loss)
	if err != nil {
		return nil, nil, fmt.Errorf("audit: world A: %w", err)
	}
	if err := actual.KeepCheckpoints(max(1, 5*cfg.Memory)); err != nil {
		return nil, nil, fmt.Errorf("audit: world A: %w", err)
	}
	if err := actual.Run(prefix); err != nil {
		return nil, nil, fmt.Errorf("audit: world A: training: %w", err)
	}
	a, _, err = unlearn.Run(op, unlearn.Request{Actual: actual, Prefix: prefix, U: u})
	if err != nil {
		return nil, nil, fmt.Errorf("audit: world A: intervention: %w", err)
	}
	b, err = olbfgs.Replay(cfg, loss, stream.Counterfactual(prefix, u))
	if err != nil {
		return nil, nil, fmt.Errorf("audit: world B: retraining: %w", err)
	}
	b.MarkDeleted(u.Sorted()...)
	return a, b, nil
}
