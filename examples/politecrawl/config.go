package main

// The configuration file: YAML, read strictly. Every key is known or the
// file is refused with its line; every value is checked where it is read;
// every source is checked by crawl's own validation, its errors placed at
// the line of the key at fault. The reference is docs/config.md.

import (
	"encoding"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// maxConfigBytes bounds a configuration file.
const maxConfigBytes = 4 << 20

// Config is a politecrawl configuration file: who is crawling, under which
// policy, where state is kept, and the sources.
type Config struct {
	// Crawler is the crawler's identity, sent in every User-Agent.
	Crawler Identity `json:"crawler"`
	// Policy is the fetch policy every source is read under.
	Policy PolicyConfig `json:"policy"`
	// Crawl tunes the crawler's schedule.
	Crawl CrawlSettings `json:"crawl"`
	// Store says where state and deposits are kept.
	Store StoreConfig `json:"store"`
	// Outputs are files written as the crawl deposits.
	Outputs Outputs `json:"outputs"`
	// Sources are the sources to crawl (crawl.Source, key for key).
	Sources []crawl.Source `json:"sources"`

	path string     // the file read
	root *yaml.Node // its document, for the lines of later errors
}

// Identity names the crawler: User-Agent "Name/Version (+InfoURL; Contact)".
type Identity struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	InfoURL string `json:"info_url"`
	Contact string `json:"contact"`
}

// PolicyConfig is a preset by name plus overrides. An override may only
// make the crawl more polite than the preset; restating the preset's value
// is allowed, so a ready config can show each setting of its document.
type PolicyConfig struct {
	Preset       crawl.Preset   `json:"preset"`
	Interval     crawl.Duration `json:"interval"`      // least per-host interval; longer only
	IntervalMax  crawl.Duration `json:"interval_max"`  // top of a random interval band; not below the preset's
	RobotsTTL    crawl.Duration `json:"robots_ttl"`    // robots.txt cache lifetime; shorter only
	RobotsRetry  crawl.Duration `json:"robots_retry"`  // wait before re-reading a failed robots.txt; longer only
	MaxRedirects int            `json:"max_redirects"` // redirects followed; fewer only
	Timeout      crawl.Duration `json:"timeout"`       // one read, end to end; shorter only
	MaxBytes     int64          `json:"max_bytes"`     // bytes read from the wire per body; fewer only
}

// CrawlSettings tune the crawler's schedule.
type CrawlSettings struct {
	BacklogInterval crawl.Duration `json:"backlog_interval"` // 0: 24h; at least 1h
	RefreshGuard    crawl.Duration `json:"refresh_guard"`    // 0: 5m; at least 1m
	MaxReads        int            `json:"max_reads"`        // 0: 3; 1 to 3
	MaxFailures     int            `json:"max_failures"`     // 0: 10; 1 to 10
	// ShareImages is "check" (""): each strict news story's share image is
	// downloaded once to check it (S7); or "skip": no share image is
	// downloaded, and no deposit carries one, for a crawl whose readers are
	// shown no image.
	ShareImages string `json:"share_images"`
}

// StoreConfig says where state is kept.
type StoreConfig struct {
	// Path is the SQLite file, relative to the config's folder. "": the
	// config's name with ".db" beside it. It holds the deposits, and the
	// state too unless Redis is set.
	Path string `json:"path"`
	// SyncDeposits, when true, syncs each deposit to disk before it counts
	// as made, so it survives a power failure as well as a killed process
	// (sqlite.Options.SyncDeposits). False: a deposit survives the
	// process being killed; a power failure may take the file back to an
	// earlier commit, deposits and the crawl state that recorded them
	// together.
	SyncDeposits bool `json:"sync_deposits"`
	// Schedule is how a command that fetches paces through the SQLite
	// file: "held" (""), the file's schedule held by this process
	// (sqlite.DB.HoldSchedule), decided in memory with nothing written per
	// request, and any other process that would fetch through the file
	// refused until this one ends; "shared", every request's claim decided
	// in the file (sqlite.DB.Schedule), for processes that crawl from one
	// file side by side. Ignored with Redis, which holds the schedule.
	Schedule string `json:"schedule"`
	// Redis, when set, holds the state (schedule, ledger, robots.txt
	// records, validators, crawl state) that several workers share. Nil:
	// all of it is in the SQLite file.
	Redis *RedisConfig `json:"redis"`
}

// Outputs are files the crawl writes as it deposits.
type Outputs struct {
	// JSONL, when set, has each new deposit appended as one JSON line
	// (relative to the config's folder).
	JSONL string `json:"jsonl"`
	// WARC, when set, has each new full deposit appended to a WARC 1.1
	// file (gzip per record; relative to the config's folder).
	WARC string `json:"warc"`
}

// ErrConfig is matched (errors.Is) by every *ConfigError.
var ErrConfig = errors.New("invalid configuration")

// ConfigError is a configuration that cannot be used: the file, the line
// and key at fault, and why.
type ConfigError struct {
	File   string
	Line   int    // 0: the file as a whole
	Key    string // "sources[1].trigger.feeds[0]"; "": the file
	Reason string
	Err    error // the cause, when another package judged (fetch.ErrLessPolite); nil: none
}

func (e *ConfigError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return loc + ": " + e.Key + ": " + e.Reason
	}
	return loc + ": " + e.Reason
}

// Is matches ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// Unwrap returns the cause, or nil.
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads and checks the configuration at path.
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if len(b) > maxConfigBytes {
		return nil, &ConfigError{File: path, Reason: fmt.Sprintf("larger than %d bytes", maxConfigBytes)}
	}
	return ParseConfig(path, b)
}

// ParseConfig parses and checks a configuration; name is the file it came
// from, for errors and for the paths relative to it.
func ParseConfig(name string, data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, &ConfigError{File: name, Reason: strings.TrimPrefix(err.Error(), "yaml: ")}
		}
		return nil, syntaxError(name, data, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &ConfigError{File: name, Reason: "empty configuration"}
	}
	c := &Config{path: name, root: doc.Content[0]}
	d := decoder{file: name}
	if err := d.decode(c.root, reflect.ValueOf(c).Elem(), ""); err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// Path returns the file the configuration was read from.
func (c *Config) Path() string { return c.path }

// StorePath returns the SQLite file: store.path relative to the config's
// folder, or the config's name with ".db" beside it.
func (c *Config) StorePath() string {
	if c.Store.Path != "" {
		return c.rel(c.Store.Path)
	}
	base := strings.TrimSuffix(c.path, filepath.Ext(c.path))
	return base + ".db"
}

// storeLine says where state and deposits are kept, for sources check.
func (c *Config) storeLine() string {
	_, sec, ok := c.Store.stateSection()
	if !ok {
		return c.StorePath()
	}
	return c.StorePath() + " (deposits), state shared in " + sec.where()
}

// JSONLPath returns outputs.jsonl relative to the config's folder, or "".
func (c *Config) JSONLPath() string {
	if c.Outputs.JSONL == "" {
		return ""
	}
	return c.rel(c.Outputs.JSONL)
}

// WARCPath returns outputs.warc relative to the config's folder, or "".
func (c *Config) WARCPath() string {
	if c.Outputs.WARC == "" {
		return ""
	}
	return c.rel(c.Outputs.WARC)
}

func (c *Config) rel(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(c.path), p)
}

// errAt is a ConfigError at key, placed at the line of the deepest part of
// key found in the document.
func (c *Config) errAt(key, format string, args ...any) error {
	return &ConfigError{File: c.path, Line: lineOf(c.root, key), Key: key, Reason: fmt.Sprintf(format, args...)}
}

// check validates what the decoder could not: identity, policy overrides,
// schedule settings and every source (crawl's validation).
func (c *Config) check() error {
	id := c.Crawler
	switch {
	case id.Name == "":
		return c.errAt("crawler.name", "required: the crawler's product token (a preset is a policy, never an identity)")
	case id.Version == "":
		return c.errAt("crawler.version", "required")
	case id.InfoURL == "":
		return c.errAt("crawler.info_url", "required: the page that explains the crawler to publishers")
	}
	if !strings.HasPrefix(id.InfoURL, "https://") && !strings.HasPrefix(id.InfoURL, "http://") {
		return c.errAt("crawler.info_url", "%q is not a URL", id.InfoURL)
	}
	if c.Policy.Preset == "" {
		return c.errAt("policy.preset", "required: strict-news, digest or vault")
	}
	if _, err := c.FetchPolicy(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return err
		}
		var ie *fetch.IdentityError
		if errors.As(err, &ie) {
			// The first field at fault: a missing one, else an invalid one.
			keys := map[string]string{"Name": "name", "Version": "version", "InfoURL": "info_url", "Contact": "contact"}
			if len(ie.Missing) > 0 {
				return c.errAt("crawler."+keys[ie.Missing[0]], "required by the %s policy", c.Policy.Preset)
			}
			if len(ie.Invalid) > 0 {
				return c.errAt("crawler."+keys[ie.Invalid[0]], "cannot go in a User-Agent (no spaces, '/', '(' or ')')")
			}
		}
		return c.errAt("policy", "%v", err)
	}
	cs := c.Crawl
	// The crawler judges its own limits (crawl.Crawler.CheckLimits): the
	// CLI only places the refusal at its key.
	lim := crawl.Crawler{BacklogInterval: time.Duration(cs.BacklogInterval), RefreshGuard: time.Duration(cs.RefreshGuard),
		MaxReads: cs.MaxReads, MaxFailures: cs.MaxFailures}
	if err := lim.CheckLimits(); err != nil {
		var le *crawl.LimitError
		if !errors.As(err, &le) {
			return c.errAt("crawl", "%v", err)
		}
		key := map[string]string{"BacklogInterval": "crawl.backlog_interval", "RefreshGuard": "crawl.refresh_guard",
			"MaxReads": "crawl.max_reads", "MaxFailures": "crawl.max_failures"}[le.Field]
		if key == "" {
			key = "crawl"
		}
		return &ConfigError{File: c.path, Line: lineOf(c.root, key), Key: key, Reason: le.Reason, Err: err}
	}
	if cs.ShareImages != "" && cs.ShareImages != "check" && cs.ShareImages != "skip" {
		return c.errAt("crawl.share_images", "%q: check or skip", cs.ShareImages)
	}
	if err := c.checkStore(); err != nil {
		return err
	}
	if len(c.Sources) == 0 {
		return c.errAt("sources", "at least one source is required")
	}
	seen := map[string]int{}
	for i := range c.Sources {
		s := &c.Sources[i]
		key := fmt.Sprintf("sources[%d]", i)
		if cr := s.Read.Credential; cr != nil {
			kind, ref, _ := strings.Cut(cr.Value, ":")
			if (kind != "env" && kind != "file") || ref == "" {
				// Never echo the value: it may be the secret itself.
				return c.errAt(key+".read.credential.value", "an inline credential is refused: give a reference, env:NAME or file:PATH")
			}
			if kind == "file" {
				cr.Value = "file:" + c.rel(ref) // like every path of the file, relative to its folder
			}
		}
		switch {
		case s.Policy.Preset == "":
			s.Policy = crawl.PolicySpec{Preset: c.Policy.Preset, Interval: c.Policy.Interval}
		case s.Policy.Preset != c.Policy.Preset:
			return c.errAt(key+".policy.preset", "%q differs from the config's %q: one client reads every source; put sources of another policy in a config of their own", s.Policy.Preset, c.Policy.Preset)
		case s.Policy.Interval != 0 && s.Policy.Interval != c.Policy.Interval:
			return c.errAt(key+".policy.interval", "one client paces every source: set the interval in the config's policy")
		default:
			s.Policy.Interval = c.Policy.Interval
		}
		if err := s.Validate(); err != nil {
			var se *crawl.SourceError
			if errors.As(err, &se) {
				return c.errAt(key+"."+se.Field, "%s", se.Reason)
			}
			return c.errAt(key, "%v", err)
		}
		if j, dup := seen[s.ID]; dup {
			return c.errAt(key+".id", "%q is also the id of sources[%d]", s.ID, j)
		}
		seen[s.ID] = i
	}
	return nil
}

// checkStore validates the store's sections: at most one state backend
// (the table backends), checked by its own rules.
func (c *Config) checkStore() error {
	if sc := c.Store.Schedule; sc != "" && sc != "held" && sc != "shared" {
		return c.errAt("store.schedule", "%q: held or shared", sc)
	}
	var set []string
	for _, b := range backends {
		if _, ok := b.section(&c.Store); ok {
			set = append(set, "store."+b.key)
		}
	}
	if len(set) > 1 {
		return c.errAt(set[1], "%s is also set: the state is kept in one backend", set[0])
	}
	if key, sec, ok := c.Store.stateSection(); ok {
		return sec.check(c, key)
	}
	return nil
}

// overrideKeys are the policy keys of the configuration, by the
// fetch.Overrides field each sets.
var overrideKeys = map[string]string{
	"Interval":     "policy.interval",
	"IntervalMax":  "policy.interval_max",
	"RobotsTTL":    "policy.robots_ttl",
	"RobotsRetry":  "policy.robots_retry",
	"MaxRedirects": "policy.max_redirects",
	"Timeout":      "policy.timeout",
	"MaxWire":      "policy.max_bytes",
}

// FetchPolicy returns the fetch policy the config names: its preset with
// the crawler's identity, and the overrides applied by fetch.Policy.Tighten,
// which alone judges that each is no less polite than the preset. A refused
// override is a *ConfigError at its key that matches fetch.ErrLessPolite.
func (c *Config) FetchPolicy() (fetch.Policy, error) {
	pc := c.Policy
	fp, err := crawl.PolicySpec{Preset: pc.Preset}.Fetch()
	if err != nil {
		var se *crawl.SourceError
		if errors.As(err, &se) {
			return fp, c.errAt(se.Field, "%s", se.Reason)
		}
		return fp, err
	}
	fp.Name, fp.Version, fp.InfoURL, fp.Contact = c.Crawler.Name, c.Crawler.Version, c.Crawler.InfoURL, c.Crawler.Contact
	fp, err = fp.Tighten(fetch.Overrides{
		Interval:     time.Duration(pc.Interval),
		IntervalMax:  time.Duration(pc.IntervalMax),
		RobotsTTL:    time.Duration(pc.RobotsTTL),
		RobotsRetry:  time.Duration(pc.RobotsRetry),
		MaxRedirects: pc.MaxRedirects,
		Timeout:      time.Duration(pc.Timeout),
		MaxWire:      pc.MaxBytes,
	})
	if err != nil {
		var oe *fetch.OverrideError
		if !errors.As(err, &oe) {
			return fp, err
		}
		key := overrideKeys[oe.Field]
		if key == "" {
			key = "policy"
		}
		// fetch's own words for the rule, then why, with the preset's bound.
		rule := strings.TrimPrefix(fetch.ErrLessPolite.Error(), "fetch: ")
		return fp, &ConfigError{File: c.path, Line: lineOf(c.root, key), Key: key,
			Reason: fmt.Sprintf("%s: %s (the %s preset)", rule, oe.Reason, pc.Preset), Err: err}
	}
	if c.root != nil { // identity errors are the caller's to place
		fc, err := fetch.New(fp)
		if err != nil {
			return fp, err
		}
		fc.Close()
	}
	return fp, nil
}

// lineOf returns the line of the deepest node of key ("a.b[2].c") found
// under root, or root's.
func lineOf(root *yaml.Node, key string) int {
	n := root
	if n == nil {
		return 0
	}
	line := n.Line
	for _, part := range splitKey(key) {
		var next *yaml.Node
		switch {
		case part.index >= 0 && n.Kind == yaml.SequenceNode && part.index < len(n.Content):
			next = n.Content[part.index]
		case part.index < 0 && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part.name {
					line = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
		}
		if next == nil {
			return line
		}
		n = next
		line = n.Line
	}
	return line
}

type keyPart struct {
	name  string
	index int // -1: a mapping key
}

func splitKey(key string) []keyPart {
	var parts []keyPart
	for _, seg := range strings.Split(key, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if name != "" {
			parts = append(parts, keyPart{name: name, index: -1})
		}
		for rest != "" {
			num, after, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if err != nil {
				break
			}
			parts = append(parts, keyPart{index: i})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return parts
}

// decoder fills Go values from YAML nodes, by the json tags of their
// fields (the names crawl's types document), refusing unknown and repeated
// keys, anchors and aliases, and values of the wrong kind, each with its
// line.
type decoder struct{ file string }

func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) error {
	return &ConfigError{File: d.file, Line: n.Line, Key: key, Reason: fmt.Sprintf(format, args...)}
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

func (d *decoder) decode(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return d.fail(n, key, "anchors and aliases are not supported")
	}
	isNull := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	if v.Kind() == reflect.Pointer {
		if isNull {
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.decode(n, v.Elem(), key)
	}
	if isNull {
		return nil // the zero value
	}
	if v.CanAddr() && v.Addr().Type().Implements(textUnmarshaler) {
		if n.Kind != yaml.ScalarNode {
			return d.fail(n, key, "a single value is expected")
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			return d.fail(n, key, "%q: %v", n.Value, err)
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return d.fail(n, key, "a mapping of keys is expected")
		}
		fields := fieldsOf(v.Type())
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			sub := k.Value
			if key != "" {
				sub = key + "." + k.Value
			}
			idx, ok := fields[k.Value]
			if !ok {
				return d.fail(k, sub, "unknown key (known here: %s)", strings.Join(sortedKeys(fields), ", "))
			}
			if seen[k.Value] {
				return d.fail(k, sub, "given twice")
			}
			seen[k.Value] = true
			if err := d.decode(val, v.FieldByIndex(idx), sub); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.fail(n, key, "a list is expected")
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := d.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.fail(n, key, "a single value is expected")
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Tag != "!!bool" {
			return d.fail(n, key, "%q: true or false is expected", n.Value)
		}
		v.SetBool(n.Value == "true" || n.Value == "True" || n.Value == "TRUE")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil || n.Tag != "!!int" || v.OverflowInt(i) {
			return d.fail(n, key, "%q: a whole number is expected", n.Value)
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return d.fail(n, key, "%q: a number is expected", n.Value)
		}
		v.SetFloat(f)
	default:
		return d.fail(n, key, "values of type %s are not supported", v.Type())
	}
	return nil
}

// fieldsOf maps a struct's keys (json tag names; untagged exported fields by
// their lower-case name) to their field indexes. The map is made once per
// type (a configuration decodes the same few types for every source) and
// must not be changed.
func fieldsOf(t reflect.Type) map[string][]int {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string][]int)
	}
	m := fieldsOfType(t)
	fieldCache.Store(t, m)
	return m
}

// fieldCache holds fieldsOf's maps: reflect.Type → map[string][]int.
var fieldCache sync.Map

func fieldsOfType(t reflect.Type) map[string][]int {
	m := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f.Index
	}
	return m
}

func sortedKeys(m map[string][]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
