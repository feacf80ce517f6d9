package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/sign"
)

// errNotVerified is the error of a verification that did not check who
// issued the certificate (no --public-key, no --integrity-only).
var errNotVerified = errors.New("NOT VERIFIED")

func newVerifyCmd() *cobra.Command {
	var (
		certFile, releaseFile, pubFile, receiptFile, nonce string
		integrityOnly                                      bool
		ids                                                []int64
		keys                                               []string
	)
	cmd := &cobra.Command{
		Use:   "verify (--certificate FILE --release FILE (--public-key NAME.pub | --integrity-only) | --receipt FILE --public-key NAME.pub [--nonce HEX --ids ... --keys ...])",
		Short: "Check a certificate against the release it covers, or a deletion receipt",
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

It exits with status 0 and prints VALID when the signature and every check
hold, and with a non-zero status and the certificate field that fails when
they do not.

Without --public-key nothing says who made the certificate: anyone can write
one that passes every other check, a forged "exact" certificate (no noise) for
a release of their own included. verify then prints what it checked, says NOT
VERIFIED and exits with status 1. --integrity-only asks for that check alone
and exits with status 0 when it holds, printing CONSISTENT (integrity only),
never VALID: use it to inspect a certificate, not to accept a release.

What no verifier can check from public data is printed as such: that the
noise was drawn as stated, and that the state came from the stated history. A
signature says who claims them. Read the warnings: an assumed α is the
certifier's word.

--receipt FILE checks a deletion receipt of 'unlearn serve' offline: that it is
signed by the certifier's key (--public-key, required), unedited, and well
formed; it then prints what the receipt says: the request, when it was
received, its deadline and when it was served, exact or approximate (and what
is still pending), the number of records, the kept releases erased and the
store's log position after. With --nonce (the hex nonce of the request) and
the request's --ids and --keys it also checks the receipt's commitment: that
the receipt covers exactly those records.`,
		Example: `  unlearn verify --certificate cert.json --release release.json --public-key certifier.pub
  unlearn verify --certificate cert.json --release release.json --integrity-only
  unlearn verify --receipt receipt.json --public-key certifier.pub`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if receiptFile != "" {
				if certFile != "" || releaseFile != "" {
					return flagError("receipt", "give either --receipt or --certificate and --release")
				}
				return verifyReceipt(cmd, receiptFile, pubFile, nonce, ids, keys)
			}
			for _, name := range []string{"nonce", "ids", "keys"} {
				if cmd.Flags().Changed(name) {
					return flagError(name, "only with --receipt")
				}
			}
			if certFile == "" {
				return flagError("certificate", "required")
			}
			if releaseFile == "" {
				return flagError("release", "required")
			}
			if integrityOnly && pubFile != "" {
				return flagError("integrity-only", "not with --public-key (which checks the signature too)")
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
			w := cmd.OutOrStdout()
			fmt.Fprint(w, rep.String())
			switch {
			case rep.Authenticated:
				fmt.Fprintf(w, "VALID: %s\n", certFile)
				return nil
			case integrityOnly:
				fmt.Fprintf(w, "CONSISTENT (integrity only): %s matches the release and its public inputs; who issued it was NOT verified (anyone can write such a certificate)\n", certFile)
				return nil
			}
			fmt.Fprintf(w, "NOT VERIFIED: %s is consistent with the release, but without --public-key nothing checks who issued it (anyone can write such a certificate)\n", certFile)
			return fmt.Errorf("%w: %s: give the certifier's public key (--public-key NAME.pub), or --integrity-only to check consistency alone", errNotVerified, certFile)
		},
	}
	f := cmd.Flags()
	f.StringVar(&certFile, "certificate", "", "certificate to verify (required)")
	f.StringVar(&releaseFile, "release", "", "the release file the certificate covers (required)")
	f.StringVar(&pubFile, "public-key", "", "the certifier's public key (unlearn keygen): check the signature first (required unless --integrity-only)")
	f.BoolVar(&integrityOnly, "integrity-only", false, "check only that the certificate is consistent with the release, NOT who issued it (exit 0 when consistent, printing CONSISTENT, never VALID)")
	f.StringVar(&receiptFile, "receipt", "", "a deletion receipt (unlearn serve) to check instead of a certificate")
	f.StringVar(&nonce, "nonce", "", "with --receipt: the request's nonce (hex), to check the commitment to --ids and --keys")
	f.Int64SliceVar(&ids, "ids", nil, "with --nonce: the ids the request named")
	f.StringSliceVar(&keys, "keys", nil, "with --nonce: the keys the request named")
	return cmd
}

// verifyReceipt checks a deletion receipt and, with a nonce, its
// commitment to the request's ids and keys.
func verifyReceipt(cmd *cobra.Command, file, pubFile, nonce string, ids []int64, keys []string) error {
	if pubFile == "" {
		return flagError("public-key", "required with --receipt: a receipt is worth its signature")
	}
	if nonce == "" && (len(ids) > 0 || len(keys) > 0) {
		return flagError("nonce", "required with --ids and --keys: the commitment is keyed by it")
	}
	pub, err := sign.LoadPublic(pubFile)
	if err != nil {
		return flagError("public-key", "%v", err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	r, err := certify.VerifyReceipt(data, pub)
	if err != nil {
		return fmt.Errorf("INVALID receipt %s: %w", file, err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprint(out, r.Summary())
	fmt.Fprintf(out, "  ok           Ed25519 signature by key %s\n", pub.KeyID())
	if nonce != "" {
		n, err := hex.DecodeString(nonce)
		if err != nil || len(n) != certify.NonceSize {
			return flagError("nonce", "want %d hex digits", 2*certify.NonceSize)
		}
		if certify.ForgetCommitment(n, ids, keys) != r.Commitment {
			return fmt.Errorf("INVALID receipt %s: its commitment does not cover exactly these ids and keys under this nonce", file)
		}
		fmt.Fprintf(out, "  ok           the commitment covers exactly the %d ids and %d keys given\n", len(ids), len(keys))
	} else {
		fmt.Fprintln(out, "  not checked  which records: give --nonce with the request's --ids and --keys")
	}
	fmt.Fprintf(out, "VALID: %s\n", file)
	return nil
}
