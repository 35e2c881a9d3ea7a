package digest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/politefetch/politefetch/extract"
)

func article(headline string, paras ...string) *extract.Article {
	a := &extract.Article{Headline: extract.Field{Value: headline}, Canonical: extract.Field{Value: "https://news.example/a"}}
	for _, p := range paras {
		a.Blocks = append(a.Blocks, extract.Block{Kind: extract.Paragraph, Text: p})
	}
	return a
}

func TestExtractive_D6_AtMostTwoSentencesNeverTheBody(t *testing.T) {
	t.Parallel()
	long := article("City opens new tram line",
		"The city opened its new tram line on Monday after four years of building work. The line links the station to the university.",
		"Officials said the tram would carry 40,000 passengers a day. Critics said the cost, $1.2bn, was too high.",
		"Dr. Ana Ruiz, who led the project, said the tram line was a turning point for the city. Tickets cost 2.50 euros.")
	tests := []struct {
		name    string
		a       *extract.Article
		maxSent int
	}{
		{"long", long, 2},
		{"two sentences", article("Short", "The tram line opened on Monday morning. The mayor cut the ribbon at the station."), 1},
		{"one sentence", article("Shorter", "The tram line opened on Monday morning in front of a large crowd."), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Extractive{}.Summarize(context.Background(), tt.a)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Sentences) == 0 || len(s.Sentences) > tt.maxSent {
				t.Fatalf("got %d sentences %q, want 1..%d", len(s.Sentences), s.Sentences, tt.maxSent)
			}
			if n := utf8.RuneCountInString(s.Text()); n > DefaultMaxChars {
				t.Errorf("summary of %d characters, over %d", n, DefaultMaxChars)
			}
			body := collapse(tt.a.Text())
			if s.Text() == body || len(s.Text()) >= len(body) {
				t.Errorf("summary %q copies the body", s.Text())
			}
			for _, sent := range s.Sentences {
				if !strings.Contains(body, strings.TrimSuffix(sent, "…")) {
					t.Errorf("sentence %q is not the body's", sent)
				}
			}
		})
	}
}

func TestExtractive_PrefersCentralEarlySentences(t *testing.T) {
	t.Parallel()
	a := article("Tram line opens in the city",
		"The city opened its new tram line on Monday.",
		"It rained.",
		"The tram line links the station and the university, and the city expects the line to cut traffic.",
		"A bakery nearby sold out of bread by noon, its owner said.")
	s, err := Extractive{}.Summarize(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"The city opened its new tram line on Monday.", "The tram line links the station and the university, and the city expects the line to cut traffic."}
	if strings.Join(s.Sentences, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", s.Sentences, want)
	}
}

func TestExtractive_FairUseBound(t *testing.T) {
	t.Parallel()
	word := strings.Repeat("word ", 100)
	a := article("x", word+".", word+".", word+".")
	s, err := Extractive{MaxChars: 120}.Summarize(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(s.Text()); n > 120 || n == 0 {
		t.Errorf("summary of %d characters, want 1..120: %q", n, s.Text())
	}
	if !strings.HasSuffix(s.Text(), "…") {
		t.Errorf("a cut summary should end with an ellipsis: %q", s.Text())
	}
}

func TestExtractive_NoText(t *testing.T) {
	t.Parallel()
	_, err := Extractive{}.Summarize(context.Background(), &extract.Article{})
	if !errors.Is(err, ErrNoText) {
		t.Errorf("err = %v, want ErrNoText", err)
	}
}

func TestBound(t *testing.T) {
	t.Parallel()
	got := Bound([]string{"One.", "", "Two  words.", "Three."}, 0)
	if strings.Join(got, "|") != "One.|Two words." {
		t.Errorf("Bound = %q", got)
	}
	got = Bound([]string{"A first sentence here.", "A second sentence that is long."}, 30)
	if n := utf8.RuneCountInString(strings.Join(got, " ")); n > 30 {
		t.Errorf("Bound gave %d characters: %q", n, got)
	}
}

func TestHTTP_PostsArticleAndBoundsAnswer(t *testing.T) {
	t.Parallel()
	var got httpRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// A model that says too much: three sentences.
		_ = json.NewEncoder(w).Encode(map[string]string{"summary": "The tram opened. It links two districts. A third sentence."})
	}))
	defer srv.Close()
	h := &HTTP{URL: srv.URL, Client: srv.Client(), Header: http.Header{"Authorization": {"Bearer k"}}, MaxRequestChars: 20}
	s, err := h.Summarize(context.Background(), article("Tram opens", "The city opened its new tram line on Monday after four years."))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sentences) != 2 || s.Sentences[1] != "It links two districts." || s.By != "http" {
		t.Errorf("summary = %+v, want the first two sentences", s)
	}
	if got.Headline != "Tram opens" || got.URL != "https://news.example/a" || utf8.RuneCountInString(got.Text) != 20 {
		t.Errorf("request = %+v, want the headline, URL and 20 characters of text", got)
	}
}

func TestHTTP_Errors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/down":
			http.Error(w, "no", http.StatusServiceUnavailable)
		case "/big":
			_, _ = w.Write([]byte(`{"summary":"` + strings.Repeat("a", 2000) + `"}`))
		case "/empty":
			_, _ = w.Write([]byte(`{}`))
		case "/hang":
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	a := article("T", "Some text to summarize here.")
	var he *HTTPError
	if _, err := (&HTTP{URL: srv.URL + "/down"}).Summarize(context.Background(), a); !errors.As(err, &he) || he.Status != 503 {
		t.Errorf("down: err = %v, want an *HTTPError 503", err)
	}
	if _, err := (&HTTP{URL: srv.URL + "/big", MaxResponseBytes: 100}).Summarize(context.Background(), a); !errors.Is(err, ErrBadAnswer) {
		t.Errorf("big: err = %v, want ErrBadAnswer", err)
	}
	if _, err := (&HTTP{URL: srv.URL + "/empty"}).Summarize(context.Background(), a); !errors.Is(err, ErrBadAnswer) {
		t.Errorf("empty: err = %v, want ErrBadAnswer", err)
	}
	if _, err := (&HTTP{}).Summarize(context.Background(), a); !errors.Is(err, ErrNoEndpoint) {
		t.Errorf("no URL: err = %v, want ErrNoEndpoint", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&HTTP{URL: srv.URL + "/hang"}).Summarize(ctx, a); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	got := strings.Join(Words("L'État a 3,5 % — U.S. well-known $1.2bn, d'accord."), "|")
	want := "l'état|a|3,5|u|s|well-known|1.2bn|d'accord"
	if got != want {
		t.Errorf("Words = %s, want %s", got, want)
	}
}

// A second sentence that passes the bound is cut to fit when it keeps at
// least minCut characters, and left out when it would be a stub.
func TestExtractive_D6_SecondSentenceCutOrDropped(t *testing.T) {
	t.Parallel()
	lead := "The city council approved on Tuesday a budget of 2.4 billion euros for next year, with new money for schools, buses and the repair of the old bridges across the river that runs through the centre."
	next := "The mayor said the schools would get 300 new teachers and that the bridges, closed to lorries since the spring floods, would reopen to all traffic before the end of next summer at the latest."
	third := "Opposition councillors voted against the budget, saying the city was borrowing too much to pay for projects that the next council would have to finish and that taxes would have to rise again soon."
	a := article("City council approves budget for schools and bridges", lead+" "+next+" "+third)
	a.Language.Value = "en"
	s, err := Extractive{}.Summarize(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sentences) != 2 || s.Sentences[0] != lead || !strings.HasSuffix(s.Sentences[1], "…") ||
		utf8.RuneCountInString(s.Sentences[1]) < minCut || utf8.RuneCountInString(s.Text()) > DefaultMaxChars {
		t.Errorf("got %q, want the lead and a second sentence cut to fit", s.Sentences)
	}
	s, err = Extractive{MaxChars: len(lead) + 30}.Summarize(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sentences) != 1 || s.Sentences[0] != lead {
		t.Errorf("with 29 characters of room: %q, want the lead alone", s.Sentences)
	}
}
