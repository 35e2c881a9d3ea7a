package sqlite

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// selfProc is this process's identity (see proc.go), "" if /proc does not
// tell all of it.
func selfProc() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	boot := strings.TrimSpace(string(b))
	l, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return ""
	}
	ns := strings.TrimSuffix(strings.TrimPrefix(l, "pid:["), "]")
	pid := os.Getpid()
	start, _, err := procStat(pid)
	if err != nil || boot == "" || ns == "" || strings.Contains(boot+ns, ":") {
		return ""
	}
	return boot + ":" + ns + ":" + strconv.Itoa(pid) + ":" + start
}

// procGone reports whether proc, another process's identity, names a
// process of this machine, boot and pid namespace that has ended: its pid
// names no process, a zombie, or one started at another time (the pid
// worn again). What it cannot tell for certain (another boot, machine or
// namespace, an identity it cannot read) is not gone: that lease is left
// to expire.
func procGone(self, proc string) bool {
	s := strings.Split(self, ":")
	p := strings.Split(proc, ":")
	if len(s) != 4 || len(p) != 4 || s[0] != p[0] || s[1] != p[1] {
		return false
	}
	pid, err := strconv.Atoi(p[2])
	if err != nil || pid <= 0 || p[3] == "" {
		return false
	}
	if p[2] == s[2] {
		return p[3] != s[3] // this process's pid, worn by an earlier one
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	start, state, err := procStat(pid)
	if err != nil {
		return false // it exists (kill found it), but /proc hides it
	}
	return start != p[3] || state == 'Z' || state == 'X'
}

// procStat reads a process's start time (field 22 of /proc/PID/stat, in
// clock ticks since boot) and its state (field 3).
func procStat(pid int) (start string, state byte, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself: the fields after it follow the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", 0, errors.New("sqlite: unreadable /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return "", 0, errors.New("sqlite: unreadable /proc stat")
	}
	return f[19], f[0][0], nil
}
