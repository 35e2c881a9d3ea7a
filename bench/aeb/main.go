// Command aeb runs extract and the two Go anchors, go-readability (readeck's
// fork) and go-trafilatura, over a folder shaped like the public
// article-extraction benchmark, in one run, and prints F1, precision, recall
// and pages per second on one core for each:
//
//	cd bench && go run ./aeb -data DIR[,DIR...]
//
// -data defaults to $AEB_DATA; several folders (the AEB and the Dragnet
// test split, say) are run one after the other and reported each on its
// own. -predictions PREFIX writes each extractor's output to
// PREFIX-<name>.json in the benchmark's format (PREFIX-<folder>-<name>.json
// when several folders are given), for score.py --diff.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
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
	dirs := strings.Split(*data, ",")
	for i, dir := range dirs {
		prefix := *preds
		if prefix != "" && len(dirs) > 1 {
			prefix += "-" + filepath.Base(filepath.Clean(dir))
		}
		if i > 0 {
			fmt.Println()
		}
		if err := runSet(dir, prefix, *rounds, *only); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// runSet runs the extractors named by only over the folder dir and prints
// their figures; prefix, when not "", names the predictions files.
func runSet(dir, prefix string, rounds int, only string) error {
	pages, err := aeb.Load(dir)
	if err != nil {
		return err
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
		if only != "" && !strings.Contains(","+only+",", ","+e.name+",") {
			continue
		}
		r := aeb.Run(e.name, pages, rounds, e.f)
		results = append(results, r)
		if prefix != "" {
			if err := aeb.WritePredictions(prefix+"-"+e.name+".json", r.Predictions); err != nil {
				return err
			}
		}
	}
	fmt.Printf("%s: %d pages, GOMAXPROCS=1, best of %d rounds\n", filepath.Base(filepath.Clean(dir)), len(pages), rounds)
	aeb.Print(os.Stdout, results...)
	return nil
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
