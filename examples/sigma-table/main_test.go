package main

import (
	"bytes"
	"encoding/csv"
	"strconv"
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
		// A header, a separator and 2 τ × 5 requests.
		if n := strings.Count(s, "\n| "); n != 2+2*5 {
			t.Errorf("%d table rows:\n%s", n, s)
		}
		for _, want := range []string{"every α is derived (proved)", "worst case"} {
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
		if len(recs) != 1+10 || recs[0][0] != "tau" {
			t.Fatalf("%d CSV records", len(recs))
		}
		// An old deletion needs less noise than a recent one (the recursion
		// contracts with age), and never more than the diameter bound.
		recent, _ := strconv.ParseFloat(recs[1][6], 64)
		old, _ := strconv.ParseFloat(recs[2][6], 64)
		if !(old < recent) {
			t.Errorf("σ for a deletion 200 steps old (%v) is not below σ for a recent one (%v)", old, recent)
		}
	})
}
