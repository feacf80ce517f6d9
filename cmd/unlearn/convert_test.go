package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/stream"
)

// TestConvertThenTrainBitForBit: convert a CSV file with string ids and 0/1
// labels, then train on it; the snapshot equals the one trained on the same
// data written densely by hand (same header), byte for byte.
func TestConvertThenTrainBitForBit(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(in, []byte("name,a,b,label\nann,0.5,-1.25,1\nbob,2,0,0\ncy,-0.75,3.5,1\ndee,1e-3,1,0\neve,0.25,-0.5,1\n"), 0o644))
	conv := filepath.Join(dir, "d.jsonl")
	out, err := runCLI(t, "convert", in, "--label", "label", "--id", "name", "--out", conv)
	require.NoError(t, err, out)
	require.Contains(t, out, "events 5, kind logistic, d 2")
	require.Contains(t, out, "wrote "+dataset.MappingFile(conv))
	require.Equal(t, "id,key\n1,ann\n2,bob\n3,cy\n4,dee\n5,eve\n", string(readFile(t, dataset.MappingFile(conv))))

	hand := filepath.Join(dir, "hand.jsonl")
	require.NoError(t, os.WriteFile(hand, []byte(`{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}
{"op":"insert","id":1,"x":[0.5,-1.25],"y":1}
{"op":"insert","id":2,"x":[2,0],"y":-1}
{"op":"insert","id":3,"x":[-0.75,3.5],"y":1}
{"op":"insert","id":4,"x":[0.001,1],"y":-1}
{"op":"insert","id":5,"x":[0.25,-0.5],"y":1}
`), 0o644))
	// The converted header carries metadata; strip it so the snapshots
	// (which embed the header) can be compared byte for byte.
	h, err := stream.ReadFile(conv)
	require.NoError(t, err)
	h.Header.Meta = nil
	require.NoError(t, stream.WriteFile(conv, h))
	for _, f := range []string{conv, hand} {
		_, err := runCLI(t, "train", "--stream", f, "--tau", "2", "--out", f+".state")
		require.NoError(t, err)
	}
	require.Equal(t, string(readFile(t, hand+".state")), string(readFile(t, conv+".state")))
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("a,y\n1,1\nx,0\n"), 0o644))
	out := filepath.Join(dir, "out.jsonl")
	_, err := runCLI(t, "convert", bad, "--label", "y", "--out", out)
	require.ErrorIs(t, err, dataset.ErrValue)
	require.ErrorContains(t, err, "bad.csv: line 3, field 1 (\"a\")")
	_, statErr := os.Stat(out)
	require.ErrorIs(t, statErr, os.ErrNotExist, "a failed conversion writes nothing")

	for _, c := range []struct {
		name string
		args []string
		flag string
	}{
		{"no out", []string{"convert", bad, "--label", "y"}, "--out"},
		{"no label", []string{"convert", bad, "--out", out}, "--label"},
		{"unknown column", []string{"convert", bad, "--label", "z", "--out", out}, "--label"},
		{"bad kind", []string{"convert", bad, "--label", "y", "--kind", "quadratic", "--out", out}, "--kind"},
		{"bad format", []string{"convert", bad, "--format", "xls", "--out", out}, "--format"},
		{"one class", []string{"convert", bad, "--label", "y", "--classes", "1", "--out", out}, "--classes"},
		{"comma", []string{"convert", bad, "--label", "y", "--comma", ";;", "--out", out}, "--comma"},
	} {
		_, err := runCLI(t, c.args...)
		var ue usageError
		require.ErrorAs(t, err, &ue, c.name)
		require.ErrorContains(t, err, c.flag, c.name)
	}
}

func TestConvertSparseTrainsLikeDense(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.svm")
	require.NoError(t, os.WriteFile(in, []byte("+1 1:0.5 7:-1\n-1 3:2\n+1 2:1 7:0.25\n-1 1:-1 4:3\n+1 5:0.5 6:0.5\n-1 2:-2\n"), 0o644))
	for _, sparse := range []bool{false, true} {
		args := []string{"convert", in, "--out", filepath.Join(dir, "s.jsonl")}
		if sparse {
			args = append(args, "--sparse")
		}
		_, err := runCLI(t, args...)
		require.NoError(t, err)
		h, err := stream.ReadFile(filepath.Join(dir, "s.jsonl"))
		require.NoError(t, err)
		require.Equal(t, sparse, h.Events[0].Sample.IsSparse())
		h.Header.Meta = nil // the source options differ
		require.NoError(t, stream.WriteFile(filepath.Join(dir, "s.jsonl"), h))
		_, err = runCLI(t, "train", "--stream", filepath.Join(dir, "s.jsonl"), "--tau", "2", "--out", filepath.Join(dir, "state"+map[bool]string{false: "-dense", true: "-sparse"}[sparse]))
		require.NoError(t, err)
	}
	require.Equal(t, string(readFile(t, filepath.Join(dir, "state-dense"))), string(readFile(t, filepath.Join(dir, "state-sparse"))))
}
