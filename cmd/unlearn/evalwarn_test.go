package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/model"
)

// TestEvaluateSingleClassWarning: a model that predicts one class for
// every held-out row (trained on rows of one label whose features share a
// constant) is named on standard error and in the JSON's warnings with
// the class it predicts and the recall of the other, and its figures are
// still printed.
func TestEvaluateSingleClassWarning(t *testing.T) {
	dir := t.TempDir()
	stream := func(name string, label func(i int) int) string {
		var b strings.Builder
		b.WriteString(`{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05,"T":40}` + "\n")
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&b, `{"op":"insert","id":%d,"x":[1,0.0%d],"y":%d}`+"\n", i, i%10, label(i))
		}
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		return path
	}
	train := stream("train.jsonl", func(int) int { return 1 })
	held := stream("held.jsonl", func(i int) int { return 2*(i%2) - 1 })
	state := filepath.Join(dir, "state.json")
	out, err := runCLI(t, "train", "--stream", train, "--out", state)
	require.NoError(t, err, out)

	want := `predicts the class "1" for every one of the 40 held-out rows (recall of the other classes: "-1" 0.0000)`
	stdout, stderr, err := runCLISplit(t, "evaluate", "--state", state, "--stream", held)
	require.NoError(t, err, stderr)
	require.Contains(t, stderr, "warning: "+state+" "+want)
	require.Contains(t, stdout, "0.5000", "the figures are printed beside the warning")

	stdout, _, err = runCLISplit(t, "evaluate", "--state", state, "--stream", held, "--json")
	require.NoError(t, err)
	var rep model.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Models, 1)
	require.Len(t, rep.Models[0].Warnings, 1)
	require.Contains(t, rep.Models[0].Warnings[0], want)

	// Held-out rows of the one class it predicts: nothing to warn about.
	ones := stream("ones.jsonl", func(int) int { return 1 })
	_, stderr, err = runCLISplit(t, "evaluate", "--state", state, "--stream", ones)
	require.NoError(t, err)
	require.NotContains(t, stderr, "warning:")
}

// TestEvaluateNoiseDominates: the noised release an approximate forget of
// a certifiable store publishes, evaluated with its certificate, is said to be dominated by its
// noise (the noise's spread sd(xᵀn) exceeds the model's own), on standard
// error and in the JSON's warnings; the store's own current state is not.
func TestEvaluateNoiseDominates(t *testing.T) {
	dir := t.TempDir()
	data := practitionerCSV(t, "data.csv", 80, nil)
	st, key := filepath.Join(dir, "model"), filepath.Join(dir, "certifier")
	flags := []string{"--label", "y", "--id", "id"}
	out, err := runCLI(t, append([]string{"init", "--store", st, "--data", data, "--profile", "certifiable", "--sample-bound", "5000"}, flags...)...)
	require.NoError(t, err, out)
	out, err = runCLI(t, append([]string{"ingest", "--store", st, "--data", data}, flags...)...)
	require.NoError(t, err, out)
	_, err = runCLI(t, "keygen", "--out", key)
	require.NoError(t, err)
	// An approximate forget keeps its output only noised: release 1.
	out, err = runCLI(t, "forget", "--store", st, "--ids", "40", "--max-replay", "1", "--intervention", "noop",
		"--epsilon", "1", "--delta", "1e-5", "--key", key+".key", "--insecure-seeded", "3", "--no-ledger")
	require.NoError(t, err, out)
	rel, cert := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.json")
	_, err = runCLI(t, "releases", "--store", st, "--get", "1", "--out", rel, "--certificate", cert)
	require.NoError(t, err)

	args := append([]string{"evaluate", "--store", st, "--release", rel, "--certificate", cert, "--public-key", key + ".pub", "--data", data}, flags...)
	_, stderr, err := runCLISplit(t, args...)
	require.NoError(t, err, stderr)
	require.Contains(t, stderr, "warning: release "+rel+": the noise dominates the scores")
	stdout, _, err := runCLISplit(t, append(args, "--json")...)
	require.NoError(t, err)
	var rep model.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	r := rep.Models[0]
	require.NotNil(t, r.NoiseOnScores)
	require.True(t, model.NoiseDominates(r.Scores, *r.NoiseOnScores))
	require.Contains(t, strings.Join(r.Warnings, "\n"), "the noise dominates the scores")
	for _, m := range rep.Models[1:] {
		require.NotContains(t, strings.Join(m.Warnings, "\n"), "the noise dominates", m.Model)
	}
}

// TestIngestSingleClassWarning: a certifiable store (progressive
// statistics off) whose deployed model predicts one class for the rows
// just ingested says so after the ingest, and evaluate says the same of
// those rows; a practitioner's store, whose model predicts both classes,
// says nothing.
func TestIngestSingleClassWarning(t *testing.T) {
	dir := t.TempDir()
	data := practitionerCSV(t, "data.csv", 120, nil)
	flags := []string{"--label", "y", "--id", "id"}
	for _, c := range []struct {
		profile string
		warn    bool
	}{{"certifiable", true}, {"practitioner", false}} {
		st := filepath.Join(dir, c.profile)
		out, err := runCLI(t, append([]string{"init", "--store", st, "--data", data, "--profile", c.profile}, flags...)...)
		require.NoError(t, err, out)
		_, ingestErr, err := runCLISplit(t, append([]string{"ingest", "--store", st, "--data", data}, flags...)...)
		require.NoError(t, err, ingestErr)
		_, evalErr, err := runCLISplit(t, append([]string{"evaluate", "--store", st, "--data", data}, flags...)...)
		require.NoError(t, err, evalErr)
		if !c.warn {
			require.NotContains(t, ingestErr, "warning:", c.profile)
			require.NotContains(t, evalErr, "warning:", c.profile)
			continue
		}
		require.Contains(t, ingestErr, "warning: the trained model predicts a single class: 100.0% of 120 rows of the data are predicted as +1")
		require.Contains(t, ingestErr, "with the certifiable profile, lower the regularization (--lambda)", "advice the profile allows")
		require.NotContains(t, ingestErr, "--standardize", "the certifiable profile refuses standardization")
		require.Contains(t, evalErr, `warning: current state predicts the class "1" for every one of the 120 held-out rows (recall of the other classes: "-1" 0.0000)`)
	}
}
