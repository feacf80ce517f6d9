package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"unlearn/dataset"
	"unlearn/ledger"
	"unlearn/model"
	"unlearn/sign"
	"unlearn/store"
)

// Defaults of Options.
const (
	DefaultForgetWithin = 10 * time.Minute
	DefaultMaxBody      = 16 << 20
	DefaultWriteWait    = 30 * time.Second
	DefaultLongPoll     = 25 * time.Second
	DefaultTokenRefresh = time.Second
	DefaultResolveCheck = time.Minute
	// DefaultMaxRows caps the rows of one ingest or predict request and
	// the ids and keys of one deletion request.
	DefaultMaxRows = 10000
	// DefaultMaxQueued caps the deletion requests queued at once, and
	// DefaultMaxQueuedPerToken those one token has queued.
	DefaultMaxQueued         = 10000
	DefaultMaxQueuedPerToken = 1000
	// DefaultUrgentEvery is the shortest time between two batches started
	// early because a client asked to wait: waits within it share a batch.
	DefaultUrgentEvery = time.Second
)

// MaxKeyBytes is the longest key (the string naming a record, POST
// /v1/events and /v1/forget), in bytes of UTF-8.
const MaxKeyBytes = 256

// LedgerFile is the name of a store's own budget ledger (unlearn budget
// --init), charged for every noised release when it exists.
const LedgerFile = "budget.ledger"

// Options configure a Server. The zero value of every field but Key is
// usable.
type Options struct {
	// Key is the certifier's key: it signs receipts and release
	// certificates (and the ledger's entries). Required.
	Key *sign.Secret
	// ForgetWithin is the deadline of a deletion request: it is served at
	// the latest this long after it was acknowledged (sooner when a client
	// asks to wait). Defaults to DefaultForgetWithin.
	ForgetWithin time.Duration
	// Forget are the options of the forgets that serve the queue: a replay
	// cap and its intervention, and for that approximate path the privacy
	// target and noise of the certified release it keeps of the
	// intervention's output (Noise: Epsilon and Delta required; Ages).
	// That release is signed with Key and charged to the store's budget
	// ledger, which the approximate path needs, inside the batch's
	// transaction: the service sets OnRelease (a caller's is refused), and
	// a batch the ledger refuses for lack of budget is served exactly.
	// SkipVacuum is refused: a served request's pages are vacuumed.
	Forget store.ForgetOptions
	// MaxBody is the largest request body in bytes. Defaults to
	// DefaultMaxBody.
	MaxBody int64
	// MaxRows caps the rows of one ingest or prediction request and the
	// ids and keys of one deletion request (413 beyond). Defaults to
	// DefaultMaxRows.
	MaxRows int
	// MaxQueued caps the deletion requests queued at once, and
	// MaxQueuedPerToken those one token has queued (429 with Retry-After
	// beyond). Default to DefaultMaxQueued and DefaultMaxQueuedPerToken.
	MaxQueued, MaxQueuedPerToken int
	// PredictSlots caps the predictions computed at once (a request that
	// finds none free within a second is answered 429 with Retry-After).
	// Defaults to GOMAXPROCS.
	PredictSlots int
	// UrgentEvery is the shortest time between two batches started early
	// because a client asked to wait. Defaults to DefaultUrgentEvery.
	UrgentEvery time.Duration
	// WriteWait is how long a write request (ingest, forget, release) waits
	// for the store while another write runs before it is answered 503
	// with Retry-After. Defaults to DefaultWriteWait.
	WriteWait time.Duration
	// LongPoll caps the wait parameter of GET /v1/forget/{id}. Defaults to
	// DefaultLongPoll.
	LongPoll time.Duration
	// TokenRefresh is how often the tokens are read again from the store
	// (a revocation takes effect within it). Defaults to
	// DefaultTokenRefresh.
	TokenRefresh time.Duration
	// ResolveCheck is the longest the service waits between two
	// evaluations of the store's resolution policy (store.ResolvePolicy),
	// which it applies on its own: it also evaluates it after every
	// ingest and approximate deletion batch, and at the policy's deadline.
	// Defaults to DefaultResolveCheck.
	ResolveCheck time.Duration
	// Predictor builds the predictor of each published state. Defaults to
	// ModelPredictor.
	Predictor PredictorFunc
	// Toolkit is the toolkit version written into receipts and
	// certificates ("unlearn 0.1.0").
	Toolkit string
	// Addr is the address the service listens on, written with the
	// process id into the store's owner file (store.OwnerFile) so that a
	// command refused while the service owns the store can name it.
	Addr string
	// Log receives the access log (one line per request) and the service's
	// events. Defaults to a text logger on standard error.
	Log *slog.Logger
}

// Server is the HTTP service over one model store. Create it with New,
// route requests to Handler, and call Close when done.
type Server struct {
	st     *store.Store
	rd     *store.Reader
	opt    Options
	log    *slog.Logger
	ledger *ledger.Ledger // nil: no ledger (noised releases refused)
	// raw turns rows and labels in the data's own units into the
	// stream's, as the data readers do (the store's data contract,
	// contract; nil when it records none).
	raw      *dataset.RawRows
	contract *model.Contract

	write        chan struct{}   // the write lock: one write at a time, waited for with a bound
	ingests      chan *ingestJob // batches waiting for the committer (ingest.go)
	ingestDone   chan struct{}   // closed when the committer stops
	decodeSlots  chan struct{}   // ingest bodies parsed at once (events.go)
	predictSlots chan struct{}   // predictions computed at once (predict.go)
	view         atomic.Pointer[view]
	tokens       atomic.Pointer[tokenTable]
	// tokenReloadMu guards tokenReloaded, when an unknown token last made
	// the service read the tokens again (reloadTokensForUnknown).
	tokenReloadMu sync.Mutex
	tokenReloaded time.Time
	tokenReloads  int // how many such reloads (guarded by tokenReloadMu)
	queue         *queue
	resolver      *resolver
	metrics       *metrics

	closing  chan struct{} // closed by Close: long polls return, no new batch starts
	stop     context.CancelFunc
	bg       sync.WaitGroup
	closeErr error
	once     sync.Once
	closeOne sync.Once
}

// New returns a Server for the open store st. It reads the tokens, the
// queued deletion requests and the store's state, opens the store's budget
// ledger (DIR/budget.ledger) when there is one, and starts the deletion
// queue's worker and the token refresher; Close stops them. st must stay
// open until Close returns.
//
// The service owns the store (store.Store.Own): while st is open, every
// other writer — a command such as unlearn ingest or forget, a second
// service — is refused, naming this process and Options.Addr, so that the
// published state is always the store's (only tokens may still be created
// and revoked: the service reads them again every TokenRefresh). New fails
// with an error matching store.ErrOwned when another process owns the
// store or is writing to it.
func New(st *store.Store, o Options) (*Server, error) {
	if o.Key == nil {
		return nil, errors.New("serve: Options.Key is required (the certifier's key signs receipts and certificates)")
	}
	if o.Forget.SkipVacuum {
		return nil, errors.New("serve: Options.Forget.SkipVacuum is refused: a served request's pages are vacuumed")
	}
	if o.Forget.OnRelease != nil {
		return nil, errors.New("serve: Options.Forget.OnRelease is refused: the service signs the approximate path's release and charges the store's ledger itself")
	}
	if err := o.Forget.Validate(); err != nil {
		return nil, fmt.Errorf("serve: Options.Forget: %w", err)
	}
	if o.Forget.MaxReplay > 0 && st.LearnerConfig().Radius <= 0 {
		return nil, fmt.Errorf("serve: Options.Forget.MaxReplay: %w: the approximate path keeps only a noised, certified state, and the store's learner has no radius (create the store with --radius and --sample-bound, or serve every deletion exactly)", store.ErrNotCertifiable)
	}
	if err := st.Own(store.Owner{PID: os.Getpid(), Addr: o.Addr}); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	o.ForgetWithin = orDefault(o.ForgetWithin, DefaultForgetWithin)
	o.WriteWait = orDefault(o.WriteWait, DefaultWriteWait)
	o.LongPoll = orDefault(o.LongPoll, DefaultLongPoll)
	o.TokenRefresh = orDefault(o.TokenRefresh, DefaultTokenRefresh)
	o.ResolveCheck = orDefault(o.ResolveCheck, DefaultResolveCheck)
	if o.Forget.Noise.Toolkit == "" {
		o.Forget.Noise.Toolkit = o.Toolkit
	}
	o.UrgentEvery = orDefault(o.UrgentEvery, DefaultUrgentEvery)
	for _, f := range []struct {
		v   *int
		def int
	}{{&o.MaxRows, DefaultMaxRows}, {&o.MaxQueued, DefaultMaxQueued}, {&o.MaxQueuedPerToken, DefaultMaxQueuedPerToken}, {&o.PredictSlots, runtime.GOMAXPROCS(0)}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Predictor == nil {
		o.Predictor = ModelPredictor
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	s := &Server{st: st, opt: o, log: o.Log, write: make(chan struct{}, 1), ingests: make(chan *ingestJob, 64), ingestDone: make(chan struct{}), decodeSlots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1)), predictSlots: make(chan struct{}, o.PredictSlots), closing: make(chan struct{})}
	var err error
	if s.raw, s.contract, err = model.RawRowsOf(st.Header()); err != nil {
		return nil, fmt.Errorf("serve: the store's data contract: %w", err)
	}
	if s.rd, err = store.OpenReader(st.Dir()); err != nil {
		return nil, err
	}
	if err := s.refreshTokens(); err != nil {
		s.rd.Close()
		return nil, err
	}
	if p := filepath.Join(st.Dir(), LedgerFile); fileExists(p) {
		if s.ledger, err = ledger.Open(p, o.Key); err != nil {
			s.rd.Close()
			return nil, fmt.Errorf("serve: the store's ledger: %w", err)
		}
	}
	if o.Forget.MaxReplay > 0 {
		if s.ledger == nil {
			s.rd.Close()
			return nil, fmt.Errorf("serve: Options.Forget.MaxReplay: the approximate path publishes a noised release of the state, charged to the store's budget ledger, and the store has none (%s): create it with unlearn budget --init", LedgerFile)
		}
		s.opt.Forget.OnRelease = s.chargeRelease
	}
	s.metrics = newMetrics(s)
	if s.queue, err = newQueue(s); err != nil {
		s.rd.Close()
		return nil, err
	}
	s.resolver = newResolver(s)
	if err := s.publish(publishAll); err != nil {
		s.rd.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.bg.Add(4)
	go func() { defer s.bg.Done(); s.queue.run(ctx) }()
	go func() { defer s.bg.Done(); s.resolver.run(ctx) }()
	go func() { defer s.bg.Done(); s.ingestLoop(ctx) }()
	go func() { defer s.bg.Done(); s.refreshLoop(ctx) }()
	return s, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Close stops the service's background work: no new deletion batch or
// resolution starts; a batch or resolution that is running is given until
// ctx is done to commit, and is then cancelled (its transaction rolls
// back: its requests stay queued, or pending, for the next start). Call it
// after http.Server.Shutdown has drained the requests. The store is the
// caller's to close.
func (s *Server) Close(ctx context.Context) error {
	s.once.Do(func() {
		s.closeStart()
		done := make(chan struct{})
		go func() { s.queue.idle(); s.resolver.idle(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.log.Warn("shutdown: cancelling the running deletion batch or resolution; its requests stay queued or pending")
		}
		s.stop()
		s.bg.Wait()
		s.closeErr = s.rd.Close()
	})
	return s.closeErr
}

// closeStart closes s.closing: long polls return, writes waiting for the
// store are refused, and no new deletion batch starts.
func (s *Server) closeStart() { s.closeOne.Do(func() { close(s.closing) }) }

// refreshLoop reads the tokens again every TokenRefresh.
func (s *Server) refreshLoop(ctx context.Context) {
	t := time.NewTicker(s.opt.TokenRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.refreshTokens(); err != nil {
				s.log.Warn("tokens not refreshed; the previous table stays in force", "err", err)
			}
		}
	}
}

func (s *Server) refreshTokens() error {
	all, err := s.rd.Tokens()
	if err != nil {
		return fmt.Errorf("serve: tokens: %w", err)
	}
	s.tokens.Store(newTokenTable(all))
	return nil
}

// lockWrite takes the write lock, waiting at most WriteWait (or until the
// request is cancelled, or the service closes). It returns the unlock
// function, or a 503 problem with Retry-After.
func (s *Server) lockWrite(ctx context.Context) (func(), *Problem) {
	t := time.NewTimer(s.opt.WriteWait)
	defer t.Stop()
	select {
	case s.write <- struct{}{}:
		return func() { <-s.write }, nil
	case <-t.C:
		p := problem("busy", "another write (a deletion batch's replay) held the store for %v; nothing was written: retry", s.opt.WriteWait)
		p.retryAfter = 5 * time.Second
		return nil, p
	case <-s.closing:
		p := problem("shutting-down", "the service is shutting down; nothing was written: retry against its successor")
		p.retryAfter = 5 * time.Second
		return nil, p
	case <-ctx.Done():
		return nil, problem("timeout", "the request was cancelled while waiting for the store; nothing was written")
	}
}
