//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the process's peak resident set in bytes, from its rusage
// (kilobytes on most systems, bytes on Darwin).
func peakRSS(st *os.ProcessState) int64 {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}

// peakRSSKnown reports whether peakRSS reads the system's figure.
const peakRSSKnown = true
