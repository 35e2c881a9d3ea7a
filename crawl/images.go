package crawl

import (
	"context"
	"errors"
	"sync"

	"github.com/politefetch/politefetch/extract"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/sharecheck"
)

// Bounds of the share-image checks of one pass.
const (
	// imageChecks is how many of a pass's share images may be checked at
	// once, across hosts; an extractor with a story to check waits for a
	// slot, which holds the stages back instead of growing goroutines.
	imageChecks = 16
)

// imageStage checks the share images of one pass's stories, between the
// extractors and the depositor: each story whose deposit will name an image
// is checked in a goroutine of its own, so a slow image host holds up
// neither the extractors nor the depositor, and the job goes on to the
// depositor once its check is done. At most imageChecks run at once, and at
// most one per image host, as the readers do per article host: a second
// Get queued at the chain's pacer would see the policy's Timeout run while
// it waits. A stage that does not check passes every job straight on.
type imageStage struct {
	on    bool // the source's stories are checked
	ctx   context.Context
	out   chan<- *job
	slots chan struct{}
	wg    sync.WaitGroup

	mu    sync.Mutex
	hosts map[string]chan struct{} // one token per image host
}

// imageStage returns the pass's image stage, sending on to out. It checks
// only with an Images checker and a source under the strict news policy.
func (c *Crawler) imageStage(ctx context.Context, src *Source, out chan<- *job) *imageStage {
	s := &imageStage{ctx: ctx, out: out}
	if fp, err := src.Policy.Fetch(); c.Images != nil && err == nil && fp.CheckShareImages {
		s.on, s.slots, s.hosts = true, make(chan struct{}, imageChecks), map[string]chan struct{}{}
	}
	return s
}

// send passes j on to the depositor, after checking its story's image when
// it names one.
func (s *imageStage) send(c *Crawler, src *Source, j *job) {
	img, page := "", ""
	if s.on {
		img, page = storyImage(src, j)
	}
	if img == "" {
		s.pass(j)
		return
	}
	select {
	case s.slots <- struct{}{}:
	case <-s.ctx.Done():
		s.pass(j) // the pass is ending: the story goes on unchecked
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.slots }()
		s.check(c, j, img, page)
		s.pass(j)
	}()
}

// pass sends j to the depositor. The depositor drains its queue until it
// is closed, so the send always completes.
func (s *imageStage) pass(j *job) { s.out <- j }

// wait returns once every check started has sent its job on.
func (s *imageStage) wait() { s.wg.Wait() }

// check runs one story's check under its image host's token and records the
// answer in j.image; an answer cut short by the pass's end is not recorded.
func (s *imageStage) check(c *Crawler, j *job, img, page string) {
	host := hostOf(img)
	if host == "" {
		host = hostOf(page) // a relative URL: the page's host serves it
	}
	s.mu.Lock()
	tok := s.hosts[host]
	if tok == nil {
		tok = make(chan struct{}, 1)
		s.hosts[host] = tok
	}
	s.mu.Unlock()
	select {
	case tok <- struct{}{}:
	case <-s.ctx.Done():
		return
	}
	credit := ""
	switch ex := j.ref.Excerpt; {
	case j.article != nil && j.article.Image.Value == img:
		credit = j.article.ImageCredit.Value // the credit the page states for that image
	case ex != nil && ex.Image == img:
		credit = ex.ImageCredit // the feed's
	}
	res := c.Images.Check(s.ctx, sharecheck.Image{URL: img, Page: page, Credit: credit})
	<-tok
	if !res.Usable() && s.ctx.Err() != nil && errors.Is(res.Err, s.ctx.Err()) {
		return // not judged: the pass ended first
	}
	res.Err = nil // plain data for the stores: Reason says why
	j.image = &res
}

// storyImage returns the share image the deposit j will make names, and the
// page that names it (the Referer); "" when j makes no deposit, names no
// image, or its host is cooling down. It follows settle's decisions: a full
// deposit names the article's image, or else the feed's; an excerpt names
// the feed's.
func storyImage(src *Source, j *job) (img, page string) {
	excerpt := func() (string, string) {
		ex := j.ref.Excerpt
		if ex == nil || ex.Image == "" {
			return "", ""
		}
		page := ex.Link
		if page == "" {
			page = j.ref.URL
		}
		return ex.Image, page
	}
	var re *fetch.RefusedError
	switch {
	case j.skipped, j.cooldown:
		// A host cooling down would refuse the image too, and the checker
		// would remember that refusal as the image's answer.
		return "", ""
	case j.excerpt:
		return excerpt()
	case j.err != nil:
		if errors.As(j.err, &re) {
			return excerpt()
		}
		return "", ""
	case j.res == nil:
		return "", ""
	case !j.res.Complete():
		if serverRefused(src, j.res) {
			return excerpt()
		}
		return "", ""
	}
	if j.article != nil && j.article.Access == extract.Gated {
		return "", ""
	}
	if ok, _ := identifiersAgree(src, j.ref, j.article); !ok {
		return "", ""
	}
	page = j.res.FinalURL
	if page == "" {
		page = j.url
	}
	if j.article != nil && j.article.Image.Value != "" {
		return j.article.Image.Value, page
	}
	img, _ = excerpt()
	return img, page
}
