// Command aebbench runs extract over a folder shaped like the public
// article-extraction benchmark (html/<id>.html.gz, ground-truth.json) and
// prints F1, precision, recall and pages per second on one core:
//
//	go run ./extract/internal/aebbench -data DIR [-predictions preds.json] [-worst 20]
//
// -data defaults to $AEB_DATA. With -predictions it also writes the output for
// every page in the benchmark's format, {id: {"articleBody": text}}, whether
// the page has ground truth or not. The body's text is every block but the
// figure captions, as the benchmark's labels have it. Pages are read and
// decompressed before the clock starts; pages/s is parse and extraction with
// GOMAXPROCS=1, the best of -rounds runs. -worst lists the pages with the
// lowest F1, -exact prints the figures to 12 digits (to compare with another
// scorer), -cpuprofile writes a CPU profile of the runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/politefetch/politefetch/internal/aeb"
)

func main() {
	data := flag.String("data", os.Getenv("AEB_DATA"), "benchmark folder (html/, ground-truth.json)")
	preds := flag.String("predictions", "", "write predictions for every page to this file")
	rounds := flag.Int("rounds", 3, "runs over the set; pages/s is the best")
	worst := flag.Int("worst", 0, "list this many worst pages")
	exact := flag.Bool("exact", false, "print F1, precision and recall to 12 digits")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runs to this file")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "aebbench: no data folder: pass -data or set AEB_DATA")
		os.Exit(2)
	}
	pages, err := aeb.Load(*data)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	r := aeb.Run("extract", pages, *rounds, aeb.Extract)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	aeb.Print(os.Stdout, r)
	if *exact {
		fmt.Printf("F1 %.12f precision %.12f recall %.12f\n", r.Score.F1, r.Score.Precision, r.Score.Recall)
	}
	if *worst > 0 {
		aeb.Worst(os.Stdout, r, *worst)
	}
	if *preds != "" {
		if err := aeb.WritePredictions(*preds, r.Predictions); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
