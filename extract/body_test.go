package extract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// goldenBlocks is what a body golden file holds: the blocks, one JSON
// object each, so a change to the detector shows as a readable diff.
type goldenBlock struct {
	Kind    string   `json:"kind"`
	Level   int      `json:"level,omitempty"`
	Ordered bool     `json:"ordered,omitempty"`
	Text    string   `json:"text"`
	Items   []string `json:"items,omitempty"`
}

var kindNames = map[BlockKind]string{
	Paragraph: "paragraph", Heading: "heading", List: "list", Quote: "quote",
	Preformatted: "preformatted", Table: "table", Caption: "caption",
}

// TestBodyGolden reads every page of testdata/body and compares its blocks
// with the page's .blocks.json (go test ./extract/ -run BodyGolden -update
// rewrites them).
func TestBodyGolden(t *testing.T) {
	pages, _ := filepath.Glob("testdata/body/*.html")
	if len(pages) == 0 {
		t.Fatal("no pages in testdata/body")
	}
	for _, page := range pages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			a, err := HTML(b, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			blocks := []goldenBlock{}
			for _, bl := range a.Blocks {
				blocks = append(blocks, goldenBlock{Kind: kindNames[bl.Kind], Level: bl.Level, Ordered: bl.Ordered, Text: bl.Text, Items: bl.Items})
			}
			got, err := json.MarshalIndent(blocks, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(page, ".html") + ".blocks.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (run with -update to accept):\n got: %s\nwant: %s", golden, got, want)
			}
		})
	}
}

// TestBody_LeavesOutBoilerplate checks, on the news page, what the golden
// file shows: navigation, share tools, advertisements, related links,
// comments, sidebars and footers are not in the body; the figure's caption
// is a Caption and its image is nowhere (V5).
func TestBody_LeavesOutBoilerplate(t *testing.T) {
	b, err := os.ReadFile("testdata/body/news.html")
	if err != nil {
		t.Fatal(err)
	}
	a, err := HTML(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := a.Text()
	for _, bad := range []string{"Sport", "Share", "Advertisement", "Ferry timetable", "Finally!", "Council tax", "All rights reserved", "bridge.jpg", "The bridge at dawn"} {
		if strings.Contains(text, bad) {
			t.Errorf("body holds %q:\n%s", bad, text)
		}
	}
	for _, good := range []string{"reopened to traffic", "A slow rebuild", "open late than open", "usual toll"} {
		if !strings.Contains(text, good) {
			t.Errorf("body lacks %q:\n%s", good, text)
		}
	}
	captions := 0
	for _, bl := range a.Blocks {
		if bl.Kind == Caption {
			captions++
			if bl.Text != "The rebuilt span at dawn on Monday." {
				t.Errorf("caption %q", bl.Text)
			}
		}
	}
	if captions != 1 {
		t.Errorf("%d captions, want 1", captions)
	}
}

// TestBody_Chunked reads a body split into chunks of one class, with an
// advertisement between each, as one body in order.
func TestBody_Chunked(t *testing.T) {
	b, err := os.ReadFile("testdata/body/chunked.html")
	if err != nil {
		t.Fatal(err)
	}
	a, err := HTML(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Blocks) != 4 {
		t.Fatalf("%d blocks, want the 4 paragraphs:\n%s", len(a.Blocks), a.Text())
	}
	if !strings.HasPrefix(a.Blocks[0].Text, "At three in the morning") || !strings.HasPrefix(a.Blocks[3].Text, "Few will take them") {
		t.Errorf("blocks out of order:\n%s", a.Text())
	}
}

func TestBody_NoBody(t *testing.T) {
	for _, page := range []string{"", "<html></html>", "<html><body></body></html>", "<p>too short</p>", "\x00\xff\xfe"} {
		a, err := HTML([]byte(page), nil, nil)
		if err != nil {
			t.Errorf("%q: %v", page, err)
			continue
		}
		if len(a.Blocks) != 0 {
			t.Errorf("%q: blocks %+v", page, a.Blocks)
		}
	}
}

// TestBody_PooledDetectorsShareNothing reads the golden pages from several
// goroutines at once, each page many times in turn with the others: the
// detectors kept between pages must give each page the body it gets alone.
func TestBody_PooledDetectorsShareNothing(t *testing.T) {
	pages, err := filepath.Glob("testdata/body/*.html")
	if err != nil || len(pages) < 2 {
		t.Fatalf("golden pages: %v, %v", pages, err)
	}
	alone := map[string]string{}
	raw := map[string][]byte{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		a, err := HTML(b, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw[p], alone[p] = b, a.Text()
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(pages)*4)
	for g := range 4 {
		wg.Go(func() {
			for i := range 5 * len(pages) {
				p := pages[(g+i)%len(pages)]
				a, err := HTML(raw[p], nil, nil)
				if err != nil || a.Text() != alone[p] {
					errs <- p
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for p := range errs {
		t.Errorf("%s: the body read beside other pages differs from the body read alone", p)
	}
}
