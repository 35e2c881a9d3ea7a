package politetest

import (
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// receiveTime reads control messages as syscall.ParseSocketControlMessage
// does: it finds a timestamp behind another message, and a truncated or
// malformed buffer gives no stamp rather than a panic.
func TestReceiveTimeParsesLikeSyscall(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 5, 4, 3, 2, 1, 123456789, time.UTC)
	// A timestamp message, made from an SCM_RIGHTS one of the same size.
	stamp := syscall.UnixRights(make([]int, sizeofTimespec/4)...)
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&stamp[0]))
	h.Type = syscall.SCM_TIMESTAMPNS
	*(*syscall.Timespec)(unsafe.Pointer(&stamp[syscall.CmsgLen(0)])) = syscall.NsecToTimespec(want.UnixNano())
	oob := append(syscall.UnixRights(7), stamp...)

	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 2 || msgs[1].Header.Type != syscall.SCM_TIMESTAMPNS {
		t.Fatalf("the made-up messages parse as %+v, %v", msgs, err)
	}
	if ns, ok := receiveTime(oob); !ok || !time.Unix(0, ns).Equal(want) {
		t.Errorf("receiveTime = %v, %v; want %v", time.Unix(0, ns).UTC(), ok, want)
	}
	for n := range len(oob) {
		if ns, ok := receiveTime(oob[:n]); ok {
			t.Errorf("receiveTime of the first %d of %d bytes = %v, want none", n, len(oob), ns)
		}
	}
	bad := append([]byte(nil), oob...)
	(*syscall.Cmsghdr)(unsafe.Pointer(&bad[0])).Len = 3 // shorter than its header
	if _, ok := receiveTime(bad); ok {
		t.Error("a message shorter than its header gave a stamp")
	}
}

// peerClosed sees the client's FIN in the kernel before any read meets it.
func TestPeerClosed(t *testing.T) {
	if !ExactStarts() {
		t.Skip("this machine does not stamp reads with the kernel's receive time (Linux only, and not every sandbox)")
	}
	cli, srv, err := stampedPair()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sc := srv.(*stampedConn)
	if sc.peerClosed() {
		t.Fatal("closed before the client closed")
	}
	cli.Close()
	for deadline := time.Now().Add(5 * time.Second); !sc.peerClosed(); runtime.Gosched() {
		if time.Now().After(deadline) { // the FIN crosses loopback at once; this only stops a hang
			t.Fatal("the client's FIN never seen")
		}
	}
}
