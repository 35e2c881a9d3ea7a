package provenance

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"github.com/politefetch/politefetch/internal/netguard"
	"github.com/politefetch/politefetch/internal/redirect"
)

// DefaultMaxHops is the number of hops (requests, the final one included)
// [Verify] accepts when [VerifyOptions.MaxHops] is zero.
const DefaultMaxHops = 10

// CustomRoots is the [Anchor.Bundle] reported when the caller supplies the
// root pool and no label for it.
const CustomRoots = "custom"

// Scope is what a successful verification attests, and what it does not.
const Scope = "This attests control of the domain at that instant and nothing more: " +
	"no revocation check was made, and it is not a signature by the publisher."

// VerifyOptions configures [Verify]. The zero value verifies against the
// pinned bundle with DefaultMaxHops and refuses every non-public IP.
type VerifyOptions struct {
	// Roots is the pool chains must reach. Nil means the pinned bundle
	// (see PinnedRoots); the system store is never used.
	Roots *x509.CertPool
	// RootsLabel names a caller-supplied pool in Anchor.Bundle.
	// Empty means CustomRoots. Ignored when Roots is nil.
	RootsLabel string
	// MaxHops bounds the number of hops. Zero means DefaultMaxHops.
	MaxHops int
	// AllowPrefixes lists addresses accepted as connected IPs although they
	// are not public (test beds and private deployments).
	AllowPrefixes []netip.Prefix
}

// Verdict is the outcome of a successful [Verify].
type Verdict struct {
	FinalURL  string    `json:"final_url"` // the URL read
	Host      string    `json:"host"`      // its host name as an A-label
	ReadAt    time.Time `json:"read_at"`   // the read instant, UTC
	Hops      int       `json:"hops"`      // the number of hops checked
	Digest    string    `json:"digest"`    // the envelope's digest
	Length    int64     `json:"length"`    // the envelope's length
	Anchor    Anchor    `json:"anchor"`    // the root the final hop's chain reached
	Statement string    `json:"statement"` // what this verdict attests, in plain words (ends with Scope)
}

// Verify checks proof p against envelope. It is a pure function of its
// inputs: the instant at which chains are checked is p.ReadAt, the roots are
// opts.Roots or the pinned bundle. It checks, in this order, and stops at the
// first failure:
//
//  1. schema: the schema name, read instant, digest form and length;
//  2. url: the requested and final URLs are https, without userinfo, with a
//     host name that is not an IP literal;
//  3. hops: at least one and at most MaxHops; the first is the requested URL;
//     each redirect (3xx) has a Location leading to the next hop's URL; the
//     last is a 2xx at the final URL; every hop URL passes the url checks;
//     no handshake after the read;
//  4. per hop: the connected IP is public (or allowed), the SNI is the host's
//     A-label, and the presented chain verifies at the read instant for that
//     name with server-auth usage (validity, name, trust, intermediates);
//  5. anchor: if p.Anchor is set, the final chain reaches that root;
//  6. length, then digest, of envelope.
//
// A failure is a [*CheckError] wrapping the sentinel for the failed check.
func Verify(p *Proof, envelope []byte, opts VerifyOptions) (*Verdict, error) {
	if p == nil {
		return nil, fail(-1, CheckSchema, ErrSchema, "nil proof", nil)
	}
	if err := checkSchema(p); err != nil {
		return nil, err
	}
	if _, err := checkURL(-1, p.RequestedURL); err != nil {
		return nil, err
	}
	if _, err := checkURL(-1, p.FinalURL); err != nil {
		return nil, err
	}
	limit := opts.MaxHops
	if limit <= 0 {
		limit = DefaultMaxHops
	}
	if len(p.Hops) > limit {
		return nil, fail(-1, CheckHops, ErrTooManyHops, fmt.Sprintf("%d hops, limit %d", len(p.Hops), limit), nil)
	}
	hosts, err := checkHops(p)
	if err != nil {
		return nil, err
	}

	roots, label := opts.Roots, opts.RootsLabel
	if roots == nil {
		pp := pinned()
		roots, label = pp.pool, pp.info.Version
	} else if label == "" {
		label = CustomRoots
	}
	chains, err := checkServers(p, hosts, newGuard(opts.AllowPrefixes), roots)
	if err != nil {
		return nil, err
	}
	anchor, err := checkAnchor(p, chains, label)
	if err != nil {
		return nil, err
	}

	if int64(len(envelope)) != p.Length {
		return nil, fail(-1, CheckLength, ErrLengthMismatch, fmt.Sprintf("proof %d, envelope %d", p.Length, len(envelope)), nil)
	}
	if got := DigestOf(envelope); got != p.Digest {
		return nil, fail(-1, CheckDigest, ErrDigestMismatch, fmt.Sprintf("proof %s, envelope %s", p.Digest, got), nil)
	}
	return newVerdict(p, hosts[len(p.Hops)-1], anchor), nil
}

// checkServers checks, hop by hop, the server each of p.Hops reached, hosts
// holding each hop's A-label: its connected IP passes g, its SNI (if
// recorded) is the host, and its presented chain verifies to roots at
// p.ReadAt. It returns the chains the final hop's certificate verified
// through, or the first failure as a [*CheckError].
func checkServers(p *Proof, hosts []string, g guard, roots *x509.CertPool) ([][]*x509.Certificate, error) {
	var chains [][]*x509.Certificate
	for i, h := range p.Hops {
		if err := checkIP(i, h.ConnectedIP, g); err != nil {
			return nil, err
		}
		if h.SNI != "" && !strings.EqualFold(strings.TrimSuffix(h.SNI, "."), hosts[i]) {
			return nil, fail(i, CheckSNI, ErrNameMismatch, fmt.Sprintf("sni %q, host %q", h.SNI, hosts[i]), nil)
		}
		var err error
		chains, err = checkChain(i, h.Chain, hosts[i], p.ReadAt, roots)
		if err != nil {
			return nil, err
		}
	}
	return chains, nil
}

// checkAnchor returns the anchor, labelled label, that the final hop's
// chains reached: the root of the first chain, or, when p.Anchor is set,
// that of the first chain reaching the recorded root. A recorded root that
// no chain reaches fails with [ErrAnchorMismatch].
func checkAnchor(p *Proof, chains [][]*x509.Certificate, label string) (Anchor, error) {
	anchor := anchorOf(chains[0], label)
	if p.Anchor == nil {
		return anchor, nil
	}
	for _, c := range chains {
		if a := anchorOf(c, label); a.RootSHA256 == p.Anchor.RootSHA256 {
			return a, nil
		}
	}
	return Anchor{}, fail(len(p.Hops)-1, CheckAnchor, ErrAnchorMismatch,
		fmt.Sprintf("recorded %s, reached %s", p.Anchor.RootSHA256, anchor.RootSHA256), nil)
}

// newVerdict returns the verdict on the verified proof p, whose final hop's
// host (an A-label) is host and whose chain reached anchor, with its
// statement in plain words.
func newVerdict(p *Proof, host string, anchor Anchor) *Verdict {
	v := &Verdict{
		FinalURL: p.FinalURL,
		Host:     host,
		ReadAt:   p.ReadAt.UTC(),
		Hops:     len(p.Hops),
		Digest:   p.Digest,
		Length:   p.Length,
		Anchor:   anchor,
	}
	v.Statement = fmt.Sprintf("%s was served at %s over TLS by a server presenting a certificate for %s, "+
		"valid at that instant and chaining to %q (root sha256 %s, bundle %s); the envelope has digest %s and length %d. %s",
		v.FinalURL, v.ReadAt.Format(TimeFormat), v.Host, anchor.Subject, anchor.RootSHA256, anchor.Bundle, v.Digest, v.Length, Scope)
	return v
}

// Seal verifies p against envelope like [Verify] (ignoring any anchor already
// recorded) and, on success, records in p.Anchor the root reached.
func Seal(p *Proof, envelope []byte, opts VerifyOptions) (*Verdict, error) {
	if p == nil {
		return nil, fail(-1, CheckSchema, ErrSchema, "nil proof", nil)
	}
	q := *p
	q.Anchor = nil
	v, err := Verify(&q, envelope, opts)
	if err != nil {
		return nil, err
	}
	a := v.Anchor
	p.Anchor = &a
	return v, nil
}

func checkSchema(p *Proof) error {
	switch {
	case p.Schema != Schema:
		return fail(-1, CheckSchema, ErrSchema, fmt.Sprintf("schema %q, want %q", p.Schema, Schema), nil)
	case p.ReadAt.IsZero():
		return fail(-1, CheckSchema, ErrSchema, "no read instant", nil)
	case !validDigest(p.Digest):
		return fail(-1, CheckSchema, ErrSchema, fmt.Sprintf("digest %q is not sha256:<64 lower hex>", p.Digest), nil)
	case p.Length < 0:
		return fail(-1, CheckSchema, ErrSchema, "negative length", nil)
	case len(p.Hops) == 0:
		return fail(-1, CheckSchema, ErrSchema, "no hops", nil)
	}
	return nil
}

func validDigest(s string) bool {
	hexPart, ok := strings.CutPrefix(s, DigestPrefix)
	if !ok || len(hexPart) != 2*sha256.Size {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkURL checks that raw is an https URL without userinfo whose host is a
// name, and returns that name as an A-label.
func checkURL(hop int, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fail(hop, CheckURL, ErrSchema, fmt.Sprintf("url %q", raw), err)
	}
	if u.Scheme != "https" {
		return "", fail(hop, CheckURL, ErrNotHTTPS, fmt.Sprintf("url %q", raw), nil)
	}
	if u.User != nil {
		return "", fail(hop, CheckURL, ErrUserinfo, fmt.Sprintf("url %q", redact(u)), nil)
	}
	host := u.Hostname()
	if host == "" || u.Opaque != "" {
		return "", fail(hop, CheckURL, ErrSchema, fmt.Sprintf("url %q has no host", raw), nil)
	}
	if isIPLiteral(host) {
		return "", fail(hop, CheckURL, ErrIPLiteral, fmt.Sprintf("url %q", raw), nil)
	}
	alabel, err := idna.Lookup.ToASCII(strings.TrimSuffix(host, "."))
	if err != nil || alabel == "" {
		return "", fail(hop, CheckURL, ErrSchema, fmt.Sprintf("host %q has no A-label", host), err)
	}
	return strings.ToLower(alabel), nil
}

func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// isIPLiteral reports whether host is an IP address, including the forms a
// WHATWG URL parser reads as IPv4 (a last label that is a number, such as
// "127.1", "2130706433" or "0x7f.1").
func isIPLiteral(host string) bool {
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return true
	}
	h := strings.TrimSuffix(host, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if l := strings.ToLower(last); strings.HasPrefix(l, "0x") {
		for _, c := range l[2:] {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkHops checks the chaining of p.Hops and returns each hop's A-label.
func checkHops(p *Proof) ([]string, error) {
	hosts := make([]string, len(p.Hops))
	last := len(p.Hops) - 1
	for i, h := range p.Hops {
		host, err := checkURL(i, h.URL)
		if err != nil {
			return nil, err
		}
		hosts[i] = host
		if h.HandshakeAt.After(p.ReadAt) {
			return nil, fail(i, CheckHops, ErrHopsBroken, "handshake after the read instant", nil)
		}
	}
	if !sameURL(p.Hops[0].URL, p.RequestedURL) {
		return nil, fail(0, CheckHops, ErrHopsBroken, fmt.Sprintf("first hop %q is not the requested URL %q", p.Hops[0].URL, p.RequestedURL), nil)
	}
	for i, h := range p.Hops[:last] {
		if !redirect.Is(h.Status) {
			return nil, fail(i, CheckHops, ErrHopsBroken, fmt.Sprintf("status %d is not a redirect but a hop follows", h.Status), nil)
		}
		if h.Location == "" {
			return nil, fail(i, CheckHops, ErrHopsBroken, "redirect without Location", nil)
		}
		base, _ := url.Parse(h.URL) // parsed by checkURL already
		loc, err := url.Parse(h.Location)
		if err != nil {
			return nil, fail(i, CheckHops, ErrHopsBroken, fmt.Sprintf("Location %q", h.Location), err)
		}
		next := base.ResolveReference(loc)
		if !sameURL(next.String(), p.Hops[i+1].URL) {
			return nil, fail(i, CheckHops, ErrHopsBroken, fmt.Sprintf("Location %q leads to %q, next hop is %q", h.Location, next, p.Hops[i+1].URL), nil)
		}
	}
	if s := p.Hops[last].Status; s < 200 || s > 299 {
		return nil, fail(last, CheckHops, ErrHopsBroken, fmt.Sprintf("last hop status %d is not a success", s), nil)
	}
	if !sameURL(p.Hops[last].URL, p.FinalURL) {
		return nil, fail(last, CheckHops, ErrHopsBroken, fmt.Sprintf("last hop %q is not the final URL %q", p.Hops[last].URL, p.FinalURL), nil)
	}
	return hosts, nil
}

// sameURL reports whether a and b name the same resource: equal once the
// host is an A-label in lower case, the default port dropped and any fragment
// removed. Both have passed checkURL.
func sameURL(a, b string) bool {
	return canonicalURL(a) == canonicalURL(b)
}

func canonicalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	host, err := idna.Lookup.ToASCII(strings.TrimSuffix(u.Hostname(), "."))
	if err != nil {
		return raw
	}
	host = strings.ToLower(host)
	if port := u.Port(); port != "" && !(u.Scheme == "https" && port == "443") {
		host += ":" + port
	}
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: host, Path: u.Path, RawPath: u.RawPath,
		RawQuery: u.RawQuery, ForceQuery: u.ForceQuery}
	if c.Path == "" {
		c.Path = "/"
	}
	return c.String()
}

// guard judges connected IPs by the chain's own address table
// (internal/netguard), so a proof is refused for exactly the addresses the
// chain would never have dialled.
type guard struct{ g *netguard.Guard }

func newGuard(allow []netip.Prefix) guard {
	return guard{g: &netguard.Guard{Allow: allow}}
}

func checkIP(hop int, s string, g guard) error {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return fail(hop, CheckIP, ErrSchema, fmt.Sprintf("connected ip %q", s), err)
	}
	if err := g.g.Check(ip.WithZone("")); err != nil {
		return fail(hop, CheckIP, ErrPrivateIP, "connected ip "+ip.String(), err)
	}
	return nil
}

// checkChain verifies the presented chain for host at instant at.
func checkChain(hop int, chain []string, host string, at time.Time, roots *x509.CertPool) ([][]*x509.Certificate, error) {
	if len(chain) == 0 {
		return nil, fail(hop, CheckChain, ErrNoChain, "", nil)
	}
	certs := make([]*x509.Certificate, len(chain))
	for i, b64 := range chain {
		der, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fail(hop, CheckChain, ErrSchema, fmt.Sprintf("certificate %d is not base64", i), err)
		}
		if certs[i], err = x509.ParseCertificate(der); err != nil {
			return nil, fail(hop, CheckChain, ErrSchema, fmt.Sprintf("certificate %d", i), err)
		}
	}
	leaf := certs[0]
	path := linkedPath(certs)
	for i, c := range path {
		what := "leaf"
		if i > 0 {
			what = "issuer " + c.Subject.String()
		}
		if at.Before(c.NotBefore) {
			return nil, fail(hop, CheckChain, ErrNotYetValid, fmt.Sprintf("%s valid from %s, read at %s", what, c.NotBefore.UTC().Format(time.RFC3339), at.UTC().Format(TimeFormat)), nil)
		}
		if at.After(c.NotAfter) {
			return nil, fail(hop, CheckChain, ErrExpired, fmt.Sprintf("%s valid until %s, read at %s", what, c.NotAfter.UTC().Format(time.RFC3339), at.UTC().Format(TimeFormat)), nil)
		}
	}
	if err := leaf.VerifyHostname(host); err != nil {
		return nil, fail(hop, CheckChain, ErrNameMismatch, "host "+host, err)
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{
		DNSName:       host,
		Intermediates: inter,
		Roots:         roots,
		CurrentTime:   at,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err == nil {
		return chains, nil
	}
	var (
		invalid x509.CertificateInvalidError
		unknown x509.UnknownAuthorityError
		name    x509.HostnameError
	)
	switch {
	case errors.As(err, &name):
		return nil, fail(hop, CheckChain, ErrNameMismatch, "host "+host, err)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		if invalid.Cert != nil && at.Before(invalid.Cert.NotBefore) {
			return nil, fail(hop, CheckChain, ErrNotYetValid, "", err)
		}
		return nil, fail(hop, CheckChain, ErrExpired, "", err)
	case errors.As(err, &invalid) && invalid.Reason == x509.IncompatibleUsage:
		return nil, fail(hop, CheckChain, ErrKeyUsage, "", err)
	case errors.As(err, &unknown):
		top := path[len(path)-1]
		if !top.IsCA && !selfSigned(top) {
			return nil, fail(hop, CheckChain, ErrMissingIntermediate, "issuer "+top.Issuer.String()+" not presented", err)
		}
		return nil, fail(hop, CheckChain, ErrChainUntrusted, "", err)
	}
	return nil, fail(hop, CheckChain, ErrChainUntrusted, "", err)
}

// linkedPath follows issuers through the presented certificates from the
// leaf, by name and signature, and returns the path (leaf first).
func linkedPath(certs []*x509.Certificate) []*x509.Certificate {
	path := []*x509.Certificate{certs[0]}
	used := make([]bool, len(certs))
	used[0] = true
	for cur := certs[0]; !selfSigned(cur); {
		next := -1
		for j, c := range certs {
			if !used[j] && bytes.Equal(cur.RawIssuer, c.RawSubject) && cur.CheckSignatureFrom(c) == nil {
				next = j
				break
			}
		}
		if next < 0 {
			break
		}
		used[next] = true
		cur = certs[next]
		path = append(path, cur)
	}
	return path
}

func selfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
}

func anchorOf(chain []*x509.Certificate, label string) Anchor {
	root := chain[len(chain)-1]
	sum := sha256.Sum256(root.Raw)
	return Anchor{Bundle: label, RootSHA256: hex.EncodeToString(sum[:]), Subject: root.Subject.String()}
}
