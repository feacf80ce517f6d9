package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if _, err := runCLI(t, "gen", "--kind", "logistic", "--events", "300", "--d", "6", "--seed", "4", "--out", streamFile); err != nil {
		t.Fatal(err)
	}
	h, err := stream.ReadFile(streamFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 300 || h.Header.D != 6 || h.Header.Kind != stream.KindLogistic {
		t.Fatalf("gen wrote %d events, d=%d, kind %s; want 300, 6, logistic", len(h.Events), h.Header.D, h.Header.Kind)
	}
	out, err := runCLI(t, "train", "--stream", streamFile, "--tau", "4", "--out", stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "events 300") {
		t.Fatalf("train output %q does not report 300 events", out)
	}
	data, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := olbfgs.UnmarshalSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg := olbfgs.DefaultConfig(6)
	cfg.Memory = 4
	want, err := olbfgs.Replay(cfg, h.Loss, h.Events)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Fatal("the snapshot written by train differs from a replay of the stream")
	}
}

func TestCLIErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	streamFile := filepath.Join(dir, "q.jsonl")
	if _, err := runCLI(t, "gen", "--events", "20", "--d", "3", "--out", streamFile); err != nil {
		t.Fatal(err)
	}
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
		{"unknown flag", []string{"train", "--bogus"}, "bogus"},
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
	if _, err := os.Stat(filepath.Join(dir, "s")); !os.IsNotExist(err) {
		t.Fatal("a failed train left an output file behind")
	}
}

func TestTrainReportsBadStreamLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	content := `{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}
{"op":"insert","id":1,"x":[1,2],"y":1}
{"op":"delete","id":5}
`
	if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runCLI(t, "train", "--stream", bad, "--out", filepath.Join(dir, "s"))
	if !errors.Is(err, stream.ErrUnknownDeletion) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("err = %v, want an unknown-deletion error at line 3", err)
	}
}
