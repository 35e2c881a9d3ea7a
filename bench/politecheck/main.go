// Command politecheck runs three crawlers of the same seed list through
// politecheck (examples/politecheck) on the same simulated webs, and prints
// one table: wall time against the politeness bound, violations by rule,
// CPU seconds and peak RSS of each crawler's process.
//
// The crawlers: ours (politecrawl crawl -once, the strict news preset at
// 1 s per host, share images not read, so that it reads the pages the
// others read; and again with each story's share image checked, as the
// strict news preset does by default, which doubles its requests to each
// host), the crawl library as a process of its own (crawl.Crawler with
// in-memory state, extraction on, deposits counted and dropped: what the
// CLI costs beyond it is its store), colly v2 configured as politely as colly allows (one
// LimitRule per host with Parallelism 1 and Delay 1 s, robots.txt obeyed,
// async), and a careful crawler written with net/http alone. Each web is
// served over HTTPS with one connection per host; 10 % of its sites are
// rude (429, 503, challenge pages, 5xx robots.txt, disallowed articles), 10 %
// disallow a section and 10 % ask for Crawl-delay: 1. Last, colly with its
// default configuration is run on the first web, to show that politecheck
// flags it.
//
// Run from the bench module:
//
//	go run ./politecheck                    # 50 × 5 and 300 × 10
//	go run ./politecheck -webs 20x3         # a quick look
//	go run ./politecheck -webs 300x10 -colly-defaults=false
//	go run ./politecheck scale              # our crawl library at 1,000, 3,000 and 10,000 hosts
//
// scale runs the crawl library (one RunOnce, the strict news preset at 1 s
// per host, in-memory state, deposits counted and dropped) against an in-process web of
// that many hosts × 5 articles with 20–200 ms of latency, and prints wall
// time against the ideal (robots.txt, the feed and the articles a second
// apart), the audit, the process's CPU per request and peak RSS (crawler
// and web together), the heap the pass left retained per host (the
// crawler's and the client's state, the idle connections included; the
// web's log of requests excluded), and the goroutines at peak.
//
// lib is the crawl library as a crawler process of its own (in-memory
// state, deposits counted and dropped), for politecheck to measure at scale
// with the web in another process:
//
//	go build -o /tmp/pcb ./politecheck
//	go run ../examples/politecheck -hosts 3000 -articles 5 -- /tmp/pcb lib
//
// The same binary is the colly and net/http crawlers (its colly,
// colly-default and hand commands) and the wrapper that writes politecrawl's
// configuration for the seed list before becoming politecrawl (ours and
// ours-images).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		var err error
		switch os.Args[1] {
		case "colly":
			err = runColly(true)
		case "colly-default":
			err = runColly(false)
		case "hand":
			err = runHand(time.Second)
		case "scale":
			err = scale(os.Args[2:])
		case "lib":
			err = runLib()
		case "ours", "ours-images":
			if len(os.Args) != 3 {
				err = fmt.Errorf("usage: %s %s POLITECRAWL", os.Args[0], os.Args[1])
			} else {
				err = execOurs(os.Args[2], os.Args[1] == "ours-images")
			}
		default:
			err = table(os.Args[1:])
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "politecheck bench:", err)
			os.Exit(2)
		}
		return
	}
	if err := table(nil); err != nil {
		fmt.Fprintln(os.Stderr, "politecheck bench:", err)
		os.Exit(2)
	}
}

// result is the part of politecheck's JSON report the table shows.
type result struct {
	OK            bool           `json:"ok"`
	WallSeconds   float64        `json:"wall_seconds"`
	SpanSeconds   float64        `json:"span_seconds"`
	IdealSeconds  float64        `json:"ideal_seconds"`
	WallOverIdeal float64        `json:"wall_over_ideal"`
	Requests      int            `json:"requests"`
	Violations    int            `json:"violations"`
	ByRule        map[string]int `json:"by_rule"`
	Pages         struct {
		Expected int `json:"expected"`
		Fetched  int `json:"fetched"`
	} `json:"pages"`
	Duplicates int `json:"duplicates"`
	Crawler    struct {
		ExitCode     int     `json:"exit_code"`
		TimedOut     bool    `json:"timed_out"`
		CPUSeconds   float64 `json:"cpu_seconds"`
		PeakRSSBytes int64   `json:"peak_rss_bytes"`
	} `json:"crawler"`
	exit int
}

func table(args []string) error {
	fs := flag.NewFlagSet("politecheck bench", flag.ContinueOnError)
	repo := fs.String("repo", "..", "the politefetch repository (the library module's root)")
	webs := fs.String("webs", "50x5,300x10", "the webs: HOSTSxARTICLES, comma-separated")
	seed := fs.String("seed", "1", "the webs' scenario seed")
	timeout := fs.Duration("timeout", 10*time.Minute, "politecheck's -timeout per run")
	defaults := fs.Bool("colly-defaults", true, "also run colly with its default configuration, on the first web only (requests back to back: minutes on a large web)")
	rude := fs.String("rude", "0", "politecheck's -rude: the share of rude sites")
	disallow := fs.String("disallow", "0.25", "politecheck's -disallow: the share of sites whose robots.txt disallows a section the feed links to (a trap)")
	crawlDelay := fs.String("crawl-delay", "0.1", "politecheck's -crawl-delay: the share of sites asking for a Crawl-delay")
	pageKB := fs.String("page-kb", "0", "politecheck's -page-kb: KiB of page furniture on each article page (0: pages of about 1.2 KB; real news pages weigh 50 to 200 KB)")
	crawlDelaySecs := fs.String("crawl-delay-seconds", "2", "politecheck's -crawl-delay-seconds: the Crawl-delay those sites ask for (2, as on the outside benchmark's web)")
	only := fs.String("crawlers", "", "run only the crawlers whose names contain one of these comma-separated words (default: all)")
	profile := fs.String("profile", "", "build politecrawl with CPU and allocation profiling and write its profiles into this directory (ours-WEB.cpu, ours-WEB.alloc, and ours-WEB.heap, .heap.txt and .heap.goroutine near the peak of its memory)")
	requests := fs.String("requests", "", "write every request each crawler's web received into this directory, as JSON lines (CRAWLER-WEB.jsonl: ours-300x10.jsonl, lib-…, colly-…), for timelines the table does not show")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *requests != "" {
		abs, err := filepath.Abs(*requests)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return fmt.Errorf("-requests: %w", err)
		}
		*requests = abs
	}
	tmp, err := os.MkdirTemp("", "politecheck-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root, err := filepath.Abs(*repo)
	if err != nil {
		return err
	}
	build := func(pkg string) (string, error) {
		out := filepath.Join(tmp, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir, cmd.Stderr = root, os.Stderr
		return out, cmd.Run()
	}
	checker, err := build("./examples/politecheck")
	if err != nil {
		return fmt.Errorf("building politecheck: %w", err)
	}
	var crawler string
	if *profile != "" {
		if *profile, err = filepath.Abs(*profile); err != nil {
			return err
		}
		if err := os.MkdirAll(*profile, 0o755); err != nil {
			return fmt.Errorf("-profile: %w", err)
		}
		crawler, err = buildProfiled(root, tmp)
	} else {
		crawler, err = build("./examples/politecrawl")
	}
	if err != nil {
		return fmt.Errorf("building politecrawl: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	type entry struct {
		name string
		cmd  []string
	}
	crawlers := []entry{
		{"politefetch (politecrawl crawl -once)", []string{self, "ours", crawler}},
		{"politefetch, share images checked (S7)", []string{self, "ours-images", crawler}},
		{"crawl.Crawler, in-memory state (the library as a process)", []string{self, "lib"}},
		{"colly v2, polite", []string{self, "colly"}},
		{"net/http, careful", []string{self, "hand"}},
	}
	runOne := func(hosts, articles string, cmd []string, env []string) (*result, error) {
		args := []string{"-json", "-q", "-hosts", hosts, "-articles", articles, "-latency", "20ms-200ms",
			"-rude", *rude, "-disallow", *disallow, "-crawl-delay", *crawlDelay, "-crawl-delay-seconds", *crawlDelaySecs, "-page-kb", *pageKB, "-seed", *seed,
			"-interval", "1s", "-max-conns", "1", "-timeout", timeout.String()}
		if *requests != "" {
			args = append(args, "-requests", filepath.Join(*requests, cmd[1]+"-"+hosts+"x"+articles+".jsonl"))
		}
		args = append(args, "--")
		var out bytes.Buffer
		c := exec.Command(checker, append(args, cmd...)...)
		c.Stdout, c.Stderr, c.Env = &out, os.Stderr, append(os.Environ(), env...)
		err := c.Run()
		r := &result{}
		if ee, ok := err.(*exec.ExitError); ok {
			r.exit = ee.ExitCode()
		} else if err != nil {
			return nil, err
		}
		if r.exit == 2 {
			return nil, fmt.Errorf("politecheck could not run %q", cmd)
		}
		if err := json.Unmarshal(out.Bytes(), r); err != nil {
			return nil, fmt.Errorf("politecheck's report: %w", err)
		}
		return r, nil
	}

	fmt.Printf("webs: HTTPS, one connection per host, 20–200 ms latency, rude %s, disallow traps %s, Crawl-delay %s, seed %s\n\n", *rude, *disallow, *crawlDelay, *seed)
	fmt.Println("| web | crawler | politecheck exit | wall / ideal (requests' span) | articles fetched | violations by rule | CPU s | peak RSS | written to disk (store after) / deposited |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	list := strings.Split(*webs, ",")
	for i, w := range list {
		hosts, articles, ok := strings.Cut(strings.TrimSpace(w), "x")
		if _, err := strconv.Atoi(hosts); !ok || err != nil {
			return fmt.Errorf("-webs: %q is not HOSTSxARTICLES", w)
		}
		runs := crawlers
		if i == 0 && *defaults {
			runs = append(runs, entry{"colly v2, default configuration", []string{self, "colly-default"}})
		}
		for _, e := range runs {
			if !selected(*only, e.name) {
				continue
			}
			var env []string
			ioFile, store := "", ""
			if e.cmd[1] == "ours" || e.cmd[1] == "ours-images" {
				ioFile, store = filepath.Join(tmp, "io.json"), filepath.Join(tmp, e.cmd[1]+".db")
				for _, f := range []string{ioFile, store, store + "-wal", store + "-shm"} {
					os.Remove(f)
				}
				env = append(env, "POLITECHECK_BENCH_IO="+ioFile, "POLITECHECK_BENCH_STORE="+store)
				if *profile != "" {
					name := filepath.Join(*profile, e.cmd[1]+"-"+strings.TrimSpace(w))
					env = append(env, "POLITECRAWL_CPUPROFILE="+name+".cpu", "POLITECRAWL_ALLOCPROFILE="+name+".alloc", "POLITECRAWL_HEAPPROFILE="+name+".heap")
				}
			}
			r, err := runOne(hosts, articles, e.cmd, env)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", e.name, w, err)
			}
			disk := "–"
			if ioFile != "" {
				disk = "?"
				var st ioStats
				b, err := os.ReadFile(ioFile)
				if err == nil {
					err = json.Unmarshal(b, &st)
				}
				if err == nil {
					err = st.readStore(store)
				}
				if err != nil {
					fmt.Fprintf(os.Stderr, "%s on %s: what it wrote and deposited: %v\n", e.name, w, err)
				} else if st.DepositBytes > 0 {
					disk = fmt.Sprintf("%.1f MB (%.1f MB) / %.2f MB in %d deposits = %.2f×", float64(st.WriteBytes)/1e6, float64(st.StoreBytes)/1e6,
						float64(st.DepositBytes)/1e6, st.Deposits, float64(st.WriteBytes)/float64(st.DepositBytes))
				}
			}
			fmt.Printf("| %s × %s | %s | %d | %.2f s / %.2f s = %.3f× (%.3f×) | %d / %d | %s | %.2f | %.1f MiB | %s |\n",
				hosts, articles, e.name, r.exit, r.WallSeconds, r.IdealSeconds, r.WallOverIdeal, r.SpanSeconds/r.IdealSeconds,
				r.Pages.Fetched, r.Pages.Expected, rules(r), r.Crawler.CPUSeconds, float64(r.Crawler.PeakRSSBytes)/(1<<20), disk)
		}
	}
	return nil
}

// selected reports whether the crawler named name is among the
// comma-separated words of only ("": all of them).
func selected(only, name string) bool {
	if only == "" {
		return true
	}
	for _, w := range strings.Split(only, ",") {
		if w = strings.TrimSpace(w); w != "" && strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// rules is "none" or each rule's count.
func rules(r *result) string {
	if r.Violations == 0 {
		return "none"
	}
	var parts []string
	for k, n := range r.ByRule {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ") + fmt.Sprintf(" (of %d requests)", r.Requests)
}
