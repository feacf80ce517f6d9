package serve

import (
	"fmt"
	"time"

	"unlearn/store"
	"unlearn/stream"
)

// view is the published state of the store: what predictions, status and
// releases are served from. A writer (an ingest, a deletion batch, a
// release) builds a new view after its commit and publishes it with one
// atomic store; readers load the pointer and never wait for a writer. Every
// field of a view is of one committed state.
type view struct {
	at         time.Time
	kind       stream.Kind
	dim        int
	head       int64
	t          int
	predictor  Predictor
	predictErr error
	needsNoise bool                  // the state is an approximate deletion's noised one
	status     store.Status          // the full status at the last forget or start, adjusted by the ingests since
	releases   []store.StoredRelease // kept releases with their bytes, oldest first
}

// What publish reads from the store again.
const (
	publishState    = 1 << iota // the state (predictions, head): after an ingest
	publishStatus               // the full status: after a forget (its queries scan the log)
	publishReleases             // the kept releases: after a release or a forget
	publishAll      = publishState | publishStatus | publishReleases
)

// publish builds and publishes a new view, reading what changed from the
// store; the rest is carried over from the current view. It runs with the
// write lock held (or before the service starts), so that no write
// commits while it reads. ingested adjusts the counts after an ingest
// without a full status.
func (s *Server) publish(what int, ingested ...store.IngestResult) error {
	old := s.view.Load()
	v := &view{at: time.Now().UTC()}
	if old != nil {
		*v = *old
		v.at = time.Now().UTC()
	}
	if what&publishState != 0 {
		// The published state: while an approximate deletion is pending,
		// the noised state (store.Store.PublishedState).
		state, needsNoise, err := s.st.PublishedState()
		if err != nil {
			return fmt.Errorf("serve: publish: %w", err)
		}
		h := s.st.Header()
		v.kind, v.dim, v.t = h.Kind, h.D, state.T()
		v.predictor, v.predictErr = s.opt.Predictor(state, h)
		v.needsNoise = needsNoise
	}
	if what&publishStatus != 0 {
		st, err := s.st.Status()
		if err != nil {
			return fmt.Errorf("serve: publish: %w", err)
		}
		v.status = st
	}
	for _, r := range ingested {
		v.status.Events += r.Events
		v.status.Checkpoints += r.Checkpoints
		v.status.T += r.Events
		v.status.Head = r.Head
	}
	v.head = v.status.Head
	if what&publishReleases != 0 {
		list, err := s.st.Releases()
		if err != nil {
			return fmt.Errorf("serve: publish: %w", err)
		}
		v.releases = make([]store.StoredRelease, 0, len(list))
		for _, r := range list {
			full, err := s.st.GetRelease(r.ID)
			if err != nil {
				return fmt.Errorf("serve: publish: %w", err)
			}
			v.releases = append(v.releases, full)
		}
		v.status.Releases = len(v.releases)
	}
	s.view.Store(v)
	s.metrics.published(v)
	return nil
}
