package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// idxFiles writes an IDX image file of n rows×cols images (pixel values
// pix(i, j)) and its label file into a temporary folder, gzipped or not,
// and returns the image file's path.
func idxFiles(t *testing.T, labels []byte, rows, cols int, pix func(i, j int) byte, gz bool) string {
	t.Helper()
	var img, lab bytes.Buffer
	n := len(labels)
	binary.Write(&img, binary.BigEndian, []uint32{0x803, uint32(n), uint32(rows), uint32(cols)})
	for i := range n {
		for j := range rows * cols {
			img.WriteByte(pix(i, j))
		}
	}
	binary.Write(&lab, binary.BigEndian, []uint32{0x801, uint32(n)})
	lab.Write(labels)
	dir := t.TempDir()
	suffix := ""
	if gz {
		suffix = ".gz"
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name+suffix)
		if gz {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(b)
			zw.Close()
			b = z.Bytes()
		}
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	write("train-labels-idx1-ubyte", lab.Bytes())
	return write("train-images-idx3-ubyte", img.Bytes())
}

func TestIDXBasics(t *testing.T) {
	for _, gz := range []bool{false, true} {
		p := idxFiles(t, []byte{0, 6, 3, 6}, 2, 3, func(i, j int) byte { return byte(10*i + j) }, gz)
		h, evs, r := readAll(t, p, Options{Classes: []string{"0", "6"}})
		assert.Equal(t, 6, h.D)
		assert.Equal(t, []stream.Event{
			stream.InsertEvent(1, []float64{0, 1.0 / 255, 2.0 / 255, 3.0 / 255, 4.0 / 255, 5.0 / 255}, -1),
			stream.InsertEvent(2, []float64{10.0 / 255, 11.0 / 255, 12.0 / 255, 13.0 / 255, 14.0 / 255, 15.0 / 255}, 1),
			stream.InsertEvent(4, []float64{30.0 / 255, 31.0 / 255, 32.0 / 255, 33.0 / 255, 34.0 / 255, 35.0 / 255}, 1),
		}, evs, "gzip %v: label file found by name, class 3 skipped, ids are image numbers", gz)
		assert.Equal(t, Stats{Rows: 4, Skipped: 1, Emitted: 3}, r.Stats())

		_, evs, _ = readAll(t, p, Options{Kind: stream.KindRegression, Scale: 1})
		assert.Equal(t, []float64{0, 1, 2, 3, 4, 5}, evs[0].Sample.V, "Scale 1 keeps raw pixels")
		assert.Equal(t, 3.0, evs[2].Sample.S, "regression target is the label")
	}
}

func TestIDXFashionSlice(t *testing.T) {
	p := "testdata/fashion-t10k-16-images-idx3-ubyte.gz"
	h, evs, r := readAll(t, p, Options{Classes: []string{"0", "6"}})
	assert.Equal(t, 784, h.D)
	require.Len(t, evs, 12)
	assert.Equal(t, Stats{Rows: 16, Skipped: 4, Emitted: 12}, r.Stats())
	// test indices 4 and 7 are shirts (6), 19 a T-shirt/top (0); ids are
	// 1-based positions in the slice.
	assert.Equal(t, []int64{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, stream.InsertIDs(evs))
	assert.Equal(t, []float64{1, 1, -1}, []float64{evs[0].Sample.S, evs[1].Sample.S, evs[2].Sample.S})
	for _, e := range evs {
		lo, hi := 1.0, 0.0
		for _, v := range e.Sample.V {
			lo, hi = min(lo, v), max(hi, v)
		}
		assert.True(t, lo >= 0 && hi <= 1 && hi > 0.5, "pixels scaled into [0,1], id %d: [%v, %v]", e.ID, lo, hi)
	}
}

// TestIDXAllocationBoundedByInput checks that a header declaring the
// largest image the reader accepts (2²⁴ pixels) in a file of a few bytes
// allocates for what the file holds, not for what it declares.
func TestIDXAllocationBoundedByInput(t *testing.T) {
	var img, lab bytes.Buffer
	binary.Write(&img, binary.BigEndian, []uint32{0x803, 1000, 4096, 4096})
	img.Write(make([]byte, 100))
	binary.Write(&lab, binary.BigEndian, []uint32{0x801, 1000})
	lab.Write(make([]byte, 1000))
	dir := t.TempDir()
	ip := filepath.Join(dir, "a-images-idx3-ubyte")
	require.NoError(t, os.WriteFile(ip, img.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a-labels-idx1-ubyte"), lab.Bytes(), 0o644))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := readErr(ip, Options{Classes: []string{"0", "1"}})
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrSyntax)
	// 2²⁴ bytes of pixels and 2²⁷ of floats would be declared; the file
	// holds 116 bytes, so the reader's first buffer (64 KiB) suffices.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "allocated for the header's word, not the file's content")
}

func TestIDXErrors(t *testing.T) {
	good := func() (img, lab []byte) {
		var a, b bytes.Buffer
		binary.Write(&a, binary.BigEndian, []uint32{0x803, 2, 2, 2})
		a.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8})
		binary.Write(&b, binary.BigEndian, []uint32{0x801, 2})
		b.Write([]byte{0, 1})
		return a.Bytes(), b.Bytes()
	}
	for _, c := range []struct {
		name     string
		edit     func(img, lab []byte) ([]byte, []byte)
		inLabels bool
		offset   int64
		sentinel error
	}{
		{"bad magic", func(i, l []byte) ([]byte, []byte) { i[0] = 1; return i, l }, false, 0, ErrSyntax},
		{"float type", func(i, l []byte) ([]byte, []byte) { i[2] = 0x0d; return i, l }, false, 2, ErrSyntax},
		{"labels with 3 dims", func(i, l []byte) ([]byte, []byte) { l[3] = 3; return i, l }, true, 3, ErrSyntax},
		{"count mismatch", func(i, l []byte) ([]byte, []byte) { l[7] = 3; return i, l }, true, 4, ErrSyntax},
		{"truncated header", func(i, l []byte) ([]byte, []byte) { return i[:10], l }, false, 10, ErrSyntax},
		{"truncated image", func(i, l []byte) ([]byte, []byte) { return i[:len(i)-1], l }, false, 23, ErrSyntax},
		{"truncated labels", func(i, l []byte) ([]byte, []byte) { return i, l[:9] }, true, 9, ErrSyntax},
		{"trailing image data", func(i, l []byte) ([]byte, []byte) { return append(i, 0), l }, false, 24, ErrSyntax},
		{"trailing label data", func(i, l []byte) ([]byte, []byte) { return i, append(l, 0) }, true, 10, ErrSyntax},
		// rows·cols = 0xdf303030 × 0xae303030 overflows int and was
		// negative, so it passed the size check and made([]byte) panicked
		// (found by FuzzIDX).
		{"rows×cols overflows", func(i, l []byte) ([]byte, []byte) {
			binary.BigEndian.PutUint32(i[8:], 0xdf303030)
			binary.BigEndian.PutUint32(i[12:], 0xae303030)
			return i, l
		}, false, 8, ErrSyntax},
		{"one dimension too large", func(i, l []byte) ([]byte, []byte) {
			binary.BigEndian.PutUint32(i[8:], 1<<25)
			binary.BigEndian.PutUint32(i[12:], 0)
			return i, l
		}, false, 8, ErrSyntax},
		// 4096×4096 pixels (the largest image accepted) declared by a
		// 24-byte file: the reader fails at the end of the data, having
		// allocated only for what the file holds.
		{"image larger than the file", func(i, l []byte) ([]byte, []byte) {
			binary.BigEndian.PutUint32(i[8:], 4096)
			binary.BigEndian.PutUint32(i[12:], 4096)
			return i, l
		}, false, 24, ErrSyntax},
	} {
		t.Run(c.name, func(t *testing.T) {
			img, lab := c.edit(good())
			dir := t.TempDir()
			ip, lp := filepath.Join(dir, "a-images-idx3-ubyte"), filepath.Join(dir, "a-labels-idx1-ubyte")
			require.NoError(t, os.WriteFile(ip, img, 0o644))
			require.NoError(t, os.WriteFile(lp, lab, 0o644))
			err := readErr(ip, Options{Classes: []string{"0", "1"}})
			var pe *PosError
			require.ErrorAs(t, err, &pe)
			want := ip
			if c.inLabels {
				want = lp
			}
			assert.Equal(t, want, pe.File)
			assert.Equal(t, 0, pe.Line)
			assert.Equal(t, c.offset, pe.Offset)
			assert.ErrorIs(t, err, c.sentinel)
			assert.Contains(t, err.Error(), "byte ")
		})
	}
	_, _, err := Open(filepath.Join(t.TempDir(), "x-images-idx3-ubyte"), Options{Classes: []string{"0", "1"}})
	assert.ErrorIs(t, err, ErrOptions, "no label file beside the images")
	_, _, err = Open("testdata/fashion-t10k-16-images-idx3-ubyte.gz", Options{})
	assert.ErrorIs(t, err, ErrOptions, "IDX logistic without classes")
}
