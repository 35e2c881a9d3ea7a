package fetch

import (
	"net/http"

	"github.com/politefetch/politefetch/internal/decode"
)

// WithMaxBody lowers the policy's MaxWire and MaxDecoded to n bytes for this
// Get, for a read that must stay small whatever the policy allows (a share
// image checked before a story links to it). It never raises them; n <= 0
// leaves the policy's caps. A body past the cap fails as the policy's caps do,
// with ErrWireTooLarge or ErrDecodedTooLarge, once n bytes have been read.
func WithMaxBody(n int64) GetOption { return func(c *callInfo) { c.maxBody = n } }

// bodyLimits returns the caps for the body of resp: the policy's, lowered by
// the call's WithMaxBody.
func (c *Client) bodyLimits(resp *http.Response) decode.Limits {
	l := decode.Limits{MaxWire: c.policy.MaxWire, MaxDecoded: c.policy.MaxDecoded}
	if call := callFrom(resp.Request.Context()); call != nil && call.maxBody > 0 {
		l.MaxWire = min(l.MaxWire, call.maxBody)
		l.MaxDecoded = min(l.MaxDecoded, call.maxBody)
	}
	return l
}
