package serve

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/sign"
	"unlearn/store"
	"unlearn/stream"
)

// TestServeOwnsStore: while a service runs in another process, every
// writer of the store is refused naming it (its process id and address),
// a second service refuses to start, readers and token commands keep
// working; once the service is killed with -9 the kernel releases its lock
// and a writer proceeds.
func TestServeOwnsStore(t *testing.T) {
	f := newCrashFixture(t, 3, 10)
	c := startChild(t, f.dir, time.Minute, time.Second)
	defer func() { _ = c.cmd.Process.Kill(); _ = c.cmd.Wait() }()

	st, err := store.Open(f.dir) // reading works
	require.NoError(t, err)
	_, err = st.Status()
	require.NoError(t, err)
	_, err = st.Ingest(strings.NewReader(insertStream(3, 1)), store.IngestOptions{})
	var oe *store.OwnedError
	require.ErrorAs(t, err, &oe, "an ingest while the service owns the store")
	require.ErrorIs(t, err, store.ErrOwned)
	require.Equal(t, c.cmd.Process.Pid, oe.Owner.PID)
	require.Contains(t, err.Error(), fmt.Sprintf("process id %d", c.cmd.Process.Pid))
	require.Contains(t, err.Error(), "send the request to the service")
	_, err = st.Forget([]int64{1}, store.ForgetOptions{})
	require.ErrorIs(t, err, store.ErrOwned, "a forget")
	require.ErrorIs(t, st.Vacuum(), store.ErrOwned, "a VACUUM")
	require.ErrorIs(t, st.ClaimWriter(), store.ErrOwned)
	_, _, err = st.CreateToken("later", []string{"read"})
	require.NoError(t, err, "tokens are created while the service runs (it reads them again)")

	// A second service over the same store refuses to start.
	_, err = New(st, Options{Key: mustKey(t)})
	require.ErrorIs(t, err, store.ErrOwned)

	// kill -9: the lock goes with the process.
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	_ = c.cmd.Wait()
	_, err = st.Ingest(strings.NewReader(insertStream(3, 1)), store.IngestOptions{})
	require.NoError(t, err, "after the owner died")

	// This handle wrote and is still open: a service cannot take the store.
	st2, err := store.Open(f.dir)
	require.NoError(t, err)
	defer st2.Close()
	err = st2.Own(store.Owner{PID: 1})
	require.ErrorIs(t, err, store.ErrOwned)
	require.Contains(t, err.Error(), "another process is writing")
	require.NoError(t, st.Close())
	require.NoError(t, st2.Own(store.Owner{PID: 1}), "once the writer closed")
}

// insertStream is a stream of n insert events of dimension d (ids from 1000).
func insertStream(d, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"format":%q,"kind":"logistic","d":%d,"lambda":0.05}`+"\n", stream.FormatV1, d)
	for i := range n {
		fmt.Fprintf(&b, `{"op":"insert","id":%d,"x":[%s],"y":1}`+"\n", 1000+i, strings.TrimSuffix(strings.Repeat("0.5,", d), ","))
	}
	return b.String()
}

func mustKey(t *testing.T) *sign.Secret {
	key, err := sign.Generate()
	require.NoError(t, err)
	return key
}
