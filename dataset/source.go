package dataset

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// row is one selected data row, ready to become an insert event.
type row struct {
	id int64
	// key is the row's string id when a CSV id column holds strings (the
	// mapping's right-hand side); empty otherwise.
	key string
	x   []float64
	// idx, if not nil, makes x sparse: x[k] is entry idx[k] (0-based).
	idx []int32
	y   float64
	// line is the row's line (CSV, LIBSVM) or 0.
	line int
}

// source reads the selected rows of one file in file order.
type source interface {
	// dim is the feature dimension d.
	dim() int
	// next returns the next selected row, or io.EOF. Rows of classes that
	// Options.Classes does not select are counted in stats and skipped.
	// Errors are *PosError values.
	next() (row, error)
	stats() Stats
	close() error
}

// Stats counts what a read saw.
type Stats struct {
	// Rows is the number of data rows read (header and comment lines
	// excluded).
	Rows int `json:"rows"`
	// Skipped is the number of rows of classes Options.Classes does not
	// select.
	Skipped int `json:"skipped,omitempty"`
	// Emitted is the number of events the reader returned.
	Emitted int `json:"emitted"`
	// Comments is the number of LIBSVM lines that hold only a comment.
	Comments int `json:"comments,omitempty"`
	// QIDs is the number of LIBSVM qid:n tokens, which are ignored (they
	// group rows for ranking; the stream has no use for them).
	QIDs int `json:"qids,omitempty"`
}

// openFile opens path for reading, transparently decompressing gzip
// (recognized by its magic bytes 1f 8b, whatever the name).
func openFile(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, &PosError{File: path, Err: fmt.Errorf("gzip: %v: %w", err, ErrSyntax)}
		}
		return bufio.NewReaderSize(zr, 64<<10), func() error { zr.Close(); return f.Close() }, nil
	}
	return br, f.Close, nil
}
