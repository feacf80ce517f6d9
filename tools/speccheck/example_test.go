package speccheck_test

import (
	"fmt"

	"unlearn/tools/speccheck"
)

// Find the references of a comment and check them against the headings of
// a specification.
func Example() {
	spec := []byte("# Spec\n## §1. Events\n### §1.2 Generators\n## §2. Learner\n")
	known := map[string]bool{}
	for _, h := range speccheck.Headings(spec) {
		known[h] = true
	}
	text := []byte("// The generators of spec §1.2 feed the learner\n// (docs/spec.md §2, §1).")
	for _, r := range speccheck.References(text) {
		fmt.Printf("line %d: %s resolves: %v\n", r.Line, r.Text, known[r.Section])
	}
	// Output:
	// line 1: spec §1.2 resolves: true
	// line 2: docs/spec.md §2 resolves: true
	// line 2: §1 resolves: true
}
