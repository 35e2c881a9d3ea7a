//go:build !linux

package politetest

import "net"

// stampListen returns ln as it is: only Linux stamps reads with the
// kernel's receive time here, so elsewhere a request starts when the web
// begins handling it (see [Request.Start]).
func stampListen(ln net.Listener) net.Listener { return ln }

func exactStarts() bool { return false }
