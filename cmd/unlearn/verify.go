package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/sign"
)

func newVerifyCmd() *cobra.Command {
	var certFile, releaseFile, pubFile string
	cmd := &cobra.Command{
		Use:   "verify --certificate FILE --release FILE [--public-key NAME.pub]",
		Short: "Check a certificate against the release it covers",
		Long: `verify checks a certificate written by 'unlearn certify' (or the model store's
release) against the release file it covers.

With --public-key it first checks the certifier's Ed25519 signature (a
certificate signed by another key, or edited after signing, is refused). It
then recomputes from the certificate's public inputs everything that follows
from them — α (the learner's constants are derived again from the RELEASE's
configuration and loss header, so none of them can be edited), σ from α, ε, δ
and the calibration, the guarantee (ε, δ + β), the provenance, the statement
and warnings — and cross-checks the certificate against the release: the
SHA-256 of the release file, the configuration (η, τ, γ₀, radius, pair guard),
the dimension, the deletion count against the recorded ages, the sampler
against "deployable", and the released memory against the memory policy.

It exits with status 0 and prints a summary when the certificate is valid, and
with a non-zero status and the certificate field that fails when it is not.

What no verifier can check from public data is printed as such: that the
noise was drawn as stated, and that the state came from the stated history. A
signature says who claims them. Read the warnings: an assumed α is the
certifier's word.`,
		Example: `  unlearn verify --certificate cert.json --release release.json --public-key certifier.pub`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if certFile == "" {
				return flagError("certificate", "required")
			}
			if releaseFile == "" {
				return flagError("release", "required")
			}
			data, err := os.ReadFile(certFile)
			if err != nil {
				return err
			}
			cert, err := certify.ParseCertificate(data)
			if err != nil {
				return fmt.Errorf("%s: %w", certFile, err)
			}
			rel, err := os.ReadFile(releaseFile)
			if err != nil {
				return err
			}
			var pub certify.PublicKey
			if pubFile != "" {
				p, err := sign.LoadPublic(pubFile)
				if err != nil {
					return flagError("public-key", "%v", err)
				}
				pub = p
			}
			rep, err := certify.Verify(cert, rel, pub)
			if err != nil {
				return fmt.Errorf("INVALID certificate %s: %w", certFile, err)
			}
			fmt.Fprint(cmd.OutOrStdout(), rep.String())
			fmt.Fprintf(cmd.OutOrStdout(), "VALID: %s\n", certFile)
			if pubFile == "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: no --public-key: the issuer was not authenticated")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&certFile, "certificate", "", "certificate to verify (required)")
	f.StringVar(&releaseFile, "release", "", "the release file the certificate covers (required)")
	f.StringVar(&pubFile, "public-key", "", "the certifier's public key (unlearn keygen): check the signature first")
	return cmd
}
