//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPredictFromAPipe: predict reads a named pipe once, start to end (no
// sniffing of its first bytes), and writes what it writes for the file.
func TestPredictFromAPipe(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	state := filepath.Join(dir, "s.json")
	_, err := runCLI(t, "train", "--data", files["csv"][0], "--label", "label", "--id", "name", "--out", state)
	require.NoError(t, err)
	want := predictOut(t, "--state", state, "--data", files["csv"][0])
	rows := mustRead(t, files["csv"][0])
	for _, format := range [][]string{nil, {"--format", "csv"}} {
		fifo := filepath.Join(dir, "rows")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		done := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err == nil {
				_, err = f.Write(rows)
				f.Close()
			}
			done <- err
		}()
		got := predictOut(t, append([]string{"--state", state, "--data", fifo}, format...)...)
		require.NoError(t, <-done)
		require.Equal(t, want, got)
		require.NoError(t, os.Remove(fifo))
	}
}
