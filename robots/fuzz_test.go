package robots

import (
	"os"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// seedBodies returns the robots.txt bodies of testdata: the typical file
// and every body of the conformance table.
func seedBodies(f *testing.F) [][]byte {
	f.Helper()
	typ, err := os.ReadFile("testdata/typical.txt")
	if err != nil {
		f.Fatal(err)
	}
	seen := map[string]bool{}
	out := [][]byte{typ}
	for _, c := range loadConformance(f) {
		if !seen[string(c.body)] {
			seen[string(c.body)] = true
			out = append(out, c.body)
		}
	}
	return out
}

// FuzzParse checks that Parse never panics and that its answers hold
// together: Allowed agrees with Explain, /robots.txt is always allowed
// (R1), the deciding rule matches the path, and a rule-free agent is
// allowed.
func FuzzParse(f *testing.F) {
	for _, b := range seedBodies(f) {
		f.Add(b, "FooBot/1.0", "/x/y?z=1")
	}
	f.Add([]byte("User-agent: *\nDisallow: /*a*b*c$\n"), "x", "/aaabbbccc")
	f.Fuzz(func(t *testing.T, body []byte, ua, u string) {
		r := Parse(body)
		got := r.Allowed(ua, u)
		d := r.Explain(ua, u)
		if d.Allowed != got {
			t.Fatalf("Allowed = %v, Explain.Allowed = %v", got, d.Allowed)
		}
		if d.Rule == "" && !got {
			t.Fatalf("disallowed without a rule: %+v", d)
		}
		if want := refAllowed(r, ua, d.Path); want != got && !isRobotsPath(d.Path) {
			t.Fatalf("Allowed(%q, %q) = %v, the reference matcher says %v", ua, u, got, want)
		}
		if !r.Allowed(ua, "/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		if !strings.HasPrefix(d.Path, "/") {
			t.Fatalf("normalised path %q does not start with /", d.Path)
		}
		if escape(d.Path, false) != d.Path {
			t.Fatalf("normalising %q is not idempotent", d.Path)
		}
		r.CrawlDelay(ua)
		r.Sitemaps()
	})
}

// refMatch is the reference matcher of Google's robots.cc (a set of
// positions advanced over the pattern), kept here to check the linear one.
func refMatch(path, pattern string) bool {
	pos := []int{0}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i == len(pattern)-1 {
			return pos[len(pos)-1] == len(path)
		}
		if c == '*' {
			first := pos[0]
			pos = pos[:0]
			for p := first; p <= len(path); p++ {
				pos = append(pos, p)
			}
			continue
		}
		next := pos[:0:0]
		for _, p := range pos {
			if p < len(path) && path[p] == c {
				next = append(next, p+1)
			}
		}
		if len(next) == 0 {
			return false
		}
		pos = next
	}
	return true
}

// refAllowed decides with the reference matcher over every rule of the
// agent's group: the longest matching pattern, Allow on a tie.
func refAllowed(r *Rules, ua, path string) bool {
	s := r.set(ua)
	if s < 0 {
		return true
	}
	best, allow := -1, true
	for _, ru := range r.sets[s].rules {
		pat := ru.pattern
		if ru.anchored {
			pat += "$"
		}
		if !refMatch(path, pat) {
			continue
		}
		if n := len(pat); n > best || n == best && ru.allow {
			best, allow = n, ru.allow
		}
	}
	return allow
}

// FuzzMatch checks the segment matcher against the reference matcher on
// normalised patterns and paths.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"/a*b*c$", "/aXbYc"}, {"/*.php$", "/x.php"}, {"/fish*", "/fish"}, {"*", "/"}, {"/a**b", "/ab"}, {"/$", "/"}, {"/a*b$", "/abab"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		pattern = escape(pattern, true)
		path = normPath(path)
		ru := newRule(pattern, false, 1)
		if got, want := ru.matches(path), refMatch(path, pattern); got != want {
			t.Fatalf("matches(%q, %q) = %v, reference says %v", pattern, path, got, want)
		}
	})
}

// FuzzTemotoDifferential compares Allowed with temoto/robotstxt on the
// inputs where temoto is right: plain prefix rules starting with "/", no
// wildcards, paths not starting with "//", no two rules of a group of equal length (no ties), agents of
// which none is a prefix of another, each in one group only.
func FuzzTemotoDifferential(f *testing.F) {
	f.Add([]byte{3, 1, 2, 0, 5, 9, 1, 7, 3, 3, 0, 2, 8, 4})
	f.Add([]byte("some longer seed with many bytes to drive the generator"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		body, agent, path := g.robots()
		tr, err := robotstxt.FromBytes([]byte(body))
		if err != nil {
			t.Skip("temoto rejects the file")
		}
		want := tr.FindGroup(agent).Test(path)
		if got := Parse([]byte(body)).Allowed(agent, path); got != want {
			t.Fatalf("Allowed(%q, %q) = %v, temoto %v\n%s", agent, path, got, want, body)
		}
	})
}

type gen struct {
	data []byte
	i    int
}

func (g *gen) n(max int) int {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return int(b) % max
}

func (g *gen) seg(maxLen int) string {
	var b strings.Builder
	b.WriteByte('/')
	for range g.n(maxLen + 1) {
		b.WriteByte("abc/"[g.n(4)])
	}
	return b.String()
}

func (g *gen) robots() (body, agent, path string) {
	pool := []string{"alpha", "bravo", "charlie", "*"}
	var b strings.Builder
	for range 1 + g.n(3) {
		if len(pool) == 0 {
			break
		}
		for range 1 + g.n(2) {
			if len(pool) == 0 {
				break
			}
			k := g.n(len(pool))
			b.WriteString("User-agent: " + pool[k] + "\n")
			pool = append(pool[:k:k], pool[k+1:]...)
		}
		lens := map[int]bool{}
		for range 1 + g.n(5) {
			p := g.seg(5)
			if lens[len(p)] {
				continue
			}
			lens[len(p)] = true
			if g.n(2) == 0 {
				b.WriteString("Allow: " + p + "\n")
			} else {
				b.WriteString("Disallow: " + p + "\n")
			}
		}
	}
	// A path never starts with "//": that would be an authority (as in
	// Google's parser), outside the agreed subset.
	return b.String(), []string{"alpha", "bravo", "charlie", "delta"}[g.n(4)], "/" + string("abc"[g.n(3)]) + g.seg(6)
}

// FuzzMaxAge checks the Cache-Control parser never panics and never
// returns a negative age.
func FuzzMaxAge(f *testing.F) {
	for _, s := range []string{"max-age=3600", "public, max-age=60", "no-store", "max-age=\"10\"", "max-age=99999999999999999999", "s-maxage=5, max-age=x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cc string) {
		if d, ok := maxAge(cc); d < 0 || (!ok && d != 0) {
			t.Fatalf("maxAge(%q) = %v, %v", cc, d, ok)
		}
	})
}
