package crawl

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/politefetch/politefetch/internal/procid"
)

// ownerID is a lease owner's identity as the Crawler writes it when Owner is
// unset: the host name, then key=value fields for the process id, its start
// time, the boot it runs in, its pid namespace, and a random id telling two
// Crawlers of one process apart, as in
//
//	news-01 pid=4242 start=1234567 boot=6f1c… pidns=4026531836 id=9a0b1c2d3e4f
//
// The fields a platform cannot tell are left out (see ownerGone).
type ownerID struct {
	host string
	proc procid.Process // pid, start, boot and pidns
	id   string
}

func (o ownerID) String() string {
	var b strings.Builder
	b.WriteString(o.host)
	fmt.Fprintf(&b, " pid=%d", o.proc.PID)
	for _, f := range [][2]string{{"start", o.proc.Start}, {"boot", o.proc.Boot}, {"pidns", o.proc.PIDNS}, {"id", o.id}} {
		if f[1] != "" {
			fmt.Fprintf(&b, " %s=%s", f[0], f[1])
		}
	}
	return b.String()
}

// parseOwner reads an owner written by String; ok false for any other
// string (an Owner the user chose).
func parseOwner(s string) (o ownerID, ok bool) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return ownerID{}, false
	}
	o.host = f[0]
	for _, kv := range f[1:] {
		k, v, found := strings.Cut(kv, "=")
		if !found || v == "" {
			return ownerID{}, false
		}
		switch k {
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return ownerID{}, false
			}
			o.proc.PID = n
		case "start":
			o.proc.Start = v
		case "boot":
			o.proc.Boot = v
		case "pidns":
			o.proc.PIDNS = v
		case "id":
			o.id = v
		default:
			return ownerID{}, false
		}
	}
	return o, o.proc.PID > 0
}

// newOwner is this process's identity, with a fresh random id.
func newOwner() ownerID {
	h, _ := os.Hostname()
	if h == "" || strings.ContainsAny(h, " \t\n") {
		h = "unknown-host"
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return ownerID{host: h, proc: procid.Self(), id: hex.EncodeToString(b[:])}
}

// ownerGone reports whether the lease owner named s is a process of this
// machine that has ended: it was written by newOwner on this host, in this
// boot and this pid namespace, and its pid now names no process, a zombie,
// or a process started at another time (the pid reused). Anything it cannot
// tell for certain — another host or boot, an Owner the user chose, a
// platform without /proc — is not gone: that lease is left to expire.
func ownerGone(self ownerID, s string) bool {
	o, ok := parseOwner(s)
	if !ok || o.host != self.host {
		return false
	}
	return procid.Ended(self.proc, o.proc)
}
