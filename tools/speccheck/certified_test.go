package speccheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/stream"
	"unlearn/unlearn"
)

// certifiable returns a certifiable learner's configuration for a loss
// whose Hessians have their spectrum in [c0, c1] (docs/theory.md §15.2):
// radius W, sample bound B, and a pair guard whose window just contains
// [c0, c1] (as certify's own tests build it).
func certifiable(d int, c0, c1 float64) olbfgs.Config {
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.StepSize, cfg.InitialScale = 3, 0.2, 1/c1
	cfg.Radius, cfg.SampleBound = 4, 2
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, c0*(1-1e-9), c1*(1+1e-9)
	return cfg
}

// scaledIdentity returns c·I of size d.
func scaledIdentity(d int, c float64) [][]float64 {
	m := make([][]float64, d)
	for i := range m {
		m[i] = make([]float64, d)
		m[i][i] = c
	}
	return m
}

// makeCertified fills o.certificates, o.releases, o.ledgers, o.snapshots
// ["certifiable"] and o.publicKey with real documents: certified releases
// of every source of α (derived, diameter, exact, assumed) and both memory
// policies, made with certify.Wrap and certify.Certify on a certifiable
// learner with the seeded sampler (tests only), some signed with a fresh
// Ed25519 key (sign.Generate, certify.Sign), each verified with
// certify.Verify against its release; and ledgers (package ledger) that
// charge them. dir is a scratch folder. It returns the certificates in a
// fixed order, for the accountant.
func makeCertified(o *outputs, dir string) ([]*certify.Certificate, error) {
	const d = 3
	c0, c1 := 1.0, 1.0
	loss, err := stream.NewQuadratic(scaledIdentity(d, c0), scaledIdentity(d, c1))
	if err != nil {
		return nil, err
	}
	cfg := certifiable(d, c0, c1)
	var prefix []stream.Event
	for i := 1; i <= 40; i++ {
		a := []float64{float64(i%5) / 5, float64(i%3) / 3, float64(i%7) / 7}
		prefix = append(prefix, stream.InsertEvent(int64(i), a, float64(i%4)/4))
	}
	actual, err := olbfgs.New(cfg, loss)
	if err != nil {
		return nil, err
	}
	if err := actual.KeepCheckpoints(10); err != nil {
		return nil, err
	}
	if err := actual.Run(prefix); err != nil {
		return nil, err
	}
	hdr, err := certify.HeaderOf(loss)
	if err != nil {
		return nil, err
	}
	hdr.Meta = map[string]json.RawMessage{"generator": json.RawMessage(`"speccheck"`)} // released headers drop it
	if o.snapshots["certifiable"], err = olbfgs.MarshalSnapshot(actual, hdr); err != nil {
		return nil, err
	}

	key, err := sign.Generate()
	if err != nil {
		return nil, err
	}
	o.key, o.publicKey = key, key.Public()
	o.keys["public"], o.keys["secret"] = key.Public().MarshalPublic(), key.MarshalSecret()
	type made struct {
		name   string
		rel    *certify.Release
		cert   *certify.Certificate
		signed bool
	}
	var all []made
	seed := uint64(0)
	spec := func() certify.Spec {
		seed++
		return certify.Spec{Epsilon: 1, Delta: 1e-5, Header: &hdr,
			Sampler: noise.NewSeededSampler(seed, noise.SamplerOptions{})}
	}

	// Wrapped interventions: α derived per request, or exact by replay.
	recent, old := stream.NewIDSet(35), stream.NewIDSet(12, 20)
	for _, w := range []struct {
		name   string
		op     unlearn.Operator
		u      stream.IDSet
		memory certify.MemoryPolicy
		signed bool
	}{
		{"derived noop", unlearn.NoOp(), old, certify.Reset, true},
		{"derived param-only rebuild", unlearn.ParamOnly(), recent, certify.Rebuild, false},
		{"derived retain-ft", unlearn.RetainFineTune(), old, certify.Reset, false},
		{"derived window", unlearn.WindowReplay(10, "window-10", "Window replay 10"), old, certify.Reset, false},
		{"derived drop-refill", unlearn.DropRefill(), recent, certify.Reset, false},
		{"exact window", unlearn.WindowReplay(10, "window-10", "Window replay 10"), recent, certify.Reset, true},
		{"exact oracle", unlearn.Oracle(), old, certify.Rebuild, false},
	} {
		s := spec()
		s.Header = nil // Wrap releases under the loss's own header
		s.Memory = w.memory
		c, err := certify.Wrap(w.op, s)
		if err != nil {
			return nil, err
		}
		rel, cert, _, err := c.ApplyCertified(unlearn.Request{Actual: actual, Prefix: prefix, U: w.u})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.name, err)
		}
		all = append(all, made{w.name, rel, cert, w.signed})
	}

	// Certify on a state: the diameter bound, a derived α from a
	// description of the request, and an assumed α with β and a rebuilt
	// memory.
	s := spec()
	rel, cert, err := certify.Certify(actual, s)
	if err != nil {
		return nil, fmt.Errorf("diameter: %w", err)
	}
	all = append(all, made{"diameter", rel, cert, false})
	s = spec()
	s.Deletion = &certify.Deletion{Ages: certify.AgesOf(prefix, old), Intervention: unlearn.Builtin{Kind: unlearn.KindMemoryReset}}
	s.Epsilon, s.Calibration = 0.5, noise.Classic
	if rel, cert, err = certify.Certify(actual, s); err != nil {
		return nil, fmt.Errorf("derived classic: %w", err)
	}
	all = append(all, made{"derived classic", rel, cert, false})
	s = spec()
	s.Alpha, s.Beta = &certify.Given{Alpha: 0.3, Method: "speccheck"}, 1e-7
	s.Memory, s.Retained = certify.Rebuild, stream.LastInserts(prefix, cfg.Memory)
	s.Deletions, s.Intervention = 2, "custom"
	if rel, cert, err = certify.Certify(actual, s); err != nil {
		return nil, fmt.Errorf("assumed: %w", err)
	}
	all = append(all, made{"assumed rebuild", rel, cert, true})

	// A logistic learner with a radius and a sample bound but no pair
	// guard: the recursion is unavailable, and a derived α is the diameter
	// (alpha.binding "diameter", with the reason).
	lloss, err := stream.NewLogistic(d, 0.05)
	if err != nil {
		return nil, err
	}
	lcfg := olbfgs.DefaultConfig(d)
	lcfg.Memory, lcfg.Radius, lcfg.SampleBound = 3, 4, 1
	var lprefix []stream.Event
	for i := 1; i <= 30; i++ {
		x := []float64{float64(i%5) / 10, -float64(i%3) / 10, float64(i%7) / 14}
		lprefix = append(lprefix, stream.InsertEvent(int64(i), x, float64(1-2*(i%2))))
	}
	lstate, err := olbfgs.Replay(lcfg, lloss, lprefix)
	if err != nil {
		return nil, err
	}
	s = spec()
	s.Header = nil
	lu := stream.NewIDSet(7)
	s.Deletion = &certify.Deletion{Ages: certify.AgesOf(lprefix, lu), Intervention: unlearn.Builtin{Kind: unlearn.KindPairDrop}}
	s.Memory, s.Retained = certify.Rebuild, stream.Counterfactual(stream.LastInserts(lprefix, lcfg.Memory), lu)
	if rel, cert, err = certify.Certify(lstate, s); err != nil {
		return nil, fmt.Errorf("logistic: %w", err)
	}
	all = append(all, made{"derived logistic unguarded", rel, cert, false})

	led, err := ledger.Create(filepath.Join(dir, "budget.ledger"), certify.Budget{Epsilon: 20, Delta: 1e-4}, key)
	if err != nil {
		return nil, err
	}
	if o.ledgers["empty"], err = os.ReadFile(led.Path()); err != nil {
		return nil, err
	}
	var certs []*certify.Certificate
	for _, m := range all {
		if m.signed {
			if err := certify.Sign(m.cert, key); err != nil {
				return nil, err
			}
		}
		b, err := m.rel.Marshal()
		if err != nil {
			return nil, err
		}
		// Verify against the release (and the key, when signed): the
		// documents validated below are ones the toolkit accepts.
		var pub certify.PublicKey
		if m.signed {
			pub = key.Public()
		}
		if _, err := certify.Verify(m.cert, b, pub); err != nil {
			return nil, fmt.Errorf("%s: verify: %w", m.name, err)
		}
		if o.certificates[m.name], err = m.cert.MarshalIndent(); err != nil {
			return nil, err
		}
		o.releases[m.name] = b
		if _, err := led.Append(ledger.ReleaseOf(m.cert)); err != nil {
			return nil, fmt.Errorf("%s: ledger: %w", m.name, err)
		}
		certs = append(certs, m.cert)
	}
	// One charge over the budget is refused and leaves the file as it was.
	if _, err := led.Append(ledger.Release{Label: "too much", Certificate: "x", Alpha: 1, Sigma: 0.01}); !errors.Is(err, ledger.ErrBudget) {
		return nil, fmt.Errorf("ledger: a charge over the budget gave %v, want ErrBudget", err)
	}
	if o.ledgers["charged"], err = os.ReadFile(led.Path()); err != nil {
		return nil, err
	}
	for name, b := range o.ledgers {
		if _, err := ledger.Parse(name, b, key.Public()); err != nil {
			return nil, err
		}
	}
	return certs, nil
}
