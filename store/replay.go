package store

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// replay applies the log rows after seq c to l, which holds the state at c,
// and, if write, stores a checkpoint at every multiple of K in (c, head]:
// the state after every row up to it. It returns the rows applied and the
// checkpoints written. Rows are read and decoded by a logReader on a second
// goroutine, in pages of up to pageRows rows (pageBytes of payloads), into a
// fixed pool of reused pages, so memory does not grow with the log and
// reading overlaps with stepping. Every payload's sum is verified as it is
// read (a damaged row is a *CorruptError and nothing is kept).
func (s *Store) replay(tx *sql.Tx, l *olbfgs.Learner, c int64, write bool) (n, ckpts int, err error) {
	next := (c/s.k + 1) * s.k // the next checkpoint boundary
	var cw *ckptWriter        // checkpoints are encoded and stored on a third goroutine
	if write {
		cw = newCkptWriter(s, tx, "replay")
		defer func() {
			k, werr := cw.wait()
			ckpts = k
			if err == nil {
				err = werr
			}
		}()
	}
	emit := func(limit int64, inclusive bool) error {
		for next < limit || (inclusive && next == limit) {
			if write {
				if err := cw.put(next, true, l); err != nil {
					return err
				}
			}
			next += s.k
		}
		return nil
	}
	d := s.cfg.Dim
	r := readLog(tx, c, -1, d)
	defer r.Close()
	for {
		p := r.Next()
		if p == nil {
			break
		}
		for i := range p.n {
			seq, id := p.seq[i], p.id[i]
			if p.erased[i] {
				return n, ckpts, corrupt(fmt.Sprintf("event seq %d (id %d)", seq, id), "erased, but after the exact checkpoint at seq %d", c)
			}
			if err := emit(seq, false); err != nil {
				return n, ckpts, err
			}
			if err := l.Step(stream.Event{Op: stream.Insert, ID: id, Sample: p.sample(i, d)}); err != nil {
				return n, ckpts, fmt.Errorf("replay of seq %d: %w", seq, err)
			}
			n++
			if err := emit(seq, true); err != nil {
				return n, ckpts, err
			}
		}
		if p.err != nil {
			return n, ckpts, p.err
		}
		r.Release(p)
	}
	r.Close()
	return n, ckpts, emit(s.head, true)
}

func joinIDs(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}
