package store

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// The crash test's stream: logistic, d = 4, 20000 inserts, ids 1..20000,
// checkpoints every 50 events (so that forgets replay up to thousands of
// events and a kill often lands inside one).
const (
	crashD, crashN, crashK, crashSeed = 4, 20000, 50, 21
)

// TestCrashChild is the child process of TestCrash (it does nothing in a
// normal run): it ingests the crash stream in random batches and serves
// random forgets (one in four capped, so served by an intervention; one in
// two named by the ids' keys, KeySource),
// printing an acknowledgement after each commit,
// until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("STORE_CRASH_DIR")
	if dir == "" {
		t.Skip("the child process of TestCrash")
	}
	seed, _ := strconv.ParseUint(os.Getenv("STORE_CRASH_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 7))
	h := genHistory(t, stream.KindLogistic, crashD, crashN, crashSeed)
	s, err := Open(dir)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	var next int64 // the largest id ever ingested
	if err := s.db.QueryRow(`SELECT max(coalesce((SELECT max(id) FROM events), 0), coalesce((SELECT max(id) FROM forgotten), 0))`).Scan(&next); err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	say("READY")
	for next < crashN {
		m := min(int64(1+rng.IntN(60)), crashN-next)
		_, err := s.IngestEvents(keyedFile(h.Events[next:next+m]), IngestOptions{
			BatchSize: 1 + rng.IntN(20),
			OnCommit:  func(r IngestResult) { say("ACK ingest %d", r.LastID) },
		})
		if err != nil {
			say("ERR %v", err)
			os.Exit(3)
		}
		next += m
		if rng.IntN(2) == 0 {
			var ids []int64
			rows, err := s.db.Query(`SELECT id FROM events WHERE payload IS NOT NULL`)
			if err != nil {
				say("ERR %v", err)
				os.Exit(3)
			}
			var all []int64
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				all = append(all, id)
			}
			rows.Close()
			for j := 0; j < 1+rng.IntN(3) && len(all) > 0; j++ {
				ids = append(ids, all[rng.IntN(len(all))])
			}
			if len(ids) == 0 {
				continue
			}
			say("BEGIN forget")
			// One request in four is capped so that it takes the
			// approximate path (a random intervention).
			var o ForgetOptions
			if rng.IntN(4) == 0 {
				o = ForgetOptions{Noise: testNoise(), MaxReplay: 1 + rng.IntN(200), Intervention: Interventions()[rng.IntN(len(Interventions()))]}
			}
			// One request in two names the ids by their keys.
			forget := s.Forget
			if rng.IntN(2) == 0 {
				forget = func(ids []int64, o ForgetOptions) (ForgetReport, error) {
					keys := make([]string, len(ids))
					for i, id := range ids {
						keys[i] = userKey(id)
					}
					return s.ForgetKeys(keys, nil, o)
				}
			}
			if _, err := forget(ids, o); err != nil {
				say("ERR %v", err)
				os.Exit(3)
			}
			parts := make([]string, len(ids))
			for i, id := range ids {
				parts[i] = strconv.FormatInt(id, 10)
			}
			say("ACK forget %s", strings.Join(parts, ","))
		}
	}
	say("DONE")
}

// TestCrash SIGKILLs a child process that ingests and forgets, at random
// times, many times over, and after every kill reopens the store and checks
// that it is consistent (Check: every exact checkpoint is the replay of the
// stored log from θ0, the state the newest checkpoint followed by the log,
// and, unless an approximate request is pending, the replay of the whole
// log, bit for bit), that every acknowledged
// insert is in the log with its payload intact or was forgotten, that
// every acknowledged forget's ids are gone from the log and tombstoned, and
// that the keys table holds exactly the keys of the ids in the log.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	h := genHistory(t, stream.KindLogistic, crashD, crashN, crashSeed)
	s := createStore(t, dir, h.Header, 5, crashK)
	require.NoError(t, s.Close())
	byID := map[int64]stream.Sample{}
	for _, e := range h.Events {
		byID[e.ID] = e.Sample
	}
	ackedIns := map[int64]bool{}
	ackedForget := map[int64]bool{}
	rng := rand.New(rand.NewPCG(crashSeed, 1))
	deadline := time.Now().Add(35 * time.Second)
	var rounds, inForget, inIngest, lostDamaged, lostConsistent int
	done := false
	for round := 0; !done && round < 40 && time.Now().Before(deadline); round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), "STORE_CRASH_DIR="+dir, fmt.Sprintf("STORE_CRASH_SEED=%d", round))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines := make(chan string, 1<<16)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Kill at a random point after the child is ready.
		var last string
		var got []string
		for l := range lines {
			got = append(got, l)
			if l == "READY" {
				break
			}
		}
		timer := time.NewTimer(time.Duration(rng.IntN(150_000)) * time.Microsecond)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				got = append(got, l)
			case <-timer.C:
				cmd.Process.Signal(syscall.SIGKILL)
				for l := range lines {
					got = append(got, l)
				}
				break read
			}
		}
		cmd.Wait()
		rounds++
		for _, l := range got {
			last = l
			f := strings.Fields(l)
			switch {
			case l == "DONE":
				done = true
			case len(f) > 0 && f[0] == "ERR":
				t.Fatalf("child: %s", l)
			case len(f) == 3 && f[1] == "ingest":
				id, _ := strconv.ParseInt(f[2], 10, 64)
				for i := int64(1); i <= id; i++ {
					ackedIns[i] = true
				}
			case len(f) == 3 && f[1] == "forget":
				for _, p := range strings.Split(f[2], ",") {
					id, _ := strconv.ParseInt(p, 10, 64)
					ackedForget[id] = true
				}
			}
		}
		if last == "BEGIN forget" {
			inForget++
		} else if !done {
			inIngest++
		}
		if lostDamaged+lostConsistent < 12 { // each copy costs a full check
			switch lostJournal(t, dir) {
			case "damaged":
				lostDamaged++
			case "consistent":
				lostConsistent++
			}
		}
		verifyAfterCrash(t, dir, byID, ackedIns, ackedForget)
	}
	t.Logf("%d rounds: killed %d times during a forget, %d during ingestion; finished: %v", rounds, inForget, inIngest, done)
	t.Logf("hot journal lost (a copy without it): %d copies refused as damaged, %d consistent", lostDamaged, lostConsistent)
	require.Greater(t, rounds, 5)
}

func verifyAfterCrash(t *testing.T, dir string, byID map[int64]stream.Sample, ackedIns, ackedForget map[int64]bool) {
	t.Helper()
	s, err := Open(dir)
	require.NoError(t, err, "reopen after kill")
	defer s.Close()
	_, err = s.Check()
	require.NoError(t, err, "consistency after kill")
	inLog := map[int64]bool{}
	var erased []int64
	rows, err := s.db.Query(`SELECT id, payload FROM events`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		var p []byte
		require.NoError(t, rows.Scan(&id, &p))
		if p == nil {
			erased = append(erased, id) // an approximate forget's: must be tombstoned
			continue
		}
		z, err := decodePayload(p, crashD)
		require.NoError(t, err)
		want := byID[id]
		require.True(t, z.S == want.S && floatbits.Equal(z.V, want.V), "payload of id %d changed", id)
		inLog[id] = true
	}
	require.NoError(t, rows.Close())
	forgotten := map[int64]bool{}
	rows, err = s.db.Query(`SELECT id FROM forgotten`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		forgotten[id] = true
		require.False(t, inLog[id], "forgotten id %d in the log", id)
	}
	require.NoError(t, rows.Close())
	for _, id := range erased {
		require.True(t, forgotten[id], "erased id %d without a tombstone", id)
	}
	for id := range ackedIns {
		require.True(t, inLog[id] || forgotten[id], "acknowledged insert %d lost", id)
	}
	// The keys commit and are erased with their events: the keys table is
	// exactly the keys of the ids in the log.
	rows, err = s.db.Query(`SELECT key, id FROM keys`)
	require.NoError(t, err)
	nkeys := 0
	for rows.Next() {
		var key string
		var id int64
		require.NoError(t, rows.Scan(&key, &id))
		require.True(t, inLog[id], "key %q of id %d, which is not in the log", key, id)
		require.Equal(t, userKey(id), key)
		nkeys++
	}
	require.NoError(t, rows.Close())
	require.Equal(t, len(inLog), nkeys, "every id in the log has its key")
	for id := range ackedForget {
		require.True(t, forgotten[id], "acknowledged forget of %d lost", id)
	}
}

// lostJournal simulates the loss of the hot rollback journal a kill left:
// it copies the store without its journal into a scratch directory, opens
// the copy and requires it to be either consistent (Check passes) or
// refused by everything that would trust it — Check, an exact forget and a
// release — with ErrCorrupt: never silently used. It returns "consistent",
// "damaged", or "" when the kill left no journal. The store itself is left
// alone (its next open rolls the journal back).
func lostJournal(t *testing.T, dir string) string {
	t.Helper()
	j, err := os.ReadFile(filepath.Join(dir, FileName+"-journal"))
	if err != nil || len(j) == 0 {
		return ""
	}
	db, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	cp := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cp, FileName), db, 0o600))
	s, err := Open(cp)
	if err != nil {
		return "damaged" // refused at the door (not a store, or a schema it cannot read)
	}
	defer s.Close()
	if _, err := s.Check(); err == nil {
		return "consistent"
	} else {
		require.ErrorIs(t, err, ErrInconsistent, "Check of a copy without its journal")
	}
	var id int64
	if s.db.QueryRow(`SELECT id FROM events NOT INDEXED WHERE payload IS NOT NULL LIMIT 1`).Scan(&id) == nil {
		_, err := s.Forget([]int64{id}, ForgetOptions{SkipVacuum: true})
		require.ErrorIs(t, err, ErrInconsistent, "an exact forget on a copy that fails its check")
	}
	_, err = s.Release(testNoise())
	require.Error(t, err, "a release of a copy that fails its check")
	return "damaged"
}
