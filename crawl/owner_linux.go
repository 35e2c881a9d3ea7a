package crawl

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// selfProcess is this process's start time, boot id and pid namespace, ""
// for what /proc does not tell.
func selfProcess() (start, boot, pidns string) {
	start, _, _ = procStat(os.Getpid())
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		boot = strings.TrimSpace(string(b))
	}
	if l, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		// "pid:[4026531836]"
		pidns = strings.TrimSuffix(strings.TrimPrefix(l, "pid:["), "]")
	}
	return start, boot, pidns
}

// procStat reads a process's start time (field 22 of /proc/PID/stat) and
// state (field 3).
func procStat(pid int) (start string, state byte, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself: the fields after it follow the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", 0, errors.New("crawl: unreadable /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return "", 0, errors.New("crawl: unreadable /proc stat")
	}
	return f[19], f[0][0], nil
}

// processGone reports whether pid names no process of this pid namespace, a
// zombie or a dead one, or one started at another time than start. A
// process that exists but whose start cannot be read is not gone.
func processGone(pid int, start string) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	got, state, err := procStat(pid)
	if err != nil {
		return false // it exists (kill found it), but /proc hides it: not certain
	}
	return got != start || state == 'Z' || state == 'X'
}
