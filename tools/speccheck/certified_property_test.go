package speccheck

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// TestIssuedCertificatesValidate: every certificate and release the
// toolkit issues validates against its schema and is accepted by
// certify.Verify. The releases are drawn at random: loss kind, dimension,
// τ (0 included), η, radius, sample bound, pair guard on or off, history
// length, deletion set, intervention (every built-in operator wrapped by
// certify.Wrap, window replays of any window; or certify.Certify with the
// diameter bound, a described deletion or an assumed α with β), memory
// policy, calibration, ε and δ. Requests the toolkit refuses (a σ below
// its resolution, the classic calibration at ε ≥ 1) are counted, not
// validated; the counts show that most are issued.
func TestIssuedCertificatesValidate(t *testing.T) {
	certSchema := compile(t, "unlearn-certificate-v2.schema.json")
	relSchema := compile(t, "unlearn-release-v1.schema.json")
	var issued, refused int
	kinds := map[string]int{} // α's source and binding, memory policy
	rapid.Check(t, func(rt *rapid.T) {
		d := rapid.IntRange(1, 3).Draw(rt, "d")
		cfg := olbfgs.DefaultConfig(d)
		cfg.Memory = rapid.IntRange(0, 4).Draw(rt, "tau")
		cfg.StepSize = rapid.SampledFrom([]float64{0.05, 0.2, 0.5}).Draw(rt, "eta")
		cfg.Radius = rapid.SampledFrom([]float64{0.5, 2, 5}).Draw(rt, "radius")
		cfg.SampleBound = rapid.SampledFrom([]float64{0, 1, 3}).Draw(rt, "sampleBound")
		bound := cfg.SampleBound
		if bound == 0 {
			bound = 2
		}
		var loss stream.Loss
		var err error
		c0 := rapid.SampledFrom([]float64{0.5, 1}).Draw(rt, "c0")
		c1 := c0 * rapid.SampledFrom([]float64{1, 2}).Draw(rt, "c1/c0")
		logistic := rapid.Bool().Draw(rt, "logistic")
		if logistic {
			loss, err = stream.NewLogistic(d, rapid.SampledFrom([]float64{0, 0.05, 1}).Draw(rt, "lambda"))
		} else {
			loss, err = stream.NewQuadratic(scaledIdentity(d, c0), scaledIdentity(d, c1))
		}
		require.NoError(rt, err)
		if rapid.Bool().Draw(rt, "guard") {
			cfg.InitialScale = 1 / c1
			cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, c0*(1-1e-9), c1*(1+1e-9)
		}
		n := rapid.IntRange(2, 30).Draw(rt, "events")
		prefix := make([]stream.Event, n)
		for i := range prefix {
			v := make([]float64, d)
			for j := range v {
				v[j] = rapid.Float64Range(-1, 1).Draw(rt, "v") * bound / math.Sqrt(float64(d)) * (1 - 1e-9)
			}
			var z float64
			if logistic {
				z = float64(1 - 2*rapid.IntRange(0, 1).Draw(rt, "y"))
			} else {
				z = rapid.Float64Range(0, 1).Draw(rt, "alpha")
			}
			prefix[i] = stream.InsertEvent(int64(i+1), v, z)
		}
		u := stream.NewIDSet(rapid.SliceOfNDistinct(rapid.Int64Range(1, int64(n)), 1, 3, func(v int64) int64 { return v }).Draw(rt, "U")...)
		maxWindow := 2 * n
		actual, err := olbfgs.New(cfg, loss)
		require.NoError(rt, err)
		require.NoError(rt, actual.KeepCheckpoints(maxWindow))
		require.NoError(rt, actual.Run(prefix))

		spec := certify.Spec{
			Epsilon: rapid.SampledFrom([]float64{0.1, 0.5, 1, 4}).Draw(rt, "epsilon"),
			Delta:   rapid.SampledFrom([]float64{1e-8, 1e-5, 1e-3}).Draw(rt, "delta"),
			Sampler: noise.NewSeededSampler(rapid.Uint64().Draw(rt, "seed"), noise.SamplerOptions{}),
		}
		if rapid.Bool().Draw(rt, "classic") {
			spec.Calibration = noise.Classic
		}
		if rapid.Bool().Draw(rt, "rebuild") {
			spec.Memory = certify.Rebuild
		}
		var rel *certify.Release
		var cert *certify.Certificate
		switch how := rapid.IntRange(0, 3).Draw(rt, "how"); how {
		case 0: // a built-in operator, wrapped
			ops := []unlearn.Operator{unlearn.Oracle(), unlearn.NoOp(), unlearn.ParamOnly(), unlearn.PairDrop(),
				unlearn.MemoryReset(), unlearn.RetainFineTune(), unlearn.DropRefill(),
				unlearn.WindowReplay(rapid.IntRange(0, maxWindow).Draw(rt, "window"), "window", "Window replay")}
			w, err := certify.Wrap(rapid.SampledFrom(ops).Draw(rt, "op"), spec)
			require.NoError(rt, err)
			rel, cert, _, err = w.ApplyCertified(unlearn.Request{Actual: actual, Prefix: prefix, U: u})
			if refusedErr(rt, err) {
				refused++
				return
			}
		default: // Certify on the state: diameter, a described deletion, or an assumed α
			if spec.Memory == certify.Rebuild {
				spec.Retained = stream.LastInserts(prefix, cfg.Memory)
			}
			switch how {
			case 2:
				kinds := []string{unlearn.KindNoop, unlearn.KindParamOnly, unlearn.KindPairDrop, unlearn.KindMemoryReset,
					unlearn.KindRetainFT, unlearn.KindDropRefill}
				spec.Deletion = &certify.Deletion{Ages: certify.AgesOf(prefix, u),
					Intervention: unlearn.Builtin{Kind: rapid.SampledFrom(kinds).Draw(rt, "kind")},
					Replayed:     rapid.IntRange(0, 3).Draw(rt, "replayed")}
			case 3:
				spec.Alpha = &certify.Given{Alpha: rapid.Float64Range(0.01, 5).Draw(rt, "given")}
				spec.Beta = rapid.SampledFrom([]float64{0, 1e-9, 1e-6}).Draw(rt, "beta")
				spec.Deletions = len(u)
			}
			rel, cert, err = certify.Certify(actual, spec)
			if refusedErr(rt, err) {
				refused++
				return
			}
		}
		issued++
		kinds[cert.Sensitivity.Source+"/"+cert.Sensitivity.Binding]++
		kinds["memory "+cert.Memory.String()]++
		certDoc, err := cert.MarshalIndent()
		require.NoError(rt, err)
		relDoc, err := rel.Marshal()
		require.NoError(rt, err)
		_, err = certify.Verify(cert, relDoc, nil)
		require.NoError(rt, err, "Verify refuses an issued certificate")
		require.NoError(rt, validate(certSchema, certDoc), "certificate:\n%s", certDoc)
		require.NoError(rt, validate(relSchema, relDoc), "release:\n%s", relDoc)
	})
	t.Logf("%d releases issued and validated, %d requests refused by the toolkit; %v", issued, refused, kinds)
	require.Greater(t, issued, refused, "most random requests are issued")
	for _, k := range []string{"derived/recursion", "derived/diameter", "derived/radius", "diameter/diameter", "exact/", "assumed/",
		"memory reset", "memory rebuild", "memory exact"} {
		require.Positive(t, kinds[k], "no release of kind %s was drawn", k)
	}
}

// refusedErr reports whether err is a refusal the toolkit documents for a
// valid request (σ below the resolution, the classic calibration at
// ε ≥ 1); any other error fails the test.
func refusedErr(t *rapid.T, err error) bool {
	if err == nil {
		return false
	}
	var se *certify.SpecError
	if errors.Is(err, certify.ErrResolution) || (errors.As(err, &se) && se.Field == "Epsilon") {
		return true
	}
	require.NoError(t, err)
	return false
}
