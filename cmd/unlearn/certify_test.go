package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/certify"
	"unlearn/olbfgs"
)

// certifyFixture writes a quadratic stream with two realized deletions,
// trains on it and returns the directory, the stream and the state file.
func certifyFixture(t *testing.T) (dir, streamFile, stateFile string) {
	t.Helper()
	dir = t.TempDir()
	streamFile = filepath.Join(dir, "q.jsonl")
	stateFile = filepath.Join(dir, "state.json")
	_, err := runCLI(t, "gen", "--events", "120", "--d", "4", "--seed", "3", "--out", streamFile)
	require.NoError(t, err)
	f, err := os.OpenFile(streamFile, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"op\":\"delete\",\"id\":100}\n{\"op\":\"delete\",\"id\":7}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = runCLI(t, "train", "--stream", streamFile, "--tau", "5", "--out", stateFile)
	require.NoError(t, err)
	return dir, streamFile, stateFile
}

// boundArgs are bound inputs with an assumed contraction.
var boundArgs = []string{"--G", "3", "--hmin", "0.1", "--hmax", "1", "--constants-source", "assumed", "--rho", "0.9"}

func TestBoundCmd(t *testing.T) {
	// Ages 0 and 5 with ρ = 0.9 (assumed), η = 0.1: the CLI prints the
	// scenario's α.
	out, err := runCLI(t, append([]string{"bound", "--ages", "0,5", "--horizon", "3", "--series"}, boundArgs...)...)
	require.NoError(t, err)
	k, err := bound.AssumedContraction(0.9)
	require.NoError(t, err)
	res, err := bound.Scenario{Constants: bound.Constants{G: 3, HMin: 0.1, HMax: 1, Eta: 0.1, Tau: 10, Source: bound.Assumed},
		Contraction: k, Ages: []int{0, 5}, Horizon: 3}.Bound()
	require.NoError(t, err)
	want := "alpha       " + strconv.FormatFloat(res.Alpha[3], 'g', -1, 64)
	assert.Contains(t, out, want, "bound output")
	assert.Contains(t, out, "provenance  assumed", "bound output")
	for k := 0; k <= 3; k++ {
		assert.Contains(t, out, "\n"+strconv.Itoa(k)+"  ", "the series lacks row %d", k)
	}
	// The analytic contraction from μ and L.
	out, err = runCLI(t, "bound", "--G", "2", "--hmin", "0.25", "--hmax", "1", "--eta", "0.2", "--constants-source", "proved",
		"--mu", "1", "--L", "4", "--commuting", "--ages", "3")
	require.NoError(t, err)
	assert.Contains(t, out, "provenance  proved", "analytic contraction output")
	assert.Contains(t, out, "analytic, commuting", "analytic contraction output")
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
		{"given-alpha-rebuild-classic-beta", []string{"--alpha", "0.5", "--alpha-source", "proved", "--alpha-method", "by hand",
			"--memory", "rebuild", "--retained", streamFile, "--retained-last", "5", "--beta", "0.01",
			"--calibration", "classic", "--epsilon", "0.5"}, "state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".released.json")
			cert := filepath.Join(dir, tc.name+".cert.json")
			pub := filepath.Join(dir, tc.name+".public.json")
			args := []string{"certify", "--state", stateFile, "--out", out, "--certificate", cert, "--public-certificate", pub,
				"--epsilon", "1", "--delta", "1e-5", "--insecure-seeded", "42"}
			msg, err := runCLI(t, append(args, tc.args...)...)
			require.NoError(t, err)
			assert.Contains(t, msg, "covers      "+tc.covers, "certify output")
			assert.Contains(t, msg, "NOT for deployment", "certify output")
			data, err := os.ReadFile(cert)
			require.NoError(t, err)
			c, err := certify.ParseCertificate(data)
			require.NoError(t, err)
			assert.Equal(t, 2, c.Deletions, "certificate: deletions")
			assert.Equal(t, tc.covers, string(c.Covers), "certificate: covers")
			assert.Equal(t, "seeded", c.Sampler, "certificate: sampler")
			if tc.name == "bound-from-stream-rebuild" {
				// Ids 7 and 100 are the 7th and 100th of 120 inserts: ages 113, 20.
				assert.Equal(t, []int{113, 20}, c.Sensitivity.Bound.Ages, "ages from the stream")
			}
			msg, err = runCLI(t, "verify", "--certificate", cert, "--before", stateFile, "--after", out)
			require.NoError(t, err, "verify output:\n%s", msg)
			require.Contains(t, msg, "VALID", "verify output")
			msg, err = runCLI(t, "verify", "--certificate", pub, "--after", out)
			require.NoError(t, err, "verify of the public certificate, output:\n%s", msg)
			require.Contains(t, msg, "not checked", "verify of the public certificate")
			// Tampering with the released state is detected, with a non-zero
			// status (not a usage error) naming the field.
			l, h, err := olbfgs.UnmarshalSnapshot(mustRead(t, out))
			require.NoError(t, err)
			l.MarkDeleted(1)
			bad, err := olbfgs.MarshalSnapshot(l, h)
			require.NoError(t, err)
			badFile := filepath.Join(dir, tc.name+".bad.json")
			require.NoError(t, os.WriteFile(badFile, bad, 0o644))
			_, err = runCLI(t, "verify", "--certificate", cert, "--before", stateFile, "--after", badFile)
			assert.ErrorIs(t, err, certify.ErrHash, "tampered state")
			var ue usageError
			assert.NotErrorAs(t, err, &ue, "a tampered state is not a usage error")
			assert.ErrorContains(t, err, "after_sha256", "tampered state")
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
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
		{"certify-alpha-and-hmin", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--hmin", "0.1"}, base...), given...), "--hmin"},
		{"certify-alpha-and-memory-model", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--memory-model", "coupled"}, base...), given...), "--memory-model"},
		{"certify-alpha-and-lambda-z", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--lambda-z", "2"}, base...), given...), "--lambda-z"},
		{"certify-alpha-and-horizon", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--horizon", "3"}, base...), given...), "--horizon"},
		{"certify-alpha-and-eta", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--eta", "0.5"}, base...), given...), "--eta"},
		{"certify-alpha-and-stream", append(append([]string{"certify", "--epsilon", "1", "--delta", "1e-5", "--stream", streamFile}, base...), given...), "--stream"},
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
			require.Error(t, err, "command succeeded")
			var ue usageError
			require.ErrorAs(t, err, &ue, "want a usage error (exit status 2)")
			require.ErrorContains(t, err, tt.want, "the error must name the flag")
		})
	}
	_, err := os.Stat(out)
	assert.ErrorIs(t, err, os.ErrNotExist, "a failed certify left an output file behind")
}

// TestCertifyAlphaRejectsBoundInputs: with --alpha, every flag of the
// bound's inputs (and --stream, --actual) is a usage error naming the flag,
// and --alpha-source or --alpha-method without --alpha is one too.
func TestCertifyAlphaRejectsBoundInputs(t *testing.T) {
	dir, _, stateFile := certifyFixture(t)
	base := []string{"certify", "--state", stateFile, "--out", filepath.Join(dir, "out.json"),
		"--certificate", filepath.Join(dir, "cert.json"), "--epsilon", "1", "--delta", "1e-5"}
	flags := pflag.NewFlagSet("bound", pflag.ContinueOnError)
	new(boundFlags).register(flags)
	names := append(boundFlagNames(), "stream", "actual")
	require.Len(t, names, 19, "the bound's flags changed: check that --alpha should reject each new one")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			arg := "--" + name + "=" + stateFile
			if f := flags.Lookup(name); f != nil {
				switch f.Value.Type() {
				case "float64":
					arg = "--" + name + "=0.5"
				case "int":
					arg = "--" + name + "=3"
				case "intSlice":
					arg = "--" + name + "=1,2"
				case "bool":
					arg = "--" + name + "=false"
				case "string":
					arg = "--" + name + "=assumed"
				default:
					t.Fatalf("flag --%s of type %s: give it a value here", name, f.Value.Type())
				}
			}
			_, err := runCLI(t, append(base, "--alpha", "0.5", "--alpha-source", "assumed", arg)...)
			var ue usageError
			require.ErrorAs(t, err, &ue, "want a usage error")
			require.ErrorContains(t, err, "--"+name+": give --alpha or the bound's inputs, not both")
		})
	}
	for _, name := range []string{"alpha-source", "alpha-method"} {
		t.Run(name+"-without-alpha", func(t *testing.T) {
			args := append(append(base, boundArgs...), "--ages", "1,2", "--"+name+"=assumed")
			_, err := runCLI(t, args...)
			var ue usageError
			require.ErrorAs(t, err, &ue, "want a usage error")
			require.ErrorContains(t, err, "--"+name+": only with --alpha")
		})
	}
}

func TestCertifyCommandsHaveHelp(t *testing.T) {
	for _, name := range []string{"sigma", "bound", "certify", "verify"} {
		t.Run(name, func(t *testing.T) {
			out, err := runCLI(t, name, "--help")
			require.NoError(t, err)
			assert.Contains(t, out, "Examples:", "%s --help lacks examples", name)
			assert.Contains(t, out, "unlearn "+name, "%s --help lacks examples", name)
		})
	}
}
