package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Route is one route of the service: a method and a path pattern (Go 1.22
// ServeMux syntax, "{id}" a path segment) and the scope a token needs for
// it ("" for none).
type Route struct {
	Method, Path string
	Scope        Scope
	// Summary says what the route does (the OpenAPI document's summary).
	Summary string
}

// route is a Route with its handler.
type route struct {
	Route
	handle func(s *Server, w http.ResponseWriter, r *http.Request, c *call) error
}

// routes is the service's API. docs/openapi.json describes exactly these
// (TestOpenAPIMatchesRoutes).
var routes = []route{
	{Route{"POST", "/v1/events", ScopeIngest, "Append a batch of insert events and train on them"}, (*Server).postEvents},
	{Route{"POST", "/v1/predict", ScopePredict, "Predict labels and class probabilities of rows"}, (*Server).postPredict},
	{Route{"POST", "/v1/forget", ScopeForget, "File a deletion request (answered once it is durably queued)"}, (*Server).postForget},
	{Route{"GET", "/v1/forget/{id}", ScopeForget, "A deletion request's state and, once served, its signed receipt"}, (*Server).getForget},
	{Route{"POST", "/v1/releases", ScopeRelease, "Publish a certified release of the model, charged to the budget"}, (*Server).postRelease},
	{Route{"GET", "/v1/releases", ScopeRead, "The releases kept in the store"}, (*Server).getReleases},
	{Route{"GET", "/v1/releases/{id}", ScopeRead, "One kept release with its file and certificate"}, (*Server).getRelease},
	{Route{"GET", "/v1/contract", ScopeRead, "The model's data contract: the rows, labels and classes ingest and predict take"}, (*Server).getContract},
	{Route{"GET", "/v1/status", ScopeRead, "The store, the deletion queue and the budget"}, (*Server).getStatus},
	{Route{"GET", "/metrics", ScopeRead, "Prometheus metrics (text format)"}, (*Server).getMetrics},
	{Route{"GET", "/healthz", "", "Liveness: 200 while the service runs (no token)"}, (*Server).getHealth},
}

// Routes returns the service's routes, in the order of the documentation.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, r := range routes {
		out[i] = r.Route
	}
	return out
}

// call is what the middleware and a handler share about one request.
type call struct {
	caller caller
	route  *route
	// count is the number of rows, records or ids the request carried
	// (logged as a count: never their values).
	count int
}

// Handler returns the service's HTTP handler: the routes, a JSON problem
// for every other path (404) and method (405), authentication, an access
// log line and metrics per request, and a 500 problem (never a crash) for
// a panic in a handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	for i := range routes {
		rt := &routes[i]
		mux.Handle(rt.Method+" "+rt.Path, s.wrap(rt))
		methods[rt.Path] = append(methods[rt.Path], rt.Method)
	}
	for path, ms := range methods {
		if slices.Contains(ms, "GET") {
			ms = append(ms, "HEAD")
		}
		allow := strings.Join(ms, ", ")
		mux.Handle(path, s.wrap(&route{Route: Route{Path: path}, handle: func(_ *Server, _ http.ResponseWriter, r *http.Request, _ *call) error {
			p := problem("method-not-allowed", "%s %s: this path accepts %s", r.Method, r.URL.Path, allow)
			p.allow = allow
			return p
		}}))
	}
	mux.Handle("/", s.wrap(&route{Route: Route{Path: "/"}, handle: func(_ *Server, _ http.ResponseWriter, r *http.Request, _ *call) error {
		return problem("not-found", "no route %s %s (the API is under /v1: see docs/openapi.json)", r.Method, r.URL.Path)
	}}))
	return mux
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrap is the middleware of one route: recover, authenticate, handle,
// answer an error as a problem, log, count.
func (s *Server) wrap(rt *route) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := &statusWriter{ResponseWriter: rw}
		c := &call{route: rt}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "route", rt.Method+" "+rt.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if w.status == 0 {
					problem("internal", "the request could not be served; the error is in the service's log").write(w, r)
				}
			}
			s.accessLog(r, w, c, time.Since(start))
		}()
		var err error
		if rt.Scope != "" {
			var p *Problem
			c.caller, p = s.authenticate(r, rt.Scope)
			if p != nil {
				err = p
			}
		}
		if err == nil {
			err = rt.handle(s, w, r, c)
		}
		if err != nil && w.status == 0 {
			p := asProblem(err)
			if p == nil {
				s.log.Error("request failed", "route", rt.Method+" "+rt.Path, "token", c.caller.id, "err", err)
				p = problem("internal", "the request could not be served; the error is in the service's log")
			}
			p.write(w, r)
		}
	})
}

// accessLog writes one line per request: who (the token's number and
// name), what (the method, the route's pattern and the path), the outcome
// and its size, and how many rows or records the request carried — never
// a payload, an id, a key or a token.
func (s *Server) accessLog(r *http.Request, w *statusWriter, c *call, d time.Duration) {
	pattern := r.Pattern
	if pattern == "" {
		pattern = c.route.Method + " " + c.route.Path
	}
	s.log.Info("access",
		"remote", r.RemoteAddr, "token", c.caller.id, "token_name", c.caller.name,
		"method", r.Method, "route", pattern, "path", r.URL.Path,
		"status", w.status, "bytes", w.bytes, "count", c.count, "ms", float64(d.Microseconds())/1000)
	s.metrics.request(pattern, w.status, d)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	if err != nil {
		return nil // the client went away; nothing to answer
	}
	return nil
}

func (s *Server) getHealth(w http.ResponseWriter, r *http.Request, _ *call) error {
	select {
	case <-s.closing:
		return problem("shutting-down", "the service is shutting down")
	default:
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
