package sqlite

import (
	"sync"

	"github.com/politefetch/politefetch/internal/procid"
)

// A process's identity as the schedule writes it beside each lease it
// takes, so that another process opening the file can tell, on the same
// machine, that the lease's holder has ended: internal/procid's Process
// (the boot it runs in, its pid namespace, its pid and its start time) as
//
//	6f1c…:4026531836:4242:1234567
//
// "" where the platform cannot tell them all: such a lease is never taken
// over before it expires.

// selfProc is this process's identity, "" if the platform does not tell
// all of it.
func selfProc() string { return procid.Self().String() }

// deadProcs remembers the processes found ended: an ended process does not
// come back (its pid, worn again, has another start time).
var deadProcs sync.Map // proc string → struct{}

// procEnded reports whether the process named proc has ended, as
// procid.Ended judges it from self (only what is certain: another boot,
// machine or namespace, or an identity it cannot read, is not ended),
// remembering those that have.
func procEnded(self, proc string) bool {
	if proc == "" || proc == self {
		return false
	}
	if _, ok := deadProcs.Load(proc); ok {
		return true
	}
	s, ok1 := procid.Parse(self)
	p, ok2 := procid.Parse(proc)
	if !ok1 || !ok2 || !procid.Ended(s, p) {
		return false
	}
	deadProcs.Store(proc, struct{}{})
	return true
}
