package fetch

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/leaktest"
	"github.com/politefetch/politefetch/politetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(benchWebEnv) != "" {
		serveBenchWeb() // the far end of BenchmarkOverhead/remote, in its own process
		return
	}
	leaktest.Main(m)
}

// loopback is the address allow-list of tests: politetest lives on 127.0.0.1.
var loopback = netip.MustParsePrefix("127.0.0.0/8")

// The identity tests name their crawler with: a preset has none.
const (
	testName    = "PoliteTestBot"
	testVersion = "1"
	testInfoURL = "https://crawler.example/about"
	testContact = "bot@crawler.example"
)

// withIdentity returns p with the test crawler's identity.
func withIdentity(p Policy) Policy {
	p.Name, p.Version, p.InfoURL, p.Contact = testName, testVersion, testInfoURL, testContact
	return p
}

// testPolicy returns preset with the test identity and a short interval, for
// tests that would otherwise wait a second per request.
func testPolicy(preset Policy, interval time.Duration) Policy {
	p := withIdentity(preset)
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
		WithNetwork(Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(), Allow: []netip.Prefix{loopback}}),
	}, opts...)
	c, err := New(p, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// auditPolicy is what the auditor checks for p: its interval (with auditSlack),
// one in flight, one connection, its header set, its agent.
func auditPolicy(p Policy) politetest.Policy {
	ap := politetest.Policy{
		Interval:     p.Interval,
		MaxInFlight:  1,
		StrictRobots: p.Robots.Status != 0,
		UserAgent:    regexp.MustCompile("^" + regexp.QuoteMeta(p.UserAgent()) + "$"),
		RobotsAgent:  p.Name,
		Slack:        auditSlack(p.Interval),
		HTTPSOnly:    !p.AllowHTTP,
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

// auditInterval is the per-host interval of the end-to-end audits that run
// many hosts at once.
const auditInterval = 100 * time.Millisecond

// auditSlack is the auditor's tolerance: politetest.ExactSlack where the web
// times starts by the kernel's receive stamps and the chain counts intervals
// from its writes (they then agree however loaded the machine is), else half
// the interval for the web's scheduling lag.
func auditSlack(interval time.Duration) time.Duration { return politetest.Slack(interval / 2) }

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

// mustRequest returns a GET for u.
func mustRequest(t testing.TB, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
