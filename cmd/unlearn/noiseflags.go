package main

import (
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/noise"
	"unlearn/sign"
	"unlearn/store"
)

// noiseFlags are the flags of the certified release that forget's
// approximate path makes of the intervention's output (the store keeps only
// that noised state): the privacy target, the noise, the signing key and
// the ledger it is charged to, by the names 'unlearn release' uses.
type noiseFlags struct {
	epsilon, delta                           float64
	memory, calibration, keyFile, ledgerFile string
	noLedger                                 bool
	seed                                     uint64

	key *sign.Secret
}

func (n *noiseFlags) register(f *pflag.FlagSet) {
	f.Float64Var(&n.epsilon, "epsilon", 0, "approximate path: privacy parameter ε > 0 of the noised state's release (required with --max-replay)")
	f.Float64Var(&n.delta, "delta", 0, "approximate path: privacy parameter δ ∈ (0, 1) (required with --max-replay)")
	f.StringVar(&n.memory, "memory", "reset", "approximate path: memory released with the noised w: reset or rebuild (the state kept has an empty memory either way)")
	f.StringVar(&n.calibration, "calibration", "analytic", "approximate path: noise calibration: analytic or classic (ε < 1)")
	f.StringVar(&n.keyFile, "key", "", "approximate path: sign the certificate with this key (unlearn keygen)")
	f.StringVar(&n.ledgerFile, "ledger", "", "approximate path: charge the release to this ledger (needs --key); default: the store's own budget.ledger when it exists")
	f.BoolVar(&n.noLedger, "no-ledger", false, "approximate path: allow the release without a ledger (experiments only)")
	f.Uint64Var(&n.seed, "insecure-seeded", 0, "approximate path: use the SEEDED sampler with this seed: reproducible, for experiments only, NOT for deployment")
}

// flagNames are the flags that only the approximate path reads.
var noiseFlagNames = []string{"epsilon", "delta", "memory", "calibration", "key", "ledger", "no-ledger", "insecure-seeded"}

// spec returns the release's certify.Spec and loads the key, after
// checking every flag; dir is the store (its own ledger is the default).
func (n *noiseFlags) spec(fl *pflag.FlagSet, dir string) (certify.Spec, error) {
	for _, name := range []string{"epsilon", "delta"} {
		if !fl.Changed(name) {
			return certify.Spec{}, flagError(name, "required with --max-replay: the approximate path keeps the intervention's output only noised, as a certified release")
		}
	}
	spec := certify.Spec{Epsilon: n.epsilon, Delta: n.delta, Toolkit: "unlearn " + version}
	var err error
	if spec.Calibration, err = noise.ParseCalibration(n.calibration); err != nil {
		return spec, flagError("calibration", "%q: want analytic or classic", n.calibration)
	}
	if spec.Memory, err = certify.ParseMemoryPolicy(n.memory); err != nil || spec.Memory == certify.Exact {
		return spec, flagError("memory", "%q: want reset or rebuild", n.memory)
	}
	if fl.Changed("insecure-seeded") {
		spec.Sampler = noise.NewSeededSampler(n.seed, noise.SamplerOptions{})
	}
	if n.ledgerFile != "" && n.keyFile == "" {
		return spec, flagError("key", "required with --ledger: the ledger entry is signed with it")
	}
	if n.keyFile != "" {
		if n.key, err = sign.LoadSecret(n.keyFile); err != nil {
			return spec, flagError("key", "%v", err)
		}
	}
	if n.ledgerFile == "" {
		if p := filepath.Join(dir, storeLedger); fileExists(p) {
			if n.keyFile == "" {
				return spec, flagError("key", "required: the store has a budget ledger (%s), and the approximate path's release is charged to it, signed with the key", p)
			}
			n.ledgerFile = p
		}
	}
	if n.ledgerFile == "" && !n.noLedger {
		return spec, flagError("ledger", "required for the approximate path: it publishes a noised release of the state, which must be charged to a budget; create one with 'unlearn budget --ledger %s --init …' (the store's own, used by default) or pass --no-ledger for experiments", filepath.Join(dir, storeLedger))
	}
	if n.ledgerFile != "" {
		if _, err := ledger.Open(n.ledgerFile, n.key); err != nil {
			return spec, flagError("ledger", "%v", err)
		}
	}
	return spec, nil
}

// onRelease signs the release's certificate and charges the ledger, inside
// the forget's transaction (store.ForgetOptions.OnRelease): a refused charge
// refuses the request, and nothing changes.
func (n *noiseFlags) onRelease(w io.Writer) func(*store.Released) error {
	return func(r *store.Released) error {
		if n.key != nil {
			if err := certify.Sign(r.Certificate, n.key); err != nil {
				return err
			}
		}
		if n.ledgerFile == "" {
			return nil
		}
		l, err := ledger.Open(n.ledgerFile, n.key)
		if err != nil {
			return err
		}
		e, err := l.Append(ledger.ReleaseOf(r.Certificate))
		if err != nil {
			return err
		}
		printCharge(w, e.Seq, n.ledgerFile, l, r.Certificate)
		return nil
	}
}
