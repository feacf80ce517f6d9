package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// fillSums is the Go part of the migration to schema version 6: it stores
// the sum (checksum.go) of every row already in the store, and of its
// configuration, in the migration's transaction. It sums the bytes as they
// are: a store damaged before the upgrade is not repaired by it, and the
// full check (unlearn status --check) replays the log against the
// checkpoints after the upgrade as before it.
func fillSums(ctx context.Context, tx *sql.Tx) error {
	meta, err := readMeta(ctx, tx)
	if err != nil {
		return err
	}
	if len(meta) == 0 {
		return nil // a store being created: initialize writes every row with its sum
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta (key, value) VALUES ('config_sha256', ?)`, fmt.Sprintf("%x", sumConfig(meta))); err != nil {
		return err
	}
	if err := fillEventSums(ctx, tx); err != nil {
		return err
	}
	head, err := strconv.ParseInt(meta["head"], 10, 64)
	if err != nil {
		return fmt.Errorf("%w: meta \"head\" = %q", ErrSchema, meta["head"])
	}
	for _, q := range []struct{ sel, upd string }{
		{`SELECT seq, exact, t, origin, snapshot FROM checkpoints`, `UPDATE checkpoints SET sha256 = ? WHERE seq = ?`},
		{`SELECT one, exact, 0, '', snapshot FROM state`, `UPDATE state SET sha256 = ? WHERE one = ?`},
	} {
		var keys []int64
		var sums [][]byte
		rows, err := tx.QueryContext(ctx, q.sel)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k int64
			var exact bool
			var t int
			var origin string
			var snap []byte
			if err := rows.Scan(&k, &exact, &t, &origin, &snap); err != nil {
				rows.Close()
				return err
			}
			keys = append(keys, k)
			if origin == "" {
				sums = append(sums, sumState(exact, head, snap))
			} else {
				sums = append(sums, sumCheckpoint(k, exact, t, origin, snap))
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for i, k := range keys {
			if _, err := tx.ExecContext(ctx, q.upd, sums[i], k); err != nil {
				return err
			}
		}
	}
	if err := fillReleaseSums(ctx, tx); err != nil {
		return err
	}
	return fillKeySums(ctx, tx)
}

// fillEventSums sums the log in pages of pageRows rows (keyset on seq),
// so that memory does not grow with it.
func fillEventSums(ctx context.Context, tx *sql.Tx) error {
	type row struct {
		seq, id int64
		sum     []byte
	}
	from := int64(-1)
	for {
		rows, err := tx.QueryContext(ctx, `SELECT seq, id, payload IS NULL, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?`, from, pageRows)
		if err != nil {
			return err
		}
		var page []row
		for rows.Next() {
			var r row
			var erased bool
			var p []byte
			if err := rows.Scan(&r.seq, &r.id, &erased, &p); err != nil {
				rows.Close()
				return err
			}
			r.sum = sumEvent(r.seq, r.id, p, erased)
			page = append(page, r)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for _, r := range page {
			if _, err := tx.ExecContext(ctx, `UPDATE events SET sha256 = ? WHERE seq = ?`, r.sum, r.seq); err != nil {
				return err
			}
		}
		if len(page) < pageRows {
			return nil
		}
		from = page[len(page)-1].seq
	}
}

func fillReleaseSums(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT release, time, head, path, exact, epsilon, delta, file, certificate FROM releases`)
	if err != nil {
		return err
	}
	sums := map[int64][]byte{}
	for rows.Next() {
		var id, head int64
		var tm, path string
		var exact bool
		var eps, delta float64
		var file, cert []byte
		if err := rows.Scan(&id, &tm, &head, &path, &exact, &eps, &delta, &file, &cert); err != nil {
			rows.Close()
			return err
		}
		sums[id] = sumRelease(id, tm, head, path, exact, eps, delta, file, cert)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for id, sum := range sums {
		if _, err := tx.ExecContext(ctx, `UPDATE releases SET sha256 = ? WHERE release = ?`, sum, id); err != nil {
			return err
		}
	}
	return nil
}

func fillKeySums(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT key, id FROM keys`)
	if err != nil {
		return err
	}
	sums := map[string][]byte{}
	for rows.Next() {
		var key string
		var id int64
		if err := rows.Scan(&key, &id); err != nil {
			rows.Close()
			return err
		}
		sums[key] = sumKey(key, id)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for key, sum := range sums {
		if _, err := tx.ExecContext(ctx, `UPDATE keys SET sha256 = ? WHERE key = ?`, sum, key); err != nil {
			return err
		}
	}
	return nil
}
