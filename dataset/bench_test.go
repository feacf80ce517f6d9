package dataset

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchFile writes a data file of n rows and d features (a third of them
// zero) in format f and returns its path.
func benchFile(b *testing.B, f Format, n, d int) string {
	b.Helper()
	var sb strings.Builder
	if f == CSV {
		for j := range d {
			fmt.Fprintf(&sb, "f%d,", j)
		}
		sb.WriteString("y\n")
	}
	for i := range n {
		if f == LIBSVM {
			sb.WriteString(strconv.Itoa(i % 2))
		}
		for j := range d {
			v := ""
			if (i+j)%3 != 0 {
				v = strconv.FormatFloat(float64((i*31+j*17)%1000)/997, 'g', -1, 64)
			}
			switch {
			case f == CSV && v == "":
				sb.WriteString("0,")
			case f == CSV:
				sb.WriteString(v + ",")
			case v != "":
				fmt.Fprintf(&sb, " %d:%s", j+1, v)
			}
		}
		if f == CSV {
			sb.WriteString(strconv.Itoa(i % 2))
		}
		sb.WriteString("\n")
	}
	p := filepath.Join(b.TempDir(), "bench."+string(f))
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkRead reads every event of files of 1000 rows at d = 10, 100,
// 1000; bytes/s is the file's size over the time.
func BenchmarkRead(b *testing.B) {
	for _, f := range []Format{CSV, LIBSVM} {
		for _, d := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/d=%d", f, d), func(b *testing.B) {
				p := benchFile(b, f, 1000, d)
				o := Options{Label: "y"}
				if f == LIBSVM {
					o = Options{D: d}
				}
				st, _ := os.Stat(p)
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					_, r, err := Open(p, o)
					if err != nil {
						b.Fatal(err)
					}
					for {
						if _, err := r.Next(); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
					}
					r.Close()
				}
			})
		}
	}
}
