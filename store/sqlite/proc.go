package sqlite

import "sync"

// A process's identity as the schedule writes it beside each lease it
// takes, so that another process opening the file can tell, on the same
// machine, that the lease's holder has ended: the boot it runs in, its pid
// namespace, its pid and its start time, as
//
//	6f1c…:4026531836:4242:1234567
//
// "" where the platform cannot tell them (see procGone).

// deadProcs remembers the processes found ended: an ended process does not
// come back (its pid, worn again, has another start time).
var deadProcs sync.Map // proc string → struct{}

// procEnded reports whether the process named proc has ended (see
// procGone), remembering those that have.
func procEnded(self, proc string) bool {
	if proc == "" || proc == self {
		return false
	}
	if _, ok := deadProcs.Load(proc); ok {
		return true
	}
	if !procGone(self, proc) {
		return false
	}
	deadProcs.Store(proc, struct{}{})
	return true
}
