package main

// The live view: on a terminal, one status line rewritten in place a few
// times a second; elsewhere (CI, a pipe, a log file) nothing but the log
// lines.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// liveEvery is how often the live view is redrawn: a few times a second.
const liveEvery = 250 * time.Millisecond

// isTerminal reports whether f is a character device (a terminal), the
// only place a status line rewritten in place makes sense.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// renderLive writes the status line for s: carriage return, the line,
// erase to its end; no newline, so the next one overwrites it.
func renderLive(w io.Writer, s snapshot, elapsed time.Duration) {
	fmt.Fprintf(w, "\r%s\x1b[K", statusLine(s, elapsed))
}

// statusLine is the live view's text: what the crawl is doing per state and
// its throughput against the politeness bound.
func statusLine(s snapshot, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  due %d  in pass %d | deposited %d  excerpts %d  failed %d  refused %d | hosts cooling %d  suspended %d | %d reads, %.1f/s (bound %.1f/s on %d hosts) | 304 %d",
		elapsed.Truncate(time.Second), s.Due, s.InPass, s.Deposited, s.Excerpted, s.Failed, s.Refused,
		s.Cooling, s.Suspended, s.Requests, s.Rate, s.Bound, s.ActiveHosts, s.NotModified)
	if s.WaitingFor != "" {
		fmt.Fprintf(&b, " | waiting for %s's slot", s.WaitingFor)
		if s.WaitingOthers > 0 {
			fmt.Fprintf(&b, " (+%d more)", s.WaitingOthers)
		}
	}
	return b.String()
}

// runLive redraws the status line on w until ctx ends, then ends the line.
func runLive(ctx context.Context, w io.Writer, o *observer, start time.Time) {
	t := time.NewTicker(liveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			renderLive(w, o.snapshot(), time.Since(start))
			fmt.Fprintln(w)
			return
		case <-t.C:
			renderLive(w, o.snapshot(), time.Since(start))
		}
	}
}

// isTerminalWriter reports whether w is a terminal.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}
