package main

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"unlearn/bound"
)

func TestRun(t *testing.T) {
	t.Run("markdown", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(&out, false); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		// One table: a header, a separator and 3 deletion counts × 2 τ × 4
		// times since deletion.
		if n := strings.Count(s, "\n| "); n != 2+3*2*4 {
			t.Errorf("%d table rows:\n%s", n, s)
		}
		for _, want := range []string{"Derived constants (proved, certify.DeriveProfile)", "worst-case memory model; α is proved",
			"needs σ = ", "in 4 of 24 rows the table's α exceeds 2W'"} {
			if !strings.Contains(s, want) {
				t.Errorf("output lacks %q:\n%s", want, s)
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
		if len(recs) != 1+24 || recs[0][0] != "deletions" {
			t.Errorf("%d CSV records", len(recs))
		}
	})
}

// TestTableAgainstCertify: the constants are the toolkit's (proved), and
// for every row the α certify.Certify calibrates to (DerivedAlpha) is the
// table's α up to round-off where the diameter does not bind, and the
// diameter where it does: the plan never promises less noise than a
// release gets, except by the cap.
func TestTableAgainstCertify(t *testing.T) {
	p, tab, err := table()
	if err != nil {
		t.Fatal(err)
	}
	if p.Constants.Source != bound.Proved || p.Contraction.Provenance != bound.Proved || tab.Provenance != bound.Proved {
		t.Fatalf("provenance: constants %v, ρ %v, table %v; want proved", p.Constants.Source, p.Contraction.Provenance, tab.Provenance)
	}
	for _, r := range tab.Rows {
		s, err := derived(r)
		if err != nil {
			t.Fatal(err)
		}
		if r.Alpha >= s.Diameter {
			if !(s.Alpha >= s.Diameter && s.Alpha <= s.Diameter*(1+1e-12)) {
				t.Errorf("%+v: capped row, DerivedAlpha %v, want the diameter %v", r, s.Alpha, s.Diameter)
			}
			continue
		}
		if !(s.Alpha >= r.Alpha && s.Alpha <= r.Alpha*(1+1e-3)) {
			t.Errorf("%+v: DerivedAlpha %v, want the table's α %v plus round-off", r, s.Alpha, r.Alpha)
		}
	}
}
