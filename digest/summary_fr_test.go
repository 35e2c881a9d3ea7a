package digest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/politefetch/politefetch/extract"
)

// frArticle is a French story of our own: a hook for a lead, then the
// news, as French news sites write under a standfirst.
func frArticle(lang string) *extract.Article {
	a := article("Incendie à Vernay : l'usine de papier évacuée, deux blessés",
		"La fumée se voyait à des kilomètres. "+
			"Un incendie s'est déclaré mardi soir dans l'usine de papier de Vernay, dont les 120 salariés ont été évacués, et deux pompiers ont été légèrement blessés. "+
			"Le feu a pris dans un entrepôt de bobines vers 21 heures, selon la préfecture. "+
			"« On a tout de suite compris que c'était grave », raconte un voisin. "+
			"L'usine, qui appartient au groupe Papeterie Moreau, restera fermée jusqu'à la fin de la semaine. "+
			"Une enquête a été ouverte pour déterminer l'origine du sinistre.")
	a.Language.Value = lang
	return a
}

func TestExtractive_FrenchPicksTheNewsOverTheHook(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"fr", "fr-FR", ""} { // "": told by its words
		s, err := Extractive{}.Summarize(context.Background(), frArticle(lang))
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Sentences) == 0 || !strings.HasPrefix(s.Sentences[0], "Un incendie s'est déclaré mardi soir") {
			t.Errorf("lang %q: summary %q, want it to open with the news, not the hook", lang, s.Sentences)
		}
	}
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	fr := Sentences(collapse(frArticle("").Blocks[0].Text))
	en := []string{"The city opened its new tram line on Monday.", "The line links the station and the university."}
	de := []string{"Die Stadt hat am Montag die neue Linie eröffnet.", "Die Linie verbindet den Bahnhof mit der Universität."}
	for _, tt := range []struct {
		tag   string
		sents []string
		want  string
	}{
		{"fr", en, "fr"}, {"FR-ca", en, "fr"}, {"de_AT", en, "de"}, {"en", fr, "en"}, {"fry", fr, "fry"},
		{"", fr, "fr"}, {"", en, "en"}, {"", de, "de"}, {"", []string{"Oui."}, ""},
		{"", []string{"Le the et and la of der."}, ""},
	} {
		if got := language(tt.tag, tt.sents); got != tt.want {
			t.Errorf("language(%q, %.30q) = %q, want %q", tt.tag, tt.sents[0], got, tt.want)
		}
	}
}

// D6: whatever the body, the French path keeps at most two of its
// sentences within the bound, never the whole body, and a cut last
// sentence keeps at least minCut characters unless it is the only one.
func TestExtractive_D6_FrenchLimits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Le conseil municipal a voté le budget de la ville après un long débat sur les écoles, les routes et les parcs publics ", 3) + "."
	bodies := map[string][]string{
		"one":       {"Le conseil municipal a voté mardi le budget de la ville pour l'année prochaine."},
		"two":       {"Le conseil municipal a voté mardi le budget. Les écoles recevront deux millions d'euros."},
		"three":     {"Le conseil municipal a voté mardi le budget. Les écoles recevront deux millions d'euros. Les routes attendront."},
		"long":      {long, long, long},
		"hook+long": {"Le débat a duré.", long, "Les écoles recevront deux millions d'euros de plus que l'an passé.", long},
		"tiny":      {"Oui. Non. Peut-être. Enfin."},
		"many":      nil,
	}
	for i := range 40 {
		bodies["many"] = append(bodies["many"], fmt.Sprintf("Le conseil a voté la mesure numéro %d sur les écoles de la ville et les parcs.", i))
	}
	for name, paras := range bodies {
		for _, limit := range []int{0, 80, 200, 320, 1000} {
			a := article("Le conseil municipal vote le budget des écoles", paras...)
			a.Language.Value = "fr"
			s, err := Extractive{MaxChars: limit}.Summarize(context.Background(), a)
			if err != nil {
				t.Fatalf("%s/%d: %v", name, limit, err)
			}
			bound := limit
			if bound == 0 {
				bound = DefaultMaxChars
			}
			body := Sentences(strings.Join(paras, "\n\n"))
			n := utf8.RuneCountInString(s.Text())
			switch {
			case len(s.Sentences) == 0 || len(s.Sentences) > MaxSentences:
				t.Errorf("%s/%d: %d sentences", name, limit, len(s.Sentences))
			case n > bound:
				t.Errorf("%s/%d: %d characters, over %d", name, limit, n, bound)
			case s.Text() == strings.Join(body, " ") || len(s.Sentences) >= len(body) && !strings.HasSuffix(s.Text(), "…"):
				t.Errorf("%s/%d: the whole body %q", name, limit, s.Text())
			}
			for k, sent := range s.Sentences {
				whole := strings.TrimSuffix(sent, "…")
				if !strings.Contains(collapse(strings.Join(paras, " ")), whole) {
					t.Errorf("%s/%d: %q is not the body's", name, limit, sent)
				}
				if k > 0 && whole != sent && utf8.RuneCountInString(sent) < minCut {
					t.Errorf("%s/%d: a second sentence cut to a stub: %q", name, limit, sent)
				}
			}
		}
	}
}

// Summaries are deterministic: the same article gives the same summary,
// call after call and from many goroutines at once.
func TestExtractive_Deterministic(t *testing.T) {
	t.Parallel()
	arts := []*extract.Article{frArticle("fr"), frArticle(""), frArticle("en")}
	want := make([]string, len(arts))
	for i, a := range arts {
		s, err := Extractive{}.Summarize(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = strings.Join(s.Sentences, "|")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Go(func() {
			for r := range 20 {
				i := (g + r) % len(arts)
				s, err := Extractive{}.Summarize(context.Background(), arts[i])
				if got := strings.Join(s.Sentences, "|"); err != nil || got != want[i] {
					select {
					case errs <- fmt.Sprintf("article %d: %q, %v; want %q", i, got, err, want[i]):
					default:
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
