package main

// politecrawl report -config FILE [-store FILE]... [-json]: what the
// crawls did, per source and per host, all of it from the store. Per
// source: its references by outcome, its deposits and schedule, and its
// counters, which the crawl state keeps in the transaction of what they
// count (crawl.Tallier: reads when asked, outcomes when settled), so a
// report after a kill -9 counts every read up to the kill. Per host: its
// articles by outcome and the reasons of those not deposited, its
// deposits, its sources' counters where they read that host alone, its
// robots.txt record, the refusal ledger (strikes, the last refusal,
// cool-down, suspension), and in words what holds it back now with the
// next try. Several workers' stores (-store repeated, or a glob) report as
// one: each deposit counted once.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/robots"
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
	RobotsReads     int `json:"robots_reads"`     // robots.txt fetches the source's reads asked for
}

func tallyFrom(t crawl.Tally) *Tally {
	return &Tally{Reads: t.Reads, TriggerReads: t.TriggerReads, NotModified: t.NotModified, ImageReads: t.ImageReads,
		Deposits: t.Deposits, Excerpts: t.Excerpts, Excluded: t.Excluded, Mismatches: t.Mismatches,
		Refused: t.Refusals, Failures: t.Failures, DepositFailures: t.DepositFailures, RobotsReads: t.RobotsReads}
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
	Host      string `json:"host"`
	LedgerKey string `json:"ledger_key"`
	// Articles are the references whose URL is on the host, by outcome
	// (pending, deposited, excerpted, excluded, mismatch).
	Articles map[string]int `json:"articles"`
	// NotDeposited counts the host's excluded and mismatched references
	// by the reason the crawl recorded.
	NotDeposited map[string]int `json:"not_deposited,omitempty"`
	Deposits     int            `json:"deposits"` // full deposits of its pages
	Bytes        int64          `json:"envelope_bytes"`
	// Tally is the counters of the sources that read this host (CountedFrom),
	// summed; nil when one of them also reads other hosts, whose counters
	// cannot be split by host, or when the state keeps no counters.
	Tally       *Tally   `json:"tally,omitempty"`
	CountedFrom []string `json:"counted_from,omitempty"`
	// Robots is the host's robots.txt record; nil when never fetched.
	Robots      *RobotsReport `json:"robots_txt,omitempty"`
	Strikes     int           `json:"strikes"`
	LastCause   string        `json:"last_refusal,omitempty"`
	LastRefusal time.Time     `json:"last_refusal_at,omitzero"`
	CoolUntil   time.Time     `json:"cooling_until,omitzero"`
	Suspended   bool          `json:"suspended"`
	NextCheck   time.Time     `json:"next_check,omitzero"`
	// disallowed are the trigger URLs robots.txt disallows us, for HeldBack.
	disallowed []string
	// HeldBack says in words why the host is not read now (robots.txt
	// unreachable or disallowing it, a cool-down, a suspension), each with
	// its next try; empty when nothing holds it back.
	HeldBack []string `json:"held_back,omitempty"`
}

// RobotsReport is a host's robots.txt record.
type RobotsReport struct {
	// Outcome is "rules" (the body's rules are obeyed), "allow all" or
	// "disallow all".
	Outcome   string    `json:"outcome"`
	Status    int       `json:"status,omitempty"`  // 0: no answer
	Failure   string    `json:"failure,omitempty"` // why the fetch failed, in words
	FetchedAt time.Time `json:"fetched_at,omitzero"`
	NextFetch time.Time `json:"next_fetch,omitzero"`
	Stale     bool      `json:"stale,omitempty"` // a last good copy kept after failed fetches
}

func robotsReport(r robots.Record) *RobotsReport {
	rr := &RobotsReport{Outcome: "rules", Status: r.Status, FetchedAt: r.FetchedAt.UTC(), NextFetch: r.Expires.UTC(), Stale: r.Stale}
	switch r.Outcome {
	case robots.AllowAll:
		rr.Outcome = "allow all"
	case robots.DisallowAll:
		rr.Outcome = "disallow all"
	}
	switch {
	case r.Failure != "":
		rr.Failure = networkCause(errors.New(r.Failure))
	case r.Stale && r.LastFailure != "":
		rr.Failure = networkCause(errors.New(r.LastFailure))
	}
	return rr
}

// heldBack says why the host is not read at now, each cause with its next
// try, from its robots.txt record (unreachable, or disallowing agent, the
// product token, a feed) and its ledger record.
func (h *HostReport) heldBack(now time.Time, agent string) []string {
	var out []string
	if r := h.Robots; r != nil && r.Outcome == "disallow all" && r.NextFetch.After(now) {
		switch {
		case r.Failure != "":
			out = append(out, "robots.txt unreachable: "+r.Failure+"; next try "+clockTime(r.NextFetch, now))
		case r.Status >= 500:
			out = append(out, fmt.Sprintf("robots.txt answered HTTP %d: the site is off until it is read again; next try %s", r.Status, clockTime(r.NextFetch, now)))
		default:
			out = append(out, fmt.Sprintf("robots.txt disallows everything (HTTP %d); read again %s", r.Status, clockTime(r.NextFetch, now)))
		}
	}
	if r := h.Robots; r != nil && len(h.disallowed) > 0 {
		out = append(out, fmt.Sprintf("robots.txt disallows the feed %s for %s; next try %s", strings.Join(h.disallowed, ", "), agent, clockTime(r.NextFetch, now)))
	}
	cause := h.LastCause
	if cause == "" {
		cause = "a refusal"
	}
	switch {
	case h.Suspended:
		out = append(out, fmt.Sprintf("suspended: %d refusals in a row, the last %s; articles re-checked %s", h.Strikes, cause, clockTime(h.NextCheck, now)))
	case h.CoolUntil.After(now):
		out = append(out, fmt.Sprintf("cooling down after %s (%d in a row); next try %s", cause, h.Strikes, clockTime(h.CoolUntil, now)))
	}
	return out
}

// Report is the whole report.
type Report struct {
	Config string `json:"config"`
	// Store is the SQLite file read; Stores the files, when several
	// workers' stores are read as one.
	Store  string   `json:"store,omitempty"`
	Stores []string `json:"stores,omitempty"`
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
	sf.register(fset, true)
	asJSON := fset.Bool("json", false, "print JSON instead of tables")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return argsError("report", fset.Args())
	}
	ctx := context.Background()
	cfg, set, err := sf.openSet(ctx, "report")
	if err != nil {
		return err
	}
	defer set.Close()
	rep, err := buildReport(ctx, cfg, set, time.Now())
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(stdout, rep)
	return nil
}

// buildReport reads the report from the stores of set.
func buildReport(ctx context.Context, cfg *Config, set *storeSet, now time.Time) (*Report, error) {
	fp, err := cfg.FetchPolicy()
	if err != nil {
		return nil, err
	}
	deps := set.Deposits()
	rep := &Report{Config: cfg.Path()}
	if paths := set.Paths(); len(paths) == 1 {
		rep.Store = paths[0]
	} else {
		rep.Stores = paths
	}
	hosts := map[string]*HostReport{}
	host := func(h string) *HostReport {
		h = strings.ToLower(h)
		if hosts[h] == nil {
			hosts[h] = &HostReport{Host: h, Articles: map[string]int{}}
		}
		return hosts[h]
	}
	readers := map[string][]string{}  // host: the sources that read it
	feeds := map[string][]sourceURL{} // host: its sources' trigger URLs
	tallies := map[string]*crawl.Tally{}
	sourceHosts := map[string]map[string]bool{}
	for _, s := range cfg.Sources {
		sr := SourceReport{ID: s.ID, Active: s.Active, Refs: map[string]int{}}
		touched := map[string]bool{}
		touch := func(h string) *HostReport {
			hr := host(h)
			touched[hr.Host] = true
			return hr
		}
		st, err := set.sourceState(ctx, s.ID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.ID, err)
		}
		if st.tally != nil {
			sr.Tally = tallyFrom(*st.tally)
			rep.Counted = set.where()
		}
		for _, r := range st.refs {
			sr.Refs[r.Outcome.String()]++
			if h := hostOfURL(r.URL); h != "" {
				hr := touch(h)
				hr.Articles[r.Outcome.String()]++
				if (r.Outcome == crawl.Excluded || r.Outcome == crawl.Mismatch) && r.Note != "" {
					if hr.NotDeposited == nil {
						hr.NotDeposited = map[string]int{}
					}
					hr.NotDeposited[r.Note]++
				}
			}
		}
		list, err := deps.List(ctx, s.ID, time.Time{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.ID, err)
		}
		for _, d := range list {
			if d.Envelope == nil {
				sr.Excerpts++
				continue
			}
			sr.Deposits++
			sr.Bytes += int64(len(d.Envelope))
			if h := hostOfURL(d.URL); h != "" {
				hr := touch(h)
				hr.Deposits++
				hr.Bytes += int64(len(d.Envelope))
			}
		}
		sc := st.schedule
		sr.LastTrigger, sr.NextTrigger, sr.LastBacklog = sc.LastTrigger, sc.NextTrigger, sc.LastBacklog
		rep.Sources = append(rep.Sources, sr)
		for _, f := range triggerURLs(&s) {
			if h := hostOfURL(f); h != "" {
				hr := touch(h)
				feeds[hr.Host] = append(feeds[hr.Host], sourceURL{s.ID, f})
			}
		}
		for _, a := range s.Admitted {
			if !strings.HasPrefix(a, "*.") {
				touch(a)
			}
		}
		for h := range touched {
			readers[h] = append(readers[h], s.ID)
		}
		sourceHosts[s.ID] = touched
		tallies[s.ID] = st.tally
	}
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		hr := hosts[h]
		hr.LedgerKey = h
		if fp.PerSite {
			if site, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
				hr.LedgerKey = site
			}
		}
		hr.Tally, hr.CountedFrom = hostTally(readers[h], sourceHosts, tallies)
		// The configured hosts are robots.txt's keys but for case and a
		// default port; one that is not (IDNA, another port) finds no record.
		if r, ok, err := set.robots(ctx, h); err != nil {
			return nil, fmt.Errorf("robots.txt record %s: %w", h, err)
		} else if ok {
			hr.Robots = robotsReport(r)
			if r.Outcome == robots.ParseBody {
				hr.disallowed = disallowedFeeds(robots.Parse(r.Body), fp.UserAgent(), feeds[h])
			}
		}
		st, ok, err := set.ledger(ctx, hr.LedgerKey)
		if err != nil {
			return nil, fmt.Errorf("ledger %s: %w", hr.LedgerKey, err)
		}
		if ok {
			hr.Strikes, hr.LastCause, hr.Suspended = st.Strikes, st.Cause(), st.Suspended
			if !st.LastAt.IsZero() {
				hr.LastRefusal = st.LastAt.UTC()
			}
			if st.Until.After(now) {
				hr.CoolUntil = st.Until.UTC()
			}
			if st.Suspended {
				hr.NextCheck = st.NextCheck.UTC()
			}
		}
		hr.HeldBack = hr.heldBack(now, fp.Name)
		rep.Hosts = append(rep.Hosts, *hr)
	}
	return rep, nil
}

// sourceURL is a source's trigger URL.
type sourceURL struct{ source, url string }

// disallowedFeeds returns the trigger URLs of feeds that rules disallow
// for the user agent ua, each as "PATH (SOURCE)".
func disallowedFeeds(rules *robots.Rules, ua string, feeds []sourceURL) []string {
	var out []string
	for _, f := range feeds {
		if !rules.Allowed(ua, f.url) {
			path := f.url
			if u, err := url.Parse(f.url); err == nil {
				path = u.RequestURI()
			}
			out = append(out, path+" ("+f.source+")")
		}
	}
	return out
}

// hostTally sums the counters of the sources that read a host, when each
// of them reads that host alone: a source's counters are kept per source,
// and one that reads several hosts cannot be split between them.
func hostTally(ids []string, sourceHosts map[string]map[string]bool, tallies map[string]*crawl.Tally) (*Tally, []string) {
	if len(ids) == 0 {
		return nil, nil
	}
	var sum crawl.Tally
	for _, id := range ids {
		t := tallies[id]
		if t == nil || len(sourceHosts[id]) != 1 {
			return nil, nil
		}
		sum.Add(*t)
	}
	slices.Sort(ids)
	return tallyFrom(sum), ids
}

func printReport(w io.Writer, rep *Report) {
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	if rep.Store != "" {
		fmt.Fprintf(w, "report of %s (store %s)\n", rep.Config, rep.Store)
	} else {
		fmt.Fprintf(w, "report of %s (%d stores read as one, each deposit once: %s)\n", rep.Config, len(rep.Stores), strings.Join(rep.Stores, ", "))
	}
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
	fmt.Fprintln(tw, "HOST\tARTICLES\tDEPOSITS\tEXCLUDED\tENVELOPE BYTES\tREADS\tFEED READS\tREFUSED\tFAILURES\tROBOTS.TXT\tSTRIKES\tLAST REFUSAL\tCOOLING UNTIL\tSUSPENDED")
	for _, h := range rep.Hosts {
		articles := 0
		for _, n := range h.Articles {
			articles += n
		}
		susp := "no"
		if h.Suspended {
			susp = "until " + at(h.NextCheck)
		}
		cause := h.LastCause
		if cause == "" {
			cause = "-"
		} else if !h.LastRefusal.IsZero() {
			cause += " at " + at(h.LastRefusal)
		}
		counters := "-\t-\t-\t-"
		if t := h.Tally; t != nil {
			counters = fmt.Sprintf("%d\t%d\t%d\t%d", t.Reads, t.TriggerReads, t.Refused, t.Failures)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%s\t%s\n", h.Host, articles, h.Deposits,
			h.Articles["excluded"]+h.Articles["mismatch"], h.Bytes, counters, robotsCell(h.Robots), h.Strikes, cause, at(h.CoolUntil), susp)
	}
	tw.Flush()
	if rep.Counted != "" {
		fmt.Fprintln(w, "a host's READS, FEED READS, REFUSED and FAILURES are its sources' counters; - where one of them reads other hosts too")
	}
	var held, reasons []string
	for _, h := range rep.Hosts {
		for _, c := range h.HeldBack {
			held = append(held, "  "+h.Host+": "+c)
		}
		for _, why := range slices.Sorted(maps.Keys(h.NotDeposited)) {
			reasons = append(reasons, fmt.Sprintf("  %s: %d %s", h.Host, h.NotDeposited[why], why))
		}
	}
	if len(held) > 0 {
		fmt.Fprintln(w, "\nhosts held back now:")
		fmt.Fprintln(w, strings.Join(held, "\n"))
	}
	if len(reasons) > 0 {
		fmt.Fprintln(w, "\narticles not deposited, by reason:")
		fmt.Fprintln(w, strings.Join(reasons, "\n"))
	}
}

// robotsCell is a host's robots.txt record in a table cell.
func robotsCell(r *RobotsReport) string {
	switch {
	case r == nil:
		return "-"
	case r.Failure != "" && r.Outcome == "disallow all":
		return "unreachable"
	case r.Status != 0:
		return fmt.Sprintf("%d %s", r.Status, r.Outcome)
	}
	return r.Outcome
}
