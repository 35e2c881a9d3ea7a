package sqlite

import (
	"context"
	"fmt"
	"time"
)

// Swept counts the rows one [DB.Sweep] deleted, per table.
type Swept struct {
	Ledger, Validators, Schedule, Leases, Robots, Waiters int
}

// Total is the sum of the counts.
func (s Swept) Total() int {
	return s.Ledger + s.Validators + s.Schedule + s.Leases + s.Robots + s.Waiters
}

// Sweep runs one bounded expiry sweep at now: from each table it deletes at
// most the DB's SweepBatch rows that are past their lifetime (ledger
// records that hold nothing, validators older than ValidatorRetain, latest
// starts older than ScheduleRetain (and the floor an ended hold left, once
// as old), expired in-flight leases, waiters for a
// host's turn past their poll-by, robots.txt records expired for longer
// than RobotsRetain), each table in its own short transaction, then returns
// up to SweepBatch free pages to the file system. Deposits and crawl state
// are never swept. The background sweep calls it every SweepEvery.
func (db *DB) Sweep(ctx context.Context, now time.Time) (Swept, error) {
	var s Swept
	var err error
	n := toNS(now)
	if s.Ledger, err = db.sweepLedger(ctx, n); err != nil {
		return s, err
	}
	if s.Validators, err = db.deleteBatch(ctx, "validator sweep", db.stmts.valSweep, n-int64(db.opt.ValidatorRetain)); err != nil {
		return s, err
	}
	if s.Schedule, err = db.deleteBatch(ctx, "schedule sweep", db.stmts.schedSweep, n-int64(db.opt.ScheduleRetain)); err != nil {
		return s, err
	}
	floors, err := db.deleteBatch(ctx, "schedule hold sweep", db.stmts.holdSweep, n-int64(db.opt.ScheduleRetain))
	if err != nil {
		return s, err
	}
	s.Schedule += floors
	if s.Leases, err = db.deleteBatch(ctx, "schedule lease sweep", db.stmts.leaseSweep, n); err != nil {
		return s, err
	}
	if s.Robots, err = db.deleteBatch(ctx, "robots sweep", db.stmts.robotsSweep, n-int64(db.opt.RobotsRetain)); err != nil {
		return s, err
	}
	if s.Waiters, err = db.deleteBatch(ctx, "schedule waiter sweep", db.stmts.waiterSweep, n); err != nil {
		return s, err
	}
	if s.Total() > 0 {
		if _, err := db.w.ExecContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", db.opt.SweepBatch)); err != nil {
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
	for {
		select {
		case <-db.stop:
			return
		case <-db.clk.After(db.opt.SweepEvery):
		}
		for { // while a sweep found a full batch, go on at once, batch by batch
			s, err := db.Sweep(ctx, db.clk.Now())
			if db.opt.onSweep != nil {
				db.opt.onSweep(s, err)
			}
			if err != nil {
				if db.opt.Logger != nil && ctx.Err() == nil {
					db.opt.Logger.Warn("sqlite: expiry sweep failed", "path", db.path, "err", err)
				}
				break
			}
			if !s.full(db.opt.SweepBatch) || ctx.Err() != nil {
				break
			}
		}
	}
}

// full reports whether a table gave a whole batch, so more may be waiting.
func (s Swept) full(batch int) bool {
	return s.Ledger >= batch || s.Validators >= batch || s.Schedule >= batch || s.Leases >= batch || s.Robots >= batch ||
		s.Waiters >= batch
}
