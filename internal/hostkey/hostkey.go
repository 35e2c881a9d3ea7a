package hostkey

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// ErrInvalidHost is matched (with errors.Is) by every error this package
// returns.
var ErrInvalidHost = errors.New("hostkey: invalid host")

// HostError reports a host that cannot be normalised.
type HostError struct {
	Host   string // the input, as given
	Reason string // what is wrong with it
}

// Error implements error.
func (e *HostError) Error() string {
	return fmt.Sprintf("hostkey: invalid host %q: %s", e.Host, e.Reason)
}

// Unwrap returns ErrInvalidHost.
func (e *HostError) Unwrap() error { return ErrInvalidHost }

// Normalize returns the key of host, an authority as in a URL ("host",
// "host:port", "[v6]" or "[v6]:port"), assuming the https scheme: the default
// port 443 is dropped, any other port is kept. It is NormalizeScheme("https",
// host); use [FromURL] or [NormalizeScheme] for other schemes.
func Normalize(host string) (string, error) {
	return NormalizeScheme("https", host)
}

// NormalizeScheme returns the key of the authority host for scheme: the
// host name in lower case with IDNA A-labels (Lookup profile) and no trailing
// dot, or an IP literal in canonical form (IPv6 in brackets, no zone), then
// ":port" unless the port is empty or the scheme's default (443 for https
// and wss, 80 for http and ws). A bare IPv6 literal without brackets is
// accepted. Errors match [ErrInvalidHost].
func NormalizeScheme(scheme, host string) (string, error) {
	if isKeyName(host) {
		return host, nil // already a key: no port, nothing to change
	}
	name, port, err := split(host)
	if err != nil {
		return "", err
	}
	name, err = normalizeName(host, name)
	if err != nil {
		return "", err
	}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return "", &HostError{Host: host, Reason: "invalid port " + strconv.Quote(port)}
		}
		if n != defaultPort(scheme) {
			return name + ":" + strconv.FormatUint(n, 10), nil
		}
	}
	return name, nil
}

// FromURL returns the key of u's host for u's scheme, as [NormalizeScheme].
func FromURL(u *url.URL) (string, error) {
	if u == nil {
		return "", &HostError{Reason: "nil URL"}
	}
	return NormalizeScheme(u.Scheme, u.Host)
}

// Site returns the registrable domain (eTLD+1, from the public suffix list in
// golang.org/x/net/publicsuffix) of host, without any port: "a.b.example.co.uk:8443"
// gives "example.co.uk". An IP literal, a public suffix itself, a single-label
// name and anything else without a registrable domain is its own site: Site
// returns its normalised name. An invalid host is returned lower-cased, as
// is, so that it still has some key; callers should have refused it earlier
// with [Normalize].
func Site(host string) string {
	name, _, err := split(host)
	if err != nil {
		return strings.ToLower(host)
	}
	name, err = normalizeName(host, name)
	if err != nil {
		return strings.ToLower(host)
	}
	if strings.HasPrefix(name, "[") || isIPv4(name) {
		return name
	}
	site, err := publicsuffix.EffectiveTLDPlusOne(name)
	if err != nil {
		return name
	}
	return site
}

func defaultPort(scheme string) uint64 {
	switch strings.ToLower(scheme) {
	case "https", "wss":
		return 443
	case "http", "ws":
		return 80
	}
	return 0
}

// split separates an authority into a host and a port (possibly empty). It
// rejects userinfo and stray brackets.
func split(host string) (name, port string, err error) {
	if host == "" {
		return "", "", &HostError{Host: host, Reason: "empty"}
	}
	if strings.ContainsAny(host, "@/\\?# \t\r\n") {
		return "", "", &HostError{Host: host, Reason: "forbidden character"}
	}
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "", "", &HostError{Host: host, Reason: "unclosed bracket"}
		}
		name, rest := host[:end+1], host[end+1:]
		switch {
		case rest == "":
		case rest[0] == ':':
			port = rest[1:]
		default:
			return "", "", &HostError{Host: host, Reason: "junk after bracket"}
		}
		return name, port, nil
	}
	if strings.Count(host, ":") > 1 { // bare IPv6 literal
		return host, "", nil
	}
	if i := strings.IndexByte(host, ':'); i >= 0 {
		return host[:i], host[i+1:], nil
	}
	return host, "", nil
}

// normalizeName normalises a host without port; input is the original
// authority, for errors.
func normalizeName(input, name string) (string, error) {
	if isKeyName(name) {
		return name, nil
	}
	return slowName(input, name)
}

// slowName is normalizeName without the fast path for names that are
// already keys.
func slowName(input, name string) (string, error) {
	if strings.HasPrefix(name, "[") {
		a, err := netip.ParseAddr(name[1 : len(name)-1])
		if err != nil || !a.Is6() {
			return "", &HostError{Host: input, Reason: "invalid IPv6 literal"}
		}
		return "[" + a.WithZone("").String() + "]", nil
	}
	if strings.Contains(name, ":") {
		a, err := netip.ParseAddr(name)
		if err != nil || !a.Is6() {
			return "", &HostError{Host: input, Reason: "invalid IPv6 literal"}
		}
		return "[" + a.WithZone("").String() + "]", nil
	}
	// Only digits and dots can parse as an address here (no ':'); checking
	// first spares every other name the error netip.ParseAddr allocates.
	if isDigitsDots(name) {
		if a, err := netip.ParseAddr(name); err == nil && a.Is4() {
			// ParseAddr takes only four decimal fields without leading
			// zeros, which is a.String() already.
			return name, nil
		}
	}
	if !isASCII(name) {
		ascii, err := idna.Lookup.ToASCII(name)
		if err != nil {
			return "", &HostError{Host: input, Reason: "IDNA: " + err.Error()}
		}
		name = ascii
	}
	name = strings.ToLower(name)
	name = strings.TrimSuffix(name, ".")
	if err := checkDNSName(name); err != "" {
		return "", &HostError{Host: input, Reason: err}
	}
	if isIPv4(name) {
		// A dotted quad spelt with a trailing dot or full-width digits is
		// the address; "1.2.3.04", "0x7f.1" and friends are refused, being
		// read differently by different resolvers.
		if a, err := netip.ParseAddr(name); err == nil && a.Is4() {
			return a.String(), nil
		}
		return "", &HostError{Host: input, Reason: "non-canonical IPv4 literal"}
	}
	return name, nil
}

// checkDNSName reports what is wrong with a lower-case ASCII name, or "".
// Underscores are accepted, as resolvers do; labels are 1–63 octets, the name
// at most 253, and no label begins or ends with a hyphen.
func checkDNSName(name string) string {
	if name == "" {
		return "empty name"
	}
	if len(name) > 253 {
		return "name longer than 253 octets"
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" {
			return "empty label"
		}
		if len(label) > 63 {
			return "label longer than 63 octets"
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return "label begins or ends with a hyphen"
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Sprintf("forbidden character %q", c)
			}
		}
	}
	return ""
}

// isIPv4 reports whether name looks like an IPv4 address in any form a
// resolver might accept (all labels numeric or the last one numeric).
func isIPv4(name string) bool {
	last := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		last = name[i+1:]
	}
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		return true
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return true
}

// isKeyName reports whether s is already a key of a host name without a
// port: a valid lower-case ASCII DNS name (letters, digits, '-', '_' and
// '.', as [checkDNSName] accepts) with no trailing dot that cannot be read
// as an IPv4 address. Normalising such a name gives the name itself, so the
// callers return it without allocating. It is one pass over s.
func isKeyName(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	start := 0 // of the current label
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			n := i - start
			if n == 0 || n > 63 || s[start] == '-' || s[i-1] == '-' {
				return false
			}
			start = i + 1
			continue
		}
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return !isIPv4(s)
}

// isDigitsDots reports whether s is non-empty and only ASCII digits and
// dots: the only names (without ':') netip.ParseAddr may accept.
func isDigitsDots(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
