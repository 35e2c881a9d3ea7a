package crawl

import (
	"context"

	"github.com/politefetch/politefetch/robots"
)

// CountRobots returns a robots.Store that keeps its records in s and counts
// each record written for a read of a Crawler's — one per robots.txt fetch,
// answered or failed on the way — in the RobotsReads of the source whose
// read asked for it, in t. Give it to the Client the Crawler reads through
// (fetch.Stores' Robots), with the Crawler's State as t. A fetch shared by
// several sources' reads (the host's robots.txt is fetched once) counts for
// the source whose read asked first; one made outside a Crawler's read
// (another program's Get) is not counted.
//
// When s is a [RobotsTallier], the record and its count are written in one
// transaction; otherwise the count follows the record, and a failure to
// count is not the Put's. s's [robots.FetchReleaser], when it is one, is
// kept.
func CountRobots(s robots.Store, t Tallier) robots.Store {
	c := countingRobots{s: s, t: t}
	if fr, ok := s.(robots.FetchReleaser); ok {
		return countingReleaser{c, fr}
	}
	return c
}

// RobotsTallier is a robots.Store that writes a record and adds one to the
// source's RobotsReads in one transaction (store/sqlite, where the robots
// records and the tallies share a file).
type RobotsTallier interface {
	robots.Store
	PutTallied(ctx context.Context, host string, r robots.Record, source string) error
}

type countingRobots struct {
	s robots.Store
	t Tallier
}

func (c countingRobots) Get(ctx context.Context, host string) (robots.Record, bool, error) {
	return c.s.Get(ctx, host)
}

func (c countingRobots) Put(ctx context.Context, host string, r robots.Record) error {
	src, _ := ctx.Value(readerKey{}).(string)
	if src == "" {
		return c.s.Put(ctx, host, r)
	}
	if rt, ok := c.s.(RobotsTallier); ok {
		return rt.PutTallied(ctx, host, r, src)
	}
	if err := c.s.Put(ctx, host, r); err != nil {
		return err
	}
	if c.t != nil {
		_ = c.t.AddTally(context.WithoutCancel(ctx), src, Tally{RobotsReads: 1})
	}
	return nil
}

type countingReleaser struct {
	countingRobots
	fr robots.FetchReleaser
}

func (c countingReleaser) ReleaseFetch(ctx context.Context, host string) error {
	return c.fr.ReleaseFetch(ctx, host)
}

// readerKey marks the context of a Crawler's reads with the source they
// are for, so that CountRobots can tell whose read fetched a robots.txt.
type readerKey struct{}

// forSource returns ctx marked as reading for source.
func forSource(ctx context.Context, source string) context.Context {
	return context.WithValue(ctx, readerKey{}, source)
}
