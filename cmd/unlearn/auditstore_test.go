package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unlearn/store"

	"github.com/stretchr/testify/require"
)

// auditStore makes a certifiable store (radius 10, sample bound 20) of the
// audit tests' 400-event quadratic stream, checkpoint every 64 events.
func auditStore(t *testing.T) string {
	t.Helper()
	in := auditStreamFile(t)
	st := filepath.Join(t.TempDir(), "model")
	_, err := runCLI(t, "init", "--store", st, "--header", in, "--tau", "5", "--checkpoint-every", "64", "--radius", "10", "--sample-bound", "20")
	require.NoError(t, err)
	_, err = runCLI(t, "ingest", "--store", st, in)
	require.NoError(t, err)
	return st
}

func TestAuditStore(t *testing.T) {
	st := auditStore(t)
	before, err := os.ReadFile(filepath.Join(st, "store.db"))
	require.NoError(t, err)
	exits := withExitRecorder(t)
	for _, tc := range []struct {
		name              string
		extra             []string
		forget, release   string
		wantMechanismNote string
	}{
		{"exact", nil, "exact", "exact", "un-noised state"},
		{"approximate", []string{"--max-replay", "1", "--intervention", "memory-reset"}, "approximate", "derived", "Store.Release"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "audit.json")
			args := append([]string{"audit", "--store", st, "--ids", "390,395", "--epsilon", "1", "--delta", "1e-5",
				"--trials", "2000", "--seeded-noise", "5", "--out", out}, tc.extra...)
			o, err := runCLI(t, args...)
			require.NoError(t, err, o)
			require.Contains(t, lastLine(o), "certified ε = 1: consistent")
			require.Contains(t, o, "forget path "+tc.forget)
			var rec auditStoreRecord
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &rec))
			require.Equal(t, "unlearn-audit-store/v1", rec.Format)
			require.Equal(t, tc.forget, string(rec.ForgetPath))
			require.NotEmpty(t, rec.ForgetReason)
			require.Equal(t, tc.release, rec.ReleasePath)
			require.Contains(t, rec.Release.Mechanism, tc.wantMechanismNote)
			require.Equal(t, []int64{390, 395}, rec.IDs)
			require.LessOrEqual(t, rec.Audit.EpsilonLB, 1.0)
		})
	}
	require.Equal(t, 0, *exits)
	after, err := os.ReadFile(filepath.Join(st, "store.db"))
	require.NoError(t, err)
	require.Equal(t, before, after, "the audit modified the user's store")
	entries, err := os.ReadDir(st)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.Name() != store.OwnerFile { // the writers' lock file (the ingest's)
			names = append(names, e.Name())
		}
	}
	require.Equal(t, []string{"store.db"}, names, "the audit left files in the store directory")
}

func TestAuditStoreFlagErrors(t *testing.T) {
	st := auditStore(t)
	base := []string{"audit", "--store", st, "--epsilon", "1", "--delta", "1e-5"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no ids", base, "--ids"},
		{"unknown id", append(base, "--ids", "9999"), "--ids"},
		{"stream too", append(base, "--ids", "3", "--stream", "x.jsonl"), "--stream"},
		{"alpha", append(base, "--ids", "3", "--alpha", "1"), "--alpha"},
		{"max-replay without intervention", append(base, "--ids", "3", "--max-replay", "1"), "--intervention"},
		{"bad intervention", append(base, "--ids", "3", "--max-replay", "1", "--intervention", "oracle"), "--intervention"},
		{"negative max-replay", append(base, "--ids", "3", "--max-replay", "-1"), "--max-replay"},
		{"bad memory", append(base, "--ids", "3", "--memory", "keep"), "--memory"},
		{"no epsilon", []string{"audit", "--store", st, "--ids", "3", "--delta", "1e-5"}, "--epsilon"},
		{"not a store", []string{"audit", "--store", t.TempDir(), "--ids", "3", "--epsilon", "1", "--delta", "1e-5"}, "store.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCLI(t, tc.args...)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			var ue usageError
			require.ErrorAs(t, err, &ue, "a bad flag is a usage error (exit status 2): %v", err)
		})
	}
}

// TestAuditStoreInterrupted (ADV2-01): the audit's signal context is
// installed before PrepareAudit and passed into it, so an interrupt
// (here: the command's context cancelled, as SIGINT/SIGTERM cancel it)
// ends the command with "interrupted", writes no report, and leaves no copy
// of the store in $TMPDIR.
func TestAuditStoreInterrupted(t *testing.T) {
	st := auditStore(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out := filepath.Join(t.TempDir(), "audit.json")
	root := newRootCmd()
	var buf bytes.Buffer
	root.SetOut(&buf)
	root.SetErr(&buf)
	root.SetArgs([]string{"audit", "--store", st, "--ids", "390", "--epsilon", "1", "--delta", "1e-5",
		"--trials", "200", "--seeded-noise", "5", "--out", out})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := root.ExecuteContext(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "interrupted")
	var we *wordedError
	require.ErrorAs(t, err, &we, "the package prefixes are dropped from the printed message")
	require.Contains(t, we.err.Error(), "store: audit", "PrepareAudit itself was interrupted")
	require.Empty(t, packagePrefixInMessage.FindString(err.Error()), err.Error())
	require.NoFileExists(t, out)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "a copy of the store was left in TMPDIR")
}
