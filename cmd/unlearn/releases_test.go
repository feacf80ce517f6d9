package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// release keeps each release in the store; releases lists them and fetches
// one byte for byte; a forget of a sample the released state included
// erases it and says so; --get of an erased release names the flag.
func TestReleasesKeptAndErased(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "l.jsonl")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--d", "3", "--events", "200", "--seed", "4", "--out", in)
	require.NoError(t, err)
	st := filepath.Join(dir, "model")
	_, err = runCLI(t, "init", "--store", st, "--header", in, "--tau", "4", "--checkpoint-every", "50")
	require.NoError(t, err)
	_, err = runCLI(t, "ingest", "--store", st, in)
	require.NoError(t, err)
	rel, cert := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.json")
	out, err := runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert)
	require.NoError(t, err, out)
	require.Contains(t, out, "kept as release 1 of the store (log position 200)")

	out, err = runCLI(t, "status", "--store", st)
	require.NoError(t, err, out)
	require.Contains(t, out, "releases kept: 1")
	out, err = runCLI(t, "releases", "--store", st)
	require.NoError(t, err, out)
	require.Contains(t, out, "exact")
	require.Regexp(t, `(?m)^1\s+\S+\s+200\s+exact`, out)
	got, gotCert := filepath.Join(dir, "got.json"), filepath.Join(dir, "gotc.json")
	_, err = runCLI(t, "releases", "--store", st, "--get", "1", "--out", got, "--certificate", gotCert)
	require.NoError(t, err)
	require.True(t, bytes.Equal(readFile(t, rel), readFile(t, got)), "fetched release differs from the written one")
	require.True(t, bytes.Equal(readFile(t, cert), readFile(t, gotCert)), "fetched certificate differs from the written one")

	out, err = runCLI(t, "forget", "--store", st, "--ids", "30")
	require.NoError(t, err, out)
	require.Contains(t, out, "erased 1 stored release made")
	require.Contains(t, out, "erased release 1 (log position 200 ≥ seq 30 of forgotten id 30)")
	require.Contains(t, out, "forgot 1 id [30]")
	require.Contains(t, out, "cannot be recalled")
	out, err = runCLI(t, "releases", "--store", st)
	require.NoError(t, err, out)
	require.Contains(t, out, "no releases kept")
	out, err = runCLI(t, "status", "--store", st, "--requests")
	require.NoError(t, err, out)
	require.Contains(t, out, "    erased release 1 (log position 200 ≥ seq 30 of forgotten id 30)", "the request history keeps why")
	_, err = runCLI(t, "releases", "--store", st, "--get", "1", "--out", got)
	require.ErrorContains(t, err, "--get")
	_, err = runCLI(t, "releases", "--store", st, "--get", "1")
	require.ErrorContains(t, err, "--out")
	_, err = runCLI(t, "releases", "--store", st, "--out", got)
	require.ErrorContains(t, err, "--get")

	// Ids are never reused (issue #11): the next release is 2, not 1 again,
	// and forget --json names it, in snake_case, durations in seconds.
	out, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert)
	require.NoError(t, err, out)
	require.Contains(t, out, "kept as release 2 of the store")
	out, err = runCLI(t, "forget", "--store", st, "--ids", "40,50", "--json")
	require.NoError(t, err, out)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, []any{map[string]any{"release": 2.0, "head": 200.0, "seq": 40.0, "id": 40.0}}, rep["erased_releases"])
	require.Equal(t, []any{40.0, 50.0}, rep["ids"])
	require.Equal(t, "exact", rep["path"])
	for _, k := range []string{"wall_seconds", "replay_seconds", "vacuum_seconds"} {
		v, ok := rep[k].(float64)
		require.True(t, ok, "%s missing: %s", k, out)
		require.True(t, v >= 0 && v < 600, "%s = %v is not in seconds", k, v)
	}
	require.NotContains(t, out, "Wall", "Go field names")
	out, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert)
	require.NoError(t, err, out)
	require.Contains(t, out, "kept as release 3 of the store")
}
