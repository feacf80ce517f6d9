// Package audit measures what an unlearning release actually leaks: it
// releases many times from the unlearned model (world A) and from the model
// retrained without the deleted data (world B), tries to tell the two apart,
// and turns the error rates of the best attempts into a lower confidence
// bound ε_lb on the ε the release really has. A certificate claims (ε, δ);
// ε_lb > ε refutes the claim (with a false-alarm probability at most γ);
// ε_lb ≤ ε means the trials found nothing against it. The guide is
// docs/packages/audit.md; the method, its cost and the trade-off between
// trials and tightness are in docs/audit.md.
//
// # Worlds and mechanisms
//
// A [Mechanism] is one world's release: given a noise sampler it returns
// the released artifact as a flat vector (w, then any released memory, in
// a fixed order; [Flatten] is the layout of an o-LBFGS memory). [Run]
// takes the two worlds as Mechanisms, so any intervention, loss or release
// rule can be audited; it does not care how a release is made. For the
// usual pipeline, [Worlds] computes the two un-noised states once (train,
// intervene; retrain on the deletion-edited stream) and [Gaussian] wraps a
// state as the release w + N(0, σ²I) with or without its memory. Training
// once is valid because the un-noised states are deterministic functions of
// the data: repeating it would give the same states (see [Gaussian]).
//
// # Tests
//
// The first share of each world's trials (the selection split) chooses two
// tests: the likelihood-ratio test along the estimated mean difference,
// the most powerful test for Gaussian releases of equal covariance
// (Neyman–Pearson), and a black-box test — the single statistic of the
// whole artifact (each coordinate, memory included, and norms) whose best
// threshold separates the worlds best. The rest (the evaluation split),
// drawn after the tests are fixed, bounds each test's false-positive and
// false-negative rates with one-sided Clopper–Pearson upper bounds
// ([ClopperPearsonUpper]) at confidence 1 − γ/4 each (Bonferroni over the
// four rates).
//
// # The bound
//
// For each test, [EpsilonLowerBound] gives
//
//	ε_lb = max(0, ln((1 − δ − FNR_ub)/FPR_ub), ln((1 − δ − FPR_ub)/FNR_ub)),
//
// from the hypothesis-testing characterisation of (ε, δ)-DP (Kairouz, Oh
// & Viswanath 2015) as used for auditing by Jagielski, Ullman & Oprea
// (2020) and Nasr et al. (2021); the report's ε_lb is the larger of the
// two tests'. On a sound (ε, δ) release, P[ε_lb > ε] ≤ γ: the false-alarm
// probability of the whole procedure, by construction, whatever the
// mechanism. [DefaultGamma] = 10⁻⁵, the rate the Google DP library's
// statistical tests are built for; ε_lb cannot exceed [Ceiling], which
// grows like ln(n) in the number of trials.
//
// # Randomness
//
// Noise comes from noise.SecureSampler unless Config.Seeded is set, in
// which case two noise.SeededSampler draw it (seeded: for speed, not
// deployment); the report says which, with the seed. A seeded audit is
// bit-identical for the same seed.
//
// # Errors
//
// A bad Config is a *[ConfigError] (errors.Is ErrConfig) naming the field;
// worlds of different artifact lengths give [ErrDim]; a failing mechanism
// or a non-finite released value gives [ErrRelease] naming the world and
// the trial. Out-of-range arguments of the statistical helpers are
// programmer errors and panic with an "audit: " prefix. The package never
// prints or logs.
package audit
