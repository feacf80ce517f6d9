package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"unlearn/sign"
)

func init() { register(newKeygenCmd) }

func newKeygenCmd() *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "keygen --out NAME [--force]",
		Short: "Create a certifier's signing key pair and commitment secret",
		Long: `keygen creates a certifier's keys: an Ed25519 key pair for signing certificates
and ledger entries, and an independent 32-byte secret for keyed commitments
(HMAC-SHA256), all from the operating system's secure random source. It writes

  NAME.key  the secret: signing seed and commitment secret (mode 0600);
  NAME.pub  the public key, for verifiers.

Both are small JSON files with a format tag and the key id (the first 16 bytes
of SHA-256 of the public key, in hex). They are written atomically and an
existing file is never overwritten without --force. The key id and the paths
are printed on stderr; the secret never is. Keep NAME.key private and backed
up: a lost key cannot append to its ledgers, a leaked one can sign anything.`,
		Example: `  unlearn keygen --out certifier
  unlearn budget --ledger budget.ledger --init --epsilon 2 --delta 1e-5 --key certifier.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return flagError("out", "required: the name of the key files (NAME.key, NAME.pub)")
			}
			if strings.HasSuffix(out, sign.SecretSuffix) || strings.HasSuffix(out, sign.PublicSuffix) {
				return flagError("out", "%q: give the name without %s or %s (keygen writes both)", out, sign.SecretSuffix, sign.PublicSuffix)
			}
			if err := new(paths).out("--out", out+sign.SecretSuffix).out("--out", out+sign.PublicSuffix).check(); err != nil {
				return err
			}
			s, err := sign.Generate()
			if err != nil {
				return err
			}
			keyPath, pubPath, err := s.WriteFiles(out, force)
			var fe *sign.FileError
			if errors.Is(err, sign.ErrExists) && errors.As(err, &fe) {
				return flagError("out", "%s exists; pass --force to replace the keys (the old secret key is then lost)", fe.Path)
			}
			if err != nil {
				return err
			}
			w := cmd.ErrOrStderr()
			fmt.Fprintf(w, "wrote %s (secret key, mode 0600: keep it private)\n", keyPath)
			fmt.Fprintf(w, "wrote %s (public key, for verifiers)\n", pubPath)
			fmt.Fprintf(w, "key id %s\n", s.KeyID())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "name of the key files to write: NAME.key and NAME.pub (required)")
	f.BoolVar(&force, "force", false, "overwrite existing key files")
	return cmd
}
