//go:build !race

package redis

// raceEnabled: the race detector slows every worker process several times.
const raceEnabled = false
