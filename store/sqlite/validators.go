package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/politefetch/politefetch/fetch"
)

// ValidatorStore keeps the conditional-GET layer's validators per URL in
// the DB's validators table (the [fetch.ValidatorStore] of fetch's Conditional). A
// URL's validators are kept for the DB's ValidatorRetain after they were
// last stored, then swept; a forgotten validator costs one unconditional
// GET. It is safe for concurrent use.
type ValidatorStore struct{ db *DB }

// Validators returns the DB's validator store.
func (db *DB) Validators() *ValidatorStore { return &ValidatorStore{db} }

var _ fetch.ValidatorStore = (*ValidatorStore)(nil)

// Get implements [fetch.ValidatorStore].
func (s *ValidatorStore) Get(ctx context.Context, key string) (fetch.Validator, bool, error) {
	if err := s.db.check("validator get", key); err != nil {
		return fetch.Validator{}, false, err
	}
	var v fetch.Validator
	err := s.db.stmts.valGet.QueryRowContext(ctx, key).Scan(&v.ETag, &v.LastModified, &v.Length)
	if errors.Is(err, sql.ErrNoRows) {
		return fetch.Validator{}, false, nil
	}
	if err != nil {
		return fetch.Validator{}, false, wrap("validator get", key, err)
	}
	return v, true, nil
}

// Put implements [fetch.ValidatorStore]. The row's stored-at instant is the DB's
// clock's now.
func (s *ValidatorStore) Put(ctx context.Context, key string, v fetch.Validator) error {
	if err := s.db.check("validator put", key); err != nil {
		return err
	}
	_, err := s.db.exec(ctx, "validator put", key, s.db.stmts.valPut, key, v.ETag, v.LastModified, toNS(s.db.clk.Now()), max(v.Length, 0))
	return err
}

// Delete implements [fetch.ValidatorStore].
func (s *ValidatorStore) Delete(ctx context.Context, key string) error {
	if err := s.db.check("validator delete", key); err != nil {
		return err
	}
	_, err := s.db.exec(ctx, "validator delete", key, s.db.stmts.valDelete, key)
	return err
}
