package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// runCLI runs the root command with args and returns stdout+stderr and the
// error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestGenTrainRoundTrip(t *testing.T) {
	dir := t.TempDir()
	streamFile := filepath.Join(dir, "l.jsonl")
	stateFile := filepath.Join(dir, "state.json")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--events", "300", "--d", "6", "--seed", "4", "--out", streamFile)
	require.NoError(t, err)
	h, err := stream.ReadFile(streamFile)
	require.NoError(t, err)
	require.Equal(t, 300, len(h.Events), "events written by gen")
	require.Equal(t, 6, h.Header.D, "d written by gen")
	require.Equal(t, stream.KindLogistic, h.Header.Kind, "kind written by gen")
	out, err := runCLI(t, "train", "--stream", streamFile, "--tau", "4", "--out", stateFile)
	require.NoError(t, err)
	require.Contains(t, out, "events 300", "train must report 300 events")
	data, err := os.ReadFile(stateFile)
	require.NoError(t, err)
	got, _, err := olbfgs.UnmarshalSnapshot(data)
	require.NoError(t, err)
	cfg := olbfgs.DefaultConfig(6)
	cfg.Memory = 4
	want, err := olbfgs.Replay(cfg, h.Loss, h.Events)
	require.NoError(t, err)
	if !got.Equal(want) {
		t.Fatal("the snapshot written by train differs from a replay of the stream")
	}
}

func TestCLIErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	streamFile := filepath.Join(dir, "q.jsonl")
	_, err := runCLI(t, "gen", "--events", "20", "--d", "3", "--out", streamFile)
	require.NoError(t, err)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"gen without out", []string{"gen"}, "--out"},
		{"gen bad kind", []string{"gen", "--kind", "cubic", "--out", filepath.Join(dir, "x")}, "--kind"},
		{"train without stream", []string{"train", "--out", "x"}, "--stream"},
		{"train negative tau", []string{"train", "--stream", streamFile, "--out", filepath.Join(dir, "s"), "--tau", "-1"}, "--tau"},
		{"train zero eta", []string{"train", "--stream", streamFile, "--out", filepath.Join(dir, "s"), "--eta", "0"}, "--eta"},
		{"train too many events", []string{"train", "--stream", streamFile, "--out", filepath.Join(dir, "s"), "--events", "21"}, "--events"},
		// Sizes past the toolkit's limits are usage errors, not crashes.
		{"train huge tau", []string{"train", "--stream", streamFile, "--out", filepath.Join(dir, "s"), "--tau", "100000000000"}, "--tau"},
		{"bound huge horizon", []string{"bound", "--G", "1", "--hmax", "1", "--constants-source", "assumed", "--rho", "0.5", "--horizon", "1000000000000"}, "--horizon"},
		{"decay huge mq", []string{"decay", "--mq", "1000000000000"}, "--mq"},
		{"unknown flag", []string{"train", "--bogus"}, "bogus"},
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
	_, err = os.Stat(filepath.Join(dir, "s"))
	require.ErrorIs(t, err, os.ErrNotExist, "a failed train left an output file behind")
}

// TestTrainRejectsHugeHeaderDimension: a stream whose header asks for a
// dimension no learner can hold is an error naming the file and the header
// field, not an out-of-memory crash.
func TestTrainRejectsHugeHeaderDimension(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.jsonl")
	require.NoError(t, os.WriteFile(big, []byte(`{"format":"olbfgs-stream/v1","kind":"logistic","d":1000000000000,"lambda":0.05}`+"\n"), 0o644))
	_, err := runCLI(t, "train", "--stream", big, "--out", filepath.Join(dir, "s"))
	require.ErrorIs(t, err, olbfgs.ErrConfig)
	require.ErrorContains(t, err, big+`: header field "d"`)
}

func TestTrainReportsBadStreamLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	content := `{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}
{"op":"insert","id":1,"x":[1,2],"y":1}
{"op":"delete","id":5}
`
	require.NoError(t, os.WriteFile(bad, []byte(content), 0o644))
	_, err := runCLI(t, "train", "--stream", bad, "--out", filepath.Join(dir, "s"))
	require.ErrorIs(t, err, stream.ErrUnknownDeletion)
	require.ErrorContains(t, err, "line 3", "the error must give the line")
}
