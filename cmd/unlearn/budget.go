package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/sign"
)

func init() { register(newBudgetCmd) }

func newBudgetCmd() *cobra.Command {
	var (
		ledgerFile, addFile, label, keyFile, pubFile, anchor string
		initLedger, asJSON                                   bool
		epsilon, delta                                       float64
	)
	cmd := &cobra.Command{
		Use:   "budget --ledger FILE [--init --epsilon E --delta D] [--add CERT] (--key NAME.key | --public-key NAME.pub)",
		Short: "Create, charge and verify a signed ledger of privacy charges",
		Long: `budget keeps a privacy budget in a ledger: an append-only, hash-chained log of the
charges of certified releases, every entry signed with the certifier's key
(see 'unlearn keygen'), composed by the toolkit's accountant.

  --init --epsilon E --delta D   create the ledger with the budget (ε, δ); needs --key.
  --add CERT                     charge the certificate CERT, which must be signed
                                 by the ledger's key (its α, applied σ and β;
                                 identified by its digest); needs --key. It exits with
                                 a non-zero status and writes nothing when the charge
                                 would exceed the budget or CERT is already charged.
  neither                        verify the ledger with --public-key (or --key).

Loading verifies the whole ledger: the chain, every signature, the seal that
makes a truncated file invalid, and that the totals follow from the charges;
any edit, deletion, reordering, truncation or trailing data is refused naming
the line and field. Then it prints the budget, what is spent (ε at the budget's
δ, the number of releases, Σβ) and what is left, and the head (SEQ:HASH).

A ledger cannot show from itself that it is the newest copy: record the head
elsewhere and pass it back with --anchor to detect a rollback to an older copy.
The charges are the certificates' claims: budget does not check a certificate
against the released state (that is 'unlearn verify'). See docs/trust.md.`,
		Example: `  unlearn budget --ledger budget.ledger --init --epsilon 2 --delta 1e-5 --key certifier.key
  unlearn budget --ledger budget.ledger --add cert.json --key certifier.key
  unlearn budget --ledger budget.ledger --public-key certifier.pub --anchor 3:5f0c…`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			changed := cmd.Flags().Changed
			if ledgerFile == "" {
				return flagError("ledger", "required")
			}
			if keyFile != "" && pubFile != "" {
				return flagError("public-key", "give --key or --public-key, not both")
			}
			if !initLedger {
				for _, name := range []string{"epsilon", "delta"} {
					if changed(name) {
						return flagError(name, "only with --init (the budget is fixed when the ledger is created)")
					}
				}
			}
			if label != "" && addFile == "" {
				return flagError("label", "only with --add")
			}
			if initLedger {
				if keyFile == "" {
					return flagError("key", "required with --init: the ledger is signed with it")
				}
				if !changed("epsilon") || math.IsNaN(epsilon) || math.IsInf(epsilon, 0) || epsilon <= 0 {
					return flagError("epsilon", "%v: the budget's ε must be finite and > 0 (required with --init)", epsilon)
				}
				if !changed("delta") || math.IsNaN(delta) || delta <= 0 || delta >= 1 {
					return flagError("delta", "%v: the budget's δ must be in (0, 1) (required with --init)", delta)
				}
			}
			if addFile != "" && keyFile == "" {
				return flagError("key", "required with --add: the new entry is signed with it")
			}
			if keyFile == "" && pubFile == "" {
				return flagError("public-key", "required to read the ledger: every entry is signed by the certifier's key, and the ledger's totals are shown only after each signature and the hash chain are verified (an edited ledger could under-report what was spent); give the certifier's public key NAME.pub (keygen wrote it beside NAME.key; it is not secret), or --key")
			}
			fs := new(paths).in("--add", addFile).in("--key", keyFile).in("--public-key", pubFile)
			if initLedger || addFile != "" {
				fs.ledger("--ledger", ledgerFile)
			} else {
				fs.in("--ledger", ledgerFile)
			}
			if err := fs.check(); err != nil {
				return err
			}
			var a ledger.Anchor
			if anchor != "" {
				var err error
				if a, err = ledger.ParseAnchor(anchor); err != nil {
					return flagError("anchor", "%v", err)
				}
			}

			var key *sign.Secret
			var pub sign.Public
			if keyFile != "" {
				var err error
				key, err = sign.LoadSecret(keyFile)
				var pe *sign.PermissionError
				if errors.As(err, &pe) && key != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", err)
				} else if err != nil {
					return fmt.Errorf("--key: %w", err)
				}
				pub = key.Public()
			} else {
				var err error
				if pub, err = sign.LoadPublic(pubFile); err != nil {
					return fmt.Errorf("--public-key: %w", err)
				}
			}

			var l *ledger.Ledger
			var err error
			switch {
			case initLedger:
				l, err = ledger.Create(ledgerFile, certify.Budget{Epsilon: epsilon, Delta: delta}, key)
				if errors.Is(err, ledger.ErrExists) {
					return flagError("ledger", "%s exists; --init never overwrites a ledger", ledgerFile)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (new ledger: ε = %.4g, δ = %.4g, key %s)\n", ledgerFile, epsilon, delta, key.KeyID())
			case key != nil:
				l, err = ledger.Open(ledgerFile, key)
			default:
				l, err = ledger.Load(ledgerFile, pub)
			}
			if err != nil {
				return fmt.Errorf("INVALID ledger: %w", err)
			}
			if anchor != "" {
				if err := l.Extends(a); err != nil {
					return fmt.Errorf("--anchor %s: %w", anchor, err)
				}
			}

			if addFile != "" {
				data, err := os.ReadFile(addFile)
				if err != nil {
					return fmt.Errorf("--add: %w", err)
				}
				c, err := certify.ParseCertificate(data)
				if err != nil {
					return fmt.Errorf("--add %s: %w", addFile, err)
				}
				// Only a certificate the ledger's owner signed is charged: an
				// unsigned or foreign certificate could spend (or fake) budget.
				if err := certify.VerifySignature(c, key.Public()); err != nil {
					return fmt.Errorf("--add %s: refused, %s is unchanged: the certificate must be signed by the ledger's key %s (certify --key): %w", addFile, ledgerFile, key.KeyID(), err)
				}
				r := ledger.ReleaseOf(c)
				r.Label = label
				e, err := l.Append(r)
				if err != nil {
					return fmt.Errorf("--add %s: refused, %s is unchanged: %w", addFile, ledgerFile, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "charged %s as entry %d of %s\n", addFile, e.Seq, ledgerFile)
			}
			if asJSON {
				return writeBudgetJSON(cmd.OutOrStdout(), l)
			}
			writeBudget(cmd.OutOrStdout(), l)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&ledgerFile, "ledger", "", "ledger file (required)")
	f.BoolVar(&initLedger, "init", false, "create the ledger (with --epsilon, --delta and --key)")
	f.Float64Var(&epsilon, "epsilon", 0, "the budget's total ε > 0 (with --init)")
	f.Float64Var(&delta, "delta", 0, "the budget's total δ ∈ (0, 1), which also absorbs the releases' β (with --init)")
	f.StringVar(&addFile, "add", "", "certificate to charge to the ledger (with --key)")
	f.StringVar(&label, "label", "", "label of the --add entry (default: the certificate digest's first 12 characters)")
	f.StringVar(&keyFile, "key", "", "the certifier's secret key NAME.key (to create or append; also verifies)")
	f.StringVar(&pubFile, "public-key", "", "the certifier's public key NAME.pub (to verify)")
	f.StringVar(&anchor, "anchor", "", "a head SEQ:HASH recorded earlier: refuse a ledger that does not extend it (rollback)")
	f.BoolVar(&asJSON, "json", false, "print the status as JSON (full precision)")
	return cmd
}

// writeBudget prints a ledger's status for a person.
func writeBudget(w io.Writer, l *ledger.Ledger) {
	b, t := l.Budget(), l.Totals()
	fmt.Fprintf(w, "ledger      %s (valid)\n", l.Path())
	fmt.Fprintf(w, "key id      %s\n", l.KeyID())
	fmt.Fprintf(w, "budget      ε = %.4g, δ = %.4g\n", b.Epsilon, b.Delta)
	fmt.Fprintf(w, "spent       ε = %.4g at δ = %.4g, %d releases, Σβ = %.4g\n", t.Epsilon, b.Delta, t.Releases, t.Beta)
	fmt.Fprintf(w, "left        ε = %.4g (of %.4g), δ − Σβ = %.4g\n", b.Epsilon-t.Epsilon, b.Epsilon, b.Delta-t.Beta)
	fmt.Fprintf(w, "head        %s\n", l.Head())
	for _, e := range l.Entries() {
		r := e.Release
		fmt.Fprintf(w, "  %3d  %-14s α = %-9.4g σ = %-9.4g β = %-9.4g ε so far = %.4g\n", e.Seq, r.Label, r.Alpha, r.Sigma, r.Beta, e.Totals.Epsilon)
	}
}

// budgetStatus is the --json output.
type budgetStatus struct {
	Ledger  string          `json:"ledger"`
	KeyID   string          `json:"key_id"`
	Budget  budgetPair      `json:"budget"`
	Spent   budgetSpent     `json:"spent"`
	Left    budgetPair      `json:"left"`
	Head    ledger.Anchor   `json:"head"`
	Entries []budgetEntryJS `json:"entries"`
}

type budgetPair struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

type budgetSpent struct {
	Releases int     `json:"releases"`
	Epsilon  float64 `json:"epsilon"`
	Beta     float64 `json:"beta"`
}

type budgetEntryJS struct {
	Seq         int         `json:"seq"`
	Label       string      `json:"label"`
	Certificate string      `json:"certificate"`
	Alpha       float64     `json:"alpha"`
	Sigma       float64     `json:"sigma"`
	Beta        float64     `json:"beta"`
	Totals      budgetSpent `json:"totals"`
	Hash        string      `json:"hash"`
}

func writeBudgetJSON(w io.Writer, l *ledger.Ledger) error {
	b, t := l.Budget(), l.Totals()
	s := budgetStatus{
		Ledger: l.Path(), KeyID: l.KeyID(),
		Budget:  budgetPair{b.Epsilon, b.Delta},
		Spent:   budgetSpent{t.Releases, t.Epsilon, t.Beta},
		Left:    budgetPair{b.Epsilon - t.Epsilon, b.Delta - t.Beta},
		Head:    l.Head(),
		Entries: []budgetEntryJS{},
	}
	for _, e := range l.Entries() {
		r := e.Release
		s.Entries = append(s.Entries, budgetEntryJS{e.Seq, r.Label, r.Certificate, r.Alpha, r.Sigma, r.Beta,
			budgetSpent{e.Totals.Releases, e.Totals.Epsilon, e.Totals.Beta}, e.Hash})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
