package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzRead writes data to a file and reads it whole: it must return events
// or an error of the package's kinds, and never panic.
func fuzzRead(t *testing.T, name string, data []byte, o Options) {
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err := readErr(p, o)
	if err == nil {
		return
	}
	var pe *PosError
	var oe *OptionError
	if !errors.As(err, &pe) && !errors.As(err, &oe) {
		t.Fatalf("error of an unexpected type %T: %v", err, err)
	}
}

func FuzzCSV(f *testing.F) {
	for _, s := range []string{"a,b,y\n1,2,1\n3,4,0\n", "a,y\n\"1\",1\n", "a,y\n1,2\n", "a,y\n,\n", "a,y\n1\n", "y\n1\n", "a,\"y\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, shuffle bool) {
		o := Options{Label: "y", ID: "1"}
		if shuffle {
			o.Shuffle = new(uint64(1))
		}
		fuzzRead(t, "f.csv", data, o)
		fuzzRead(t, "g.csv", data, Options{Label: "1", NoHeader: true, SkipLines: 1, Kind: "regression"})
	})
}

func FuzzLIBSVM(f *testing.F) {
	for _, s := range []string{"+1 1:0.5 3:2\n-1 2:1\n", "1 qid:3 1:1 # c\n", "1 0:1\n", "1 2:1 1:1\n", "1\n", "# only\n", "1 1:1e999\n"} {
		f.Add([]byte(s), 0)
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, d int) {
		if d < 0 || d > 1000 {
			return
		}
		fuzzRead(t, "f.svm", data, Options{D: d})
	})
}

func FuzzIDX(f *testing.F) {
	img := []byte{0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 1, 2, 3, 4}
	lab := []byte{0, 0, 8, 1, 0, 0, 0, 2, 0, 1}
	f.Add(img, lab)
	f.Add(img[:10], lab)
	f.Add(img, lab[:9])
	f.Fuzz(func(t *testing.T, img, lab []byte) {
		dir := t.TempDir()
		ip := filepath.Join(dir, "x-images-idx3-ubyte")
		if err := os.WriteFile(ip, img, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "x-labels-idx1-ubyte"), lab, 0o644); err != nil {
			t.Fatal(err)
		}
		err := readErr(ip, Options{Classes: []string{"0", "1"}})
		var pe *PosError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error of an unexpected type %T: %v", err, err)
		}
	})
}
