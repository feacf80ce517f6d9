package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/serve"
	"unlearn/sign"
	"unlearn/store"
)

func init() { register(newServeCmd) }

func newServeCmd() *cobra.Command {
	var (
		dir, addr, keyFile, intervention, tlsCert, tlsKey string
		within, writeWait, readTimeout, grace             time.Duration
		maxBody                                           int64
		maxReplay                                         int
		epsilon, delta                                    float64
		memory, calibration, ages                         string
		resolveCheck                                      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve --store DIR --addr HOST:PORT --key NAME.key [--forget-within D] [--tls-cert FILE --tls-key FILE]",
		Short: "Serve a model store over HTTP: events, predictions, deletion requests with receipts, releases",
		Long: `serve runs the HTTP service over one model store (docs/service.md; the API is
docs/openapi.json). The process owns the store while it runs:

  POST /v1/events        append a batch of insert events and train on them;
                         answered once the batch is committed, with the log head
  POST /v1/predict       rows in, predicted labels and class probabilities out
  POST /v1/forget        a deletion request by ids or keys; answered 202 once it
                         is durably queued, with its request id
  GET  /v1/forget/{id}   its state and, once served, its signed receipt
  POST /v1/releases      a certified release, charged to the store's budget ledger
  GET  /v1/releases      the kept releases (GET /v1/releases/{id}: one, with files)
  GET  /v1/status        the store, the deletion queue and the budget
  GET  /metrics          Prometheus metrics;  GET /healthz  liveness (no token)

Every route but /healthz needs a bearer token with the route's scope
('unlearn token create'): 401 without a valid one, 403 with the wrong scope.
Every error is an RFC 9457 problem (application/problem+json).

Deletion requests are served in batches, by one replay for all the requests
queued, at the latest --forget-within after each was acknowledged, or at once
when a client asks to wait. An acknowledged request survives a crash: the
next start serves it. Each served request gets a receipt signed with --key,
the certifier's key ('unlearn keygen'), which also signs release
certificates; 'unlearn verify --receipt' checks a receipt offline.

With --max-replay N, a batch whose exact replay would apply more than N events
is served by --intervention instead, and the store keeps only the
intervention's output plus Gaussian noise: a certified release at --epsilon
and --delta, signed with --key and charged to the store's budget ledger
(DIR/budget.ledger, required; 'unlearn budget --init'), which must also have
a radius (init --radius, --sample-bound). A batch the ledger cannot pay for is
served exactly. Its receipts say what stays pending until an exact replay
resolves it: the service applies the store's resolution policy (init
--resolve-after-events, --resolve-within) on its own, after every ingest and
approximate batch, at the policy's deadline and at least every
--resolve-check; GET /v1/forget/{id} reports the resolution.

Predictions, status and releases are answered from the state published after
the last committed write, so they never wait for an ingest or a deletion. On
SIGTERM or SIGINT the service stops accepting, lets the requests in flight
commit or roll back, and gives a running deletion batch --shutdown-grace to
commit before it is rolled back; queued requests stay queued.

The access log (standard error, one line per request) records the token, the
route, the status and the number of rows or records, never a payload, an id,
a key or a token.`,
		Example: `  unlearn keygen --out certifier
  unlearn token create --store model --scopes ingest,predict,forget,read --name app
  unlearn serve --store model --addr 127.0.0.1:8080 --key certifier.key --forget-within 10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if addr == "" {
				return flagError("addr", "required: HOST:PORT to listen on (127.0.0.1:8080)")
			}
			if keyFile == "" {
				return flagError("key", "required: the certifier's key (unlearn keygen) signs receipts and certificates")
			}
			if (tlsCert == "") != (tlsKey == "") {
				return flagError("tls-cert", "--tls-cert and --tls-key go together")
			}
			if maxReplay < 0 {
				return flagError("max-replay", "%d: must be non-negative (0: every deletion exact)", maxReplay)
			}
			fo := store.ForgetOptions{MaxReplay: maxReplay, Intervention: intervention}
			if maxReplay > 0 {
				if intervention == "" {
					return flagError("intervention", "required with --max-replay: one of %s", strings.Join(store.Interventions(), ", "))
				}
				spec, err := serveNoise(cmd.Flags(), epsilon, delta, memory, calibration)
				if err != nil {
					return err
				}
				fo.Noise = spec
			} else {
				for _, name := range []string{"intervention", "epsilon", "delta", "memory", "calibration", "ages"} {
					if cmd.Flags().Changed(name) {
						return flagError(name, "only with --max-replay (the approximate path)")
					}
				}
			}
			switch ages {
			case "pow2":
			case "none":
				fo.Ages = store.AgesNone
			default:
				return flagError("ages", "%q: want pow2 or none", ages)
			}
			for _, f := range []struct {
				name string
				d    time.Duration
			}{{"forget-within", within}, {"write-wait", writeWait}, {"read-timeout", readTimeout}, {"shutdown-grace", grace}, {"resolve-check", resolveCheck}} {
				if f.d <= 0 {
					return flagError(f.name, "%v: must be positive", f.d)
				}
			}
			if maxBody < 1024 {
				return flagError("max-body", "%d: at least 1024 bytes", maxBody)
			}
			key, err := sign.LoadSecret(keyFile)
			if err != nil {
				return flagError("key", "%v", err)
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			srv, err := serve.New(s, serve.Options{
				Key: key, ForgetWithin: within, WriteWait: writeWait, MaxBody: maxBody,
				Forget: fo, ResolveCheck: resolveCheck,
				Toolkit: "unlearn " + version, Log: logger,
			})
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				srv.Close(context.Background())
				return flagError("addr", "%v", err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			scheme := "http"
			if tlsCert != "" {
				scheme = "https"
			}
			// The address, once listening: a script (or a test) that asked
			// for port 0 reads the port here.
			fmt.Fprintf(cmd.OutOrStdout(), "listening on %s://%s\n", scheme, l.Addr())
			logger.Info("serving", "store", dir, "addr", l.Addr().String(), "key_id", key.KeyID(), "forget_within", within.String())
			return srv.Serve(ctx, l, serve.HTTPOptions{TLSCert: tlsCert, TLSKey: tlsKey, ReadTimeout: readTimeout, ShutdownGrace: grace})
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "model store directory (required)")
	f.StringVar(&addr, "addr", "", "HOST:PORT to listen on, e.g. 127.0.0.1:8080 (port 0: any free port, printed) (required)")
	f.StringVar(&keyFile, "key", "", "the certifier's secret key, NAME.key (unlearn keygen): signs receipts and certificates (required)")
	f.DurationVar(&within, "forget-within", serve.DefaultForgetWithin, "deadline of a deletion request: served at the latest this long after it is acknowledged")
	f.IntVar(&maxReplay, "max-replay", 0, "serve a deletion batch whose exact replay exceeds N events with --intervention (0: always exact)")
	f.StringVar(&intervention, "intervention", "", "the intervention beyond --max-replay: "+strings.Join(store.Interventions(), ", "))
	f.Float64Var(&epsilon, "epsilon", 0, "approximate path: privacy parameter ε > 0 of the noised state's release (required with --max-replay)")
	f.Float64Var(&delta, "delta", 0, "approximate path: privacy parameter δ ∈ (0, 1) (required with --max-replay)")
	f.StringVar(&memory, "memory", "reset", "approximate path: memory released with the noised w: reset or rebuild (the state kept has an empty memory either way)")
	f.StringVar(&calibration, "calibration", "analytic", "approximate path: noise calibration: analytic or classic (ε < 1)")
	f.StringVar(&ages, "ages", "pow2", "approximate path: what the certificate discloses of the deleted samples' ages: pow2 (rounded down to powers of two) or none (only their number)")
	f.DurationVar(&resolveCheck, "resolve-check", serve.DefaultResolveCheck, "longest wait between two evaluations of the store's resolution policy")
	f.StringVar(&tlsCert, "tls-cert", "", "PEM certificate: serve HTTPS only (with --tls-key)")
	f.StringVar(&tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	f.Int64Var(&maxBody, "max-body", serve.DefaultMaxBody, "largest request body in bytes")
	f.DurationVar(&writeWait, "write-wait", serve.DefaultWriteWait, "how long a write waits for the store (another write running) before it is answered 503")
	f.DurationVar(&readTimeout, "read-timeout", 60*time.Second, "a client must send its whole request within this (a stalled body is answered 408)")
	f.DurationVar(&grace, "shutdown-grace", 30*time.Second, "on SIGTERM, how long requests in flight and a running deletion batch may take before they are rolled back")
	return cmd
}

// serveNoise is the spec of the approximate path's release for serve: the
// privacy target and the noise (the key and the ledger are the service's).
func serveNoise(fl *pflag.FlagSet, epsilon, delta float64, memory, calibration string) (certify.Spec, error) {
	for _, name := range []string{"epsilon", "delta"} {
		if !fl.Changed(name) {
			return certify.Spec{}, flagError(name, "required with --max-replay: the approximate path keeps the intervention's output only noised, as a certified release")
		}
	}
	spec := certify.Spec{Epsilon: epsilon, Delta: delta, Toolkit: "unlearn " + version}
	var err error
	if spec.Calibration, err = noise.ParseCalibration(calibration); err != nil {
		return spec, flagError("calibration", "%q: want analytic or classic", calibration)
	}
	if spec.Memory, err = certify.ParseMemoryPolicy(memory); err != nil || spec.Memory == certify.Exact {
		return spec, flagError("memory", "%q: want reset or rebuild", memory)
	}
	return spec, nil
}
