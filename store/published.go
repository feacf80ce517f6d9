package store

import (
	"context"
	"fmt"

	"unlearn/olbfgs"
)

// PublishedState returns the state every output derived from the model
// must come from — predictions, evaluations, a service's answers — and
// whether an approximate deletion is pending (the state needs noise).
//
// With no approximate deletion pending it is State. While one is, the
// stored state's w is the noised, certified w of the deletion's release,
// but the rest of a learner (the average of the iterates of
// olbfgs.Config.Average, its counters) still follows the un-noised
// trajectory: what is published is then, as certify publishes a noised
// release, a new learner of the store's configuration at that w alone,
// whose deployed parameters are w (olbfgs.Learner.Deployed). Nothing of
// the un-noised trajectory reaches an output.
func (s *Store) PublishedState() (*olbfgs.Learner, bool, error) {
	l, exact, err := s.stateExact()
	if err != nil {
		return nil, false, err
	}
	if exact {
		return l, false, nil
	}
	n, err := olbfgs.New(l.Config(), l.Loss())
	if err != nil {
		return nil, true, fmt.Errorf("store: the published state: %w", err)
	}
	n.SetW(l.W())
	return n, true, nil
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
