package audit

import (
	"unlearn/store"
)

// FromStore returns the mechanisms of an audit of a model store's forget
// and release, from the worlds store.PrepareAudit computed once: world A
// releases the store's state after the forget, world B the
// counterfactual, both through the store's release configuration
// (certify.Prepared: the same α, σ, memory policy and retained data, the
// code of the store's own release, so each trial publishes exactly what
// Store.Release would with the trial's sampler). When the store's release
// is exact (every forget served by replay), each world publishes its
// un-noised state, memory included, as the store does; the states are then
// equal and the audit finds nothing. The artifacts are w followed by the
// memory in [Flatten]'s layout; wDim is the parameter dimension (d for the
// paper's learner), for Config.WDim.
func FromStore(w *store.AuditWorlds) (a, b Mechanism, wDim int) {
	cfg := w.StateA.Config()
	if w.Exact {
		return Gaussian(w.StateA.W(), Flatten(w.StateA.Memory()), 0),
			Gaussian(w.StateB.W(), Flatten(w.StateB.Memory()), 0), cfg.ParamDim()
	}
	return Prepared(w.A, cfg), Prepared(w.B, cfg), cfg.ParamDim()
}
