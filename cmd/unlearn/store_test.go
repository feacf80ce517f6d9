package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/store"
	"unlearn/stream"
)

// TestStoreLifecycle: init, ingest, forget and export give the snapshot
// `unlearn train` writes for the deletion-edited stream, byte for byte.
func TestStoreLifecycle(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "q.jsonl")
	st := filepath.Join(dir, "model")
	_, err := runCLI(t, "gen", "--kind", "quadratic", "--events", "400", "--d", "4", "--seed", "3", "--out", in)
	require.NoError(t, err)
	out, err := runCLI(t, "init", "--store", st, "--header", in, "--tau", "5", "--checkpoint-every", "64")
	require.NoError(t, err)
	require.Contains(t, out, "not certifiable: a noised release needs --radius and --sample-bound")
	out, err = runCLI(t, "ingest", "--store", st, "--batch", "100", in)
	require.NoError(t, err)
	require.Contains(t, out, "400 events in 4 transactions, 6 checkpoints")
	out, err = runCLI(t, "forget", "--store", st, "--ids", "17,300")
	require.NoError(t, err)
	require.Contains(t, out, "path: exact")
	exported := filepath.Join(dir, "export.json")
	_, err = runCLI(t, "export", "--store", st, "--out", exported)
	require.NoError(t, err)

	h, err := stream.ReadFile(in)
	require.NoError(t, err)
	cfFile := filepath.Join(dir, "cf.jsonl")
	require.NoError(t, stream.WriteFile(cfFile, h.Counterfactual(stream.NewIDSet(17, 300))))
	trained := filepath.Join(dir, "train.json")
	_, err = runCLI(t, "train", "--stream", cfFile, "--tau", "5", "--out", trained)
	require.NoError(t, err)
	a, err := os.ReadFile(exported)
	require.NoError(t, err)
	b, err := os.ReadFile(trained)
	require.NoError(t, err)
	require.Equal(t, string(b), string(a), "export after forget vs train on the deletion-edited stream")

	// The approximate path keeps only a noised state, which this store
	// (no --radius) cannot make: refused, nothing changes.
	_, err = runCLI(t, "forget", "--store", st, "--ids", "5", "--max-replay", "10", "--intervention", "memory-reset",
		"--epsilon", "1", "--delta", "1e-5", "--no-ledger")
	require.ErrorContains(t, err, "--max-replay: ")
	require.ErrorContains(t, err, "needs a certifiable learner")
	out, err = runCLI(t, "status", "--store", st, "--check")
	require.NoError(t, err)
	require.Contains(t, out, "the state is exact")
	require.Contains(t, out, "deletion requests: 1;")
	out, err = runCLI(t, "forget", "--store", st, "--ids", "6")
	require.NoError(t, err)
	require.Contains(t, out, "forgot 1 id [6]")
	out, err = runCLI(t, "status", "--store", st, "--check")
	require.NoError(t, err)
	require.Contains(t, out, "check: OK (")
	require.Contains(t, out, "the state is exact")
	out, err = runCLI(t, "evaluate", "--store", st, "--data", in)
	require.NoError(t, err)
	require.Contains(t, out, "exact counterfactual")
}

func TestStoreCommandsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "l.jsonl")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--events", "20", "--d", "3", "--out", in)
	require.NoError(t, err)
	st := filepath.Join(dir, "model")
	_, err = runCLI(t, "init", "--store", st, "--kind", "logistic", "--d", "3")
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		args []string
		flag string
	}{
		{"init without store", []string{"init", "--header", in}, "--store"},
		{"init quadratic without header", []string{"init", "--store", filepath.Join(dir, "x"), "--kind", "quadratic"}, "--header"},
		{"init bad interval", []string{"init", "--store", filepath.Join(dir, "y"), "--header", in, "--checkpoint-every", "0"}, "--checkpoint-every"},
		{"init bad tau", []string{"init", "--store", filepath.Join(dir, "z"), "--header", in, "--tau", "-1"}, "--tau"},
		{"init over a store", []string{"init", "--store", st, "--header", in}, "--store"},
		{"ingest no store", []string{"ingest", "--store", filepath.Join(dir, "none"), in}, "--store"},
		{"forget without ids", []string{"forget", "--store", st}, "--ids"},
		{"forget cap without intervention", []string{"forget", "--store", st, "--ids", "1", "--max-replay", "5"}, "--intervention"},
		{"forget bad intervention", []string{"forget", "--store", st, "--ids", "1", "--max-replay", "5", "--intervention", "oracle"}, "--intervention"},
		{"forget unknown id", []string{"forget", "--store", st, "--ids", "99"}, "--ids"},
		{"export without out", []string{"export", "--store", st}, "--out"},
		{"evaluate without data", []string{"evaluate", "--store", st}, "--data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, c.args...)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.flag)
		})
	}
}

// requireStatusJSON checks status --json on TestForgetResolve's store with
// one approximate request pending: snake_case names throughout (the learner
// under its snapshot names), the pending request with its seconds, its
// noised release and what its certificate discloses.
func requireStatusJSON(t *testing.T, st string) {
	t.Helper()
	out, err := runCLI(t, "status", "--store", st, "--json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	keys := slices.Sorted(maps.Keys(m))
	require.Equal(t, []string{"bytes", "certifiable", "checkpoint_bytes", "checkpoint_every", "checkpoints", "damage", "dir", "erased", "events", "forgotten", "head",
		"inexact_checkpoints", "kind", "learner", "log_bytes", "needs_noise", "pending", "release_bytes", "releases", "requests",
		"resolution_due", "resolution_reason", "resolve_after_events", "resolve_within_seconds", "schema_version", "state_bytes", "t"}, keys)
	// 120 events, 1 payload erased by the approximate forget: 119 dense
	// payloads of d = 3 (S and 3 numbers, 32 bytes).
	require.Equal(t, 119.0*32, m["log_bytes"])
	require.Greater(t, m["checkpoint_bytes"].(float64), 0.0)
	require.Greater(t, m["state_bytes"].(float64), 0.0)
	require.Equal(t, true, m["needs_noise"])
	require.Equal(t, "", m["damage"])
	require.Equal(t, 50.0, m["checkpoint_every"])
	require.Equal(t, float64(store.SchemaVersion), m["schema_version"])
	l := m["learner"].(map[string]any)
	require.Equal(t, 3.0, l["d"])
	require.Equal(t, 4.0, l["tau"])
	p := m["pending"].([]any)
	require.Len(t, p, 1)
	r := p[0].(map[string]any)
	require.Equal(t, []any{10.0}, r["ids"])
	require.Equal(t, "approximate", r["path"])
	require.Equal(t, "pair-drop", r["intervention"])
	require.Equal(t, true, r["noised"])
	require.Equal(t, 1.0, r["release"])
	require.Equal(t, []any{0.0}, r["disclosed_ages"], "no pair guard: α does not depend on the ages, and none is disclosed (age 110 shows as 0)")
	require.Contains(t, r, "wall_seconds")
	require.Contains(t, r, "u_size")
	for k := range r {
		require.Regexp(t, `^[a-z0-9_]+$`, k)
	}
}

// TestForgetResolve: an approximate forget on a certifiable store keeps its
// output noised (release 1) and says what remains; a repeated forget of the
// same ids points to --resolve; --resolve serves the pending request
// exactly (the export is train on the edited stream, byte for byte), and
// then has nothing to do.
func TestForgetResolve(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "l.jsonl")
	st := filepath.Join(dir, "model")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--events", "120", "--d", "3", "--seed", "4", "--out", in)
	require.NoError(t, err)
	_, err = runCLI(t, "init", "--store", st, "--header", in, "--tau", "4", "--checkpoint-every", "50", "--radius", "5", "--sample-bound", "10")
	require.NoError(t, err)
	_, err = runCLI(t, "ingest", "--store", st, in)
	require.NoError(t, err)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--resolve", "--ids", "3"}, "--resolve: deletes nothing new"},
		{[]string{"--resolve", "--max-replay", "5"}, "--resolve: is an exact replay"},
		{nil, "--ids: required (or --keys, --ids-from, --keys-from, or --resolve)"},
		{[]string{"--ids", "3", "--epsilon", "1"}, "--epsilon: only with --max-replay"},
		{[]string{"--ids", "3", "--max-replay", "5", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5", "--no-ledger", "--ages", "all"}, "--ages"},
	} {
		_, err := runCLI(t, append([]string{"forget", "--store", st}, c.args...)...)
		require.ErrorContains(t, err, c.want)
	}

	out, err := runCLI(t, "forget", "--store", st, "--ids", "10", "--max-replay", "5", "--intervention", "pair-drop",
		"--epsilon", "1", "--delta", "1e-5", "--no-ledger", "--insecure-seeded", "1")
	require.NoError(t, err)
	require.Contains(t, out, "path: approximate")
	require.Contains(t, out, "kept only noised: release 1")
	require.Contains(t, out, "deleted 2 checkpoints from the oldest erased sample on")
	require.Contains(t, out, "while pending, the store keeps of it:")
	require.Contains(t, out, "--resolve")
	requireStatusJSON(t, st)
	out, err = runCLI(t, "status", "--store", st)
	require.NoError(t, err)
	require.Contains(t, out, "what remains of them:")
	out, err = runCLI(t, "forget", "--store", st, "--ids", "10")
	require.NoError(t, err)
	require.Contains(t, out, "nothing to do: every id was already forgotten")
	require.Contains(t, out, "'unlearn forget --store "+st+" --resolve' serves them exactly")

	out, err = runCLI(t, "forget", "--store", st, "--resolve")
	require.NoError(t, err)
	require.Contains(t, out, "request 2: forgot no new id")
	require.Contains(t, out, "path: exact — resolution of pending approximate request 1: exact replay of 119 events from the checkpoint at seq 0")
	require.Contains(t, out, "resolves pending approximate request 1 (the state is exact again)")
	require.NotContains(t, out, "NOTE")

	exported, trained := filepath.Join(dir, "export.json"), filepath.Join(dir, "train.json")
	_, err = runCLI(t, "export", "--store", st, "--out", exported)
	require.NoError(t, err)
	h, err := stream.ReadFile(in)
	require.NoError(t, err)
	cf := filepath.Join(dir, "cf.jsonl")
	require.NoError(t, stream.WriteFile(cf, h.Counterfactual(stream.NewIDSet(10))))
	_, err = runCLI(t, "train", "--stream", cf, "--tau", "4", "--radius", "5", "--sample-bound", "10", "--out", trained)
	require.NoError(t, err)
	require.Equal(t, string(readFile(t, trained)), string(readFile(t, exported)))

	out, err = runCLI(t, "forget", "--store", st, "--resolve")
	require.NoError(t, err)
	require.Contains(t, out, "nothing to do: no approximate request is pending (the state is exact)")

	out, err = runCLI(t, "status", "--store", st, "--requests")
	require.NoError(t, err)
	require.Contains(t, out, "requests (2):")
	require.Regexp(t, `request 1, \S+: approximate, 1 id \[10\], intervention pair-drop, ages \[110\], kept noised \(α \S+, derived, σ = \S+\), resolved by request 2; replayed 0 events`, out)
	require.Regexp(t, `request 2, \S+: exact, no new id \(resolution\); replayed 119 events`, out)
	out, err = runCLI(t, "status", "--store", st, "--requests", "--json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Equal(t, true, m["certifiable"])
	hist := m["requests_history"].([]any)
	require.Len(t, hist, 2)
	require.Equal(t, 2.0, hist[0].(map[string]any)["resolved_by"])
}
