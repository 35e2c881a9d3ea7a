package sqlite

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/robots"
)

// sqlite3 runs the sqlite3 shell, read-only, on path with the given SQL
// and returns its output (list mode, "|" between columns). It skips the
// test when the shell is not on PATH.
func sqlite3(t *testing.T, path, query string) string {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("the sqlite3 shell is not on PATH (Debian: apt-get install sqlite3); the independent reader test needs it")
	}
	out, err := exec.Command(bin, "-readonly", "-batch", path, query).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %q: %v\n%s", query, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestIndependentReader opens a file written by the stores with the
// sqlite3 shell, as a user's own tools will, both while the DB is open
// (WAL not yet checkpointed) and after Close: the file passes SQLite's own
// integrity check, and the queries of the package doc return what was
// stored.
func TestIndependentReader(t *testing.T) {
	db := openTest(t, nil)
	now := time.Now().UTC()
	l := &backoff.Ledger{Store: db.Ledger()}
	if _, err := l.Observe(ctx, "rude.example", backoff.Outcome{Kind: backoff.Article, Status: 429}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Observe(ctx, "calm.example", backoff.Outcome{Kind: backoff.Article, Status: 200}, now); err != nil {
		t.Fatal(err)
	}
	if err := db.Robots().Put(ctx, "closed.example", robots.Record{Outcome: robots.DisallowAll, Failure: "dial tcp: connection refused", FetchedAt: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := db.Robots().Put(ctx, "open.example", robots.Record{Outcome: robots.AllowAll, Status: 404, FetchedAt: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	read := time.Date(2026, 4, 2, 9, 30, 0, 0, time.UTC)
	for i, src := range []string{"news-1", "news-1", "news-2", "news-1"} {
		env := []byte(fmt.Sprintf("<html><body><p>article %d of %s</p></body></html>", i, src))
		u := fmt.Sprintf("https://%s.example/a/%d", src, i)
		d := &crawl.Deposit{Source: src, Key: fmt.Sprint(i), URL: u, ReadAt: read.Add(time.Duration(i) * time.Hour),
			Envelope: env, MediaType: "text/html",
			Proof: &provenance.Proof{Schema: provenance.Schema, RequestedURL: u, FinalURL: u, ReadAt: read.Add(time.Duration(i) * time.Hour),
				Digest: provenance.DigestOf(env), Length: int64(len(env))}}
		d.Digest = d.Sum()
		if _, err := db.Deposits().Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T) {
		if got := sqlite3(t, db.Path(), "PRAGMA integrity_check"); got != "ok" {
			t.Fatalf("integrity_check = %q", got)
		}
		cooling := sqlite3(t, db.Path(), queryCooling)
		if !strings.HasPrefix(cooling, "rude.example|1|429||") || strings.Contains(cooling, "calm.example") {
			t.Fatalf("hosts cooling down:\n%s\nwant rude.example alone, 1 strike, status 429", cooling)
		}
		if got := sqlite3(t, db.Path(), queryDisallowAll); got != "closed.example|0|dial tcp: connection refused" {
			t.Fatalf("hosts disallowing all: %q", got)
		}
		if got, want := sqlite3(t, db.Path(), queryPerSource), "news-1|3|2026-04-02T09:30:00Z|2026-04-02T12:30:00Z\nnews-2|1|2026-04-02T11:30:00Z|2026-04-02T11:30:00Z"; got != want {
			t.Fatalf("deposits per source:\n%s\nwant\n%s", got, want)
		}
		if got, want := sqlite3(t, db.Path(), queryOneSource), "0|2026-04-02T09:30:00Z|52|https://news-1.example/a/0\n1|2026-04-02T10:30:00Z|52|https://news-1.example/a/1\n3|2026-04-02T12:30:00Z|52|https://news-1.example/a/3"; got != want {
			t.Fatalf("one source's deposits:\n%s\nwant\n%s", got, want)
		}
	}
	t.Run("Open", check)
	db.Close()
	t.Run("Closed", check)
}

// The queries of the package doc, word for word.
const (
	queryCooling = `SELECT key, strikes, last_status, last_challenge, datetime(until_ns / 1000000000, 'unixepoch') AS until
FROM ledger WHERE until_ns > unixepoch() * 1000000000 ORDER BY until_ns DESC;`
	queryDisallowAll = `SELECT host, status, failure FROM robots WHERE outcome = 2;`
	queryPerSource   = `SELECT source, count(*) AS deposits, strftime('%Y-%m-%dT%H:%M:%SZ', min(read_at_ns) / 1000000000, 'unixepoch') AS first_read,
       strftime('%Y-%m-%dT%H:%M:%SZ', max(read_at_ns) / 1000000000, 'unixepoch') AS last_read
FROM deposit GROUP BY source ORDER BY source;`
	queryOneSource = `SELECT d.key, strftime('%Y-%m-%dT%H:%M:%SZ', d.read_at_ns / 1000000000, 'unixepoch') AS read_at, e.length,
       json_extract(d.proof, '$.final_url') AS final_url
FROM deposit d LEFT JOIN envelope e ON e.id = d.envelope_id WHERE d.source = 'news-1' ORDER BY d.id;`
)
