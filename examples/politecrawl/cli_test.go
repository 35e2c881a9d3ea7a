package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The command-line tests build the binary once and run it as an operator
// would, against politetest webs started by the tests.

var binary string // the built politecrawl, set by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "politecrawl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "politecrawl")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building politecrawl: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// politecrawl runs the binary with args and an environment of env only
// (plus PATH and HOME), so nothing of the caller's environment reaches it.
func politecrawl(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running politecrawl %v: %v", args, err)
	}
	return r
}

// readyConfig is the path of one of the repository's ready configs.
func readyConfig(name string) string { return filepath.Join("..", "..", "configs", name+".yaml") }

// policyTable reads testdata/policies.txt: preset → setting → value.
func policyTable(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "policies.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("policies.txt: bad line %q", line)
		}
		p := strings.TrimSpace(f[0])
		if m[p] == nil {
			m[p] = map[string]string{}
		}
		m[p][strings.TrimSpace(f[1])] = strings.TrimSpace(f[2])
	}
	return m
}

// settings parses the policy block of `sources check`'s output.
func settings(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if line == "" || strings.HasPrefix(line, "source ") {
			if strings.HasPrefix(line, "source ") {
				break
			}
			continue
		}
		if !strings.HasPrefix(line, "  ") || len(line) < 31 {
			continue
		}
		m[strings.TrimSpace(line[2:30])] = strings.TrimSpace(line[30:])
	}
	return m
}

// Each ready config reproduces its document: `sources check` prints the
// effective policy, and every setting of the document's table is as the
// document says (S2, S3, S4, D2, D5, V7, V9, V11, V12).
func TestSourcesCheck_ReadyConfigsMatchTheDocuments(t *testing.T) {
	t.Parallel()
	table := policyTable(t)
	for _, preset := range []string{"strict-news", "digest", "vault"} {
		t.Run(preset, func(t *testing.T) {
			t.Parallel()
			r := politecrawl(t, nil, "sources", "check", "-config", readyConfig(preset))
			if r.code != 0 {
				t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
			}
			got := settings(r.stdout)
			want := table[preset]
			if len(want) == 0 {
				t.Fatalf("no table for %s", preset)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// The User-Agent of each ready config is the document's own example
// identity (S1, D3).
func TestSourcesCheck_S1_D3_UserAgents(t *testing.T) {
	t.Parallel()
	for preset, ua := range map[string]string{
		"strict-news": "ARCEL-DailyDose-Bot/1 (+https://arcel.example/for-publishers/our-crawler)",
		"digest":      "NewsElsBot/1.0 (+https://news.elsastry.com/bot; bot@news.elsastry.com)",
		"vault":       "EigerVaultTrialConnector/1 (+https://eigervault.ch; contact@eigervault.ch)",
	} {
		r := politecrawl(t, nil, "sources", "check", "-config", readyConfig(preset))
		if got := settings(r.stdout)["user-agent"]; got != ua {
			t.Errorf("%s: user-agent %q, want %q", preset, got, ua)
		}
	}
}

// A bad config names its file, line and key, and the exit status says so.
func TestSourcesCheck_BadConfigNamesFileLineKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	cfg := strings.Replace(minimalConfig, "    full_text: true\n", "    full_text: true\n    fulltext: true\n", 1)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := politecrawl(t, nil, "sources", "check", "-config", path)
	if r.code == 0 {
		t.Fatalf("exit 0 for a bad config:\n%s", r.stdout)
	}
	want := path + ":17: sources[0].fulltext: unknown key"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q lacks %q", r.stderr, want)
	}
}
