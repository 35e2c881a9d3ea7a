package main

// politecrawl report -config FILE [-store FILE] [-json]: what the crawls
// did, per source and per host, all of it from the store. Per source: its
// references by outcome, its deposits and schedule, and its counters, which
// the crawl state keeps in the transaction of what they count
// (crawl.Tallier: reads when asked, outcomes when settled), so a report
// after a kill -9 counts every read up to the kill. Per host: its deposits
// and the refusal ledger (strikes, cool-down, suspension).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/politefetch/politefetch/crawl"
)

// Tally is one source's counters, over every crawl that shared the store
// (crawl.Tally, named as the report's JSON names things).
type Tally struct {
	Reads           int `json:"reads"`            // article reads asked of the chain
	TriggerReads    int `json:"trigger_reads"`    // feed or API reads answered
	NotModified     int `json:"not_modified"`     // of them, answered 304
	ImageReads      int `json:"image_reads"`      // share images checked
	Deposits        int `json:"deposits"`         // articles deposited in full
	Excerpts        int `json:"excerpts"`         // stories kept as their feed's excerpt
	Excluded        int `json:"excluded"`         // gated, or nothing that may be kept
	Mismatches      int `json:"mismatches"`       // identifiers disagreed
	Refused         int `json:"refused"`          // article reads the chain refused before sending
	Failures        int `json:"failures"`         // reads that brought nothing to deposit
	DepositFailures int `json:"deposit_failures"` // our own failures to deposit
}

func tallyFrom(t crawl.Tally) *Tally {
	return &Tally{Reads: t.Reads, TriggerReads: t.TriggerReads, NotModified: t.NotModified, ImageReads: t.ImageReads,
		Deposits: t.Deposits, Excerpts: t.Excerpts, Excluded: t.Excluded, Mismatches: t.Mismatches,
		Refused: t.Refusals, Failures: t.Failures, DepositFailures: t.DepositFailures}
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
	// Tally is the source's counters; nil when the state's store keeps
	// none (it is not a crawl.Tallier).
	Tally *Tally `json:"tally,omitempty"`
}

// HostReport is one host in the report.
type HostReport struct {
	Host      string    `json:"host"`
	LedgerKey string    `json:"ledger_key"`
	Deposits  int       `json:"deposits"` // full deposits of its pages, in this file
	Bytes     int64     `json:"envelope_bytes"`
	Strikes   int       `json:"strikes"`
	LastCause string    `json:"last_refusal,omitempty"`
	CoolUntil time.Time `json:"cooling_until,omitzero"`
	Suspended bool      `json:"suspended"`
	NextCheck time.Time `json:"next_check,omitzero"`
}

// Report is the whole report.
type Report struct {
	Config string `json:"config"`
	Store  string `json:"store"`
	// Counted says where the sources' counters come from: the state's
	// store, or "" when it keeps none.
	Counted string         `json:"counted,omitempty"`
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
	tallier, counted := state.(crawl.Tallier)
	rep := Report{Config: cfg.Path(), Store: db.Path()}
	if counted {
		rep.Counted = db.where()
	}
	hosts := map[string]*HostReport{}
	host := func(h string) *HostReport {
		if hosts[h] == nil {
			hosts[h] = &HostReport{Host: h}
		}
		return hosts[h]
	}
	for _, s := range cfg.Sources {
		sr := SourceReport{ID: s.ID, Active: s.Active, Refs: map[string]int{}}
		if counted {
			t, err := tallier.Tally(ctx, s.ID)
			if err != nil {
				return fmt.Errorf("report: %s: %w", s.ID, err)
			}
			sr.Tally = tallyFrom(t)
		}
		refs, err := state.Refs(ctx, s.ID)
		if err != nil {
			return fmt.Errorf("report: %s: %w", s.ID, err)
		}
		for _, r := range refs {
			sr.Refs[r.Outcome.String()]++
			if h := hostOfURL(r.URL); h != "" {
				host(h)
			}
		}
		list, err := deps.List(ctx, s.ID, time.Time{})
		if err != nil {
			return fmt.Errorf("report: %s: %w", s.ID, err)
		}
		for _, d := range list {
			if d.Envelope == nil {
				sr.Excerpts++
				continue
			}
			sr.Deposits++
			sr.Bytes += int64(len(d.Envelope))
			if h := hostOfURL(d.URL); h != "" {
				hr := host(h)
				hr.Deposits++
				hr.Bytes += int64(len(d.Envelope))
			}
		}
		sc, err := state.Schedule(ctx, s.ID)
		if err != nil {
			return fmt.Errorf("report: %s: %w", s.ID, err)
		}
		sr.LastTrigger, sr.NextTrigger, sr.LastBacklog = sc.LastTrigger, sc.NextTrigger, sc.LastBacklog
		rep.Sources = append(rep.Sources, sr)
		for _, f := range s.Trigger.Feeds {
			if h := hostOfURL(f); h != "" {
				host(h)
			}
		}
		for _, a := range s.Admitted {
			if !strings.HasPrefix(a, "*.") {
				host(a)
			}
		}
	}
	ledger := db.Fetch().Ledger
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		hr := hosts[h]
		hr.LedgerKey = h
		if fp.PerSite {
			if site, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
				hr.LedgerKey = site
			}
		}
		st, ok, err := ledger.Get(ctx, hr.LedgerKey)
		if err != nil {
			return fmt.Errorf("report: ledger %s: %w", hr.LedgerKey, err)
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
		rep.Hosts = append(rep.Hosts, *hr)
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
	fmt.Fprintf(w, "report of %s (store %s)\n", rep.Config, rep.Store)
	if rep.Counted == "" {
		fmt.Fprintln(w, "the state's store keeps no counters: reads, 304s, failures and refusals are not shown (-)")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tACTIVE\tREFS\tPENDING\tDEPOSITS\tEXCERPTS\tBYTES\tREADS\tTRIGGER READS\t304\tIMAGES\tFAILURES\tREFUSED\tLAST TRIGGER\tNEXT TRIGGER")
	for _, s := range rep.Sources {
		total := 0
		for _, n := range s.Refs {
			total += n
		}
		counters := "-\t-\t-\t-\t-\t-"
		if t := s.Tally; t != nil {
			counters = fmt.Sprintf("%d\t%d\t%d\t%d\t%d\t%d", t.Reads, t.TriggerReads, t.NotModified, t.ImageReads, t.Failures, t.Refused)
		}
		fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", s.ID, s.Active, total, s.Refs["pending"],
			s.Deposits, s.Excerpts, s.Bytes, counters, at(s.LastTrigger), at(s.NextTrigger))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tDEPOSITS\tENVELOPE BYTES\tSTRIKES\tLAST REFUSAL\tCOOLING UNTIL\tSUSPENDED")
	for _, h := range rep.Hosts {
		susp := "no"
		if h.Suspended {
			susp = "until " + at(h.NextCheck)
		}
		cause := h.LastCause
		if cause == "" {
			cause = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", h.Host, h.Deposits, h.Bytes, h.Strikes, cause, at(h.CoolUntil), susp)
	}
	tw.Flush()
}
