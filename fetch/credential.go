package fetch

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Credential is one request header carrying a secret, sent only over https and
// only to Hosts. Its value is a [Secret]: no rendering of a Credential, or of a
// Policy or a Source holding one, shows it; and it is never sent after a
// redirect to a host outside Hosts, nor on a plain-http request, whatever the
// policy.
type Credential struct {
	Header string   // the header's name, e.g. "Authorization"; empty: no credential
	Value  Secret   // the header's value: see NewSecret
	Hosts  []string // where it may go, as in Policy.Admitted; empty: nowhere
}

// Secret is a credential's value. Its only reading is [Secret.Reveal]: every
// other rendering (fmt with any verb, encoding/json, encoding/xml,
// encoding/gob, YAML, log/slog, a struct holding one in an unexported field
// printed by reflection) shows "[redacted]", or the address of the value. The
// zero Secret is empty. Make one with [NewSecret]; a Secret is immutable and
// may be copied.
type Secret struct {
	// v is behind a pointer so that a printer walking a struct by
	// reflection, where no method of an unexported field can be called,
	// finds an address and not the text.
	v *string
}

// NewSecret returns a Secret holding s.
func NewSecret(s string) Secret {
	if s == "" {
		return Secret{}
	}
	return Secret{v: &s}
}

// Reveal returns the secret's text: for the header on the wire, and for
// nothing else.
func (s Secret) Reveal() string {
	if s.v == nil {
		return ""
	}
	return *s.v
}

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == nil || *s.v == "" }

// redacted is what every rendering of a Secret shows.
const redacted = "[redacted]"

// shown is what a Secret renders as: "[redacted]", or "" when it is empty.
func (s Secret) shown() string {
	if s.IsZero() {
		return ""
	}
	return redacted
}

// String returns "[redacted]" ("" for an empty Secret).
func (s Secret) String() string { return s.shown() }

// GoString returns "[redacted]" ("" for an empty Secret), for %#v.
func (s Secret) GoString() string { return s.shown() }

// Format writes "[redacted]" ("" for an empty Secret) whatever the verb and
// flags: %v, %+v, %#v, %s, %q, %d, %t, %x and any other.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", s.shown())
		return
	}
	_, _ = f.Write([]byte(s.shown()))
}

// MarshalText returns "[redacted]", for encoding/xml, YAML and any encoder
// of text.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.shown()), nil }

// MarshalJSON returns "[redacted]" as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.shown()) }

// MarshalYAML returns "[redacted]": it has the shape of a YAML encoder's
// Marshaler (go.yaml.in/yaml and its forks), without importing one.
func (s Secret) MarshalYAML() (any, error) { return s.shown(), nil }

// GobEncode returns "[redacted]": a Secret never leaves the process by gob.
func (s Secret) GobEncode() ([]byte, error) { return []byte(s.shown()), nil }

// LogValue returns "[redacted]", whatever the log/slog handler.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.shown()) }

// String hides the value, so a Credential can be printed safely, alone or in a
// Policy or a Source.
func (c Credential) String() string {
	if c.Header == "" {
		return "no credential"
	}
	return c.Header + ": " + redacted + " for " + strings.Join(c.Hosts, ",")
}

// GoString hides the value from %#v, alone or inside a Policy or a Source.
func (c Credential) GoString() string {
	return fmt.Sprintf("fetch.Credential{Header:%q, Value:%q, Hosts:%#v}", c.Header, c.Value.shown(), c.Hosts)
}

// LogValue hides the value from log/slog, whatever the handler.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(slog.String("header", c.Header), slog.String("value", c.Value.shown()),
		slog.Any("hosts", c.Hosts))
}

// CredentialError is a credential that cannot or may not be sent: the field at
// fault and why. It never holds the value. It matches [ErrInvalidCredential].
type CredentialError struct {
	Field  string // "Header" or "Value"
	Reason string
}

// Error names the field and says why.
func (e *CredentialError) Error() string {
	return "fetch: invalid credential: " + e.Field + ": " + e.Reason
}

// Is matches ErrInvalidCredential.
func (e *CredentialError) Is(target error) bool { return target == ErrInvalidCredential }

// ownedHeaders are the headers the chain itself sets, or that frame or route
// the request: a credential may not replace or add one.
var ownedHeaders = map[string]bool{
	"User-Agent": true, "Accept": true, "Accept-Encoding": true, "Accept-Charset": true, "Accept-Language": true,
	"Host": true, "Cookie": true, "Cookie2": true, "Referer": true, "Origin": true,
	"If-None-Match": true, "If-Modified-Since": true, "If-Match": true, "If-Unmodified-Since": true, "If-Range": true,
	"Range": true, "Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Te": true, "Trailer": true,
	"Upgrade": true, "Expect": true, "Via": true, "Forwarded": true, "Max-Forwards": true,
	"Proxy-Authorization": true, "Proxy-Connection": true, "Cache-Control": true, "Pragma": true,
	"Date": true, "Http2-Settings": true,
}

// owned reports whether the chain owns the (canonical) header name h.
func owned(h string) bool {
	return ownedHeaders[h] || strings.HasPrefix(h, "Content-") || strings.HasPrefix(h, "Proxy-") ||
		strings.HasPrefix(h, "Sec-") || strings.HasPrefix(h, "X-Forwarded-")
}

// Validate returns nil when c can be sent as it is, and otherwise a
// *[CredentialError] naming the field at fault: a Header that is not a valid
// header name (an RFC 9110 token), or one the chain owns (User-Agent, Accept,
// Accept-Encoding, Host, Cookie, Referer, the conditional headers,
// Connection, Transfer-Encoding, Content-* and the like); a Value without a
// Header, or one net/http would refuse to send (a control character such as
// NUL, CR or LF, or DEL). The zero Credential (no credential) is valid.
func (c Credential) Validate() error {
	if c.Header == "" {
		if !c.Value.IsZero() {
			return &CredentialError{Field: "Header", Reason: "a value is set without a header name"}
		}
		return nil
	}
	if !httpguts.ValidHeaderFieldName(c.Header) {
		// Never echo the name either: a secret may have been put there.
		return &CredentialError{Field: "Header", Reason: "not a valid header name (a token of letters, digits and !#$%&'*+-.^_`|~)"}
	}
	if h := textproto.CanonicalMIMEHeaderKey(c.Header); owned(h) {
		return &CredentialError{Field: "Header", Reason: h + " is a header the chain sets itself, or that frames the request"}
	}
	if !httpguts.ValidHeaderFieldValue(c.Value.Reveal()) {
		// Never echo the value.
		return &CredentialError{Field: "Value", Reason: "holds a character a header value cannot carry (a control character or DEL)"}
	}
	return nil
}

// CheckCredential returns nil when the policy may send c, and otherwise a
// *[CredentialError] naming the field at fault: c's own faults
// ([Credential.Validate]), or any credential under a policy with
// NoCredential (the strict news crawler sends none). [New] checks the
// Policy's own Credential with it; a configuration that names a credential
// for a source checks it here before the Client ever sees it.
func (p *Policy) CheckCredential(c Credential) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if p.NoCredential && c.Header != "" {
		return &CredentialError{Field: "Header", Reason: "the policy sends no credential"}
	}
	return nil
}

// sendable reports whether c may go on a request to scheme: https only.
func (c *Credential) sendable(scheme string) bool {
	return c.Header != "" && strings.EqualFold(scheme, "https")
}
