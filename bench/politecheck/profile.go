package main

// Profiling politecrawl as the side-by-side runs it. politecrawl has no
// profiling flag, so the table builds it with go build -overlay: its
// main.go as it is, except that main starts a CPU profile when
// POLITECRAWL_CPUPROFILE names a file, and writes it, and the allocation
// profile named by POLITECRAWL_ALLOCPROFILE, before the process exits; and
// the heap profile named by POLITECRAWL_HEAPPROFILE, with its goroutine
// profile beside it (.goroutine), near the peak of the memory the runtime
// maps.
// The repository is not changed.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// profiledMain is added to politecrawl's package main by the overlay.
const profiledMain = `package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"time"
)

var benchCPU *os.File

func benchStartProfile() {
	if p := os.Getenv("POLITECRAWL_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			benchCPU = f
		}
	}
	if p := os.Getenv("POLITECRAWL_HEAPPROFILE"); p != "" {
		go benchHeapAtPeak(p)
	}
}

// benchHeapAtPeak writes the heap profile to p, the goroutine profile to
// p.goroutine and the runtime's memory classes to p.txt, each time the
// memory the Go runtime has mapped grows 5 % past its largest so far: the
// files left hold the heap as it was near the process's peak.
func benchHeapAtPeak(p string) {
	var sample []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") || d.Name == "/gc/heap/live:bytes" || d.Name == "/sched/goroutines:goroutines" {
			sample = append(sample, metrics.Sample{Name: d.Name})
		}
	}
	var peak uint64
	for range time.Tick(200 * time.Millisecond) {
		metrics.Read(sample)
		var total uint64
		var b strings.Builder
		for _, m := range sample {
			v := m.Value.Uint64()
			if m.Name == "/memory/classes/total:bytes" {
				total = v
			}
			fmt.Fprintf(&b, "%s %.1f MiB\n", m.Name, float64(v)/(1<<20))
		}
		if total > peak+peak/20 {
			peak = total
			if f, err := os.Create(p); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
			if f, err := os.Create(p + ".goroutine"); err == nil {
				pprof.Lookup("goroutine").WriteTo(f, 0)
				f.Close()
			}
			os.WriteFile(p+".txt", []byte(b.String()), 0o644)
		}
	}
}

func benchStopProfile() {
	if benchCPU != nil {
		pprof.StopCPUProfile()
		benchCPU.Close()
		benchCPU = nil
	}
	if p := os.Getenv("POLITECRAWL_ALLOCPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			runtime.GC()
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
}

func benchExit(code int) {
	benchStopProfile()
	os.Exit(code)
}
`

// buildProfiled builds politecrawl with profiledMain into dir.
func buildProfiled(root, dir string) (string, error) {
	mainGo := filepath.Join(root, "examples", "politecrawl", "main.go")
	src, err := os.ReadFile(mainGo)
	if err != nil {
		return "", err
	}
	s := string(src)
	const decl = "func main() {\n"
	if !strings.Contains(s, decl) {
		return "", fmt.Errorf("%s: no %q to instrument", mainGo, decl)
	}
	s = strings.Replace(s, decl, decl+"\tbenchStartProfile()\n\tdefer benchStopProfile()\n", 1)
	s = strings.ReplaceAll(s, "os.Exit(", "benchExit(")
	patched := filepath.Join(dir, "main.go")
	extra := filepath.Join(dir, "benchprofile.go")
	if err := os.WriteFile(patched, []byte(s), 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(extra, []byte(profiledMain), 0o600); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {
		mainGo: patched,
		filepath.Join(root, "examples", "politecrawl", "benchprofile.go"): extra,
	}})
	if err != nil {
		return "", err
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "politecrawl")
	cmd := exec.Command("go", "build", "-overlay", ov, "-o", out, "./examples/politecrawl")
	cmd.Dir, cmd.Stderr = root, os.Stderr
	return out, cmd.Run()
}
