package dataset

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"

	"unlearn/stream"
)

// svmSource reads a LIBSVM/svmlight file:
//
//	<label> [qid:<n>] <index>:<value> <index>:<value> … [# comment]
//
// with 1-based, strictly increasing indices; absent indices are zeros.
// Lines holding only a comment are skipped (and counted); a blank line is
// an error.
type svmSource struct {
	path   string
	closeF func() error
	br     *bufio.Reader
	buf    []byte
	d      int // the dimension; 0 during the scan for the largest index
	line   int
	lab    labeler
	st     Stats
	// scan: read every row's indices and values (whatever its class) to
	// find the largest index, allocating no feature vectors.
	scan   bool
	sparse bool
	maxIdx int
}

func openLIBSVM(path string, o Options, d int, scan bool) (*svmSource, error) {
	rd, closeF, err := openFile(path)
	if err != nil {
		return nil, err
	}
	return &svmSource{path: path, closeF: closeF, br: bufio.NewReaderSize(rd, 64<<10), d: d, scan: scan, sparse: o.Sparse,
		lab: newLabeler(o)}, nil
}

// scanLIBSVM reads the whole file once, checking its syntax, and returns
// the largest feature index.
func scanLIBSVM(path string, o Options) (int, error) {
	s, err := openLIBSVM(path, o, 0, true)
	if err != nil {
		return 0, err
	}
	defer s.close()
	for {
		if _, err := s.next(); err == io.EOF {
			break
		} else if err != nil {
			return 0, err
		}
	}
	if s.maxIdx == 0 {
		return 0, &PosError{File: path, Line: max(s.line, 1), Err: fmt.Errorf("no feature index in the file, so d is unknown: give the dimension: %w", ErrValue)}
	}
	return s.maxIdx, nil
}

func (s *svmSource) dim() int     { return s.d }
func (s *svmSource) stats() Stats { return s.st }
func (s *svmSource) close() error { return s.closeF() }

func (s *svmSource) fail(col int, err error) error {
	return &PosError{File: s.path, Line: s.line, Column: col, Err: err}
}

func (s *svmSource) next() (row, error) {
	for {
		b, err := stream.ReadLine(s.br, &s.buf)
		if err == io.EOF {
			return row{}, io.EOF
		}
		s.line++
		if err != nil {
			return row{}, s.fail(0, fmt.Errorf("read: %w", err))
		}
		b = bytes.TrimSuffix(b, []byte{'\r'})
		content := b
		comment := false
		if i := bytes.IndexByte(b, '#'); i >= 0 {
			content, comment = b[:i], true
		}
		if len(bytes.Trim(content, " \t")) == 0 {
			if comment {
				s.st.Comments++
				continue
			}
			return row{}, s.fail(0, fmt.Errorf("blank line: %w", ErrSyntax))
		}
		s.st.Rows++
		r, keep, err := s.parse(content)
		if err != nil {
			return row{}, err
		}
		if !keep {
			s.st.Skipped++
			continue
		}
		if s.scan {
			r.x = nil
		}
		return r, nil
	}
}

// parse parses the content of a data line (comment removed).
func (s *svmSource) parse(b []byte) (row, bool, error) {
	var (
		r     = row{id: int64(s.st.Rows), line: s.line}
		i     = 0
		first = true
		prev  = 0
		keep  = true
	)
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i == len(b) {
			break
		}
		start := i
		for i < len(b) && b[i] != ' ' && b[i] != '\t' {
			i++
		}
		tok := b[start:i]
		col := start + 1
		if first && s.lab.unlabeled && bytes.IndexByte(tok, ':') >= 0 {
			// A row to predict on may omit its label: the first token is
			// then a feature, read below.
			first = false
			r.y = placeholderLabel(s.lab.kind)
			s.allocRow(&r)
		}
		if first {
			first = false
			y, k, err := s.lab.label(string(tok))
			if err != nil {
				return row{}, false, s.fail(col, err)
			}
			r.y, keep = y, k
			if !keep && !s.scan {
				return row{}, false, nil // another class: not parsed further
			}
			s.allocRow(&r)
			continue
		}
		name, val, ok := cutColon(tok)
		if !ok {
			return row{}, false, s.fail(col, fmt.Errorf("token %q: want index:value: %w", tok, ErrSyntax))
		}
		if string(name) == "qid" {
			if prev > 0 {
				return row{}, false, s.fail(col, fmt.Errorf("qid after feature %d: qid comes right after the label: %w", prev, ErrSyntax))
			}
			if _, err := strconv.ParseInt(string(val), 10, 64); err != nil {
				return row{}, false, s.fail(col, fmt.Errorf("qid %q is not an integer: %w", val, ErrValue))
			}
			s.st.QIDs++
			continue
		}
		idx, err := strconv.Atoi(string(name))
		switch {
		case err != nil || idx < 1:
			return row{}, false, s.fail(col, fmt.Errorf("index %q: want an integer ≥ 1 (indices are 1-based): %w", name, ErrValue))
		case idx <= prev:
			return row{}, false, s.fail(col, fmt.Errorf("index %d after %d: indices must increase strictly: %w", idx, prev, ErrValue))
		case idx > MaxDim:
			return row{}, false, s.fail(col, fmt.Errorf("index %d exceeds %d, the largest dimension a learner accepts: %w", idx, MaxDim, ErrValue))
		case s.d > 0 && idx > s.d:
			return row{}, false, s.fail(col, fmt.Errorf("index %d exceeds d = %d: %w", idx, s.d, ErrIndexRange))
		}
		v, err := parseNumber(string(val))
		if err != nil {
			return row{}, false, s.fail(col+len(name)+1, fmt.Errorf("value of index %d: %w", idx, err))
		}
		prev = idx
		s.maxIdx = max(s.maxIdx, idx)
		switch {
		case r.idx != nil:
			r.idx, r.x = append(r.idx, int32(idx-1)), append(r.x, v)
		case r.x != nil:
			r.x[idx-1] = v
		}
	}
	return r, keep, nil
}

// allocRow gives r the feature vector the read fills: none during the
// scan, an empty sparse one, or d zeros.
func (s *svmSource) allocRow(r *row) {
	switch {
	case s.scan:
	case s.sparse:
		r.idx, r.x = []int32{}, []float64{}
	default:
		r.x = make([]float64, s.d)
	}
}

// cutColon splits "name:value" at its first colon.
func cutColon(tok []byte) (name, val []byte, ok bool) {
	i := bytes.IndexByte(tok, ':')
	if i <= 0 || i == len(tok)-1 {
		return nil, nil, false
	}
	return tok[:i], tok[i+1:], true
}
