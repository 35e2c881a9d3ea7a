package main

// Deposits as JSON Lines: one deposit a line, its article with each
// metadata field's source, or the feed's excerpt, and its proof. The
// envelope itself is not repeated (its digest and length are): export
// -format warc carries the bytes.

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/provenance/warc"
)

// depositLine is one deposit as a JSON line.
type depositLine struct {
	Schema    string            `json:"schema"` // jsonlSchema
	Source    string            `json:"source"`
	Key       string            `json:"key"`
	URL       string            `json:"url"`
	ReadAt    time.Time         `json:"read_at"`
	Digest    string            `json:"digest"`
	Kind      string            `json:"kind"` // "article" or "excerpt"
	MediaType string            `json:"media_type,omitempty"`
	Length    int               `json:"length,omitempty"` // the envelope's bytes
	Article   *articleLine      `json:"article,omitempty"`
	Excerpt   *excerptLine      `json:"excerpt,omitempty"`
	Proof     *provenance.Proof `json:"proof,omitempty"`
}

func depositLineOf(d *crawl.Deposit) depositLine {
	l := depositLine{Schema: jsonlSchema, Source: d.Source, Key: d.Key, URL: d.URL, ReadAt: d.ReadAt.UTC(), Digest: d.Digest,
		Kind: "article", MediaType: d.MediaType, Length: len(d.Envelope), Article: articleLineOf(d.Article), Excerpt: excerptLineOf(d.Excerpt), Proof: d.Proof}
	if d.Envelope == nil && d.Excerpt != nil {
		l.Kind = "excerpt"
	}
	return l
}

// jsonlOutput appends every new deposit to a file as it is put, after the
// store has it.
type jsonlOutput struct {
	crawl.Deposits
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
}

func openJSONLOutput(path string, next crawl.Deposits) (*jsonlOutput, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &jsonlOutput{Deposits: next, f: f, w: bufio.NewWriter(f)}, nil
}

func (j *jsonlOutput) Put(ctx context.Context, d *crawl.Deposit) (bool, error) {
	added, err := j.Deposits.Put(ctx, d)
	if err != nil || !added {
		return added, err
	}
	b, err := json.Marshal(depositLineOf(d))
	if err != nil {
		return added, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.w.Write(append(b, '\n'))
	return added, j.w.Flush()
}

func (j *jsonlOutput) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.w.Flush()
	return j.f.Close()
}

// warcDeposit is a full deposit as provenance/warc archives it: a 200 read
// over HTTP, the envelope with its media type, and its proof.
func warcDeposit(d *crawl.Deposit) warc.Deposit {
	h := http.Header{}
	if d.MediaType != "" {
		h.Set("Content-Type", d.MediaType)
	}
	return warc.Deposit{Proof: d.Proof, Envelope: d.Envelope, RequestHeader: d.Sent, ResponseHeader: h, Status: http.StatusOK}
}

// warcOutput appends every new full deposit to a .warc.gz file as it is
// put (each record its own gzip member, so a file appended to by several
// runs stays one valid WARC file). Excerpts are not reads: they have no
// proof and are not archived.
type warcOutput struct {
	crawl.Deposits
	mu sync.Mutex
	f  *os.File
	ww *warc.Writer
}

func openWARCOutput(path string, next crawl.Deposits) (*warcOutput, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &warcOutput{Deposits: next, f: f, ww: &warc.Writer{W: f, Gzip: true}}, nil
}

func (o *warcOutput) Put(ctx context.Context, d *crawl.Deposit) (bool, error) {
	added, err := o.Deposits.Put(ctx, d)
	if err != nil || !added || d.Proof == nil || d.Envelope == nil {
		return added, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return added, o.ww.Write(warcDeposit(d))
}

func (o *warcOutput) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.f.Close()
}
