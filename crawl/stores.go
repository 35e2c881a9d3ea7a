package crawl

// Stores is the state a Crawler keeps outside its own memory, as one value:
// a backend hands it out together with the fetch side (store/sqlite's
// DB.Stores, store/redis's Store.Stores). A nil field keeps that part in
// memory, owned by the Crawler.
type Stores struct {
	// State keeps schedules, leases, references and counters. Nil: a
	// MemoryState.
	State State
	// Deposits receives what is kept. Nil: a MemoryDeposits. A backend
	// that keeps no deposits (store/redis) leaves it nil, and the caller
	// sets its own.
	Deposits Deposits
}
