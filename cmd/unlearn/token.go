package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"unlearn/serve"
	"unlearn/store"
)

func init() { register(newTokenCmd) }

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token (create | list | revoke)",
		Short: "Create, list and revoke the bearer tokens of 'unlearn serve'",
		Long: `token manages the bearer tokens that 'unlearn serve' accepts. A token has
scopes, each allowing routes of the service:

  ingest   POST /v1/events
  predict  POST /v1/predict
  forget   POST /v1/forget, GET /v1/forget/{id}
  release  POST /v1/releases (publishes, charged to the budget)
  read     GET /v1/status, /v1/releases, /metrics

The store keeps only the SHA-256 of each token: 'token create' prints the token
once, and it cannot be shown again. A running service reads the tokens again
every second, so a created token works and a revoked one is refused within a
second.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{fmt.Errorf("give a subcommand: create, list or revoke")}
		},
	}
	cmd.AddCommand(newTokenCreateCmd(), newTokenListCmd(), newTokenRevokeCmd())
	return cmd
}

func newTokenCreateCmd() *cobra.Command {
	var dir, scopes, name string
	cmd := &cobra.Command{
		Use:   "create --store DIR --scopes SCOPE,... [--name NAME]",
		Short: "Create a bearer token; it is printed once, alone on standard output",
		Long: `create makes a bearer token with the given scopes (ingest, predict, forget,
release, read, comma-separated, or all) and prints it alone on standard output,
so that a script can capture it; its number and scopes go to standard error. The
token is 256 random bits (unl_ then base64url); only its SHA-256 is stored, so
keep it where you keep secrets: it is not shown again.`,
		Example: `  TOKEN=$(unlearn token create --store model --scopes ingest,predict,forget,read --name app)`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if scopes == "" {
				return flagError("scopes", "required: ingest, predict, forget, release, read (comma-separated) or all")
			}
			sc, err := serve.ParseScopes(scopes)
			if err != nil {
				return flagError("scopes", "%v", err)
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			text, t, err := s.CreateToken(name, sc)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), text)
			fmt.Fprintf(cmd.ErrOrStderr(), "created token %d%s with scopes %s; it is shown only now (the store keeps its SHA-256)\n",
				t.ID, nameSuffix(t.Name), strings.Join(t.Scopes, ","))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "model store directory (required)")
	f.StringVar(&scopes, "scopes", "", "comma-separated scopes: ingest, predict, forget, release, read, or all (required)")
	f.StringVar(&name, "name", "", "a name for the token, shown by list and in the access log")
	return cmd
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(" (%q)", name)
}

// tokenJSON is a token in list --json: never the token, nor its hash.
type tokenJSON struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	Scopes  []string `json:"scopes"`
	Created string   `json:"created"`
	Revoked string   `json:"revoked,omitempty"`
}

func newTokenListCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list --store DIR [--json]",
		Short: "List the tokens: number, name, scopes, created, revoked",
		Long: `list prints every token of the store, active and revoked: its number (for
revoke), name, scopes, and when it was created and revoked. Neither the tokens
nor their hashes are printed.`,
		Example: `  unlearn token list --store model`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			all, err := s.Tokens()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				list := []tokenJSON{}
				for _, t := range all {
					j := tokenJSON{ID: t.ID, Name: t.Name, Scopes: t.Scopes, Created: t.Created.Format(time.RFC3339)}
					if !t.Revoked.IsZero() {
						j.Revoked = t.Revoked.Format(time.RFC3339)
					}
					list = append(list, j)
				}
				b, err := json.MarshalIndent(list, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s\n", b)
				return nil
			}
			if len(all) == 0 {
				fmt.Fprintln(out, "no tokens (unlearn token create)")
				return nil
			}
			fmt.Fprintf(out, "%-4s %-16s %-36s %-20s %s\n", "id", "name", "scopes", "created", "revoked")
			for _, t := range all {
				rev := "-"
				if !t.Revoked.IsZero() {
					rev = t.Revoked.Format(time.RFC3339)
				}
				fmt.Fprintf(out, "%-4d %-16s %-36s %-20s %s\n", t.ID, t.Name, strings.Join(t.Scopes, ","), t.Created.Format(time.RFC3339), rev)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "store", "", "model store directory (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newTokenRevokeCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "revoke --store DIR ID",
		Short: "Revoke a token by its number (a running service refuses it within a second)",
		Long: `revoke marks the token with that number (from 'token list') revoked. A running
service reads the tokens every second and refuses the token from then on (401).
A revoked token stays listed, with the time of its revocation.`,
		Example: `  unlearn token revoke --store model 3`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return usageError{fmt.Errorf("token number %q: want an integer (unlearn token list)", args[0])}
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			t, err := s.RevokeToken(id)
			if errors.Is(err, store.ErrUnknownToken) {
				return usageError{fmt.Errorf("no token %d in the store (unlearn token list)", id)}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "revoked token %d%s (at %s)\n", t.ID, nameSuffix(t.Name), t.Revoked.Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "store", "", "model store directory (required)")
	return cmd
}
