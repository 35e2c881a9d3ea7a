package digest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/politefetch/politefetch/digest"
	"github.com/politefetch/politefetch/digest/digesttest"
	"github.com/politefetch/politefetch/digest/internal/rouge"
	"github.com/politefetch/politefetch/extract"
)

// On the news set: every summary is at most two of the body's sentences
// within the fair-use bound (D6), and the ROUGE-1 F-measure against the
// written references stays at or above 0.44 (it is 0.456 when this was
// written; go run ./digest/internal/rougebench prints it beside lead-2's).
func TestExtractive_D6_NewsSet(t *testing.T) {
	t.Parallel()
	news, err := digesttest.News()
	if err != nil {
		t.Fatal(err)
	}
	if len(news) < 30 {
		t.Fatalf("%d stories, want 30", len(news))
	}
	var r1 float64
	for _, st := range news {
		s, err := digest.Extractive{}.Summarize(context.Background(), st.Article())
		if err != nil {
			t.Fatalf("%s: %v", st.ID, err)
		}
		if len(s.Sentences) == 0 || len(s.Sentences) > digest.MaxSentences {
			t.Errorf("%s: %d sentences", st.ID, len(s.Sentences))
		}
		if n := utf8.RuneCountInString(s.Text()); n > digest.DefaultMaxChars {
			t.Errorf("%s: %d characters", st.ID, n)
		}
		for _, sent := range s.Sentences {
			if !strings.Contains(st.Body(), sent) {
				t.Errorf("%s: %q is not the body's", st.ID, sent)
			}
		}
		r1 += rouge.N(digest.Words(s.Text()), digest.Words(st.Reference), 1).F
	}
	if mean := r1 / float64(len(news)); mean < 0.44 {
		t.Errorf("mean ROUGE-1 F %.4f, below 0.44", mean)
	}
}

func TestNewsSetReferencesAreTwoSentences(t *testing.T) {
	t.Parallel()
	news, err := digesttest.News()
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]int{}
	for _, st := range news {
		langs[st.Lang]++
		if n := len(digest.Sentences(st.Reference)); n != 2 {
			t.Errorf("%s: the reference has %d sentences: %q", st.ID, n, digest.Sentences(st.Reference))
		}
		if n := len(digest.Sentences(st.Standfirst)); n != 2 {
			t.Errorf("%s: the standfirst has %d sentences", st.ID, n)
		}
	}
	if langs["en"] == 0 || langs["fr"] == 0 || langs["de"] == 0 {
		t.Errorf("languages %v, want en, fr and de", langs)
	}
}

// BenchmarkExtractive summarizes each story of the news set once per
// iteration (30 articles of 120 to 200 words).
func BenchmarkExtractive(b *testing.B) {
	news, err := digesttest.News()
	if err != nil {
		b.Fatal(err)
	}
	arts := make([]*extract.Article, len(news))
	for i, st := range news {
		arts[i] = st.Article()
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range arts {
			if _, err := (digest.Extractive{}).Summarize(context.Background(), a); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(arts))/1e3, "µs/article")
}

// BenchmarkExtractiveNewsSet summarizes each story of a public news set
// (JSON Lines of {"id", "lang", "title", "text", "reference"}, the text's
// paragraphs separated by newlines) named by $DIGEST_NEWS, once per
// iteration; it skips without one. The "as-en" run gives the same
// articles the English path (TextRank), for the cost of each path.
func BenchmarkExtractiveNewsSet(b *testing.B) {
	path := os.Getenv("DIGEST_NEWS")
	if path == "" {
		b.Skip("set DIGEST_NEWS to a news set (JSON Lines) to run this benchmark")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var arts []*extract.Article
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var st struct{ Lang, Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			b.Fatal(err)
		}
		a := &extract.Article{Headline: extract.Field{Value: st.Title}, Language: extract.Field{Value: st.Lang}}
		for _, p := range strings.Split(st.Text, "\n") {
			a.Blocks = append(a.Blocks, extract.Block{Kind: extract.Paragraph, Text: p})
		}
		arts = append(arts, a)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, arts []*extract.Article) {
		b.ReportAllocs()
		for b.Loop() {
			for _, a := range arts {
				if _, err := (digest.Extractive{}).Summarize(context.Background(), a); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(arts))/1e3, "µs/article")
	}
	b.Run("own-language", func(b *testing.B) { run(b, arts) })
	b.Run("as-en", func(b *testing.B) {
		en := make([]*extract.Article, len(arts))
		for i, a := range arts {
			c := *a
			c.Language.Value = "en"
			en[i] = &c
		}
		run(b, en)
	})
}
