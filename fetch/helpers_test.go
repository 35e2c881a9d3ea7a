package fetch

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/politefetch/politefetch/politetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(benchWebEnv) != "" {
		serveBenchWeb() // the far end of BenchmarkOverhead/remote, in its own process
		return
	}
	goleak.VerifyTestMain(m)
}

// loopback is the address allow-list of tests: politetest lives on 127.0.0.1.
var loopback = netip.MustParsePrefix("127.0.0.0/8")

// testPolicy returns preset with a short interval and an info page, for tests that
// would otherwise wait a second per request.
func testPolicy(preset Policy, interval time.Duration) Policy {
	p := preset
	if p.InfoURL == "" {
		p.InfoURL = "https://crawler.example/about"
	}
	p.Interval, p.IntervalMax = interval, 0
	if preset.IntervalMax > preset.Interval {
		p.IntervalMax = interval * 2
	}
	return p
}

// newClient builds a Client over web: its resolver, dialer and CA, loopback
// admitted.
func newClient(t testing.TB, web *politetest.Web, p Policy, opts ...Option) *Client {
	t.Helper()
	all := append([]Option{
		WithResolver(web), WithDial(web.DialContext), WithRootCAs(web.RootCAs()), WithAllowPrefixes(loopback),
	}, opts...)
	c, err := New(p, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// auditPolicy is what the auditor checks for p: its interval, one in flight, one
// connection, its header set, its agent. The pacer counts an interval from the
// moment a request is written; the web stamps a request when its goroutine has read
// it, which on a loaded two-core machine under the race detector can lag by
// milliseconds. With the tests' 10–20 ms intervals that lag is a large share of the
// interval, so the auditor is given half the interval as Slack; the pacer's own
// timing is proven exactly under synctest (pacer_test.go).
func auditPolicy(p Policy) politetest.Policy {
	ap := politetest.Policy{
		Interval:     p.Interval,
		MaxInFlight:  1,
		StrictRobots: p.Robots.Status != 0,
		UserAgent:    regexp.MustCompile("^" + regexp.QuoteMeta(p.UserAgent()) + "$"),
		RobotsAgent:  p.Name,
		Slack:        p.Interval / 2,
	}
	ap.AllowedHeaders = []string{"User-Agent", "Accept", "Accept-Encoding"}
	if !p.NoConditional {
		ap.AllowedHeaders = append(ap.AllowedHeaders, "If-None-Match", "If-Modified-Since")
	}
	if p.Credential.Header != "" {
		ap.AllowedHeaders = append(ap.AllowedHeaders, p.Credential.Header)
	}
	return ap
}

func readTestdata(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	return string(b), err
}

// auditInterval is the per-host interval of the end-to-end audits that run
// many hosts at once. The auditor judges arrival stamps, which lag the client's
// writes by up to ~30 ms when 2 loaded cores also run the race detector and the
// other packages' tests (seen: two writes 50 ms apart stamped 23 ms apart);
// auditPolicy's slack is half the interval, so 100 ms keeps that lag inside the
// slack while a pacer that ignored the interval is still caught (the pacer's
// exact spacing is proven under synctest).
const auditInterval = 100 * time.Millisecond
