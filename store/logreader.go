package store

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"math"
	"sync"

	"unlearn/stream"
)

// pageRows is the largest number of log rows a logReader reads per query
// (keyset pagination on seq, the table's INTEGER PRIMARY KEY, so each page
// is a range scan of the rowid B-tree that starts where the previous one
// ended). pageBytes caps a page's decoded payloads, so that a store of large
// d reads fewer rows per page (rowsPerPage): at d = 100 a page is
// 4096·808 bytes ≈ 3.3 MB; at d = 10⁵, 5 rows of 0.8 MB.
const (
	pageRows  = 4096
	pageBytes = 4 << 20
)

// rowsPerPage is the number of rows of a page for payloads of dimension d:
// pageRows, or fewer so that a page's payloads fit in pageBytes (at least 1).
func rowsPerPage(d int) int {
	return max(1, min(pageRows, pageBytes/(8*(d+1))))
}

// pipeDepth is the number of decoded pages the reader may have ready ahead
// of the stepping goroutine. With pipeDepth+1 pages in all (one being
// stepped, pipeDepth ready or being filled), memory is bounded by
// (pipeDepth+1)·rowsPerPage(d)·8·(d+3) bytes (≈ 12 MB at most) whatever
// the log length.
const pipeDepth = 2

// logPage is one page of log rows decoded into storage that is reused from
// page to page: row i has seq[i], id[i], erased[i], and (if not erased)
// the sample S = s[i], V = v[i·d : (i+1)·d].
type logPage struct {
	n      int
	seq    []int64
	id     []int64
	erased []bool
	s      []float64
	v      []float64
	err    error

	sumBuf []byte // reused by the payloads' sums
}

func newLogPage(d int) *logPage {
	n := rowsPerPage(d)
	return &logPage{
		seq:    make([]int64, n),
		id:     make([]int64, n),
		erased: make([]bool, n),
		s:      make([]float64, n),
		v:      make([]float64, n*d),
	}
}

// sample returns row i's sample; its V aliases the page's storage and is
// valid until the page is handed back to the reader (Learner.Step does not
// keep the slice it is given).
func (p *logPage) sample(i, d int) stream.Sample {
	return stream.Sample{S: p.s[i], V: p.v[i*d : (i+1)*d : (i+1)*d]}
}

// fill reads the rows with seq > from (and seq ≤ to if to ≥ 0), at most
// len(p.seq) of them, into p.
func (p *logPage) fill(stmt *sql.Stmt, from, to int64, d int) error {
	p.n = 0
	if to < 0 {
		to = math.MaxInt64
	}
	rows, err := stmt.Query(from, to, len(p.seq))
	if err != nil {
		return err
	}
	defer rows.Close()
	var b, sum sql.RawBytes
	var want [sha256.Size]byte
	for rows.Next() {
		i := p.n
		// Erased is SQL's NULL test, not b == nil: the driver returns an
		// empty BLOB as nil too, and an empty payload must be an error
		// (decodePayloadInto), never an erased event.
		if err := rows.Scan(&p.seq[i], &p.id[i], &p.erased[i], &b, &sum); err != nil {
			return err
		}
		if p.erased[i] {
			copy(want[:], sumEvent(p.seq[i], p.id[i], nil, true))
		} else {
			p.sumBuf = sumEventInto(&want, p.sumBuf, p.seq[i], p.id[i], b)
		}
		if !sameSum(sum, want[:]) {
			return corrupt(fmt.Sprintf("event seq %d (id %d)", p.seq[i], p.id[i]), "its checksum does not match its payload")
		}
		if !p.erased[i] {
			if err := decodePayloadInto(p.s[i:i+1], p.v[i*d:(i+1)*d], b); err != nil {
				return corrupt(fmt.Sprintf("event seq %d (id %d)", p.seq[i], p.id[i]), "its payload does not decode: %v", err)
			}
		}
		p.n++
	}
	return rows.Err()
}

// logReader reads the log in pages on a second goroutine, so that reading
// and decoding the next page overlaps with stepping through the current one
// (a forget's replay: docs/performance.md). Pages come from a fixed pool and
// go back to it through Release, so the reader allocates nothing per row
// beyond what the driver does and its memory does not grow with the log.
//
// The reader's queries and the caller's statements share tx; database/sql
// serialises the calls on the transaction's one connection, and SQLite lets
// one connection write a table (checkpoints) while a statement reading
// another (events) is open. Close must be called before tx is committed.
type logReader struct {
	full chan *logPage
	free chan *logPage
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// readLog starts a logReader over the rows with from < seq (≤ to if to ≥ 0)
// of the events table, in seq order, for payloads of dimension d.
func readLog(tx *sql.Tx, from, to int64, d int) *logReader {
	r := &logReader{
		full: make(chan *logPage, pipeDepth),
		free: make(chan *logPage, pipeDepth+1),
		done: make(chan struct{}),
	}
	for range pipeDepth + 1 {
		r.free <- newLogPage(d)
	}
	r.wg.Add(1)
	go r.run(tx, from, to, d)
	return r
}

func (r *logReader) run(tx *sql.Tx, from, to int64, d int) {
	defer r.wg.Done()
	defer close(r.full)
	var p *logPage
	select {
	case p = <-r.free:
	case <-r.done:
		return
	}
	stmt, err := tx.Prepare(`SELECT seq, id, payload IS NULL, payload, sha256 FROM events WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`)
	if err != nil {
		p.n, p.err = 0, err
		r.send(p)
		return
	}
	defer stmt.Close()
	for {
		select {
		case <-r.done:
			return
		default:
		}
		p.err = p.fill(stmt, from, to, d)
		if !r.send(p) || p.err != nil || p.n < len(p.seq) {
			return
		}
		from = p.seq[p.n-1]
		select {
		case p = <-r.free:
		case <-r.done:
			return
		}
	}
}

func (r *logReader) send(p *logPage) bool {
	select {
	case r.full <- p:
		return true
	case <-r.done:
		return false
	}
}

// Next returns the next page, or nil after the last one. A page with a
// non-nil err is the last; its rows before the error are valid.
func (r *logReader) Next() *logPage { return <-r.full }

// Release hands p back to the reader for reuse.
func (r *logReader) Release(p *logPage) { r.free <- p }

// Close stops the reader and waits for its goroutine to finish (and its
// statement to be closed). It is safe to call more than once.
func (r *logReader) Close() {
	r.once.Do(func() { close(r.done) })
	r.wg.Wait()
}
