//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair through /dev/ptmx (Linux), or skips
// the test where the machine has none.
func openPTY(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("cannot unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("cannot open the pseudo-terminal's other end: %v", err)
	}
	return m, s
}

// crawl on a terminal: the live line is drawn in place (carriage returns,
// erase to end of line, no log lines at info level), a few times a second
// at most, and ends with a newline.
func TestLive_InAPseudoTerminal(t *testing.T) {
	t.Parallel()
	ptmx, pts := openPTY(t)
	defer ptmx.Close()
	sw := newSimWeb(t, 2, 2)
	store := filepath.Join(t.TempDir(), "crawl.db")
	cmd := exec.Command(binary, append([]string{"crawl", "-config", readyConfig("strict-news"), "-store", store, "-once"}, sw.flags...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, pts
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	var screen bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&screen, ptmx)
		done <- err
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("crawl: %v\n%s", err, screen.String())
	}
	if err := <-done; err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatalf("reading the terminal: %v", err)
	}
	out := screen.String()
	draws := strings.Count(out, "\x1b[K")
	if draws < 2 || !strings.Contains(out, "\r") || !strings.Contains(out, "in pass") || !strings.Contains(out, "bound ") {
		t.Fatalf("no live line drawn in place:\n%q", out)
	}
	if strings.Contains(out, "level=INFO") {
		t.Errorf("info log lines on the terminal under the live line:\n%q", out)
	}
	if !strings.HasSuffix(strings.TrimRight(out, "\r\n"), "\x1b[K") {
		t.Errorf("the live line is not the last thing drawn:\n%q", out)
	}
	if !strings.Contains(stdout.String(), "crawl: ") {
		t.Errorf("no summary on standard output: %q", stdout.String())
	}
}
