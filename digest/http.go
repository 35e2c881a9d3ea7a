package digest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/politefetch/politefetch/extract"
)

// Defaults of an [HTTP] summarizer's zero fields.
const (
	DefaultHTTPTimeout      = 30 * time.Second
	DefaultMaxRequestChars  = 20000   // characters of body text sent
	DefaultMaxResponseBytes = 1 << 16 // 64 KiB read of the answer
)

// HTTP is a [Summarizer] that asks a service of the user's, such as a
// language model behind an HTTP endpoint. It POSTs one JSON object per
// article,
//
//	{"url": "…", "headline": "…", "language": "en", "text": "…"}
//
// (text being the body, at most MaxRequestChars characters of it) with
// Content-Type application/json, and expects a 200 answer of
//
//	{"summary": "…"}
//
// or {"sentences": ["…", "…"]}. The answer is read up to
// MaxResponseBytes and then bounded like every summary ([Bound]): at most
// two sentences and MaxChars characters. A status other than 200 is an
// [*HTTPError]; an answer that does not parse or says nothing is
// [ErrBadAnswer].
//
// The endpoint is the user's own service, not a publisher's: HTTP sends
// nothing through politefetch's fetch chain and takes nothing from the
// article's publisher.
//
// Set URL; the zero value of every other field works. Safe for concurrent
// use if Client is.
type HTTP struct {
	// URL is the endpoint. Required.
	URL string
	// Client sends the request. Nil: a client whose Timeout is
	// DefaultHTTPTimeout.
	Client *http.Client
	// Header is added to each request (say, an Authorization header).
	Header http.Header
	// MaxRequestChars bounds the text sent. 0: DefaultMaxRequestChars.
	MaxRequestChars int
	// MaxResponseBytes bounds the answer read. 0: DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// MaxChars is the fair-use bound of the summary. 0: DefaultMaxChars.
	MaxChars int
}

var _ Summarizer = (*HTTP)(nil)

// Errors of the HTTP summarizer.
var (
	ErrNoEndpoint = errors.New("digest: HTTP summarizer without a URL")
	ErrBadAnswer  = errors.New("digest: summarizer's answer unreadable or empty")
)

// HTTPError is a summarizing service's answer other than 200.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("digest: summarizer %s answered %d", e.URL, e.Status)
}

type httpRequest struct {
	URL      string `json:"url"`
	Headline string `json:"headline"`
	Language string `json:"language,omitempty"`
	Text     string `json:"text"`
}

type httpAnswer struct {
	Summary   string   `json:"summary"`
	Sentences []string `json:"sentences"`
}

// Summarize implements [Summarizer].
func (h *HTTP) Summarize(ctx context.Context, a *extract.Article) (Summary, error) {
	if h.URL == "" {
		return Summary{}, ErrNoEndpoint
	}
	text := a.Text()
	if text == "" {
		return Summary{}, ErrNoText
	}
	maxIn := h.MaxRequestChars
	if maxIn <= 0 {
		maxIn = DefaultMaxRequestChars
	}
	if utf8.RuneCountInString(text) > maxIn {
		text = string([]rune(text)[:maxIn])
	}
	body, err := json.Marshal(httpRequest{URL: a.Canonical.Value, Headline: a.Headline.Value, Language: a.Language.Value, Text: text})
	if err != nil {
		return Summary{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return Summary{}, fmt.Errorf("digest: summarizer: %w", err)
	}
	for k, vs := range h.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	c := h.Client
	if c == nil {
		c = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	resp, err := c.Do(req)
	if err != nil {
		return Summary{}, fmt.Errorf("digest: summarizer: %w", err)
	}
	defer resp.Body.Close()
	limit := h.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, limit))
		return Summary{}, &HTTPError{URL: h.URL, Status: resp.StatusCode}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return Summary{}, fmt.Errorf("digest: summarizer: %w", err)
	}
	if int64(len(raw)) > limit {
		return Summary{}, fmt.Errorf("%w: over %d bytes", ErrBadAnswer, limit)
	}
	var ans httpAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return Summary{}, fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	// Each sentence given is split again, so that one string holding
	// several still counts as several.
	var sents []string
	for _, s := range append(ans.Sentences, ans.Summary) {
		sents = append(sents, Sentences(s)...)
	}
	out := Bound(sents, h.MaxChars)
	if len(out) == 0 {
		return Summary{}, ErrBadAnswer
	}
	return Summary{Sentences: out, By: "http"}, nil
}
