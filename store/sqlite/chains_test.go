package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/provenance"
)

var chainsT0 = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

// chainOf is a made-up certificate chain for host, leaf first.
func chainOf(host string) []string {
	return []string{strings.Repeat("L"+host, 80), strings.Repeat("I"+host, 70)}
}

// chainDeposit is a full deposit of source read through hops, each hop
// (url, chain) in order.
func chainDeposit(source string, n int, hops ...provenance.Hop) *crawl.Deposit {
	env := []byte(fmt.Sprintf("<html><body><p>article %d of %s</p></body></html>", n, source))
	at := chainsT0.Add(time.Duration(n) * time.Minute)
	last := hops[len(hops)-1].URL
	d := &crawl.Deposit{Source: source, Key: fmt.Sprint(n), URL: last, ReadAt: at, Envelope: env, MediaType: "text/html",
		Proof: &provenance.Proof{Schema: provenance.Schema, RequestedURL: hops[0].URL, FinalURL: last, ReadAt: at, Hops: hops,
			Digest: provenance.DigestOf(env), Length: int64(len(env)), CodingsRemoved: []string{"gzip"},
			Anchor: &provenance.Anchor{Bundle: "test", RootSHA256: strings.Repeat("ab", 32), Subject: "CN=Test Root"}, SDKVersion: "test"}}
	d.Digest = d.Sum()
	return d
}

func tlsHop(u, host string, at time.Time) provenance.Hop {
	return provenance.Hop{URL: u, Status: 200, ConnectedIP: "192.0.2.7", TLSVersion: "TLS 1.3", CipherSuite: "TLS_AES_128_GCM_SHA256",
		SNI: host, HandshakeAt: at, Chain: chainOf(host)}
}

// chainDeposits are deposits whose proofs share chains: three of a.example
// (one of them redirected there from b.example, so two chains in one
// proof), one of b.example, one read over plain http (no chain) and one
// whose TLS hop presented no certificate (an empty chain).
func chainDeposits() []*crawl.Deposit {
	a := func(n int) provenance.Hop {
		return tlsHop(fmt.Sprintf("https://a.example/%d", n), "a.example", chainsT0.Add(time.Duration(n)*time.Second))
	}
	redirect := tlsHop("https://b.example/go/3", "b.example", chainsT0)
	redirect.Status, redirect.Location = 301, "https://a.example/3"
	plain := provenance.Hop{URL: "http://c.example/5", Status: 200, ConnectedIP: "192.0.2.9"}
	bare := tlsHop("https://d.example/6", "d.example", chainsT0)
	bare.Chain = []string{}
	return []*crawl.Deposit{
		chainDeposit("a", 1, a(1)),
		chainDeposit("a", 2, a(2)),
		chainDeposit("a", 3, redirect, a(3)),
		chainDeposit("b", 4, tlsHop("https://b.example/4", "b.example", chainsT0)),
		chainDeposit("c", 5, plain),
		chainDeposit("d", 6, bare),
	}
}

func proofJSON(t *testing.T, p *provenance.Proof) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// listAll lists each source's deposits, keyed by source and key.
func listAll(t *testing.T, db *DB, sources ...string) map[string]*crawl.Deposit {
	t.Helper()
	got := map[string]*crawl.Deposit{}
	for _, s := range sources {
		ds, err := db.Deposits().List(ctx, s, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			got[d.Source+" "+d.Key] = d
		}
	}
	return got
}

// TestDeposits_ChainsStoredOnce: each distinct certificate chain of the
// proofs is stored once in cert_chain, whatever the number of deposits
// (and hops) that present it; the deposit rows keep their proofs without
// the chains; List gives every proof back byte for byte as it was put
// (its JSON identical), a hop without TLS or without certificates
// included; the deposit_proof view gives outside readers each proof whole
// (in the sqlite3 shell too);
// and Withdraw drops the chains that no other deposit names.
func TestDeposits_ChainsStoredOnce(t *testing.T) {
	db := openTest(t, nil)
	put := chainDeposits()
	for _, d := range put {
		if _, err := db.Deposits().Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	var chains int
	if err := db.r.QueryRow(`SELECT count(*) FROM cert_chain`).Scan(&chains); err != nil || chains != 2 {
		t.Fatalf("%d chains stored, %v; want 2 (a.example's, b.example's)", chains, err)
	}
	var inline int
	if err := db.r.QueryRow(`SELECT count(*) FROM deposit WHERE instr(proof, ?1) > 0 OR instr(proof, ?2) > 0`,
		chainOf("a.example")[0], chainOf("b.example")[0]).Scan(&inline); err != nil || inline != 0 {
		t.Fatalf("%d deposit rows still hold a chain in their proof, %v", inline, err)
	}
	got := listAll(t, db, "a", "b", "c", "d")
	for _, d := range put {
		g := got[d.Source+" "+d.Key]
		if g == nil {
			t.Fatalf("deposit %s %s not listed", d.Source, d.Key)
		}
		if want, have := proofJSON(t, d.Proof), proofJSON(t, g.Proof); !bytes.Equal(want, have) {
			t.Fatalf("deposit %s %s: proof read back as\n%s\nwant\n%s", d.Source, d.Key, have, want)
		}
	}
	// The view, for outside readers.
	for _, d := range put {
		var text string
		if err := db.r.QueryRow(`SELECT p.proof FROM deposit_proof p JOIN deposit d ON d.id = p.deposit_id WHERE d.source = ?1 AND d.key = ?2`,
			d.Source, d.Key).Scan(&text); err != nil {
			t.Fatal(err)
		}
		var p provenance.Proof
		if err := json.Unmarshal([]byte(text), &p); err != nil {
			t.Fatalf("deposit_proof of %s %s: %v\n%s", d.Source, d.Key, err, text)
		}
		if want, have := proofJSON(t, d.Proof), proofJSON(t, &p); !bytes.Equal(want, have) {
			t.Fatalf("deposit_proof of %s %s:\n%s\nwant\n%s", d.Source, d.Key, have, want)
		}
	}
	// The view through the sqlite3 shell, an older SQLite than ours.
	t.Run("sqlite3", func(t *testing.T) {
		for _, d := range put {
			text := sqlite3(t, db.Path(), fmt.Sprintf(`SELECT p.proof FROM deposit_proof p JOIN deposit d ON d.id = p.deposit_id WHERE d.source = '%s' AND d.key = '%s'`, d.Source, d.Key))
			var p provenance.Proof
			if err := json.Unmarshal([]byte(text), &p); err != nil {
				t.Fatalf("deposit_proof of %s %s in the shell: %v\n%s", d.Source, d.Key, err, text)
			}
			if want, have := proofJSON(t, d.Proof), proofJSON(t, &p); !bytes.Equal(want, have) {
				t.Fatalf("deposit_proof of %s %s in the shell:\n%s\nwant\n%s", d.Source, d.Key, have, want)
			}
		}
	})
	// b's deposit goes; b.example's chain stays, a's third deposit names it.
	if _, err := db.Deposits().Withdraw(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRow(`SELECT count(*) FROM cert_chain`).Scan(&chains); err != nil || chains != 2 {
		t.Fatalf("%d chains after b's withdrawal, %v; want 2 (b.example's is still named by a's third)", chains, err)
	}
	if _, err := db.Deposits().Withdraw(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRow(`SELECT count(*) FROM cert_chain`).Scan(&chains); err != nil || chains != 0 {
		t.Fatalf("%d chains after every deposit naming one was withdrawn, %v; want 0", chains, err)
	}
}

// TestMigrates_ProofsStoredWholeReadBackIdentically: a file of the schema
// before chains were stored apart, with deposits whose proofs hold their
// chains, opens; its deposits read back as they were, the deposit_proof
// view gives their proofs as stored, and a deposit put after the migration
// that presents one of their chains stores it once, beside them.
func TestMigrates_ProofsStoredWholeReadBackIdentically(t *testing.T) {
	const before = 8
	path := filepath.Join(t.TempDir(), "old.db")
	raw := rawOpen(t, path)
	for v := range before {
		if _, err := raw.Exec(migrations[v]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA application_id=%d; PRAGMA user_version=%d", applicationID, before)); err != nil {
		t.Fatal(err)
	}
	old := chainDeposits()
	for i, d := range old {
		// As schema 8's Put wrote them: the proof whole.
		if _, err := raw.Exec(`INSERT INTO envelope (id, digest, length, body) VALUES (?1, ?2, ?3, ?4)`, i+1, provenance.DigestOf(d.Envelope), len(d.Envelope), d.Envelope); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(`INSERT INTO deposit (source, key, url, read_at_ns, digest, media_type, envelope_id, proof, stored_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`,
			d.Source, d.Key, d.URL, toNS(d.ReadAt), d.Digest, d.MediaType, i+1, string(proofJSON(t, d.Proof)), toNS(d.ReadAt)); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := listAll(t, db, "a", "b", "c", "d")
	for _, d := range old {
		g := got[d.Source+" "+d.Key]
		if g == nil {
			t.Fatalf("deposit %s %s not listed after the migration", d.Source, d.Key)
		}
		if want, have := proofJSON(t, d.Proof), proofJSON(t, g.Proof); !bytes.Equal(want, have) {
			t.Fatalf("deposit %s %s after the migration: proof\n%s\nwant\n%s", d.Source, d.Key, have, want)
		}
		if !bytes.Equal(g.Envelope, d.Envelope) || g.Digest != d.Digest || !g.ReadAt.Equal(d.ReadAt) || g.URL != d.URL {
			t.Fatalf("deposit %s %s after the migration: %+v", d.Source, d.Key, g)
		}
		var text string
		if err := db.r.QueryRow(`SELECT p.proof FROM deposit_proof p JOIN deposit d ON d.id = p.deposit_id WHERE d.source = ?1 AND d.key = ?2`,
			d.Source, d.Key).Scan(&text); err != nil || text != string(proofJSON(t, d.Proof)) {
			t.Fatalf("deposit_proof of the old %s %s = %q, %v", d.Source, d.Key, text, err)
		}
	}
	nd := chainDeposit("a", 7, tlsHop("https://a.example/7", "a.example", chainsT0))
	if _, err := db.Deposits().Put(ctx, nd); err != nil {
		t.Fatal(err)
	}
	var chains int
	if err := db.r.QueryRow(`SELECT count(*) FROM cert_chain`).Scan(&chains); err != nil || chains != 1 {
		t.Fatalf("%d chains after one new deposit, %v; want 1", chains, err)
	}
	got = listAll(t, db, "a")
	if g := got["a 7"]; g == nil || !bytes.Equal(proofJSON(t, g.Proof), proofJSON(t, nd.Proof)) {
		t.Fatalf("the deposit put after the migration read back as %+v", g)
	}
	if len(got) != 4 {
		t.Fatalf("%d deposits of a after the migration and one Put, want 4", len(got))
	}
}
