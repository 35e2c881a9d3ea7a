package fetch

import (
	"fmt"
	"net/http"

	"github.com/politefetch/politefetch/provenance"
)

// Result is one Get's answer: a response the server gave, whatever its status. A
// refusal the server makes (401, 403, 429, 503, a challenge page) is a Result, which
// the ledger has already learned from; a refusal we make is a *[RefusedError] and
// no Result.
type Result struct {
	URL            string           // the URL requested, after tracking parameters were stripped
	FinalURL       string           // the URL of the last hop, after redirects
	Status         int              // the final status code
	Header         http.Header      // the final response's header
	Body           []byte           // the envelope: the body with its content-codings removed; nil for a 304 or when unreadable
	MediaType      string           // the media type of Content-Type, lower case without parameters; "" when missing
	Wire           int64            // body bytes read from the wire
	Decoded        int64            // len(Body)
	CodingsRemoved []string         // the content-codings removed, in the order they were applied
	NotModified    bool             // a 304: the validators still hold, nothing was read
	Hops           []provenance.Hop // every request on the wire, in order, redirects first; each Chain is shared with its connection's other hops: read only
	// Sent is the header of the final hop's request as it was written on
	// the wire, Host included, each field in the order written (net/http's
	// WroteHeaderField hook), for a record of what was asked (a WARC
	// request record). The value of the credential's header, if one was
	// sent, is "[redacted]": the secret is never kept here. nil when the
	// request was never written.
	Sent    http.Header
	Proof   *provenance.Proof
	Timings Timings

	bodyErr error // why the body could not be read in full, or nil
}

// Depositable returns nil when the result may be deposited: a final 200,
// received in full, every content-coding known and removed, a media type present.
// Otherwise it returns why not, matching ErrNotOK, ErrTruncated, ErrUnknownCoding,
// ErrWireTooLarge, ErrDecodedTooLarge or ErrNoMediaType.
func (r *Result) Depositable() error {
	switch {
	case r.bodyErr != nil:
		return r.bodyErr
	case r.Status != http.StatusOK:
		return fmt.Errorf("%w: %d", ErrNotOK, r.Status)
	case r.MediaType == "":
		return ErrNoMediaType
	}
	return nil
}

// Complete reports whether Depositable returns nil.
func (r *Result) Complete() bool { return r.Depositable() == nil }
