package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/provenance/warc"
)

// copyStore copies a store a crawl has closed (its WAL, if any, with it),
// as a worker's file restored beside another's.
func copyStore(t *testing.T, from, to string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(from + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// twoWorkerStores crawls the vault config into two stores that share some
// deposits: a.db holds news-1's two articles, b.db the same two (the same
// copies: b.db began as a.db) and news-2's two. It returns the config, the
// stores' folder, the test flags that trust the simulated web, and the web.
func twoWorkerStores(t *testing.T) (cfg, dir string, trust []string, sw *simWeb) {
	t.Helper()
	sw = newSimWeb(t, 2, 2)
	dir = t.TempDir()
	cfg = readyConfig("vault")
	full, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	head, tail, ok := strings.Cut(string(full), "  - id: news-2\n")
	if !ok {
		t.Fatal("configs/vault.yaml has no news-2")
	}
	onlyNews1 := filepath.Join(t.TempDir(), "vault-news-1.yaml")
	if err := os.WriteFile(onlyNews1, []byte(head+"  - id: news-2\n"+strings.Replace(tail, "active: true", "active: false", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	if r := politecrawl(t, nil, append([]string{"crawl", "-config", onlyNews1, "-store", a, "-once"}, sw.flags...)...); r.code != 0 {
		t.Fatalf("crawl a.db: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	copyStore(t, a, b)
	if r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-store", b, "-once"}, sw.flags...)...); r.code != 0 {
		t.Fatalf("crawl b.db: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return cfg, dir, sw.flags[2:], sw
}

// V6 over several workers' stores (issue 28 §4): two stores sharing two of
// their deposits, named by a quoted glob or by -store repeated, read as
// one. report counts each deposit once, export writes one WARC (and one
// JSON Lines file) with each deposit once, verify checks each once, and a
// proof tampered with in one copy, or an envelope forged in one file with
// the store's bookkeeping forged to match, still fails.
func TestStores_V6_SeveralWorkersOneView(t *testing.T) {
	t.Parallel()
	cfg, dir, trust, sw := twoWorkerStores(t)
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	glob := filepath.Join(dir, "*.db")

	r := politecrawl(t, nil, "report", "-config", cfg, "-store", glob, "-json")
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, r.stdout)
	}
	if len(rep.Stores) != 2 || rep.Store != "" {
		t.Errorf("report of %q names the stores %q and %q", glob, rep.Stores, rep.Store)
	}
	for _, s := range rep.Sources {
		if want := map[string]int{"news-1": 2, "news-2": 2}[s.ID]; s.Deposits != want || s.Refs["deposited"] != want {
			t.Errorf("report: %s: %d deposits, %v refs; want %d of each", s.ID, s.Deposits, s.Refs, want)
		}
	}
	for _, h := range rep.Hosts {
		if (h.Host == "news-1.example" || h.Host == "news-2.example") && (h.Deposits != 2 || h.Articles["deposited"] != 2) {
			t.Errorf("report: %s: %d deposits, %v articles; want 2 of each", h.Host, h.Deposits, h.Articles)
		}
	}
	table := politecrawl(t, nil, "report", "-config", cfg, "-store", a, "-store", b)
	if !strings.Contains(table.stdout, "2 stores read as one") {
		t.Errorf("report table of -store repeated:\n%s", table.stdout)
	}

	if keys := exportKeys(t, cfg, glob); len(keys) != 4 {
		t.Errorf("export jsonl of both stores: %d deposits, want 4: %v", len(keys), keys)
	}
	wf := filepath.Join(t.TempDir(), "all.warc.gz")
	r = politecrawl(t, nil, "export", "-config", cfg, "-store", a, "-store", b, "-format", "warc", "-o", wf)
	if r.code != 0 || !strings.Contains(r.stderr, "export: 4 deposits from 2 stores (2 copies held by more than one store written once)") {
		t.Fatalf("export warc: exit %d\n%s", r.code, r.stderr)
	}
	wb, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]int{}
	for d, err := range warc.Read(bytes.NewReader(wb)) {
		if err != nil {
			t.Fatal(err)
		}
		digests[d.Proof.Digest]++
	}
	if len(digests) != 4 {
		t.Errorf("the WARC holds %d digests, want 4: %v", len(digests), digests)
	}
	for dg, n := range digests {
		if n != 1 {
			t.Errorf("the WARC holds %s %d times", dg, n)
		}
	}
	if r := politecrawl(t, nil, append([]string{"verify"}, append(trust, wf)...)...); r.code != 0 || !strings.Contains(r.stdout, "verify: 4 proofs checked, 4 good, 0 failed") {
		t.Errorf("verify of the WARC: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	verify := func() result {
		return politecrawl(t, nil, append([]string{"verify", "-config", cfg, "-store", glob}, trust...)...)
	}
	if r := verify(); r.code != 0 || !strings.Contains(r.stdout, "verify: 4 proofs checked, 4 good, 0 failed in 2 stores (2 copies held by more than one store checked once)") {
		t.Fatalf("verify of both stores: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// One copy's proof moved past its chain's validity, in a.db: the copies
	// differ, each is checked, and a.db's fails.
	db, err := sql.Open("sqlite", a)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE deposit SET proof = json_set(proof, '$.read_at', '2100-06-01T00:00:00.000000000Z') WHERE id = (SELECT min(id) FROM deposit)`); err != nil {
		t.Fatal(err)
	}
	r = verify()
	if r.code != 1 || !strings.Contains(r.stdout, "verify: 5 proofs checked, 4 good, 1 failed") || !strings.Contains(r.stdout, " in "+a+" ") {
		t.Errorf("verify with a tampered proof in a.db: exit %d, want 1 naming a.db\n%s%s", r.code, r.stdout, r.stderr)
	}

	// b.db's copy of the other shared deposit rewritten, the envelope's
	// digest forged to match and the deposit's record left alone: the store
	// reads it, and verify finds it is not the bytes its proof read.
	bdb, err := sql.Open("sqlite", b)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var id int64
	var body []byte
	if err := bdb.QueryRow(`SELECT e.id, e.body FROM envelope e JOIN deposit d ON d.envelope_id = e.id WHERE d.source = 'news-1' ORDER BY d.id DESC LIMIT 1`).Scan(&id, &body); err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(body, []byte("Story"), []byte("Glory"), 1)
	if _, err := bdb.Exec(`UPDATE envelope SET body = ?, digest = ? WHERE id = ?`, forged, provenance.DigestOf(forged), id); err != nil {
		t.Fatal(err)
	}
	r = verify()
	if r.code != 1 || !strings.Contains(r.stdout, "verify: 6 proofs checked, 4 good, 2 failed") || !strings.Contains(r.stdout, " in "+b+" ") || !strings.Contains(r.stdout, "(digest)") {
		t.Errorf("verify with a forged envelope in b.db: exit %d, want 1 naming b.db\n%s%s", r.code, r.stdout, r.stderr)
	}
	if rep := sw.web.Audit(readyAudit("vault")); !rep.OK() {
		t.Errorf("auditor:\n%s", rep)
	}
}

// Naming several stores fails clearly: a glob that matches nothing, a
// file among them that is not a store, stores left unquoted for the shell
// to expand, and withdraw given more than one; none exits 0.
func TestStores_SeveralStoresErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := readyConfig("vault")
	notStore := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(notStore, []byte("these are notes, not a database; long enough to be read as a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"report"}, {"export", "-format", "warc"}, {"verify"}} {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"-store", filepath.Join(dir, "workers", "*.db")}, "matches no file"},
			{[]string{"-store", filepath.Join(dir, "[a-"), "-store", notStore}, "bad glob"},
			{[]string{"-store", notStore, "-store", filepath.Join(dir, "missing.db")}, "store " + notStore + ": "},
			{[]string{"-store", notStore, filepath.Join(dir, "w2.db")}, "repeat -store or quote the glob"},
		} {
			r := politecrawl(t, nil, append(append(cmd, "-config", cfg), tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%s %q: exit %d, want 2 saying %q:\n%s%s", cmd, tc.args, r.code, tc.want, r.stdout, r.stderr)
			}
		}
	}
	r := politecrawl(t, nil, "withdraw", "-config", cfg, "-source", "news-3-cms", "-store", notStore, "-store", filepath.Join(dir, "other.db"))
	if r.code != 2 || !strings.Contains(r.stderr, "one store at a time") {
		t.Errorf("withdraw of two stores: exit %d\n%s", r.code, r.stderr)
	}
}
