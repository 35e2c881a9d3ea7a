package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every flag is checked before anything starts, and the error says what is
// expected; a store that cannot be opened names its file and what the
// system said.
func TestFlags_BadValuesRefused(t *testing.T) {
	t.Parallel()
	cfg := readyConfig("strict-news")
	blocked := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"crawl"}, "-config FILE is required"},
		{[]string{"crawl", "-config", cfg, "-live", "sometimes"}, "-live must be auto, on or off"},
		{[]string{"crawl", "-config", cfg, "-metrics", "9090"}, `-metrics "9090": want host:port or :port`},
		{[]string{"crawl", "-config", cfg, "-log-format", "xml"}, "-log-format must be text or json"},
		{[]string{"crawl", "-config", cfg, "-log-level", "loud"}, "-log-level must be debug, info, warn or error"},
		{[]string{"crawl", "-config", cfg, "-connect-to", "localhost"}, "-connect-to \"localhost\": want ip:port"},
		{[]string{"crawl", "-config", cfg, "-connect-to", "127.0.0.1:8443"}, "is not a public address: admit it explicitly with -admit-private 127.0.0.1/32"},
		{[]string{"crawl", "-config", cfg, "-admit-private", "localnet"}, `"localnet" is not an address prefix`},
		{[]string{"crawl", "-config", cfg, "-store", filepath.Join(t.TempDir(), "c.db"), "-ca", filepath.Join(t.TempDir(), "none.pem"), "-once"}, "-ca: open "},
		{[]string{"crawl", "-config", cfg, "-store", filepath.Join(blocked, "crawl.db"), "-once"}, "store " + filepath.Join(blocked, "crawl.db") + ": "},
		{[]string{"crawl", "-config", cfg, "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"crawl", "-config", filepath.Join(t.TempDir(), "missing.yaml")}, "no such file or directory"},
		{[]string{"explain", "-config", cfg}, "one URL expected"},
		{[]string{"explain", "-config", cfg, "-kind", "video", "https://news-1.example/"}, "-kind must be article, feed, sitemap, api or image"},
		{[]string{"explain", "-config", cfg, "news-1.example/x"}, "is not an absolute URL"},
		{[]string{"export", "-config", cfg, "-format", "csv"}, "-format must be jsonl or warc"},
		{[]string{"export", "-config", cfg, "-format", "jsonl", "-since", "yesterday"}, "-since \"yesterday\": want an instant"},
		{[]string{"report", "-config", cfg, "-store", filepath.Join(t.TempDir(), "none.db")}, "no such file"},
		{[]string{"verify", "-config", cfg, "x.warc.gz"}, "give -config (and -store) or one WARC file, not both"},
		{[]string{"verify", filepath.Join(t.TempDir(), "none.warc.gz")}, "no such file or directory"},
		{[]string{"sources"}, "the only subcommand is check"},
		{[]string{"serve", "-sites", "0"}, "-sites 0: 1 to 1000"},
		{[]string{"serve", "-rude", "2"}, "-rude 2: a share from 0 to 1"},
		{[]string{"serve", "-audit", "lenient"}, "-audit must be strict-news, digest or vault"},
		{[]string{"nonsense"}, `unknown command "nonsense"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(tc.args, &out, &errOut)
			if err == nil {
				t.Fatalf("accepted\n%s%s", out.String(), errOut.String())
			}
			if errors.Is(err, flag.ErrHelp) {
				t.Fatalf("help instead of an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}
