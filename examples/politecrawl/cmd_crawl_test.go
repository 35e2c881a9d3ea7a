package main

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/provenance/warc"
)

// simWeb is a politetest web for the CLI, with the test flags that reach it.
type simWeb struct {
	web   *politetest.Web
	flags []string // -connect-to, -ca, -admit-private
}

// newSimWeb starts a web of hosts sites named news-1.example … with
// articles articles each, all well behaved.
func newSimWeb(t *testing.T, hosts, articles int) *simWeb {
	t.Helper()
	web, _ := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: hosts, ArticlesPerHost: articles, Seed: 1})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: web.CACert().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &simWeb{web: web, flags: []string{"-connect-to", web.Addr(), "-ca", ca, "-admit-private", "127.0.0.0/8"}}
}

// readyAudit is auditPolicy with the ready config's User-Agent required.
func readyAudit(preset string) politetest.Policy {
	p := auditPolicy(preset)
	p.UserAgent = regexp.MustCompile(map[string]string{
		"strict-news": `^ARCEL-DailyDose-Bot/1 \(\+https://arcel\.example/for-publishers/our-crawler\)$`,
		"digest":      `^NewsElsBot/1\.0 \(\+https://news\.elsastry\.com/bot; bot@news\.elsastry\.com\)$`,
		"vault":       `^EigerVaultTrialConnector/1 \(\+https://eigervault\.ch; contact@eigervault\.ch\)$`,
	}[preset])
	return p
}

// summaryRE reads crawl's last line.
var summaryRE = regexp.MustCompile(`crawl: (\d+) reads, (\d+) deposited, (\d+) excerpts, (\d+) failed, (\d+) refused`)

// crawl -once of each ready config, as shipped, against a simulated web
// holding its sources' hosts: zero auditor violations and the deposits its
// document expects. Strict news: the licensed source's articles in full,
// the other's as excerpts (S5, S6); digest: summaries only, the feed's
// (D6); vault: every article in full through its read method, and the
// inactive source never asked (V2, V13).
func TestCrawlOnce_ReadyConfigs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		preset              string
		deposited, excerpts string
	}{
		{"strict-news", "2", "2"},
		{"digest", "0", "4"},
		{"vault", "4", "0"},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			t.Parallel()
			sw := newSimWeb(t, 3, 2)
			store := filepath.Join(t.TempDir(), "crawl.db")
			args := append([]string{"crawl", "-config", readyConfig(tc.preset), "-store", store, "-once"}, sw.flags...)
			r := politecrawl(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			m := summaryRE.FindStringSubmatch(r.stdout)
			if m == nil {
				t.Fatalf("no summary in %q", r.stdout)
			}
			if m[2] != tc.deposited || m[3] != tc.excerpts {
				t.Errorf("deposited %s, excerpts %s; want %s and %s\n%s", m[2], m[3], tc.deposited, tc.excerpts, r.stderr)
			}
			if rep := sw.web.Audit(readyAudit(tc.preset)); !rep.OK() {
				t.Errorf("auditor:\n%s", rep)
			}
			for _, q := range sw.web.Requests() {
				if strings.HasPrefix(q.Host, "news-3.") {
					t.Errorf("V13: a request to the inactive source's host: %s %s", q.Host, q.Path)
				}
			}
			if !strings.Contains(r.stderr, "crawl ended") {
				t.Errorf("not a TTY: plain log lines expected, got:\n%s", r.stderr)
			}
		})
	}
}

// outputs.jsonl and outputs.warc receive each new deposit as it lands: a
// JSON line for every deposit, a WARC deposit for every full one, and a
// second run adds nothing already there.
func TestCrawl_Outputs(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 2, 2)
	dir := t.TempDir()
	b, err := os.ReadFile(readyConfig("strict-news"))
	if err != nil {
		t.Fatal(err)
	}
	cfgText := strings.Replace(string(b), "store:\n", "outputs:\n  jsonl: out/deposits.jsonl\n  warc: out/deposits.warc.gz\nstore:\n", 1)
	cfg := filepath.Join(dir, "sources.yaml")
	if err := os.WriteFile(cfg, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o700); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		if r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-once"}, sw.flags...)...); r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", run, r.code, r.stdout, r.stderr)
		}
	}
	jl, err := os.ReadFile(filepath.Join(dir, "out", "deposits.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(jl)), "\n") {
		var d depositLine
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		kinds[d.Kind]++
		if d.Kind == "excerpt" && (d.Excerpt == nil || d.Excerpt.Link == "" || d.Proof != nil) {
			t.Errorf("excerpt line %+v", d)
		}
	}
	if kinds["article"] != 2 || kinds["excerpt"] != 2 {
		t.Errorf("JSON lines by kind %v, want 2 articles and 2 excerpts", kinds)
	}
	wb, err := os.ReadFile(filepath.Join(dir, "out", "deposits.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for d, err := range warc.Read(bytes.NewReader(wb)) {
		if err != nil {
			t.Fatal(err)
		}
		if d.Proof == nil || len(d.Envelope) == 0 {
			t.Errorf("WARC deposit %+v", d)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d WARC deposits, want the 2 full ones", n)
	}
}

// V7: never two passes of a source at once, even from two processes on
// one store (store.schedule: shared, so that both may fetch through it): a
// second crawl started while the first still holds the licensed source's
// lease (its articles take seconds at 1 s a request) sends nothing for it
// and says so in its exit status; the excerpt source, whose pass had
// ended, has nothing due.
func TestCrawl_V7_SecondProcessFindsTheLeaseHeld(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 2, 3)
	dir := t.TempDir()
	store := filepath.Join(dir, "crawl.db")
	cfg := sharedScheduleConfig(t, dir)
	first := exec.Command(binary, append([]string{"crawl", "-config", cfg, "-store", store, "-once"}, sw.flags...)...)
	first.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	var firstOut bytes.Buffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); ; {
		n := 0
		for _, q := range sw.web.Requests() {
			if q.Path == "/feed.xml" {
				n++
			}
		}
		if n == 2 { // both passes are under way: their feeds were read under the leases
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first crawl read no feeds:\n%s", firstOut.String())
		}
		time.Sleep(10 * time.Millisecond) // waiting for another process, not timing logic
	}
	before := len(sw.web.Requests())
	r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-store", store, "-once"}, sw.flags...)...)
	// news-2's pass may not quite have ended when the second one asks.
	// Exit 2 (docs/exit-codes.md), and the words name the worker holding
	// the lease and when its lease expires.
	host, _ := os.Hostname()
	held := regexp.MustCompile(`news-1: another worker is running its pass \(pid ` + strconv.Itoa(first.Process.Pid) + ` on host ` + regexp.QuoteMeta(host) +
		`\) and holds its lease until \d\d:\d\d:\d\d UTC, \d+s from now; a running worker renews it`)
	if r.code != 2 || !held.MatchString(r.stdout) || !strings.Contains(r.stderr, "could not run: news-1") {
		t.Errorf("second crawl: exit %d, want 2 naming the holder and its lease's end\n%s%s", r.code, r.stdout, r.stderr)
	}
	if requirementCode.MatchString(r.stdout + r.stderr) {
		t.Errorf("a requirement code in the message:\n%s%s", r.stdout, r.stderr)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first crawl: %v\n%s", err, firstOut.String())
	}
	if !strings.Contains(firstOut.String(), "3 deposited, 3 excerpts") {
		t.Errorf("first crawl:\n%s", firstOut.String())
	}
	images := map[string]int{} // news-2's share images, by path: each read once in all
	for _, q := range sw.web.Requests() {
		if q.Host == "news-2.example" && strings.HasPrefix(q.Path, "/images/") {
			images[q.Path]++
		}
	}
	for _, q := range sw.web.Requests()[before:] {
		if q.Host == "news-2.example" {
			if strings.HasPrefix(q.Path, "/images/") && images[q.Path] == 1 {
				continue // the first crawl's news-2 pass checking its excerpts' share images (S7) after the feed
			}
			t.Errorf("the second crawl asked news-2, which had nothing due: %s", q.Path)
		}
	}
	if rep := sw.web.Audit(readyAudit("strict-news")); !rep.OK() {
		t.Errorf("auditor over both processes:\n%s", rep)
	}
}

// crawl.share_images: skip reads every article and no share image: the
// deposits are made, the web is never asked for an image, and a value
// other than check or skip is refused at its key.
func TestCrawl_S7_ShareImagesSkip(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 1, 2)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte(minimalConfig+"crawl:\n  share_images: skip\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-store", filepath.Join(dir, "c.db"), "-once"}, sw.flags...)...)
	if m := summaryRE.FindStringSubmatch(r.stdout); r.code != 0 || m == nil || m[2] != "2" {
		t.Fatalf("exit %d, want 2 deposited\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, q := range sw.web.Requests() {
		if strings.HasPrefix(q.Path, "/images/") {
			t.Errorf("a share image was read: %s %s", q.Host, q.Path)
		}
	}
	if _, err := ParseConfig("c.yaml", []byte(minimalConfig+"crawl:\n  share_images: never\n")); err == nil || !strings.Contains(err.Error(), "crawl.share_images") {
		t.Errorf("share_images: never: %v", err)
	}
}

// sharedScheduleConfig writes the strict-news preset's configuration into
// dir with store.schedule: shared, and returns its path.
func sharedScheduleConfig(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(readyConfig("strict-news"))
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "\nstore:\n", "\nstore:\n  schedule: shared\n", 1)
	if y == string(b) {
		t.Fatal("the strict-news preset has no store section")
	}
	p := filepath.Join(dir, "strict-news.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
