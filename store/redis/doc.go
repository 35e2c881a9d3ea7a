// Package redis keeps politefetch's shared state in one Redis, so that
// several worker processes, on one machine or many, are exactly as polite
// together as one process is: one host, one budget.
package redis
