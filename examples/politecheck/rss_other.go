//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "os"

// peakRSS is 0: this system's process state does not say.
func peakRSS(*os.ProcessState) int64 { return 0 }

// peakRSSKnown reports whether peakRSS reads the system's figure.
const peakRSSKnown = false
