package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"unlearn/internal/atomicfile"
	"unlearn/internal/strictjson"
)

// ManifestFormat is the format tag of a results folder's manifest.
const ManifestFormat = "unlearn-results/v1"

// Results are the records of a grid, or of one shard of it, with the
// manifest that says which grid and which configurations they are.
type Results struct {
	Manifest Manifest
	// Records are sorted by Index.
	Records []*Record
}

// Manifest describes a results folder.
type Manifest struct {
	// Format is ManifestFormat.
	Format string `json:"format"`
	// Grid is the whole grid the records belong to, and Hash its
	// [Grid.Hash] with Methods.
	Grid Grid   `json:"grid"`
	Hash string `json:"hash"`
	// Methods are the operators' names, in order.
	Methods []string `json:"methods"`
	// Shards lists the shards the records came from ("all" for a single
	// run; several after a merge), and Indices the configurations present,
	// ascending.
	Shards  []string `json:"shards"`
	Indices []int    `json:"indices"`
	// Timing is the wall-clock part, nil once zeroed.
	Timing *GridTiming `json:"timing,omitempty"`
	// Provenance names the command and version that wrote the folder; nil
	// for folders written before it was recorded, and for results built in
	// code (RunGrid and Merge leave it to the caller).
	Provenance *Provenance `json:"provenance,omitempty"`
}

// GridTiming is the non-deterministic part of a manifest.
type GridTiming struct {
	// Wall is the wall time of the grid run (the sum over shards after a
	// merge), Workers the number of parallel workers (of the first shard).
	Wall    time.Duration `json:"wall_ns"`
	Workers int           `json:"workers"`
}

// Complete reports whether the results cover every configuration of the
// grid.
func (r *Results) Complete() bool { return len(r.Records) == len(r.Manifest.Grid.Configs) }

// ZeroTiming removes every wall-clock measurement (manifest and records).
func (r *Results) ZeroTiming() {
	r.Manifest.Timing = nil
	for _, rec := range r.Records {
		rec.ZeroTiming()
	}
}

// Tables returns the five summary tables of the records (see
// [BuildTables]).
func (r *Results) Tables(opt TableOptions) ([]*Table, error) {
	if r.Manifest.Grid.Experiment == ExperimentDecay {
		return []*Table{DecayTable(r.Records)}, nil
	}
	return BuildTables(r.Records, opt)
}

// recordFile returns the file name of a record within records/.
func recordFile(r *Record) string { return fmt.Sprintf("%04d-%s.json", r.Index, r.ID) }

// WriteResults writes a results folder at dir, atomically:
//
//	manifest.json        the Manifest
//	records/NNNN-ID.json one run record per configuration
//	series/NNNN-ID.csv   per-step series, for records that kept them
//	summaries.csv        one row per configuration and method
//	tables.md            the summary tables in Markdown (Experiment 2:
//	                     the five tables; Experiment 1: the decay table)
//	tables/NAME.csv      each table as CSV
//
// Everything is written into a temporary folder beside dir, which is
// renamed to dir only once every file is complete; each file is itself
// written to a temporary name, synced and renamed. An interrupted run
// therefore leaves either the previous dir or the new one, plus at worst a
// hidden ".dir.tmp-*" folder, never a half-written folder that looks
// complete. An existing dir is replaced only if it is empty or a results
// folder (it holds a manifest.json): WriteResults refuses to delete
// anything else.
func WriteResults(dir string, res *Results, opt TableOptions) error {
	tables, err := res.Tables(opt)
	if err != nil {
		return err
	}
	return replaceDir(dir, func(tmp string) error {
		for _, sub := range []string{"records", "series", "tables"} {
			if err := os.Mkdir(filepath.Join(tmp, sub), 0o755); err != nil {
				return fmt.Errorf("experiment: %w", err)
			}
		}
		for _, r := range res.Records {
			if err := writeFile(filepath.Join(tmp, "records", recordFile(r)), r.WriteJSON); err != nil {
				return err
			}
			if len(r.Methods) > 0 && r.Methods[0].Series != nil {
				name := fmt.Sprintf("%04d-%s.csv", r.Index, r.ID)
				if err := writeFile(filepath.Join(tmp, "series", name), r.WriteSeriesCSV); err != nil {
					return err
				}
			}
		}
		if err := writeFile(filepath.Join(tmp, "summaries.csv"), func(w io.Writer) error {
			return WriteSummariesCSV(w, res.Records)
		}); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(tmp, "tables.md"), func(w io.Writer) error {
			return WriteTablesMarkdown(w, tables)
		}); err != nil {
			return err
		}
		for _, t := range tables {
			if err := writeFile(filepath.Join(tmp, "tables", t.Name+".csv"), t.WriteCSV); err != nil {
				return err
			}
		}
		// The manifest last: a folder with a manifest is a finished one.
		return writeFile(filepath.Join(tmp, "manifest.json"), func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(res.Manifest)
		})
	})
}

func writeFile(path string, write func(io.Writer) error) error {
	if err := atomicfile.WriteFile(path, 0o644, write); err != nil {
		return fmt.Errorf("experiment: writing %s: %w", path, err)
	}
	return nil
}

// WriteRecordFile writes one record to path atomically (temporary file,
// sync, rename).
func WriteRecordFile(path string, r *Record) error { return writeFile(path, r.WriteJSON) }

// replaceDir fills a new temporary folder beside dir and swaps it in (see
// [atomicfile.ReplaceDir]). It refuses, with an error wrapping ErrConfig, to
// replace anything but a missing path, an empty folder or a results folder.
func replaceDir(dir string, fill func(tmp string) error) error {
	err := atomicfile.ReplaceDir(dir, isResultsDir, fill)
	if errors.Is(err, atomicfile.ErrNotReplaceable) {
		return fmt.Errorf("%w: output: %w", ErrConfig, err)
	}
	return err
}

// isResultsDir accepts a folder holding a manifest.json.
func isResultsDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		return errors.New("not a results folder (no manifest.json)")
	}
	return nil
}

// ReadResults reads a results folder written by [WriteResults]. A folder
// without manifest.json is not a (finished) results folder.
func ReadResults(dir string) (*Results, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRecord, dir, err)
	}
	var res Results
	if err := strictjson.Decode(bytes.NewReader(b), &res.Manifest); err != nil {
		return nil, fmt.Errorf("%w: %s/manifest.json: %w", ErrRecord, dir, err)
	}
	if res.Manifest.Format != ManifestFormat {
		return nil, fmt.Errorf("%w: %s/manifest.json: format %q, want %q", ErrRecord, dir, res.Manifest.Format, ManifestFormat)
	}
	for _, i := range res.Manifest.Indices {
		if i < 0 || i >= len(res.Manifest.Grid.Configs) {
			return nil, fmt.Errorf("%w: %s: index %d outside the grid of %d configurations", ErrRecord, dir, i, len(res.Manifest.Grid.Configs))
		}
		c := res.Manifest.Grid.Configs[i]
		name := filepath.Join(dir, "records", fmt.Sprintf("%04d-%s.json", i, c.ID()))
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrRecord, dir, err)
		}
		r, err := ReadRecord(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if r.Index != i {
			return nil, fmt.Errorf("%w: %s holds index %d", ErrRecord, name, r.Index)
		}
		res.Records = append(res.Records, r)
	}
	return &res, nil
}

// Merge joins the results of shards of one grid into the results a single
// run of the union would give (records in index order, the same tables).
// It refuses, with an error wrapping ErrIncompatible, results of different
// grids, methods or formats; with ErrOverlap, two results holding the same
// configuration; and, unless allowPartial, with ErrIncomplete a union that
// does not cover the whole grid. Timing is summed over the parts.
func Merge(parts []*Results, allowPartial bool) (*Results, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: nothing to merge", ErrRecord)
	}
	first := parts[0].Manifest
	out := &Results{Manifest: Manifest{
		Format: ManifestFormat, Grid: first.Grid, Hash: first.Hash, Methods: first.Methods,
	}}
	owner := map[int]int{} // config index → part
	var timing *GridTiming
	for p, part := range parts {
		m := part.Manifest
		if m.Hash != first.Hash || !slices.Equal(m.Methods, first.Methods) {
			return nil, fmt.Errorf("%w: part %d (shards %v, grid %q, hash %.12s) and part 0 (shards %v, grid %q, hash %.12s) come from different grids or methods",
				ErrIncompatible, p, m.Shards, m.Grid.Name, m.Hash, first.Shards, first.Grid.Name, first.Hash)
		}
		for _, r := range part.Records {
			if q, dup := owner[r.Index]; dup {
				return nil, fmt.Errorf("%w: configuration %d (%s) is in part %d (shards %v) and part %d (shards %v)",
					ErrOverlap, r.Index, r.ID, q, parts[q].Manifest.Shards, p, m.Shards)
			}
			owner[r.Index] = p
			out.Records = append(out.Records, r)
		}
		out.Manifest.Shards = append(out.Manifest.Shards, m.Shards...)
		if m.Timing != nil {
			if timing == nil {
				timing = &GridTiming{Workers: m.Timing.Workers}
			}
			timing.Wall += m.Timing.Wall
		}
	}
	slices.SortFunc(out.Records, func(a, b *Record) int { return a.Index - b.Index })
	for _, r := range out.Records {
		out.Manifest.Indices = append(out.Manifest.Indices, r.Index)
	}
	out.Manifest.Timing = timing
	if !allowPartial && !out.Complete() {
		var missing []int
		for i := range out.Manifest.Grid.Configs {
			if _, ok := owner[i]; !ok {
				missing = append(missing, i)
			}
		}
		return nil, fmt.Errorf("%w: %d of %d configurations missing (first: %v)", ErrIncomplete,
			len(missing), len(out.Manifest.Grid.Configs), missing[:min(len(missing), 10)])
	}
	return out, nil
}

// WriteSummariesCSV writes one row per record and method: the
// configuration, the method, its costs and its summaries.
func WriteSummariesCSV(w io.Writer, recs []*Record) error {
	cw := csv.NewWriter(w)
	head := []string{"index", "id", "kind", "d", "T", "kappa", "seed", "t_del", "horizon", "tau", "eta", "mode",
		"count", "method", "label", "events_replayed", "grad_evals", "skipped",
		"initial_param", "initial_memory", "initial_state", "final_state", "auc", "update_auc",
		"direct_mass", "clearance", "exact", "rho_p1", "rho_p2", "rho_p3"}
	if err := cw.Write(head); err != nil {
		return err
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	optG := func(v *float64) string { // an absent value is an empty field
		if v == nil {
			return ""
		}
		return g(*v)
	}
	for _, r := range recs {
		kappa, seed := "", ""
		if s := r.Source.Generated; s != nil {
			kappa, seed = g(s.Kappa), strconv.FormatUint(s.Seed, 10)
		}
		c := r.Config
		for _, m := range r.Methods {
			s := m.Summary
			row := []string{strconv.Itoa(r.Index), r.ID, r.Source.Kind, strconv.Itoa(r.Source.D),
				strconv.Itoa(r.Source.T), kappa, seed, strconv.Itoa(c.TDel), strconv.Itoa(c.Horizon),
				strconv.Itoa(c.Tau), g(c.Eta), c.Mode, strconv.Itoa(len(r.U)), m.Name, m.Label,
				strconv.Itoa(m.EventsReplayed), strconv.Itoa(m.GradEvals), strconv.Itoa(m.Skipped),
				g(s.InitialParam), g(s.InitialMemory), g(s.InitialState), g(s.FinalState), g(s.AUC),
				g(s.UpdateAUC), strconv.Itoa(s.DirectMass), strconv.Itoa(s.Clearance),
				strconv.FormatBool(s.Exact), optG(s.Rho[0]), optG(s.Rho[1]), optG(s.Rho[2])}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSeriesCSV writes the record's per-step series in long form: one row
// per method and step k = 0..H with E_w, E_Z, E_Theta, D_upd (NaN where
// undefined) and M_direct. It returns an error wrapping ErrRecord if the
// record kept no series.
func (r *Record) WriteSeriesCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"method", "k", "E_w", "E_Z", "E_Theta", "D_upd", "M_direct"}); err != nil {
		return err
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	row := make([]string, 7)
	for _, m := range r.Methods {
		s := m.Series
		if s == nil {
			return fmt.Errorf("%w: record %s: method %s kept no series", ErrRecord, r.ID, m.Name)
		}
		for k := range s.Ew {
			row[0], row[1] = m.Name, strconv.Itoa(k)
			row[2], row[3], row[4], row[5] = g(s.Ew[k]), g(s.EZ[k]), g(s.ETheta[k]), g(s.Dupd[k])
			row[6] = strconv.Itoa(s.Mdirect[k])
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
