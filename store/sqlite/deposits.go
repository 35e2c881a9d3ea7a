package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/provenance"
)

// ErrDigestMismatch is returned (in an [*Error]) by [Deposits.Put] for a
// full deposit whose Digest is not its envelope's.
var ErrDigestMismatch = errors.New("sqlite: deposit digest does not match its envelope")

// Deposits keeps a crawl's deposits ([crawl.Deposits]) in the DB's deposit
// and envelope tables: the envelope bytes as a BLOB, stored once per digest
// however many sources deposit it, the proof of fetch and the extracted
// article as JSON, an excerpt deposit's story as JSON, the source and the
// read instant. A Put is one IMMEDIATE transaction committed with
// synchronous=FULL: when it returns nil the deposit is on disk and
// survives a crash of the process or of the machine. List checks each
// envelope against its digest and reports a damaged one as [ErrCorrupt].
// Deposits are never swept; [Deposits.Withdraw] removes a source's, and
// the envelopes no other deposit shares. It is safe for concurrent use.
type Deposits struct{ db *DB }

// Deposits returns the DB's deposit store.
func (db *DB) Deposits() *Deposits { return &Deposits{db} }

var _ crawl.Deposits = (*Deposits)(nil)

func jsonOrNull(v any, isNil bool) (sql.NullString, error) {
	if isNil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	return sql.NullString{String: string(b), Valid: true}, err
}

// Put implements [crawl.Deposits].
func (s *Deposits) Put(ctx context.Context, d *crawl.Deposit) (bool, error) {
	op, key := "deposit put", d.Source+" "+d.Digest
	if d.Digest == "" {
		return false, &Error{Op: op, Key: d.Source + " " + d.Key, Err: crawl.ErrNoDigest}
	}
	var envDigest string
	if d.Envelope != nil {
		envDigest = provenance.DigestOf(d.Envelope)
		if envDigest != d.Digest {
			return false, &Error{Op: op, Key: key, Err: fmt.Errorf("%w: envelope is %s", ErrDigestMismatch, envDigest)}
		}
	}
	proof, err := jsonOrNull(d.Proof, d.Proof == nil)
	if err != nil {
		return false, &Error{Op: op, Key: key, Err: err}
	}
	article, err := jsonOrNull(d.Article, d.Article == nil)
	if err != nil {
		return false, &Error{Op: op, Key: key, Err: err}
	}
	excerpt, err := jsonOrNull(d.Excerpt, d.Excerpt == nil)
	if err != nil {
		return false, &Error{Op: op, Key: key, Err: err}
	}
	var added bool
	err = s.db.write(ctx, op, key, true, func(tx *sql.Tx) error {
		var one int
		switch err := tx.StmtContext(ctx, s.db.stmts.depExists).QueryRowContext(ctx, d.Source, d.Digest).Scan(&one); {
		case err == nil:
			return nil // already deposited: nothing written, nothing to sync
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		var envID sql.NullInt64
		if d.Envelope != nil {
			if _, err := tx.StmtContext(ctx, s.db.stmts.envPut).ExecContext(ctx, envDigest, len(d.Envelope), d.Envelope); err != nil {
				return err
			}
			if err := tx.StmtContext(ctx, s.db.stmts.envID).QueryRowContext(ctx, envDigest).Scan(&envID); err != nil {
				return err
			}
		}
		res, err := tx.StmtContext(ctx, s.db.stmts.depPut).ExecContext(ctx, d.Source, d.Key, d.URL, toNS(d.ReadAt), d.Digest,
			d.MediaType, envID, proof, article, excerpt, toNS(s.db.clk.Now()))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		added = n == 1
		return err
	})
	if err != nil {
		return false, err
	}
	return added, nil
}

// List implements [crawl.Deposits]. Each deposit is decoded afresh; an
// envelope that no longer matches its digest, or JSON that no longer
// parses, fails the List with [ErrCorrupt] rather than handing back damaged
// data.
func (s *Deposits) List(ctx context.Context, source string, since time.Time) ([]*crawl.Deposit, error) {
	op := "deposit list"
	if err := s.db.check(op, source); err != nil {
		return nil, err
	}
	rows, err := s.db.stmts.depList.QueryContext(ctx, source, toNS(since))
	if err != nil {
		return nil, wrap(op, source, err)
	}
	defer rows.Close()
	var out []*crawl.Deposit
	for rows.Next() {
		d := &crawl.Deposit{Source: source}
		var readAt int64
		var envDigest, proof, article, excerpt sql.NullString
		if err := rows.Scan(&d.Key, &d.URL, &readAt, &d.Digest, &d.MediaType, &envDigest, &d.Envelope, &proof, &article, &excerpt); err != nil {
			return nil, wrap(op, source, err)
		}
		d.ReadAt = fromNS(readAt)
		key := source + " " + d.Digest
		if envDigest.Valid {
			if d.Envelope == nil {
				d.Envelope = []byte{}
			}
			if got := provenance.DigestOf(d.Envelope); got != envDigest.String {
				return nil, &Error{Op: op, Key: key, Kind: ErrCorrupt, Err: fmt.Errorf("envelope of %d bytes hashes to %s", len(d.Envelope), got)}
			}
		}
		for _, f := range []struct {
			col sql.NullString
			dst any
		}{
			{proof, &d.Proof}, {article, &d.Article}, {excerpt, &d.Excerpt},
		} {
			if !f.col.Valid {
				continue
			}
			if err := json.Unmarshal([]byte(f.col.String), f.dst); err != nil {
				return nil, &Error{Op: op, Key: key, Kind: ErrCorrupt, Err: err}
			}
		}
		out = append(out, d)
	}
	return out, wrap(op, source, rows.Err())
}

// Withdraw implements [crawl.Deposits], durably (synchronous=FULL), in one
// transaction: the source's deposits go, and so do the envelopes that no
// other source's deposit shares.
func (s *Deposits) Withdraw(ctx context.Context, source string) (int, error) {
	n := 0
	err := s.db.write(ctx, "deposit withdraw", source, true, func(tx *sql.Tx) error {
		rows, err := tx.StmtContext(ctx, s.db.stmts.depWithdraw).QueryContext(ctx, source)
		if err != nil {
			return err
		}
		var envs []int64
		for rows.Next() {
			var id sql.NullInt64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			n++
			if id.Valid {
				envs = append(envs, id.Int64)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		drop := tx.StmtContext(ctx, s.db.stmts.envDropOrphan)
		for _, id := range envs {
			if _, err := drop.ExecContext(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
