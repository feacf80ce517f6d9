package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun runs the example end to end (secure noise on d = 8 coordinates)
// and checks that the certificate verified and says what it rests on.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"certificate VALID",
		"covers      state (memory rebuild)",
		"WARNING     α is estimated, not proved",
		"sampler secure",
		"intervention retain-ft, 5 deletion(s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
