package serve

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"unlearn/certify"
	"unlearn/store"
)

// Deletion queue scheduling.
const (
	// maxBatch caps the requests one batch serves.
	maxBatch = 1000
	// keepRecent is how many served requests the service keeps in memory
	// (older ones are read from the store).
	keepRecent = 10000
	// maxBackoff caps the wait before a failed request is tried again.
	maxBackoff = 5 * time.Minute
)

// queue is the service's side of the deletion queue: the queued requests
// (the store holds them durably), the scheduling of batches by deadline,
// and the clients waiting for a request to be served. One worker goroutine
// serves the batches.
type queue struct {
	s    *Server
	wake chan struct{}

	batchMu sync.Mutex // held while a batch runs (idle waits for it)
	idled   bool       // idle returned: the service is closing (guarded by batchMu)

	mu        sync.Mutex
	pending   []store.QueuedForget // queued, oldest first
	urgent    bool                 // a client asked to wait: serve at once
	solo      bool                 // a batch failed: serve one request at a time until one succeeds
	notBefore map[string]time.Time // failed requests' backoff
	failures  map[string]int
	waiters   map[string]chan struct{} // closed when the request is served
	recent    map[string]store.QueuedForget
	order     []string // recent, oldest first
	lastBatch time.Duration
	lastEnd   time.Time        // when the last batch ended
	filedBy   map[string]int64 // queued request → the token that filed it (this run's)
	lastErr   string
	served    int
}

func newQueue(s *Server) (*queue, error) {
	q := &queue{s: s, wake: make(chan struct{}, 1), notBefore: map[string]time.Time{}, failures: map[string]int{},
		waiters: map[string]chan struct{}{}, recent: map[string]store.QueuedForget{}, filedBy: map[string]int64{}}
	var err error
	if q.pending, err = s.st.QueuedForgets(); err != nil {
		return nil, err
	}
	reqs, err := s.st.Requests()
	if err != nil {
		return nil, err
	}
	if len(reqs) > 0 {
		q.lastBatch = reqs[len(reqs)-1].Wall
	}
	s.metrics.queued.Set(float64(len(q.pending)))
	return q, nil
}

// admit reports whether a request by token may be queued: the queue holds
// fewer than MaxQueued requests and the token fewer than
// MaxQueuedPerToken. Otherwise it returns a 429 problem with Retry-After.
// admit and add are called with the write lock held (postForget), so
// that no other request is queued in between.
func (q *queue) admit(token int64) *Problem {
	q.mu.Lock()
	defer q.mu.Unlock()
	mine := 0
	for _, r := range q.pending {
		if q.filedBy[r.Request] == token {
			mine++
		}
	}
	var p *Problem
	switch {
	case len(q.pending) >= q.s.opt.MaxQueued:
		p = problem("queue-full", "the deletion queue holds %d requests, its limit; nothing was queued: retry after the next batch", len(q.pending))
	case mine >= q.s.opt.MaxQueuedPerToken:
		p = problem("rate-limited", "this token has %d deletion requests queued, its limit; nothing was queued: retry after the next batch", mine)
	default:
		return nil
	}
	p.retryAfter = max(time.Second, min(q.margin(), time.Minute))
	return p
}

// add queues an acknowledged request filed by token; urgent serves the
// queue at once (at most one early batch every UrgentEvery).
func (q *queue) add(r store.QueuedForget, token int64, urgent bool) {
	q.mu.Lock()
	q.filedBy[r.Request] = token
	q.pending = append(q.pending, r)
	q.urgent = q.urgent || urgent
	q.s.metrics.queued.Set(float64(len(q.pending)))
	q.mu.Unlock()
	q.poke()
}

func (q *queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// margin is how long before the oldest deadline a batch starts: twice the
// last batch's time plus a second, so that a batch that takes as long as
// the last one ends before the deadline, and at most half the deadline;
// half the deadline before any batch (the store's newest forget, if any,
// stands for the last batch at start).
func (q *queue) margin() time.Duration {
	if q.lastBatch == 0 {
		return q.s.opt.ForgetWithin / 2
	}
	return min(2*q.lastBatch+time.Second, q.s.opt.ForgetWithin/2)
}

// next returns the requests to serve now, or how long to sleep.
func (q *queue) next(now time.Time) ([]string, time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	sleep := time.Hour
	var eligible []string
	var oldest time.Time
	for _, r := range q.pending {
		if nb, ok := q.notBefore[r.Request]; ok && now.Before(nb) {
			sleep = min(sleep, nb.Sub(now))
			continue
		}
		if eligible == nil {
			oldest = r.Deadline
		}
		eligible = append(eligible, r.Request)
	}
	if len(eligible) == 0 {
		return nil, sleep
	}
	start := oldest.Add(-q.margin())
	if q.urgent {
		// Clients that ask to wait share a batch: an early one starts at
		// most every UrgentEvery.
		if e := q.lastEnd.Add(q.s.opt.UrgentEvery); e.Before(start) {
			start = e
		}
	}
	if now.Before(start) {
		return nil, min(sleep, start.Sub(now))
	}
	q.urgent = false
	if q.solo {
		return eligible[:1], 0
	}
	return eligible[:min(len(eligible), maxBatch)], 0
}

// run serves batches until ctx is cancelled; after Close it starts none.
func (q *queue) run(ctx context.Context) {
	for {
		batch, sleep := q.next(time.Now())
		select {
		case <-q.s.closing:
			batch = nil
			sleep = time.Hour
		default:
		}
		if batch != nil {
			q.serve(ctx, batch)
			continue
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-q.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// idle waits for the running batch, if any, to end; no batch starts after
// the service closes (run checks s.closing before each).
func (q *queue) idle() {
	q.batchMu.Lock()
	defer q.batchMu.Unlock()
	q.idled = true
}

// serve serves one batch: one store forget of the union of the requests'
// ids, whose transaction signs and stores every receipt.
func (q *queue) serve(ctx context.Context, batch []string) {
	q.batchMu.Lock()
	defer q.batchMu.Unlock()
	if q.idled { // closing: Close waited for the batches; none starts now
		return
	}
	select {
	case q.s.write <- struct{}{}:
	case <-ctx.Done():
		return
	}
	start := time.Now()
	o := store.ServeOptions{
		Forget:  q.s.opt.Forget,
		Toolkit: q.s.opt.Toolkit,
		Sign:    func(r *certify.Receipt) ([]byte, error) { return certify.SignReceipt(r, q.s.opt.Key) },
	}
	rep, err := q.s.st.ServeForgets(ctx, batch, o)
	if rep.Served == nil && budgetRefused(err) {
		// The ledger cannot pay for the approximate path's release: the
		// batch rolled back, and is served exactly instead (a replay
		// beyond the cap costs time, never the promise).
		q.s.log.Warn("deletion batch: the budget ledger refused the approximate path's release; serving the batch exactly", "requests", len(batch))
		o.Forget = store.ForgetOptions{}
		rep, err = q.s.st.ServeForgets(ctx, batch, o)
	}
	committed := rep.Served != nil
	if committed {
		if perr := q.s.publish(publishAll); perr != nil {
			q.s.log.Error("publishing after a deletion batch", "err", perr)
		}
	}
	<-q.s.write
	elapsed := time.Since(start)
	if !committed {
		q.failed(ctx, batch, err)
		return
	}
	if err != nil { // committed, but its VACUUM failed: the next batch's VACUUM removes the pages
		q.s.log.Error("deletion batch committed, VACUUM failed", "store_requests", storeRequests(rep), "err", err)
	}
	q.s.metrics.batch(rep, elapsed)
	if rep.Path() == store.PathApproximate {
		q.s.resolver.poke() // the policy's clock for this request starts now
	}
	q.s.log.Info("deletion batch served", "store_requests", storeRequests(rep), "requests", len(rep.Served),
		"path", string(rep.Path()), "ms", elapsed.Milliseconds())
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lastBatch, q.solo, q.lastErr, q.lastEnd = elapsed, false, "", time.Now()
	done := map[string]bool{}
	for _, r := range rep.Served {
		done[r.Request] = true
		q.remember(r)
		if ch, ok := q.waiters[r.Request]; ok {
			close(ch)
			delete(q.waiters, r.Request)
		}
		delete(q.notBefore, r.Request)
		delete(q.failures, r.Request)
		delete(q.filedBy, r.Request)
		if r.Served.After(r.Deadline) {
			q.s.metrics.deadlineMissed.Inc()
		}
	}
	q.served += len(rep.Served)
	kept := q.pending[:0]
	for _, r := range q.pending {
		if !done[r.Request] {
			kept = append(kept, r)
		}
	}
	q.pending = kept
	q.s.metrics.queued.Set(float64(len(q.pending)))
}

// storeRequests names the store requests that recorded a batch (one per
// queued request that had records left to forget), for the log: "7" or
// "7-9"; "none" when every record had been forgotten before.
func storeRequests(rep store.ServeReport) string {
	var first, last int64
	for _, f := range rep.Forgets {
		if f.Request == 0 {
			continue
		}
		if first == 0 {
			first = f.Request
		}
		last = f.Request
	}
	switch {
	case first == 0:
		return "none"
	case first == last:
		return strconv.FormatInt(first, 10)
	}
	return strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10)
}

// failed handles a batch that did not commit: its requests stay queued;
// a batch of several is retried one request at a time, and a request that
// fails alone waits (exponentially longer, up to maxBackoff) before its
// next try. Nothing is refused automatically: an acknowledged request is
// served or stays queued.
func (q *queue) failed(ctx context.Context, batch []string, err error) {
	if ctx.Err() != nil {
		return // shutting down: the transaction rolled back, the requests stay queued
	}
	q.s.metrics.batchFailures.Inc()
	msg := redactNumbers(err) // no id of a record being forgotten reaches the log
	q.s.log.Error("deletion batch failed; its requests stay queued", "requests", len(batch), "err", msg)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lastErr = msg
	if errors.Is(err, store.ErrNotQueued) || errors.Is(err, store.ErrUnknownRequest) {
		// Another process served or refused some: read the queue again.
		if pending, rerr := q.s.st.QueuedForgets(); rerr == nil {
			q.pending = pending
			return
		}
	}
	if len(batch) > 1 {
		q.solo = true
		return
	}
	n := q.failures[batch[0]] + 1
	q.failures[batch[0]] = n
	q.notBefore[batch[0]] = time.Now().Add(min(time.Duration(1<<min(n, 20))*time.Second, maxBackoff))
}

// remember keeps a served request in memory (up to keepRecent).
func (q *queue) remember(r store.QueuedForget) {
	q.recent[r.Request] = r
	q.order = append(q.order, r.Request)
	for len(q.order) > keepRecent {
		delete(q.recent, q.order[0])
		q.order = q.order[1:]
	}
}

// lookup returns what the service knows of a request in memory, and a
// channel closed when a queued one is served (nil otherwise).
func (q *queue) lookup(id string) (store.QueuedForget, bool, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r, ok := q.recent[id]; ok {
		return r, true, nil
	}
	for _, r := range q.pending {
		if r.Request == id {
			ch, ok := q.waiters[id]
			if !ok {
				ch = make(chan struct{})
				q.waiters[id] = ch
			}
			return r, true, ch
		}
	}
	return store.QueuedForget{}, false, nil
}

// stats is the queue's part of the status.
type queueStats struct {
	Queued       int     `json:"queued"`
	Served       int     `json:"served_since_start"`
	Oldest       string  `json:"oldest_received,omitempty"`
	NextDeadline string  `json:"next_deadline,omitempty"`
	ForgetWithin string  `json:"forget_within"`
	LastBatchMS  float64 `json:"last_batch_ms"`
	LastError    string  `json:"last_error,omitempty"`
}

func (q *queue) stats() queueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := queueStats{Queued: len(q.pending), Served: q.served, ForgetWithin: q.s.opt.ForgetWithin.String(),
		LastBatchMS: float64(q.lastBatch.Microseconds()) / 1000, LastError: q.lastErr}
	if len(q.pending) > 0 {
		st.Oldest = certify.ReceiptTime(q.pending[0].Received)
		next := q.pending[0].Deadline
		for _, r := range q.pending {
			if r.Deadline.Before(next) {
				next = r.Deadline
			}
		}
		st.NextDeadline = certify.ReceiptTime(next)
	}
	return st
}
