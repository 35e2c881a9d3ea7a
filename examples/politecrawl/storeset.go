package main

// Several workers' stores read as one (report, export, verify): each
// worker of a crawl whose state is shared (store.redis) writes its
// deposits to its own SQLite file, and an operator wants one view and one
// archive of them. The files are named by repeating -store, or by a glob
// (quoted, so that the program expands it, not the shell); each is opened
// read-only. A deposit held by several files is one deposit: the view keeps
// the earliest read of each (source, digest), as one file does.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/robots"
)

// storeList is the -store flag: repeatable, each value a file or a glob.
type storeList []string

func (l *storeList) String() string { return strings.Join(*l, " ") }

func (l *storeList) Set(v string) error {
	if v == "" {
		return errors.New("an empty path")
	}
	if _, err := filepath.Match(v, ""); err != nil {
		return fmt.Errorf("%q: a bad glob: %w", v, err)
	}
	*l = append(*l, v)
	return nil
}

// isGlob reports whether p has a glob's metacharacters.
func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// expand returns the files the values name, in order: a glob's matches
// sorted, each file once however it was named. A glob that matches
// nothing is an error: an operator who named some stores and got none
// would otherwise read an empty view as "nothing there".
func (l storeList) expand() ([]string, error) {
	var out []string
	var infos []os.FileInfo
	add := func(p string) {
		fi, err := os.Stat(p)
		if err == nil {
			for _, seen := range infos {
				if seen != nil && os.SameFile(seen, fi) {
					return
				}
			}
		}
		out = append(out, p)
		infos = append(infos, fi) // nil when it cannot be read: opening it says why
	}
	for _, v := range l {
		if _, err := os.Stat(v); err == nil || !isGlob(v) {
			add(v) // a file whose name has a glob's characters is that file
			continue
		}
		m, err := filepath.Glob(v)
		if err != nil {
			return nil, fmt.Errorf("-store %q: %w", v, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("-store %q matches no file", v)
		}
		for _, p := range m {
			add(p)
		}
	}
	return out, nil
}

// storeSet is the stores a read-only command reads: one file, or several
// workers' files, each opened read-only over the configuration's state.
type storeSet struct {
	files []*stores
}

// openStoreSet opens every file of paths read-only; the first that cannot
// be opened fails the whole set, naming the file and the cause.
func openStoreSet(ctx context.Context, cfg *Config, paths []string) (*storeSet, error) {
	set := &storeSet{}
	for _, p := range paths {
		db, err := openStoresMode(ctx, cfg, p, true)
		if err != nil {
			set.Close()
			return nil, err
		}
		set.files = append(set.files, db)
	}
	return set, nil
}

// Close closes every file.
func (s *storeSet) Close() error {
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// Paths are the files' paths, in the order given.
func (s *storeSet) Paths() []string {
	var out []string
	for _, f := range s.files {
		out = append(out, f.Path())
	}
	return out
}

// sharedState reports whether the files' state is one backend (the
// configuration names one), so it is read once; otherwise each file keeps
// its own state, and the view merges them.
func (s *storeSet) sharedState() bool { return len(s.files) == 1 || s.files[0].sec != nil }

// states are the crawl states to read: the shared one once, or each file's.
func (s *storeSet) states() []*stores {
	if s.sharedState() {
		return s.files[:1]
	}
	return s.files
}

// where names the state for the report: the shared backend, or the files.
func (s *storeSet) where() string {
	if s.sharedState() {
		return s.files[0].where()
	}
	return fmt.Sprintf("each of the %d stores, summed", len(s.files))
}

// Deposits is the files' deposits as one read-only crawl.Deposits (a
// *mergedDeposits when there are several).
func (s *storeSet) Deposits() crawl.Deposits {
	if len(s.files) == 1 {
		return s.files[0].Crawl().Deposits
	}
	m := &mergedDeposits{}
	for _, f := range s.files {
		m.files = append(m.files, f.Crawl().Deposits)
		m.paths = append(m.paths, f.Path())
	}
	return m
}

// errMergedReadOnly is a write asked of the merged view.
var errMergedReadOnly = errors.New("several stores are read as one view: it cannot be written (withdraw takes one -store at a time)")

// mergedDeposits lists several files' deposits as one: a source's
// deposits of every file in read order (ties in the files' order), the
// first of each digest kept. It cannot be written.
type mergedDeposits struct {
	files []crawl.Deposits
	paths []string
	// copies counts the deposits List left out, each a copy of one it
	// kept (another file's read of the same bytes).
	copies atomic.Int64
}

func (m *mergedDeposits) Put(context.Context, *crawl.Deposit) (bool, error) {
	return false, errMergedReadOnly
}

func (m *mergedDeposits) Withdraw(context.Context, string) (int, error) {
	return 0, errMergedReadOnly
}

// List implements crawl.Deposits; a file that cannot list the source's
// deposits fails the List, naming the file.
func (m *mergedDeposits) List(ctx context.Context, source string, since time.Time) ([]*crawl.Deposit, error) {
	var all []*crawl.Deposit
	for i, f := range m.files {
		list, err := f.List(ctx, source, since)
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", m.paths[i], err)
		}
		all = append(all, list...)
	}
	slices.SortStableFunc(all, func(a, b *crawl.Deposit) int { return a.ReadAt.Compare(b.ReadAt) })
	seen := map[string]bool{}
	out := all[:0]
	for _, d := range all {
		if seen[d.Digest] {
			m.copies.Add(1)
			continue
		}
		seen[d.Digest] = true
		out = append(out, d)
	}
	return out, nil
}

// sourceState is what the report reads of one source's crawl state.
type sourceState struct {
	tally    *crawl.Tally // nil: no state keeps counters
	refs     []crawl.RefState
	schedule crawl.Schedule
}

// sourceState reads the source's state: the shared state's, or the files'
// merged. Merged, the counters are summed (each file counted the crawls
// that wrote it), a reference known to several files is one (settled
// wins over pending: some worker read it), and the schedule is that of the
// latest trigger read.
func (s *storeSet) sourceState(ctx context.Context, id string) (sourceState, error) {
	var out sourceState
	byKey := map[string]int{}
	for i, f := range s.states() {
		state := f.Crawl().State
		if t, ok := state.(crawl.Tallier); ok {
			tl, err := t.Tally(ctx, id)
			if err != nil {
				return out, err
			}
			if out.tally == nil {
				out.tally = &crawl.Tally{}
			}
			out.tally.Add(tl)
		}
		refs, err := state.Refs(ctx, id)
		if err != nil {
			return out, err
		}
		for _, r := range refs {
			i, ok := byKey[r.Key]
			switch {
			case !ok:
				byKey[r.Key] = len(out.refs)
				out.refs = append(out.refs, r)
			case out.refs[i].Outcome == crawl.Pending && r.Outcome != crawl.Pending:
				out.refs[i] = r
			}
		}
		sc, err := state.Schedule(ctx, id)
		if err != nil {
			return out, err
		}
		backlog := later(out.schedule.LastBacklog, sc.LastBacklog)
		if i == 0 || sc.LastTrigger.After(out.schedule.LastTrigger) {
			out.schedule = sc
		}
		out.schedule.LastBacklog = backlog
	}
	return out, nil
}

// ledger returns the host's refusal record (key is the ledger's key): the
// shared ledger's, or the files' merged the cautious way (the most
// strikes, the latest cool-down and re-check, suspended if any file says
// so, the cause of the latest refusal).
func (s *storeSet) ledger(ctx context.Context, key string) (backoff.State, bool, error) {
	var out backoff.State
	found := false
	for _, f := range s.states() {
		st, ok, err := f.Fetch().Ledger.Get(ctx, key)
		if err != nil {
			return out, false, err
		}
		if !ok {
			continue
		}
		if !found || st.LastAt.After(out.LastAt) {
			out.LastAt, out.LastStatus, out.LastChallenge, out.RefusedKind = st.LastAt, st.LastStatus, st.LastChallenge, st.RefusedKind
		}
		found = true
		out.Strikes = max(out.Strikes, st.Strikes)
		out.Until, out.NextCheck = later(out.Until, st.Until), later(out.NextCheck, st.NextCheck)
		out.Suspended = out.Suspended || st.Suspended
	}
	return out, found, nil
}

// robots returns the host's robots.txt record: the shared store's, or of
// the files the latest fetched.
func (s *storeSet) robots(ctx context.Context, host string) (robots.Record, bool, error) {
	var out robots.Record
	found := false
	for _, f := range s.states() {
		r, ok, err := f.Fetch().Robots.Get(ctx, host)
		if err != nil {
			return out, false, err
		}
		if ok && (!found || r.FetchedAt.After(out.FetchedAt)) {
			out, found = r, true
		}
	}
	return out, found, nil
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
