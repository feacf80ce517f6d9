package dataset

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/olbfgs"
	"unlearn/stream"
)

func TestPermutationProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 200).Draw(t, "n")
		seed := rapid.Uint64().Draw(t, "seed")
		p := Permutation(n, seed)
		sorted := slices.Sorted(slices.Values(p))
		for i, v := range sorted {
			if v != i {
				t.Fatalf("not a permutation of 0..%d: %v", n-1, p)
			}
		}
		if !slices.Equal(p, Permutation(n, seed)) {
			t.Fatal("same seed, different permutation")
		}
	})
	assert.NotEqual(t, Permutation(30, 1), Permutation(30, 2))
}

func TestShuffleAndLimit(t *testing.T) {
	p := "testdata/heart_scale_30.svm"
	_, all, _ := readAll(t, p, Options{})
	perm := Permutation(len(all), 7)
	_, shuf, r := readAll(t, p, Options{Shuffle: new(uint64(7))})
	require.Len(t, shuf, len(all))
	for j, e := range shuf {
		assert.Equal(t, all[perm[j]], e, "position %d of the shuffled order is row %d", j, perm[j]+1)
	}
	assert.Equal(t, Stats{Rows: 30, Emitted: 30}, r.Stats())
	_, again, _ := readAll(t, p, Options{Shuffle: new(uint64(7))})
	assert.Equal(t, shuf, again, "same seed, same order")

	_, sub, r := readAll(t, p, Options{Shuffle: new(uint64(7)), Limit: 8})
	assert.Equal(t, shuf[:8], sub, "a limited shuffle is a prefix of the full one")
	assert.Equal(t, 8, r.Stats().Emitted)

	_, head, _ := readAll(t, p, Options{Limit: 5})
	assert.Equal(t, all[:5], head, "without a shuffle the limit takes the first rows")

	_, big, _ := readAll(t, p, Options{Shuffle: new(uint64(7)), Limit: 1000})
	assert.Equal(t, shuf, big, "a limit above the row count keeps every row")
}

// decimal returns n·d decimal strings of seeded random values, a third of
// them zero, written with the shortest round-trip formatting.
func decimals(n, d int, seed uint64) [][]string {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]string, n)
	for i := range out {
		out[i] = make([]string, d)
		for j := range out[i] {
			v := 0.0
			if rng.IntN(3) > 0 {
				v = rng.NormFloat64() * 2
			}
			out[i][j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	return out
}

// TestRoundTripTrainBitForBit: a CSV file and a LIBSVM file, converted to
// the stream format through Open and stream.Writer, train the o-LBFGS
// learner to exactly the state (bit for bit, memory included) that the same
// data written densely by hand as a stream file gives.
func TestRoundTripTrainBitForBit(t *testing.T) {
	const n, d = 60, 5
	vals := decimals(n, d, 3)
	labels := make([]string, n)
	targets := make([]string, n)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range labels {
		labels[i] = strconv.Itoa(rng.IntN(2)) // 0/1 labels
		targets[i] = strconv.FormatFloat(rng.NormFloat64()*10, 'g', -1, 64)
	}
	for _, kind := range []stream.Kind{stream.KindLogistic, stream.KindRegression} {
		// By hand: the dense stream file, ±1 labels, ids 101.. (CSV) and
		// row numbers 1.. (LIBSVM, which has no id column).
		hand := func(idBase int) string {
			var b strings.Builder
			fmt.Fprintf(&b, `{"format":"olbfgs-stream/v1","kind":"%s","d":%d,"lambda":0.05}`+"\n", kind, d)
			for i := range n {
				y := targets[i]
				if kind == stream.KindLogistic {
					y = map[string]string{"0": "-1", "1": "1"}[labels[i]]
				}
				fmt.Fprintf(&b, `{"op":"insert","id":%d,"x":[%s],"y":%s}`+"\n", idBase+i, strings.Join(vals[i], ","), y)
			}
			return b.String()
		}
		ys := labels
		if kind == stream.KindRegression {
			ys = targets
		}
		var csvText, svmText strings.Builder
		csvText.WriteString("id,f1,f2,label,f3,f4,f5\n")
		for i := range n {
			v := vals[i]
			fmt.Fprintf(&csvText, "%d,%s,%s,%s,%s,%s,%s\n", 101+i, v[0], v[1], ys[i], v[2], v[3], v[4])
			svmText.WriteString(ys[i])
			for j, s := range v {
				if s != "0" {
					fmt.Fprintf(&svmText, " %d:%s", j+1, s)
				}
			}
			svmText.WriteString("\n")
		}
		for _, c := range []struct {
			name, file, content string
			opts                Options
			idBase              int
		}{
			{"csv", "data.csv", csvText.String(), Options{Kind: kind, Label: "label", ID: "id"}, 101},
			{"libsvm", "data.svm", svmText.String(), Options{Kind: kind, D: d}, 1},
			{"libsvm-sparse", "data.svm", svmText.String(), Options{Kind: kind, D: d, Sparse: true}, 1},
		} {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) {
				hdr, r, err := Open(writeTemp(t, c.file, c.content), c.opts)
				require.NoError(t, err)
				var conv bytes.Buffer
				w, err := stream.NewWriter(&conv, hdr)
				require.NoError(t, err)
				for {
					e, err := r.Next()
					if err != nil {
						require.ErrorIs(t, err, io.EOF)
						break
					}
					require.NoError(t, w.Write(e))
				}
				require.NoError(t, w.Flush())
				require.NoError(t, r.Close())

				got, err := stream.Read(&conv)
				require.NoError(t, err)
				want, err := stream.Read(strings.NewReader(hand(c.idBase)))
				require.NoError(t, err)
				cfg := olbfgs.DefaultConfig(d)
				cfg.Memory = 4
				lGot, err := olbfgs.Replay(cfg, got.Loss, got.Events)
				require.NoError(t, err)
				lWant, err := olbfgs.Replay(cfg, want.Loss, want.Events)
				require.NoError(t, err)
				require.Positive(t, lWant.Memory().Len(), "the learner stored curvature pairs")
				sGot, err := olbfgs.MarshalSnapshot(lGot, want.Header)
				require.NoError(t, err)
				sWant, err := olbfgs.MarshalSnapshot(lWant, want.Header)
				require.NoError(t, err)
				assert.Equal(t, string(sWant), string(sGot), "the states (w, memory, counters) are identical")
			})
		}
	}
}

// TestReaderLine: Line names the file line of the last event returned —
// after the header row and comment lines, past rows of other classes — and
// DetectFormat resolves formats as Open does.
func TestReaderLine(t *testing.T) {
	dir := t.TempDir()
	svm := filepath.Join(dir, "l.svm")
	require.NoError(t, os.WriteFile(svm, []byte("# comment\n1 1:0.5\n3 2:1\n# another\n0 1:2\n"), 0o644))
	_, r, err := Open(svm, Options{Classes: []string{"0", "1"}})
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, 0, r.Line(), "before the first event")
	var lines []int
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		lines = append(lines, r.Line())
	}
	require.Equal(t, []int{2, 5}, lines, "line 3 holds class 3 (skipped); 1 and 4 are comments")

	for name, want := range map[string]Format{"a.csv": CSV, "b.CSV.gz": CSV, "heart_scale": LIBSVM, "x.svm": LIBSVM, "train-images-idx3-ubyte": IDX} {
		f, err := DetectFormat(name, Options{})
		require.NoError(t, err, name)
		require.Equal(t, want, f, name)
	}
	_, err = DetectFormat("data.bin", Options{})
	require.ErrorIs(t, err, ErrOptions)
	f, err := DetectFormat("data.bin", Options{Format: IDX})
	require.NoError(t, err)
	require.Equal(t, IDX, f)
}
