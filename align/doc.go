// Package align measures how far an intervened o-LBFGS state is from the
// deletion-edited counterfactual — the state-alignment metrics of spec §3
// and of the paper's Section "State Alignment Metrics" — step after step,
// and condenses the trajectories into the figures of its tables.
//
// # Metrics
//
// For an intervened state θ̃ = (w̃, Z̃) and the counterfactual θ⁻ = (w⁻, Z⁻)
// at post-deletion step k (k = 0 is the state right after the intervention;
// step k follows the event e_{t_del+k}, spec §8), a [Point] holds
//
//	E_w     = ‖w̃ − w⁻‖₂                                    parameter error
//	E_Z     = sqrt((1/m_q) Σ_j ‖H_Z̃ q_j − H_Z⁻ q_j‖²)       memory-operator error
//	E_Θ     = E_w + λ_Z·E_Z                                 state error
//	D_upd   = 1 − d̃ᵀd⁻/(‖d̃‖‖d⁻‖),  d = −H_Z ∇ℓ_e(w)       update-direction error
//	M_direct = #{pairs of Z̃ whose source meets U}           direct memory mass
//
// with m_q unit probes q_j drawn once per run ([DrawProbes], or given),
// H_Z q the two-loop recursion of olbfgs.Memory.Apply, and e the next insert
// after step k. D_upd is 0 when both directions vanish, 1 when one does, and
// undefined — DupdDefined false, never NaN — when no insert follows
// ([DirectionError]). A [Series] collects the points of k = 0..H and
// [Series.Summarize] returns a [Summary]: the values at k = 0 and k = H, the
// future state AUC Σ_{k=0..H} E_Θ(k), the parameter-trajectory AUC Σ E_w,
// Σ E_Z, the update-direction AUC over the steps where D_upd is defined, the
// direct-clearance time min{k : M_direct(k) = 0} (undefined if never), exact
// recovery (E_Θ(k) ≤ 1e-9·max(1, ‖w⁻_k‖) for every k, [ExactTol]) and the
// decay-rate fits of E_Θ on the phases P1 = [0, τ−1], P2 = [τ, 2τ−1],
// P3 = [2τ, H] ([Phases], [FitDecay]: least squares on log E_Θ, zeros
// skipped, ρ̂ = exp(slope), no value from fewer than two points).
//
// # The engine
//
// An [Engine] belongs to one run. It draws (or checks) the probes once and
// keeps every buffer, so that measuring a state allocates nothing. At each
// step the caller sets the reference ([Engine.SetReference]), which computes
// the reference's probe block H_Z⁻Q and update direction once, and then
// measures any number of states against it ([Engine.Measure]).
// [Engine.Track] does the whole loop: it propagates a reference and a list
// of states on the first h future events (h, the horizon H, is its last
// argument) and returns one Series of h+1 points, k = 0..h, per state.
//
// # Performance
//
// E_Z dominates the cost: m_q applications of H_Z per state and step. The
// engine makes four choices, each exact:
//
//   - The probes go through the two-loop recursion as one d×b block (row
//     major), so each sweep over a pair's vectors updates every column. On
//     amd64 with AVX2 the sweeps run in assembly, four columns per vector
//     instruction, without fused multiply-adds: every column gets exactly
//     the operations of Memory.Apply, so the result is bit-identical to it
//     and to the portable path (Memory.ApplyBlock) on any machine.
//   - E_Z depends on the probes only through P = QQᵀ: for symmetric
//     Δ = H_Z̃ − H_Z⁻, Σ_j ‖Δq_j‖² = ‖ΔQ‖_F² = tr(ΔPΔ) = ‖ΔL‖_F² for the
//     Cholesky factor P = LLᵀ. With more probes than dimensions (m_q = 32 >
//     d = 25) the engine applies the memories to the d columns of L
//     instead of the m_q probes (Options.DirectProbes turns this off); the
//     two agree to round-off.
//   - The gradient of the next insert rides in the block as one more column,
//     which gives the update direction; for a quadratic loss the event's
//     Hessian H(α) is formed once per step and shared by all states.
//   - A state bitwise identical to the reference (oracle replay, exact
//     window replay) is recognized in O(τd) and gets exactly zero errors
//     without any work; an identical memory skips the block (E_Z = 0).
//   - A block too large for the last-level cache (over 8 MiB: d·(m_q+1)
//     beyond a million, e.g. d = 10⁵) is swept in strips of 8 or more
//     columns, each strip going through all 2·|Z|+1 sweeps while it stays
//     in the cache; the columns are independent, so the bits do not change.
//
// From d ≥ CoefficientMinDim (4096; Options.MemoryError) E_Z is computed in
// the pairs' coefficient space instead — H_Z q = γq + Σ_i (σ_i s_i + η_i y_i)
// (Byrd, Nocedal & Schnabel 1994, §2), with the inner products of every pair
// with the probes and with the other pairs computed once, when the pair first
// appears, and kept by the pair's bits — at O(τ·m_q + τ·d) per state and step
// instead of O(τ·d·m_q). That value is not the block sweep's bits: it is kept
// only when its a-posteriori round-off estimate is within a tenth of the
// spec's tolerance 1e-9·max(1, ‖w⁻‖), and the state falls back to the block
// sweep otherwise (see coeff.go for the estimate and its argument). D_upd
// then takes each learner's olbfgs.Learner.NextDirection (for a loss other
// than the quadratic): Loss.Grad and Memory.Apply, the bits of the block's
// gradient column, kept by the learner and reused at its next insert, so
// the metric costs no two-loop of its own. Pair entries are found by a hash
// whose hits are checked bit for bit (never merging two pairs), and are
// recycled, so that a step allocates nothing once the engine has held as
// many pairs as it holds at once (apart from starting goroutines when
// MeasureAll has more than one worker). With AVX-512 the batches sweep one
// pair (or probe) against four others at a time, in the lanes and order of
// the AVX2 kernels, so with the same bits (dot4Hub, dot2Hub). Below 4096
// nothing changes, so the benchmark's d = 25 tables keep their bits.
//
// The identity check of a state against the reference compares w and, for
// a memory found equal to the reference's at the previous step, only the
// newest pairs' vectors (olbfgs.Memory.EqualSince: O(d) instead of O(τd)).
//
// [Engine.MeasureAll] measures the states of a step on several goroutines,
// each with its own buffers, with the bits of Measure; package experiment
// uses it for a single run (unlearn run), whose states would otherwise run
// one after the other.
//
// At the paper's sizes (d = 25, m_q = 32, τ = 10) one Measure costs about
// 5 µs and the reference's block about 4 µs on one core of the 2.8 GHz
// development machine (BenchmarkMeasure, BenchmarkSetReference); see
// BenchmarkTrack for a whole configuration of Experiment 2.
//
// # Determinism and errors
//
// Every result is a deterministic function of the inputs, in a documented
// order of summation, and the same on every platform. Invalid options and
// probes are returned as errors wrapping [ErrConfig] or [ErrProbes];
// dimension mismatches and misuse (Measure before SetReference, an empty
// series, a fit range outside its series) are programmer errors and panic
// with an "align: " prefix. An Engine is not safe for concurrent use; use
// one per goroutine.
package align
