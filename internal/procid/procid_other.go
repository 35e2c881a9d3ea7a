//go:build !linux

package procid

import (
	"errors"
	"os"
)

// Without /proc only the pid is known: no identity is Known, so none is
// ever judged ended.
func self() Process { return Process{PID: os.Getpid()} }

func gone(int, string) bool { return false }

func of(int) (Process, error) {
	return Process{}, errors.New("procid: no /proc to read a process's start from")
}
