package main

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	t.Run("markdown", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(&out, false); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		// Two tables, each a header, a separator and 3 deletion counts × 2 τ
		// × 4 times since deletion.
		if n := strings.Count(s, "\n| "); n != 2*(2+3*2*4) {
			t.Errorf("%d table rows:\n%s", n, s)
		}
		for _, want := range []string{"worst-case memory model; α is proved", "direct memory model; α is assumed"} {
			if !strings.Contains(s, want) {
				t.Errorf("output lacks %q", want)
			}
		}
	})
	t.Run("csv", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(&out, true); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		// Two tables, each a header and 24 rows.
		if len(recs) != 2*(1+24) || recs[0][0] != "deletions" || recs[25][0] != "deletions" {
			t.Errorf("%d CSV records", len(recs))
		}
	})
}
