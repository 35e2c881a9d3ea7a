package provenance

import (
	"errors"
	"strconv"
)

// Sentinel errors, one per check. A failed [Verify] returns a [*CheckError]
// that wraps exactly one of them.
var (
	// ErrSchema reports a proof that is not well formed: wrong schema name,
	// missing read instant, malformed digest, URL, IP or certificate.
	ErrSchema = errors.New("provenance: malformed proof")
	// ErrNotHTTPS reports a URL (requested, final or a hop) that is not https.
	ErrNotHTTPS = errors.New("provenance: url is not https")
	// ErrUserinfo reports a URL carrying user information (user:pass@).
	ErrUserinfo = errors.New("provenance: url has userinfo")
	// ErrIPLiteral reports a URL whose host is an IP address, not a name.
	ErrIPLiteral = errors.New("provenance: url host is an ip literal")
	// ErrHopsBroken reports hops that do not chain: the first hop is not the
	// requested URL, a redirect's Location does not lead to the next hop, the
	// last hop is not the final URL or is not a success, or a handshake
	// happened after the read.
	ErrHopsBroken = errors.New("provenance: hops do not chain")
	// ErrTooManyHops reports more hops than the limit.
	ErrTooManyHops = errors.New("provenance: too many hops")
	// ErrNoChain reports a hop without a certificate chain.
	ErrNoChain = errors.New("provenance: no certificate chain")
	// ErrChainUntrusted reports a chain that does not lead to a root of the
	// pool: it reaches a CA certificate the pool does not recognise.
	ErrChainUntrusted = errors.New("provenance: chain does not reach a trusted root")
	// ErrMissingIntermediate reports a chain whose leaf was presented without
	// its issuer, which is not a root of the pool either.
	ErrMissingIntermediate = errors.New("provenance: chain is missing an intermediate")
	// ErrExpired reports a certificate of the chain expired at the read instant.
	ErrExpired = errors.New("provenance: certificate expired at the read instant")
	// ErrNotYetValid reports a certificate of the chain not yet valid at the
	// read instant.
	ErrNotYetValid = errors.New("provenance: certificate not yet valid at the read instant")
	// ErrNameMismatch reports a leaf that does not cover the host name (its
	// A-label), or an SNI that is not the host name.
	ErrNameMismatch = errors.New("provenance: certificate does not cover the host name")
	// ErrKeyUsage reports a chain not valid for TLS server authentication.
	ErrKeyUsage = errors.New("provenance: certificate not valid for server authentication")
	// ErrAnchorMismatch reports a proof whose recorded anchor is not the root
	// the chain reaches.
	ErrAnchorMismatch = errors.New("provenance: chain does not reach the recorded anchor")
	// ErrPrivateIP reports a connected IP that is not public.
	ErrPrivateIP = errors.New("provenance: connected ip is not public")
	// ErrDigestMismatch reports an envelope whose SHA-256 is not the proof's.
	ErrDigestMismatch = errors.New("provenance: envelope digest mismatch")
	// ErrLengthMismatch reports an envelope whose length is not the proof's.
	ErrLengthMismatch = errors.New("provenance: envelope length mismatch")
)

// Names of the checks, as reported in [CheckError.Check].
const (
	CheckSchema = "schema"
	CheckURL    = "url"
	CheckHops   = "hops"
	CheckIP     = "ip"
	CheckSNI    = "sni"
	CheckChain  = "chain"
	CheckAnchor = "anchor"
	CheckLength = "length"
	CheckDigest = "digest"
)

// CheckError says which check of a proof failed, and at which hop. Err is one
// of the package's sentinel errors; Cause, if not nil, is the underlying error
// (for example an [x509.UnknownAuthorityError]). Both are reachable with
// [errors.Is] and [errors.As].
type CheckError struct {
	Hop    int    // index into Proof.Hops, or -1 for the proof as a whole
	Check  string // one of the Check… constants
	Detail string // a human-readable detail, may be empty
	Err    error  // the sentinel
	Cause  error  // the underlying error, may be nil
}

// Error describes the failed check.
func (e *CheckError) Error() string {
	s := e.Err.Error()
	if e.Hop >= 0 {
		s += " (hop " + strconv.Itoa(e.Hop) + ", " + e.Check + ")"
	} else {
		s += " (" + e.Check + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinel and, if any, the underlying cause.
func (e *CheckError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

func fail(hop int, check string, sentinel error, detail string, cause error) *CheckError {
	return &CheckError{Hop: hop, Check: check, Detail: detail, Err: sentinel, Cause: cause}
}
