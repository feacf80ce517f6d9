package serve

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/noise"
	"unlearn/store"
)

// releaseRequest is the body of POST /v1/releases (as `unlearn release`).
type releaseRequest struct {
	// Epsilon and Delta are the privacy target (ε, δ). Required.
	Epsilon *float64 `json:"epsilon"`
	Delta   *float64 `json:"delta"`
	// Memory is the memory released with noise: "reset" (default) or
	// "rebuild".
	Memory string `json:"memory,omitempty"`
	// Calibration is "analytic" (default) or "classic".
	Calibration string `json:"calibration,omitempty"`
}

// releaseJSON is a kept release: its listing and, when asked for, the
// texts of its release file and certificate, byte for byte as `unlearn
// release` writes them (the certificate covers the release file's SHA-256:
// save the text as it is).
type releaseJSON struct {
	ID          int64   `json:"id"`
	Time        string  `json:"time"`
	Head        int64   `json:"head"`
	Path        string  `json:"path"`
	Exact       bool    `json:"exact"`
	Epsilon     float64 `json:"epsilon"`
	Delta       float64 `json:"delta"`
	File        string  `json:"release,omitempty"`
	Certificate string  `json:"certificate,omitempty"`
}

func releaseOf(r store.StoredRelease, files bool) releaseJSON {
	out := releaseJSON{ID: r.ID, Time: r.Time.UTC().Format(time.RFC3339Nano), Head: r.Head, Path: r.Path, Exact: r.Exact, Epsilon: r.Epsilon, Delta: r.Delta}
	if files {
		out.File, out.Certificate = string(r.File), string(r.Certificate)
	}
	return out
}

// postRelease publishes a certified release of the current state, as
// `unlearn release` does: certified by the store (exact, derived or
// diameter α), signed with the certifier's key, charged to the store's
// budget ledger first when noised (an exact release costs nothing), kept
// in the store, and returned with its certificate.
func (s *Server) postRelease(w http.ResponseWriter, r *http.Request, c *call) error {
	var req releaseRequest
	if p := decodeBody(w, r, s.opt.MaxBody, &req); p != nil {
		return p
	}
	if req.Epsilon == nil {
		return problem("unprocessable", "epsilon is required").at("epsilon")
	}
	if req.Delta == nil {
		return problem("unprocessable", "delta is required").at("delta")
	}
	spec := certify.Spec{Epsilon: *req.Epsilon, Delta: *req.Delta, Toolkit: s.opt.Toolkit}
	if req.Calibration == "" {
		req.Calibration = "analytic"
	}
	var err error
	if spec.Calibration, err = noise.ParseCalibration(req.Calibration); err != nil {
		return problem("unprocessable", "calibration %q: want analytic or classic", req.Calibration).at("calibration")
	}
	if req.Memory == "" {
		req.Memory = "reset"
	}
	if spec.Memory, err = certify.ParseMemoryPolicy(req.Memory); err != nil || spec.Memory == certify.Exact {
		return problem("unprocessable", "memory %q: want reset or rebuild", req.Memory).at("memory")
	}
	unlock, p := s.lockWrite(r.Context())
	if p != nil {
		return p
	}
	defer unlock()
	rel, err := s.st.Release(spec)
	if errors.Is(err, store.ErrPending) {
		return s.pendingProblem()
	}
	if err != nil {
		return releaseProblem(err)
	}
	if err := certify.Sign(rel.Certificate, s.opt.Key); err != nil {
		return err
	}
	if !rel.Certificate.Exact {
		if s.ledger == nil {
			return problem("not-certifiable", "a noised release is needed (an approximate deletion is pending) and the store has no budget ledger (%s): create one with unlearn budget --init", LedgerFile)
		}
		// Charged before anything is kept: a failure after this point
		// over-charges, never publishes uncharged.
		if _, err := s.ledger.Append(ledger.ReleaseOf(rel.Certificate)); err != nil {
			var le *ledger.Error
			if errors.Is(err, ledger.ErrBudget) && errors.As(err, &le) {
				return problem("budget-exceeded", "%v; nothing was published", err)
			}
			return err
		}
	}
	kept, err := s.st.Keep(rel)
	if err != nil {
		return err // ErrStaleRelease cannot happen: the write lock keeps forgets out
	}
	if err := s.publish(publishReleases); err != nil {
		s.log.Error("publishing after a release", "err", err)
	}
	s.metrics.released(rel.Certificate.Exact)
	c.count = 1
	w.Header().Set("Location", "/v1/releases/"+strconv.FormatInt(kept.ID, 10))
	return writeJSON(w, http.StatusCreated, releaseOf(kept, true))
}

// pendingProblem explains a release refused while an approximate deletion
// is pending (store.ErrPending): the state is the noised release that
// deletion published, continued on retained data, and that release is the
// one to serve; a new one would be a second guarantee at the diameter α,
// charged again. The problem names it (release, and the route to fetch).
func (s *Server) pendingProblem() *Problem {
	var rel int64
	for _, q := range s.view.Load().status.Pending {
		if q.Release > 0 {
			rel = q.Release
		}
	}
	const why = "an approximate deletion is pending its exact replay: the model is the noised release that deletion published, continued on retained data, and a new release of it would be a second guarantee charged again; nothing was published or charged"
	p := problem("deletion-pending", "%s", why)
	if rel > 0 {
		p = problem("deletion-pending", "%s: serve release %d (GET /v1/releases/%d), or wait for the exact replay, after which a release is exact", why, rel, rel)
		p.Release = rel
	}
	return p
}

// releaseProblem explains a release the store refused.
func releaseProblem(err error) error {
	var se *certify.SpecError
	switch {
	case errors.As(err, &se) && se.Field == "Config.Radius":
		return problem("not-certifiable", "a noised release is needed (an approximate deletion is pending) and the store's learner has no radius: no α is proved; serve deletions exactly (no replay cap) or create the store with --radius")
	case errors.As(err, &se):
		field := map[string]string{"Epsilon": "epsilon", "Delta": "delta", "Calibration": "calibration"}[se.Field]
		if field == "" {
			return problem("not-certifiable", "%v", err)
		}
		return problem("unprocessable", "%v", err).at(field)
	case errors.Is(err, certify.ErrNotCertifiable):
		return problem("not-certifiable", "%v", err)
	}
	return err
}

func (s *Server) getReleases(w http.ResponseWriter, r *http.Request, c *call) error {
	v := s.view.Load()
	out := struct {
		Releases []releaseJSON `json:"releases"`
	}{Releases: make([]releaseJSON, len(v.releases))}
	for i, rel := range v.releases {
		out.Releases[i] = releaseOf(rel, false)
	}
	c.count = len(out.Releases)
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) getRelease(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return problem("not-found", "no release %q (ids are integers)", r.PathValue("id")).at("id")
	}
	for _, rel := range s.view.Load().releases {
		if rel.ID == id {
			c.count = 1
			return writeJSON(w, http.StatusOK, releaseOf(rel, true))
		}
	}
	return problem("not-found", "no release %d is kept (never made, or erased by a deletion)", id).at("id")
}
