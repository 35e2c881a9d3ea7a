// Package procid names a process well enough for another process of the
// same machine to tell, later, that it has ended: the boot it ran in, its
// pid namespace, its pid and its start time. A lease written with its
// holder's identity can then be taken over at once when the holder was
// killed, instead of waiting out its expiry.
//
// Only what is certain counts as ended. An identity from another boot or
// pid namespace, or one with a field missing (a platform without /proc),
// is never judged ended: the lease it holds is left to expire.
package procid

import (
	"strconv"
	"strings"
)

// Process is one process's identity. A zero field is one the platform
// could not tell.
type Process struct {
	Boot  string // the kernel's boot id (/proc/sys/kernel/random/boot_id)
	PIDNS string // the pid namespace's inode number (/proc/self/ns/pid)
	PID   int
	Start string // the start time, in clock ticks since boot (/proc/PID/stat)
}

// Known reports whether every field of p is set, so that Ended can judge it.
func (p Process) Known() bool {
	return p.Boot != "" && p.PIDNS != "" && p.PID > 0 && p.Start != ""
}

// Self is this process's identity, its fields zero where the platform
// cannot tell them.
func Self() Process { return self() }

// Ended reports whether p names a process of self's machine, boot and pid
// namespace that has ended: its pid names no process, a zombie, or a
// process started at another time (the pid worn again). It is false
// whenever either identity is not Known or they are of another boot or
// namespace, and for self itself.
func Ended(self, p Process) bool {
	if !self.Known() || !p.Known() || p.Boot != self.Boot || p.PIDNS != self.PIDNS {
		return false
	}
	if p.PID == self.PID {
		return p.Start != self.Start // this process's pid, worn by an earlier one
	}
	return gone(p.PID, p.Start)
}

// Of is the identity of the live process pid as this process sees it: this
// machine's boot and pid namespace, and pid's start time. It fails where
// the platform cannot tell a process's start.
func Of(pid int) (Process, error) { return of(pid) }

// String is p as "boot:pidns:pid:start", the form a store writes beside a
// lease; "" unless p is Known (or a field holds a colon).
func (p Process) String() string {
	if !p.Known() || strings.Contains(p.Boot+p.PIDNS+p.Start, ":") {
		return ""
	}
	return p.Boot + ":" + p.PIDNS + ":" + strconv.Itoa(p.PID) + ":" + p.Start
}

// Parse reads an identity written by String; ok is false for anything
// else ("" included).
func Parse(s string) (p Process, ok bool) {
	f := strings.Split(s, ":")
	if len(f) != 4 {
		return Process{}, false
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 || strconv.Itoa(pid) != f[2] {
		return Process{}, false
	}
	p = Process{Boot: f[0], PIDNS: f[1], PID: pid, Start: f[3]}
	return p, p.Known()
}
