package robots

import (
	"os"
	"testing"

	"github.com/temoto/robotstxt"
)

// The benchmarks compare this package with github.com/temoto/robotstxt on
// the same ~5 KB file (testdata/typical.txt), in the same run:
//
//	go test -run='^$' -bench=. -benchmem ./robots/

const (
	benchAgent = "ARCEL-DailyDose-Bot/1.0 (+https://arcel.example/bot)"
	benchToken = "ARCEL-DailyDose-Bot"
	benchPath  = "/world/2026/11/30/some-story-about-the-news/print?output=amp"
)

func typical(b *testing.B) []byte {
	body, err := os.ReadFile("testdata/typical.txt")
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkParseMatch is parse plus one match of the typical file.
func BenchmarkParseMatch(b *testing.B) {
	body := typical(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := Parse(body)
		if !r.Allowed(benchAgent, benchPath) {
			b.Fatal("disallowed")
		}
	}
}

// BenchmarkTemotoParseMatch is the same work with temoto/robotstxt.
func BenchmarkTemotoParseMatch(b *testing.B) {
	body := typical(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := robotstxt.FromBytes(body)
		if err != nil {
			b.Fatal(err)
		}
		if !r.FindGroup(benchToken).Test(benchPath) {
			b.Fatal("disallowed")
		}
	}
}

// BenchmarkMatch is one match on a parsed file: it must not allocate.
func BenchmarkMatch(b *testing.B) {
	r := Parse(typical(b))
	b.ReportAllocs()
	for b.Loop() {
		if !r.Allowed(benchAgent, benchPath) {
			b.Fatal("disallowed")
		}
	}
}

// BenchmarkMatchStarGroup matches through the "*" group, the largest one,
// with a wildcard-heavy rule set.
func BenchmarkMatchStarGroup(b *testing.B) {
	r := Parse(typical(b))
	b.ReportAllocs()
	for b.Loop() {
		if r.Allowed("SomeOtherBot/2.0", benchPath) {
			b.Fatal("allowed")
		}
	}
}

// BenchmarkTemotoMatch is one match on a parsed file with temoto/robotstxt.
func BenchmarkTemotoMatch(b *testing.B) {
	r, err := robotstxt.FromBytes(typical(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !r.FindGroup(benchToken).Test(benchPath) {
			b.Fatal("disallowed")
		}
	}
}

// TestMatchDoesNotAllocate pins the zero-allocation goal of matching.
func TestMatchDoesNotAllocate(t *testing.T) {
	body, err := os.ReadFile("testdata/typical.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := Parse(body)
	for _, ua := range []string{benchAgent, "SomeOtherBot/2.0", "GPTBot"} {
		if n := testing.AllocsPerRun(100, func() { r.Allowed(ua, benchPath) }); n != 0 {
			t.Errorf("Allowed(%q) allocates %v times per run, want 0", ua, n)
		}
		if n := testing.AllocsPerRun(100, func() { r.Allowed(ua, "https://www.news.example"+benchPath) }); n != 0 {
			t.Errorf("Allowed(%q, absolute URL) allocates %v times per run, want 0", ua, n)
		}
	}
}

// BenchmarkParseWorst parses 500 KiB files built against quadratic
// parsing; each must stay linear.
func BenchmarkParseWorst(b *testing.B) {
	for name, body := range worstFiles() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				Parse([]byte(body))
			}
		})
	}
}
