package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

// minimalConfig is a valid configuration; tests change one line of it.
const minimalConfig = `crawler:
  name: TestBot
  version: "1"
  info_url: https://bot.example/about
  contact: bot@bot.example
policy:
  preset: strict-news
sources:
  - id: s1
    name: Source One
    trigger:
      feeds: [https://news-1.example/feed.xml]
    admitted: [news-1.example]
    interval: 15m
    active: true
    full_text: true
`

func TestConfig_Minimal(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig("dir/c.yaml", []byte(minimalConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.StorePath(); got != "dir/c.db" {
		t.Errorf("store %q, want dir/c.db beside the config", got)
	}
	s := c.Sources[0]
	if s.Policy.Preset != crawl.StrictNews || time.Duration(s.Interval) != 15*time.Minute || !s.FullText || !s.Active {
		t.Errorf("source %+v", s)
	}
	fp, err := c.FetchPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if ua := fp.UserAgent(); ua != "TestBot/1 (+https://bot.example/about; bot@bot.example)" {
		t.Errorf("user agent %q", ua)
	}
	if c.Store.SyncDeposits {
		t.Error("sync_deposits is on by default")
	}
	c, err = ParseConfig("dir/c.yaml", []byte(minimalConfig+"store:\n  sync_deposits: true\n"))
	if err != nil || !c.Store.SyncDeposits {
		t.Errorf("store.sync_deposits: true read as %v, %v", c != nil && c.Store.SyncDeposits, err)
	}
}

// Every error names the file, the line and the key (issue 15).
func TestConfig_ErrorsNameFileLineKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown key", "    active: true\n", "    active: true\n    actve: true\n", "c.yaml:16: sources[0].actve: unknown key"},
		{"unknown top key", "policy:\n", "polcy:\n", "c.yaml:6: polcy: unknown key"},
		{"bad duration", "interval: 15m", "interval: 15 minutes", `c.yaml:14: sources[0].interval: "15 minutes"`},
		{"interval too short", "interval: 15m", "interval: 5m", "c.yaml:14: sources[0].interval: 5m0s is shorter than 15m0s"},
		{"http feed", "https://news-1.example/feed.xml", "http://news-1.example/feed.xml", "c.yaml:12: sources[0].trigger.feeds[0]:"},
		{"host not admitted", "admitted: [news-1.example]", "admitted: [other.example]", "c.yaml:12: sources[0].trigger.feeds[0]:"},
		{"bad bool", "full_text: true", "full_text: maybe", `c.yaml:16: sources[0].full_text: "maybe": true or false`},
		{"no identity", "  name: TestBot\n", "", "c.yaml:2: crawler.name: required"},
		{"unknown preset", "preset: strict-news", "preset: rude", `c.yaml:7: policy.preset: unknown preset "rude"`},
		{"faster interval", "preset: strict-news", "preset: strict-news\n  interval: 500ms", "c.yaml:8: policy.interval: override would make the policy less polite: 500ms is shorter"},
		{"longer robots ttl", "preset: strict-news", "preset: strict-news\n  robots_ttl: 2h", "c.yaml:8: policy.robots_ttl: override would make the policy less polite: 2h0m0s: from 1m0s to the policy's 1h0m0s"},
		{"other preset", "    active: true\n", "    active: true\n    policy: {preset: vault}\n", `c.yaml:16: sources[0].policy.preset: "vault" differs`},
		{"alias", "  name: TestBot", "  name: &n TestBot", "anchors and aliases are not supported"},
		{"twice", "    active: true\n", "    active: true\n    active: false\n", "c.yaml:16: sources[0].active: given twice"},
		{"max reads", "policy:\n", "crawl:\n  max_reads: 5\npolicy:\n", "c.yaml:7: crawl.max_reads: 5: from 1 to 3 reads of an article per pass"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(minimalConfig, tc.old, tc.new, 1)
			if text == minimalConfig {
				t.Fatalf("the test's edit does not apply")
			}
			_, err := ParseConfig("c.yaml", []byte(text))
			if err == nil {
				t.Fatalf("accepted")
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("%v does not match ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

// requirementCode matches a requirement number quoted in a message, "(V2, V9b)".
var requirementCode = regexp.MustCompile(`\((S|D|V|P|R)[0-9]+[a-z]?(, ?(S|D|V|P|R)[0-9]+[a-z]?)*\)`)

// A credential is given by reference only: an inline one is refused, and
// the refusal does not repeat it (V2, V9b).
func TestConfig_V9b_InlineCredentialRefused(t *testing.T) {
	t.Parallel()
	// Under the vault policy: the strict news crawler sends no credential.
	cms := strings.Replace(strings.Replace(minimalConfig, "preset: strict-news", "preset: vault", 1), "    full_text: true\n", `    full_text: true
    read:
      method: cms-api
      url: https://news-1.example/api/{id}
      credential: {header: Authorization, value: "Bearer s3cret-token"}
`, 1)
	_, err := ParseConfig("c.yaml", []byte(cms))
	if err == nil {
		t.Fatal("an inline credential was accepted")
	}
	if !strings.Contains(err.Error(), "sources[0].read.credential.value: an inline credential is refused") {
		t.Errorf("error %q", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error repeats the secret: %q", err)
	}
	if requirementCode.MatchString(err.Error()) {
		t.Errorf("the message names requirement codes, which mean nothing to an operator: %q", err)
	}
	ok := strings.Replace(cms, `"Bearer s3cret-token"`, "env:CMS_TOKEN", 1)
	if _, err := ParseConfig("c.yaml", []byte(ok)); err != nil {
		t.Errorf("a reference was refused: %v", err)
	}
	file := strings.Replace(cms, `"Bearer s3cret-token"`, "file:secrets/cms", 1)
	c, err := ParseConfig(filepath.Join("conf", "c.yaml"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Sources[0].Read.Credential.Value, "file:"+filepath.Join("conf", "secrets", "cms"); got != want {
		t.Errorf("file reference %q, want %q (relative to the config's folder)", got, want)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(minimalConfig))
	for _, name := range []string{"strict-news", "digest", "vault"} {
		if b, err := os.ReadFile(readyConfig(name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a: &x [*x, *x]"))
	f.Add([]byte("sources: [{id: 1}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig("f.yaml", b)
		if err == nil && len(c.Sources) == 0 {
			t.Fatal("a config without sources was accepted")
		}
	})
}

// keyNames returns every key the decoder knows under t, leaves and
// sections alike.
func keyNames(t reflect.Type, seen map[reflect.Type]bool, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return
	}
	seen[t] = true
	for name, idx := range fieldsOf(t) {
		out[name] = true
		keyNames(t.FieldByIndex(idx).Type, seen, out)
	}
}

// The reference config parses, and every key the decoder knows is in it
// and in docs/config.md.
func TestConfig_ReferenceCoversEveryKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "configs", "reference.yaml")
	if _, err := LoadConfig(path); err != nil {
		t.Fatal(err)
	}
	ref, _ := os.ReadFile(path)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	keyNames(reflect.TypeFor[Config](), map[reflect.Type]bool{}, keys)
	for k := range keys {
		if !strings.Contains(string(ref), k+":") {
			t.Errorf("configs/reference.yaml lacks %s", k)
		}
		d := string(doc)
		if !strings.Contains(d, "`"+k+"`") && !strings.Contains(d, "."+k+"`") && !strings.Contains(d, "`"+k+",") &&
			!strings.Contains(d, "`"+k+".") && !strings.Contains(d, "."+k+".") {
			t.Errorf("docs/config.md lacks %s", k)
		}
	}
}

// The identity the preset requires, and one a User-Agent cannot carry, are
// named at their key (D3: the digest engine's contact address).
func TestConfig_D3_IdentityErrors(t *testing.T) {
	t.Parallel()
	noContact := strings.Replace(strings.Replace(minimalConfig, "  contact: bot@bot.example\n", "", 1), "preset: strict-news", "preset: digest", 1)
	if _, err := ParseConfig("c.yaml", []byte(noContact)); err == nil || !strings.Contains(err.Error(), "crawler.contact: required by the digest policy") {
		t.Errorf("digest without contact: %v", err)
	}
	spaced := strings.Replace(minimalConfig, "name: TestBot", "name: Test Bot", 1)
	if _, err := ParseConfig("c.yaml", []byte(spaced)); err == nil || !strings.Contains(err.Error(), "c.yaml:2: crawler.name: cannot go in a User-Agent") {
		t.Errorf("a name with a space: %v", err)
	}
}

// BenchmarkParseConfig parses and checks a configuration of 300 sources,
// one feed and one admitted host each (the shape politecheck's bench
// writes), as a crawl does before its first request.
//
//	go test -run='^$' -bench=ParseConfig -benchmem ./examples/politecrawl/
func BenchmarkParseConfig(b *testing.B) {
	var y strings.Builder
	y.WriteString("crawler:\n  name: BenchCrawler\n  version: \"1\"\n  info_url: https://politefetch.example/bench\n  contact: \"\"\n")
	y.WriteString("policy:\n  preset: strict-news\n  interval: 1s\n  robots_ttl: 1h\ncrawl:\n  share_images: skip\nsources:\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&y, "  - id: src-%d\n    name: Source %d\n    category: World\n    trigger:\n      feeds: [https://news-%d.example/feed.xml]\n"+
			"    admitted: [news-%d.example]\n    full_text: true\n    read:\n      method: page\n    active: true\n", i, i, i, i)
	}
	data := []byte(y.String())
	b.ReportAllocs()
	for b.Loop() {
		c, err := ParseConfig("bench.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Sources) != 300 {
			b.Fatalf("%d sources, want 300", len(c.Sources))
		}
	}
}
