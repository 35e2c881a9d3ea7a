package netguard

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrBlockedAddr is matched (with errors.Is) by every [*BlockedError].
var ErrBlockedAddr = errors.New("netguard: blocked address")

// BlockedError reports an address a [Guard] refuses, and the range that
// blocks it.
type BlockedError struct {
	Addr  netip.Addr // the refused address; invalid if it could not be parsed
	Range string     // the blocking range's name and prefix, e.g. "loopback (RFC 1122) 127.0.0.0/8"
	Host  string     // the name that resolved to Addr, if any
}

// Error implements error.
func (e *BlockedError) Error() string {
	if e.Host != "" {
		return fmt.Sprintf("netguard: blocked address %v for %q: %s", e.Addr, e.Host, e.Range)
	}
	return fmt.Sprintf("netguard: blocked address %v: %s", e.Addr, e.Range)
}

// Unwrap returns ErrBlockedAddr.
func (e *BlockedError) Unwrap() error { return ErrBlockedAddr }

// Guard decides which addresses may be dialled. The zero value, and a nil
// *Guard, admit public unicast addresses only ([IsPublic]). A Guard must not
// be modified once in use; it is then safe for concurrent use.
type Guard struct {
	// Allow lists prefixes admitted even though they are not public, for
	// tests (127.0.0.0/8, ::1/128) and private deployments. An IPv4-mapped
	// address is admitted if either its mapped or its IPv4 form is listed.
	Allow []netip.Prefix
}

// Check returns nil if a may be dialled, else a [*BlockedError].
func (g *Guard) Check(a netip.Addr) error {
	r := blockedRange(a)
	if r == "" {
		return nil
	}
	if g != nil && a.IsValid() {
		plain := a.WithZone("")
		for _, p := range g.Allow {
			if p.Contains(plain) || p.Contains(plain.Unmap()) {
				return nil
			}
		}
	}
	return &BlockedError{Addr: a, Range: r}
}
