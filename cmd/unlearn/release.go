package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/noise"
	"unlearn/sign"
	"unlearn/store"
)

func init() { register(newReleaseCmd) }

func newReleaseCmd() *cobra.Command {
	var (
		dir, out, certFile, keyFile, ledgerFile, memory, calibration string
		epsilon, delta                                               float64
		noLedger                                                     bool
		seed                                                         uint64
	)
	cmd := &cobra.Command{
		Use:   "release --store DIR --epsilon E --delta D --out FILE --certificate FILE [--key NAME.key --ledger FILE]",
		Short: "Publish a certified release of a model store's state, charged to its privacy ledger",
		Long: `release publishes the model store's current state through the toolkit's certified
release (docs/theory.md §15) and writes the release (unlearn-release/v1) and its
certificate (unlearn-certificate/v2):

  exact     every forget so far was served by replay (or resolved): the
            state is the counterfactual bit for bit and is released as it
            is, memory included, with α = 0 and no noise;
  refused   an approximate forget is pending: the state is the noised,
            certified release that forget published (kept in the store:
            'unlearn releases --get N', named in the message), continued on
            retained data; serve that release, or resolve the request
            ('unlearn forget --resolve') for an exact one. A new noised
            release of it would be a second guarantee at the diameter α,
            charged again.

After a noised release, the expected noise norm σ·√d is printed beside the
radius W' that bounds every un-noised model (both public); a warning says
when the noise is larger than any model can be.

With --key the certificate is signed; with --ledger (and --key) the release is
charged to that ledger first (unlearn budget --init creates one), and refused —
nothing written — when it would exceed the budget. The store's own ledger,
DIR/budget.ledger, is used by default when it exists. The store keeps each
release and its certificate with the log position of the released state
('unlearn releases' lists and fetches them); a later forget of a sample that
state included erases the kept copy (copies published elsewhere cannot be
recalled). The noise comes from the secure sampler; --insecure-seeded SEED is for
experiments only.`,
		Example: `  unlearn keygen --out certifier
  unlearn budget --ledger budget.ledger --init --epsilon 4 --delta 1e-5 --key certifier.key
  unlearn release --store model --epsilon 1 --delta 1e-5 --out release.json \
      --certificate cert.json --key certifier.key --ledger budget.ledger`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			changed := cmd.Flags().Changed
			for _, r := range []struct{ name, v string }{{"store", dir}, {"out", out}, {"certificate", certFile}} {
				if r.v == "" {
					return flagError(r.name, "required")
				}
			}
			for _, name := range []string{"epsilon", "delta"} {
				if !changed(name) {
					return flagError(name, "required")
				}
			}
			if ledgerFile != "" && keyFile == "" {
				return flagError("key", "required with --ledger: the ledger entry is signed with it")
			}
			// Checked before the store is opened and anything charged.
			fs := new(paths).store("--store", dir).in("--key", keyFile).ledger("--ledger", ledgerFile)
			if own := filepath.Join(dir, storeLedger); ledgerFile == "" && fileExists(own) {
				fs.ledger("--ledger (the store's own)", own)
			}
			if err := fs.out("--out", out).out("--certificate", certFile).check(); err != nil {
				return err
			}
			spec := certify.Spec{Epsilon: epsilon, Delta: delta, Toolkit: "unlearn " + version}
			var err error
			if spec.Calibration, err = noise.ParseCalibration(calibration); err != nil {
				return flagError("calibration", "%q: want analytic or classic", calibration)
			}
			if spec.Memory, err = certify.ParseMemoryPolicy(memory); err != nil || spec.Memory == certify.Exact {
				return flagError("memory", "%q: want reset or rebuild", memory)
			}
			if changed("insecure-seeded") {
				spec.Sampler = noise.NewSeededSampler(seed, noise.SamplerOptions{})
			}
			var key *sign.Secret
			if keyFile != "" {
				if key, err = sign.LoadSecret(keyFile); err != nil {
					return flagError("key", "%v", err)
				}
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			// A service that owns the store is its only writer (store.Own).
			if err := s.ClaimWriter(); err != nil {
				return err
			}
			// The store's own ledger, DIR/budget.ledger, is used when it
			// exists (create it with unlearn budget --init).
			if ledgerFile == "" {
				if p := filepath.Join(dir, storeLedger); fileExists(p) {
					if keyFile == "" {
						return flagError("key", "required: the store has a budget ledger (%s), and every release is charged to it, signed with the key", p)
					}
					ledgerFile = p
				}
			}
			r, err := s.Release(spec)
			if err != nil {
				if se := new(certify.SpecError); asSpec(err, &se) && se.Field == "Config.Radius" {
					return flagError("store", "a noised release is needed (an approximate forget is pending) and the store's learner has no radius: no α is proved; serve deletions exactly (forget without --max-replay) or create the store with --radius")
				}
				return certifyFlagError(err)
			}
			if key != nil {
				if err := certify.Sign(r.Certificate, key); err != nil {
					return err
				}
			}
			switch {
			case r.Certificate.Exact:
				// α = 0 costs nothing: not charged, and re-releasing the
				// same exact state is harmless (it is the same file).
				if ledgerFile != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "exact release (α = 0): costs nothing, not charged to the ledger")
				}
				ledgerFile = ""
			case ledgerFile == "" && !noLedger:
				return flagError("ledger", "required for a noised release: repeated releases of one state compose (averaging them removes the noise), so each must be charged to a budget; create one with 'unlearn budget --ledger %s --init …' (the store's own, used by default) or pass --no-ledger for experiments", filepath.Join(dir, storeLedger))
			}
			if ledgerFile != "" {
				l, err := ledger.Open(ledgerFile, key)
				if err != nil {
					return flagError("ledger", "%v", err)
				}
				// Charged before anything is written: a failure after this
				// point over-charges, never publishes uncharged.
				e, err := l.Append(ledger.ReleaseOf(r.Certificate))
				if err != nil {
					return fmt.Errorf("refused, nothing written: %w", err)
				}
				printCharge(cmd.ErrOrStderr(), e.Seq, ledgerFile, l, r.Certificate)
			}
			// Kept in the store after the charge and before the files are
			// written: a kill -9 in between over-charges, or leaves a kept
			// release that was not written out (fetch it with 'unlearn
			// releases --get'), never an uncharged release.
			kept, err := s.Keep(r)
			if err != nil {
				if errors.Is(err, store.ErrStaleRelease) {
					return fmt.Errorf("nothing written (the charge stands): %w; run release again", err)
				}
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "kept as release %d of the store (log position %d); a forget of a sample it includes erases it\n", kept.ID, kept.Head)
			if err := writeFileAtomic(out, kept.File); err != nil {
				return err
			}
			if err := writeFileAtomic(certFile, kept.Certificate); err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), r.Certificate.Summary())
			fmt.Fprintf(cmd.OutOrStdout(), "  model        %s\n", modelSize(s.Header().D, r.Certificate.Dim))
			printReleasePath(cmd.OutOrStdout(), r.Path, r.Certificate)
			printUtility(cmd.ErrOrStderr(), r.Certificate, r.Release)
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s and %s\n", out, certFile)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "model store directory (required)")
	f.StringVarP(&out, "out", "o", "", "release to write (required)")
	f.StringVar(&certFile, "certificate", "", "certificate to write (required)")
	f.Float64Var(&epsilon, "epsilon", 0, "privacy parameter ε > 0 (required)")
	f.Float64Var(&delta, "delta", 0, "privacy parameter δ ∈ (0, 1) (required)")
	f.StringVar(&memory, "memory", "reset", "memory released with noise: reset (empty) or rebuild (from the noised w and retained data)")
	f.StringVar(&calibration, "calibration", "analytic", "noise calibration: analytic or classic (ε < 1)")
	f.StringVar(&keyFile, "key", "", "sign the certificate with this key (unlearn keygen)")
	f.StringVar(&ledgerFile, "ledger", "", "charge the release to this ledger (needs --key); default: the store's own budget.ledger when it exists")
	f.BoolVar(&noLedger, "no-ledger", false, "allow a noised release without a ledger (experiments only: repeated releases compose and are then not counted)")
	f.Uint64Var(&seed, "insecure-seeded", 0, "use the SEEDED sampler with this seed: reproducible, for experiments only, NOT for deployment")
	return cmd
}

// asSpec reports whether err is a *certify.SpecError.
func asSpec(err error, se **certify.SpecError) bool {
	e, ok := err.(*certify.SpecError)
	if ok {
		*se = e
	}
	return ok
}

// storeLedger is the name of a model store's own budget ledger.
const storeLedger = "budget.ledger"

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// printReleasePath prints the release's path. A derived α that the
// diameter 2W' caps (the recursion's bound is not smaller, e.g. ρ ≥ 1: no
// contraction) is the diameter path in effect: say so, why, and what the
// user can change.
func printReleasePath(w io.Writer, path string, c *certify.Certificate) {
	s := c.Sensitivity
	if path != "derived" || s.Binding == "" || s.Binding == "recursion" {
		fmt.Fprintf(w, "path: %s\n", path)
		return
	}
	why := s.Why
	if why == "" {
		why = "no recursion bound applies"
	}
	fmt.Fprintf(w, "path: %s (the derived bound is not smaller: %s)\n", s.Binding, why)
	fmt.Fprintln(w, "  to get a smaller α: create the store with the pair guard (init --pair-angle, --pair-min, --pair-max) so that the recursion contracts (ρ < 1), "+
		"or serve forgets exactly (a larger forget --max-replay, or none) so that no approximate request is pending")
}

// printCharge reports a ledger charge: the ε the ledger's releases spend
// together at its budget's δ (composed exactly as Gaussian DP: the
// charge is μ = α/σ of the σ applied, docs/theory.md §10.1), and why
// that may differ from the ε the certificate states: the ledger converts
// at its own δ (a larger δ gives a smaller ε for the same release), and
// the calibration rounds σ up (at the certificate's own δ the charge is
// at most its ε, within 0.1%).
func printCharge(w io.Writer, seq int, file string, l *ledger.Ledger, c *certify.Certificate) {
	tot, b := l.Totals(), l.Budget()
	fmt.Fprintf(w, "charged entry %d of %s: spent ε = %.4g of %.4g at δ = %.4g (the releases composed exactly as Gaussian DP, μ = α/σ each: docs/theory.md §10.1)\n", seq, file, tot.Epsilon, b.Epsilon, b.Delta)
	if b.Delta != c.Delta {
		fmt.Fprintf(w, "  the certificate states (ε, δ) = (%v, %v); the ledger counts the same Gaussian release at its budget's δ = %v, where its ε differs (smaller for a larger δ)\n", c.Epsilon, c.Delta, b.Delta)
	}
}
