package sharecheck

import (
	"container/list"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/sniff"
)

// Clock is the time a Checker reads to expire its answers. Nil means real
// time.
type Clock = clock.Clock

// Defaults for the zero fields of a [Checker].
const (
	// DefaultMaxBytes caps an image's body: a share image is a preview,
	// and a larger one is not used.
	DefaultMaxBytes = 8 << 20
	// DefaultCacheSize is how many image URLs a Checker remembers.
	DefaultCacheSize = 4096
	// MaxRedirects is the most redirects an image may take to be used,
	// whatever the Client's policy follows.
	MaxRedirects = 3
	// DefaultMaxAge is how long a Checker remembers an answer that says
	// something about the image itself (usable, not an image, too large).
	DefaultMaxAge = 24 * time.Hour
	// DefaultRecheck is how long a Checker remembers an answer that may
	// change soon (refused, unreachable, a 5xx or 429, a truncated body)
	// when the refusal names no end of its own.
	DefaultRecheck = 10 * time.Minute
)

// Image is a share image to check, as a story names it.
type Image struct {
	// URL is the image's address, absolute or relative to Page.
	URL string
	// Page is the article page that names the image, sent as the Referer.
	Page string
	// Credit is the image's credit as the page or feed states it (a
	// photographer, an agency); "" when none is stated. It is passed
	// through to the Result.
	Credit string
}

// Result is the answer for one image. It is plain data, to be kept with the
// story: its JSON form names the reason in words ("not an image") and
// leaves out Err, whose Reason field it keeps.
type Result struct {
	// URL is the image URL checked, absolute.
	URL string
	// FinalURL is the URL to link to: the image's address after redirects;
	// "" when nothing was read.
	FinalURL string
	// MediaType is the format the bytes show ("image/jpeg", "image/png",
	// "image/webp" or "image/gif"); "" when they show none of them.
	MediaType string
	// Width and Height are the image's dimensions in pixels; 0 when unknown.
	Width, Height int
	// Bytes is the size of the body read; 0 when none was.
	Bytes int64
	// Credit is the Image's Credit.
	Credit string
	// Reason is why the image is not used; zero when it is usable.
	Reason Reason `json:",omitzero"`
	// Err is nil when the image is usable, else an *UnusableError saying
	// why, with the cause.
	Err error `json:"-"`
}

// Usable reports whether the story may use the image: no Reason and no Err.
func (r *Result) Usable() bool { return r.Err == nil && r.Reason == 0 }

// unusable returns r not usable for reason, with err's cause.
func (r Result) unusable(reason Reason, status int, cause error) Result {
	r.Reason = reason
	r.Err = &UnusableError{URL: r.URL, Reason: reason, Status: status, Err: cause}
	return r
}

// Checker checks share images through one fetch.Client, each image URL
// once. Set Client; the zero value of every other field works. A Checker is
// safe for concurrent use; do not change its fields after the first Check.
// It owns no goroutine and does not close the Client.
type Checker struct {
	// Client reads the images: the crawler's own, so the same identity,
	// pacing, robots.txt and ledger apply. Required.
	Client *fetch.Client
	// MaxBytes caps an image's body; a larger image is not used. 0:
	// DefaultMaxBytes. The Client's policy caps still apply.
	MaxBytes int64
	// CacheSize is how many image URLs' answers are remembered, the least
	// recently asked forgotten first. 0: DefaultCacheSize.
	CacheSize int
	// MaxAge is how long an answer about the image itself is remembered;
	// after it the image is read again. 0: DefaultMaxAge.
	MaxAge time.Duration
	// Recheck is how long an answer that may change soon is remembered: a
	// refusal until its own end (a cool-down's, robots.txt's next read)
	// when it names one, else for Recheck; an unreachable host, a 5xx or
	// 429, an unreadable body for Recheck. Never longer than MaxAge. 0:
	// DefaultRecheck.
	Recheck time.Duration
	// Clock gives the time answers expire by. Nil: real time.
	Clock Clock

	mu    sync.Mutex
	byURL map[string]*entry
	lru   list.List // of *entry, most recently asked first
}

// entry is one image URL's answer, or the read in flight that will give it.
type entry struct {
	key  string
	elem *list.Element
	done chan struct{} // closed when res is set
	res  Result
	gone bool      // the read was abandoned (its caller's context ended): ask again
	till time.Time // when res expires; set with res
}

// ErrNoClient is returned (in Result.Err's chain) by a Checker without a Client.
var ErrNoClient = errors.New("sharecheck: Checker has no Client")

// Check returns whether img may be used. The first Check of an image URL
// reads it; later ones, and concurrent ones while it is read, get the same
// answer without a request, with their own Credit, until the answer
// expires (see [Checker.MaxAge] and [Checker.Recheck]). An answer is
// remembered whatever it says, except when ctx ended before the read did:
// then nothing is remembered, and the Result's Err wraps ctx's error.
func (c *Checker) Check(ctx context.Context, img Image) Result {
	u, err := resolve(img)
	if err != nil {
		return Result{URL: img.URL, Credit: img.Credit}.unusable(InvalidURL, 0, err)
	}
	key := u.String()
	if c.Client == nil {
		return Result{URL: key, Credit: img.Credit}.unusable(InvalidURL, 0, ErrNoClient)
	}
	for {
		e, leader := c.enter(key)
		if !leader {
			select {
			case <-e.done:
				if e.gone {
					continue
				}
				res := e.res
				res.Credit = img.Credit
				return res
			case <-ctx.Done():
				return Result{URL: key, Credit: img.Credit}.unusable(Unreachable, 0, ctx.Err())
			}
		}
		res := c.read(ctx, key, img.Page)
		c.finish(e, res, ctx.Err() != nil && !res.Usable())
		res.Credit = img.Credit
		return res
	}
}

// enter returns key's entry, making it (and reporting leader) when there is
// none, and marks it most recently asked.
func (c *Checker) enter(key string) (e *entry, leader bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byURL == nil {
		c.byURL = make(map[string]*entry)
	}
	if e := c.byURL[key]; e != nil {
		if !e.expired(clock.Or(c.Clock).Now()) {
			c.lru.MoveToFront(e.elem)
			return e, false
		}
		c.lru.Remove(e.elem)
		delete(c.byURL, key)
	}
	e = &entry{key: key, done: make(chan struct{})}
	e.elem = c.lru.PushFront(e)
	c.byURL[key] = e
	size := c.CacheSize
	if size <= 0 {
		size = DefaultCacheSize
	}
	// Forget the least recently asked answers; a read in flight is kept
	// until it ends (its waiters hold it), so the cache may briefly exceed
	// its size by the reads in flight.
	for el := c.lru.Back(); el != nil && c.lru.Len() > size; {
		prev := el.Prev()
		old := el.Value.(*entry)
		select {
		case <-old.done:
			c.lru.Remove(el)
			delete(c.byURL, old.key)
		default:
		}
		el = prev
	}
	return e, true
}

// finish sets e's answer and wakes its waiters; an abandoned read is
// forgotten so the next Check reads again.
func (c *Checker) finish(e *entry, res Result, abandoned bool) {
	till := c.expiry(res)
	c.mu.Lock()
	e.res, e.gone, e.till = res, abandoned, till
	if abandoned && c.byURL[e.key] == e {
		c.lru.Remove(e.elem)
		delete(c.byURL, e.key)
	}
	c.mu.Unlock()
	close(e.done)
}

// expired reports whether e holds an answer that expired by now; a read in
// flight has none yet and is shared.
func (e *entry) expired(now time.Time) bool {
	select {
	case <-e.done:
		return !now.Before(e.till)
	default:
		return false
	}
}

// expiry returns when res stops being remembered.
func (c *Checker) expiry(res Result) time.Time {
	now := clock.Or(c.Clock).Now()
	maxAge, recheck := c.MaxAge, c.Recheck
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if recheck <= 0 {
		recheck = DefaultRecheck
	}
	recheck = min(recheck, maxAge)
	var ue *UnusableError
	if !errors.As(res.Err, &ue) {
		return now.Add(maxAge)
	}
	switch ue.Reason {
	case Refused:
		var refused *fetch.RefusedError
		if errors.As(ue, &refused) && refused.Until.After(now) {
			return minTime(refused.Until, now.Add(maxAge))
		}
		return now.Add(recheck)
	case UnknownHost, Unreachable, Unreadable:
		return now.Add(recheck)
	case Status:
		if ue.Status >= 500 || ue.Status == http.StatusTooManyRequests {
			return now.Add(recheck)
		}
	}
	return now.Add(maxAge)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Len returns how many image URLs' answers the Checker remembers, reads in
// flight included.
func (c *Checker) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// read reads the image at key once through the chain and judges its bytes.
func (c *Checker) read(ctx context.Context, key, page string) Result {
	max := c.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	opts := fetch.GetOptions{Kind: fetch.KindImage, MaxBody: max, Referer: page} // page "": no Referer
	out := Result{URL: key}
	res, err := c.Client.Get(ctx, key, opts)
	if res != nil {
		out.FinalURL, out.Bytes = res.FinalURL, res.Wire
	}
	if err != nil {
		return out.unusable(reasonOf(err), 0, err)
	}
	switch {
	case res.Status != http.StatusOK:
		return out.unusable(Status, res.Status, res.Depositable())
	case len(res.Hops) > MaxRedirects+1:
		return out.unusable(Redirects, 0, fetch.ErrTooManyRedirects)
	}
	cfg, err := sniff.Image(res.Body)
	out.MediaType = cfg.Format.MediaType()
	out.Width, out.Height = cfg.Width, cfg.Height
	switch {
	case errors.Is(err, sniff.ErrNotImage):
		return out.unusable(NotImage, 0, err)
	case err != nil:
		return out.unusable(Corrupt, 0, err)
	}
	return out
}

// reasonOf classifies an error of the Get.
func reasonOf(err error) Reason {
	var dns *net.DNSError
	var refused *fetch.RefusedError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return UnknownHost
	case errors.As(err, &refused) && refused.Reason == fetch.TooManyRedirects:
		return Redirects
	case errors.As(err, &refused):
		return Refused
	case errors.Is(err, fetch.ErrWireTooLarge), errors.Is(err, fetch.ErrDecodedTooLarge):
		return TooLarge
	case errors.Is(err, fetch.ErrTruncated), errors.Is(err, fetch.ErrUnknownCoding),
		errors.Is(err, fetch.ErrCorrupt), errors.Is(err, fetch.ErrTooManyCodings):
		return Unreadable
	}
	return Unreachable
}

// resolve returns img's URL made absolute against its page.
func resolve(img Image) (*url.URL, error) {
	u, err := url.Parse(img.URL)
	if err != nil {
		return nil, err
	}
	if !u.IsAbs() && img.Page != "" {
		base, err := url.Parse(img.Page)
		if err != nil {
			return nil, err
		}
		u = base.ResolveReference(u)
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, ErrNotAbsolute
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}
