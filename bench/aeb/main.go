// Command aeb runs extract and the two Go anchors, go-readability (readeck's
// fork) and go-trafilatura, over a folder shaped like the public
// article-extraction benchmark, in one run, and prints F1, precision, recall
// and pages per second on one core for each:
//
//	cd bench && go run ./aeb -data DIR
//
// -data defaults to $AEB_DATA. -predictions PREFIX writes each extractor's
// output to PREFIX-<name>.json in the benchmark's format.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/markusmobius/go-trafilatura"

	"github.com/politefetch/politefetch/internal/aeb"
)

func main() {
	data := flag.String("data", os.Getenv("AEB_DATA"), "benchmark folder (html/, ground-truth.json)")
	preds := flag.String("predictions", "", "write each extractor's predictions to PREFIX-<name>.json")
	rounds := flag.Int("rounds", 2, "runs over the set per extractor; pages/s is the best")
	only := flag.String("only", "", "comma-separated extractors to run (extract, readability, trafilatura); empty: all")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "aeb: no data folder: pass -data or set AEB_DATA")
		os.Exit(2)
	}
	pages, err := aeb.Load(*data)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	extractors := []struct {
		name string
		f    aeb.Extractor
	}{
		{"extract", aeb.Extract},
		{"readability", readabilityText},
		{"trafilatura", trafilaturaText},
	}
	var results []aeb.Result
	for _, e := range extractors {
		if *only != "" && !strings.Contains(","+*only+",", ","+e.name+",") {
			continue
		}
		r := aeb.Run(e.name, pages, *rounds, e.f)
		results = append(results, r)
		if *preds != "" {
			if err := aeb.WritePredictions(*preds+"-"+e.name+".json", r.Predictions); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
	fmt.Printf("%d pages, GOMAXPROCS=1, best of %d rounds\n", len(pages), *rounds)
	aeb.Print(os.Stdout, results...)
}

func pageURL(p *aeb.Page) *url.URL {
	u, err := url.Parse(p.URL)
	if err != nil || p.URL == "" {
		return nil
	}
	return u
}

func readabilityText(p *aeb.Page) string {
	parser := readability.NewParser()
	a, err := parser.Parse(bytes.NewReader(p.HTML), pageURL(p))
	if err != nil || a.Node == nil {
		return ""
	}
	var b strings.Builder
	if err := a.RenderText(&b); err != nil {
		return ""
	}
	return b.String()
}

func trafilaturaText(p *aeb.Page) string {
	r, err := trafilatura.Extract(bytes.NewReader(p.HTML), trafilatura.Options{
		OriginalURL:     pageURL(p),
		EnableFallback:  true,
		ExcludeComments: true,
	})
	if err != nil || r == nil {
		return ""
	}
	return r.ContentText
}
