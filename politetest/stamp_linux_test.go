package politetest

import (
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
