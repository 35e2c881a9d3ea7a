// Package leaktest fails a package's tests when a goroutine they started is
// still alive once they end: a server not closed, a timer's watcher, a
// connection's reader left behind.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { leaktest.Main(m) }
//
// The goroutines alive before the tests run (the test binary's own, and any a
// package's init started) are not counted; neither are the runtime's and the
// testing package's own. Goroutines that are on their way out get a bounded
// time to finish before they are reported.
package leaktest

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Settle is how long Main waits, in total, for goroutines on their way out
// to end before it reports them.
const Settle = 5 * time.Second

// Main runs the tests and, if they passed, fails the run (exit status 1,
// the goroutines' stacks on stderr) when goroutines they started outlive
// Settle. It does not return.
func Main(m *testing.M) {
	before := Snapshot()
	code := m.Run()
	if code == 0 {
		if left := Leaked(before, Settle); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "leaktest: %d goroutine(s) outlived the tests:\n\n%s\n", len(left), strings.Join(left, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// Snapshot returns the ids of the goroutines alive now.
func Snapshot() map[uint64]bool {
	ids := map[uint64]bool{}
	for _, g := range goroutines() {
		ids[g.id] = true
	}
	return ids
}

// Leaked returns the stacks of the goroutines alive now that were not in
// before and are neither the caller nor the runtime's or testing's own,
// retrying with growing pauses for at most settle while there are any.
func Leaked(before map[uint64]bool, settle time.Duration) []string {
	deadline := time.Now().Add(settle)
	pause := time.Millisecond
	for {
		var left []string
		for _, g := range goroutines() {
			if !before[g.id] && !g.current && !ignored(g) {
				left = append(left, g.stack)
			}
		}
		if len(left) == 0 || !time.Now().Before(deadline) {
			return left
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 100*time.Millisecond)
	}
}

type goroutine struct {
	id      uint64
	current bool     // the goroutine that took the dump
	funcs   []string // the stack's functions, innermost first
	stack   string
}

// goroutines parses runtime.Stack's dump of every goroutine.
func goroutines() []goroutine {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var gs []goroutine
	for i, block := range bytes.Split(buf, []byte("\n\n")) {
		if g, ok := parse(string(block)); ok {
			g.current = i == 0 // runtime.Stack puts the caller first
			gs = append(gs, g)
		}
	}
	return gs
}

// parse reads one goroutine's block: "goroutine 7 [chan receive]:" then a
// function line and a file line per frame, and maybe "created by …".
func parse(block string) (goroutine, bool) {
	lines := strings.Split(strings.TrimSpace(block), "\n")
	head, ok := strings.CutPrefix(lines[0], "goroutine ")
	if !ok {
		return goroutine{}, false
	}
	idText, _, _ := strings.Cut(head, " ")
	id, err := strconv.ParseUint(idText, 10, 64)
	if err != nil {
		return goroutine{}, false
	}
	g := goroutine{id: id, stack: block}
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "\t") || l == "" {
			continue // a frame's file and line
		}
		fn := l
		if created, ok := strings.CutPrefix(l, "created by "); ok {
			fn = created
			if i := strings.Index(fn, " in goroutine "); i >= 0 {
				fn = fn[:i]
			}
		} else if i := strings.LastIndexByte(fn, '('); i > 0 {
			fn = fn[:i] // the arguments
		}
		g.funcs = append(g.funcs, fn)
	}
	return g, len(g.funcs) > 0
}

// ownFuncs are functions whose goroutines belong to the runtime or the
// testing package, and are alive whatever a test does.
var ownFuncs = []string{
	"testing.RunTests",
	"testing.(*T).Run",
	"testing.(*T).Parallel",
	"testing.(*F).Fuzz",
	"testing.runFuzzing",
	"testing.runFuzzTests",
	"testing.tRunner",
	"testing.(*M).startAlarm",
	"os/signal.signal_recv",
	"os/signal.loop",
	"runtime.ensureSigM",
	"runtime.ReadTrace",
	"runtime/trace.Start.func1",
	"runtime.runfinq",
	"runtime.forcegchelper",
	"runtime.bgsweep",
	"runtime.bgscavenge",
	"runtime.unique_runtime_registerUniqueMapCleanup.func2",
}

func ignored(g goroutine) bool {
	for _, fn := range g.funcs {
		if slices.Contains(ownFuncs, fn) {
			return true
		}
	}
	return false
}
