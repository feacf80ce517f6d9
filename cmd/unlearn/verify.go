package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"unlearn/certify"
)

func newVerifyCmd() *cobra.Command {
	var certFile, beforeFile, afterFile string
	cmd := &cobra.Command{
		Use:   "verify --certificate FILE --after FILE [--before FILE]",
		Short: "Check a certificate against the states before and after the noise",
		Long: `verify recomputes a certificate written by 'unlearn certify' and checks it
against the state snapshots: the format (version) and digest; α from its recorded
inputs (the bound's constants, contraction, memory model and ages, or the given
value), σ from α, ε, δ and the calibration, σ ≥ the required σ, the zCDP cost,
the guarantee (ε, δ + β), the provenance and statement; the SHA-256 of both
snapshots; that only w (by noise of the claimed size, a χ² test at
false-rejection rate 1e-10) and the memory (as the policy says: empty after a
reset, built from retained ids only after a rebuild, unchanged when kept)
changed; and that what the certificate covers matches the released memory.

It exits with status 0 and prints a summary when the certificate is valid, and
with a non-zero status and the reason (the certificate field that fails) when
it is not. A redacted certificate (--public-certificate of certify) is checked
without --before.

A valid certificate is consistent, not necessarily true: provenance labels and
the sampler's name are the certifier's claims. Read its warnings.`,
		Example: `  unlearn verify --certificate cert.json --before state.json --after released.json
  unlearn verify --certificate cert.public.json --after released.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if certFile == "" {
				return flagError("certificate", "required")
			}
			if afterFile == "" {
				return flagError("after", "required")
			}
			data, err := os.ReadFile(certFile)
			if err != nil {
				return err
			}
			cert, err := certify.ParseCertificate(data)
			if err != nil {
				return fmt.Errorf("%s: %w", certFile, err)
			}
			after, err := os.ReadFile(afterFile)
			if err != nil {
				return err
			}
			var before []byte
			if beforeFile != "" {
				if before, err = os.ReadFile(beforeFile); err != nil {
					return err
				}
			} else if !cert.Redacted {
				return flagError("before", "required: the certificate records the state before the noise (only a redacted certificate verifies without it)")
			}
			rep, err := certify.Verify(cert, before, after)
			if err != nil {
				return fmt.Errorf("INVALID certificate %s: %w", certFile, err)
			}
			fmt.Fprint(cmd.OutOrStdout(), rep.String())
			fmt.Fprintf(cmd.OutOrStdout(), "VALID: %s\n", certFile)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&certFile, "certificate", "", "certificate to verify (required)")
	f.StringVar(&beforeFile, "before", "", "snapshot of the state before the noise (required unless the certificate is redacted)")
	f.StringVar(&afterFile, "after", "", "snapshot of the released state (required)")
	return cmd
}
