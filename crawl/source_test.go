package crawl

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
)

func validSource() Source {
	return Source{
		ID:       "example-daily",
		Name:     "Example Daily",
		Trigger:  Trigger{Feeds: []string{"https://news.example/feed.xml"}},
		Admitted: []string{"news.example"},
		FullText: true,
		Policy:   PolicySpec{Preset: StrictNews},
		Active:   true,
	}
}

func TestSource_ValidateNamesTheField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		edit  func(*Source)
		field string
	}{
		{"no id", func(s *Source) { s.ID = "" }, "id"},
		{"bad id", func(s *Source) { s.ID = "a b" }, "id"},
		{"no name", func(s *Source) { s.Name = " " }, "name"},
		{"no admitted", func(s *Source) { s.Admitted = nil }, "admitted"},
		{"admitted not normal", func(s *Source) { s.Admitted = []string{"News.Example"} }, "admitted[0]"},
		{"bad param", func(s *Source) { s.Params = []string{"a=b"} }, "params[0]"},
		{"V1 no trigger", func(s *Source) { s.Trigger = Trigger{} }, "trigger"},
		{"V1 both", func(s *Source) { s.Trigger.API = &feed.APISpec{URL: "https://news.example/api", Link: "link"} }, "trigger"},
		{"V10 http feed", func(s *Source) { s.Trigger.Feeds = []string{"http://news.example/feed.xml"} }, "trigger.feeds[0]"},
		{"V10 feed not admitted", func(s *Source) { s.Trigger.Feeds = []string{"https://other.example/feed.xml"} }, "trigger.feeds[0]"},
		{"V2 secret in url", func(s *Source) { s.Trigger.Feeds = []string{"https://u:p@news.example/feed.xml"} }, "trigger.feeds[0]"},
		{"backlog kind", func(s *Source) { s.Backlog = &Backlog{Kind: "rss"} }, "backlog.kind"},
		{"wordpress site", func(s *Source) { s.Backlog = &Backlog{Kind: BacklogWordPress} }, "backlog.site"},
		{"wordpress origin", func(s *Source) { s.Backlog = &Backlog{Kind: BacklogWordPress, Site: "https://news.example/blog"} }, "backlog.site"},
		{"api backlog spec", func(s *Source) { s.Backlog = &Backlog{Kind: BacklogAPI} }, "backlog.api"},
		{"read method", func(s *Source) { s.Read.Method = "browser" }, "read.method"},
		{"V2 api url", func(s *Source) { s.Read = Read{Method: ReadPublicAPI, URL: "https://news.example/posts"} }, "read.url"},
		{"V2 public api no secret", func(s *Source) {
			s.Read = Read{Method: ReadPublicAPI, URL: "https://news.example/posts/{id}", Credential: &CredentialRef{Header: "Authorization", Value: "env:X"}}
		}, "read.credential"},
		{"V2 cms needs credential", func(s *Source) { s.Read = Read{Method: ReadCMSAPI, URL: "https://news.example/cms/{id}"} }, "read.credential"},
		{"V2 inline secret", func(s *Source) {
			s.Read = Read{Method: ReadCMSAPI, URL: "https://news.example/cms/{id}", Credential: &CredentialRef{Header: "Authorization", Value: "Bearer s3cret"}}
		}, "read.credential.value"},
		{"V3 api needs cms id", func(s *Source) {
			s.Read = Read{Method: ReadPublicAPI, URL: "https://news.example/posts/{id}"}
			s.Identifier = IDFromURL
		}, "identifier"},
		{"S2 V7 interval", func(s *Source) { s.Interval = Duration(14 * time.Minute) }, "interval"},
		{"identifier", func(s *Source) { s.Identifier = "guid" }, "identifier"},
		{"preset", func(s *Source) { s.Policy.Preset = "" }, "policy.preset"},
		{"override ruder", func(s *Source) { s.Policy.Interval = Duration(500 * time.Millisecond) }, "policy.interval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := validSource()
			c.edit(&s)
			err := s.Validate()
			var se *SourceError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSource) {
				t.Fatalf("Validate = %v, want a *SourceError", err)
			}
			if se.Field != c.field || se.Source != s.ID {
				t.Fatalf("error %q names field %q of %q, want %q", err, se.Field, se.Source, c.field)
			}
		})
	}
}

func TestSource_ValidAccepted(t *testing.T) {
	t.Parallel()
	ok := []func(*Source){
		func(*Source) {},
		func(s *Source) { s.Interval = Duration(15 * time.Minute) },
		func(s *Source) { s.Admitted = []string{"*.example"} },
		func(s *Source) {
			s.Backlog = &Backlog{Kind: BacklogWordPress, Site: "https://news.example", Floor: time.Now()}
		},
		func(s *Source) {
			s.Backlog = &Backlog{Kind: BacklogSitemap, URLs: []string{"https://news.example/sitemap.xml"}}
		},
		func(s *Source) {
			s.Read = Read{Method: ReadCMSAPI, URL: "https://news.example/cms/{id}", Credential: &CredentialRef{Header: "X-Api-Key", Value: "file:/run/secrets/key"}}
			s.Policy.Preset = Vault // the strict news crawler sends no credential
		},
		func(s *Source) { s.Policy = PolicySpec{Preset: Vault, Interval: Duration(2 * time.Second)} },
	}
	for i, edit := range ok {
		s := validSource()
		edit(&s)
		if err := s.Validate(); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

// A source loads strictly from JSON, durations written as text.
func TestSource_JSON(t *testing.T) {
	t.Parallel()
	const doc = `{"id":"a","name":"A","trigger":{"feeds":["https://a.example/feed.xml"]},
		"backlog":{"kind":"wordpress","site":"https://a.example","floor":"2026-01-01T00:00:00Z"},
		"admitted":["a.example"],"interval":"30m","full_text":true,"identifier":"cms",
		"policy":{"preset":"digest"},"active":true}`
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	var s Source
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.interval() != 30*time.Minute || s.Backlog.Floor.Year() != 2026 || s.Policy.Preset != Digest {
		t.Fatalf("decoded %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(b), `"interval":"30m0s"`) {
		t.Fatalf("marshal: %s %v", b, err)
	}
}

func TestCredentialRef_Resolve(t *testing.T) {
	t.Setenv("CRAWL_TEST_KEY", "s3cret")
	v, err := CredentialRef{Header: "X-Api-Key", Value: "env:CRAWL_TEST_KEY"}.Resolve()
	if err != nil || v != "s3cret" {
		t.Fatalf("Resolve = %q, %v", v, err)
	}
	_, err = CredentialRef{Header: "X-Api-Key", Value: "env:CRAWL_TEST_UNSET_KEY"}.Resolve()
	if err == nil {
		t.Fatal("unset variable resolved")
	}
	_, err = CredentialRef{Header: "X-Api-Key", Value: "s3cret"}.Resolve()
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("inline value: %v", err)
	}
}

// The source's policy decides which credential may be sent, at
// configuration time: the strict news crawler sends none (document 000),
// so a strict-news source naming one is refused; under the vault policy a
// header the chain sets itself (User-Agent, Cookie, Host) or one that is no
// header name is refused, each with fetch.ErrInvalidCredential and the
// field; an access header for the CMS API is accepted.
func TestSource_V9_V9b_CredentialCheckedByItsPolicy(t *testing.T) {
	t.Parallel()
	cms := func(preset Preset, header string) Source {
		s := validSource()
		s.Policy.Preset = preset
		s.Read = Read{Method: ReadCMSAPI, URL: "https://news.example/cms/{id}", Credential: &CredentialRef{Header: header, Value: "env:CMS_TOKEN"}}
		return s
	}
	for _, tc := range []struct {
		name string
		src  Source
	}{
		{"strict news sends none", cms(StrictNews, "Authorization")},
		{"vault: User-Agent is the crawler's", cms(Vault, "User-Agent")},
		{"vault: Cookie", cms(Vault, "Cookie")},
		{"vault: Host", cms(Vault, "host")},
		{"vault: not a header name", cms(Vault, "Author ization")},
	} {
		err := tc.src.Validate()
		var se *SourceError
		var ce *fetch.CredentialError
		if !errors.As(err, &se) || se.Field != "read.credential.header" || !errors.Is(err, ErrInvalidSource) ||
			!errors.Is(err, fetch.ErrInvalidCredential) || !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *SourceError on read.credential.header wrapping fetch.ErrInvalidCredential", tc.name, err)
		}
	}
	strict := cms(StrictNews, "Authorization")
	if err := strict.Validate(); err == nil || !strings.Contains(err.Error(), "no credential") {
		t.Errorf("strict news: %v, want the rule in words (the policy sends no credential)", err)
	}
	for _, h := range []string{"Authorization", "X-Api-Key"} {
		if s := cms(Vault, h); s.Validate() != nil {
			t.Errorf("vault with %s: %v, want it accepted", h, s.Validate())
		}
	}
}
