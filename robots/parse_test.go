package robots

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestParse_R1_SizeLimit proves R1's 500 KiB parse limit: rules within it
// stand, the line the limit cuts and everything after are dropped.
func TestParse_R1_SizeLimit(t *testing.T) {
	t.Parallel()
	head := "User-agent: *\nDisallow: /early\n"
	cut := "Disallow: /cut\n"
	for _, tc := range []struct {
		name string
		nl   string
	}{{"LF", "\n"}, {"CR", "\r"}, {"CRLF", "\r\n"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			b.WriteString(strings.ReplaceAll(head, "\n", tc.nl))
			pad := "#" + strings.Repeat("x", 60) + tc.nl
			for b.Len()+len(pad) < MaxBodySize-5 {
				b.WriteString(pad)
			}
			b.WriteString(strings.Repeat("#", MaxBodySize-5-b.Len()) + tc.nl)
			b.WriteString(strings.ReplaceAll(cut, "\n", tc.nl)) // straddles the limit
			b.WriteString("Disallow: /late" + tc.nl)
			r := Parse([]byte(b.String()))
			if r.Allowed("x", "/early") {
				t.Error("/early allowed: a rule within the limit was lost")
			}
			for _, p := range []string{"/cut", "/late"} {
				if !r.Allowed("x", p) {
					t.Errorf("%s disallowed: a rule beyond the limit was read", p)
				}
			}
		})
	}
	t.Run("LineEndJustPastLimit", func(t *testing.T) {
		t.Parallel()
		// The limit falls between "/last" and its newline: the line is whole.
		body := head + strings.Repeat("#", MaxBodySize-len(head)-len("Disallow: /last")-1) + "\nDisallow: /last\nDisallow: /after\n"
		r := Parse([]byte(body))
		if r.Allowed("x", "/last") || !r.Allowed("x", "/after") {
			t.Errorf("/last allowed %v (want false), /after allowed %v (want true)", r.Allowed("x", "/last"), r.Allowed("x", "/after"))
		}
	})
	t.Run("ExactlyAtLimit", func(t *testing.T) {
		t.Parallel()
		body := head + strings.Repeat("#", MaxBodySize-len(head)-len("Disallow: /last")-1) + "\nDisallow: /last"
		if len(body) != MaxBodySize {
			t.Fatalf("body is %d bytes", len(body))
		}
		if Parse([]byte(body)).Allowed("x", "/last") {
			t.Error("last line of a file exactly at the limit dropped")
		}
	})
}

func TestNormPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                                "/",
		"/":                               "/",
		"/a?b=1":                          "/a?b=1",
		"https://example.com":             "/",
		"https://example.com/a/b?c#d":     "/a/b?c",
		"https://example.com?x":           "/?x",
		"https://user@example.com:8/p;q":  "/p;q",
		"//example.com/p":                 "/p",
		"/a b/ツ":                          "/a%20b/%E3%83%84",
		"/%7e%2f%2A%41":                   "/~%2F%2AA",
		"/a*b$":                           "/a%2Ab%24",
		"/100%":                           "/100%25", // a stray % is the octet itself
		"/%zz":                            "/%25zz",
		"/?%7%30":                         "/?%2570", // found by FuzzParse: never "/?%70", which a second pass reads as "/?p"
		"example.com/x":                   "/x",
		"/a?redirect=https://b.example/c": "/a?redirect=https://b.example/c",
	} {
		if got := normPath(in); got != want {
			t.Errorf("normPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStatusPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    StatusPolicy
		st   int
		err  error
		want Outcome
	}{
		{RFC9309, 200, nil, ParseBody}, {RFC9309, 299, nil, ParseBody},
		{RFC9309, 304, nil, AllowAll}, {RFC9309, 401, nil, AllowAll}, {RFC9309, 403, nil, AllowAll},
		{RFC9309, 429, nil, AllowAll}, {RFC9309, 499, nil, AllowAll},
		{RFC9309, 500, nil, DisallowAll}, {RFC9309, 599, nil, DisallowAll}, {RFC9309, 100, nil, DisallowAll},
		{RFC9309, 0, ErrTruncated, DisallowAll}, {RFC9309, 301, ErrTooManyRedirects, AllowAll},
		{Google, 429, nil, DisallowAll}, {Google, 403, nil, AllowAll},
		{Strict, 401, nil, DisallowAll}, {Strict, 403, nil, DisallowAll}, {Strict, 429, nil, DisallowAll},
		{Strict, 404, nil, AllowAll}, {Strict, 410, nil, AllowAll}, {Strict, 503, nil, DisallowAll},
		{Strict, 301, ErrTooManyRedirects, AllowAll},
		{Strict | DisallowTooManyRedirects, 301, ErrTooManyRedirects, DisallowAll},
	} {
		if got := tc.p.Decide(tc.st, tc.err); got != tc.want {
			t.Errorf("%v.Decide(%d, %v) = %v, want %v", tc.p, tc.st, tc.err, got, tc.want)
		}
	}
}

func TestMaxAge(t *testing.T) {
	t.Parallel()
	for cc, want := range map[string]time.Duration{
		"max-age=60": time.Minute, "public, max-age=3600": time.Hour, `max-age="120"`: 2 * time.Minute,
		"no-cache": 0, "no-store, max-age=60": 0, "MAX-AGE=5": 5 * time.Second,
	} {
		if got, ok := maxAge(cc); !ok || got != want {
			t.Errorf("maxAge(%q) = %v, %v; want %v", cc, got, ok, want)
		}
	}
	for _, cc := range []string{"", "public", "max-age=x", "max-age=-1", "s-maxage=60"} {
		if got, ok := maxAge(cc); ok {
			t.Errorf("maxAge(%q) = %v, true; want none", cc, got)
		}
	}
}

func TestZeroRulesAllowAll(t *testing.T) {
	t.Parallel()
	var zero Rules
	var nilRules *Rules
	for _, r := range []*Rules{&zero, nilRules, Parse(nil)} {
		if !r.Allowed("FooBot", "/x") || !r.Explain("FooBot", "/x").Allowed {
			t.Errorf("%v: disallowed", r)
		}
		if _, ok := r.CrawlDelay("FooBot"); ok {
			t.Errorf("%v: has a Crawl-delay", r)
		}
		if r.Sitemaps() != nil {
			t.Errorf("%v: has sitemaps", r)
		}
	}
}

// worstFiles are 500 KiB files built to defeat quadratic parsing: many
// distinct agents, many agents with rules, many sitemaps, one agent in
// thousands of groups, thousands of wildcard rules.
func worstFiles() map[string]string {
	agentName := func(i int) string {
		return fmt.Sprintf("Bot%c%c%c", 'a'+i%26, 'a'+i/26%26, 'a'+i/676%26)
	}
	gen := map[string]func(i int) string{
		"Agents":      func(i int) string { return "User-agent: " + agentName(i) + "\n" },
		"AgentsRules": func(i int) string { return "User-agent: " + agentName(i) + "\nDisallow: /" + agentName(i) + "\n" },
		"Sitemaps": func(i int) string {
			return fmt.Sprintf("Sitemap: https://e.example/%d.xml\nSitemap: https://e.example/0.xml\n", i)
		},
		"SameAgent": func(i int) string { return fmt.Sprintf("User-agent: a\nDisallow: /x%d\n", i) },
		"Wildcards": func(i int) string { return fmt.Sprintf("Disallow: /*a*b*%d$\n", i) },
	}
	out := map[string]string{}
	for name, g := range gen {
		var b strings.Builder
		b.WriteString("User-agent: *\n")
		for i := 0; b.Len() < MaxBodySize; i++ {
			b.WriteString(g(i))
		}
		out[name] = b.String()
	}
	return out
}

// TestParse_LargeFiles checks answers on the worst-case files, where the
// parser switches from linear scans to maps.
func TestParse_LargeFiles(t *testing.T) {
	files := worstFiles()
	r := Parse([]byte(files["AgentsRules"]))
	if r.Allowed("BOTCBA/1.0", "/Botcba") || !r.Allowed("botcba", "/Botcbb") || r.Allowed("botaab", "/Botaab/x") || !r.Allowed("Botzzz", "/Botzzz") {
		t.Error("agent lookup through the index is wrong")
	}
	if d := r.Explain("BOTCBA", "/Botcba"); d.Group != "Botcba" || d.Rule != "Disallow: /Botcba" {
		t.Errorf("Explain = %+v", d)
	}
	if n := testing.AllocsPerRun(50, func() { r.Allowed("BOTCBA/1.0", "/Botcba") }); n != 0 {
		t.Errorf("Allowed allocates %v times with the agent index", n)
	}
	r = Parse([]byte(files["Agents"]))
	if d := r.Explain("Botqrs", "/"); !d.Allowed || d.Group != "Botqrs" {
		t.Errorf("one group of thousands of agents: %+v", d)
	}
	sm := Parse([]byte(files["Sitemaps"])).Sitemaps()
	if len(sm) < 1000 || sm[0] != "https://e.example/0.xml" || sm[1] != "https://e.example/1.xml" {
		t.Errorf("sitemaps not deduplicated in order: %d, %q", len(sm), sm[:3])
	}
	r = Parse([]byte(files["SameAgent"]))
	if r.Allowed("a", "/x0") || r.Allowed("a", "/x5000") || !r.Allowed("a", "/y") {
		t.Error("groups of one agent not merged")
	}
}
