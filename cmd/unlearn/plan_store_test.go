package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/store"
	"unlearn/unlearn"
)

// TestPlanStoreMatchesForget: for a certifiable-profile store of 80 rows
// (ids 1…80 inserted in order: id i is 80 − i steps old), `plan --store`
// before an approximate forget of ids 5, 40 and 41 (true ages 75, 40, 39)
// prints the ranges the certificate then discloses and the α and σ it
// charges — the worst case over the disclosed ranges, not the α of the
// true ages — and the values plan computes equal the certificate's bit for
// bit, for both disclosures (forget --ages pow2 and none).
func TestPlanStoreMatchesForget(t *testing.T) {
	dir := t.TempDir()
	data := practitionerCSV(t, "data.csv", 80, nil)
	key := filepath.Join(dir, "certifier")
	_, err := runCLI(t, "keygen", "--out", key)
	require.NoError(t, err)
	flags := []string{"--label", "y", "--id", "id"}
	for _, tc := range []struct {
		how       string
		disclosed string
	}{{"pow2", "2×[32, 63] [64, 79]"}, {"none", "3 of [0, 79]"}} {
		st := filepath.Join(dir, "model-"+tc.how)
		out, err := runCLI(t, append([]string{"init", "--store", st, "--data", data, "--profile", "certifiable", "--sample-bound", "5000"}, flags...)...)
		require.NoError(t, err, out)
		out, err = runCLI(t, append([]string{"ingest", "--store", st, "--data", data}, flags...)...)
		require.NoError(t, err, out)

		plan, err := runCLI(t, "plan", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--ages", "75,40,39", "--ages-disclosure", tc.how)
		require.NoError(t, err, plan)
		s, err := store.Open(st)
		require.NoError(t, err)
		how := store.AgesPow2
		if tc.how == "none" {
			how = store.AgesNone
		}
		pr, err := planRelease(s.LearnerConfig(), s.Header(), 80, []int{75, 40, 39}, how, unlearn.Builtin{Kind: unlearn.KindNoop}, 1, 1e-5, noise.Analytic)
		require.NoError(t, s.Close())
		require.NoError(t, err)
		// The α of the true ages is smaller: plan does not print it.
		s2, err := store.Open(st)
		require.NoError(t, err)
		trueAlpha, err := certify.DerivedAlpha(s2.LearnerConfig(), s2.Header(), &certify.Deletion{Ages: []int{75, 40, 39}, Steps: 80, Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}})
		require.NoError(t, s2.Close())
		require.NoError(t, err)
		require.Less(t, trueAlpha.Alpha, pr.alpha, tc.how)

		out, err = runCLI(t, "forget", "--store", st, "--ids", "5,40,41", "--max-replay", "1", "--intervention", "noop", "--ages", tc.how,
			"--epsilon", "1", "--delta", "1e-5", "--key", key+".key", "--insecure-seeded", "3", "--no-ledger")
		require.NoError(t, err, out)
		cert := filepath.Join(dir, "c-"+tc.how+".json")
		_, err = runCLI(t, "releases", "--store", st, "--get", "1", "--out", filepath.Join(dir, "r-"+tc.how+".json"), "--certificate", cert)
		require.NoError(t, err)
		c, err := certify.ParseCertificate(mustRead(t, cert))
		require.NoError(t, err)
		require.Equal(t, c.Sensitivity.Alpha, pr.alpha, tc.how)
		require.Equal(t, c.Sigma, pr.sigma, tc.how)
		require.Equal(t, tc.disclosed, pr.disclosed)
		row := fmt.Sprintf("| 1 | [75 40 39] | %s | %.4g | %.4g |", tc.disclosed, c.Sensitivity.Alpha, c.Sigma)
		require.True(t, strings.Contains(plan, row), "plan printed\n%s\nwant a row starting %s", plan, row)
	}
}
