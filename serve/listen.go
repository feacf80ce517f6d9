package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"
)

// HTTPOptions are the HTTP server's settings: its timeouts for slow or
// stalled clients, TLS, and the grace period of a shutdown. Zero fields take
// the defaults below.
type HTTPOptions struct {
	// ReadHeaderTimeout bounds the reading of a request's headers (a
	// client that stalls there is disconnected). Defaults to 10 s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request, body included: a
	// client that stalls sending its body is answered 408. Defaults to
	// 60 s.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer. Defaults to WriteWait + LongPoll + 30 s, so that a
	// write waiting for the store or a long poll is answered in time.
	WriteTimeout time.Duration
	// IdleTimeout bounds an idle keep-alive connection. Defaults to 120 s.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request headers. Defaults to 64 KiB.
	MaxHeaderBytes int
	// TLSCert and TLSKey are PEM files; with both the service speaks HTTPS
	// only (TLS 1.2 or later).
	TLSCert, TLSKey string
	// ShutdownGrace is how long a shutdown waits for requests in flight
	// and a running deletion batch to finish before it cancels them (the
	// batch rolls back; its requests stay queued). Defaults to 30 s.
	ShutdownGrace time.Duration
}

// NewHTTPServer returns the http.Server of the service with o's timeouts.
func (s *Server) NewHTTPServer(o HTTPOptions) *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: orDefault(o.ReadHeaderTimeout, 10*time.Second),
		ReadTimeout:       orDefault(o.ReadTimeout, 60*time.Second),
		WriteTimeout:      orDefault(o.WriteTimeout, s.opt.WriteWait+s.opt.LongPoll+30*time.Second),
		IdleTimeout:       orDefault(o.IdleTimeout, 120*time.Second),
		MaxHeaderBytes:    max(o.MaxHeaderBytes, 64<<10),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
	}
}

// Serve answers requests on l until ctx is done (SIGTERM, in the command),
// then shuts down gracefully: it stops accepting, lets the requests in
// flight finish (an ingest commits or rolls back whole), stops the deletion
// queue (a running batch is given the rest of the grace period, then rolled
// back: queued requests stay queued) and returns. The store stays open.
func (s *Server) Serve(ctx context.Context, l net.Listener, o HTTPOptions) error {
	hs := s.NewHTTPServer(o)
	errc := make(chan error, 1)
	go func() {
		var err error
		if o.TLSCert != "" || o.TLSKey != "" {
			err = hs.ServeTLS(l, o.TLSCert, o.TLSKey)
		} else {
			err = hs.Serve(l)
		}
		errc <- err
	}()
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	grace := orDefault(o.ShutdownGrace, 30*time.Second)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.log.Info("shutting down", "grace", grace.String())
	// Long polls return at once, writes waiting for the store are
	// answered 503, writes in flight finish.
	s.closeStart()
	shutErr := hs.Shutdown(sctx)
	closeErr := s.Close(sctx)
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	s.logStopped(errors.Join(serveErr, shutErr, closeErr))
	return errors.Join(serveErr, shutErr, closeErr)
}

// logStopped writes the service's last line: that it has stopped, and what
// stays for the next start (the deletion requests still queued, the
// approximate deletions still pending their exact replay).
func (s *Server) logStopped(err error) {
	q := s.queue.stats()
	args := []any{"queued", q.Queued}
	if q.Queued > 0 {
		args = append(args, "oldest_received", q.Oldest, "next_deadline", q.NextDeadline)
	}
	if v := s.view.Load(); v != nil && len(v.status.Pending) > 0 {
		args = append(args, "approximate_pending", len(v.status.Pending))
	}
	if err != nil {
		args = append(args, "err", err)
	}
	msg := "stopped"
	if q.Queued > 0 {
		msg = "stopped; the queued deletion requests stay queued and are served after the next start"
	}
	s.log.Info(msg, args...)
}
