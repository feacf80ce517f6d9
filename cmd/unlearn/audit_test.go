package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// auditStreamFile writes a small quadratic stream (d = 25) for the audit
// tests.
func auditStreamFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "q.jsonl")
	_, err := runCLI(t, "gen", "--kind", "quadratic", "--events", "400", "--seed", "3", "--out", path)
	require.NoError(t, err)
	return path
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// withExitRecorder replaces exitViolation for the test and returns a
// pointer that counts its calls.
func withExitRecorder(t *testing.T) *int {
	t.Helper()
	calls := new(int)
	old := exitViolation
	exitViolation = func() { *calls++ }
	t.Cleanup(func() { exitViolation = old })
	return calls
}

func TestAuditConsistent(t *testing.T) {
	in := auditStreamFile(t)
	out := filepath.Join(t.TempDir(), "audit.json")
	exits := withExitRecorder(t)
	// α = 1 is far above the true distance: a sound release.
	o, err := runCLI(t, "audit", "--stream", in, "--t-del", "300", "--intervention", "memory-reset",
		"--alpha", "1", "--epsilon", "1", "--delta", "1e-5", "--trials", "2000", "--seeded-noise", "5", "--out", out)
	require.NoError(t, err, o)
	require.Equal(t, 0, *exits, "no violation exit")
	last := lastLine(o)
	require.Contains(t, last, "certified ε = 1: consistent", "the last line states the verdict")
	require.True(t, strings.HasPrefix(last, "ε_lb = "), last)
	require.Contains(t, o, "seeded: for speed, not deployment")
	require.Contains(t, o, "wrote "+out)
	require.Contains(t, o, "memory reset", "the summary names the memory released")
	require.Contains(t, o, "no test separated the two worlds", "ε_lb = 0 in every test is said in words")
	require.NotContains(t, o, "assumed (assumed)")
	var rec auditRecord
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rec))
	require.Equal(t, "unlearn-audit/v1", rec.Format)
	require.Equal(t, "memory-reset", rec.Intervention)
	require.Equal(t, []int64{296, 297, 298, 299, 300}, rec.U, "5 most recent inserts of e_1..e_300")
	require.Equal(t, 2000, rec.Audit.Trials)
	require.Equal(t, "consistent", rec.Audit.Verdict)
	require.Equal(t, "seeded", rec.Audit.Sampler)
	require.Greater(t, rec.Release.Distance, 0.0)
	require.LessOrEqual(t, rec.Audit.EpsilonLB, 1.0)
}

// The derived path: a certifiable learner released exactly as certify.Wrap
// releases it; the audit finds it consistent, for a non-exact intervention
// (α derived) and for an exact one (both worlds identical, ε_lb = 0).
func TestAuditDerivedRelease(t *testing.T) {
	in := auditStreamFile(t)
	exits := withExitRecorder(t)
	for _, op := range []string{"param-only", "oracle"} {
		out := filepath.Join(t.TempDir(), "audit.json")
		o, err := runCLI(t, "audit", "--stream", in, "--t-del", "300", "--intervention", op, "--radius", "3", "--sample-bound", "10",
			"--memory", "rebuild", "--epsilon", "1", "--delta", "1e-5", "--trials", "2000", "--seeded-noise", "5", "--out", out)
		require.NoError(t, err, o)
		require.Equal(t, 0, *exits)
		require.Contains(t, lastLine(o), "consistent")
		var rec auditRecord
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &rec))
		if op == "oracle" {
			require.Contains(t, rec.Release.Mechanism, "exact")
			require.Zero(t, rec.Audit.EpsilonLB)
		} else {
			require.Contains(t, rec.Release.Mechanism, "certify.Certify")
			require.Contains(t, o, "memory rebuild", "the summary names the memory released (it said reset whatever --memory was)")
			require.Greater(t, rec.Release.Sigma, 0.0)
			require.GreaterOrEqual(t, rec.Release.Alpha, rec.Release.Distance, "the derived α must cover the true distance")
		}
	}
}

func TestAuditViolation(t *testing.T) {
	in := auditStreamFile(t)
	exits := withExitRecorder(t)
	// α a hundredth of the true distance (≈ 0.1 for this stream): unsound.
	o, err := runCLI(t, "audit", "--stream", in, "--t-del", "300", "--intervention", "noop",
		"--alpha", "0.001", "--epsilon", "1", "--delta", "1e-5", "--trials", "2000", "--seeded-noise", "5")
	require.NoError(t, err, o)
	require.Equal(t, 1, *exits, "a violation exits with status 3")
	require.Contains(t, lastLine(o), "> certified ε = 1: VIOLATION")
	require.NotContains(t, o, "no test separated")
}

func TestAuditFlagErrors(t *testing.T) {
	in := auditStreamFile(t)
	base := []string{"audit", "--stream", in, "--t-del", "300", "--intervention", "noop", "--alpha", "1", "--epsilon", "1", "--delta", "1e-5"}
	without := func(flag string) []string {
		var out []string
		for i := 0; i < len(base); i++ {
			if base[i] == "--"+flag {
				i++
				continue
			}
			out = append(out, base[i])
		}
		return out
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no stream", without("stream"), "--stream"},
		{"no intervention", without("intervention"), "--intervention"},
		{"no alpha and no radius", without("alpha"), "--radius"},
		{"no epsilon", without("epsilon"), "--epsilon"},
		{"no delta", without("delta"), "--delta"},
		{"unknown intervention", append(without("intervention"), "--intervention", "forget"), "--intervention"},
		{"negative alpha", append(without("alpha"), "--alpha", "-1"), "--alpha"},
		{"bad epsilon", append(without("epsilon"), "--epsilon", "0"), "--epsilon"},
		{"bad delta", append(without("delta"), "--delta", "1"), "--delta"},
		{"bad gamma", append(base, "--gamma", "1"), "--gamma"},
		{"bad selection", append(base, "--selection", "0"), "--selection"},
		{"too few trials", append(base, "--trials", "1"), "--trials"},
		{"t-del past the stream", append(base, "--t-del", "401"), "--t-del"},
		{"id not in the prefix", append(base, "--t-del", "100", "--ids", "350"), "--ids"},
		{"ids and mode", append(base, "--ids", "3", "--mode", "old"), "--ids"},
		{"bad mode", append(base, "--mode", "newest"), "--mode"},
		{"count too large", append(base, "--t-del", "10", "--count", "50"), "--count"},
		{"bad tau", append(base, "--tau", "-2"), "--tau"},
		{"bad eta", append(base, "--eta", "0"), "--eta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, tt.args...)
			require.Error(t, err)
			require.ErrorContains(t, err, tt.want)
			var ue usageError
			require.ErrorAs(t, err, &ue, "a bad flag is a usage error (exit status 2): %v", err)
		})
	}
}
