package certify

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// The planned σ of a request is exactly the σ a release of that request
// uses, and the plan's worst case covers every row, for schedules that are
// not consecutive ages.
func TestRequiredSigmaMatchesRelease(t *testing.T) {
	const d, tau = 3, 4
	loss := scalarLoss(t, d, 1, 1)
	cfg := guarded(d, tau, 0.5, 1, 1, 5, 2)
	h := mustHeader(t, loss)
	schedules := []Deletion{
		{Ages: []int{0}},
		{Ages: []int{3, 40}},
		{Ages: []int{0, 1, 2, 3, 4}, Intervention: unlearn.Builtin{Kind: unlearn.KindParamOnly}},
		{Ages: []int{150}},
	}
	tab, err := RequiredSigma(PlanSpec{Epsilon: 1, Delta: 1e-5, Config: cfg, Header: h, Schedules: schedules, Taus: []int{tau, 2 * tau}})
	require.NoError(t, err)
	require.Len(t, tab.Rows, 8)
	events := randomInserts(rand.New(rand.NewPCG(1, 1)), d, 200, 1)
	state, err := olbfgs.Replay(cfg, loss, events)
	require.NoError(t, err)
	for _, r := range tab.Rows[:len(schedules)] {
		require.LessOrEqual(t, r.Sigma, tab.MaxSigma)
		del := schedules[r.Schedule]
		if del.Intervention.Kind == "" {
			del.Intervention = unlearn.Builtin{Kind: unlearn.KindNoop}
		}
		_, cert, err := Certify(state, Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(1), Deletion: &del})
		require.NoError(t, err)
		require.Equal(t, cert.Sigma, r.Sigma, "row %+v", r)
	}
	// Older deletions need less noise (the recursion contracts).
	require.Less(t, tab.Rows[3].Sigma, tab.Rows[0].Sigma)
	var md, csv bytes.Buffer
	require.NoError(t, tab.WriteMarkdown(&md))
	require.NoError(t, tab.WriteCSV(&csv))
	require.Contains(t, md.String(), "worst case")
	require.Equal(t, 9, strings.Count(csv.String(), "\n"))
	_, err = RequiredSigma(PlanSpec{Epsilon: 1, Delta: 1e-5, Config: cfg, Header: h})
	wantSpecError(t, err, "Schedules", ErrSpec)
	_ = stream.KindQuadratic
}
