package crawl

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/hostkey"
)

// MinInterval is the shortest feed interval a source may declare.
const MinInterval = 15 * time.Minute

// Source is one publisher's source, as data: what announces its articles
// (the trigger), where its backlog is listed, how each article is read,
// which hosts and query parameters it admits, how often its trigger is
// read, whether its licence allows full text, how its articles are
// identified, the policy it is read under, and whether it is active.
//
// A Source is loaded from configuration (the json and yaml tags name its
// keys) and checked with [Source.Validate]; a Crawler refuses one that does
// not validate. It is plain data: copy it freely.
type Source struct {
	// ID names the source in the state store and in deposits: letters,
	// digits, '-', '_' and '.', at most 64 bytes. Required.
	ID string `json:"id" yaml:"id"`
	// Name is the source's human name, e.g. "Example Daily". Required.
	Name string `json:"name" yaml:"name"`
	// Brand is the publisher's brand as readers see it. "": Name.
	Brand string `json:"brand,omitempty" yaml:"brand,omitempty"`
	// Category is the source's category (e.g. "World"); free text.
	Category string `json:"category,omitempty" yaml:"category,omitempty"`

	// Trigger is what announces new articles. Required.
	Trigger Trigger `json:"trigger" yaml:"trigger"`
	// Backlog is where the source lists its older articles. Nil: the
	// source has no backlog walk.
	Backlog *Backlog `json:"backlog,omitempty" yaml:"backlog,omitempty"`
	// Read is how one article is read. Its zero value reads the page.
	Read Read `json:"read" yaml:"read"`

	// Admitted lists the hosts the source may be read from and redirected
	// to: exact names, or "*.example.com". Required: every trigger,
	// backlog and read URL must be on an admitted host.
	Admitted []string `json:"admitted" yaml:"admitted"`
	// Params lists the query parameters the source declares necessary:
	// never stripped, and a redirect may add them.
	Params []string `json:"params,omitempty" yaml:"params,omitempty"`

	// Interval is how often the trigger is read. Zero: MinInterval. Less
	// than MinInterval is refused.
	Interval Duration `json:"interval,omitempty" yaml:"interval,omitempty"`
	// FullText reports that the source's licence allows keeping the full
	// text. False: only the trigger's excerpt of each story is kept,
	// labelled, with a link to the original; articles are not read.
	FullText bool `json:"full_text" yaml:"full_text"`
	// Embargo reports that the date the trigger or the backlog gives an
	// article is an embargo: the article is read only once it has passed,
	// at its address. For an API list, point its spec's Published
	// path at the field that holds the embargo. False: articles are read
	// whatever their date.
	Embargo bool `json:"embargo,omitempty" yaml:"embargo,omitempty"`
	// Identifier says how an article is identified. Zero: IDFromCMS.
	Identifier IDRule `json:"identifier,omitempty" yaml:"identifier,omitempty"`
	// Policy is the preset the source is read under, with overrides.
	// Required (its Preset).
	Policy PolicySpec `json:"policy" yaml:"policy"`
	// Active reports whether the source is crawled. An inactive source is
	// never fetched again, and what was deposited stays as it is.
	Active bool `json:"active" yaml:"active"`
}

// Trigger is what announces a source's new articles: one or more feeds,
// or a public API call without a secret. Exactly one of Feeds and API is
// set. Nothing of the trigger's content is kept beyond each article's
// reference, except a story's excerpt where the source keeps excerpts.
type Trigger struct {
	// Feeds are RSS, Atom or JSON Feed URLs (https).
	Feeds []string `json:"feeds,omitempty" yaml:"feeds,omitempty"`
	// API is a public JSON list of the newest articles; only its first
	// page is read on each trigger read.
	API *feed.APISpec `json:"api,omitempty" yaml:"api,omitempty"`
}

// BacklogKind says how a backlog is listed.
type BacklogKind string

// The kinds of backlog list.
const (
	// BacklogSitemap walks sitemaps (URLs, else those robots.txt names).
	// Sitemaps name no identifier: under IDFromCMS their references are
	// matched by address to those the trigger announced, and the others
	// are dropped (an EventRefDropped says so); a source whose CMS ids
	// appear nowhere but in its pages declares IDFromURL.
	BacklogSitemap BacklogKind = "sitemap"
	// BacklogWordPress walks the WordPress REST post list of Site.
	BacklogWordPress BacklogKind = "wordpress"
	// BacklogAPI walks a paginated JSON list described by API.
	BacklogAPI BacklogKind = "api"
)

// Backlog is where a source lists its articles, walked newest to oldest at
// start-up and then every DefaultBacklogInterval, references only.
type Backlog struct {
	// Kind is the list's kind. Required.
	Kind BacklogKind `json:"kind" yaml:"kind"`
	// URLs are the sitemaps to walk (BacklogSitemap). Empty: those the
	// site's robots.txt names, else Site + "/sitemap.xml".
	URLs []string `json:"urls,omitempty" yaml:"urls,omitempty"`
	// Site is the site's https origin (BacklogSitemap without URLs,
	// BacklogWordPress).
	Site string `json:"site,omitempty" yaml:"site,omitempty"`
	// PerPage is the WordPress page size. 0: the API's maximum, 100.
	PerPage int `json:"per_page,omitempty" yaml:"per_page,omitempty"`
	// API describes the list (BacklogAPI).
	API *feed.APISpec `json:"api,omitempty" yaml:"api,omitempty"`
	// Floor is the source's floor date: nothing older is listed. Zero: none.
	Floor time.Time `json:"floor,omitzero" yaml:"floor,omitempty"`
}

// ReadMethod says how an article is read.
type ReadMethod string

// The ways to read an article.
const (
	// ReadPage reads the article's HTML page at its address.
	ReadPage ReadMethod = "page"
	// ReadPublicAPI reads a public API document per article, such as the
	// WordPress REST post: Read.URL with "{id}" replaced by its identifier.
	ReadPublicAPI ReadMethod = "public-api"
	// ReadCMSAPI reads the publisher's CMS API with a credential header
	// (Read.Credential): Read.URL with "{id}" replaced.
	ReadCMSAPI ReadMethod = "cms-api"
)

// Read is how a source's articles are read. The zero value reads each
// article's page.
type Read struct {
	// Method is the way. "": ReadPage.
	Method ReadMethod `json:"method,omitempty" yaml:"method,omitempty"`
	// URL is the API address of one article for ReadPublicAPI and
	// ReadCMSAPI, with "{id}" where the identifier goes, e.g.
	// "https://example.org/wp-json/wp/v2/posts/{id}".
	URL string `json:"url,omitempty" yaml:"url,omitempty"`
	// Credential is the header ReadCMSAPI sends; its value is a reference,
	// never the secret itself.
	Credential *CredentialRef `json:"credential,omitempty" yaml:"credential,omitempty"`
}

// CredentialRef names a credential header and where its value is found:
// "env:NAME" (an environment variable) or "file:PATH" (a file's contents,
// trailing newline removed). The secret itself is never part of a Source.
type CredentialRef struct {
	Header string `json:"header" yaml:"header"`
	Value  string `json:"value" yaml:"value"`
}

// Resolve reads the credential's value from where Value points. It is the
// only place a secret is read; the Crawler calls it once per source. Its
// error never includes the secret.
func (c CredentialRef) Resolve() (string, error) {
	kind, ref, _ := strings.Cut(c.Value, ":")
	var v string
	switch kind {
	case "env":
		s, ok := os.LookupEnv(ref)
		if !ok {
			return "", fmt.Errorf("crawl: credential %s: environment variable %s not set", c.Header, ref)
		}
		v = s
	case "file":
		b, err := os.ReadFile(ref)
		if err != nil {
			return "", fmt.Errorf("crawl: credential %s: %w", c.Header, err)
		}
		v = strings.TrimRight(string(b), "\r\n")
	default:
		return "", fmt.Errorf("crawl: credential %s: value must be env:NAME or file:PATH", c.Header)
	}
	if v == "" {
		return "", fmt.Errorf("crawl: credential %s: empty value", c.Header)
	}
	return v, nil
}

// IDRule says where an article's identifier comes from.
type IDRule string

// The identifier rules.
const (
	// IDFromCMS: the CMS's identifier, read from the trigger, the backlog
	// list and the article, which must agree. The zero rule.
	IDFromCMS IDRule = "cms"
	// IDFromURL: the article's address is its identifier, for a source
	// whose configuration declares that its CMS has no stable one.
	IDFromURL IDRule = "url"
)

// Preset names one of the three policies (fetch.StrictNews, fetch.Digest,
// fetch.Vault).
type Preset string

// The presets.
const (
	StrictNews Preset = "strict-news"
	Digest     Preset = "digest"
	Vault      Preset = "vault"
)

// PolicySpec is a source's policy: a preset and the overrides a source may
// make. An override can only make the crawl more polite.
type PolicySpec struct {
	// Preset is the policy. Required.
	Preset Preset `json:"preset" yaml:"preset"`
	// Interval, when set, lengthens the per-host interval of the preset;
	// shorter than the preset's is refused.
	Interval Duration `json:"interval,omitempty" yaml:"interval,omitempty"`
}

// Fetch returns the fetch policy the spec names, with its overrides. The
// caller adds the identity (fetch.Policy's Name, InfoURL, Contact) where the
// preset asks for one.
func (p PolicySpec) Fetch() (fetch.Policy, error) {
	var fp fetch.Policy
	switch p.Preset {
	case StrictNews:
		fp = fetch.StrictNews()
	case Digest:
		fp = fetch.Digest()
	case Vault:
		fp = fetch.Vault()
	default:
		return fp, &SourceError{Field: "policy.preset", Reason: fmt.Sprintf("unknown preset %q (strict-news, digest or vault)", p.Preset)}
	}
	tight, err := fp.Tighten(fetch.Overrides{Interval: time.Duration(p.Interval)})
	var oe *fetch.OverrideError
	if errors.As(err, &oe) {
		return fp, &SourceError{Field: "policy.interval", Reason: oe.Reason}
	}
	return tight, err
}

// Duration is a time.Duration written as text in configuration ("15m",
// "24h").
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration such as "15m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// ErrInvalidSource is matched (errors.Is) by every *SourceError.
var ErrInvalidSource = errors.New("crawl: invalid source")

// SourceError is a source that does not validate: the field at fault, by
// its configuration key ("trigger.feeds[0]", "interval"), and why.
type SourceError struct {
	Source string // the source's ID, when known
	Field  string
	Reason string
	// Err is the refusal of another package's check behind this one, or
	// nil: a *fetch.CredentialError (fetch.ErrInvalidCredential) for a
	// credential the source's policy may not send.
	Err error
}

func (e *SourceError) Error() string {
	if e.Source == "" {
		return "crawl: invalid source: " + e.Field + ": " + e.Reason
	}
	return "crawl: invalid source " + e.Source + ": " + e.Field + ": " + e.Reason
}

// Is matches ErrInvalidSource.
func (e *SourceError) Is(target error) bool { return target == ErrInvalidSource }

// Unwrap returns Err.
func (e *SourceError) Unwrap() error { return e.Err }

// Validate checks the source and returns a *SourceError naming the first
// field at fault, or nil.
func (s *Source) Validate() error {
	err := s.validate()
	if e, ok := err.(*SourceError); ok {
		e.Source = s.ID
	}
	return err
}

func (s *Source) validate() error {
	for _, check := range []func() error{s.validateNames, s.validateTrigger, s.validateBacklog, s.validateRead} {
		if err := check(); err != nil {
			return err
		}
	}
	if d := time.Duration(s.Interval); d != 0 && d < MinInterval {
		return badSource("interval", "%v is shorter than %v", d, MinInterval)
	}
	switch s.Identifier {
	case "", IDFromCMS, IDFromURL:
	default:
		return badSource("identifier", "%q: cms or url", s.Identifier)
	}
	fp, err := s.Policy.Fetch()
	if err != nil {
		return err
	}
	return s.checkCredential(&fp)
}

// checkCredential asks the source's fetch policy whether it may send the
// source's credential header (its value is not read: only its reference
// is part of a Source): a header that is no valid name or one the chain
// sets itself, or any credential under a policy that sends none (the strict
// news crawler's), is refused here, before a Client ever sees it, with the
// *fetch.CredentialError as the *SourceError's Err.
func (s *Source) checkCredential(fp *fetch.Policy) error {
	c := s.Read.Credential
	if c == nil {
		return nil
	}
	err := fp.CheckCredential(fetch.Credential{Header: c.Header, Hosts: s.Admitted})
	var ce *fetch.CredentialError
	if errors.As(err, &ce) {
		field := "read.credential.header"
		if ce.Field == "Value" {
			field = "read.credential.value"
		}
		return &SourceError{Field: field, Reason: ce.Reason, Err: err}
	}
	return err
}

// badSource is a *SourceError for field.
func badSource(field, format string, args ...any) error {
	return &SourceError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// validateNames checks the source's id, name, admitted hosts and kept
// query parameters.
func (s *Source) validateNames() error {
	if s.ID == "" {
		return badSource("id", "required")
	}
	if len(s.ID) > 64 || strings.IndexFunc(s.ID, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return badSource("id", "%q: letters, digits, '-', '_' and '.' only, at most 64 bytes", s.ID)
	}
	if strings.TrimSpace(s.Name) == "" {
		return badSource("name", "required")
	}
	if len(s.Admitted) == 0 {
		return badSource("admitted", "required: the hosts the source may be read from")
	}
	for i, h := range s.Admitted {
		name := strings.TrimPrefix(h, "*.")
		if k, err := hostkey.Normalize(name); err != nil || k != name || strings.Contains(name, "*") {
			return badSource(fmt.Sprintf("admitted[%d]", i), "%q is not a normalised host name or *.domain", h)
		}
	}
	for i, p := range s.Params {
		if p == "" || strings.ContainsAny(p, "&=?# ") {
			return badSource(fmt.Sprintf("params[%d]", i), "%q is not a query parameter name", p)
		}
	}
	return nil
}

// checkURL checks that raw, the value of field, is an absolute https URL
// without credentials on an admitted host.
func (s *Source) checkURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return badSource(field, "%q is not an absolute URL", raw)
	}
	if u.Scheme != "https" {
		return badSource(field, "%q: https only", raw)
	}
	if u.User != nil {
		return badSource(field, "%q: no credentials in a URL", raw)
	}
	if !s.admits(u.Hostname()) {
		return badSource(field, "%q: host %s is not admitted", raw, u.Hostname())
	}
	return nil
}

// validateTrigger checks the trigger: feeds or an API call, not both.
func (s *Source) validateTrigger() error {
	t := s.Trigger
	switch {
	case len(t.Feeds) == 0 && t.API == nil:
		return badSource("trigger", "a feed or a public API call is required")
	case len(t.Feeds) > 0 && t.API != nil:
		return badSource("trigger", "feeds or api, not both")
	}
	for i, f := range t.Feeds {
		if err := s.checkURL(fmt.Sprintf("trigger.feeds[%d]", i), f); err != nil {
			return err
		}
	}
	if t.API != nil {
		if err := t.API.Validate(); err != nil {
			return badSource("trigger.api", "%v", err)
		}
		if err := s.checkURL("trigger.api.url", t.API.URL); err != nil {
			return err
		}
	}
	return nil
}

// validateBacklog checks the backlog, if any, for its kind.
func (s *Source) validateBacklog() error {
	b := s.Backlog
	if b == nil {
		return nil
	}
	switch b.Kind {
	case BacklogSitemap:
		for i, u := range b.URLs {
			if err := s.checkURL(fmt.Sprintf("backlog.urls[%d]", i), u); err != nil {
				return err
			}
		}
		if len(b.URLs) == 0 {
			return checkOrigin(s, "backlog.site", b.Site)
		}
	case BacklogWordPress:
		if err := checkOrigin(s, "backlog.site", b.Site); err != nil {
			return err
		}
		if b.PerPage < 0 || b.PerPage > 100 {
			return badSource("backlog.per_page", "%d: 0 to 100", b.PerPage)
		}
	case BacklogAPI:
		if b.API == nil {
			return badSource("backlog.api", "required for an api backlog")
		}
		if err := b.API.Validate(); err != nil {
			return badSource("backlog.api", "%v", err)
		}
		return s.checkURL("backlog.api.url", b.API.URL)
	default:
		return badSource("backlog.kind", "%q: sitemap, wordpress or api", b.Kind)
	}
	return nil
}

// validateRead checks the read method, its URL and its credential.
func (s *Source) validateRead() error {
	switch s.Read.Method {
	case "", ReadPage:
		if s.Read.URL != "" {
			return badSource("read.url", "only for an API read method")
		}
		if s.Read.Credential != nil {
			return badSource("read.credential", "only for the cms-api read method")
		}
	case ReadPublicAPI, ReadCMSAPI:
		if !strings.Contains(s.Read.URL, "{id}") {
			return badSource("read.url", "%q must hold {id}", s.Read.URL)
		}
		if err := s.checkURL("read.url", strings.ReplaceAll(s.Read.URL, "{id}", "1")); err != nil {
			return err
		}
		if s.Identifier == IDFromURL {
			return badSource("identifier", "an API read needs the CMS identifier")
		}
		c := s.Read.Credential
		if s.Read.Method == ReadPublicAPI && c != nil {
			return badSource("read.credential", "a public API takes no credential")
		}
		if s.Read.Method == ReadCMSAPI {
			if c == nil || c.Header == "" {
				return badSource("read.credential", "the cms-api read method needs a credential header")
			}
			if kind, ref, _ := strings.Cut(c.Value, ":"); (kind != "env" && kind != "file") || ref == "" {
				return badSource("read.credential.value", "must be a reference, env:NAME or file:PATH, never the secret")
			}
		}
	default:
		return badSource("read.method", "%q: page, public-api or cms-api", s.Read.Method)
	}
	return nil
}

func checkOrigin(s *Source, field, origin string) error {
	if origin == "" {
		return &SourceError{Field: field, Reason: "required"}
	}
	if err := s.checkURL(field, origin); err != nil {
		return err
	}
	if u, _ := url.Parse(origin); (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return &SourceError{Field: field, Reason: fmt.Sprintf("%q is not an origin", origin)}
	}
	return nil
}

// admits reports whether host is among the source's admitted hosts.
func (s *Source) admits(host string) bool {
	k, err := hostkey.Normalize(host)
	if err != nil {
		return false
	}
	for _, a := range s.Admitted {
		if d, ok := strings.CutPrefix(a, "*."); ok {
			if k == d || strings.HasSuffix(k, "."+d) {
				return true
			}
		} else if k == a {
			return true
		}
	}
	return false
}

// interval is the source's trigger interval.
func (s *Source) interval() time.Duration {
	if s.Interval == 0 {
		return MinInterval
	}
	return time.Duration(s.Interval)
}

// triggerURLs are the addresses the trigger reads.
func (s *Source) triggerURLs() []string {
	if s.Trigger.API != nil {
		return []string{s.Trigger.API.URL}
	}
	return s.Trigger.Feeds
}
