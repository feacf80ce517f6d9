package experiment

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// seriesHeader is the header row of a series CSV ([Record.WriteSeriesCSV]).
var seriesHeader = []string{"method", "k", "E_w", "E_Z", "E_Theta", "D_upd", "M_direct"}

// SeriesFileName returns the name of the series file written beside the
// record file recordPath by [WriteRecordFiles]: its base name with the
// extension ".json" (if any) replaced by ".series.csv".
func SeriesFileName(recordPath string) string {
	return strings.TrimSuffix(filepath.Base(recordPath), ".json") + ".series.csv"
}

// WriteRecordFiles writes a record to path and, when it kept its per-step
// series, the series as CSV beside it ([SeriesFileName]; the long form of
// [Record.WriteSeriesCSV], one row per method and step with every value in
// its shortest round-trip form), naming that file in the JSON's
// series_file instead of holding the series inline. The JSON then stays
// small whatever the horizon (about 2 KB plus 1 KB per method), and
// [ReadRecordFile] reads both back bit for bit. The series file is written
// first, each file atomically (temporary file, sync, rename), so a record
// never names a missing or partial series file. r is not modified.
func WriteRecordFiles(path string, r *Record) error {
	if len(r.Methods) == 0 || r.Methods[0].Series == nil {
		return WriteRecordFile(path, r)
	}
	name := SeriesFileName(path)
	if err := writeFile(filepath.Join(filepath.Dir(path), name), r.WriteSeriesCSV); err != nil {
		return err
	}
	out := *r
	out.SeriesFile = name
	out.Methods = make([]MethodResult, len(r.Methods))
	copy(out.Methods, r.Methods)
	for i := range out.Methods {
		out.Methods[i].Series = nil
	}
	return WriteRecordFile(path, &out)
}

// ReadRecordFile reads the record file at path ([ReadRecord]) and, when it
// names a series file, loads the per-step series from that file, which
// must lie in the same folder ([Record.ReadSeriesCSV]). Errors name the
// file (and line and column) at fault.
func ReadRecordFile(path string) (*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRecord, err)
	}
	r, err := ReadRecord(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.SeriesFile == "" {
		return r, nil
	}
	name := r.SeriesFile
	if name != filepath.Base(name) || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("%w: %s: series_file %q must be a file name in the record's folder", ErrRecord, path, name)
	}
	sp := filepath.Join(filepath.Dir(path), name)
	sf, err := os.Open(sp)
	if err != nil {
		return nil, fmt.Errorf("%w: %s names series_file %q: %w", ErrRecord, path, name, err)
	}
	defer sf.Close()
	if err := r.ReadSeriesCSV(sf); err != nil {
		return nil, fmt.Errorf("%s: %w", sp, err)
	}
	return r, nil
}

// ReadSeriesCSV reads the per-step series written by
// [Record.WriteSeriesCSV] into r's methods: the header row, then for every
// method of r in order the rows k = 0..H (H = r.Config.Horizon), nothing
// else. Values are parsed exactly (NaN marks an undefined D_upd), so a
// series goes through a write and a read bit for bit. Errors wrap
// ErrRecord and name the line and column; on error r is unchanged.
func (r *Record) ReadSeriesCSV(rd io.Reader) error {
	cr := csv.NewReader(rd)
	cr.FieldsPerRecord = len(seriesHeader)
	cr.ReuseRecord = true
	fail := func(line, col int, format string, a ...any) error {
		return fmt.Errorf("%w: series line %d, column %d (%s): %s", ErrRecord, line, col+1, seriesHeader[col], fmt.Sprintf(format, a...))
	}
	head, err := cr.Read()
	if err != nil {
		return csvErr(err, "header")
	}
	for i, h := range seriesHeader {
		if head[i] != h {
			return fail(1, i, "header %q, want %q", head[i], h)
		}
	}
	n := r.Config.Horizon + 1
	if r.Config.Horizon < 0 {
		return fmt.Errorf("%w: record horizon %d", ErrRecord, r.Config.Horizon)
	}
	series := make([]*Series, len(r.Methods))
	line := 1
	for i, m := range r.Methods {
		s := newSeries(n)
		for k := range n {
			row, err := cr.Read()
			line++
			if err == io.EOF {
				return fmt.Errorf("%w: series ends at line %d; want %d rows of method %s (k = 0..%d), got %d", ErrRecord, line-1, n, m.Name, n-1, k)
			}
			if err != nil {
				return csvErr(err, "row")
			}
			if row[0] != m.Name {
				return fail(line, 0, "method %q, want %q (methods in the record's order, H+1 = %d rows each)", row[0], m.Name, n)
			}
			if kk, err := strconv.Atoi(row[1]); err != nil || kk != k {
				return fail(line, 1, "k = %q, want %d", row[1], k)
			}
			for c, dst := range []*float64{&s.Ew[k], &s.EZ[k], &s.ETheta[k], &s.Dupd[k]} {
				v, err := strconv.ParseFloat(row[2+c], 64)
				if err != nil {
					return fail(line, 2+c, "%q is not a number", row[2+c])
				}
				*dst = v
			}
			md, err := strconv.Atoi(row[6])
			if err != nil || md < 0 {
				return fail(line, 6, "%q is not a non-negative integer", row[6])
			}
			s.Mdirect[k] = md
		}
		series[i] = s
	}
	if _, err := cr.Read(); err != io.EOF {
		if err != nil {
			return csvErr(err, "row")
		}
		return fmt.Errorf("%w: series line %d: a row after the last method's k = %d", ErrRecord, line+1, n-1)
	}
	for i := range r.Methods {
		r.Methods[i].Series = series[i]
	}
	return nil
}

// csvErr wraps a CSV syntax error (which names its line and column).
func csvErr(err error, what string) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: series %s: %w", ErrRecord, what, err)
	}
	if err == io.EOF {
		return fmt.Errorf("%w: series file is empty", ErrRecord)
	}
	return fmt.Errorf("%w: series %s: %w", ErrRecord, what, err)
}
