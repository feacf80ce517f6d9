package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

const openAPIFile = "../docs/openapi.json"

// openAPI is the part of an OpenAPI 3.1 document the tests read.
type openAPI struct {
	Components struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
	Paths map[string]map[string]struct {
		Summary  string                `json:"summary"`
		Security []map[string][]string `json:"security"`
		Response map[string]struct {
			Ref     string `json:"$ref"`
			Content map[string]struct {
				Schema struct {
					Ref string `json:"$ref"`
				} `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
}

func loadOpenAPI(t *testing.T) (*openAPI, []byte) {
	t.Helper()
	data, err := os.ReadFile(openAPIFile)
	require.NoError(t, err)
	var doc openAPI
	require.NoError(t, json.Unmarshal(data, &doc))
	return &doc, data
}

// TestOpenAPIMatchesRoutes: docs/openapi.json describes exactly the
// service's routes — every route is in the document with its method, path,
// summary and scope, and every operation of the document is a route.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			key := strings.ToUpper(method) + " " + path
			documented[key] = true
			i := slices.IndexFunc(Routes(), func(r Route) bool { return r.Method+" "+r.Path == key })
			require.GreaterOrEqual(t, i, 0, "the document has %s, the service does not", key)
			r := Routes()[i]
			require.Equal(t, r.Summary, op.Summary, "%s: summary", key)
			if r.Scope == "" {
				require.NotNil(t, op.Security, "%s: security must be stated, [] for none", key)
				require.Empty(t, op.Security, "%s needs no token", key)
			} else {
				require.Equal(t, []map[string][]string{{"bearer": {string(r.Scope)}}}, op.Security, "%s: scope", key)
			}
		}
	}
	for _, r := range Routes() {
		require.True(t, documented[r.Method+" "+r.Path], "the service has %s %s, the document does not", r.Method, r.Path)
	}
}

// schemas compiles the document's component schemas.
func schemas(t *testing.T, data []byte) func(name string) *jsonschema.Schema {
	t.Helper()
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	require.NoError(t, c.AddResource("mem://openapi.json", raw))
	cache := map[string]*jsonschema.Schema{}
	return func(name string) *jsonschema.Schema {
		if s, ok := cache[name]; ok {
			return s
		}
		s, err := c.Compile("mem://openapi.json#/components/schemas/" + name)
		require.NoError(t, err, "schema %s", name)
		cache[name] = s
		return s
	}
}

// TestOpenAPIResponsesValidate: the service's answers — successes of
// every route and problems — validate against the document's schemas.
func TestOpenAPIResponsesValidate(t *testing.T) {
	doc, data := loadOpenAPI(t)
	schema := schemas(t, data)
	f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour}})
	check := func(method, path string, res response) {
		t.Helper()
		route := ""
		for _, r := range Routes() {
			if r.Method == method && routeMatches(r.Path, path) {
				route = r.Path
			}
		}
		require.NotEmpty(t, route, "%s %s", method, path)
		op := doc.Paths[route][strings.ToLower(method)]
		resp, ok := op.Response[strconv.Itoa(res.status)]
		if !ok {
			require.GreaterOrEqual(t, res.status, 400, "%s %s: status %d not documented", method, path, res.status)
			resp = op.Response["default"]
		}
		name := "Problem"
		for ct, c := range resp.Content {
			if ct == "application/json" {
				name = strings.TrimPrefix(c.Schema.Ref, "#/components/schemas/")
			}
			if ct == "text/plain" {
				return // the Prometheus text format
			}
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.body))
		require.NoError(t, err)
		require.NoError(t, schema(name).Validate(v), "%s %s → %d: %s against %s", method, path, res.status, res.body, name)
	}
	call := func(method, path, scope string, body any) response {
		t.Helper()
		res := f.do(method, path, f.tokens[scope], body)
		check(method, path, res)
		return res
	}
	x, y := rows(8, 30, 3)
	call("POST", "/v1/events", "ingest", map[string]any{"rows": x[:20], "labels": y[:20], "keys": keysFor(20)})
	call("POST", "/v1/events", "ingest", map[string]any{"events": []map[string]any{{"op": "insert", "id": 100, "x": x[20], "y": y[20], "key": "k100"}}})
	call("POST", "/v1/events", "ingest", map[string]any{"rows": x[:1], "labels": y[:1], "ids": []int64{1}}) // 409
	call("POST", "/v1/predict", "predict", map[string]any{"rows": x[:3]})
	call("POST", "/v1/predict", "predict", map[string]any{"rows": [][]float64{{1}}}) // 422
	res := call("POST", "/v1/forget", "forget", map[string]any{"ids": []int64{2}, "keys": []string{"k100"}, "wait": true})
	var st forgetState
	res.json(t, &st)
	call("GET", "/v1/forget/"+st.Request, "forget", nil)
	f.waitServed(st.Request)
	call("GET", "/v1/forget/"+st.Request, "forget", nil)
	call("GET", "/v1/forget/0123456789abcdef0123456789abcdef", "forget", nil) // 404
	call("POST", "/v1/releases", "release", map[string]any{"epsilon": 1, "delta": 1e-5})
	call("GET", "/v1/releases", "read", nil)
	call("GET", "/v1/releases/1", "read", nil)
	call("GET", "/v1/releases/2", "read", nil) // 404
	call("GET", "/v1/contract", "read", nil)
	call("GET", "/v1/status", "read", nil)
	call("GET", "/v1/status", "", nil)       // 401
	call("GET", "/v1/status", "ingest", nil) // 403
	call("GET", "/metrics", "read", nil)
	call("GET", "/healthz", "", nil)
	res = f.do("GET", "/metrics", f.tokens["read"], nil)
	require.Equal(t, http.StatusOK, res.status)
	for _, m := range []string{"unlearn_events_ingested_total 21", "unlearn_forget_requests_served_total{path=\"exact\"} 1",
		"unlearn_forget_requests_queued 0", "unlearn_releases_total{kind=\"exact\"} 1", "unlearn_forget_replay_seconds_count 1"} {
		require.Contains(t, string(res.body), m)
	}
}

// routeMatches reports whether a concrete path matches a route's pattern.
func routeMatches(pattern, path string) bool {
	ps, qs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(qs) {
		return false
	}
	for i := range ps {
		if ps[i] != qs[i] && !strings.HasPrefix(ps[i], "{") {
			return false
		}
	}
	return true
}

func keysFor(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "k" + strconv.Itoa(i+1)
	}
	return out
}
