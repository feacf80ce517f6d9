package store

import (
	"database/sql"
	"sync"

	"unlearn/olbfgs"
)

// ckptWriter encodes and stores the checkpoints of a replay on a goroutine
// of its own (for states up to ckptAsyncMaxFloats; larger ones directly), so that the stepping goroutine's cost per checkpoint is a copy
// of the state (O(τd), into one of two reused learners) instead of the
// snapshot's encoding and its INSERT under secure_delete. The stored bytes
// are encodeState's, as when the stepping goroutine wrote them; the rows are
// inserted in seq order, in the caller's transaction (database/sql
// serializes the statements of the reader, the writer and the caller on the
// transaction's one connection). The caller must call wait before it
// commits, rolls back or uses the checkpoints table again.
type ckptWriter struct {
	s      *Store
	tx     *sql.Tx
	origin string
	free   chan *olbfgs.Learner // copies not in use
	work   chan ckptJob
	done   sync.WaitGroup
	mu     sync.Mutex
	err    error // the first error; later jobs are dropped
	n      int   // checkpoints written
	direct bool  // a large state: put writes on the caller's goroutine
}

type ckptJob struct {
	seq   int64
	exact bool
	l     *olbfgs.Learner
}

// ckptCopies is the number of state copies a ckptWriter holds: one being
// encoded, one being filled by the stepping goroutine. A copy is a whole
// learner (Learner.Clone: w, the 2τ pair vectors and its O(d) scratch
// vectors, ≈ (2τ+7)·d floats), so the writer holds ≈ 2·(2τ+7)·d floats
// whatever the log length.
const ckptCopies = 2

// ckptAsyncMaxFloats bounds the state size, in floats ((2τ+7)·d), up to
// which checkpoints are written on the third goroutine. A larger state
// (8 MB a copy: d ≈ 3.7·10⁴ at τ = 10) is written by the stepping goroutine
// itself, as before the writer existed: there a checkpoint's encoding is
// small beside the K steps between two checkpoints, and two copies would
// add hundreds of megabytes to a forget's peak memory at d = 10⁶.
var ckptAsyncMaxFloats = 1 << 20 // a variable so that tests can force either mode

func newCkptWriter(s *Store, tx *sql.Tx, origin string) *ckptWriter {
	w := &ckptWriter{s: s, tx: tx, origin: origin}
	if c := s.cfg; (2*c.Memory+7)*c.ParamDim() > ckptAsyncMaxFloats {
		w.direct = true
		return w
	}
	w.free, w.work = make(chan *olbfgs.Learner, ckptCopies), make(chan ckptJob, ckptCopies)
	for range ckptCopies {
		w.free <- nil // allocated on first use, by Clone
	}
	w.done.Add(1)
	go w.run()
	return w
}

func (w *ckptWriter) run() {
	defer w.done.Done()
	for j := range w.work {
		if w.failed() == nil {
			if err := w.write(j); err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
			}
		}
		w.free <- j.l
	}
}

func (w *ckptWriter) write(j ckptJob) error {
	snap, err := w.s.encodeState(j.l)
	if err != nil {
		return err
	}
	if err := writeCheckpoint(w.tx, j.seq, j.exact, j.l.T(), w.origin, snap); err != nil {
		return err
	}
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
	return nil
}

func (w *ckptWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// put queues the checkpoint of l's current state at seq. It blocks while
// both copies are in use, and returns the first error of an earlier
// checkpoint, if any (the caller then abandons its transaction).
func (w *ckptWriter) put(seq int64, exact bool, l *olbfgs.Learner) error {
	if err := w.failed(); err != nil {
		return err
	}
	if w.direct {
		err := w.write(ckptJob{seq: seq, exact: exact, l: l})
		if err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
		}
		return err
	}
	c := <-w.free
	if c == nil {
		c = l.Clone()
	} else {
		c.CopyFrom(l)
	}
	w.work <- ckptJob{seq: seq, exact: exact, l: c}
	return nil
}

// wait stops the writer once every queued checkpoint is written, and
// returns the number written and the first error.
func (w *ckptWriter) wait() (int, error) {
	if !w.direct {
		close(w.work)
		w.done.Wait()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n, w.err
}
