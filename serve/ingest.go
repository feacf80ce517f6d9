package serve

import (
	"context"
	"io"
	"time"

	"unlearn/store"
	"unlearn/stream"
)

// maxGroup caps the events of one group commit.
const maxGroup = 20000

// ingestJob is one request's checked batch, waiting to be committed.
type ingestJob struct {
	b     *batch
	since time.Time
	done  chan ingestOutcome // buffered: the committer never waits for the handler
}

// ingestOutcome is a job's answer: its own events, head and checkpoints, or
// a problem (nothing of the job was written).
type ingestOutcome struct {
	res store.IngestResult
	err error
}

// ingest commits a checked batch and returns what was committed of it: the
// whole batch, or nothing and the reason. Batches that arrive while another
// write runs are committed together, in one transaction (a group commit):
// a commit's fsyncs are the largest fixed cost of a batch (docs/performance.md),
// and clients that send batches at once share them. A batch the group's
// transaction refuses is retried alone, so one request's duplicate id never
// fails another's; each request still commits whole or not at all.
func (s *Server) ingest(ctx context.Context, b *batch) (store.IngestResult, error) {
	j := &ingestJob{b: b, since: time.Now(), done: make(chan ingestOutcome, 1)}
	select {
	case s.ingests <- j:
	case <-s.closing:
		p := problem("shutting-down", "the service is shutting down; nothing was written: retry against its successor")
		p.retryAfter = 5 * time.Second
		return store.IngestResult{}, p
	case <-ctx.Done():
		return store.IngestResult{}, problem("timeout", "the request was cancelled before its batch was queued; nothing was written")
	}
	select {
	case out := <-j.done:
		return out.res, out.err
	case <-s.ingestDone:
		// The committer answers every job it takes before it stops.
		select {
		case out := <-j.done:
			return out.res, out.err
		default:
			p := problem("shutting-down", "the service is shutting down; nothing was written: retry against its successor")
			p.retryAfter = 5 * time.Second
			return store.IngestResult{}, p
		}
	}
}

// ingestLoop commits the queued batches, a group at a time, until ctx is
// cancelled (Close, after the HTTP server has drained its requests).
func (s *Server) ingestLoop(ctx context.Context) {
	defer close(s.ingestDone)
	for {
		var group []*ingestJob
		select {
		case <-ctx.Done():
			return
		case j := <-s.ingests:
			group = append(group, j)
		}
		n := len(group[0].b.events)
	drain:
		for n < maxGroup {
			select {
			case j := <-s.ingests:
				group = append(group, j)
				n += len(j.b.events)
			default:
				break drain
			}
		}
		s.commitGroup(group)
	}
}

// commitGroup takes the write lock (waiting at most WriteWait from the
// oldest job's arrival) and commits the group.
func (s *Server) commitGroup(group []*ingestJob) {
	wait := max(s.opt.WriteWait-time.Since(group[0].since), 0)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s.write <- struct{}{}:
	case <-t.C:
		p := problem("busy", "another write (a deletion batch's replay) held the store for %v; nothing was written: retry", s.opt.WriteWait)
		p.retryAfter = 5 * time.Second
		answerAll(group, p)
		return
	case <-s.closing:
		p := problem("shutting-down", "the service is shutting down; nothing was written: retry against its successor")
		p.retryAfter = 5 * time.Second
		answerAll(group, p)
		return
	}
	defer func() { <-s.write }()
	if err := s.numberRows(group); err != nil {
		answerAll(group, err)
		return
	}
	if len(group) > 1 {
		res, err := s.st.IngestEvents(&groupSource{jobs: group}, store.IngestOptions{SkipResolve: true})
		if err == nil {
			s.committed(group, res)
			return
		}
		// Refused whole (rolled back): commit each batch alone.
	}
	for _, j := range group {
		src := &source{b: j.b}
		res, err := s.st.IngestEvents(src, store.IngestOptions{SkipResolve: true})
		if err != nil {
			j.done <- ingestOutcome{err: s.ingestProblem(err, j.b, src.i-1)}
			continue
		}
		s.committed([]*ingestJob{j}, res)
	}
}

// numberRows gives ids to the batches sent without, above every id the
// store ever held.
func (s *Server) numberRows(group []*ingestJob) error {
	var next int64
	for _, j := range group {
		if j.b.hasIDs {
			continue
		}
		if next == 0 {
			var err error
			if next, err = s.st.NextID(); err != nil {
				return err
			}
		}
		if next > 1<<63-1-int64(len(j.b.events)) {
			return problem("conflict", "the store's ids reach 2⁶³−1: send ids with the rows")
		}
		for i := range j.b.events {
			j.b.events[i].ID = next + int64(i)
		}
		j.b.hasIDs = true
		next += int64(len(j.b.events))
	}
	return nil
}

// committed publishes the state after a transaction that committed the
// jobs' batches, in order, and answers each with its part.
func (s *Server) committed(group []*ingestJob, res store.IngestResult) {
	if err := s.publish(publishState, res); err != nil {
		s.log.Error("publishing after an ingest", "err", err)
	}
	k := int64(s.st.CheckpointEvery())
	head := res.Head - int64(res.Events) // the log position before the transaction
	for _, j := range group {
		n := int64(len(j.b.events))
		part := store.IngestResult{Events: int(n), Batches: 1, Head: head + n, LastID: j.b.events[n-1].ID,
			Checkpoints: int((head+n)/k - head/k)}
		head += n
		s.metrics.ingested(part)
		j.done <- ingestOutcome{res: part}
	}
	s.resolver.poke() // the resolution policy may count these events
}

func answerAll(group []*ingestJob, err error) {
	for _, j := range group {
		j.done <- ingestOutcome{err: err}
	}
}

// groupSource feeds the batches of a group to one store.IngestEvents, in
// order, with their keys.
type groupSource struct {
	jobs []*ingestJob
	j, i int
}

func (g *groupSource) Next() (stream.Event, error) {
	for g.j < len(g.jobs) && g.i == len(g.jobs[g.j].b.events) {
		g.j, g.i = g.j+1, 0
	}
	if g.j == len(g.jobs) {
		return stream.Event{}, io.EOF
	}
	g.i++
	return g.jobs[g.j].b.events[g.i-1], nil
}

func (g *groupSource) Key() string { return g.jobs[g.j].b.keys[g.i-1] }
