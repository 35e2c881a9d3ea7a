package digesttest

import (
	"strings"
	"testing"
)

func TestNews(t *testing.T) {
	t.Parallel()
	news, err := News()
	if err != nil {
		t.Fatal(err)
	}
	if len(news) != 30 {
		t.Errorf("%d stories, want 30", len(news))
	}
	for _, bad := range []string{"title: x", "title: x\nwhat: y\n\nbody", "nokey\n\nbody", "title: x\nsection: World\nlang: en\n\nbody"} {
		if _, err := parseStory("bad", bad); err == nil {
			t.Errorf("parseStory(%q) accepted", bad)
		}
	}
}

func FuzzParseStory(f *testing.F) {
	for _, name := range []string{"en-tram", "fr-velo", "de-bahn"} {
		b, err := newsFS.ReadFile("testdata/news/" + name + ".txt")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseStory("fuzz", s)
		if err != nil {
			return
		}
		if st.Title == "" || st.Reference == "" || len(st.Paragraphs) == 0 {
			t.Fatalf("accepted a story without its required parts: %+v", st)
		}
		for _, p := range st.Paragraphs {
			if p == "" || strings.Contains(p, "\n") {
				t.Fatalf("paragraph %q", p)
			}
		}
	})
}
