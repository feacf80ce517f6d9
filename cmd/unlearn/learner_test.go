package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
)

// practitionerCSV writes a CSV of n rows with an id column, three features
// of very different scales and offsets, and a 0/1 label that depends on
// them; skip lists ids left out (the deletion-edited file).
func practitionerCSV(t *testing.T, name string, n int, skip map[int]bool) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	b.WriteString("id,a,b,c,y\n")
	for i := 1; i <= n; i++ {
		a, bb, c := 1000+300*rng.NormFloat64(), 0.01*rng.NormFloat64(), 5+rng.NormFloat64()
		y := 0
		if (a-1000)/300+bb/0.01-(c-5)+0.5*rng.NormFloat64() > 0 {
			y = 1
		}
		if !skip[i] {
			fmt.Fprintf(&b, "%d,%g,%g,%g,%d\n", i, a, bb, c, y)
		}
	}
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

func loadSnapshot(t *testing.T, path string) *olbfgs.Learner {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	l, _, err := olbfgs.UnmarshalSnapshot(b)
	require.NoError(t, err)
	return l
}

// TestPractitionerForgetIsTrainOnEditedData runs the practitioner's
// workflow through the CLI: init and ingest with --profile practitioner,
// forget two rows exactly, and compare the store's state with train on
// the file without those rows: bit-identical, the options' state included.
func TestPractitionerForgetIsTrainOnEditedData(t *testing.T) {
	dir := t.TempDir()
	full := practitionerCSV(t, "full.csv", 60, nil)
	edited := practitionerCSV(t, "edited.csv", 60, map[int]bool{4: true, 37: true})
	store := filepath.Join(dir, "model")
	data := []string{"--label", "y", "--id", "id"}
	out, err := runCLI(t, append([]string{"init", "--store", store, "--data", full, "--profile", "practitioner", "--checkpoint-every", "16"}, data...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "learner options: intercept, standardized features, averaged iterates (polynomial decay γ = 10), pair damping δ = 10")
	assert.Contains(t, out, "λ = 0.003")
	out, err = runCLI(t, append([]string{"ingest", "--store", store, "--data", full}, data...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "progressive (predict, then train; 60 inserts)")
	out, err = runCLI(t, "forget", "--store", store, "--ids", "4,37")
	require.NoError(t, err, out)
	got := filepath.Join(dir, "got.json")
	_, err = runCLI(t, "export", "--store", store, "--out", got)
	require.NoError(t, err)
	want := filepath.Join(dir, "want.json")
	out, err = runCLI(t, append([]string{"train", "--data", edited, "--profile", "practitioner", "--out", want}, data...)...)
	require.NoError(t, err, out)
	g, w := loadSnapshot(t, got), loadSnapshot(t, want)
	require.True(t, g.Config().Standardize && g.Config().Average && g.Config().Progress)
	require.True(t, g.Equal(w), "the store after forget differs from train on the edited data")

	out, err = runCLI(t, "status", "--store", store)
	require.NoError(t, err, out)
	assert.Contains(t, out, "progressive (predict, then train; 58 inserts)")
	out, err = runCLI(t, "status", "--store", store, "--json")
	require.NoError(t, err, out)
	assert.Contains(t, out, `"progress": {`)
	assert.Contains(t, out, `"standardize": true`)
}

// TestProfileFlags checks the profile's defaults, a flag overriding it,
// the paper profile's unchanged snapshot format, and a bad profile name.
func TestProfileFlags(t *testing.T) {
	data := practitionerCSV(t, "d.csv", 40, nil)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	out, err := runCLI(t, "train", "--data", data, "--label", "y", "--id", "id", "--profile", "practitioner", "--standardize=false", "--eta", "0.05", "--out", a)
	require.NoError(t, err, out)
	c := loadSnapshot(t, a).Config()
	assert.False(t, c.Standardize, "--standardize=false overrides the profile")
	assert.True(t, c.Intercept && c.Average && c.Progress)
	assert.Equal(t, 0.05, c.StepSize, "--eta overrides the profile")
	assert.Equal(t, olbfgs.PractitionerStepDecay, c.StepDecay)

	p := filepath.Join(dir, "p.json")
	out, err = runCLI(t, "train", "--data", data, "--label", "y", "--id", "id", "--out", p)
	require.NoError(t, err, out)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"format": "olbfgs-state/v1"`)
	assert.Contains(t, string(b), `"lambda": 0.05`, "the paper profile keeps the data flags' λ")
	assert.NotContains(t, out, "progressive")

	_, err = runCLI(t, "train", "--data", data, "--label", "y", "--profile", "fast", "--out", p)
	require.ErrorContains(t, err, `--profile: "fast": want paper, practitioner or certifiable`)
	_, err = runCLI(t, "train", "--data", data, "--label", "y", "--profile", "practitioner", "--step-power", "2", "--out", p)
	require.ErrorContains(t, err, "--step-power")
}

// TestTrainWarnsWhenDiverging trains the paper's learner with progressive
// statistics on features of a large scale: the warning names the problem.
func TestTrainWarnsWhenDiverging(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b,y\n")
	rng := rand.New(rand.NewPCG(3, 3))
	for range 400 {
		a, c := 500+100*rng.NormFloat64(), 800+50*rng.NormFloat64()
		y := 0
		if a-500 > 0 {
			y = 1
		}
		fmt.Fprintf(&b, "%g,%g,%d\n", a, c, y)
	}
	p := filepath.Join(t.TempDir(), "big.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	out, err := runCLI(t, "train", "--data", p, "--label", "y", "--progress", "--out", filepath.Join(t.TempDir(), "s.json"))
	require.NoError(t, err, out)
	assert.Contains(t, out, "warning: the progressive loss of the last 400 inserts")
	out, err = runCLI(t, "train", "--data", p, "--label", "y", "--profile", "practitioner", "--out", filepath.Join(t.TempDir(), "s.json"))
	require.NoError(t, err, out)
	assert.NotContains(t, out, "warning")
}

func TestTuneOnSmallData(t *testing.T) {
	data := practitionerCSV(t, "d.csv", 200, nil)
	out, err := runCLI(t, "tune", "--data", data, "--label", "y", "--id", "id", "--profile", "practitioner", "--etas", "0.1,0.3", "--lambdas", "0.001,0.01")
	require.NoError(t, err, out)
	assert.Contains(t, out, "trained on 160 rows, held out 40")
	assert.Contains(t, out, "← best")
	assert.Regexp(t, `best: --eta 0\.[13] --lambda 0\.0[01]+1`, out)
	out, err = runCLI(t, "tune", "--data", data, "--label", "y", "--id", "id", "--json", "--etas", "0.1", "--lambdas", "0.001")
	require.NoError(t, err, out)
	assert.Contains(t, out, `"held_out_rows": 40`)
	_, err = runCLI(t, "tune", "--data", data, "--label", "y", "--holdout", "1")
	require.ErrorContains(t, err, "--holdout")
}

// TestMultinomialInitTrain builds a multinomial store from flags and trains
// a multinomial model on a CSV with three string classes.
func TestMultinomialInitTrain(t *testing.T) {
	dir := t.TempDir()
	out, err := runCLI(t, "init", "--store", filepath.Join(dir, "m"), "--kind", "multinomial", "--d", "4", "--k", "3")
	require.NoError(t, err, out)
	assert.Contains(t, out, "multinomial loss, d = 4")
	_, err = runCLI(t, "init", "--store", filepath.Join(dir, "m2"), "--kind", "multinomial", "--d", "4")
	require.ErrorContains(t, err, "--k")

	var b strings.Builder
	b.WriteString("x1,x2,species\n")
	rng := rand.New(rand.NewPCG(5, 5))
	names := []string{"setosa", "versicolor", "virginica"}
	for range 600 {
		k := rng.IntN(3)
		fmt.Fprintf(&b, "%g,%g,%s\n", float64(k)+0.3*rng.NormFloat64(), float64(2*k)+0.3*rng.NormFloat64(), names[k])
	}
	p := filepath.Join(dir, "iris.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	s := filepath.Join(dir, "m.json")
	out, err = runCLI(t, "train", "--data", p, "--label", "species", "--kind", "multinomial", "--classes", "all", "--profile", "practitioner", "--out", s)
	require.NoError(t, err, out)
	l := loadSnapshot(t, s)
	assert.Equal(t, 3, l.Outputs())
	assert.Equal(t, 3*3, l.ParamDim(), "K·(d+1) with the intercept")
	pr, _ := l.Progress()
	assert.Equal(t, 600, pr.N)
	out, err = runCLI(t, "evaluate", "--state", s, "--data", p, "--label", "species", "--classes", "all")
	require.NoError(t, err, out)
	var n int
	var loss, acc, norm float64
	line := out[strings.Index(out, s):]
	_, err = fmt.Sscanf(line[len(s):], "%d %g %g %g", &n, &loss, &acc, &norm)
	require.NoError(t, err, out)
	assert.Equal(t, 600, n)
	// One pass with the profile's conservative steps on 600 rows of d = 2
	// (a stronger step would do better: unlearn tune): well above chance (1/3).
	assert.Greater(t, acc, 0.85, "three well-separated classes: %s", out)
}

// TestTrainWarnsSingleClassModel trains the paper's learner on features far
// from zero with labels they do not predict: the trained model predicts one
// class on the data, and train says so (whatever the profile, without
// --progress); the practitioner's model does not.
func TestTrainWarnsSingleClassModel(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b,y\n")
	rng := rand.New(rand.NewPCG(4, 4))
	for range 500 {
		fmt.Fprintf(&b, "%g,%g,%d\n", 100+rng.NormFloat64(), 100+rng.NormFloat64(), rng.IntN(2))
	}
	p := filepath.Join(t.TempDir(), "far.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	out, err := runCLI(t, "train", "--data", p, "--label", "y", "--out", filepath.Join(t.TempDir(), "s.json"))
	require.NoError(t, err, out)
	assert.Regexp(t, `warning: the trained model predicts a single class: 100\.0% of 500 rows of the data are predicted as [-+]1`, out)
	out, err = runCLI(t, "train", "--data", p, "--label", "y", "--profile", "practitioner", "--out", filepath.Join(t.TempDir(), "s.json"))
	require.NoError(t, err, out)
	assert.NotContains(t, out, "single class")
}

// TestCertifiableProfileRefusesUncoveredFlags: init and train with
// --profile certifiable refuse every learner option the scheduled bound
// does not cover (docs/theory.md §16.10), each by its flag's name, and
// write nothing; the profile itself is accepted.
func TestCertifiableProfileRefusesUncoveredFlags(t *testing.T) {
	data := practitionerCSV(t, "data.csv", 20, nil)
	refused := [][]string{
		{"--tau", "5"}, {"--standardize"}, {"--ridge-intercept=false"}, {"--step-power", "0.5"},
		{"--damping", "1"}, {"--pair-angle", "0.1"}, {"--pair-min", "0.5"}, {"--pair-max", "2"},
		{"--curvature-tol", "0.001"},
	}
	for _, cmd := range []string{"init", "train"} {
		for _, extra := range refused {
			flag := strings.SplitN(extra[0], "=", 2)[0]
			t.Run(cmd+flag, func(t *testing.T) {
				dir := t.TempDir()
				args := []string{cmd, "--data", data, "--label", "y", "--id", "id", "--profile", "certifiable"}
				target := filepath.Join(dir, "out")
				if cmd == "init" {
					args = append(args, "--store", target)
				} else {
					args = append(args, "--out", target)
				}
				out, err := runCLI(t, append(args, extra...)...)
				require.Error(t, err, out)
				require.ErrorContains(t, err, flag+": ", "the error names the flag")
				require.Contains(t, err.Error(), "certifiable profile")
				_, statErr := os.Stat(target)
				require.True(t, os.IsNotExist(statErr), "nothing written")
			})
		}
	}
	// The profile without those flags: the configuration is accepted.
	out, err := runCLI(t, "init", "--store", filepath.Join(t.TempDir(), "m"), "--data", data, "--label", "y", "--id", "id", "--profile", "certifiable", "--sample-bound", "5000")
	require.NoError(t, err, out)
}

// TestCertifiableProfileClipsRows: under --profile certifiable the sample
// bound defaults to √d/2, and ingest and train scale every row above it
// onto the ball ‖x‖ = B (saying how many) instead of refusing it, the
// same map in both: after an exact forget the store's state is train's on
// the file without those rows, bit for bit. A store of another profile
// with the same bound still refuses such a row.
func TestCertifiableProfileClipsRows(t *testing.T) {
	dir := t.TempDir()
	full := practitionerCSV(t, "full.csv", 40, nil)
	edited := practitionerCSV(t, "edited.csv", 40, map[int]bool{9: true})
	st := filepath.Join(dir, "model")
	data := []string{"--label", "y", "--id", "id"}
	out, err := runCLI(t, append([]string{"init", "--store", st, "--data", full, "--profile", "certifiable"}, data...)...)
	require.NoError(t, err, out)
	b := olbfgs.CertifiableSampleBound(3)
	require.Equal(t, math.Sqrt(3)/2, b)
	require.Contains(t, out, fmt.Sprintf("sample bound B = %.4g", b))
	require.Contains(t, out, fmt.Sprintf("rows clipped to the sample bound: ingest scales a row with ‖x‖ > B = %.4g onto the ball", b))
	out, err = runCLI(t, append([]string{"ingest", "--store", st, "--data", full}, data...)...)
	require.NoError(t, err, out)
	require.Contains(t, out, "clipped 40 rows to the sample bound", "every row (a ≈ 1000) is above √3/2")
	out, err = runCLI(t, "forget", "--store", st, "--ids", "9")
	require.NoError(t, err, out)
	got, want := filepath.Join(dir, "got.json"), filepath.Join(dir, "want.json")
	_, err = runCLI(t, "export", "--store", st, "--out", got)
	require.NoError(t, err)
	out, err = runCLI(t, append([]string{"train", "--data", edited, "--profile", "certifiable", "--out", want}, data...)...)
	require.NoError(t, err, out)
	require.Contains(t, out, "clipped 39 rows to ‖x‖ ≤ B")
	g, w := loadSnapshot(t, got), loadSnapshot(t, want)
	require.Equal(t, b, g.Config().SampleBound)
	require.True(t, g.Equal(w), "the store after forget differs from train on the edited data")
	out, err = runCLI(t, "status", "--store", st)
	require.NoError(t, err, out)
	require.Contains(t, out, "rows clipped to the sample bound")

	// The same bound without the profile: the row is refused, not clipped.
	other := filepath.Join(dir, "other")
	out, err = runCLI(t, append([]string{"init", "--store", other, "--data", full, "--radius", "10", "--sample-bound", fmt.Sprint(b)}, data...)...)
	require.NoError(t, err, out)
	require.NotContains(t, out, "rows clipped")
	_, err = runCLI(t, append([]string{"ingest", "--store", other, "--data", full}, data...)...)
	require.ErrorContains(t, err, "sample bound")
}
