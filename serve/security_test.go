package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// routePath returns a concrete path of a route.
func routePath(r Route) string {
	p := strings.Replace(r.Path, "{id}", "0123456789abcdef0123456789abcdef", 1)
	if strings.HasPrefix(r.Path, "/v1/releases/") {
		p = "/v1/releases/1"
	}
	return p
}

// TestAuthEveryRoute: every route but /healthz refuses a request without a
// token, with a malformed header, with an unknown token and with a revoked
// one (401, with WWW-Authenticate), and with a token lacking its scope
// (403, naming the scope); a token with the scope gets past authentication.
func TestAuthEveryRoute(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	revoked, tok, err := f.st.CreateToken("revoked", []string{"ingest", "predict", "forget", "release", "read"})
	require.NoError(t, err)
	_, err = f.st.RevokeToken(tok.ID)
	require.NoError(t, err)
	f.waitTokens(func(tt *tokenTable) bool { _, ok := tt.lookup(revoked); return !ok && len(tt.tokens) == 6 })
	for _, r := range Routes() {
		path := routePath(r)
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			if r.Scope == "" {
				res := f.do(r.Method, path, "", nil)
				require.Equal(t, http.StatusOK, res.status, "no token needed")
				return
			}
			for name, tc := range map[string]struct {
				header string
				want   int
			}{
				"no token":     {"", http.StatusUnauthorized},
				"not bearer":   {"Basic dXNlcjpwYXNz", http.StatusUnauthorized},
				"empty bearer": {"Bearer ", http.StatusUnauthorized},
				"unknown":      {"Bearer unl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", http.StatusUnauthorized},
				"revoked":      {"Bearer " + revoked, http.StatusUnauthorized},
			} {
				req, err := http.NewRequest(r.Method, f.ts.URL+path, strings.NewReader("{}"))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				if tc.header != "" {
					req.Header.Set("Authorization", tc.header)
				}
				res, err := f.ts.Client().Do(req)
				require.NoError(t, err)
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				resp := response{status: res.StatusCode, header: res.Header, body: b}
				require.Equal(t, tc.want, res.StatusCode, "%s: %s", name, b)
				resp.problem(t)
				require.Equal(t, `Bearer realm="unlearn"`, res.Header.Get("WWW-Authenticate"), name)
			}
			for _, sc := range Scopes() {
				res := f.do(r.Method, path, f.tokens[string(sc)], "{}")
				if sc == r.Scope {
					require.NotContains(t, []int{401, 403}, res.status, "the route's own scope: %s", res.body)
					continue
				}
				require.Equal(t, http.StatusForbidden, res.status, "scope %s: %s", sc, res.body)
				p := res.problem(t)
				require.Equal(t, string(r.Scope), p.Scope)
			}
		})
	}
}

// waitTokens waits (at most 5 s) until the service's token table
// satisfies ok.
func (f *fixture) waitTokens(ok func(*tokenTable) bool) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(f.srv.tokens.Load()) {
		require.True(f.t, time.Now().Before(deadline), "the token table was not refreshed")
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBadRequests: malformed JSON, wrong types, NaN and infinities, numbers
// out of range, unknown fields, trailing data, a wrong media type, empty
// and oversize bodies, and contents the store refuses: each is a 4xx
// problem naming what is wrong, and nothing is written.
func TestBadRequests(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{MaxBody: 4096}})
	x, y := rows(5, 10, 3)
	f.ingest(x, y, seq(1, 10))
	big := `{"rows":[` + strings.Repeat("[0.5,0.5,0.5],", 400) + `[1,1,1]]}`
	type tc struct {
		route, body string
		status      int
		field       string // the problem's field, if any
		contentType string // default application/json
	}
	cases := map[string]tc{
		"malformed":           {"/v1/events", `{"rows": [[1,2`, 400, "", ""},
		"not an object":       {"/v1/predict", `[1,2,3]`, 400, "", ""},
		"wrong type":          {"/v1/events", `{"rows": "abc", "labels": [1]}`, 400, "rows", ""},
		"wrong inner type":    {"/v1/predict", `{"rows": [[1, "2", 3]]}`, 400, "rows", ""},
		"NaN":                 {"/v1/predict", `{"rows": [[NaN, 1, 2]]}`, 400, "", ""},
		"Infinity":            {"/v1/events", `{"rows": [[Infinity, 1, 2]], "labels": [1]}`, 400, "", ""},
		"overflow":            {"/v1/predict", `{"rows": [[1e999, 1, 2]]}`, 400, "rows", ""},
		"id not integer":      {"/v1/forget", `{"ids": [1.5]}`, 400, "ids", ""},
		"id out of range":     {"/v1/forget", `{"ids": [9223372036854775808]}`, 400, "ids", ""},
		"unknown field":       {"/v1/events", `{"rows": [[1,2,3]], "labels": [1], "extra": 1}`, 400, "extra", ""},
		"trailing":            {"/v1/predict", `{"rows": [[1,2,3]]} {}`, 400, "", ""},
		"empty":               {"/v1/releases", ``, 400, "", ""},
		"media type":          {"/v1/predict", `{"rows": [[1,2,3]]}`, 415, "Content-Type", "text/plain"},
		"oversize":            {"/v1/predict", big, 413, "", ""},
		"dimension":           {"/v1/predict", `{"rows": [[1,2]]}`, 422, "rows[0]", ""},
		"no rows":             {"/v1/predict", `{"rows": []}`, 422, "rows", ""},
		"label":               {"/v1/events", `{"rows": [[1,2,3]], "labels": [0], "ids": [100]}`, 422, "labels[0]", ""},
		"labels count":        {"/v1/events", `{"rows": [[1,2,3]], "labels": [1, 1]}`, 422, "labels", ""},
		"rows and events":     {"/v1/events", `{"rows": [[1,2,3]], "labels": [1], "events": []}`, 400, "", ""},
		"delete event":        {"/v1/events", `{"events": [{"op": "delete", "id": 3}]}`, 422, "events[0].op", ""},
		"event of other loss": {"/v1/events", `{"events": [{"op": "insert", "id": 50, "a": [1,2,3], "alpha": 0.5}]}`, 400, "events[0].", ""},
		"duplicate id":        {"/v1/events", `{"rows": [[1,2,3],[1,2,3]], "labels": [1,1], "ids": [11, 3]}`, 409, "ids[1]", ""},
		"unknown forget id":   {"/v1/forget", `{"ids": [999]}`, 422, "ids", ""},
		"unknown forget key":  {"/v1/forget", `{"keys": ["nobody@example.com"]}`, 422, "keys", ""},
		"forget nothing":      {"/v1/forget", `{}`, 422, "ids", ""},
		"bad nonce":           {"/v1/forget", `{"ids": [1], "nonce": "xyz"}`, 400, "nonce", ""},
		"negative epsilon":    {"/v1/releases", `{"epsilon": -1, "delta": 1e-5}`, 422, "epsilon", ""},
		"no delta":            {"/v1/releases", `{"epsilon": 1}`, 422, "delta", ""},
		"memory":              {"/v1/releases", `{"epsilon": 1, "delta": 1e-5, "memory": "exact"}`, 422, "memory", ""},
		"rows_f64 no cols":    {"/v1/predict", `{"rows_f64": "AAAAAAAA8D8AAAAAAADwPwAAAAAAAPA/"}`, 422, "cols", ""},
		"rows_f64 cols":       {"/v1/predict", `{"rows_f64": "AAAAAAAA8D8AAAAAAADwPwAAAAAAAPA/", "cols": 1}`, 422, "cols", ""},
		"rows_f64 length":     {"/v1/events", `{"rows_f64": "AAAAAAAA8D8AAAAAAADwPw==", "cols": 3, "labels": [1]}`, 422, "rows_f64", ""},
		"rows_f64 not base64": {"/v1/predict", `{"rows_f64": "%%%", "cols": 3}`, 400, "rows_f64", ""},
		"rows and rows_f64":   {"/v1/predict", `{"rows": [[1,2,3]], "rows_f64": "AAAAAAAA8D8AAAAAAADwPwAAAAAAAPA/", "cols": 3}`, 400, "rows_f64", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest("POST", f.ts.URL+c.route, strings.NewReader(c.body))
			require.NoError(t, err)
			ct := c.contentType
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Authorization", "Bearer "+f.tokens["all"])
			res, err := f.ts.Client().Do(req)
			require.NoError(t, err)
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			resp := response{status: res.StatusCode, header: res.Header, body: b}
			require.Equal(t, c.status, res.StatusCode, "%s", b)
			p := resp.problem(t)
			if c.field != "" {
				require.True(t, strings.HasPrefix(p.Field, c.field), "field %q, want %q (%s)", p.Field, c.field, p.Detail)
			}
		})
	}
	st, err := f.st.Status()
	require.NoError(t, err)
	require.Equal(t, 10, st.Events, "nothing written by a refused request")
	q, err := f.st.QueuedForgets()
	require.NoError(t, err)
	require.Empty(t, q)
	require.Zero(t, st.Releases)
}

// TestStalledClient: a client that stops sending its body is answered 408
// with a problem once the server's read timeout passes, and one that stops
// in its headers is disconnected; neither holds the store.
func TestStalledClient(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- f.srv.Serve(ctx, l, HTTPOptions{ReadTimeout: 300 * time.Millisecond, ReadHeaderTimeout: 300 * time.Millisecond, ShutdownGrace: 5 * time.Second})
	}()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	conn, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"rows\": [[1,", f.tokens["ingest"])
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusRequestTimeout, res.StatusCode, "%s", b)
	require.Equal(t, ProblemContentType, res.Header.Get("Content-Type"))

	conn2, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer conn2.Close()
	fmt.Fprintf(conn2, "GET /v1/status HTTP/1.1\r\nHost: x\r\n") // and nothing more
	conn2.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn2)
	require.NoError(t, err, "the server closes the connection")
	require.Less(t, time.Since(start), 5*time.Second)

	// The store was never held: a write goes through at once.
	x, y := rows(6, 2, 3)
	r := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x, "labels": y})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

// TestNotFoundAndMethods: unknown paths and methods are problems too (404,
// 405 with Allow), and so is an unknown request or release.
func TestNotFoundAndMethods(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	res := f.do("GET", "/v2/status", f.tokens["all"], nil)
	require.Equal(t, http.StatusNotFound, res.status)
	res.problem(t)
	res = f.do("DELETE", "/v1/events", f.tokens["all"], nil)
	require.Equal(t, http.StatusMethodNotAllowed, res.status)
	res.problem(t)
	require.Equal(t, "POST", res.header.Get("Allow"))
	for _, p := range []string{"/v1/forget/0123456789abcdef0123456789abcdef", "/v1/forget/..%2f", "/v1/forget/xyz", "/v1/releases/7", "/v1/releases/x"} {
		res = f.do("GET", p, f.tokens["all"], nil)
		require.Equal(t, http.StatusNotFound, res.status, p)
		res.problem(t)
	}
}

// FuzzRequests: whatever the body, every route answers without a 5xx and
// every error is a problem document. (go test runs the seeds; go test
// -fuzz FuzzRequests explores.)
func FuzzRequests(f *testing.F) {
	for _, s := range []string{`{}`, `{"rows":[[1,2,3]],"labels":[1]}`, `{"events":[{"op":"insert","id":1,"x":[1,2,3],"y":1}]}`,
		`{"ids":[1],"keys":["a"],"wait":true}`, `{"epsilon":1,"delta":1e-5,"memory":"rebuild"}`, `{"rows":[[1e308,1e308,1e308]]}`,
		`{"events":[{"op":"insert","x":[1,2,3],"y":-1,"key":""}]}`, "\x00\xff", `{"rows":null}`, `{"ids":[-9223372036854775808]}`} {
		for i := range 4 {
			f.Add(uint8(i), s)
		}
	}
	fx := newFixture(f, fixtureOptions{opt: Options{MaxBody: 1 << 16, ForgetWithin: time.Hour}})
	x, y := rows(7, 5, 3)
	fx.ingest(x, y, seq(1, 5))
	paths := []string{"/v1/events", "/v1/predict", "/v1/forget", "/v1/releases"}
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		fx.t = t
		res := fx.do("POST", paths[int(route)%len(paths)], fx.tokens["all"], body)
		require.Less(t, res.status, 500, "%s", res.body)
		if res.status >= 400 {
			res.problem(t)
		}
	})
}

// TestAccessLogHoldsNoRecords: the access log has a line per request with
// the token's number and the count of rows, and never a payload value, an
// id, a key, a nonce or a token.
func TestAccessLogHoldsNoRecords(t *testing.T) {
	var buf syncBuffer
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour, Log: slog.New(slog.NewTextHandler(&buf, nil))}})
	x := [][]float64{{0.123456789, -0.987654321, 0.5551212}}
	res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x, "labels": []float64{1}, "ids": []int64{987654}, "keys": []string{"secret.person@example.org"}})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	res = f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"keys": []string{"secret.person@example.org"}, "nonce": strings.Repeat("ab", 32), "wait": true})
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
	var st forgetState
	res.json(t, &st)
	f.waitServed(st.Request)
	f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": []int64{424242}}) // refused: unknown id
	log := buf.String()
	require.Contains(t, log, `route="POST /v1/events"`)
	require.Contains(t, log, "count=1")
	for _, secret := range []string{"0.123456789", "987654", "secret.person", strings.Repeat("ab", 32), "424242",
		f.tokens["ingest"][4:], f.tokens["forget"][4:]} {
		require.NotContains(t, log, secret)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReadersDoNotWaitForWriters: while a write holds the store (here the
// write lock, held by the test), predictions, status and releases are
// answered at once from the published state, and a write is answered 503
// with Retry-After after WriteWait, nothing written.
func TestReadersDoNotWaitForWriters(t *testing.T) {
	f := newFixture(t, fixtureOptions{opt: Options{WriteWait: 300 * time.Millisecond}})
	x, y := rows(9, 10, 3)
	f.ingest(x, y, seq(1, 10))
	f.srv.write <- struct{}{} // a long write
	start := time.Now()
	for _, r := range []struct{ method, path, scope string }{
		{"POST", "/v1/predict", "predict"}, {"GET", "/v1/status", "read"}, {"GET", "/v1/releases", "read"}, {"GET", "/metrics", "read"},
	} {
		var body any
		if r.method == "POST" {
			body = map[string]any{"rows": x[:2]}
		}
		res := f.do(r.method, r.path, f.tokens[r.scope], body)
		require.Equal(t, http.StatusOK, res.status, "%s %s: %s", r.method, r.path, res.body)
	}
	require.Less(t, time.Since(start), 250*time.Millisecond, "the reads did not wait for the writer")
	res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[:1], "labels": y[:1], "ids": []int64{11}})
	require.Equal(t, http.StatusServiceUnavailable, res.status, "%s", res.body)
	require.Equal(t, "busy", strings.TrimPrefix(res.problem(t).Type, ProblemTypePrefix))
	require.NotEmpty(t, res.header.Get("Retry-After"))
	<-f.srv.write
	st, err := f.st.Status()
	require.NoError(t, err)
	require.Equal(t, 10, st.Events, "nothing written by the refused batch")
}

// TestTLS: with a certificate the service speaks HTTPS only.
func TestTLS(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, l, HTTPOptions{TLSCert: certFile, TLSKey: keyFile}) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	res, err := c.Get("https://" + l.Addr().String() + "/healthz")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, uint16(tls.VersionTLS13), res.TLS.Version)
	res, err = http.Get("http://" + l.Addr().String() + "/healthz")
	if err == nil {
		res.Body.Close()
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "plain HTTP to an HTTPS port")
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (string, string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "unlearn test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
