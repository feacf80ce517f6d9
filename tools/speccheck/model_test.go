package speccheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"unlearn/certify"
	"unlearn/dataset"
	"unlearn/model"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// makeModelOutputs adds the documents of a model in use: releases that
// carry a data contract (CSV, IDX, LIBSVM), evaluations (unlearn evaluate
// --json) and predictions (unlearn predict --json).
func makeModelOutputs(o *outputs, dir string) error {
	const d = 3
	loss, err := stream.NewLogistic(d, 0.05)
	if err != nil {
		return err
	}
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.Radius, cfg.SampleBound = 3, 4, 1
	var events []stream.Event
	for i := 1; i <= 40; i++ {
		x := []float64{float64(i%5) / 10, -float64(i%3) / 10, float64(i%7) / 14}
		y := 1.0
		if x[0]+x[1] < 0.05 {
			y = -1
		}
		events = append(events, stream.InsertEvent(int64(i), x, y))
	}
	state, err := olbfgs.Replay(cfg, loss, events)
	if err != nil {
		return err
	}
	// Releases of the same state under headers that record a data source,
	// as package dataset writes them.
	for i, src := range []struct {
		name     string
		source   dataset.Source
		features []string
	}{
		{"contract csv", dataset.Source{File: "patients.csv", Format: dataset.CSV, Label: "outcome", ID: "name", Exclude: []string{"notes"}, Classes: []string{"well", "sick"}}, []string{"age", "dose", "weight"}},
		{"contract idx", dataset.Source{File: "t-images-idx3-ubyte", Format: dataset.IDX, Classes: []string{"0", "6"}, Scale: 255, Shape: []int{1, 3}}, nil},
		{"contract libsvm", dataset.Source{File: "heart_scale", Format: dataset.LIBSVM}, nil},
	} {
		h := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: 0.05}
		if err := h.SetMeta(dataset.MetaSource, src.source); err != nil {
			return err
		}
		if src.features != nil {
			if err := h.SetMeta(dataset.MetaFeatures, src.features); err != nil {
				return err
			}
		}
		rel, cert, err := certify.Certify(state, certify.Spec{Epsilon: 1, Delta: 1e-5, Header: &h,
			Sampler: noise.NewSeededSampler(uint64(100+i), noise.SamplerOptions{})})
		if err != nil {
			return fmt.Errorf("%s: %w", src.name, err)
		}
		if rel.Contract == nil {
			return fmt.Errorf("%s: no contract", src.name)
		}
		b, err := rel.Marshal()
		if err != nil {
			return err
		}
		if _, err := certify.Verify(cert, b, nil); err != nil {
			return fmt.Errorf("%s: verify: %w", src.name, err)
		}
		o.releases[src.name] = b
		if o.certificates[src.name], err = cert.MarshalIndent(); err != nil {
			return err
		}
	}

	// Evaluations and predictions of a classifier named as a CSV's, read
	// from a CSV with string ids, and of a regression on a stream.
	name := filepath.Join(dir, "patients.csv")
	var csv strings.Builder
	csv.WriteString("name,age,dose,weight,outcome\n")
	for i, e := range events {
		y := "well"
		if e.Sample.S > 0 {
			y = "sick"
		}
		fmt.Fprintf(&csv, "p%d,%g,%g,%g,%s\n", i, e.Sample.V[0], e.Sample.V[1], e.Sample.V[2], y)
	}
	if err := os.WriteFile(name, []byte(csv.String()), 0o644); err != nil {
		return err
	}
	opts := dataset.Options{Label: "outcome", ID: "name", Classes: []string{"well", "sick"}}
	hdr, r, err := dataset.Open(name, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	c, err := model.ContractOf(hdr)
	if err != nil {
		return err
	}
	clf, err := model.New(state, c)
	if err != nil {
		return err
	}
	ev, err := model.Evaluate(clf, r)
	if err != nil {
		return err
	}
	// Rows of one class: no AUC, a class without rows (recall null).
	var sick []stream.Event
	for _, e := range events {
		if e.Sample.S > 0 {
			sick = append(sick, e)
		}
	}
	evOne, err := model.Evaluate(clf, &sliceRows{events: sick})
	if err != nil {
		return err
	}
	rloss, err := stream.NewRegression(d, 0.1)
	if err != nil {
		return err
	}
	rstate, err := olbfgs.Replay(olbfgs.DefaultConfig(d), rloss, events)
	if err != nil {
		return err
	}
	reg, err := model.New(rstate, nil)
	if err != nil {
		return err
	}
	evReg, err := model.Evaluate(reg, &sliceRows{events: events})
	if err != nil {
		return err
	}
	rep := model.Report{Format: model.ReportFormat, Data: "heldout.csv", Models: []model.ModelReport{
		{Model: "current state", NormW: 1.5, Evaluation: *ev},
		{Model: "release r.json", NormW: 1.25, Evaluation: *evOne, Sigma: 0.5, NoiseOnScores: ptrSpread(evOne.NoiseOnScores(0.5))},
	}}
	if o.evaluations["classifier"], err = json.MarshalIndent(rep, "", "  "); err != nil {
		return err
	}
	rep = model.Report{Format: model.ReportFormat, Data: "heldout.jsonl", Models: []model.ModelReport{
		{Model: "state.json", NormW: 0.5, Evaluation: *evReg},
		{Model: "quadratic.json", NormW: 0.5, Evaluation: model.Evaluation{N: 40, Loss: 0.25}},
	}}
	if o.evaluations["regression"], err = json.MarshalIndent(rep, "", "  "); err != nil {
		return err
	}

	unlabeled := opts
	unlabeled.Unlabeled = true
	_, ur, err := dataset.Open(name, unlabeled)
	if err != nil {
		return err
	}
	defer ur.Close()
	var b bytes.Buffer
	if _, err := model.WritePredictions(&b, clf, ur, model.Output{JSON: true}); err != nil {
		return err
	}
	o.predictions["classifier"] = b.Bytes()
	var rb bytes.Buffer
	if _, err := model.WritePredictions(&rb, reg, &sliceRows{events: events}, model.Output{JSON: true}); err != nil {
		return err
	}
	o.predictions["regression"] = rb.Bytes()
	return nil
}

// sliceRows is a model.Rows over events.
type sliceRows struct {
	events []stream.Event
	i      int
}

func (s *sliceRows) Next() (stream.Event, error) {
	if s.i == len(s.events) {
		return stream.Event{}, io.EOF
	}
	s.i++
	return s.events[s.i-1], nil
}

func ptrSpread(s model.Spread) *model.Spread { return &s }
