package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigurationsThatCannotLearn: issue 19's configurations, on which
// every ingest failed (init accepted them, exit 0), are refused by init and
// train, naming the flag, and no store is created; sensible neighbours are
// accepted (olbfgs.Config.CheckFirstSteps has the criteria).
func TestConfigurationsThatCannotLearn(t *testing.T) {
	dir := t.TempDir()
	stream := filepath.Join(dir, "l.jsonl")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--events", "30", "--d", "3", "--out", stream)
	require.NoError(t, err)
	for _, tc := range []struct {
		args []string
		flag string // "" accepted
	}{
		{[]string{"--eta", "1e308"}, "--eta"},
		{[]string{"--gamma0", "1e308"}, "--gamma0"},
		{[]string{"--lambda", "1e308"}, "--lambda"},
		{[]string{"--sample-bound", "1e-320"}, "--sample-bound"},
		{[]string{"--radius", "5e-324"}, "--radius"},
		{[]string{"--radius", "1.7e308"}, "--radius"},
		{[]string{"--pair-angle", "0.5", "--pair-min", "1e-320", "--pair-max", "1"}, "--pair-min"},
		{[]string{"--gamma0", "1000"}, "--gamma0"}, // η·γ₀·λ = 0.1·1000·0.05 = 5
		{[]string{"--gamma0", "100"}, ""},          // 0.5
		{[]string{"--eta", "1"}, ""},
		{[]string{"--eta", "1e308", "--radius", "5"}, ""},
		{[]string{"--lambda", "100", "--gamma0", "0.01"}, ""},
	} {
		name := strings.Join(tc.args, " ")
		t.Run("init "+name, func(t *testing.T) {
			st := filepath.Join(t.TempDir(), "model")
			_, err := runCLI(t, append([]string{"init", "--store", st, "--kind", "logistic", "--d", "3"}, tc.args...)...)
			wantFlag := tc.flag
			if wantFlag == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var ue usageError
			assert.ErrorAs(t, err, &ue)
			assert.True(t, strings.HasPrefix(err.Error(), wantFlag+":"), "%v", err)
			_, statErr := os.Stat(st)
			assert.True(t, os.IsNotExist(statErr), "a store was created")
		})
	}
	// train: the stream's header fixes λ; η and γ₀ come from the flags.
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--eta", "1e308"}, "--eta"},
		{[]string{"--gamma0", "1e308"}, "--gamma0"},
		{[]string{"--sample-bound", "1e-320"}, "--sample-bound"},
		{[]string{"--eta", "0.5"}, ""},
	} {
		t.Run("train "+strings.Join(tc.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "s.json")
			_, err := runCLI(t, append([]string{"train", "--stream", stream, "--out", out}, tc.args...)...)
			if tc.flag == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.flag+":"), "%v", err)
			_, statErr := os.Stat(out)
			assert.True(t, os.IsNotExist(statErr), "train wrote its output")
		})
	}
	// A header whose λ cannot be learned names the file.
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":1e308}`+"\n"+`{"op":"insert","id":1,"x":[0.1,0.2],"y":1}`+"\n"), 0o644))
	_, err = runCLI(t, "init", "--store", filepath.Join(dir, "m2"), "--header", bad)
	require.ErrorContains(t, err, "--header "+bad)
	_, err = runCLI(t, "train", "--stream", bad, "--out", filepath.Join(dir, "s2.json"))
	require.ErrorContains(t, err, "--stream "+bad)
}
