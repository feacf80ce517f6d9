package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"unlearn/bound"
	"unlearn/certify"
	"unlearn/olbfgs"
)

func TestSigmaCmd(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want      float64 // exact σ (mpmath values of docs/theory.md §8)
		tolerance float64 // relative: the analytic σ is ≤ 0.1% above exact (the library's bisection); classic is exact to round-off
	}{
		{"analytic-default", []string{"--alpha", "1", "--epsilon", "1", "--delta", "1e-5"}, 3.730632, 1e-3},
		{"analytic-scaled", []string{"--alpha", "2", "--epsilon", "0.5", "--delta", "1e-3"}, 2 * 4.610128, 1e-3},
		{"classic", []string{"--alpha", "1", "--epsilon", "0.1", "--delta", "1e-6", "--calibration", "classic"}, 52.98803, 1e-6},
		{"zero-alpha", []string{"--alpha", "0", "--epsilon", "1", "--delta", "1e-5"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"sigma"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
			if err != nil {
				t.Fatalf("output %q is not a number", out)
			}
			if got < tt.want*(1-1e-6) || !scalar.EqualWithinAbsOrRel(got, tt.want, 0, tt.tolerance) {
				t.Errorf("σ = %v, want %v (within %v, never below)", got, tt.want, tt.tolerance)
			}
		})
	}
}

// certifyFixture writes a quadratic stream with two realized deletions,
// trains on it and returns the directory, the stream and the state file.
func certifyFixture(t *testing.T) (dir, streamFile, stateFile string) {
	t.Helper()
	dir = t.TempDir()
	streamFile = filepath.Join(dir, "q.jsonl")
	stateFile = filepath.Join(dir, "state.json")
	if _, err := runCLI(t, "gen", "--events", "120", "--d", "4", "--seed", "3", "--out", streamFile); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(streamFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"op\":\"delete\",\"id\":100}\n{\"op\":\"delete\",\"id\":7}\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "train", "--stream", streamFile, "--tau", "5", "--out", stateFile); err != nil {
		t.Fatal(err)
	}
	return dir, streamFile, stateFile
}

// boundArgs are bound inputs with an assumed contraction.
var boundArgs = []string{"--G", "3", "--hmin", "0.1", "--hmax", "1", "--constants-source", "assumed", "--rho", "0.9"}

func TestBoundCmd(t *testing.T) {
	// Ages 0 and 5 with ρ = 0.9 (assumed), η = 0.1: the CLI prints the
	// scenario's α.
	out, err := runCLI(t, append([]string{"bound", "--ages", "0,5", "--horizon", "3", "--series"}, boundArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	k, err := bound.AssumedContraction(0.9)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bound.Scenario{Constants: bound.Constants{G: 3, HMin: 0.1, HMax: 1, Eta: 0.1, Tau: 10, Source: bound.Assumed},
		Contraction: k, Ages: []int{0, 5}, Horizon: 3}.Bound()
	if err != nil {
		t.Fatal(err)
	}
	want := "alpha       " + strconv.FormatFloat(res.Alpha[3], 'g', -1, 64)
	if !strings.Contains(out, want) || !strings.Contains(out, "provenance  assumed") {
		t.Errorf("output does not contain %q:\n%s", want, out)
	}
	for k := 0; k <= 3; k++ {
		if !strings.Contains(out, "\n"+strconv.Itoa(k)+"  ") {
			t.Errorf("the series lacks row %d:\n%s", k, out)
		}
	}
	// The analytic contraction from μ and L.
	out, err = runCLI(t, "bound", "--G", "2", "--hmin", "0.25", "--hmax", "1", "--eta", "0.2", "--constants-source", "proved",
		"--mu", "1", "--L", "4", "--commuting", "--ages", "3")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "provenance  proved") || !strings.Contains(out, "analytic, commuting") {
		t.Errorf("analytic contraction output:\n%s", out)
	}
}

func TestCertifyVerifyRoundTrip(t *testing.T) {
	dir, streamFile, stateFile := certifyFixture(t)
	for _, tc := range []struct {
		name   string
		args   []string
		covers string
	}{
		{"given-alpha-reset", []string{"--alpha", "0.5", "--alpha-source", "estimated", "--intervention", "noop"}, "state"},
		{"bound-from-stream-rebuild", append([]string{"--stream", streamFile, "--memory", "rebuild", "--retained", streamFile}, boundArgs...), "state"},
		{"bound-keep-classic", append([]string{"--ages", "19,112", "--memory", "keep", "--calibration", "classic", "--epsilon", "0.5"}, boundArgs...), "parameters"},
		{"shift-from-actual", append([]string{"--stream", streamFile, "--actual", stateFile}, boundArgs...), "state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".released.json")
			cert := filepath.Join(dir, tc.name+".cert.json")
			pub := filepath.Join(dir, tc.name+".public.json")
			args := []string{"certify", "--state", stateFile, "--out", out, "--certificate", cert, "--public-certificate", pub,
				"--epsilon", "1", "--delta", "1e-5", "--insecure-seeded", "42"}
			msg, err := runCLI(t, append(args, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(msg, "covers      "+tc.covers) || !strings.Contains(msg, "NOT for deployment") {
				t.Errorf("certify output:\n%s", msg)
			}
			data, err := os.ReadFile(cert)
			if err != nil {
				t.Fatal(err)
			}
			c, err := certify.ParseCertificate(data)
			if err != nil {
				t.Fatal(err)
			}
			if c.Deletions != 2 || string(c.Covers) != tc.covers || c.Sampler != "seeded" {
				t.Errorf("certificate: %d deletions, covers %s, sampler %s", c.Deletions, c.Covers, c.Sampler)
			}
			if tc.name == "bound-from-stream-rebuild" {
				// Ids 7 and 100 are the 7th and 100th of 120 inserts: ages 113, 20.
				if got := c.Sensitivity.Bound.Ages; len(got) != 2 || got[0] != 113 || got[1] != 20 {
					t.Errorf("ages from the stream %v, want [113 20]", got)
				}
			}
			msg, err = runCLI(t, "verify", "--certificate", cert, "--before", stateFile, "--after", out)
			if err != nil || !strings.Contains(msg, "VALID") {
				t.Fatalf("verify: %v\n%s", err, msg)
			}
			if msg, err = runCLI(t, "verify", "--certificate", pub, "--after", out); err != nil || !strings.Contains(msg, "not checked") {
				t.Fatalf("verify of the public certificate: %v\n%s", err, msg)
			}
			// Tampering with the released state is detected, with a non-zero
			// status (not a usage error) naming the field.
			l, h, err := olbfgs.UnmarshalSnapshot(mustRead(t, out))
			if err != nil {
				t.Fatal(err)
			}
			l.MarkDeleted(1)
			bad, err := olbfgs.MarshalSnapshot(l, h)
			if err != nil {
				t.Fatal(err)
			}
			badFile := filepath.Join(dir, tc.name+".bad.json")
			if err := os.WriteFile(badFile, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = runCLI(t, "verify", "--certificate", cert, "--before", stateFile, "--after", badFile)
			var ue usageError
			if !errors.Is(err, certify.ErrHash) || errors.As(err, &ue) || !strings.Contains(err.Error(), "after_sha256") {
				t.Errorf("tampered state: %v", err)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCertifyCLIErrorsNameTheFlag(t *testing.T) {
	dir, streamFile, stateFile := certifyFixture(t)
	out := filepath.Join(dir, "out.json")
	cert := filepath.Join(dir, "cert.json")
	base := []string{"--state", stateFile, "--out", out, "--certificate", cert}
	given := []string{"--alpha", "0.5", "--alpha-source", "assumed"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"sigma-missing-alpha", []string{"sigma", "--epsilon", "1", "--delta", "1e-5"}, "--alpha"},
		{"sigma-negative-alpha", []string{"sigma", "--alpha", "-1", "--epsilon", "1", "--delta", "1e-5"}, "--alpha"},
		{"sigma-epsilon-zero", []string{"sigma", "--alpha", "1", "--epsilon", "0", "--delta", "1e-5"}, "--epsilon"},
		{"sigma-delta-one", []string{"sigma", "--alpha", "1", "--epsilon", "1", "--delta", "1"}, "--delta"},
		{"sigma-classic-epsilon-1", []string{"sigma", "--alpha", "1", "--epsilon", "1", "--delta", "1e-5", "--calibration", "classic"}, "--epsilon"},
		{"sigma-bad-calibration", []string{"sigma", "--alpha", "1", "--epsilon", "1", "--delta", "1e-5", "--calibration", "laplace"}, "--calibration"},
		{"bound-missing-G", []string{"bound", "--rho", "0.5", "--constants-source", "proved"}, "--G"},
		{"bound-missing-source", []string{"bound", "--G", "1", "--rho", "0.5"}, "--constants-source"},
		{"bound-rho-1", []string{"bound", "--G", "1", "--hmax", "1", "--constants-source", "proved", "--rho", "1"}, "--rho"},
		{"bound-negative-G", []string{"bound", "--G", "-1", "--hmax", "1", "--constants-source", "proved", "--rho", "0.5"}, "--G"},
		{"bound-no-contraction", []string{"bound", "--G", "1", "--hmin", "0.1", "--hmax", "1", "--constants-source", "proved", "--mu", "1", "--L", "30"}, "--rho"},
		{"bound-bad-age", []string{"bound", "--G", "1", "--hmax", "1", "--constants-source", "proved", "--rho", "0.5", "--ages", "-2"}, "--ages"},
		{"bound-memory-model", []string{"bound", "--G", "1", "--hmax", "1", "--constants-source", "proved", "--rho", "0.5", "--memory-model", "none"}, "--memory-model"},
		{"certify-missing-state", []string{"certify", "--out", out, "--certificate", cert, "--epsilon", "1", "--delta", "1e-5"}, "--state"},
		{"certify-missing-delta", append(append([]string{"certify", "--epsilon", "1"}, base...), given...), "--delta"},
		{"certify-epsilon", append(append([]string{"certify", "--epsilon", "-1", "--delta", "1e-5"}, base...), given...), "--epsilon"},
		{"certify-beta", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--beta", "1"}, base...), given...), "--beta"},
		{"certify-alpha-negative", append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--alpha", "-1", "--alpha-source", "proved"}, base...), "--alpha"},
		{"certify-alpha-no-source", append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--alpha", "1"}, base...), "--alpha-source"},
		{"certify-alpha-and-bound", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--G", "1"}, base...), given...), "--G"},
		{"certify-no-ages", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5"}, base...), boundArgs...), "--ages"},
		{"certify-rho", append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--ages", "1,2", "--G", "1", "--hmax", "1", "--constants-source", "proved", "--rho", "1.5"}, base...), "--rho"},
		{"certify-classic", append(append([]string{"certify", "--epsilon", "2", "--delta", "1e-5", "--calibration", "classic"}, base...), given...), "--epsilon"},
		{"certify-memory", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--memory", "forget"}, base...), given...), "--memory"},
		{"certify-rebuild-without-data", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--memory", "rebuild"}, base...), given...), "--retained"},
		{"certify-retained-without-rebuild", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--retained", streamFile}, base...), given...), "--retained"},
		{"verify-missing-after", []string{"verify", "--certificate", cert}, "--after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, tt.args...)
			if err == nil {
				t.Fatal("command succeeded")
			}
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v is not a usage error (exit status 2)", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not name %s", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a failed certify left an output file behind")
	}
}

func TestCertifyCommandsHaveHelp(t *testing.T) {
	for _, name := range []string{"sigma", "bound", "certify", "verify"} {
		t.Run(name, func(t *testing.T) {
			out, err := runCLI(t, name, "--help")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "Examples:") || !strings.Contains(out, "unlearn "+name) {
				t.Errorf("%s --help lacks examples:\n%s", name, out)
			}
		})
	}
}
