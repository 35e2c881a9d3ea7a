package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
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
// article as JSON, an excerpt deposit's story as JSON, the share image's
// check as JSON, the source and the read instant. The proofs' certificate
// chains, the bulk of a proof and the same for every read from one host,
// are stored once each in the cert_chain table, and put back into each
// proof that List reads. A full deposit (one with
// an envelope) also settles its reference in the DB's [CrawlState], when it
// is there and pending, as deposited, in the deposit's transaction: a
// process killed after the deposit never leaves its reference pending, to
// be read again, and the crawler's Settle of it that follows writes
// nothing (and, for a Put of this DB that settled it, reads nothing).
// When Put returns nil the
// deposit is committed: it survives the process being killed, and with
// [Options].SyncDeposits it is on disk and survives the machine's crash too
// (see the package doc). Concurrent Puts are committed together (a group
// commit: one transaction, and one sync, for up to 64 of them), and each
// returns once the transaction that holds it has committed. List checks each
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
	if err := s.db.check(op, key); err != nil {
		return false, err
	}
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
	proof, chains, err := splitProof(d.Proof)
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
	image, err := jsonOrNull(d.Image, d.Image == nil)
	if err != nil {
		return false, &Error{Op: op, Key: key, Err: err}
	}
	req := &depReq{d: d, envDigest: envDigest, proof: proof, chains: chains, article: article, excerpt: excerpt, image: image, done: make(chan struct{})}
	select {
	case s.db.depQ <- req:
	case <-s.db.stop:
		return false, &Error{Op: op, Key: key, Kind: ErrClosed, Err: errClosedDB}
	case <-ctx.Done():
		return false, wrap(op, key, ctx.Err())
	}
	select {
	case <-req.done:
		return req.added, req.err
	case <-ctx.Done(): // it may still be committed: a later Put of it adds nothing
		return false, wrap(op, key, ctx.Err())
	case <-s.db.depDone:
		select {
		case <-req.done:
			return req.added, req.err
		default:
			return false, &Error{Op: op, Key: key, Kind: ErrClosed, Err: errClosedDB}
		}
	}
}

// A hopChain is one hop's certificate chain, moved out of its proof to be
// stored once in cert_chain: its JSON (as the proof had it) and that
// JSON's digest; both empty for a hop whose chain stays in the proof.
type hopChain struct{ digest, json string }

// splitProof is p as JSON with each hop's non-empty chain moved out (the
// hop's chain null), and the chains moved, one per hop; chains is nil when
// no hop has a chain, the proof then stored whole.
func splitProof(p *provenance.Proof) (sql.NullString, []hopChain, error) {
	if p == nil {
		return sql.NullString{}, nil, nil
	}
	var chains []hopChain
	q := *p
	for i, h := range p.Hops {
		if len(h.Chain) == 0 {
			continue
		}
		if chains == nil {
			chains = make([]hopChain, len(p.Hops))
			q.Hops = slices.Clone(p.Hops)
		}
		b, err := json.Marshal(h.Chain)
		if err != nil {
			return sql.NullString{}, nil, err
		}
		sum := sha256.Sum256(b)
		chains[i] = hopChain{digest: "sha256:" + hex.EncodeToString(sum[:]), json: string(b)}
		q.Hops[i].Chain = nil
	}
	b, err := json.Marshal(&q)
	return sql.NullString{String: string(b), Valid: true}, chains, err
}

// chainRefs stores r's moved chains (each once in the file, by digest) in
// tx and returns the deposit's chains column: a JSON array with, for each
// hop, its chain's cert_chain id or null.
func (db *DB) chainRefs(ctx context.Context, tx *sql.Tx, r *depReq) (sql.NullString, error) {
	if r.chains == nil {
		return sql.NullString{}, nil
	}
	ids := make([]*int64, len(r.chains))
	for i, c := range r.chains {
		if c.digest == "" {
			continue
		}
		var id int64
		err := tx.StmtContext(ctx, db.stmts.chainID).QueryRowContext(ctx, c.digest).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			err = tx.StmtContext(ctx, db.stmts.chainPut).QueryRowContext(ctx, c.digest, c.json).Scan(&id)
		}
		if err != nil {
			return sql.NullString{}, err
		}
		ids[i] = &id
	}
	b, err := json.Marshal(ids)
	return sql.NullString{String: string(b), Valid: true}, err
}

// refID names one source's reference.
type refID struct{ source, key string }

// maxPutSettled bounds the references a DB remembers settled by their
// deposits' Puts, for the Settles that follow.
const maxPutSettled = 1 << 12

// putSettled are the references this DB's Puts settled as deposited, each
// until the crawler's Settle of it as deposited, which then neither writes
// nor reads: the Put's committed transaction wrote what it would find.
// Forgetting a source (CrawlState.Forget) forgets them all, since its
// references may be seen anew, pending. A Put whose Settle never comes
// leaves its reference here; once maxPutSettled are kept, the next one
// starts the set afresh, so that those left behind neither fill it for
// good nor stay for ever.
type putSettled struct {
	mu sync.Mutex
	m  map[refID]struct{}
}

func (p *putSettled) add(id refID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || len(p.m) >= maxPutSettled {
		p.m = map[refID]struct{}{}
	}
	p.m[id] = struct{}{}
}

// reset forgets every reference.
func (p *putSettled) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m = nil
}

// take forgets id and reports whether it was remembered.
func (p *putSettled) take(id refID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.m[id]
	delete(p.m, id)
	return ok
}

// maxDepositBatch bounds the deposits one group commit holds.
const maxDepositBatch = 64

// depReq is one Put waiting for the group committer.
type depReq struct {
	d                       *crawl.Deposit
	envDigest               string
	proof, article, excerpt sql.NullString
	image                   sql.NullString
	chains                  []hopChain // per hop, nil when no chain was moved out of the proof
	added                   bool
	settled                 bool // its transaction settled its pending reference
	err                     error
	done                    chan struct{}
}

// commitDeposits is the group committer: it takes the Puts waiting (up to
// maxDepositBatch) and commits them in one transaction with one sync, then
// answers each. If the batch fails, each of its Puts is retried alone, so
// one bad deposit fails only its own Put. It ends at Close, failing the
// Puts still queued.
func (db *DB) commitDeposits() {
	defer close(db.depDone)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batch := make([]*depReq, 0, maxDepositBatch)
	for {
		select {
		case <-db.stop:
			for {
				select {
				case r := <-db.depQ:
					r.err = &Error{Op: "deposit put", Key: r.d.Source + " " + r.d.Digest, Kind: ErrClosed, Err: errClosedDB}
					close(r.done)
				default:
					return
				}
			}
		case r := <-db.depQ:
			batch = append(batch[:0], r)
		}
	fill:
		for len(batch) < maxDepositBatch {
			select {
			case r := <-db.depQ:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		err := db.write(ctx, "deposit put", batchKey(batch), db.opt.SyncDeposits, func(ctx context.Context, tx *sql.Tx) error {
			for _, r := range batch {
				var err error
				if r.added, err = db.putDeposit(ctx, tx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && len(batch) > 1 {
			for _, r := range batch {
				r.err = db.write(ctx, "deposit put", r.d.Source+" "+r.d.Digest, db.opt.SyncDeposits, func(ctx context.Context, tx *sql.Tx) error {
					var err error
					r.added, err = db.putDeposit(ctx, tx, r)
					return err
				})
				if r.err != nil {
					r.added = false
				}
			}
		} else {
			for _, r := range batch {
				if r.err = err; err != nil {
					r.added = false
				}
			}
		}
		for _, r := range batch {
			if r.err == nil && r.settled {
				db.putSettled.add(refID{r.d.Source, r.d.Key})
			}
			close(r.done)
		}
	}
}

func batchKey(batch []*depReq) string {
	if len(batch) == 1 {
		return batch[0].d.Source + " " + batch[0].d.Digest
	}
	return fmt.Sprintf("%d deposits", len(batch))
}

// putDeposit writes one deposit in tx and reports whether it was new.
func (db *DB) putDeposit(ctx context.Context, tx *sql.Tx, r *depReq) (bool, error) {
	d := r.d
	r.settled = false
	if d.Envelope != nil {
		// The reference a full deposit reads is deposited: settled in the
		// same transaction, so the two are never apart after a kill.
		n, err := changed(tx.StmtContext(ctx, db.stmts.refDeposited).ExecContext(ctx, d.Source, d.Key, int(crawl.Deposited),
			toNS(db.clk.Now()), int(crawl.Pending)))
		if err != nil {
			return false, err
		}
		r.settled = n == 1
	}
	var one int
	switch err := tx.StmtContext(ctx, db.stmts.depExists).QueryRowContext(ctx, d.Source, d.Digest).Scan(&one); {
	case err == nil:
		return false, nil // already deposited
	case !errors.Is(err, sql.ErrNoRows):
		return false, err
	}
	var envID sql.NullInt64
	if d.Envelope != nil {
		// A new envelope's id comes back from its insert; one stored
		// already (another source's deposit of it) is looked up.
		err := tx.StmtContext(ctx, db.stmts.envPut).QueryRowContext(ctx, r.envDigest, len(d.Envelope), d.Envelope).Scan(&envID)
		if errors.Is(err, sql.ErrNoRows) {
			err = tx.StmtContext(ctx, db.stmts.envID).QueryRowContext(ctx, r.envDigest).Scan(&envID)
		}
		if err != nil {
			return false, err
		}
	}
	chains, err := db.chainRefs(ctx, tx, r)
	if err != nil {
		return false, err
	}
	n, err := changed(tx.StmtContext(ctx, db.stmts.depPut).ExecContext(ctx, d.Source, d.Key, d.URL, toNS(d.ReadAt), d.Digest,
		d.MediaType, envID, r.proof, r.article, r.excerpt, toNS(db.clk.Now()), r.image, chains))
	return n == 1, err
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
	// One read transaction: the deposits and the chains their proofs name
	// are read from one snapshot of the file.
	tx, err := s.db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap(op, source, err)
	}
	defer tx.Rollback()
	rows, err := tx.StmtContext(ctx, s.db.stmts.depList).QueryContext(ctx, source, toNS(since))
	if err != nil {
		return nil, wrap(op, source, err)
	}
	defer rows.Close()
	var out []*crawl.Deposit
	chainsRead := map[int64][]string{}
	for rows.Next() {
		d := &crawl.Deposit{Source: source}
		var readAt int64
		var envDigest, proof, article, excerpt, image, chains sql.NullString
		if err := rows.Scan(&d.Key, &d.URL, &readAt, &d.Digest, &d.MediaType, &envDigest, &d.Envelope, &proof, &article, &excerpt, &image, &chains); err != nil {
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
			{proof, &d.Proof}, {article, &d.Article}, {excerpt, &d.Excerpt}, {image, &d.Image},
		} {
			if !f.col.Valid {
				continue
			}
			if err := json.Unmarshal([]byte(f.col.String), f.dst); err != nil {
				return nil, &Error{Op: op, Key: key, Kind: ErrCorrupt, Err: err}
			}
		}
		if chains.Valid {
			if err := s.joinChains(ctx, tx, d, chains.String, chainsRead); err != nil {
				return nil, &Error{Op: op, Key: key, Kind: ErrCorrupt, Err: err}
			}
		}
		out = append(out, d)
	}
	return out, wrap(op, source, rows.Err())
}

// joinChains puts back into d's proof the chains its hops name (refs, the
// deposit's chains column), each read once per List (read).
func (s *Deposits) joinChains(ctx context.Context, tx *sql.Tx, d *crawl.Deposit, refs string, read map[int64][]string) error {
	var ids []*int64
	if err := json.Unmarshal([]byte(refs), &ids); err != nil {
		return err
	}
	if d.Proof == nil || len(ids) != len(d.Proof.Hops) {
		return fmt.Errorf("the proof's chains name %d hops, the proof has %d", len(ids), len(proofHops(d.Proof)))
	}
	for i, id := range ids {
		if id == nil {
			continue
		}
		chain, ok := read[*id]
		if !ok {
			var text string
			if err := tx.StmtContext(ctx, s.db.stmts.chainGet).QueryRowContext(ctx, *id).Scan(&text); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return fmt.Errorf("hop %d's certificate chain %d is not in the file", i, *id)
				}
				return err
			}
			if err := json.Unmarshal([]byte(text), &chain); err != nil {
				return err
			}
			read[*id] = chain
		}
		d.Proof.Hops[i].Chain = slices.Clone(chain)
	}
	return nil
}

func proofHops(p *provenance.Proof) []provenance.Hop {
	if p == nil {
		return nil
	}
	return p.Hops
}

// Withdraw implements [crawl.Deposits], durably (synchronous=FULL), in one
// transaction: the source's deposits go, and so do the envelopes and the
// certificate chains that no other source's deposit shares (finding the
// chains no deposit names reads every deposit's chains column).
func (s *Deposits) Withdraw(ctx context.Context, source string) (int, error) {
	n := 0
	err := s.db.write(ctx, "deposit withdraw", source, true, func(ctx context.Context, tx *sql.Tx) error {
		n = 0
		rows, err := tx.StmtContext(ctx, s.db.stmts.depWithdraw).QueryContext(ctx, source)
		if err != nil {
			return err
		}
		var envs []int64
		var chains []int64
		for rows.Next() {
			var id sql.NullInt64
			var refs sql.NullString
			if err := rows.Scan(&id, &refs); err != nil {
				rows.Close()
				return err
			}
			n++
			if id.Valid {
				envs = append(envs, id.Int64)
			}
			if refs.Valid {
				var ids []*int64
				if err := json.Unmarshal([]byte(refs.String), &ids); err != nil {
					rows.Close()
					return err
				}
				for _, id := range ids {
					if id != nil && !slices.Contains(chains, *id) {
						chains = append(chains, *id)
					}
				}
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
		if len(chains) > 0 {
			b, _ := json.Marshal(chains)
			if _, err := tx.StmtContext(ctx, s.db.stmts.chainDropOrphans).ExecContext(ctx, string(b)); err != nil {
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
