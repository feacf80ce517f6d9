package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/sign"
)

// certTemplate is a genuine certificate (from the certify command), read
// once; writeCert varies the fields a ledger charges.
var (
	certTemplateOnce sync.Once
	certTemplate     []byte
)

// writeCert writes a certificate with the given digest, α, applied σ and β
// and returns its path. The ledger charges those fields and does not
// verify certificates (verify does), so the certificate need not verify.
func writeCert(t *testing.T, dir, digest string, alpha, sigma, beta float64) string {
	t.Helper()
	certTemplateOnce.Do(func() {
		d, _, stateFile, _ := certifyFixture(t)
		cert := filepath.Join(d, "template.cert.json")
		out, err := runCLI(t, "certify", "--state", stateFile, "--out", filepath.Join(d, "released.json"), "--certificate", cert,
			"--epsilon", "1", "--delta", "1e-5", "--insecure-seeded", "42", "--alpha", "0.5")
		require.NoError(t, err, out)
		certTemplate = mustRead(t, cert)
	})
	require.NotNil(t, certTemplate, "the certificate template failed in an earlier test")
	c, err := certify.ParseCertificate(certTemplate)
	require.NoError(t, err)
	c.Digest, c.SigmaApplied, c.Beta = digest, sigma, beta
	c.Sensitivity.Alpha = alpha
	signWithFixtureKey(t, dir, c)
	data, err := c.MarshalIndent()
	require.NoError(t, err)
	p := filepath.Join(dir, digest+".json")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// signWithFixtureKey signs c with the ledger owner's key of budgetFixture
// (dir/certifier.key): the ledger charges only certificates its owner
// signed.
func signWithFixtureKey(t *testing.T, dir string, c *certify.Certificate) {
	t.Helper()
	key, err := sign.LoadSecret(filepath.Join(dir, "certifier.key"))
	require.NoError(t, err)
	require.NoError(t, certify.Sign(c, key))
}

// An unsigned certificate, or one signed by another key, is not charged,
// and the ledger is unchanged.
func TestBudgetRefusesUnsignedCertificates(t *testing.T) {
	dir, key, _, lf := budgetFixture(t)
	writeCert(t, dir, "x", 1, 1, 0) // fills the template
	before := mustRead(t, lf)
	c, err := certify.ParseCertificate(certTemplate)
	require.NoError(t, err)
	unsigned := filepath.Join(dir, "unsigned.json")
	b, err := c.MarshalIndent()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(unsigned, b, 0o644))
	_, err = runCLI(t, "budget", "--ledger", lf, "--add", unsigned, "--key", key)
	require.ErrorContains(t, err, "signed by the ledger's key")
	other, err := sign.Generate()
	require.NoError(t, err)
	require.NoError(t, certify.Sign(c, other))
	b, err = c.MarshalIndent()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(unsigned, b, 0o644))
	_, err = runCLI(t, "budget", "--ledger", lf, "--add", unsigned, "--key", key)
	require.ErrorContains(t, err, "signed by the ledger's key")
	require.Equal(t, before, mustRead(t, lf), "the ledger changed")
}

// TestBudgetChargesACertifiedRelease charges a certificate exactly as the
// certify command wrote it (signed by the ledger's owner).
func TestBudgetChargesACertifiedRelease(t *testing.T) {
	dir, key, pub, lf := budgetFixture(t)
	writeCert(t, dir, "x", 1, 1, 0) // fills the template
	cert := filepath.Join(dir, "genuine.json")
	c, err := certify.ParseCertificate(certTemplate)
	require.NoError(t, err)
	signWithFixtureKey(t, dir, c)
	signed, err := c.MarshalIndent()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cert, signed, 0o644))
	_, err = runCLI(t, "budget", "--ledger", lf, "--add", cert, "--key", key)
	require.NoError(t, err)
	s := budgetJSON(t, "--ledger", lf, "--public-key", pub)
	require.Len(t, s.Entries, 1)
	e := s.Entries[0]
	require.Equal(t, c.Digest, e.Certificate)
	require.Equal(t, c.Sensitivity.Alpha, e.Alpha)
	require.Equal(t, c.SigmaApplied, e.Sigma)
	require.Equal(t, c.Beta, e.Beta)
}

// budgetFixture creates keys and a ledger with budget (2, 1e-5).
func budgetFixture(t *testing.T) (dir, key, pub, ledgerFile string) {
	t.Helper()
	dir = t.TempDir()
	name := filepath.Join(dir, "certifier")
	_, err := runCLI(t, "keygen", "--out", name)
	require.NoError(t, err)
	key, pub, ledgerFile = name+".key", name+".pub", filepath.Join(dir, "budget.ledger")
	out, err := runCLI(t, "budget", "--ledger", ledgerFile, "--init", "--epsilon", "2", "--delta", "1e-5", "--key", key)
	require.NoError(t, err, out)
	require.Contains(t, out, "wrote "+ledgerFile)
	require.Contains(t, out, "0 releases")
	return dir, key, pub, ledgerFile
}

func budgetJSON(t *testing.T, args ...string) budgetStatus {
	t.Helper()
	root := newRootCmd()
	var stdout, stderr strings.Builder
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs(append(append([]string{"budget"}, args...), "--json"))
	require.NoError(t, root.Execute(), stderr.String())
	var s budgetStatus
	require.NoError(t, json.Unmarshal([]byte(stdout.String()), &s), stdout.String())
	return s
}

func TestBudgetInitAddVerify(t *testing.T) {
	dir, key, pub, lf := budgetFixture(t)
	cheap := writeCert(t, dir, "aaaa1111bbbb2222", 1, 20, 1e-8)
	out, err := runCLI(t, "budget", "--ledger", lf, "--add", cheap, "--key", key, "--label", "first")
	require.NoError(t, err, out)
	require.Contains(t, out, "charged "+cheap+" as entry 1")
	require.Contains(t, out, "1 releases")

	s := budgetJSON(t, "--ledger", lf, "--public-key", pub)
	require.Equal(t, 1, s.Spent.Releases)
	require.Equal(t, budgetPair{2, 1e-5}, s.Budget)
	require.Len(t, s.Entries, 1)
	require.Equal(t, "first", s.Entries[0].Label)
	require.Equal(t, "aaaa1111bbbb2222", s.Entries[0].Certificate)
	// The totals are the accountant's.
	a, err := certify.NewAccountant(certify.Budget{Epsilon: 2, Delta: 1e-5})
	require.NoError(t, err)
	ch, err := certify.ChargeFor("first", 1, 20, 1e-8)
	require.NoError(t, err)
	sp, err := a.Spend(ch)
	require.NoError(t, err)
	require.Equal(t, sp.Epsilon, s.Spent.Epsilon)
	require.Equal(t, sp.Beta, s.Spent.Beta)
	require.Equal(t, 2-sp.Epsilon, s.Left.Epsilon)
	require.Equal(t, 1, s.Head.Seq)

	// Verifying with the secret key works too, and so does the human form.
	out, err = runCLI(t, "budget", "--ledger", lf, "--key", key)
	require.NoError(t, err)
	require.Contains(t, out, "(valid)")
	require.Contains(t, out, "first")
}

func TestBudgetAddRefusalsWriteNothing(t *testing.T) {
	dir, key, _, lf := budgetFixture(t)
	cheap := writeCert(t, dir, "cccc", 1, 20, 0)
	_, err := runCLI(t, "budget", "--ledger", lf, "--add", cheap, "--key", key)
	require.NoError(t, err)
	before := mustRead(t, lf)
	for _, tt := range []struct {
		name, cert, want string
	}{
		// α/σ = 1: ε > 2 at δ = 1e-5 under any sound composition.
		{"over budget", writeCert(t, dir, "dddd", 1, 1, 0), "budget"},
		{"already charged", cheap, "already charged"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, "budget", "--ledger", lf, "--add", tt.cert, "--key", key)
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "--add "+tt.cert)
			require.ErrorContains(t, err, "unchanged")
			require.Equal(t, before, mustRead(t, lf), "the ledger changed")
		})
	}
	t.Run("not a certificate", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte(`{"format":"x"}`), 0o644))
		_, err := runCLI(t, "budget", "--ledger", lf, "--add", bad, "--key", key)
		require.ErrorContains(t, err, "--add "+bad)
		require.Equal(t, before, mustRead(t, lf))
	})
}

func TestBudgetRefusesTamperedLedger(t *testing.T) {
	dir, key, pub, lf := budgetFixture(t)
	_, err := runCLI(t, "budget", "--ledger", lf, "--add", writeCert(t, dir, "eeee", 1, 20, 0), "--key", key)
	require.NoError(t, err)
	good := mustRead(t, lf)

	edited := strings.Replace(string(good), `"sigma":20`, `"sigma":2000`, 1)
	require.NotEqual(t, string(good), edited)
	require.NoError(t, os.WriteFile(lf, []byte(edited), 0o644))
	_, err = runCLI(t, "budget", "--ledger", lf, "--public-key", pub)
	require.ErrorIs(t, err, ledger.ErrSignature)
	require.ErrorContains(t, err, "INVALID ledger")
	require.ErrorContains(t, err, lf+":2")

	lines := strings.SplitAfter(string(good), "\n")
	require.NoError(t, os.WriteFile(lf, []byte(strings.Join(lines[:2], "")), 0o644))
	_, err = runCLI(t, "budget", "--ledger", lf, "--public-key", pub)
	require.ErrorIs(t, err, ledger.ErrTruncated)

	// Another key.
	require.NoError(t, os.WriteFile(lf, good, 0o644))
	other := filepath.Join(dir, "other")
	_, err = runCLI(t, "keygen", "--out", other)
	require.NoError(t, err)
	_, err = runCLI(t, "budget", "--ledger", lf, "--public-key", other+".pub")
	require.ErrorIs(t, err, ledger.ErrKey)
}

func TestBudgetAnchorDetectsRollback(t *testing.T) {
	dir, key, pub, lf := budgetFixture(t)
	old := mustRead(t, lf)
	_, err := runCLI(t, "budget", "--ledger", lf, "--add", writeCert(t, dir, "ffff", 1, 20, 0), "--key", key)
	require.NoError(t, err)
	head := budgetJSON(t, "--ledger", lf, "--public-key", pub).Head
	_, err = runCLI(t, "budget", "--ledger", lf, "--public-key", pub, "--anchor", head.String())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(lf, old, 0o644)) // the rollback
	_, err = runCLI(t, "budget", "--ledger", lf, "--public-key", pub)
	require.NoError(t, err, "an older complete copy is a valid ledger")
	_, err = runCLI(t, "budget", "--ledger", lf, "--public-key", pub, "--anchor", head.String())
	require.ErrorIs(t, err, ledger.ErrRollback)
	require.ErrorContains(t, err, "--anchor")
}

func TestBudgetWarnsOnKeyPermissions(t *testing.T) {
	if os.Getuid() == 0 {
		// Root reads any file, but the mode check is on the bits: it still applies.
		t.Log("running as root")
	}
	_, key, _, lf := budgetFixture(t)
	require.NoError(t, os.Chmod(key, 0o644))
	out, err := runCLI(t, "budget", "--ledger", lf, "--key", key)
	require.NoError(t, err)
	require.Contains(t, out, "warning:")
	require.Contains(t, out, "chmod 600 "+key)
}

func TestBudgetFlagErrors(t *testing.T) {
	dir, key, pub, lf := budgetFixture(t)
	cert := writeCert(t, dir, "abab", 1, 20, 0)
	newLedger := filepath.Join(dir, "new.ledger")
	before := mustRead(t, lf)
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"no ledger", []string{"--public-key", pub}, "--ledger"},
		{"no key", []string{"--ledger", lf}, "--public-key"},
		{"both keys", []string{"--ledger", lf, "--key", key, "--public-key", pub}, "--public-key"},
		{"init without key", []string{"--ledger", newLedger, "--init", "--epsilon", "1", "--delta", "1e-5", "--public-key", pub}, "--key"},
		{"init without epsilon", []string{"--ledger", newLedger, "--init", "--delta", "1e-5", "--key", key}, "--epsilon"},
		{"init zero epsilon", []string{"--ledger", newLedger, "--init", "--epsilon", "0", "--delta", "1e-5", "--key", key}, "--epsilon"},
		{"init delta one", []string{"--ledger", newLedger, "--init", "--epsilon", "1", "--delta", "1", "--key", key}, "--delta"},
		{"init existing", []string{"--ledger", lf, "--init", "--epsilon", "1", "--delta", "1e-5", "--key", key}, "--ledger"},
		{"epsilon without init", []string{"--ledger", lf, "--epsilon", "5", "--key", key}, "--epsilon"},
		{"add without key", []string{"--ledger", lf, "--add", cert, "--public-key", pub}, "--key"},
		{"label without add", []string{"--ledger", lf, "--label", "x", "--key", key}, "--label"},
		{"bad anchor", []string{"--ledger", lf, "--public-key", pub, "--anchor", "3"}, "--anchor"},
		{"missing key file", []string{"--ledger", lf, "--key", filepath.Join(dir, "nope.key")}, "--key"},
		{"public key as secret", []string{"--ledger", lf, "--key", pub}, "--key"},
		{"missing public key", []string{"--ledger", lf, "--public-key", filepath.Join(dir, "nope.pub")}, "--public-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"budget"}, tt.args...)...)
			require.ErrorContains(t, err, tt.flag)
			require.NoFileExists(t, newLedger)
			require.Equal(t, before, mustRead(t, lf))
		})
	}
}
