// Package unlearn holds the unlearning operators of spec §5 — the
// interventions a benchmark applies to an online L-BFGS learner at the
// deletion time t_del — behind one small interface, [Operator].
//
// # Requests and results
//
// Every operator sees the same [Request]: the actual learner θ_{t_del}, the
// prefix e_1..e_{t_del} that produced it, and the deletion set U (which
// includes the realized deletions of the prefix, spec §8). It returns a new
// state — never the actual learner, which it must not modify — with U marked
// deleted, so that later replays and fine-tuning exclude those samples, and
// its [Cost]: events replayed and gradient evaluations by the spec §8 cost
// model, wall time measured by [Run].
//
// # The operators
//
// [Paper] returns the nine of the paper's Experiment 2 in the order of its
// tables (key, label):
//
//	oracle        Oracle replay           replay the deletion-edited prefix from θ0
//	noop          No-op deletion          unchanged state
//	param-only    Parameter-only          w̃ = w + η Σ_{u∈U} H_Z ∇ℓ_u(w), Z unchanged
//	pair-drop     Contaminated pair drop  drop the pairs whose source meets U
//	memory-reset  Full memory reset       Z = ∅, w unchanged
//	retain-ft     Retain fine-tuning      replay the retained among the last τ inserts
//	drop-refill   Drop and refill         reset to θ0
//	window-tau    Window replay τ         restore θ_{t_del−τ}, replay the window minus U
//	window-5tau   Window replay 5τ        the same over 5τ events
//
// Oracle replay is computed from the prefix on its own, never copied from a
// reference counterfactual, so that its zero error in a benchmark is a check
// rather than a tautology. Window replay of any width comes from
// [WindowReplay]; it needs a learner that keeps checkpoints
// (olbfgs.Learner.KeepCheckpoints from θ0, with a window at least the
// largest replay window).
//
// # Your own operator
//
// Any type with Name, Label and Apply is an operator; [Run] measures it and
// checks its contract, and the benchmark runs whatever list of operators it
// is given (see the package example).
//
// # Errors
//
// Invalid requests (no learner, a learner that has not seen exactly the
// prefix, an id of U that the prefix never inserted, a delete of the prefix
// missing from U) return errors wrapping [ErrRequest]; window replay without
// a usable checkpoint wraps olbfgs.ErrNoCheckpoint; an operator that breaks
// its contract is reported by Run with [ErrOperator]. Constructors panic,
// with an "unlearn: " prefix, only on programmer errors (a negative window
// or τ). The operators of this package are deterministic and safe for
// concurrent use on one request.
package unlearn
