package main

import (
	"fmt"
	"os"
	"strings"

	"unlearn/dataset"
	"unlearn/store"
	"unlearn/stream"
)

// declaredClasses returns the classes o names (--classes, or the model's
// contract), or nil when it names none or selects every label ("all": each
// class then has rows by construction).
func declaredClasses(o dataset.Options) []string {
	if len(o.Classes) == 0 || (len(o.Classes) == 1 && o.Classes[0] == dataset.AllClasses) {
		return nil
	}
	return o.Classes
}

// missingClassError refuses, naming --classes and the class, a declared
// class of which the data has no row: a model made without it predicts
// the other classes only, whatever its accuracy says. counts are the rows
// of each class in the order of o.Classes.
func missingClassError(path string, o dataset.Options, counts []int) error {
	cs := declaredClasses(o)
	if cs == nil || len(counts) != len(cs) {
		return nil
	}
	var have []string
	for k, n := range counts {
		if n > 0 {
			have = append(have, fmt.Sprintf("%q: %d", cs[k], n))
		}
	}
	for k, n := range counts {
		if n == 0 {
			return flagError("classes", "class %q has no rows in %s (rows per class: %s): a model cannot learn a class it never sees; name the classes as the label column writes them",
				cs[k], path, strings.Join(have, ", "))
		}
	}
	return nil
}

// requireEveryClass refuses a declared class with no row in the data file
// path read with o (a first pass over the file; a file that is not a
// regular one, such as a pipe, is read once, by the command, and not
// checked). A read error is left to the command's own read.
func requireEveryClass(path string, o dataset.Options) error {
	if declaredClasses(o) == nil {
		return nil
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	counts, err := dataset.ClassCounts(path, o)
	if err != nil {
		return nil
	}
	return missingClassError(path, o, counts)
}

// requireEveryClassFirst is requireEveryClass for the first ingest into
// store s (a log without events): later ingests may bring one class alone.
func requireEveryClassFirst(s *store.Store, path string, o dataset.Options) error {
	if st, err := s.Status(); err != nil || st.Events > 0 {
		return nil
	}
	return requireEveryClass(path, o)
}

// requireEveryClassIn is requireEveryClass for events already read.
func requireEveryClassIn(path string, o dataset.Options, hdr stream.Header, events []stream.Event) error {
	return missingClassError(path, o, dataset.CountClasses(events, hdr.Kind, hdr.K))
}
