package main

import (
	"errors"

	"unlearn/dataset"
	"unlearn/internal/pathguard"
)

// paths is what one command reads and writes. Every command that writes a
// file registers its inputs and outputs here and calls check before it
// does anything else — before a store is opened, a ledger charged or a
// long computation started — so that no command writes over its own
// inputs, over another of its outputs, over a file inside a model store (or
// the store's directory), or over a ledger (internal/pathguard has the
// rules).
type paths struct {
	pathguard.Files
}

func (f *paths) add(k pathguard.Kind, name, path string) *paths {
	f.Add(k, name, path)
	return f
}

// in records a file the command reads, named by its flag or argument.
func (f *paths) in(name, path string) *paths { return f.add(pathguard.Input, name, path) }

// inDir records a folder the command reads.
func (f *paths) inDir(name, path string) *paths { return f.add(pathguard.InputDir, name, path) }

// out records a file the command writes ("-", standard output, is not one).
func (f *paths) out(name, path string) *paths { return f.add(pathguard.Output, name, path) }

// outDir records a folder the command writes whole (replacing it).
func (f *paths) outDir(name, path string) *paths { return f.add(pathguard.OutputDir, name, path) }

// store records a model store directory the command opens.
func (f *paths) store(name, dir string) *paths { return f.add(pathguard.Store, name, dir) }

// newStore records the directory a command creates a model store in.
func (f *paths) newStore(name, dir string) *paths { return f.add(pathguard.NewStore, name, dir) }

// ledger records a budget ledger the command appends to or creates.
func (f *paths) ledger(name, path string) *paths { return f.add(pathguard.Ledger, name, path) }

// dataFile records the files a read of the data file path opens (the file,
// and an IDX file's labels; dataset.Files), named flag.
func (f *paths) dataFile(flag, path string, df *dataFlags) *paths {
	if path == "" {
		return f
	}
	o := dataset.Options{Format: dataset.Format(df.format), Labels: df.labels}
	for i, p := range dataset.Files(path, o) {
		name := flag
		if i > 0 {
			name = flag + " (its labels)"
			if df.labels != "" {
				name = "--labels"
			}
		}
		f.in(name, p)
	}
	return f
}

// mapping records the string-id mapping file written beside out (OUT.ids.csv)
// when the command reads a data file.
func (f *paths) mapping(out, data string) *paths {
	if out == "" || out == "-" || data == "" {
		return f
	}
	return f.out("--out (its id mapping)", dataset.MappingFile(out))
}

// check refuses, as a usage error (exit status 2) naming the flag, an
// output that would write over something it must not; nil otherwise.
func (f *paths) check() error {
	err := f.Check()
	var ge *pathguard.Error
	if errors.As(err, &ge) {
		return usageError{err}
	}
	return err
}
