package store

import (
	"context"

	"unlearn/olbfgs"
)

// PublishedState returns the state every output derived from the model
// must come from — predictions, evaluations, a service's answers — and
// whether an approximate deletion is pending (the state needs noise).
//
// It is the stored state. While an approximate deletion is pending that
// state holds only what the deletion's noised release and public counts
// determine: the approximate forget replaced w, the average of the
// iterates and the progress statistics by the release's (noisedState;
// TestNoisedStateHoldsOnlyPublic), and everything learnt since is a
// function of it and of inserts that are not deleted. So every output is
// a post-processing of the certified release, and the counters (the
// insert count a service reports) stay the store's.
func (s *Store) PublishedState() (*olbfgs.Learner, bool, error) {
	l, exact, err := s.stateExact()
	if err != nil {
		return nil, false, err
	}
	return l, !exact, nil
}

// stateExact is State with whether the state is exact, of one read.
func (s *Store) stateExact() (*olbfgs.Learner, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, false, ErrClosed
	}
	if err := s.readTx(context.Background(), nil); err != nil {
		return nil, false, err
	}
	if err := s.usable(); err != nil {
		return nil, false, err
	}
	return s.state.Clone(), s.exact, nil
}
