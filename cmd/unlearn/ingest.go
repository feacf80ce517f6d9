package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"unlearn/dataset"
	"unlearn/internal/floatbits"
	"unlearn/model"
	"unlearn/store"
	"unlearn/stream"
)

func init() { register(newIngestCmd) }

func newIngestCmd() *cobra.Command {
	var (
		dir, data, mapping string
		batch              int
		offset             int64
		df                 dataFlags
		force              bool
	)
	cmd := &cobra.Command{
		Use:   "ingest --store DIR (FILE... | --data FILE)",
		Short: "Append the events of stream files or a data file to a store and train on them",
		Long: `ingest reads each stream file one line at a time (memory does not grow with its
length), checks that its header defines the store's loss, appends its inserts to
the store's log and trains the learner on them (one o-LBFGS step each), storing a
checkpoint every K events.

Every --batch events are one transaction, and each committed one is reported
on standard error as it commits ("committed: 20000 events of FILE through
line 20001, log head at seq 20000"): after a crash or Ctrl-C, every batch
reported committed is in the store, and nothing else. Ctrl-C (or SIGTERM)
stops at the next event: the batch in progress is rolled back and the
command says what was committed. Rerunning the same command resumes: an
event whose id the log already holds with the same payload bytes and the
same key is skipped (counted as "already in the log"); one whose payload or
key differs is refused, naming the id and the line; an event of a forgotten
id is skipped and counted (a forgotten id is never ingested again). A
failing event (a bad payload) rolls back its batch, and the error names its
file and line; the batches before it stay.

When the store has a resolution policy (init --resolve-after-events,
--resolve-within), ingest applies it after the last batch: pending
approximate requests that are due are resolved by exact replay, and ingest
says so.

After ingesting a data file (--data), ingest scores the last 1000 rows it read
(at least 100) with the store's published model and warns on standard error
when it predicts one class for at least 99% of them while at most 90% of them
have that label: whatever the profile and options (progressive statistics
follow the trajectory; an averaging learner's deployed model can answer one
class while its iterates answered both).

Before it appends anything, ingest runs the store's cheap check (SQLite's
quick_check, the checksums and the invariants; one read of the file) and
refuses a damaged store.

Delete events are refused: a deletion request is served by 'unlearn forget',
which erases the data (a delete event would only mark the id).

--data FILE ingests a data set (CSV, LIBSVM or IDX) read as "unlearn convert"
reads it, with the same flags, streamed in file order one row at a time
(memory holds one row and the ids seen, whatever the file's length; a seeded
order would need every row in memory, so ingest has no --shuffle-seed). The
data's loss is the store's: --kind, --lambda and a LIBSVM file's --d default
to the store's, and a value given that differs from it is an error. --sparse
reads LIBSVM rows as sparse payloads (O(nnz) per row); either way the store
steps each payload in its dense form and keeps it in the shorter of a dense
and a sparse encoding, so a sparse file makes a small log.

The data must fit the store's data contract, recorded when the store was
created from a data file (init --data; docs/data.md): every data flag not
given is the contract's (the CSV's --label, --id and --exclude, --classes,
the IDX --scale), and data that does not fit — CSV feature columns swapped,
renamed, missing or extra, another format, other classes or their order,
another image scale or shape — is refused before anything is stored, naming
the field, what the store expects and what the data has. --force-features
takes the features by position when they are the store's under other names.
A stream file is checked against the contract its header records (a
converted data file's); a store created from flags or a stream without a
recorded source checks the loss (kind, d, λ) only.

Ids: a row's id is the file's (the CSV --id integer, or the 1-based row
number; a CSV string id maps to its row number) plus --id-offset. Ids are never
renumbered behind the user's back: an id already in the store, or forgotten, is
refused with the file and line, so ingesting a second file whose rows are
numbered from 1 again needs --id-offset past the first file's ids (for
example the number of rows already ingested).

String ids (keys, such as e-mail addresses) are kept IN the store, beside
their ids, in the transaction of the batch that ingests their rows, so a
crash loses no key of a committed row and every earlier file's keys stay;
'unlearn forget --keys' resolves them, and erases the key with the data. A
key already in the store is refused with the file and line (a key stands for
one id). No mapping file is written unless --mapping FILE is given: that file
is a copy OUTSIDE the store's erasure (a forget does not edit it), written
for the rows committed and replacing any earlier file of that name; it is
refused inside the store directory.`,
		Example: `  unlearn ingest --store model day1.jsonl day2.jsonl
  unlearn ingest --store model --data day1.csv --label outcome --id name
  unlearn ingest --store model --data day2.csv --label outcome --id name --id-offset 100000`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			if batch < 0 {
				return flagError("batch", "%d: must be non-negative (0: one transaction per file)", batch)
			}
			switch {
			case data != "" && len(files) > 0:
				return flagError("data", "give either stream files or --data, not both")
			case data == "" && len(files) == 0:
				return usageError{fmt.Errorf("no stream file to ingest (give one or more FILE arguments, or --data FILE)")}
			case data == "":
				if err := onlyWithData(cmd.Flags()); err != nil {
					return err
				}
				for _, name := range []string{"id-offset", "mapping"} {
					if cmd.Flags().Changed(name) {
						return flagError(name, "only with --data")
					}
				}
			case offset < 0:
				return flagError("id-offset", "%d must be non-negative", offset)
			}
			if mapping != "" && insideDir(dir, mapping) {
				return flagError("mapping", "%s is inside the store directory %s, whose files a forget erases; the mapping file is not erased by a forget, so write it elsewhere (or omit --mapping: the store keeps the keys)", mapping, dir)
			}
			fs := new(paths).store("--store", dir).dataFile("--data", data, &df).out("--mapping", mapping)
			for i, name := range files {
				fs.in(fmt.Sprintf("argument %d", i+1), name)
			}
			if err := fs.check(); err != nil {
				return err
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			// A service that owns the store is its only writer (store.Own).
			if err := s.ClaimWriter(); err != nil {
				return err
			}
			contract, err := model.ContractOf(s.Header())
			if err != nil {
				return fmt.Errorf("the store's header: %w", err)
			}
			in := intoModel{whose: "the store's", contract: contract, kind: s.Header().Kind, byPosition: force}
			// A damaged log is not appended to (an index on id that lost
			// entries would let a duplicate id in).
			if err := s.Verify(); err != nil {
				return err
			}
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			if data != "" {
				return ingestData(ctx, cmd, s, in, data, mapping, &df, offset, batch)
			}
			for _, name := range files {
				if err := notADataFile("", name); err != nil {
					return err
				}
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				if err := checkStreamContract(cmd, in, f, name); err != nil {
					f.Close()
					return err
				}
				res, err := s.Ingest(ctxReader{ctx, f}, ingestOptions(cmd, name, batch))
				f.Close()
				if err != nil {
					return ingestError(ctx, name, res, err)
				}
				printIngested(cmd, name, res)
			}
			return printStoreProgress(cmd, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory (required)")
	f.IntVar(&batch, "batch", 10000, "events per transaction (0: one transaction per file)")
	f.StringVar(&data, "data", "", "ingest this data set (CSV, LIBSVM or IDX; the data flags say how to read it) instead of stream files")
	f.Int64Var(&offset, "id-offset", 0, "with --data: add this to every id of the file (ids already in the store are refused)")
	f.StringVar(&mapping, "mapping", "", "with --data: also write the string-id mapping (id,key) to this file, which forget does NOT erase (default: none; the store keeps the keys)")
	f.BoolVar(&force, "force-features", false, forceFeaturesHelp)
	df.keys = "string ids are mapped to row numbers and kept in the store as keys; see --mapping"
	df.lossFrom = "the store's"
	df.add(f, 0)
	return cmd
}

// checkStreamContract checks the contract of the stream file f (named
// name, an argument of ingest) against the store's, and rewinds f.
func checkStreamContract(cmd *cobra.Command, in intoModel, f *os.File, name string) error {
	rd, err := stream.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := in.checkContract(cmd.ErrOrStderr(), "", name, rd.Header(), nil); err != nil {
		return err
	}
	_, err = f.Seek(0, io.SeekStart)
	return err
}

// ingestOptions are ingest's store options for the file name: resumable,
// each committed batch reported on standard error.
func ingestOptions(cmd *cobra.Command, name string, batch int) store.IngestOptions {
	return store.IngestOptions{BatchSize: batch, SkipIdentical: true, OnCommit: func(r store.IngestResult) {
		where := ""
		if r.LastLine > 0 {
			where = fmt.Sprintf(" through line %d", r.LastLine)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "committed: %s of %s%s, log head at seq %d\n", plural(r.Events, "event", "events"), name, where, r.Head)
	}}
}

// printIngested reports a file's ingest.
func printIngested(cmd *cobra.Command, name string, res store.IngestResult) {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s: %s in %s, %s; log head at seq %d\n",
		name, plural(res.Events, "event", "events"), plural(res.Batches, "transaction", "transactions"), plural(res.Checkpoints, "checkpoint", "checkpoints"), res.Head)
	if res.Skipped > 0 {
		fmt.Fprintf(out, "%s: skipped %s already in the log, byte for byte (a resumed ingest)\n", name, plural(res.Skipped, "event", "events"))
	}
	if res.Clipped > 0 {
		fmt.Fprintf(out, "%s: clipped %s to the sample bound (‖x‖ ≤ B: the certifiable profile scales a row above it onto the ball)\n", name, plural(res.Clipped, "row", "rows"))
	}
	if res.SkippedForgotten > 0 {
		fmt.Fprintf(out, "%s: skipped %s of forgotten ids (a forgotten id is never ingested again)\n", name, plural(res.SkippedForgotten, "event", "events"))
	}
	if r := res.Resolved; r != nil {
		fmt.Fprintf(out, "resolution policy: request %d resolved pending approximate %s %s by exact replay of %d events (the state is exact again)\n",
			r.Request, map[bool]string{true: "request", false: "requests"}[len(r.Resolved) == 1], joinInts(r.Resolved), r.EventsReplayed)
	}
}

// ingestError says what was committed before an ingest failed or was
// interrupted, and how to resume.
func ingestError(ctx context.Context, name string, res store.IngestResult, err error) error {
	if ctx.Err() != nil {
		where := ""
		if res.LastLine > 0 {
			where = fmt.Sprintf(" through line %d", res.LastLine)
		}
		return fmt.Errorf("%s: interrupted: %s committed%s (log head at seq %d), the batch in progress rolled back; rerun the same command to resume (events already in the log are skipped)",
			name, plural(res.Events, "event", "events"), where, res.Head)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// ctxReader is an io.Reader that fails once ctx is cancelled, so that an
// interrupted ingest stops at its next read (the batch in progress is
// rolled back).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ingestData is ingest --data: the data file streamed into the store,
// read as the store's contract says unless the flags say otherwise.
func ingestData(ctx context.Context, cmd *cobra.Command, s *store.Store, in intoModel, path, mapping string, df *dataFlags, offset int64, batch int) error {
	opts, err := df.options(cmd.Flags())
	if err != nil {
		return err
	}
	want := s.Header()
	lossFromModel(cmd.Flags(), &opts, path, want.Kind, want.D, want.Lambda)
	in.contractDefaults(cmd.Flags(), &opts, path)
	if err := requireEveryClassFirst(s, path, opts); err != nil {
		return err
	}
	hdr, r, err := in.openData(path, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	// The contract first: a CSV with a column missing or extra has another
	// d, and the contract says which column.
	if hdr.Kind == want.Kind {
		if err := in.checkContract(cmd.ErrOrStderr(), "data", path, hdr, r); err != nil {
			return err
		}
	}
	switch {
	case hdr.Kind != want.Kind && !cmd.Flags().Changed("kind"):
		return fmt.Errorf("--data %s: the store's loss is %s; a data file's is logistic, multinomial or regression (ingest stream files into this store)", path, want.Kind)
	case hdr.Kind != want.Kind:
		return flagError("kind", "%s, but the store's loss is %s", hdr.Kind, want.Kind)
	case hdr.D != want.D && cmd.Flags().Changed("d"):
		return flagError("d", "%d, but the store's d is %d", hdr.D, want.D)
	case hdr.D != want.D:
		return fmt.Errorf("--data %s: d = %d (the file's features), but the store's d is %d", path, hdr.D, want.D)
	case hdr.K != want.K:
		return flagError("classes", "%d classes, but the store's loss has %d", hdr.K, want.K)
	case !floatbits.Equal([]float64{hdr.Lambda}, []float64{want.Lambda}):
		return flagError("lambda", "%v, but the store's λ is %v", hdr.Lambda, want.Lambda)
	}
	src := &shiftedIDs{ctx: ctx, r: r, offset: offset, path: path, recent: &recentRows{}}
	res, err := s.IngestEvents(src, ingestOptions(cmd, path, batch))
	if mapping != "" {
		// A copy of the mapping of the committed rows (a prefix of the
		// file order), outside the store's erasure.
		m := r.Mapping()
		m = m[:min(len(m), res.Events)]
		for i := range m {
			m[i].ID += offset
		}
		if werr := writeMapping(cmd.ErrOrStderr(), mapping, m); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil && ctx.Err() != nil {
		return ingestError(ctx, path, res, err)
	}
	if err != nil {
		var pe *dataset.PosError
		if errors.As(err, &pe) {
			if errors.Is(err, dataset.ErrIndexRange) {
				err = fmt.Errorf("%w (the store's d was fixed at init: a store for larger indices needs a new init with a larger --d)", err)
			}
			return dataError(err)
		}
		if errors.Is(err, store.ErrEvent) && offset == 0 {
			err = fmt.Errorf("%w (a data file's ids are its own, plus --id-offset)", err)
		}
		return fmt.Errorf("--data %s: %w", path, err)
	}
	reportDataStats(cmd.ErrOrStderr(), r.Stats(), opts.Classes)
	printIngested(cmd, path, res)
	if err := printStoreProgress(cmd, s); err != nil {
		return err
	}
	return warnStoreSingleClass(cmd.ErrOrStderr(), s, src.recent)
}

// recentRows keeps copies of the last finalCheckRows inserts' samples
// read (a ring), for the single-class check after an ingest.
type recentRows struct {
	rows []stream.Sample
	next int
}

func (r *recentRows) add(z stream.Sample) {
	c := stream.Sample{V: append([]float64(nil), z.V...), S: z.S, Idx: append([]int32(nil), z.Idx...)}
	if len(r.rows) < finalCheckRows {
		r.rows = append(r.rows, c)
		return
	}
	r.rows[r.next] = c
	r.next = (r.next + 1) % finalCheckRows
}

// warnStoreSingleClass scores the rows just ingested (the last
// finalCheckRows, rows — clipped as the store clips them) with the
// store's published model, the one its predictions use, and warns when it
// predicts one class for them (warnSingleClass): whatever the options,
// progressive statistics or not — they follow the trajectory, and an
// averaging learner's deployed model can predict one class while its
// iterates predicted both.
func warnStoreSingleClass(w io.Writer, s *store.Store, recent *recentRows) error {
	if recent == nil || len(recent.rows) == 0 {
		return nil
	}
	l, _, err := s.PublishedState()
	if err != nil {
		return err
	}
	st, err := s.Status()
	if err != nil {
		return err
	}
	cfg := s.LearnerConfig()
	i := 0
	warnSingleClass(w, l, s.Header(), func() (stream.Sample, bool) {
		if i >= len(recent.rows) {
			return stream.Sample{}, false
		}
		z := recent.rows[i]
		if st.ClipToBound && z.Idx == nil {
			cfg.ClipToBound(z.V)
		}
		i++
		return z, true
	})
	return nil
}

// printStoreProgress prints the progressive statistics of the store's
// state and their warnings, if its learner keeps them.
func printStoreProgress(cmd *cobra.Command, s *store.Store) error {
	if !s.LearnerConfig().Progress {
		return nil
	}
	l, _, err := s.PublishedState() // never the un-noised trajectory's
	if err != nil {
		return err
	}
	printProgress(cmd.OutOrStdout(), cmd.ErrOrStderr(), l, s.Header())
	return nil
}

// insideDir reports whether the file name lies in directory dir or below
// it (after resolving symbolic links of the parts that exist).
func insideDir(dir, name string) bool {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return filepath.Clean(p)
		}
		if r, err := filepath.EvalSymlinks(a); err == nil {
			return r
		}
		if r, err := filepath.EvalSymlinks(filepath.Dir(a)); err == nil {
			return filepath.Join(r, filepath.Base(a))
		}
		return a
	}
	rel, err := filepath.Rel(abs(dir), abs(name))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// shiftedIDs adds --id-offset to the ids of a data file's events; its
// Line method gives the store's errors the file's line.
type shiftedIDs struct {
	ctx    context.Context // cancelled by Ctrl-C: Next fails, the batch rolls back
	r      *dataset.Reader
	offset int64
	path   string
	// recent, if not nil, keeps the last inserts read (warnStoreSingleClass).
	recent *recentRows
}

func (s *shiftedIDs) Next() (stream.Event, error) {
	if err := s.ctx.Err(); err != nil {
		return stream.Event{}, err
	}
	e, err := s.r.Next()
	if err != nil {
		return e, err
	}
	if e.ID > math.MaxInt64-s.offset {
		return stream.Event{}, flagError("id-offset", "%d: id %d of %s (line %d) would overflow", s.offset, e.ID, s.path, s.r.Line())
	}
	e.ID += s.offset
	if s.recent != nil && e.Op == stream.Insert {
		s.recent.add(e.Sample)
	}
	return e, nil
}

func (s *shiftedIDs) Line() int { return s.r.Line() }

// Key makes shiftedIDs a store.KeySource: the store keeps the row's string id.
func (s *shiftedIDs) Key() string { return s.r.Key() }
