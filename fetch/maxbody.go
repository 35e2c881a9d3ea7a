package fetch

import (
	"net/http"

	"github.com/politefetch/politefetch/internal/decode"
)

// bodyLimits returns the caps for the body of resp: the policy's, lowered by
// the call's GetOptions.MaxBody.
func (c *Client) bodyLimits(resp *http.Response) decode.Limits {
	l := decode.Limits{MaxWire: c.policy.MaxWire, MaxDecoded: c.policy.MaxDecoded}
	if call := callFrom(resp.Request.Context()); call != nil && call.maxBody > 0 {
		l.MaxWire = min(l.MaxWire, call.maxBody)
		l.MaxDecoded = min(l.MaxDecoded, call.maxBody)
	}
	return l
}
