package feed

import "github.com/politefetch/politefetch/internal/clock"

// Clock tells the time: the walkers read it to measure the backlog window
// when [Stop.Now] is zero. Any value with these methods works, and so does
// the fetch client's clock; nil means real time. Implementations must be safe
// for concurrent use.
type Clock = clock.Clock
