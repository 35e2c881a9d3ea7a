package main

// explain's answer, printed by explain and by fetch when it refuses.

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
)

// printExplanation writes explain's answer, one row per layer of the
// chain: the verdict, the URL as it would be requested, the source that
// admits its host, robots.txt, the ledger and the next pacing slot.
func printExplanation(w io.Writer, src *crawl.Source, e fetch.Explanation, now time.Time) {
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	if e.Allowed {
		row(w, "verdict", "allowed")
	} else {
		row(w, "verdict", "refused: "+strings.TrimPrefix(e.Refusal.Error(), "fetch: refused "))
	}
	row(w, "url", e.URL+" (as it would be requested: tracking parameters removed)")
	if e.Host != "" {
		row(w, "host", e.Host+", paced and ledgered as "+e.Key)
	}
	row(w, "kind", kindName(e.Kind))
	if src != nil {
		state := "active"
		if !src.Active {
			state = "inactive: never fetched"
		}
		row(w, "source", fmt.Sprintf("%s (%s), %s, policy %s", src.ID, src.Name, state, src.Policy.Preset))
		if !src.FullText && e.Kind == fetch.KindArticle {
			row(w, "licence", "no full text: the crawl keeps the feed's excerpt and does not read this source's articles")
		}
	} else {
		row(w, "source", "none of the config's sources admits this host")
	}
	d := e.Robots
	switch {
	case d.Site == "" && e.Host == "":
		row(w, "robots.txt", "not asked: refused before it")
	case d.Site == "":
		row(w, "robots.txt", "no record")
	default:
		rec := "fetched " + at(d.FetchedAt)
		if d.Status != 0 {
			rec += fmt.Sprintf(", status %d", d.Status)
		}
		if d.Failure != "" {
			rec += ", failed: " + d.Failure
		}
		if d.Stale {
			rec += ", a last good copy"
		}
		rec += ", stands until " + at(d.Expires)
		row(w, "robots.txt", rec)
		switch d.Outcome {
		case robots.DisallowAll:
			row(w, "robots.txt rule", "the whole site is disallowed by the answer to robots.txt")
		case robots.AllowAll:
			row(w, "robots.txt rule", "everything allowed (no robots.txt to obey)")
		default:
			grp := "no group applies"
			if d.Group != "" {
				grp = fmt.Sprintf("group %q (line %d)", d.Group, d.AgentLine)
			}
			rule := "no rule matches: allowed by default"
			if d.Rule != "" {
				rule = fmt.Sprintf("%q (line %d)", d.Rule, d.Line)
			}
			row(w, "robots.txt rule", grp+"; "+rule+" for "+d.Path)
		}
	}
	if e.CrawlDelay > 0 {
		row(w, "crawl-delay", fmtDuration(e.CrawlDelay))
	} else {
		row(w, "crawl-delay", "none")
	}
	l := e.Ledger
	switch {
	case l.Host == "":
		row(w, "ledger", "not asked")
	case !l.Allowed && l.Reason == backoff.Suspended:
		row(w, "ledger", fmt.Sprintf("suspended until %s (%d refusals in a row, last %s at %s)", at(l.Until), l.Strikes, l.Cause, at(l.LastAt)))
	case !l.Allowed && l.Reason == backoff.Unavailable:
		row(w, "ledger", "the ledger's store could not be read: refused (fail closed)")
	case !l.Allowed:
		row(w, "ledger", fmt.Sprintf("cooling down until %s (%d refusals in a row, last %s at %s)", at(l.Until), l.Strikes, l.Cause, at(l.LastAt)))
	case l.Reason == backoff.Recheck:
		row(w, "ledger", "suspended, its re-check is due: the next read is that re-check")
	case l.Strikes > 0:
		row(w, "ledger", fmt.Sprintf("clear (%d refusals in a row, last %s at %s)", l.Strikes, l.Cause, at(l.LastAt)))
	default:
		row(w, "ledger", "clear")
	}
	if e.NextSlot.IsZero() || !e.NextSlot.After(now) {
		row(w, "next slot", "now")
	} else {
		row(w, "next slot", at(e.NextSlot))
	}
}
