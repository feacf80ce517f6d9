package serve

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"unlearn/certify"
	"unlearn/store"
)

// forgetRequest is the body of POST /v1/forget.
type forgetRequest struct {
	// IDs and Keys name the records to forget (at least one of either).
	IDs  []int64  `json:"ids,omitempty"`
	Keys []string `json:"keys,omitempty"`
	// Nonce is the requester's secret for the commitment (64 hex digits);
	// without one the service draws it and returns it once.
	Nonce string `json:"nonce,omitempty"`
	// Wait asks the service to serve the queue at once rather than by the
	// deadline.
	Wait bool `json:"wait,omitempty"`
}

// forgetState is a deletion request's state, the answer of POST /v1/forget
// (202) and GET /v1/forget/{id}.
type forgetState struct {
	Request    string `json:"request"`
	State      string `json:"state"`
	Received   string `json:"received"`
	Deadline   string `json:"deadline"`
	Records    int    `json:"records"`
	Commitment string `json:"commitment"`
	// Nonce is returned once, by POST /v1/forget, when the service drew it.
	Nonce string `json:"nonce,omitempty"`
	// Secret is returned once, by POST /v1/forget: GET /v1/forget/{id}
	// answers only a caller who sends it (header Unlearn-Request-Secret).
	Secret string `json:"secret,omitempty"`
	Served string `json:"served,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Receipt is the signed receipt file (certify.SignReceipt), once served.
	Receipt json.RawMessage `json:"receipt,omitempty"`
	// Path is how a served request was served: exact, approximate or none
	// (every record forgotten before).
	Path string `json:"path,omitempty"`
	// Resolution, for a request served on the approximate path: "pending"
	// until the exact replay that resolves it (what the store keeps
	// meanwhile is the receipt's pending), then "resolved", with when and
	// by which store request.
	Resolution string `json:"resolution,omitempty"`
	Resolved   string `json:"resolved,omitempty"`
	ResolvedBy int64  `json:"resolved_by,omitempty"`
}

func stateOf(q store.QueuedForget) forgetState {
	f := forgetState{Request: q.Request, State: string(q.State), Received: certify.ReceiptTime(q.Received),
		Deadline: certify.ReceiptTime(q.Deadline), Records: q.Records, Commitment: q.Commitment, Reason: q.Reason}
	if !q.Served.IsZero() {
		f.Served = certify.ReceiptTime(q.Served)
	}
	if q.Receipt != nil {
		f.Receipt = json.RawMessage(q.Receipt)
	}
	if q.State == store.Served {
		f.Path = string(q.Path)
	}
	if q.Path == store.PathApproximate {
		f.Resolution = "pending"
		if q.ResolvedBy != 0 {
			f.Resolution, f.Resolved, f.ResolvedBy = "resolved", certify.ReceiptTime(q.Resolved), q.ResolvedBy
		}
	}
	return f
}

func (s *Server) postForget(w http.ResponseWriter, r *http.Request, c *call) error {
	var req forgetRequest
	if p := decodeBody(w, r, s.opt.MaxBody, &req); p != nil {
		return p
	}
	if len(req.IDs)+len(req.Keys) == 0 {
		return problem("unprocessable", "name at least one record: ids or keys").at("ids")
	}
	if n := len(req.IDs) + len(req.Keys); n > s.opt.MaxRows {
		return problem("too-many-rows", "the request names %d records; at most %d ids and keys a request (the service's limit): send several requests", n, s.opt.MaxRows).at("ids")
	}
	for i, k := range req.Keys {
		if p := checkKey(fmt.Sprintf("keys[%d]", i), k); p != nil {
			return p
		}
	}
	c.count = len(req.IDs) + len(req.Keys)
	drawn := req.Nonce == ""
	var nonce []byte
	if drawn {
		nonce = make([]byte, certify.NonceSize)
		if _, err := rand.Read(nonce); err != nil {
			return err
		}
	} else {
		var err error
		if nonce, err = hex.DecodeString(req.Nonce); err != nil || len(nonce) != certify.NonceSize {
			return problem("bad-request", "nonce: want %d random bytes as %d hex digits", certify.NonceSize, 2*certify.NonceSize).at("nonce")
		}
	}
	commitment := certify.ForgetCommitment(nonce, req.IDs, req.Keys)
	unlock, p := s.lockWrite(r.Context())
	if p != nil {
		return p
	}
	if p := s.queue.admit(c.caller.id); p != nil {
		unlock()
		return p
	}
	q, err := s.st.EnqueueForget(req.IDs, req.Keys, commitment, s.opt.ForgetWithin)
	if err == nil {
		s.queue.add(q, c.caller.id, req.Wait)
	}
	unlock()
	switch {
	case errors.Is(err, store.ErrUnknownID), errors.Is(err, store.ErrUnknownKey):
		return unknownRecord(err, req)
	case err != nil:
		return err
	}
	s.metrics.received.Inc()
	out := stateOf(q)
	if drawn {
		out.Nonce = hex.EncodeToString(nonce)
	}
	out.Secret = s.requestSecret(q.Request)
	w.Header().Set("Location", "/v1/forget/"+q.Request)
	return writeJSON(w, http.StatusAccepted, out)
}

var requestID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func (s *Server) getForget(w http.ResponseWriter, r *http.Request, c *call) error {
	id := r.PathValue("id")
	// One answer for an unknown request and a wrong or missing secret.
	notFound := problem("not-found", "no deletion request with this id and secret (send the secret returned when the request was filed, in the header %s)", RequestSecretHeader).at("id")
	if !requestID.MatchString(id) || !s.opt.Key.CheckCommit(requestSecretDomain, []byte(id), r.Header.Get(RequestSecretHeader)) {
		return notFound
	}
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		sec, err := strconv.ParseFloat(v, 64)
		if err != nil || !(sec >= 0) || sec > 1e6 {
			return problem("bad-request", "wait=%q: want a number of seconds ≥ 0", v).at("wait")
		}
		wait = min(time.Duration(sec*float64(time.Second)), s.opt.LongPoll)
	}
	q, ok, served := s.queue.lookup(id)
	if ok && served != nil && wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-served:
		case <-t.C:
		case <-s.closing:
			// The poll ends at once, so that it does not hold the
			// shutdown; the request stays queued for the next start.
			t.Stop()
			p := problem("shutting-down", "the service is shutting down; the request stays queued and is served after the restart, by its deadline or with the next batch a waiting filing starts")
			p.retryAfter = 5 * time.Second
			return p
		case <-r.Context().Done():
		}
		t.Stop()
		q, ok, _ = s.queue.lookup(id)
	}
	// A request served on the approximate path is read again while it is
	// pending: the resolution policy may have resolved it since.
	if !ok || q.Pending() {
		var err error
		if q, err = s.rd.ForgetRequest(id); errors.Is(err, store.ErrUnknownRequest) {
			return notFound
		} else if err != nil {
			return err
		}
	}
	c.count = q.Records
	return writeJSON(w, http.StatusOK, stateOf(q))
}

// RequestSecretHeader carries a deletion request's secret (returned once by
// POST /v1/forget) to GET /v1/forget/{id}.
const RequestSecretHeader = "Unlearn-Request-Secret"

const requestSecretDomain = "serve/forget-request-secret"

// requestSecret is the secret of a deletion request: a keyed commitment to
// its id under the certifier's key (sign.Secret.Commit), so that it needs
// no storage, survives restarts, and only the service can make it.
func (s *Server) requestSecret(id string) string {
	return s.opt.Key.Commit(requestSecretDomain, []byte(id))
}

// checkKey checks one key a request gives: not empty, at most MaxKeyBytes.
func checkKey(field, k string) *Problem {
	switch {
	case k == "":
		return problem("unprocessable", "%s is empty", field).at(field)
	case len(k) > MaxKeyBytes:
		return problem("unprocessable", "%s is %d bytes long; a key has at most %d bytes", field, len(k), MaxKeyBytes).at(field)
	}
	return nil
}

// unknownRecord is the one answer to a deletion request naming a record
// the store does not hold — never ingested, or already erased: it names
// the request's field, never whether the record ever existed or which
// request forgot it.
func unknownRecord(err error, req forgetRequest) *Problem {
	field := "ids"
	if errors.Is(err, store.ErrUnknownKey) {
		field = "keys"
	}
	return problem("unknown-record", "%s: a record named is not in the store (never ingested, or already forgotten); nothing was queued", field).at(field)
}

// digits matches runs of digits: a failed batch's error is logged with them
// replaced, so that no id of a record being forgotten reaches a log.
var digits = regexp.MustCompile(`[0-9]+`)

func redactNumbers(err error) string { return digits.ReplaceAllString(err.Error(), "#") }
