package pathguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/ledger"
	"unlearn/store"
)

// fixture lays out, in a temporary folder: an input file in.txt, a store
// directory model/ (its database and its own ledger), a ledger elsewhere,
// a results folder, and links to each. It returns the folder.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("in.txt", "input")
	write("model/"+store.FileName, "SQLite format 3\x00rest")
	write("model/"+ownLedger, `{"type":"genesis","seq":0,"prev":"","genesis":{"format":"`+ledger.Format+`"}}`+"\n")
	write("other.ledger", `{"type":"genesis","seq":0,"prev":"","genesis":{"format":"`+ledger.Format+`"}}`+"\n")
	write("db.sqlite", "SQLite format 3\x00")
	write("results/manifest.json", "{}")
	write("results/sub/model/"+store.FileName, "SQLite format 3\x00")
	write("plain/x.json", "{}")
	require.NoError(t, os.Symlink("in.txt", filepath.Join(dir, "link-to-in")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "model"), filepath.Join(dir, "link-to-model")))
	require.NoError(t, os.Symlink("not-yet.txt", filepath.Join(dir, "dangling")))
	require.NoError(t, os.Link(filepath.Join(dir, "in.txt"), filepath.Join(dir, "hard-in")))
	require.NoError(t, os.Link(filepath.Join(dir, "model", store.FileName), filepath.Join(dir, "hard-db")))
	require.NoError(t, os.Link(filepath.Join(dir, "model", ownLedger), filepath.Join(dir, "hard-ledger")))
	require.NoError(t, os.Symlink(filepath.Join("model", store.FileName), filepath.Join(dir, "link-to-db")))
	require.NoError(t, os.Symlink("other.ledger", filepath.Join(dir, "link-to-ledger")))
	require.NoError(t, os.Symlink("db.sqlite", filepath.Join(dir, "link-to-sqlite")))
	require.NoError(t, os.Symlink("link-to-in", filepath.Join(dir, "link-to-link-to-in")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	if err := syscall.Mkfifo(filepath.Join(dir, "out.fifo"), 0o600); err != nil {
		t.Log("mkfifo:", err)
	}
	return dir
}

func TestCheck(t *testing.T) {
	dir := fixture(t)
	t.Chdir(dir)
	type add struct {
		kind       Kind
		name, path string
	}
	in := add{Input, "--stream", "in.txt"}
	st := add{Store, "--store", "model"}
	for _, c := range []struct {
		name  string
		files []add
		bad   string // the name of the refused entry, "" if accepted
		why   string // a substring of the reason
	}{
		{"distinct", []add{in, {Output, "--out", "out.json"}}, "", ""},
		{"same path", []add{in, {Output, "--out", "in.txt"}}, "--out", "is also an input (--stream in.txt)"},
		{"./ prefix", []add{in, {Output, "--out", "./in.txt"}}, "--out", "is also an input"},
		{"dot-dot", []add{in, {Output, "--out", "plain/../in.txt"}}, "--out", "is also an input"},
		{"absolute", []add{in, {Output, "--out", filepath.Join(dir, "in.txt")}}, "--out", "is also an input"},
		{"symlink", []add{in, {Output, "--out", "link-to-in"}}, "--out", "is also an input"},
		{"hard link", []add{in, {Output, "--out", "hard-in"}}, "--out", "is also an input"},
		{"dangling link to a new output", []add{{Output, "--out", "not-yet.txt"}, {Output, "--certificate", "dangling"}}, "--certificate", "is also an output (--out not-yet.txt)"},
		{"two outputs", []add{{Output, "--out", "x.json"}, {Output, "--certificate", "./x.json"}}, "--certificate", "is also an output"},
		{"new output through a linked folder", []add{{Output, "--out", "model2/x"}, {Output, "--certificate", "plain/../model2/x"}}, "--certificate", "is also an output"},
		{"store database", []add{st, {Output, "--out", "model/store.db"}}, "--out", "inside the model store"},
		{"store database, store not named", []add{{Output, "--out", "model/store.db"}}, "--out", "inside the model store"},
		{"new file in a store", []add{{Output, "--out", "model/release.json"}}, "--out", "inside the model store"},
		{"store through a link", []add{{Output, "--out", "link-to-model/x.json"}}, "--out", "inside the model store"},
		{"the store directory", []add{{Output, "--out", "model"}}, "--out", "inside the model store"},
		{"store's ledger as an output", []add{st, {Output, "--certificate", "model/budget.ledger"}}, "--certificate", "inside the model store"},
		{"hard link to the store's database", []add{st, {Output, "--out", "hard-db"}}, "--out", "model store"},
		{"hard link to a database, store not named", []add{{Output, "--out", "hard-db"}}, "--out", "SQLite database"},
		{"a database", []add{{Output, "--out", "db.sqlite"}}, "--out", "SQLite database"},
		{"a ledger", []add{{Output, "--out", "other.ledger"}}, "--out", "budget ledger"},
		{"hard link to the store's ledger", []add{{Output, "--out", "hard-ledger"}}, "--out", "budget ledger"},
		{"ledger is an input", []add{{Ledger, "--ledger", "other.ledger"}, {Input, "--add", "other.ledger"}}, "--ledger", "is also an input (--add other.ledger)"},
		{"output is the ledger", []add{{Ledger, "--ledger", "other.ledger"}, {Output, "--certificate", "other.ledger"}}, "--certificate", "is also the ledger (--ledger other.ledger)"},
		{"the store's own ledger", []add{st, {Ledger, "--ledger", "model/budget.ledger"}}, "", ""},
		{"another file of the store as a ledger", []add{st, {Ledger, "--ledger", "model/store.db"}}, "--ledger", "inside the model store"},
		{"a database as a ledger", []add{{Ledger, "--ledger", "db.sqlite"}}, "--ledger", "SQLite database"},
		{"new ledger", []add{{Ledger, "--ledger", "new.ledger"}}, "", ""},
		{"output folder holds an input", []add{{Input, "--data", "plain/x.json"}, {OutputDir, "--out", "plain"}}, "--out", "holds an input (--data plain/x.json)"},
		{"output folder holds a store", []add{{OutputDir, "--out", "results"}}, "--out", "model store's database"},
		{"output folder holds the store named", []add{{Store, "--store", "results/sub/model"}, {OutputDir, "--out", "results/sub"}}, "--out", "holds the model store"},
		{"output folder is the current folder", []add{in, {OutputDir, "--out", "."}}, "--out", "holds an input"},
		{"output folder empty", []add{in, {OutputDir, "--out", "empty"}}, "", ""},
		{"output file inside an output folder", []add{{OutputDir, "--out", "r"}, {Output, "--cpuprofile", "r/cpu.prof"}}, "--out", "holds an output (--cpuprofile r/cpu.prof)"},
		{"output file inside an input folder", []add{{InputDir, "argument 1", "plain"}, {OutputDir, "--out", "plain/report"}}, "", ""},
		{"new store", []add{{NewStore, "--store", "model2"}, {Input, "--header", "in.txt"}}, "", ""},
		{"new store holds an input", []add{{NewStore, "--store", "plain"}, {Input, "--data", "plain/x.json"}}, "--store", "holds an input"},
		{"new store inside a store", []add{{NewStore, "--store", "model/inner"}}, "--store", "inside the model store"},
		{"new store over an existing one", []add{{NewStore, "--store", "model"}}, "", ""},
		{"stdout", []add{in, {Output, "--out", "-"}}, "", ""},
		{"link to an input given by its link", []add{{Input, "--stream", "link-to-in"}, {Output, "--out", "in.txt"}}, "--out", "is also an input"},
		{"chain of links to an input", []add{in, {Output, "--out", "link-to-link-to-in"}}, "--out", "is also an input"},
		{"link to the store's database", []add{st, {Output, "--out", "link-to-db"}}, "--out", "inside the model store"},
		{"link to the store's database, store not named", []add{{Output, "--out", "link-to-db"}}, "--out", "inside the model store"},
		{"link to a ledger", []add{{Output, "--out", "link-to-ledger"}}, "--out", "budget ledger"},
		{"link to a database", []add{{Output, "--out", "link-to-sqlite"}}, "--out", "SQLite database"},
		{"a FIFO output is not read", []add{in, {Output, "--out", "out.fifo"}}, "", ""},
		{"/dev/null as input and outputs", []add{{Input, "--data", os.DevNull}, {Output, "--out", os.DevNull}, {Output, "--certificate", os.DevNull}}, "", ""},
		{"not given", []add{in, {Output, "--out", ""}}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f Files
			for _, a := range c.files {
				f.Add(a.kind, a.name, a.path)
			}
			err := f.Check()
			if c.bad == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var ge *Error
			require.True(t, errors.As(err, &ge))
			assert.ErrorIs(t, err, ErrOverwrite)
			assert.Equal(t, c.bad, ge.Name)
			assert.Contains(t, err.Error(), c.why)
			assert.True(t, strings.HasPrefix(err.Error(), c.bad+" "), "the message starts with the flag the user wrote: %v", err)
		})
	}
}

func TestCanonical(t *testing.T) {
	dir := fixture(t)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	for _, c := range []struct{ in, want string }{
		{filepath.Join(dir, "in.txt"), filepath.Join(real, "in.txt")},
		{filepath.Join(dir, "link-to-in"), filepath.Join(real, "in.txt")},
		{filepath.Join(dir, "dangling"), filepath.Join(real, "not-yet.txt")},
		{filepath.Join(dir, "link-to-model", "a", "b"), filepath.Join(real, "model", "a", "b")},
		{filepath.Join(dir, "no", "such", "..", "x"), filepath.Join(real, "no", "x")},
	} {
		got, err := canonical(c.in)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, c.in)
	}
	require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))
	_, err = canonical(filepath.Join(dir, "loop"))
	assert.Error(t, err, "a link loop")
}
