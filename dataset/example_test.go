package dataset_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"unlearn/dataset"
)

// Reading a CSV file with string ids and 0/1 labels as a logistic stream.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "dataset-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "patients.csv")
	os.WriteFile(path, []byte("patient,age,dose,relapsed\nP-001,34,1.5,0\nP-002,51,0.5,1\nP-003,47,2,0\n"), 0o644)

	hdr, r, err := dataset.Open(path, dataset.Options{Label: "relapsed", ID: "patient"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fmt.Println(hdr.Kind, "d =", hdr.D, "λ =", hdr.Lambda)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(e.ID, e.Sample.V, e.Sample.S)
	}
	fmt.Println(r.Mapping())
	// Output:
	// logistic d = 2 λ = 0.05
	// 1 [34 1.5] -1
	// 2 [51 0.5] 1
	// 3 [47 2] -1
	// [{1 P-001} {2 P-002} {3 P-003}]
}

// Errors name the file, line and column.
func ExampleOpen_error() {
	dir, _ := os.MkdirTemp("", "dataset-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bad.svm")
	os.WriteFile(path, []byte("+1 1:0.5 3:1\n-1 2:0.25 2:1\n"), 0o644)

	_, _, err := dataset.Open(path, dataset.Options{})
	fmt.Println(filepath.Base(err.Error()))
	// Output:
	// bad.svm: line 2, column 11: index 2 after 2: indices must increase strictly: invalid value
}
