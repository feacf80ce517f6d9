package serve

import (
	"net/http"

	"unlearn/model"
)

// contractJSON is the answer of GET /v1/contract: what rows and labels
// POST /v1/events and POST /v1/predict take.
type contractJSON struct {
	// Kind, D and K are the loss's kind, dimension and number of classes
	// (multinomial only).
	Kind string `json:"kind"`
	D    int    `json:"d"`
	K    int    `json:"k,omitempty"`
	// Classes are the labels ingest takes and predict answers, in the
	// data's class names and the order of the probabilities (for a store
	// whose contract names none, "-1" and "1", or "0" … "K−1"); null when
	// labels are numbers (regression, quadratic).
	Classes []string `json:"classes"`
	// Source is the store's data contract (model.Contract): the data's
	// format, the CSV's feature columns in the order of a row, an IDX
	// image's shape and the scale its pixels are divided by, the classes
	// as recorded; null for a store made without a data file, whose rows
	// are the stream's own values.
	Source *model.Contract `json:"source"`
}

func (s *Server) getContract(w http.ResponseWriter, _ *http.Request, _ *call) error {
	h := s.st.Header()
	out := contractJSON{Kind: string(h.Kind), D: h.D, K: h.K, Classes: s.raw.Classes(), Source: s.contract}
	return writeJSON(w, http.StatusOK, out)
}
