package main

// politecrawl report -config FILE [-store FILE] [-json]: what the crawls
// did, per source and per host. From the store: each source's references
// by outcome, its deposits and schedule, each host's refusal ledger
// (strikes, cool-down, suspension). From the tallies each crawl adds to
// as it runs (a JSON file beside the store, see Tallies): reads, 304s,
// envelope bytes, refusals by reason, failures. A crawl killed with
// SIGKILL loses at most its last TallyEvery of tallies; everything in the
// store stays exact.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/politefetch/politefetch/crawl"
)

// Tally is what crawls did to one source or host, added up over runs.
type Tally struct {
	Requests     int64          `json:"reads"`          // reads the crawler reported: triggers, 304s, articles (hosts only)
	NotModified  int64          `json:"not_modified"`   // 304 answers
	Wire         int64          `json:"envelope_bytes"` // envelope bytes deposited (hosts only)
	TriggerReads int            `json:"trigger_reads"`  // feed or API reads (sources)
	Deposits     int            `json:"deposits"`
	Excerpts     int            `json:"excerpts"`
	Excluded     int            `json:"excluded"`
	Mismatches   int            `json:"mismatches"`
	Failures     int            `json:"failures"`
	Passes       int            `json:"passes"`
	Stopped      int            `json:"stopped"` // passes stopped after MaxFailures in a row (V12)
	Refusals     map[string]int `json:"refusals,omitempty"`
}

func (t *Tally) addCounts(c crawl.Counts) {
	t.TriggerReads += c.TriggerReads
	t.NotModified += int64(c.NotModified)
	t.Deposits += c.Deposits
	t.Excerpts += c.Excerpts
	t.Excluded += c.Excluded
	t.Mismatches += c.Mismatches
	t.Failures += c.Failures
	t.Passes += c.Passes
	t.Stopped += c.Stopped
	for k, v := range c.Refusals {
		if t.Refusals == nil {
			t.Refusals = map[string]int{}
		}
		t.Refusals[k] += v
	}
}

// Tallies are the crawls' tallies, kept beside the store: the totals of
// the runs that ended, and each running crawl's own so far, which it
// rewrites every TallyEvery and folds into the totals when it ends. A run
// killed without that last write is folded in by the next run to save,
// once its entry is an hour old.
type Tallies struct {
	Runs    int                  `json:"runs"` // runs folded into the totals
	Updated time.Time            `json:"updated"`
	Sources map[string]*Tally    `json:"sources"`
	Hosts   map[string]*Tally    `json:"hosts"`
	Live    map[string]*RunTally `json:"live,omitempty"` // by run id
}

// RunTally is one running crawl's tallies so far.
type RunTally struct {
	Updated time.Time         `json:"updated"`
	Sources map[string]*Tally `json:"sources"`
	Hosts   map[string]*Tally `json:"hosts"`
}

// TallyEvery is how often a running crawl rewrites its tallies.
const TallyEvery = 30 * time.Second

// staleRun is how old a run's entry must be to be taken for dead.
const staleRun = time.Hour

// talliesPath is the tallies file of a store.
func talliesPath(store string) string { return store + ".tallies.json" }

func loadTallies(path string) (*Tallies, error) {
	t := &Tallies{}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		if err := json.Unmarshal(b, t); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if t.Sources == nil {
		t.Sources = map[string]*Tally{}
	}
	if t.Hosts == nil {
		t.Hosts = map[string]*Tally{}
	}
	if t.Live == nil {
		t.Live = map[string]*RunTally{}
	}
	return t, nil
}

func tallyOf(m map[string]*Tally, k string) *Tally {
	if m[k] == nil {
		m[k] = &Tally{}
	}
	return m[k]
}

// add adds u to t.
func (t *Tally) add(u *Tally) {
	t.Requests += u.Requests
	t.NotModified += u.NotModified
	t.Wire += u.Wire
	t.TriggerReads += u.TriggerReads
	t.Deposits += u.Deposits
	t.Excerpts += u.Excerpts
	t.Excluded += u.Excluded
	t.Mismatches += u.Mismatches
	t.Failures += u.Failures
	t.Passes += u.Passes
	t.Stopped += u.Stopped
	for k, v := range u.Refusals {
		if t.Refusals == nil {
			t.Refusals = map[string]int{}
		}
		t.Refusals[k] += v
	}
}

// fold adds a run's tallies to the totals.
func (t *Tallies) fold(r *RunTally) {
	for k, v := range r.Sources {
		tallyOf(t.Sources, k).add(v)
	}
	for k, v := range r.Hosts {
		tallyOf(t.Hosts, k).add(v)
	}
	t.Runs++
}

// total is the totals with the running crawls' tallies added.
func (t *Tallies) total() *Tallies {
	out := &Tallies{Runs: t.Runs, Updated: t.Updated, Sources: map[string]*Tally{}, Hosts: map[string]*Tally{}}
	out.fold(&RunTally{Sources: t.Sources, Hosts: t.Hosts})
	out.Runs = t.Runs
	for _, r := range t.Live {
		out.fold(r)
	}
	return out
}

// runTally is this run's tallies so far.
func runTally(c *crawl.Crawler, o *observer) *RunTally {
	r := &RunTally{Updated: time.Now().UTC(), Sources: map[string]*Tally{}, Hosts: map[string]*Tally{}}
	for id, cs := range c.SourceCounts() {
		tallyOf(r.Sources, id).addCounts(cs)
	}
	for h, cs := range c.HostCounts() {
		cs.NotModified = 0 // the host's 304s are the observer's, below
		tallyOf(r.Hosts, h).addCounts(cs)
	}
	for h, f := range o.hostStats() {
		ht := tallyOf(r.Hosts, h)
		ht.Requests += f.requests
		ht.NotModified += f.notModified
		ht.Wire += f.wire
	}
	return r
}

// saveTallies writes run's tallies so far to the file (final: folded into
// the totals), replacing the file atomically.
func saveTallies(path, run string, c *crawl.Crawler, o *observer, final bool) error {
	t, err := loadTallies(path)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	for id, r := range t.Live {
		if id != run && now.Sub(r.Updated) > staleRun {
			t.fold(r) // a run that ended without its last write
			delete(t.Live, id)
		}
	}
	rt := runTally(c, o)
	if final {
		delete(t.Live, run)
		t.fold(rt)
	} else {
		t.Live[run] = rt
	}
	t.Updated = now
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// SourceReport is one source in the report.
type SourceReport struct {
	ID          string         `json:"id"`
	Active      bool           `json:"active"`
	Refs        map[string]int `json:"refs"` // references known, by outcome (pending, deposited, …)
	Deposits    int            `json:"deposits"`
	Excerpts    int            `json:"excerpts"`
	Bytes       int64          `json:"envelope_bytes"`
	LastTrigger time.Time      `json:"last_trigger,omitzero"`
	NextTrigger time.Time      `json:"next_trigger,omitzero"`
	LastBacklog time.Time      `json:"last_backlog,omitzero"`
	Tally       *Tally         `json:"tally,omitempty"`
}

// HostReport is one host in the report.
type HostReport struct {
	Host      string    `json:"host"`
	LedgerKey string    `json:"ledger_key"`
	Strikes   int       `json:"strikes"`
	LastCause string    `json:"last_refusal,omitempty"`
	CoolUntil time.Time `json:"cooling_until,omitzero"`
	Suspended bool      `json:"suspended"`
	NextCheck time.Time `json:"next_check,omitzero"`
	Tally     *Tally    `json:"tally,omitempty"`
}

// Report is the whole report.
type Report struct {
	Config  string         `json:"config"`
	Store   string         `json:"store"`
	Runs    int            `json:"runs"`    // crawl runs that ended
	Running int            `json:"running"` // crawls running (or killed within the hour), their tallies so far included
	Sources []SourceReport `json:"sources"`
	Hosts   []HostReport   `json:"hosts"`
}

func runReport(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("report", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var sf storeFlags
	sf.register(fset)
	asJSON := fset.Bool("json", false, "print JSON instead of tables")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("report: unexpected arguments %q", fset.Args())
	}
	ctx := context.Background()
	cfg, db, deps, err := sf.open(ctx, "report")
	if err != nil {
		return err
	}
	defer db.Close()
	fp, err := cfg.FetchPolicy()
	if err != nil {
		return err
	}
	state := db.Crawl().State
	saved, err := loadTallies(talliesPath(db.Path()))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	tallies := saved.total()
	rep := Report{Config: cfg.Path(), Store: db.Path(), Runs: saved.Runs, Running: len(saved.Live)}
	hosts := map[string]bool{}
	for _, s := range cfg.Sources {
		sr := SourceReport{ID: s.ID, Active: s.Active, Refs: map[string]int{}, Tally: tallies.Sources[s.ID]}
		refs, err := state.Refs(ctx, s.ID)
		if err != nil {
			return fmt.Errorf("report: %s: %w", s.ID, err)
		}
		for _, r := range refs {
			sr.Refs[r.Outcome.String()]++
			if h := hostOfURL(r.URL); h != "" {
				hosts[h] = true
			}
		}
		list, err := deps.List(ctx, s.ID, time.Time{})
		if err != nil {
			return fmt.Errorf("report: %s: %w", s.ID, err)
		}
		for _, d := range list {
			if d.Envelope != nil {
				sr.Deposits++
				sr.Bytes += int64(len(d.Envelope))
			} else {
				sr.Excerpts++
			}
		}
		sc, err := state.Schedule(ctx, s.ID)
		if err != nil {
			return fmt.Errorf("report: %s: %w", s.ID, err)
		}
		sr.LastTrigger, sr.NextTrigger, sr.LastBacklog = sc.LastTrigger, sc.NextTrigger, sc.LastBacklog
		rep.Sources = append(rep.Sources, sr)
		for _, f := range s.Trigger.Feeds {
			hosts[hostOfURL(f)] = true
		}
		for _, a := range s.Admitted {
			if !strings.HasPrefix(a, "*.") {
				hosts[a] = true
			}
		}
	}
	for h := range tallies.Hosts {
		hosts[h] = true
	}
	ledger := db.Fetch().Ledger
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		if h == "" {
			continue
		}
		key := h
		if fp.PerSite {
			if site, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
				key = site
			}
		}
		hr := HostReport{Host: h, LedgerKey: key, Tally: tallies.Hosts[h]}
		st, ok, err := ledger.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("report: ledger %s: %w", key, err)
		}
		if ok {
			hr.Strikes, hr.LastCause, hr.Suspended = st.Strikes, st.Cause(), st.Suspended
			if st.Until.After(time.Now()) {
				hr.CoolUntil = st.Until.UTC()
			}
			if st.Suspended {
				hr.NextCheck = st.NextCheck.UTC()
			}
		}
		rep.Hosts = append(rep.Hosts, hr)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(stdout, &rep)
	return nil
}

func printReport(w io.Writer, rep *Report) {
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	refusals := func(t *Tally) string {
		if t == nil || len(t.Refusals) == 0 {
			return "-"
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(t.Refusals)) {
			parts = append(parts, fmt.Sprintf("%s:%d", k, t.Refusals[k]))
		}
		return strings.Join(parts, " ")
	}
	fmt.Fprintf(w, "report of %s (store %s, %d crawl runs tallied, %d running)\n\n", rep.Config, rep.Store, rep.Runs, rep.Running)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tACTIVE\tREFS\tPENDING\tDEPOSITS\tEXCERPTS\tBYTES\tTRIGGER READS\t304\tFAILURES\tREFUSALS\tLAST TRIGGER\tNEXT TRIGGER")
	for _, s := range rep.Sources {
		total := 0
		for _, n := range s.Refs {
			total += n
		}
		t := s.Tally
		if t == nil {
			t = &Tally{}
		}
		fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", s.ID, s.Active, total, s.Refs["pending"],
			s.Deposits, s.Excerpts, s.Bytes, t.TriggerReads, t.NotModified, t.Failures, refusals(s.Tally), at(s.LastTrigger), at(s.NextTrigger))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tREADS\t304\tENVELOPE BYTES\tDEPOSITS\tFAILURES\tREFUSALS\tSTRIKES\tCOOLING UNTIL\tSUSPENDED")
	for _, h := range rep.Hosts {
		t := h.Tally
		if t == nil {
			t = &Tally{}
		}
		susp := "no"
		if h.Suspended {
			susp = "until " + at(h.NextCheck)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%s\n", h.Host, t.Requests, t.NotModified, t.Wire,
			t.Deposits, t.Failures, refusals(h.Tally), h.Strikes, at(h.CoolUntil), susp)
	}
	tw.Flush()
}
