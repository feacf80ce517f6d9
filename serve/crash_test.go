package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/store"
	"unlearn/stream"
)

var kills = flag.Int("serve.kills", 3, "kill -9 rounds of TestServeCrash (CI runs 20)")

// TestServeChild is the child process of TestServeCrash and
// TestServeShutdown (it does nothing in a normal run): it serves the store
// in SERVE_CHILD_DIR on a free loopback port, printing "ADDR host:port",
// until it is killed or sent SIGTERM.
func TestServeChild(t *testing.T) {
	dir := os.Getenv("SERVE_CHILD_DIR")
	if dir == "" {
		t.Skip("the child process of TestServeCrash")
	}
	within, _ := time.ParseDuration(os.Getenv("SERVE_CHILD_WITHIN"))
	grace, _ := time.ParseDuration(os.Getenv("SERVE_CHILD_GRACE"))
	fail := func(err error) {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	key, err := sign.LoadSecret(filepath.Join(dir, "..", "certifier.key"))
	if err != nil {
		fail(err)
	}
	st, err := store.Open(dir)
	if err != nil {
		fail(err)
	}
	srv, err := New(st, Options{Key: key, ForgetWithin: within, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fail(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	fmt.Println("ADDR", l.Addr())
	if err := srv.Serve(ctx, l, HTTPOptions{ShutdownGrace: grace}); err != nil {
		fail(err)
	}
	if err := st.Close(); err != nil {
		fail(err)
	}
	fmt.Println("CLEAN")
	os.Exit(0)
}

// child is a running server process.
type child struct {
	cmd  *exec.Cmd
	addr string
	out  *bufio.Reader
}

// startChild starts the test binary as a server over the store in dir.
func startChild(t *testing.T, dir string, within, grace time.Duration) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), "SERVE_CHILD_DIR="+dir, "SERVE_CHILD_WITHIN="+within.String(), "SERVE_CHILD_GRACE="+grace.String())
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &child{cmd: cmd, out: bufio.NewReader(stdout)}
	line, err := c.out.ReadString('\n')
	require.NoError(t, err, "the child's first line")
	require.True(t, strings.HasPrefix(line, "ADDR "), "child: %s", line)
	c.addr = "http://" + strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))
	return c
}

// crashFixture is a store with a key and a token for the child servers.
type crashFixture struct {
	dir, token string
	d          int
}

func newCrashFixture(t *testing.T, d, k int) *crashFixture {
	t.Helper()
	root := t.TempDir()
	f := &crashFixture{dir: filepath.Join(root, "store"), d: d}
	key, err := sign.Generate()
	require.NoError(t, err)
	_, _, err = key.WriteFiles(filepath.Join(root, "certifier"), false)
	require.NoError(t, err)
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory = 3
	st, err := store.Create(f.dir, store.Config{Header: stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: 0.05}, Learner: cfg, CheckpointEvery: k})
	require.NoError(t, err)
	f.token, _, err = st.CreateToken("crash", []string{"ingest", "predict", "forget", "read"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	return f
}

// post sends a JSON body and returns the status and body; err is a
// transport error (the server was killed).
func (f *crashFixture) post(c *http.Client, url, body string) (int, string, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.token)
	res, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// acked is what the killed servers acknowledged.
type acked struct {
	mu       sync.Mutex
	ids      []int64            // ingested (200)
	requests map[string][]int64 // forget requests (202) → ids
	named    map[int64]bool     // ids named by any forget request sent, answered or not
	nextID   int64
}

// load runs ingests, predictions and forgets against addr until stop is
// closed or the server dies, recording every acknowledgement.
func (f *crashFixture) load(addr string, a *acked, seed uint64, stop <-chan struct{}) {
	c := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	worker := func(kind int) {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, uint64(kind)))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			switch kind {
			case 0: // ingest a batch of fresh ids, with keys
				n := 1 + rng.IntN(40)
				a.mu.Lock()
				first := a.nextID
				a.nextID += int64(n)
				a.mu.Unlock()
				x, y := rows(rng.Uint64(), n, f.d)
				var ids, keys []string
				for j := range n {
					ids = append(ids, fmt.Sprint(first+int64(j)))
					keys = append(keys, fmt.Sprintf("%q", fmt.Sprintf("k%d", first+int64(j))))
				}
				body := fmt.Sprintf(`{"rows":%s,"labels":%s,"ids":[%s],"keys":[%s]}`, mustJSON(x), mustJSON(y), strings.Join(ids, ","), strings.Join(keys, ","))
				status, _, err := f.post(c, addr+"/v1/events", body)
				if err != nil {
					return
				}
				if status == http.StatusOK {
					a.mu.Lock()
					for j := range n {
						a.ids = append(a.ids, first+int64(j))
					}
					a.mu.Unlock()
				}
			case 1: // predict
				x, _ := rows(rng.Uint64(), 10, f.d)
				if _, _, err := f.post(c, addr+"/v1/predict", fmt.Sprintf(`{"rows":%s}`, mustJSON(x))); err != nil {
					return
				}
			case 2: // forget acknowledged ids
				a.mu.Lock()
				if len(a.ids) == 0 {
					a.mu.Unlock()
					time.Sleep(10 * time.Millisecond)
					continue
				}
				ids := []int64{a.ids[rng.IntN(len(a.ids))], a.ids[rng.IntN(len(a.ids))]}
				// A request may commit without its answer arriving (the
				// kill comes between): its ids may then be forgotten.
				a.named[ids[0]], a.named[ids[1]] = true, true
				a.mu.Unlock()
				body := fmt.Sprintf(`{"ids":[%d,%d],"wait":%v}`, ids[0], ids[1], rng.IntN(4) == 0)
				status, res, err := f.post(c, addr+"/v1/forget", body)
				if err != nil {
					return
				}
				if status == http.StatusAccepted {
					var st forgetState
					if jerr := json.Unmarshal([]byte(res), &st); jerr == nil {
						a.mu.Lock()
						a.requests[st.Request] = ids
						a.mu.Unlock()
					}
				}
				time.Sleep(time.Duration(rng.IntN(10)) * time.Millisecond)
			}
		}
	}
	wg.Add(3)
	for kind := range 3 {
		go worker(kind)
	}
	wg.Wait()
}

// verify opens the store and checks that every acknowledged batch and
// request is there and that the store passes its check. It returns how
// many requests are served.
func (f *crashFixture) verify(t *testing.T, a *acked) (served int) {
	t.Helper()
	st, err := store.Open(f.dir)
	require.NoError(t, err)
	defer st.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	for req, ids := range a.requests {
		q, err := st.ForgetRequest(req)
		require.NoError(t, err, "acknowledged request %s lost", req)
		if q.State == store.Served {
			served++
			for _, id := range ids {
				_, err := st.LookupKeys([]string{fmt.Sprintf("k%d", id)})
				require.ErrorIs(t, err, store.ErrUnknownKey, "id %d of served request %s is still held", id, req)
			}
		}
	}
	for _, id := range a.ids {
		if a.named[id] { // forgotten, or not, by a request sent
			continue
		}
		got, err := st.LookupKeys([]string{fmt.Sprintf("k%d", id)})
		require.NoError(t, err, "acknowledged id %d lost", id)
		require.Equal(t, []int64{id}, got)
	}
	_, err = st.Check()
	require.NoError(t, err, "status --check after the kill")
	return served
}

// TestServeCrash: the server is killed with SIGKILL during a mixed load of
// ingest batches, predictions and deletion requests, -serve.kills times
// (3 by default; CI runs 20); after each kill the store holds every
// acknowledged batch and request and passes its check, and a restart
// resumes the queue: at the end every acknowledged request is served.
func TestServeCrash(t *testing.T) {
	f := newCrashFixture(t, 4, 25)
	a := &acked{requests: map[string][]int64{}, named: map[int64]bool{}, nextID: 1}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	for round := range *kills {
		c := startChild(t, f.dir, 400*time.Millisecond, time.Second)
		stop := make(chan struct{})
		done := make(chan struct{})
		seed := rng.Uint64()
		go func() { f.load(c.addr, a, seed, stop); close(done) }()
		time.Sleep(time.Duration(150+rng.IntN(600)) * time.Millisecond)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
		err := c.cmd.Wait()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "round %d: the child was killed: %v", round, err)
		close(stop)
		<-done
		f.verify(t, a)
	}
	// A last start serves whatever is queued.
	c := startChild(t, f.dir, 200*time.Millisecond, time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		time.Sleep(500 * time.Millisecond)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(t, c.cmd.Wait())
		if f.verify(t, a) == len(a.requests) || time.Now().After(deadline) {
			break
		}
		c = startChild(t, f.dir, 200*time.Millisecond, time.Second)
	}
	require.Equal(t, len(a.requests), f.verify(t, a), "every acknowledged request served after restarts")
	t.Logf("%d kills: %d ids and %d deletion requests acknowledged", *kills, len(a.ids), len(a.requests))
}

// TestServeShutdown: SIGTERM during a deletion batch's replay and with
// requests queued: the process exits cleanly, the batch commits or rolls
// back whole, and no acknowledged request is lost.
func TestServeShutdown(t *testing.T) {
	f := newCrashFixture(t, 10, 3000)
	c := startChild(t, f.dir, time.Hour, 10*time.Millisecond)
	x, y := rows(11, 2500, 10)
	status, body, err := f.post(http.DefaultClient, c.addr+"/v1/events", fmt.Sprintf(`{"rows":%s,"labels":%s}`, mustJSON(x), mustJSON(y)))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, body)
	var reqs []string
	for _, id := range []int64{1, 2400} {
		status, body, err = f.post(http.DefaultClient, c.addr+"/v1/forget", fmt.Sprintf(`{"ids":[%d],"wait":%v}`, id, id == 1))
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, status, body)
		var st forgetState
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		reqs = append(reqs, st.Request)
	}
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	line, _ := c.out.ReadString('\n')
	require.NoError(t, c.cmd.Wait(), "a clean exit")
	require.Equal(t, "CLEAN\n", line)
	st, err := store.Open(f.dir)
	require.NoError(t, err)
	defer st.Close()
	for _, r := range reqs {
		q, err := st.ForgetRequest(r)
		require.NoError(t, err)
		require.Contains(t, []store.QueueState{store.Queued, store.Served}, q.State)
	}
	_, err = st.Check()
	require.NoError(t, err)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
