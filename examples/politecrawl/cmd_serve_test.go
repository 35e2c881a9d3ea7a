package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's quick start, as a newcomer runs it: serve a simulated web,
// crawl it with a ready config and the flags serve wrote, read the report,
// then Ctrl-C the web, which prints its audit: zero violations.
func TestServe_QuickStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flagsFile := filepath.Join(dir, "web.flags")
	serve := exec.Command(binary, "serve", "-sites", "2", "-articles", "2", "-flags", flagsFile)
	serve.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	var out bytes.Buffer
	serve.Stdout, serve.Stderr = &out, &out
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	var flags []string
	for deadline := time.Now().Add(30 * time.Second); flags == nil; {
		if b, err := os.ReadFile(flagsFile); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			flags = strings.Fields(string(b))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve wrote no flags:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond) // waiting for another process to start, not timing logic
	}
	cfg := filepath.Join(dir, "strict-news.yaml")
	b, err := os.ReadFile(readyConfig("strict-news"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-once"}, flags...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "2 deposited, 2 excerpts") {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "strict-news.db")); err != nil {
		t.Errorf("the store is not beside the config: %v", err)
	}
	if r := politecrawl(t, nil, "report", "-config", cfg); r.code != 0 || !strings.Contains(r.stdout, "news-1.example") {
		t.Errorf("report: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := serve.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "politetest audit: OK") {
		t.Errorf("serve's audit:\n%s", out.String())
	}
	if _, err := os.Stat(flagsFile); err == nil {
		t.Error("serve left its flags file behind")
	}
}
