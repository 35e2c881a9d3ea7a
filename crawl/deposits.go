package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/politefetch/politefetch/extract"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/sharecheck"
)

// Deposit is what a crawl keeps of one article: either the article as read
// (its decoded envelope, the proof of the read, the article extracted from
// it) or, where the article may not be read in full, the story as the feed
// describes it (Excerpt). Exactly one of Envelope and Excerpt is set.
type Deposit struct {
	// Source is the source's ID.
	Source string
	// Key is the article's identifier within its source.
	Key string
	// URL is the article's address: the final URL of the read, or the
	// excerpt's link to the original.
	URL string
	// ReadAt is the instant of the read (the proof's), or when the excerpt
	// was taken.
	ReadAt time.Time
	// Digest identifies the deposit: the envelope's "sha256:<hex>" (the
	// proof's), or for an excerpt the digest of its JSON encoding. Set by
	// the Crawler; see [Deposit.Sum].
	Digest string

	// Envelope is the response body as received, its content-codings
	// removed. MediaType is its media type.
	Envelope  []byte
	MediaType string
	// Proof is the proof of fetch of Envelope.
	Proof *provenance.Proof
	// Sent is the header of the read's final request as it was written
	// (fetch.Result.Sent): Host, User-Agent, Accept, Accept-Encoding and,
	// for a CMS API read, the credential's header with the value
	// "[redacted]", never the secret. It is what a WARC request record
	// carries (provenance/warc's Deposit.RequestHeader). Nil for an
	// excerpt, and for a deposit read back from a store that does not keep
	// it: store/sqlite's Deposits do not.
	Sent http.Header
	// Article is what was extracted from Envelope; nil when nothing could
	// be extracted.
	Article *extract.Article

	// Excerpt is the story as the feed describes it, labelled, with a link
	// to the original; nil for a full deposit.
	Excerpt *feed.Excerpt

	// Image is the check of the story's share image (the one the article
	// or, failing that, the feed names): whether a story may link to it,
	// and if not why, its dimensions, the final URL to link to and the
	// credit stated. Nil when no check was made: the Crawler has no
	// Images checker, the source is not under the strict news policy, the
	// story names no image, or the pass ended before the check did. Its
	// Err is nil (Reason says why an image is not used), so a deposit is
	// plain data that every Deposits implementation keeps whole. The image
	// itself is never kept. Image takes no part in the deposit's Digest.
	Image *sharecheck.Result
}

// Sum returns the deposit's digest: the envelope's, or the excerpt's JSON
// encoding's.
func (d *Deposit) Sum() string {
	if d.Excerpt != nil && d.Envelope == nil {
		b, _ := json.Marshal(d.Excerpt)
		return provenance.DigestOf(b)
	}
	return provenance.DigestOf(d.Envelope)
}

// Deposits is where a crawl's deposits are written. Implementations must be
// safe for concurrent use and must pass crawltest.RunDeposits.
type Deposits interface {
	// Put stores d. A deposit is durable once Put returns nil. Deposits
	// are deduplicated by (Source, Digest): putting one already stored
	// changes nothing and reports added false.
	Put(ctx context.Context, d *Deposit) (added bool, err error)
	// List returns the source's deposits read at or after since, in the
	// order they were put.
	List(ctx context.Context, source string, since time.Time) ([]*Deposit, error)
	// Withdraw removes every deposit of the source and says how many
	// it removed.
	Withdraw(ctx context.Context, source string) (int, error)
}

// ErrNoDigest is returned by Put for a deposit without a digest.
var ErrNoDigest = errors.New("crawl: deposit without a digest")

// MemoryDeposits keeps deposits in memory. The zero value is ready to use;
// it is safe for concurrent use. It keeps its own copy of each deposit's
// envelope; everything is lost with the process.
type MemoryDeposits struct {
	mu   sync.Mutex
	list map[string][]*Deposit      // by source, in put order
	seen map[string]map[string]bool // by source, digests
}

var _ Deposits = (*MemoryDeposits)(nil)

// Put implements Deposits.
func (m *MemoryDeposits) Put(ctx context.Context, d *Deposit) (bool, error) {
	if d.Digest == "" {
		return false, ErrNoDigest
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.list == nil {
		m.list, m.seen = map[string][]*Deposit{}, map[string]map[string]bool{}
	}
	if m.seen[d.Source][d.Digest] {
		return false, nil
	}
	if m.seen[d.Source] == nil {
		m.seen[d.Source] = map[string]bool{}
	}
	m.seen[d.Source][d.Digest] = true
	c := *d
	c.Envelope = slices.Clone(d.Envelope)
	c.Image = cloneImage(d.Image)
	m.list[d.Source] = append(m.list[d.Source], &c)
	return true, nil
}

// List implements Deposits. The deposits returned are copies.
func (m *MemoryDeposits) List(ctx context.Context, source string, since time.Time) ([]*Deposit, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Deposit
	for _, d := range m.list[source] {
		if !d.ReadAt.Before(since) {
			c := *d
			c.Envelope = slices.Clone(d.Envelope)
			c.Image = cloneImage(d.Image)
			out = append(out, &c)
		}
	}
	return out, nil
}

// Withdraw implements Deposits.
func (m *MemoryDeposits) Withdraw(ctx context.Context, source string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.list[source])
	delete(m.list, source)
	delete(m.seen, source)
	return n, nil
}

// cloneImage returns a copy of r, its Err dropped as a store drops it.
func cloneImage(r *sharecheck.Result) *sharecheck.Result {
	if r == nil {
		return nil
	}
	c := *r
	c.Err = nil
	return &c
}
