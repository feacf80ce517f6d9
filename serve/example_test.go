package serve_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"unlearn/olbfgs"
	"unlearn/serve"
	"unlearn/sign"
	"unlearn/store"
	"unlearn/stream"
)

// A service over a new store: a token with two scopes, one batch of rows,
// a prediction, and a request without a token.
func Example() {
	dir, _ := os.MkdirTemp("", "serve-example-")
	defer os.RemoveAll(dir)
	st, _ := store.Create(dir, store.Config{
		Header:  stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 2, Lambda: 0.05},
		Learner: olbfgs.DefaultConfig(2),
	})
	defer st.Close()
	token, _, _ := st.CreateToken("example", []string{"ingest", "predict"})
	key, _ := sign.Generate()
	srv, _ := serve.New(st, serve.Options{Key: key, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer srv.Close(context.Background())
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	post := func(path, body, token string) {
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		fmt.Printf("%d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	post("/v1/events", `{"rows": [[1, 0], [0, 1], [1, 1]], "labels": [1, -1, 1]}`, token)
	post("/v1/predict", `{"rows": [[0, 0]]}`, token)
	post("/v1/status", `{}`, "")
	// Output:
	// 200 application/json {"events":3,"head":3,"checkpoints":0,"ids":[1,2,3]}
	// 200 application/json {"classes":["-1","1"],"predictions":["1"],"probabilities":[[0.5,0.5]],"head":3,"noised":false}
	// 405 application/problem+json {"type":"urn:unlearn:problem:method-not-allowed","title":"Method not allowed on this path","status":405,"detail":"POST /v1/status: this path accepts GET, HEAD","instance":"/v1/status"}
}
