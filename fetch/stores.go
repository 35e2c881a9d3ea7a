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

// WithStores keeps the client's state in s; see Stores.
func WithStores(s Stores) Option {
	return func(o *options) {
		o.robotsStore, o.ledgerStore, o.store, o.schedule = s.Robots, s.Ledger, s.Validators, s.Schedule
	}
}
