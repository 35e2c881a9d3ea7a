package procid

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func self() Process {
	p := Process{PID: os.Getpid()}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		p.Boot = strings.TrimSpace(string(b))
	}
	if l, err := os.Readlink("/proc/self/ns/pid"); err == nil { // "pid:[4026531836]"
		p.PIDNS = strings.TrimSuffix(strings.TrimPrefix(l, "pid:["), "]")
	}
	p.Start, _, _ = stat(p.PID)
	return p
}

// gone reports whether pid names no process, a zombie, or one started at
// another time than start. A process that exists but whose start cannot be
// read is not gone.
func gone(pid int, start string) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	got, state, err := stat(pid)
	if err != nil {
		return false // it exists (kill found it), but /proc hides it
	}
	return got != start || state == 'Z' || state == 'X'
}

// stat reads a process's start time (field 22 of /proc/PID/stat) and its
// state (field 3).
func stat(pid int) (start string, state byte, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself: the fields after it follow the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", 0, errors.New("procid: unreadable /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return "", 0, errors.New("procid: unreadable /proc stat")
	}
	return f[19], f[0][0], nil
}

func of(pid int) (Process, error) {
	p := self()
	start, _, err := stat(pid)
	if err != nil {
		return Process{}, err
	}
	p.PID, p.Start = pid, start
	return p, nil
}
