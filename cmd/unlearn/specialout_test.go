//go:build unix

package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOutToSpecialFiles: --out streams into a named pipe and /dev/null
// without replacing them, and writes a link's target, keeping the link;
// the output is the one written to a plain file.
func TestOutToSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	state := filepath.Join(dir, "s.json")
	_, err := runCLI(t, "train", "--data", files["csv"][0], "--label", "label", "--id", "name", "--out", state)
	require.NoError(t, err)
	plain := filepath.Join(dir, "plain.csv")
	predictOut(t, "--state", state, "--data", files["csv"][0], "--out", plain)
	want := mustRead(t, plain)

	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(dir, "out.fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		got := make(chan []byte, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- nil
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- b
		}()
		predictOut(t, "--state", state, "--data", files["csv"][0], "--out", fifo)
		select {
		case b := <-got:
			require.Equal(t, string(want), string(b))
		case <-time.After(20 * time.Second):
			t.Fatal("nothing came through the pipe")
		}
		fi, err := os.Lstat(fifo)
		require.NoError(t, err)
		require.NotZero(t, fi.Mode()&fs.ModeNamedPipe, "the pipe is kept")
	})
	t.Run("link", func(t *testing.T) {
		target := filepath.Join(dir, "real.csv")
		require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
		link := filepath.Join(dir, "link.csv")
		require.NoError(t, os.Symlink("real.csv", link))
		predictOut(t, "--state", state, "--data", files["csv"][0], "--out", link)
		fi, err := os.Lstat(link)
		require.NoError(t, err)
		require.NotZero(t, fi.Mode()&fs.ModeSymlink, "the link is kept")
		require.Equal(t, string(want), string(mustRead(t, target)))
	})
	t.Run("link to an input", func(t *testing.T) {
		link := filepath.Join(dir, "in-link.csv")
		require.NoError(t, os.Symlink(files["csv"][0], link))
		before := mustRead(t, files["csv"][0])
		_, err := runCLI(t, "predict", "--state", state, "--data", files["csv"][0], "--out", link)
		require.ErrorContains(t, err, "--out")
		require.ErrorContains(t, err, "input")
		require.Equal(t, before, mustRead(t, files["csv"][0]))
	})
	t.Run("dev null", func(t *testing.T) {
		before, err := os.Lstat(os.DevNull)
		require.NoError(t, err)
		predictOut(t, "--state", state, "--data", files["csv"][0], "--out", os.DevNull)
		after, err := os.Lstat(os.DevNull)
		require.NoError(t, err)
		require.True(t, os.SameFile(before, after))
		require.Equal(t, before.Mode(), after.Mode())
	})
}
