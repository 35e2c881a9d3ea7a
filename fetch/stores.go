package fetch

import (
	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/robots"
)

// Stores is the state a Client keeps outside its own memory, as one value: a
// backend hands all of it out at once (store/sqlite's DB.Stores,
// store/redis's Store.Stores), and WithStores gives it to the client. A nil
// field keeps that part in this process's memory, so the zero Stores is a
// client on its own.
type Stores struct {
	// Robots keeps robots.txt entries. Nil: robots' in-memory store.
	Robots robots.Store
	// Ledger keeps the per-host refusal ledger. Nil: backoff's in-memory
	// store.
	Ledger backoff.Store
	// Validators keeps conditional-GET validators. Nil: a MemoryStore.
	Validators ValidatorStore
	// Schedule shares pacing with other processes: every start is claimed
	// in it, and the moment the request really left is reported to it.
	// Nil: pacing holds within this Client.
	Schedule Schedule
}

// WithStores keeps the client's state in s; see Stores. It sets the fields of
// s that are not nil, so that several WithStores compose (a later one's field
// replaces an earlier one's): WithStores(Stores{Schedule: sched}) shares the
// pacing alone and keeps the rest in memory.
func WithStores(s Stores) Option {
	return func(o *options) {
		if s.Robots != nil {
			o.robotsStore = s.Robots
		}
		if s.Ledger != nil {
			o.ledgerStore = s.Ledger
		}
		if s.Validators != nil {
			o.store = s.Validators
		}
		if s.Schedule != nil {
			o.schedule = s.Schedule
		}
	}
}
