package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// csvSource reads a CSV file with a header row.
type csvSource struct {
	path     string
	closeF   func() error
	r        *csv.Reader
	names    []string
	label    int   // 0-based column of the label, or −1 (unlabeled, none)
	id       int   // 0-based column of the id, or −1
	features []int // 0-based feature columns, in file order
	lab      labeler
	// ids: mode 0 before the first id, 1 integer ids, 2 string ids; seen
	// maps an integer id or a string id to the line that used it first.
	idMode  int
	seenInt map[int64]int
	seenStr map[string]int
	st      Stats
	// unlabeled: Options.Unlabeled (the label column may be absent, ids
	// are not checked for repeats).
	unlabeled bool
	// skipped is Options.SkipLines, added to encoding/csv's line numbers.
	skipped int
	// pending is the first data row of a file without a header row, read
	// to count its columns, with the positions of its fields.
	pending    []string
	pendingPos [][2]int
	havePend   bool
}

func openCSV(path string, o Options) (*csvSource, error) {
	rd, closeF, err := openFile(path)
	if err != nil {
		return nil, err
	}
	s := &csvSource{path: path, closeF: closeF, id: -1, lab: newLabeler(o), unlabeled: o.Unlabeled,
		seenInt: map[int64]int{}, seenStr: map[string]int{}}
	br := bufio.NewReader(rd)
	for s.skipped < o.SkipLines {
		if _, err := br.ReadSlice('\n'); err == io.EOF {
			break
		} else if err != nil && err != bufio.ErrBufferFull {
			closeF()
			return nil, &PosError{File: path, Line: s.skipped + 1, Err: fmt.Errorf("read: %w", err)}
		} else if err == nil {
			s.skipped++
		}
	}
	s.r = csv.NewReader(br)
	if o.Comma != 0 {
		s.r.Comma = o.Comma
	}
	s.r.ReuseRecord = true
	hdr, err := s.r.Read()
	if err != nil {
		closeF()
		if err == io.EOF && o.SkipLines > 0 {
			return nil, &PosError{File: path, Line: s.skipped + 1, Err: fmt.Errorf("skipping %d lines (skip_lines) leaves no header row (the file has %d lines): %w", o.SkipLines, s.skipped, ErrSyntax)}
		}
		if err == io.EOF {
			return nil, &PosError{File: path, Line: s.skipped + 1, Err: fmt.Errorf("empty file: want a header row of column names: %w", ErrSyntax)}
		}
		return nil, s.csvError(err)
	}
	s.names = slices.Clone(hdr)
	if o.NoHeader {
		s.pending, s.havePend = s.names, true
		s.pendingPos = make([][2]int, len(hdr))
		for i := range hdr {
			s.pendingPos[i][0], s.pendingPos[i][1] = s.r.FieldPos(i)
		}
		s.names = make([]string, len(hdr))
		for i := range s.names {
			s.names[i] = strconv.Itoa(i + 1)
		}
	}
	skip := map[int]bool{}
	// Rows to predict on need no label column, and may lack the id and
	// excluded columns of the file the model was trained on.
	absent := func(spec string) bool { return o.Unlabeled && !hasColumn(s.names, spec) }
	if absent(o.Label) {
		s.label = -1
	} else {
		if s.label, err = column(s.names, o.Label, "Label"); err != nil {
			closeF()
			return nil, err
		}
		skip[s.label] = true
	}
	if o.ID != "" && !absent(o.ID) {
		if s.id, err = column(s.names, o.ID, "ID"); err != nil {
			closeF()
			return nil, err
		}
		if s.id == s.label {
			closeF()
			return nil, optErr("ID", "%q is the label column", o.ID)
		}
		skip[s.id] = true
	}
	for _, ex := range o.Exclude {
		if absent(ex) {
			continue
		}
		c, err := column(s.names, ex, "Exclude")
		if err != nil {
			closeF()
			return nil, err
		}
		skip[c] = true
	}
	for c := range s.names {
		if !skip[c] {
			s.features = append(s.features, c)
		}
	}
	if len(s.features) == 0 {
		closeF()
		return nil, optErr("Exclude", "no feature columns left in %s (columns: %s)", path, strings.Join(s.names, ", "))
	}
	return s, nil
}

// hasColumn reports whether spec names a column (by header name, or a
// 1-based index in range): whether column can resolve it or finds it
// ambiguous.
func hasColumn(names []string, spec string) bool {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return false
	}
	for _, n := range names {
		if strings.TrimSpace(n) == spec {
			return true
		}
	}
	i, err := strconv.Atoi(spec)
	return err == nil && i >= 1 && i <= len(names)
}

// column resolves a column given by header name or 1-based index.
func column(names []string, spec, field string) (int, error) {
	found := -1
	for i, n := range names {
		if strings.TrimSpace(n) == strings.TrimSpace(spec) {
			if found >= 0 {
				return 0, optErr(field, "%q names columns %d and %d: give the 1-based index", spec, found+1, i+1)
			}
			found = i
		}
	}
	if found >= 0 {
		return found, nil
	}
	if i, err := strconv.Atoi(strings.TrimSpace(spec)); err == nil {
		if i < 1 || i > len(names) {
			return 0, optErr(field, "column %d out of range 1..%d", i, len(names))
		}
		return i - 1, nil
	}
	return 0, optErr(field, "no column named %q (columns: %s)", spec, strings.Join(names, ", "))
}

func (s *csvSource) dim() int     { return len(s.features) }
func (s *csvSource) stats() Stats { return s.st }
func (s *csvSource) close() error { return s.closeF() }
func (s *csvSource) featureNames() []string {
	out := make([]string, len(s.features))
	for i, c := range s.features {
		out[i] = s.names[c]
	}
	return out
}

// csvError turns an encoding/csv error into a *PosError.
func (s *csvSource) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			msg = fmt.Sprintf("wrong number of fields: the header row has %d", len(s.names))
			if s.names == nil {
				msg = "wrong number of fields"
			}
			return &PosError{File: s.path, Line: pe.Line + s.skipped, Err: fmt.Errorf("%s: %w", msg, ErrSyntax)}
		}
		return &PosError{File: s.path, Line: pe.Line + s.skipped, Column: pe.Column, Err: fmt.Errorf("%s: %w", msg, ErrSyntax)}
	}
	return &PosError{File: s.path, Err: fmt.Errorf("read: %w", err)}
}

// cellError locates an error in column c of the current record.
func (s *csvSource) cellError(c int, err error) error {
	line, col := s.fieldPos(c)
	return &PosError{File: s.path, Line: line, Column: col, Field: c + 1, ColumnName: s.names[c], Err: err}
}

// fieldPos returns the file line and column of field c of the current
// record.
func (s *csvSource) fieldPos(c int) (line, col int) {
	if s.pendingPos != nil {
		line, col = s.pendingPos[c][0], s.pendingPos[c][1]
	} else {
		line, col = s.r.FieldPos(c)
	}
	return line + s.skipped, col
}

func (s *csvSource) next() (row, error) {
	for {
		var (
			rec []string
			err error
		)
		if s.havePend {
			// The first data row of a file without a header was read
			// already, to count its columns.
			rec, s.havePend = s.pending, false
		} else {
			s.pendingPos = nil
			rec, err = s.r.Read()
		}
		if err == io.EOF {
			return row{}, io.EOF
		}
		if err != nil {
			return row{}, s.csvError(err)
		}
		s.st.Rows++
		cell := ""
		if s.label >= 0 {
			cell = rec[s.label]
		}
		y, keep, err := s.lab.label(cell)
		if err != nil {
			return row{}, s.cellError(s.label, err)
		}
		if !keep {
			s.st.Skipped++
			continue
		}
		line, _ := s.fieldPos(0)
		r := row{id: int64(s.st.Rows), y: y, line: line, x: make([]float64, len(s.features))}
		for j, c := range s.features {
			v, err := parseNumber(rec[c])
			if err != nil {
				err := s.cellError(c, err)
				// A word in the first data row's feature cell: most likely
				// a column of names or string ids, not a typo.
				err.(*PosError).StringColumn = s.st.Rows == 1 && isWord(rec[c])
				return row{}, err
			}
			r.x[j] = v
		}
		if s.id >= 0 {
			if err := s.rowID(rec[s.id], &r); err != nil {
				return row{}, s.cellError(s.id, err)
			}
		}
		return r, nil
	}
}

// isWord reports whether a cell is text that is no number at all (not
// empty, not an overflowing or NaN literal).
func isWord(cell string) bool {
	cell = strings.TrimSpace(cell)
	_, err := strconv.ParseFloat(cell, 64)
	return cell != "" && errors.Is(err, strconv.ErrSyntax) && !strings.EqualFold(cell, "nan")
}

// rowID sets the row's id from the id cell (see Options.ID).
func (s *csvSource) rowID(cell string, r *row) error {
	cell = strings.TrimSpace(cell)
	if cell == "" {
		return fmt.Errorf("empty id: %w", ErrValue)
	}
	if s.idMode == 0 {
		s.idMode = 2
		if _, err := strconv.ParseInt(cell, 10, 64); err == nil {
			s.idMode = 1
		}
	}
	if s.idMode == 2 {
		if s.unlabeled {
			r.key = strings.Clone(cell)
			return nil
		}
		if first, ok := s.seenStr[cell]; ok {
			return fmt.Errorf("id %q already on line %d: %w", cell, first, ErrDuplicateID)
		}
		// Clone: encoding/csv slices every cell of a record out of one
		// string, so keeping the cell would keep the whole line.
		cell = strings.Clone(cell)
		s.seenStr[cell] = r.line
		r.key = cell // r.id stays the data row number
		return nil
	}
	id, err := strconv.ParseInt(cell, 10, 64)
	if err != nil {
		return fmt.Errorf("id %q is not an integer, but the first id was, so ids are integers: %w", cell, ErrValue)
	}
	if s.unlabeled {
		r.id = id
		return nil
	}
	if first, ok := s.seenInt[id]; ok {
		return fmt.Errorf("id %d already on line %d: %w", id, first, ErrDuplicateID)
	}
	s.seenInt[id] = r.line
	r.id = id
	return nil
}
