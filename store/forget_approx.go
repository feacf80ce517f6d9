package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/internal/established"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// approxCapture receives, for PrepareAudit, the approximate path's
// un-noised intervention output and the spec its release was certified
// with.
type approxCapture struct {
	unnoised *olbfgs.Learner
	spec     certify.Spec
}

// serveApproximate applies the intervention to the current state and keeps
// its output only noised: the output is released through certify.Certify
// with the α the store derives (noiseSpec), the release handed to
// o.OnRelease (sign, charge) and kept, and the state the store continues
// from is the release's w projected back onto the learner's ball, with an
// empty memory and no counter of the un-noised trajectory
// (post-processing of the release). The payloads of U are erased (NULL,
// re-summed), and every checkpoint at or after the oldest erased insert is
// deleted: exact replay restarts before it, and those checkpoints held the
// deleted data's influence un-noised.
func (s *Store) serveApproximate(ctx context.Context, tx *sql.Tx, f forgetFacts, o ForgetOptions, reps []ForgetReport) error {
	op, b := operator(o.Intervention, s.cfg.Memory)
	u := f.uSet()
	prefix, err := s.prefixWith(ctx, tx, u)
	if err != nil {
		return err
	}
	if len(prefix) != s.state.T() {
		return corrupt("the state", "it has applied %d events, the log holds %d", s.state.T(), len(prefix))
	}
	l, cost, err := unlearn.Run(op, unlearn.Request{Actual: s.state, Prefix: prefix, U: u})
	if err != nil {
		return err
	}
	ages := certify.AgesOf(prefix, u)
	for i, rf := range f.requests {
		reps[i].Intervention, reps[i].EventsReplayed = o.Intervention, cost.EventsReplayed
		reps[i].Ages = certify.AgesOf(prefix, stream.NewIDSet(rf.targets...))
	}
	prefix = nil
	// Erased before the spec: a rebuild's retained inserts are read after.
	if err := eraseEvents(tx, f.u); err != nil {
		return err
	}
	spec, err := s.noiseSpec(ctx, tx, f, o, b, ages)
	if err != nil {
		return err
	}
	rel, cert, err := certify.Certify(l, spec)
	if err != nil {
		return fmt.Errorf("the certified release of the intervention's output: %w", err)
	}
	if o.capture != nil {
		o.capture.unnoised, o.capture.spec = l.Clone(), spec
	}
	state, snap, err := s.noisedState(l, rel.W)
	if err != nil {
		return err
	}
	released := &Released{Release: rel, Certificate: cert, Path: cert.Sensitivity.Source, Head: s.head, lastRequest: reps[len(reps)-1].Request}
	if o.OnRelease != nil {
		if err := o.OnRelease(released); err != nil {
			return fmt.Errorf("the release of the noised state was refused, nothing changed: %w", err)
		}
	}
	kept, err := insertRelease(tx, released)
	if err != nil {
		return err
	}
	res, err := tx.Exec(`DELETE FROM checkpoints WHERE seq >= (SELECT min(seq) FROM events WHERE payload IS NULL)`)
	if err != nil {
		return err
	}
	dropped, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if err := writeCheckpoint(tx, s.head, false, state.T(), "intervention", snap); err != nil {
		return err
	}
	if err := writeState(tx, false, s.head, snap); err != nil {
		return err
	}
	for i := range reps {
		reps[i].Released, reps[i].ReleaseID, reps[i].CheckpointsDropped = released, kept.ID, int(dropped)
	}
	s.state, s.exact = state, false
	return nil
}

// operator returns the unlearn operator named name and its description.
// The name was validated (Interventions).
func operator(name string, tau int) (unlearn.Operator, unlearn.Builtin) {
	for _, op := range unlearn.Paper(tau) {
		if op.Name() == name {
			b, _ := unlearn.BuiltinOf(op)
			return op, b
		}
	}
	panic("store: operator: unknown intervention " + name)
}

// prefixWith returns the log as the interventions see it: every row as an
// insert (erased rows of earlier requests included: they were steps of
// this state), with payloads for u only — the operators accepted here read
// no other payload — each verified against its sum.
func (s *Store) prefixWith(ctx context.Context, tx *sql.Tx, u stream.IDSet) ([]stream.Event, error) {
	prefix := make([]stream.Event, 0, s.state.T())
	rows, err := tx.QueryContext(ctx, `SELECT events.seq, events.id, u.value IS NOT NULL, CASE WHEN u.value IS NOT NULL THEN payload END,
		CASE WHEN u.value IS NOT NULL THEN sha256 END
		FROM events LEFT JOIN json_each(?) AS u ON u.value = events.id ORDER BY seq`, idsJSON(u.Sorted()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		e := stream.Event{Op: stream.Insert}
		var seq int64
		var p, sum []byte
		var inU bool
		if err := rows.Scan(&seq, &e.ID, &inU, &p, &sum); err != nil {
			return nil, err
		}
		if inU { // U's payloads are not NULL (forgetFacts checked); an empty one is an error, never an empty sample
			if !sameSum(sum, sumEvent(seq, e.ID, p, false)) {
				return nil, corrupt(fmt.Sprintf("event seq %d (id %d)", seq, e.ID), "its checksum does not match its payload")
			}
			if e.Sample, err = decodePayload(p, s.cfg.Dim); err != nil {
				return nil, corrupt(fmt.Sprintf("event seq %d (id %d)", seq, e.ID), "its payload does not decode")
			}
		}
		prefix = append(prefix, e)
	}
	return prefix, rows.Err()
}

// eraseEvents sets the payloads of ids to NULL and their sums to the
// erasure's (a sum of the payload would be a test for it).
func eraseEvents(tx *sql.Tx, ids []int64) error {
	for _, id := range ids {
		var seq int64
		if err := tx.QueryRow(`UPDATE events SET payload = NULL WHERE id = ? RETURNING seq`, id).Scan(&seq); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE events SET sha256 = ? WHERE seq = ?`, sumEvent(seq, id, nil, true), seq); err != nil {
			return err
		}
	}
	return nil
}

// noisedState is the state the store keeps after an approximate forget:
// l with w — and the iterate average, when the learner averages — the
// released (noised) vector projected onto the learner's ball, an empty
// memory, the skip counter of the un-noised trajectory set to 0 and the
// progressive statistics (Config.Progress) reset to zero; its event and
// insert counts, the number of iterates averaged (a function of the
// insert count) and the deleted ids (public: the log's rows and the
// tombstones) stay. Nothing else of l is kept: every stored field is a
// function of the release and of public counts (TestNoisedStateHoldsOnlyPublic).
// It returns the learner and its stored bytes.
func (s *Store) noisedState(l *olbfgs.Learner, released []float64) (*olbfgs.Learner, []byte, error) {
	w := slices.Clone(released)
	if r := s.cfg.Radius; r > 0 {
		if n := floats.Norm(w, 2); n > r {
			floats.Scale(r/n, w)
		}
	}
	n := l.Clone()
	n.SetW(w)
	st := n.OptionState()
	if st.StandardizeN > 0 {
		// Refused before (certify: a noised release of a standardizing
		// learner cannot be certified); kept here so that no state with
		// the deleted rows' statistics is ever stored.
		return nil, nil, errors.New("store: a standardizing learner's statistics depend on every row: no noised state can be kept")
	}
	if st.AverageN > 0 {
		// The released vector is the average (olbfgs.Learner.Deployed):
		// the un-noised average holds the deleted data's influence as much
		// as the iterate does, and is replaced by the released one too.
		copy(st.Average, w)
	}
	if st.Progress.N > 0 {
		// The progressive statistics (loss sums, the recent window's
		// predictions) were computed by the un-noised trajectory on every
		// insert, the deleted ones included: they restart from zero, and
		// count the inserts after this forget only.
		st.Progress = olbfgs.Progress{RecentPredicted: make([]float64, len(st.Progress.RecentPredicted)),
			RecentLabels: make([]float64, len(st.Progress.RecentLabels))}
	}
	if err := n.SetOptionState(st); err != nil {
		return nil, nil, errors.New("store: the noised options' state does not fit the learner's state")
	}
	n.Memory().Reset()
	snap, err := s.encodeState(n)
	if err != nil {
		return nil, nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(snap, &m); err != nil {
		return nil, nil, err
	}
	m["skipped"] = json.RawMessage("0")
	if snap, err = json.Marshal(m); err != nil {
		return nil, nil, err
	}
	out, err := s.decodeState(snap)
	if err != nil {
		// Not repeated: the decoder's message may hold a value of the state.
		return nil, nil, errors.New("store: the noised state does not decode as a learner state of this store")
	}
	return out, snap, nil
}

// noiseSpec is the certify.Spec of the approximate path's release: the
// caller's privacy target and noise (o.Noise) with what the store
// establishes. α is derived from the request's public description —
// intervention, |U|, Horizon 0 (the intervention acts at the log head) and
// the ages as o.Ages discloses them — when that description bounds the
// deviation: the learner's recursion applies and α is non-increasing in
// every age (disclosed ages are at most the true ones), and no earlier
// noising lies between the oldest deleted insert and now (pendingBetween).
// Otherwise α is the diameter bound 2W', which holds whatever produced the
// state, and no age is disclosed.
func (s *Store) noiseSpec(ctx context.Context, tx *sql.Tx, f forgetFacts, o ForgetOptions, b unlearn.Builtin, ages []int) (certify.Spec, error) {
	spec := o.Noise
	h := s.hdr
	spec.Header, spec.Intervention = &h, o.Intervention
	if spec.Memory == certify.Rebuild {
		var err error
		if spec.Retained, err = s.lastRetained(ctx, tx, s.cfg.Memory); err != nil {
			return spec, err
		}
	}
	others, between, err := pendingBefore(ctx, tx, f.minSeq)
	if err != nil {
		return spec, err
	}
	if between || !describable(s.hdr.Kind) || (s.state.Inserts() != s.state.T() && hasDynamics(s.cfg, s.hdr)) {
		// The diameter bound, which holds whatever produced the state and
		// needs no description of the request (certify derives nothing
		// for a loss kind without its constants, and refuses one; a
		// learner whose count restarted, a drop and refill, has a
		// schedule the log's positions do not give).
		spec.Deletions = len(f.u) + others
		return spec, nil
	}
	del, words, err := DescribeDeletion(s.cfg, s.hdr, s.state.Inserts(), ages, o.Ages, b)
	if err != nil {
		return spec, err
	}
	if del == nil {
		spec.Deletions = len(f.u) + others
		return spec, nil
	}
	spec.Deletion = del
	spec.Established = established.New(words)
	return spec, nil
}

// hasDynamics reports whether certify derives the scheduled bound
// (certify.Profile.Dynamics) for the learner cfg and header h.
func hasDynamics(cfg olbfgs.Config, h stream.Header) bool {
	p, err := certify.DeriveProfile(cfg, h)
	return err == nil && p.Dynamics != nil
}

// DescribeDeletion returns the public description of one approximate
// request the model store certifies, with no other request pending, for
// the learner cfg, the header h, the learner's count of applied inserts
// (deleted ones included) and the true ages of the deleted inserts
// (distinct, below inserts), disclosed as how says, served with the
// intervention b; and the words of its provenance. nil means the store
// certifies the diameter bound 2W' and discloses no age. It is the one
// definition the store's forget and `unlearn plan` share: α is
// certify.DerivedAlpha of the result (the diameter for nil).
//
// With the scheduled bound (docs/theory.md §16) the certificate says how
// its ages disclose the true ones, and α is the largest bound over every
// true-age configuration consistent with that (bound.Dynamics.WorstBound,
// §16.12), which certify recomputes from the certificate alone. With the
// guarded-memory recursion the disclosed ages are lower bounds of the true
// ones, sound where α is non-increasing in every age (agesMonotone); a
// recursion-free α does not depend on the ages, and none is disclosed.
func DescribeDeletion(cfg olbfgs.Config, h stream.Header, inserts int, ages []int, how AgeDisclosure, b unlearn.Builtin) (*certify.Deletion, string, error) {
	if !describable(h.Kind) {
		return nil, "", nil
	}
	p, err := certify.DeriveProfile(cfg, h)
	if err != nil {
		return nil, "", err
	}
	switch {
	case p.Dynamics != nil:
		words := fmt.Sprintf("the model store applied the intervention to its own state at the log head (horizon 0, T₀ = %d inserts) and counted the deleted inserts' ages itself; the certificate discloses %s, and α is the largest scheduled bound over every true-age configuration consistent with that disclosure", inserts, disclosureWords(how))
		return &certify.Deletion{Ages: DiscloseAges(ages, how), Steps: inserts, Disclosed: how.String(), Intervention: b}, words, nil
	case !p.Recursion:
		how = AgesNone // α does not depend on the ages: disclose none
	case !agesMonotone(p):
		return nil, "", nil
	}
	words := fmt.Sprintf("the model store applied the intervention to its own state at the log head (horizon 0) and counted the deleted inserts' ages itself; the certificate discloses %s, each at most the true age, which bounds α from above because α is non-increasing in every age for this learner", disclosureWords(how))
	return &certify.Deletion{Ages: DiscloseAges(ages, how), Intervention: b}, words, nil
}

// describable reports whether certify accepts a deletion's description
// (certify.Deletion) for a loss of kind k: the kinds whose constants the
// toolkit knows.
func describable(k stream.Kind) bool {
	return k == stream.KindLogistic || k == stream.KindQuadratic || k == stream.KindMultinomial
}

// pendingBefore counts the deletions of the pending approximate requests,
// and reports whether one of them noised the state at or after minSeq, or
// left an un-noised state (a request from before schema version 6): the
// trajectory since the oldest deleted insert then holds an intervention
// the recursion does not model.
func pendingBefore(ctx context.Context, q querier, minSeq int64) (others int, between bool, err error) {
	var n int
	err = q.QueryRowContext(ctx, `SELECT COALESCE(sum(u_size), 0), count(CASE WHEN noised = 0 OR head IS NULL OR head >= ? THEN 1 END)
		FROM forget_requests WHERE needs_noise = 1 AND resolved_by IS NULL`, minSeq).Scan(&others, &n)
	return others, n > 0, err
}

// agesMonotone reports whether α of the recursion (docs/theory.md §15,
// bound.MemoryWorstCase) is non-increasing in every deletion age, from
// public quantities only. With per-step perturbations s = η·hMax·G + r at a
// deleted insert's step and c = η·(hMax − hMin)·G + r at every other step
// from the oldest deleted insert on (r the round-off term), α at the
// request is c·Σ_{k=0}^{A_max} ρ^k + (s − c)·Σ_i ρ^{A_i} in exact
// arithmetic: making a deletion other than the oldest older changes it by
// (s − c)(ρ − 1)ρ^{A_i} ≤ 0, and the oldest by ρ^{A_max}·(c − s(1 − ρ)),
// which is ≤ 0 iff c ≤ s·(1 − ρ). The test below checks that inequality
// with a relative margin of 10⁻⁹ on each side, far above the rounding of
// its operands (each a few ulps). The bound package's results are upper
// bounds of the exact recursion (directed rounding), so α computed from
// ages at most the true ones bounds the true deviation.
func agesMonotone(p *certify.Profile) bool {
	if !p.Recursion {
		return false
	}
	r := p.RoundOff
	st := p.Constants.StepTerm() + r
	mt := p.Constants.MemoryTerm() + r
	rho := p.Contraction.Rho
	return rho < 1 && st*(1-rho)*(1-1e-9) >= mt*(1+1e-9)
}

// DiscloseAges returns the ages a certificate discloses for the true ages
// (distinct, in insert order: descending), in the same order.
//
//   - AgesPow2: each bucket [2^k, 2^(k+1)) (and {0}, {1}) that holds c of
//     the ages is disclosed as 2^k, 2^k + 1, …, 2^k + c − 1: the j-th
//     smallest true age of the bucket is at least 2^k + j − 1 (the ages are
//     distinct integers), so each disclosed age is at most the true one
//     it replaces, and the disclosed ages are distinct. What they say is
//     the number of deleted inserts in each bucket.
//   - AgesNone: m − 1, …, 0, the most recent ages possible.
func DiscloseAges(ages []int, how AgeDisclosure) []int {
	m := len(ages)
	out := make([]int, 0, m)
	if how == AgesNone {
		for i := m - 1; i >= 0; i-- {
			out = append(out, i)
		}
		return out
	}
	asc := slices.Clone(ages)
	slices.Sort(asc)
	for i := 0; i < m; {
		b := bucket(asc[i])
		j := i
		for j < m && bucket(asc[j]) == b {
			out = append(out, b+(j-i))
			j++
		}
		i = j
	}
	slices.Reverse(out)
	return out
}

// bucket is a rounded down to a power of two (0 for 0).
func bucket(a int) int {
	if a <= 1 {
		return a
	}
	b := 1
	for b*2 <= a {
		b *= 2
	}
	return b
}

// disclosureWords says in words what a certificate's ages are.
func disclosureWords(how AgeDisclosure) string {
	if how == AgesNone {
		return "only their number m, as the ages 0, …, m − 1 (the most recent possible)"
	}
	return "them rounded down to powers of two (how many are 0, 1, 2–3, 4–7, … steps old)"
}
