package main

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the driver, to tamper with a store as an attacker would

	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/provenance/warc"
)

// A vault crawl's deposits, verified offline from the store (V6), exported
// as JSON Lines and parsed back, exported as WARC and read back and
// verified; then the store is tampered with, one envelope's bytes and one
// proof's read instant (moved past the chain's validity), and verify names
// each failure and exits 1.
func TestVerifyExport_V6_GoodThenTampered(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 2, 2)
	dir := t.TempDir()
	store := filepath.Join(dir, "vault.db")
	cfg := readyConfig("vault")
	if r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-store", store, "-once"}, sw.flags...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	trust := sw.flags[2:] // -ca and -admit-private: the simulated web's CA and loopback address
	r := politecrawl(t, nil, append([]string{"verify", "-config", cfg, "-store", store}, trust...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "verify: 4 proofs checked, 4 good, 0 failed") {
		t.Fatalf("verify of a good store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without the simulated web's CA the chains reach no pinned root.
	if r := politecrawl(t, nil, "verify", "-config", cfg, "-store", store, "-admit-private", "127.0.0.0/8"); r.code != 1 || strings.Count(r.stdout, "FAIL ") != 4 {
		t.Errorf("verify against the pinned roots alone: exit %d\n%s", r.code, r.stdout)
	}

	// JSON Lines, parsed back.
	r = politecrawl(t, nil, "export", "-config", cfg, "-store", store, "-format", "jsonl")
	if r.code != 0 {
		t.Fatalf("export jsonl: exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d JSON lines, want 4:\n%s", len(lines), r.stdout)
	}
	for _, l := range lines {
		checkJSONLine(t, []byte(l))
		var d depositLine
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if d.Kind != "article" || d.Proof == nil || d.Digest != d.Proof.Digest || d.Article == nil || d.Source == "" || d.Key == "" {
			t.Errorf("deposit line %+v", d)
		}
	}
	if r := politecrawl(t, nil, "export", "-config", cfg, "-store", store, "-format", "jsonl", "-source", "news-2"); strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("-source news-2: %q", r.stdout)
	}
	if r := politecrawl(t, nil, "export", "-config", cfg, "-store", store, "-format", "jsonl", "-since", "2999-01-01"); r.stdout != "" || r.code != 0 {
		t.Errorf("-since the future: exit %d, %q", r.code, r.stdout)
	}

	// WARC, read back and verified.
	wf := filepath.Join(dir, "vault.warc.gz")
	if r := politecrawl(t, nil, "export", "-config", cfg, "-store", store, "-format", "warc", "-o", wf); r.code != 0 {
		t.Fatalf("export warc: exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for d, err := range warc.Read(bytes.NewReader(b)) {
		if err != nil {
			t.Fatal(err)
		}
		if d.Proof == nil || len(d.Envelope) == 0 || d.Status != 200 {
			t.Errorf("WARC deposit %+v", d)
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d deposits read back from the WARC, want 4", n)
	}
	if r := politecrawl(t, nil, append([]string{"verify"}, append(trust, wf)...)...); r.code != 0 || !strings.Contains(r.stdout, "4 good, 0 failed") {
		t.Errorf("verify %s: exit %d\n%s%s", wf, r.code, r.stdout, r.stderr)
	}
	// The same WARC re-compressed as one gzip member (zcat | gzip) verifies
	// the same; with a word changed inside, verify fails; an empty file
	// proves nothing and fails too.
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	regzip := func(name string, text []byte) string {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		zw.Write(text)
		zw.Close()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := regzip("one-member.warc.gz", plain)
	if r := politecrawl(t, nil, append([]string{"verify"}, append(trust, one)...)...); r.code != 0 || !strings.Contains(r.stdout, "verify: 4 proofs checked, 4 good, 0 failed") {
		t.Errorf("verify of a single-member WARC: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bad := regzip("tampered.warc.gz", bytes.Replace(plain, []byte("Story"), []byte("STORY"), 1))
	if r := politecrawl(t, nil, append([]string{"verify"}, append(trust, bad)...)...); r.code != 1 {
		t.Errorf("verify of a tampered single-member WARC: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	empty := filepath.Join(dir, "empty.warc")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := politecrawl(t, nil, append([]string{"verify"}, append(trust, empty)...)...); r.code != 1 || !strings.Contains(r.stderr, "no proof was checked") {
		t.Errorf("verify of an empty file: exit %d, want 1 saying no proof was checked\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Tampered: one envelope's bytes rewritten with the store's own
	// bookkeeping forged to match (only the proof's digest can tell), and
	// one proof's read instant moved past its chain's validity.
	db, err := sql.Open("sqlite", store)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int64
	var body []byte
	if err := db.QueryRow(`SELECT id, body FROM envelope ORDER BY id LIMIT 1`).Scan(&id, &body); err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(body, []byte("Story"), []byte("Glory"), 1)
	sum := provenance.DigestOf(forged)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE deposit SET digest = ? WHERE envelope_id = ?`, []any{sum, id}},
		{`UPDATE envelope SET body = ?, digest = ? WHERE id = ?`, []any{forged, sum, id}},
		{`UPDATE deposit SET proof = json_set(proof, '$.read_at', '2100-06-01T00:00:00.000000000Z') WHERE id = (SELECT max(id) FROM deposit)`, nil},
	} {
		if res, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s: %d rows", q.sql, n)
		}
	}
	r = politecrawl(t, nil, append([]string{"verify", "-config", cfg, "-store", store}, trust...)...)
	if r.code != 1 {
		t.Errorf("verify of a tampered store: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"verify: 4 proofs checked, 2 good, 2 failed", "(digest)", "(hop 0, chain)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("verify output lacks %q:\n%s", want, r.stdout)
		}
	}
	// An envelope damaged behind the store's back: the store refuses to
	// read the source's deposits, and verify says so.
	if _, err := db.Exec(`UPDATE envelope SET body = CAST('damaged' AS BLOB) WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	r = politecrawl(t, nil, append([]string{"verify", "-config", cfg, "-store", store}, trust...)...)
	if r.code != 1 || !strings.Contains(r.stdout, "the store cannot read this source's deposits") {
		t.Errorf("verify of a damaged store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if rep := sw.web.Audit(readyAudit("vault")); !rep.OK() {
		t.Errorf("auditor:\n%s", rep)
	}
}
