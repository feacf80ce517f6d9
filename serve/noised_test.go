package serve

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/olbfgs"
)

// TestPredictionsWhilePendingAreNoised is the unit-vector extraction of
// an attacker with a predict token: while an approximate deletion is
// pending, the logits of e1 … ed recover the deployed parameters. They
// must be the kept release's noised w, bit for bit as its predictor
// answers, never the un-noised trajectory (with averaging, the stored
// state's average still follows it), and the receipt's pending says
// exactly what the store keeps. Each answer says that the model is the
// noised one (noised, pending_requests), and the exact model's does not.
func TestPredictionsWhilePendingAreNoised(t *testing.T) {
	for _, tc := range []struct {
		name    string
		learner func(*olbfgs.Config)
	}{
		{"plain", nil},
		{"averaging", func(c *olbfgs.Config) { c.Average = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const d = 3
			f := newFixture(t, fixtureOptions{d: d, k: 10, opt: approxOptions(), certifiable: true, learner: tc.learner,
				budget: &certify.Budget{Epsilon: 10, Delta: 1e-3}})
			x, y := rows(7, 60, d)
			f.ingest(x, y, seq(1, 60))
			before := f.unitLogits(d)
			var exact predictResponse
			f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": unitRows(d)}).json(t, &exact)
			require.False(t, exact.Noised, "the exact model is not flagged")
			require.Empty(t, exact.PendingRequests)

			st := f.forgetNow(3)
			require.Equal(t, "approximate", st.Path)
			rc, err := certify.VerifyReceipt(st.Receipt, f.key.Public())
			require.NoError(t, err)
			require.Contains(t, rc.Pending, "no un-noised state or checkpoint holds the records' influence")
			require.Contains(t, rc.Pending, "predictions and evaluations answer from the noised state")

			res := f.do("GET", "/v1/releases/1", f.tokens["read"], nil)
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
			var kept releaseJSON
			res.json(t, &kept)
			rel, err := certify.ParseRelease([]byte(kept.File))
			require.NoError(t, err)

			// The noised w, projected onto the learner's ball as the store
			// keeps it.
			noised := slices.Clone(rel.W)
			if n := floats.Norm(noised, 2); n > f.cfg.Radius {
				floats.Scale(f.cfg.Radius/n, noised)
			}
			got := f.unitLogits(d)
			for i := range d {
				require.InDelta(t, noised[i], got[i], 1e-6*(1+math.Abs(noised[i])), "logit of e%d is the noised w", i+1)
			}
			require.NotEqual(t, before, got, "the answers changed with the deletion")

			// Bit for bit: the answer is the predictor of the noised state.
			pub, needs, err := f.st.PublishedState()
			require.NoError(t, err)
			require.True(t, needs)
			require.Equal(t, noised, pub.Deployed())
			p, err := ModelPredictor(pub, f.hdr)
			require.NoError(t, err)
			want, err := p.Predict(unitRows(d))
			require.NoError(t, err)
			var out predictResponse
			f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": unitRows(d)}).json(t, &out)
			require.Equal(t, want.Probabilities, out.Probabilities)
			require.True(t, out.Noised, "predictions from the noised model say so")
			require.Equal(t, []int64{rc.Batch.StoreRequest}, out.PendingRequests)

			// A release now is refused, naming the release to serve;
			// nothing is charged.
			charged := f.srv.ledger.Totals().Releases
			res = f.do("POST", "/v1/releases", f.tokens["release"], map[string]any{"epsilon": 1, "delta": 1e-5})
			require.Equal(t, http.StatusConflict, res.status, "%s", res.body)
			pr := res.problem(t)
			require.Equal(t, ProblemTypePrefix+"deletion-pending", pr.Type)
			require.Equal(t, kept.ID, pr.Release)
			require.Contains(t, pr.Detail, fmt.Sprintf("serve release %d (GET /v1/releases/%d)", kept.ID, kept.ID))
			require.Equal(t, charged, f.srv.ledger.Totals().Releases, "nothing charged")

			// The stored state itself deploys the noised w (its average
			// included): nothing un-noised is kept to answer from.
			raw, err := f.st.State()
			require.NoError(t, err)
			require.Equal(t, noised, raw.Deployed(), "the stored state's deployed parameters are the noised w")
		})
	}
}

func unitRows(d int) [][]float64 {
	out := make([][]float64, d)
	for i := range out {
		out[i] = make([]float64, d)
		out[i][i] = 1
	}
	return out
}

// unitLogits predicts e1 … ed and returns log(p₊/p₋) of each: the
// deployed parameters of a logistic model without intercept.
func (f *fixture) unitLogits(d int) []float64 {
	f.t.Helper()
	res := f.do("POST", "/v1/predict", f.tokens["predict"], map[string]any{"rows": unitRows(d)})
	require.Equal(f.t, http.StatusOK, res.status, "%s", res.body)
	var out predictResponse
	res.json(f.t, &out)
	w := make([]float64, d)
	for i, p := range out.Probabilities {
		w[i] = math.Log(p[1] / p[0])
	}
	return w
}
