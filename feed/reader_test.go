package feed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// itemView is an Item as golden files show it.
type itemView struct {
	ID          string   `json:"id,omitempty"`
	GUID        string   `json:"guid,omitempty"`
	Link        string   `json:"link,omitempty"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Published   string   `json:"published,omitempty"`
	Updated     string   `json:"updated,omitempty"`
	Authors     []Author `json:"authors,omitempty"`
	Categories  []string `json:"categories,omitempty"`
	Language    string   `json:"language,omitempty"`
	Image       string   `json:"image,omitempty"`
}

type feedView struct {
	Format    string     `json:"format,omitempty"`
	Version   string     `json:"version,omitempty"`
	Title     string     `json:"title,omitempty"`
	Link      string     `json:"link,omitempty"`
	Language  string     `json:"language,omitempty"`
	Truncated bool       `json:"truncated,omitempty"`
	Items     []itemView `json:"items,omitempty"`
	Error     string     `json:"error,omitempty"`
	Is        []string   `json:"is,omitempty"`
}

func viewFeed(s *testSite, res *Result, err error) feedView {
	var v feedView
	if err != nil {
		v.Error = s.unhost(err.Error())
		for _, e := range []error{ErrNotFeed, ErrMalformed, ErrTooLarge, ErrStatus} {
			if errors.Is(err, e) {
				v.Is = append(v.Is, e.Error())
			}
		}
		return v
	}
	f := res.Feed
	v.Format, v.Version, v.Title, v.Link, v.Language, v.Truncated = f.Format, f.Version, f.Title, s.unhost(f.Link), f.Language, res.Truncated
	for _, it := range f.Items {
		v.Items = append(v.Items, itemView{
			ID: it.ID, GUID: it.GUID, Link: s.unhost(it.Link), Title: it.Title, Description: it.Description,
			Published: stamp(it.Published), Updated: stamp(it.Updated), Authors: it.Authors,
			Categories: it.Categories, Language: it.Language, Image: s.unhost(it.Image),
		})
	}
	return v
}

// TestRead_Golden reads every feed flavour over TLS and compares the
// normalised result with its golden file: identifiers with the CMS id read
// from the guid (V3), absolute links without tracking parameters (V10),
// dates copied and never invented, the share image the feed names; broken
// and hostile feeds give clear errors. The ".refs" cases are trigger mode
// (V1): nothing of the feed's content is kept.
func TestRead_Golden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, ctype string
		refsOnly    bool
		keep        []string
	}{
		{"rss091.xml", "application/rss+xml", false, nil},
		{"rss092.xml", "application/rss+xml", false, []string{"id"}},
		{"rss092_latin1.xml", "application/rss+xml", false, nil},
		{"rss20.xml", "application/rss+xml; charset=utf-8", false, nil},
		{"rss20.xml", "application/rss+xml", true, nil},
		{"atom10.xml", "application/atom+xml", false, nil},
		{"atom10.xml", "application/atom+xml", true, nil},
		{"jsonfeed.json", "application/feed+json", false, nil},
		{"broken_truncated.xml", "application/rss+xml", false, nil},
		{"broken_challenge.html", "text/html", false, nil},
		{"hostile_entities.xml", "application/rss+xml", false, nil},
		{"hostile_utf8.xml", "application/rss+xml", false, nil},
		{"hostile_schemes.xml", "application/rss+xml", false, nil},
		{"hostile_json.json", "application/feed+json", false, nil},
	}
	for _, tt := range tests {
		name := tt.file
		if tt.refsOnly {
			name += ".refs"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newTestSite(t)
			s.file("/feed", "feeds/"+tt.file, tt.ctype, false)
			r := &Reader{Client: s.client(), RefsOnly: tt.refsOnly, Keep: tt.keep}
			res, err := r.Read(context.Background(), s.url("/feed"))
			golden(t, "feeds/"+name+".golden", mustJSON(viewFeed(s, res, err)))
		})
	}
}

// TestRead_D4_ConditionalGetIsTheClients proves that conditional GET is the
// Doer's, not the Reader's: through a plain client no read carries a
// validator and every read is parsed; through a Doer that sends validators
// (as the fetch chain does, proven end to end in chain_test.go) a 304 comes
// back as NotModified and costs no parse, and a changed feed is parsed again.
func TestRead_D4_ConditionalGetIsTheClients(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		validating  bool
		wantParses  []int32 // after each of three reads (the feed changes before the third)
		wantNotMod  []bool
		wantINMSent bool
	}{
		{"plain client", false, []int32{1, 2, 3}, []bool{false, false, false}, false},
		{"validating client", true, []int32{1, 1, 2}, []bool{false, true, false}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestSite(t)
			var version atomic.Int32
			version.Store(1)
			s.mux.HandleFunc("/feed.xml", func(w http.ResponseWriter, r *http.Request) {
				etag := fmt.Sprintf(`"v%d"`, version.Load())
				if r.Header.Get("If-None-Match") == etag {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.Header().Set("ETag", etag)
				w.Header().Set("Last-Modified", "Mon, 30 Nov 2026 08:00:00 GMT")
				w.Header().Set("Content-Type", "application/rss+xml")
				w.Write([]byte(`<rss version="2.0"><channel><title>t</title><item><guid>g1</guid><link>https://example.test/1</link></item></channel></rss>`))
			})
			var c Doer = s.client()
			if tt.validating {
				c = &validatingDoer{c: c, etags: map[string]string{}}
			}
			var parses atomic.Int32
			r := &Reader{Client: c, OnParse: func(string) { parses.Add(1) }}
			for i := range 3 {
				if i == 2 {
					version.Store(2)
				}
				res, err := r.Read(context.Background(), s.url("/feed.xml"))
				if err != nil {
					t.Fatal(err)
				}
				if res.NotModified != tt.wantNotMod[i] || (res.Feed == nil) != res.NotModified || parses.Load() != tt.wantParses[i] {
					t.Errorf("read %d: NotModified %v, feed %v, parses %d; want NotModified %v, parses %d",
						i+1, res.NotModified, res.Feed != nil, parses.Load(), tt.wantNotMod[i], tt.wantParses[i])
				}
				if res.Header.Get("ETag") == "" && !res.NotModified {
					t.Errorf("read %d: Result.Header lacks the ETag", i+1)
				}
			}
			for i, req := range s.reqs {
				if ims := req.Header.Get("If-Modified-Since"); ims != "" {
					t.Errorf("request %d sent If-Modified-Since %q: the Reader adds no validators", i+1, ims)
				}
				if inm := req.Header.Get("If-None-Match"); (inm != "") != (tt.wantINMSent && i > 0) {
					t.Errorf("request %d sent If-None-Match %q", i+1, inm)
				}
			}
		})
	}
}

// TestRead_Errors: refusals come back as typed errors and every bound
// holds, whatever the Doer delivers.
func TestRead_Errors(t *testing.T) {
	t.Parallel()
	s := newTestSite(t)
	s.mux.HandleFunc("/429", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	s.mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<rss version=\"2.0\"><channel><title>" + strings.Repeat("x", 4096) + "</title></channel></rss>"))
	})
	// The Doer removes the content-coding; the Reader still bounds what it
	// reads of the result.
	bomb := gzipBytes([]byte("<rss version=\"2.0\"><channel><title>" + strings.Repeat("x", 1<<20)))
	s.mux.HandleFunc("/bomb.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	})
	tests := []struct {
		name  string
		r     Reader
		path  string
		want  error
		check func(t *testing.T, err error)
	}{
		{"429", Reader{Client: s.client()}, "/429", ErrStatus, func(t *testing.T, err error) {
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != 429 || se.RetryAfter != "120" {
				t.Errorf("err = %v, want *StatusError 429 with Retry-After 120", err)
			}
		}},
		{"oversize", Reader{Client: s.client(), MaxBytes: 1024}, "/big", ErrTooLarge, nil},
		{"gzip bomb", Reader{Client: s.client(), MaxBytes: 64 << 10}, "/bomb.xml", ErrTooLarge, nil},
		{"no client", Reader{}, "/big", ErrNoClient, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.r.Read(context.Background(), s.url(tt.path))
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

// TestRead_MaxItems: the item count is bounded and the truncation reported.
func TestRead_MaxItems(t *testing.T) {
	t.Parallel()
	s := newTestSite(t)
	s.mux.HandleFunc("/feed", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<rss version="2.0"><channel><title>many</title>`)
		for range 50 {
			b.WriteString(`<item><title>i</title></item>`)
		}
		b.WriteString(`</channel></rss>`)
		w.Write([]byte(b.String()))
	})
	tests := []struct {
		max       int
		wantItems int
		wantTrunc bool
	}{
		{10, 10, true},
		{50, 50, false},
		{0, 50, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("max=", tt.max), func(t *testing.T) {
			t.Parallel()
			res, err := (&Reader{Client: s.client(), MaxItems: tt.max}).Read(context.Background(), s.url("/feed"))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Feed.Items); got != tt.wantItems || res.Truncated != tt.wantTrunc {
				t.Errorf("%d items, truncated %v; want %d, %v", got, res.Truncated, tt.wantItems, tt.wantTrunc)
			}
		})
	}
}
