package main

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWrite: the same flags give the same bytes; every row is a ±1 label
// and nnz strictly increasing 1-based indices in 1..d with finite values.
func TestWrite(t *testing.T) {
	gen := func(seed uint64) string {
		var b bytes.Buffer
		require.NoError(t, write(bufio.NewWriter(&b), 50, 30, 5, seed))
		return b.String()
	}
	a := gen(3)
	require.Equal(t, a, gen(3), "seeded: same bytes")
	require.NotEqual(t, a, gen(4))
	lines := strings.Split(strings.TrimSuffix(a, "\n"), "\n")
	require.Len(t, lines, 50)
	for _, line := range lines {
		tok := strings.Fields(line)
		require.Contains(t, []string{"+1", "-1"}, tok[0])
		require.Len(t, tok, 6, line)
		prev := 0
		for _, f := range tok[1:] {
			name, val, ok := strings.Cut(f, ":")
			require.True(t, ok, f)
			j, err := strconv.Atoi(name)
			require.NoError(t, err)
			require.True(t, j > prev && j <= 30, "index %d after %d", j, prev)
			prev = j
			_, err = strconv.ParseFloat(val, 64)
			require.NoError(t, err)
		}
	}
}
