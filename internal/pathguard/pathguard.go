// Package pathguard keeps a command from destroying what it must not: it
// collects the paths a command reads and writes, and [Files.Check] refuses,
// before the command does anything, an output that would replace
//
//   - one of the command's own inputs, or another of its outputs;
//   - a model store's directory or any file inside one (a directory that
//     holds the store's database, store.db);
//   - a budget ledger, or a database, that the command does not own in
//     that role;
//   - (an output folder, which is replaced whole) a folder that holds any
//     of the above.
//
// Two paths are the same file when os.SameFile says so (hard links, and
// symbolic links followed) or, for paths that do not exist yet, when their
// absolute forms agree after every symbolic link on the way is resolved
// ("./x", "a/../x", a link to the folder or a dangling link to the file all
// name x). An output that does not exist yet is compared by that path; one
// that exists is also compared by identity (device and inode) with the
// inputs and with every file of the stores the command names, and its first
// bytes are read: a ledger or an SQLite database is never an output.
//
// An output that is a symbolic link is written where the link points
// (internal/atomicfile replaces the link's target and keeps the link), so
// every check here is made on what the link points to: an output that
// names an input, a store's file or a ledger through a link is refused
// as the file itself would be. An output that is a device, a FIFO or a
// socket is written directly, never replaced, and is not read; a
// character device (/dev/null, a terminal, /dev/stdout on one) may be
// both an input and an output, or two outputs, since writing to it
// destroys nothing.
package pathguard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"unlearn/ledger"
	"unlearn/store"
)

// Kind says what a command does with a path.
type Kind int

const (
	// Input is a file the command reads.
	Input Kind = iota
	// InputDir is a folder the command reads (a results folder).
	InputDir
	// Output is a file the command writes (replacing it if it exists).
	Output
	// OutputDir is a folder the command writes whole, replacing it.
	OutputDir
	// Store is a model store directory the command opens (and may change,
	// through the store's own transactions).
	Store
	// Ledger is a budget ledger the command reads and appends to, or
	// creates. It may be a store's own ledger, DIR/budget.ledger.
	Ledger
	// NewStore is the directory in which the command creates a model
	// store. It must not be inside another store, nor hold the command's
	// other files (they would end up inside the store). A directory that
	// already is a store is left to the store's own refusal.
	NewStore
)

func (k Kind) writes() bool { return k == Output || k == OutputDir || k == Ledger || k == NewStore }

// What the kinds are called in messages.
func (k Kind) noun() string {
	switch k {
	case Input:
		return "an input"
	case InputDir:
		return "an input folder"
	case Output:
		return "an output"
	case OutputDir:
		return "an output folder"
	case Store, NewStore:
		return "the model store"
	}
	return "the ledger"
}

// ErrOverwrite is matched (errors.Is) by every *Error.
var ErrOverwrite = errors.New("refusing to write over it")

// Error says which path the command would write over what, in the user's
// words: Name is the flag or argument that gave the path ("--out",
// "argument 1").
type Error struct {
	Name, Path string
	// Reason says what the path is or would replace.
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s; nothing was written", e.Name, e.Path, e.Reason)
}

// Is reports whether target is ErrOverwrite.
func (e *Error) Is(target error) bool { return target == ErrOverwrite }

// Files is the set of paths one command reads and writes. The zero value
// is empty and ready to use.
type Files struct {
	entries []entry
}

type entry struct {
	kind Kind
	name string // the flag or argument, as the user gave it
	path string
}

// Add records path under kind, named name ("--out"). An empty path (the
// flag not given) and, for outputs, "-" (standard output) are ignored.
func (f *Files) Add(kind Kind, name, path string) *Files {
	if path == "" || (path == "-" && kind == Output) {
		return f
	}
	f.entries = append(f.entries, entry{kind: kind, name: name, path: path})
	return f
}

// Input records a file the command reads.
func (f *Files) Input(name, path string) *Files { return f.Add(Input, name, path) }

// Output records a file the command writes.
func (f *Files) Output(name, path string) *Files { return f.Add(Output, name, path) }

// resolved is an entry with its canonical path and, if it exists, its
// file information.
type resolved struct {
	entry
	abs  string
	info fs.FileInfo // nil if nothing exists at abs
}

// Check returns an *Error for the first output (in the order added) that
// would write over something it must not — of two outputs that name one
// file, the later — or nil. It reads only file
// information, the first bytes of existing outputs and the names in the
// stores' directories; it changes nothing.
func (f *Files) Check() error {
	rs := make([]resolved, len(f.entries))
	for i, e := range f.entries {
		abs, err := canonical(e.path)
		if err != nil {
			return &Error{Name: e.name, Path: e.path, Reason: err.Error()}
		}
		rs[i] = resolved{entry: e, abs: abs}
		if fi, err := os.Stat(abs); err == nil {
			rs[i].info = fi
		}
	}
	for i, o := range rs {
		if !o.kind.writes() {
			continue
		}
		if err := checkOne(o, i, rs); err != nil {
			return err
		}
	}
	return nil
}

// checkOne checks the writing entry rs[i].
func checkOne(o resolved, i int, rs []resolved) error {
	fail := func(format string, args ...any) error {
		return &Error{Name: o.name, Path: o.path, Reason: fmt.Sprintf(format, args...)}
	}
	for j, e := range rs {
		if j == i {
			continue
		}
		if same(o, e) && !isCharDevice(o.info) {
			if e.kind.writes() && j > i {
				continue // the later of two outputs is the one refused
			}
			return fail("is also %s (%s %s): a command never writes over its own inputs or writes two outputs to one file", e.kind.noun(), e.name, e.path)
		}
		if o.kind == OutputDir && within(e.abs, o.abs) {
			return fail("holds %s (%s %s), which replacing the folder would delete", e.kind.noun(), e.name, e.path)
		}
		if o.kind == NewStore && within(e.abs, o.abs) {
			return fail("holds %s (%s %s): a store's directory holds the store alone (its files are the store's)", e.kind.noun(), e.name, e.path)
		}
	}
	if o.kind == NewStore {
		if dir, ok := storeAround(filepath.Dir(o.abs)); ok && filepath.Dir(o.abs) != o.abs {
			return fail("is inside the model store %s: a store is never created inside another", dir)
		}
		return nil
	}
	if dir, ok := storeAround(o.abs); ok {
		if o.kind == Ledger && filepath.Base(o.abs) == ownLedger && filepath.Dir(o.abs) == dir {
			return nil // the store's own budget ledger
		}
		return fail("is inside the model store %s: a command never writes over a store's files (its database is replaced by nothing but its own transactions)", dir)
	}
	if o.info == nil {
		return nil
	}
	if o.kind == OutputDir {
		if !o.info.IsDir() {
			return nil // the command's own check says a folder is wanted
		}
		if p, what := findProtected(o.abs); p != "" {
			return fail("holds %s (%s), which replacing the folder would delete", what, p)
		}
		return nil
	}
	if !o.info.Mode().IsRegular() {
		return nil
	}
	for _, e := range rs {
		if e.kind != Store {
			continue
		}
		if p := sameAsStoreFile(o.info, e.abs); p != "" {
			return fail("is the file %s of the model store %s (a hard link): a command never writes over a store's files", p, e.path)
		}
	}
	if what := sniff(o.abs); what != "" && !(o.kind == Ledger && what == whatLedger) {
		return fail("is %s: a command never writes over it", what)
	}
	return nil
}

// same reports whether a and b name the same file or folder.
func same(a, b resolved) bool {
	if a.info != nil && b.info != nil {
		return os.SameFile(a.info, b.info)
	}
	return a.abs == b.abs
}

// isCharDevice reports whether fi is a character device (nil: nothing).
func isCharDevice(fi fs.FileInfo) bool {
	return fi != nil && fi.Mode()&fs.ModeCharDevice != 0
}

// within reports whether p is inside dir (not dir itself).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ownLedger is the name of a store's own budget ledger, DIR/budget.ledger.
const ownLedger = "budget.ledger"

// storeAround returns the model store directory that p is, or is inside:
// the nearest of p and its ancestors that holds a store database.
func storeAround(p string) (string, bool) {
	for d := p; ; {
		if fi, err := os.Stat(filepath.Join(d, store.FileName)); err == nil && !fi.IsDir() {
			return d, true
		}
		up := filepath.Dir(d)
		if up == d {
			return "", false
		}
		d = up
	}
}

// maxWalk bounds the entries findProtected reads in a folder an output
// would replace (results folders hold a few hundred files).
const maxWalk = 200_000

// findProtected returns a path inside dir that no output may delete (a
// store's database, a ledger) and what it is, or "".
func findProtected(dir string) (string, string) {
	var found, what string
	n := 0
	errStop := errors.New("stop")
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: the replacement itself will say so
		}
		if n++; n > maxWalk {
			found, what = dir, fmt.Sprintf("more than %d files", maxWalk)
			return errStop
		}
		if d.Type().IsRegular() {
			if d.Name() == store.FileName {
				found, what = p, "a model store's database"
				return errStop
			}
			if w := sniff(p); w != "" {
				found, what = p, w
				return errStop
			}
		}
		return nil
	})
	return found, what
}

// sameAsStoreFile returns the file of the store directory dir that fi is
// (a hard link to it), or "".
func sameAsStoreFile(fi fs.FileInfo, dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if si, err := os.Stat(p); err == nil && os.SameFile(fi, si) {
			return p
		}
	}
	return ""
}

const (
	whatLedger = "a budget ledger"
	whatSQLite = "an SQLite database (a model store's database is one)"
	whatWAL    = "an SQLite write-ahead log (part of a model store)"
)

// sniff reads the first bytes of the file p and says what it is, if it is
// something no output may replace: a budget ledger (its first line names
// the ledger format) or an SQLite database or write-ahead log (by their
// magic numbers). It returns "" otherwise or if p cannot be read.
func sniff(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	head, _ := bufio.NewReaderSize(f, 4096).Peek(4096)
	switch {
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return whatSQLite
	case len(head) >= 4 && (bytes.Equal(head[:4], []byte{0x37, 0x7f, 0x06, 0x82}) || bytes.Equal(head[:4], []byte{0x37, 0x7f, 0x06, 0x83})):
		return whatWAL
	}
	line, _, _ := bytes.Cut(head, []byte{'\n'})
	if bytes.Contains(line, []byte(`"format":"`+ledger.Format+`"`)) {
		return whatLedger
	}
	return ""
}

// maxLinks bounds the symbolic links canonical follows (as the kernel's
// ELOOP limit does).
const maxLinks = 40

// canonical returns the absolute form of p with every symbolic link on the
// way resolved, also when p, or folders on its way, do not exist yet: the
// longest existing prefix is resolved and the rest appended; a dangling
// link is followed to where it points.
func canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	for range maxLinks {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			return r, nil
		}
		parent, base := filepath.Dir(abs), filepath.Base(abs)
		if parent == abs {
			return abs, nil
		}
		rp, err := canonical(parent)
		if err != nil {
			return "", err
		}
		cand := filepath.Join(rp, base)
		fi, err := os.Lstat(cand)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return cand, nil
		}
		t, err := os.Readlink(cand)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(rp, t)
		}
		abs = filepath.Clean(t)
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}
