package sqlite

import (
	"context"
	"time"
)

// Swept counts the rows one [DB.Sweep] deleted, per table.
type Swept struct {
	Ledger, Validators, Schedule, Robots int
}

// Total is the sum of the counts.
func (s Swept) Total() int { return s.Ledger + s.Validators + s.Schedule + s.Robots }

// Sweep runs one bounded expiry sweep at now: from each table it deletes at
// most the DB's SweepBatch rows that are past their lifetime (ledger
// records that hold nothing, validators older than ValidatorRetain, latest
// starts older than ScheduleRetain, robots.txt records expired for longer
// than RobotsRetain), each table in its own short transaction, then returns
// up to SweepBatch free pages to the file system. Deposits and crawl state
// are never swept. The background sweep calls it every SweepEvery.
func (db *DB) Sweep(ctx context.Context, now time.Time) (Swept, error) {
	var s Swept
	var err error
	n := toNS(now)
	if s.Ledger, err = db.deleteBatch(ctx, "ledger sweep", db.stmts.ledgerSweep, n); err != nil {
		return s, err
	}
	if s.Validators, err = db.deleteBatch(ctx, "validator sweep", db.stmts.valSweep, n-int64(db.opt.ValidatorRetain)); err != nil {
		return s, err
	}
	if s.Schedule, err = db.deleteBatch(ctx, "schedule sweep", db.stmts.schedSweep, n-int64(db.opt.ScheduleRetain)); err != nil {
		return s, err
	}
	if s.Robots, err = db.deleteBatch(ctx, "robots sweep", db.stmts.robotsSweep, n-int64(db.opt.RobotsRetain)); err != nil {
		return s, err
	}
	if s.Total() > 0 {
		if _, err := db.w.ExecContext(ctx, "PRAGMA incremental_vacuum(?)", db.opt.SweepBatch); err != nil {
			return s, wrap("sweep: vacuum", "", err)
		}
	}
	return s, nil
}

// sweepLoop sweeps every SweepEvery until Close, sweeping again at once
// while a sweep found a full batch.
func (db *DB) sweepLoop() {
	defer close(db.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-db.stop
		cancel()
	}()
	wait := db.opt.SweepEvery
	for {
		select {
		case <-db.stop:
			return
		case <-db.clk.After(wait):
		}
		s, err := db.Sweep(ctx, db.clk.Now())
		wait = db.opt.SweepEvery
		switch {
		case err != nil:
			if db.opt.Logger != nil && ctx.Err() == nil {
				db.opt.Logger.Warn("sqlite: expiry sweep failed", "path", db.path, "err", err)
			}
		case s.Ledger == db.opt.SweepBatch || s.Validators == db.opt.SweepBatch || s.Schedule == db.opt.SweepBatch || s.Robots == db.opt.SweepBatch:
			wait = 0 // more to do: go on, one bounded batch at a time
		}
	}
}
