package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ProblemTypePrefix starts the type URI of every problem the service
// returns; docs/service.md lists the types.
const ProblemTypePrefix = "urn:unlearn:problem:"

// ProblemContentType is the media type of an error response (RFC 9457 §3).
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem details object: every error response of
// the service is one, with Content-Type application/problem+json. Field,
// when set, names the member of the request at fault as a JSON path
// ("rows[3][7]", "ids") or the parameter ("wait", "Authorization").
type Problem struct {
	// Type is ProblemTypePrefix followed by one of the kinds of problem
	// (bad-request, unauthorized, …).
	Type string `json:"type"`
	// Title is the short, fixed summary of the type; Detail says what
	// went wrong with this request.
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Instance is the request's path.
	Instance string `json:"instance,omitempty"`
	// Field is the request member or parameter at fault, if one is.
	Field string `json:"field,omitempty"`
	// Scope is the scope a token needs for the route (forbidden).
	Scope string `json:"scope,omitempty"`
	// Release is the kept release to serve instead (deletion-pending).
	Release int64 `json:"release,omitempty"`

	retryAfter time.Duration // 503: sets Retry-After
	allow      string        // 405: sets Allow
}

// problemKinds maps each problem kind to its status and title.
var problemKinds = map[string]struct {
	status int
	title  string
}{
	"bad-request":        {http.StatusBadRequest, "The request is malformed"},
	"unauthorized":       {http.StatusUnauthorized, "A valid bearer token is required"},
	"forbidden":          {http.StatusForbidden, "The token lacks the route's scope"},
	"not-found":          {http.StatusNotFound, "No such resource"},
	"method-not-allowed": {http.StatusMethodNotAllowed, "Method not allowed on this path"},
	"timeout":            {http.StatusRequestTimeout, "The request body was not received in time"},
	"conflict":           {http.StatusConflict, "The request conflicts with the store's contents"},
	"too-large":          {http.StatusRequestEntityTooLarge, "The request body is too large"},
	"unsupported-media":  {http.StatusUnsupportedMediaType, "The request body must be application/json"},
	"unprocessable":      {http.StatusUnprocessableEntity, "The request is well-formed but its content is refused"},
	"unknown-record":     {http.StatusUnprocessableEntity, "The request names a record the store does not hold"},
	"contract-mismatch":  {http.StatusUnprocessableEntity, "The rows do not fit the model's data contract"},
	"no-predictions":     {http.StatusConflict, "The store's loss makes no predictions"},
	"not-certifiable":    {http.StatusConflict, "No certified release can be made of the store's state"},
	"budget-exceeded":    {http.StatusConflict, "The release would exceed the privacy budget"},
	"deletion-pending":   {http.StatusConflict, "An approximate deletion is pending: serve the release it published"},
	"busy":               {http.StatusServiceUnavailable, "The store is busy with another write; retry"},
	"too-many-rows":      {http.StatusRequestEntityTooLarge, "The request carries more rows or records than the service accepts at once"},
	"rate-limited":       {http.StatusTooManyRequests, "Too many requests; retry later"},
	"queue-full":         {http.StatusTooManyRequests, "The deletion queue is full; retry later"},
	"shutting-down":      {http.StatusServiceUnavailable, "The service is shutting down"},
	"internal":           {http.StatusInternalServerError, "Internal error"},
}

// problem returns the problem of a kind with a detail.
func problem(kind, format string, args ...any) *Problem {
	k, ok := problemKinds[kind]
	if !ok {
		panic("serve: unknown problem kind " + kind)
	}
	return &Problem{Type: ProblemTypePrefix + kind, Title: k.title, Status: k.status, Detail: fmt.Sprintf(format, args...)}
}

// at sets the field at fault.
func (p *Problem) at(field string) *Problem { p.Field = field; return p }

// Error makes a *Problem an error, so that handlers can return one.
func (p *Problem) Error() string { return p.Title + ": " + p.Detail }

// write sends p as the response.
func (p *Problem) write(w http.ResponseWriter, r *http.Request) {
	if p.Instance == "" && r != nil {
		p.Instance = r.URL.Path
	}
	h := w.Header()
	h.Set("Content-Type", ProblemContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((p.retryAfter+time.Second-1)/time.Second)))
	}
	if p.allow != "" {
		h.Set("Allow", p.allow)
	}
	if p.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="unlearn"`)
	}
	b, err := json.Marshal(p)
	if err != nil { // cannot happen: strings and ints
		b = []byte(`{"type":"` + ProblemTypePrefix + `internal","title":"Internal error","status":500}`)
	}
	w.WriteHeader(p.Status)
	w.Write(append(b, '\n'))
}

// asProblem returns err as a *Problem, or nil.
func asProblem(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	return nil
}
