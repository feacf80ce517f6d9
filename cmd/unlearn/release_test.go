package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The store's release from the command line: exact after an exact forget;
// an approximate forget is itself a noised release, signed, charged to the
// store's ledger, kept and checked by verify, its noise compared with the
// public radius; a release while it is pending is refused, names the kept
// release and writes nothing; an approximate forget over budget is refused
// and changes nothing.
func TestReleaseFromStore(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "l.jsonl")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--d", "3", "--events", "300", "--seed", "2", "--out", in)
	require.NoError(t, err)
	st := filepath.Join(dir, "model")
	_, err = runCLI(t, "init", "--store", st, "--header", in, "--tau", "4", "--checkpoint-every", "50", "--radius", "4", "--sample-bound", "20")
	require.NoError(t, err)
	_, err = runCLI(t, "ingest", "--store", st, in)
	require.NoError(t, err)
	key := filepath.Join(dir, "certifier")
	_, err = runCLI(t, "keygen", "--out", key)
	require.NoError(t, err)
	led := filepath.Join(st, "budget.ledger") // the store's own ledger: used by default
	_, err = runCLI(t, "budget", "--ledger", led, "--init", "--epsilon", "1.6", "--delta", "1e-5", "--key", key+".key")
	require.NoError(t, err)
	// Reading the ledger without a key says why the public key is needed.
	_, err = runCLI(t, "budget", "--ledger", led)
	require.ErrorContains(t, err, "--public-key")
	require.ErrorContains(t, err, "every entry is signed by the certifier's key")
	out, err := runCLI(t, "budget", "--ledger", led, "--public-key", key+".pub")
	require.NoError(t, err, out)
	require.Contains(t, out, "budget      ε = 1.6")
	rel, cert := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.json")
	release := func() (string, error) {
		return runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert,
			"--key", key+".key", "--insecure-seeded", "3")
	}

	_, err = runCLI(t, "forget", "--store", st, "--ids", "17,42")
	require.NoError(t, err)
	_, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert)
	require.ErrorContains(t, err, "--key", "a store with a ledger charges every release")
	out, err = release()
	require.NoError(t, err, out)
	require.Contains(t, out, "path: exact")
	require.Contains(t, out, "not charged", "an exact release costs nothing")
	_, err = release()
	require.NoError(t, err, "re-releasing an exact state is harmless")
	out, err = runCLI(t, "verify", "--certificate", cert, "--release", rel, "--public-key", key+".pub")
	require.NoError(t, err, out)

	// The approximate path needs ε and δ, and the store's ledger needs the key.
	_, err = runCLI(t, "forget", "--store", st, "--ids", "5", "--max-replay", "1", "--intervention", "noop")
	require.ErrorContains(t, err, "--epsilon: required with --max-replay")
	_, err = runCLI(t, "forget", "--store", st, "--ids", "5", "--max-replay", "1", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5")
	require.ErrorContains(t, err, "--key: required: the store has a budget ledger")
	out, err = runCLI(t, "forget", "--store", st, "--ids", "5", "--max-replay", "1", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5",
		"--key", key+".key", "--insecure-seeded", "2")
	require.NoError(t, err, out)
	require.Contains(t, out, "path: approximate")
	require.Contains(t, out, "charged entry 1")
	// Without the pair guard the derived recursion is not smaller than the
	// diameter (issue #11): the forget says which bound binds.
	require.Contains(t, out, "derived, the diameter bound binds")
	// Kept as release 3 (the two exact releases kept before held id 5: erased).
	require.Contains(t, out, "kept only noised: release 3")
	// The noise is compared with the public radius W' = 4, not with the
	// private (or the noised) ‖w‖.
	require.Contains(t, out, "‖w‖ ≤ W' = 4")
	require.Contains(t, out, "WARNING: the expected noise norm is")
	require.NotContains(t, out, "released ‖w‖")
	require.Contains(t, out, "docs/theory.md §10.1")
	kr, kc := filepath.Join(dir, "k.json"), filepath.Join(dir, "kc.json")
	_, err = runCLI(t, "releases", "--store", st, "--get", "3", "--out", kr, "--certificate", kc)
	require.NoError(t, err)
	out, err = runCLI(t, "verify", "--certificate", kc, "--release", kr, "--public-key", key+".pub")
	require.NoError(t, err, out)
	// A release while the request is pending is refused, names the kept
	// release, and neither writes nor charges.
	before, ledBefore := mustRead(t, rel), mustRead(t, led)
	_, err = release()
	require.ErrorContains(t, err, "approximate forgets are pending")
	require.ErrorContains(t, err, "serve the release the forget published ('unlearn releases --get 3')")
	require.ErrorContains(t, err, "'unlearn forget --resolve'")
	require.Equal(t, before, mustRead(t, rel), "the release file changed")
	require.Equal(t, ledBefore, mustRead(t, led), "the ledger changed")
	out, err = runCLI(t, "status", "--store", st)
	require.NoError(t, err, out)
	require.Contains(t, out, "1 approximate request is pending")

	// What the noise costs: the kept release evaluated beside the state
	// and the exact counterfactual.
	out, err = runCLI(t, "evaluate", "--store", st, "--release", kr, "--certificate", kc, "--public-key", key+".pub", "--data", in)
	require.NoError(t, err, out)
	require.Contains(t, out, "release "+kr)
	require.Contains(t, out, "exact counterfactual")

	// A noised release without a ledger is refused unless asked for.
	noLedgerStore := filepath.Join(dir, "model2")
	_, err = runCLI(t, "init", "--store", noLedgerStore, "--header", in, "--tau", "4", "--radius", "4", "--sample-bound", "20")
	require.NoError(t, err)
	_, err = runCLI(t, "ingest", "--store", noLedgerStore, in)
	require.NoError(t, err)
	_, err = runCLI(t, "forget", "--store", noLedgerStore, "--ids", "5", "--max-replay", "1", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5")
	require.ErrorContains(t, err, "--ledger: required for the approximate path")
	_, err = runCLI(t, "forget", "--store", noLedgerStore, "--ids", "5", "--max-replay", "1", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5", "--no-ledger")
	require.NoError(t, err)
	for _, extra := range [][]string{nil, {"--no-ledger"}} {
		_, err = runCLI(t, append([]string{"release", "--store", noLedgerStore, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert, "--insecure-seeded", "1"}, extra...)...)
		require.ErrorContains(t, err, "approximate forgets are pending", "%v", extra)
		require.ErrorContains(t, err, "'unlearn releases --get 1'")
	}

	// A second approximate forget at ε = 1 is charged (two compose to
	// ε = 1.4644 at δ = 1e-5, docs/theory.md §10.1); a third would spend
	// 1.8340 > 1.6 and is refused: the ledger and the store unchanged.
	approx := func(id string) (string, error) {
		return runCLI(t, "forget", "--store", st, "--ids", id, "--max-replay", "1", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5",
			"--key", key+".key", "--insecure-seeded", "2")
	}
	out, err = approx("6")
	require.NoError(t, err, out)
	require.Contains(t, out, "charged entry 2")
	require.Contains(t, out, "spent ε = 1.464 of 1.6")
	ledBefore = mustRead(t, led)
	stBefore, err := runCLI(t, "status", "--store", st)
	require.NoError(t, err)
	_, err = approx("7")
	require.ErrorContains(t, err, "nothing changed")
	require.Equal(t, ledBefore, mustRead(t, led), "the ledger changed")
	stAfter, err := runCLI(t, "status", "--store", st)
	require.NoError(t, err)
	require.Equal(t, stBefore, stAfter, "the store changed")
	_, err = os.Stat(cert)
	require.NoError(t, err)
}

// The worked example of docs/deployment.md: with the pair guard the
// approximate forget's own release derives α below the diameter, from ages
// disclosed rounded down to powers of two, and compares its noise with the
// public radius; a release while the request is pending is refused and
// names it; init and status show the certifiable settings.
func TestReleaseDerivedWithPairGuard(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "iso.jsonl")
	_, err := runCLI(t, "gen", "--kind", "quadratic", "--kappa", "1", "--events", "300", "--seed", "1", "--out", in)
	require.NoError(t, err)
	st := filepath.Join(dir, "model")
	out, err := runCLI(t, "init", "--store", st, "--header", in, "--tau", "3", "--eta", "1", "--radius", "2", "--sample-bound", "3",
		"--pair-angle", "0.01", "--pair-min", "0.99", "--pair-max", "1.01")
	require.NoError(t, err, out)
	want := "certifiable: radius W = 2, sample bound B = 3, pair guard r̄ = 0.01 with sᵀy/‖s‖² in [0.99, 1.01]"
	require.Contains(t, out, want)
	_, err = runCLI(t, "ingest", "--store", st, in)
	require.NoError(t, err)
	out, err = runCLI(t, "forget", "--store", st, "--ids", "101,102,103,104,105", "--max-replay", "10", "--intervention", "noop",
		"--epsilon", "1", "--delta", "1e-5", "--no-ledger", "--insecure-seeded", "1")
	require.NoError(t, err, out)
	require.Contains(t, out, "forgot 5 ids")
	require.Contains(t, out, "ages [199 198 197 196 195] (exact, for the operator)")
	require.Contains(t, out, "kept only noised: release 1 (α 0.4189, derived; σ = 1.563")
	require.Contains(t, out, "the certificate discloses ages [132 131 130 129 128]")
	require.Contains(t, out, "‖w‖ ≤ W' = 2")
	rel, cert := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.json")
	_, err = runCLI(t, "releases", "--store", st, "--get", "1", "--out", rel, "--certificate", cert)
	require.NoError(t, err)
	out, err = runCLI(t, "verify", "--certificate", cert, "--release", rel, "--integrity-only")
	require.NoError(t, err, out)
	require.Contains(t, out, "α = 0.418869 recomputed from its public inputs (derived, proved)")
	out, err = runCLI(t, "status", "--store", st)
	require.NoError(t, err, out)
	require.Contains(t, out, want)
	require.Contains(t, out, "1 approximate request is pending")
	require.Contains(t, out, "kept noised: release 1, α 0.4189 (derived)")
	before := mustRead(t, rel)
	_, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel,
		"--certificate", cert, "--insecure-seeded", "1", "--no-ledger")
	require.ErrorContains(t, err, "approximate forgets are pending")
	require.ErrorContains(t, err, "('unlearn releases --get 1')")
	require.Equal(t, before, mustRead(t, rel), "a refused release wrote its file")
}
