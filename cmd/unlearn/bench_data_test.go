package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/experiment"
)

func TestBenchData(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "toy.svm")
	var b strings.Builder
	for i := range 120 {
		y := "+1"
		if i%3 == 0 {
			y = "-1"
		}
		b.WriteString(y)
		for j := 1; j <= 4; j++ {
			v := float64((i*7+j*13)%17)/17 - 0.5
			if v != 0 {
				b.WriteString(" " + itoa(j) + ":" + ftoa(v))
			}
		}
		b.WriteString("\n")
	}
	require.NoError(t, os.WriteFile(in, []byte(b.String()), 0o644))
	out := filepath.Join(dir, "res")
	o, err := runCLI(t, "bench", "--data", in, "--events", "100", "--t-del", "40", "--taus", "2,3",
		"--modes", "recent,random", "--seeds", "1,2", "--mq", "4", "--zero-timing", "--no-report", "--out", out)
	require.NoError(t, err, o)
	require.Contains(t, o, "120 rows selected, logistic stream, d = 4; T = 100 events per seed")
	require.Contains(t, o, "### Global comparison")
	res, err := experiment.ReadResults(out)
	require.NoError(t, err)
	require.Len(t, res.Records, 8)
	r := res.Records[0]
	require.Equal(t, "data-toy-tau2-recent-seed1", r.ID)
	require.NotNil(t, r.Source.Generated)
	require.NotNil(t, r.Source.Generated.Data)
	require.Len(t, r.Source.Generated.Data.SHA256, 64)
	require.Equal(t, 100, r.Source.T)

	for _, c := range []struct {
		name string
		args []string
		flag string
	}{
		{"data flag without data", []string{"bench", "--classes", "0,1", "--quick", "--out", out}, "--classes"},
		{"data with quick", []string{"bench", "--data", in, "--quick", "--out", out}, "--data"},
		{"t-del too large", []string{"bench", "--data", in, "--events", "50", "--t-del", "50", "--out", out}, "--t-del"},
		{"bad mode", []string{"bench", "--data", in, "--modes", "oldest", "--out", out}, "--modes"},
		{"bad tau", []string{"bench", "--data", in, "--taus", "0", "--out", out}, "--taus"},
		{"label for libsvm", []string{"bench", "--data", in, "--label", "y", "--out", out}, "--label"},
	} {
		_, err := runCLI(t, c.args...)
		var ue usageError
		require.ErrorAs(t, err, &ue, c.name)
		require.ErrorContains(t, err, c.flag, c.name)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
