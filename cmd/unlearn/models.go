package main

import (
	"fmt"
	"os"

	"unlearn/certify"
	"unlearn/model"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// namedModel is a model a command applies to data: a store's current state
// or exact counterfactual, a snapshot, a release.
type namedModel struct {
	name string
	l    *olbfgs.Learner
	// hdr is the model's loss header (kind, d, λ).
	hdr stream.Header
	// contract is the model's data contract, nil when none is recorded.
	contract *model.Contract
	// same says the state is the previous model's, bit for bit (the exact
	// counterfactual of a store served exactly).
	same bool
}

// into returns how data is read into the model.
func (m namedModel) into(byPosition bool) intoModel {
	return intoModel{whose: "the model's", contract: m.contract, kind: m.hdr.Kind, byPosition: byPosition}
}

// apply returns the model for predictions and metrics.
func (m namedModel) apply() (*model.Model, error) {
	mm, err := model.New(m.l, m.contract)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.name, err)
	}
	return mm, nil
}

// releaseModel reads a release file (unlearn release, unlearn certify)
// given by --release.
func releaseModel(path string) (namedModel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return namedModel{}, err
	}
	r, err := certify.ParseRelease(b)
	if err != nil {
		return namedModel{}, flagError("release", "%s: %v", path, err)
	}
	l, err := r.Learner()
	if err != nil {
		return namedModel{}, flagError("release", "%s: %v", path, err)
	}
	return namedModel{name: "release " + path, l: l, hdr: r.Loss, contract: r.Contract}, nil
}

// snapshotModel reads a state snapshot given by --state.
func snapshotModel(path string) (namedModel, error) {
	l, h, err := readSnapshot(path)
	if err != nil {
		return namedModel{}, err
	}
	c, err := model.ContractOf(h)
	if err != nil {
		return namedModel{}, flagError("state", "%s: %v", path, err)
	}
	return namedModel{name: path, l: l, hdr: h, contract: c}, nil
}

// storeModels returns a store's current state and, if want, its exact
// counterfactual (the replay of the log without every forgotten sample).
func storeModels(dir string, counterfactual bool) ([]namedModel, error) {
	s, err := openStore(dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	h := s.Header()
	c, err := model.ContractOf(h)
	if err != nil {
		return nil, fmt.Errorf("the store's header: %w", err)
	}
	cur, err := s.State()
	if err != nil {
		return nil, err
	}
	out := []namedModel{{name: "current state", l: cur, hdr: h, contract: c}}
	if !counterfactual {
		return out, nil
	}
	// Each read is one snapshot of the store; the label "= current"
	// comes from comparing the two states, not from a third read
	// (a forget by another process in between would make it wrong).
	cf, err := s.Counterfactual()
	if err != nil {
		return nil, err
	}
	if !cf.Equal(cur) {
		return append(out, namedModel{name: "exact counterfactual", l: cf, hdr: h, contract: c}), nil
	}
	return append(out, namedModel{name: "exact counterfactual (= current)", l: cur, hdr: h, contract: c, same: true}), nil
}
