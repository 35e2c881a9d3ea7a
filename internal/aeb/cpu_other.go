//go:build !unix

package aeb

import "time"

func cpuTime() time.Duration { return 0 }
