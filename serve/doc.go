// Package serve is the HTTP service over one model store (package store):
// a process that owns the store and answers JSON over HTTP — insert events,
// predictions, deletion requests answered with signed receipts, certified
// releases, status and metrics. It holds no science and no SQL of its own:
// it authenticates, decodes and checks requests, and calls store, certify
// and sign. `unlearn serve` runs it; docs/service.md walks through it and
// docs/openapi.json is its API (TestOpenAPIMatchesRoutes holds the two
// together).
//
// # Routes and errors
//
// The routes (Routes) use Go 1.22's method-and-path patterns of
// net/http.ServeMux, under /v1, plus /healthz and /metrics. Every route but
// /healthz needs a bearer token with the route's Scope (store.CreateToken
// keeps the token's SHA-256 only; the comparison is constant time). Every
// error, 404 and 405 included, is an RFC 9457 problem document
// (application/problem+json, Problem) naming the request member at fault;
// a handler's panic is a 500 problem, never a crash.
//
// # The deletion queue
//
// POST /v1/forget commits the request to the store's queue
// (store.EnqueueForget) and answers 202: the request survives a crash. One
// worker serves the queue in batches, each one store forget of the union of
// the requests' ids (store.ServeForgets), whose transaction signs every
// request's receipt (certify.SignReceipt) and erases the requests' ids from
// the queue. A batch starts early enough to end before the oldest deadline
// (Options.ForgetWithin), or at once when a client asks to wait. A batch
// that fails leaves its requests queued, retried one at a time.
//
// # Readers and writers
//
// Writes (ingest, the deletion batches, releases) take one write lock, a
// bounded wait. After each commit the writer publishes a view of the
// store — the state's predictor, the status, the kept releases — with one
// atomic store; predictions, status and releases are answered from it and
// never wait for a writer. Ingest batches that arrive while a commit runs
// are committed together in the next transaction (a group commit), each
// still whole or not at all.
//
// # Shutdown
//
// Server.Serve shuts down when its context is done: it stops accepting,
// lets the requests in flight finish, answers waiting writes 503, and gives
// a running deletion batch the grace period before cancelling it (its
// transaction rolls back; its requests stay queued).
package serve
