package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/politefetch/politefetch/crawl"
)

var _ crawl.Tallier = (*CrawlState)(nil)

// tallyCols are crawl_tally's counters, in crawl.Tally's order.
const tallyCols = `reads, trigger_reads, not_modified, robots_reads, image_reads, deposits, excerpts, excluded, mismatches, refusals, failures, deposit_failures`

func scanTally(sc interface{ Scan(...any) error }, lead ...any) (crawl.Tally, error) {
	var t crawl.Tally
	err := sc.Scan(append(lead, &t.Reads, &t.TriggerReads, &t.NotModified, &t.RobotsReads, &t.ImageReads, &t.Deposits,
		&t.Excerpts, &t.Excluded, &t.Mismatches, &t.Refusals, &t.Failures, &t.DepositFailures)...)
	return t, err
}

// AddTally implements [crawl.Tallier] in one statement. The counters the
// state keeps itself are counted by triggers in the transaction of what
// they count: Reads by Attempt, the outcomes when a pending reference is
// settled (by Settle, or by a full deposit's Put in the same file), and
// DepositFailures by Failure.
func (s *CrawlState) AddTally(ctx context.Context, source string, d crawl.Tally) error {
	if err := s.db.check("crawl tally add", source); err != nil {
		return err
	}
	_, err := s.db.exec(ctx, "crawl tally add", source, s.db.stmts.tallyAdd, source, d.Reads, d.TriggerReads, d.NotModified, d.RobotsReads, d.ImageReads,
		d.Deposits, d.Excerpts, d.Excluded, d.Mismatches, d.Refusals, d.Failures, d.DepositFailures)
	return err
}

// Tally implements [crawl.Tallier].
func (s *CrawlState) Tally(ctx context.Context, source string) (crawl.Tally, error) {
	if err := s.db.check("crawl tally", source); err != nil {
		return crawl.Tally{}, err
	}
	t, err := scanTally(s.db.stmts.tallyGet.QueryRowContext(ctx, source))
	if errors.Is(err, sql.ErrNoRows) {
		return crawl.Tally{}, nil
	}
	return t, wrap("crawl tally", source, err)
}

// Tallies returns every source's tally, for a report of the whole file.
func (s *CrawlState) Tallies(ctx context.Context) (map[string]crawl.Tally, error) {
	if err := s.db.check("crawl tallies", ""); err != nil {
		return nil, err
	}
	rows, err := s.db.stmts.tallyList.QueryContext(ctx)
	if err != nil {
		return nil, wrap("crawl tallies", "", err)
	}
	defer rows.Close()
	out := map[string]crawl.Tally{}
	for rows.Next() {
		var src string
		t, err := scanTally(rows, &src)
		if err != nil {
			return nil, wrap("crawl tallies", "", err)
		}
		out[src] = t
	}
	return out, wrap("crawl tallies", "", rows.Err())
}
