// Package sharecheck decides whether a story may use an article's share
// image (the one the page or the feed names: og:image, JSON-LD image, the
// feed's enclosure or media element), by reading it once through the fetch
// chain and looking at its bytes.
//
// A [Checker] reads each image URL once and remembers the answer, for as
// many URLs as its bounded cache holds and for a bounded time (a day for
// what the bytes showed, minutes for a refusal or a failure that may pass):
// a story that names an image already checked costs no request, and
// concurrent checks of one URL share one read. The read is an ordinary Get of the Client it is given, as
// fetch.KindImage, so it goes out under the same identity, paced with every
// other request to the image's host, after that host's robots.txt (read and
// obeyed exactly as for pages: under the strict news policy a robots.txt
// that refuses or cannot be reached means the image is not used), with the
// ledger's cool-downs and the chain's address checks. The article page is
// sent as the Referer, redirects are followed within the policy's image
// limit (three under fetch.StrictNews), and the body is read within
// [Checker.MaxBytes].
//
// The bytes decide the format, never the Content-Type: only JPEG, PNG,
// WebP and GIF are usable, each recognised by its magic number and then
// by its header decoder for the dimensions (an HTML page sent as
// image/jpeg is not an image). The bytes are dropped as soon as they are
// judged: a [Result] says whether the image is usable, and if not, why (an
// *[UnusableError] with its [Reason]), its format and dimensions, the final
// URL to link to after redirects, and the credit the page states. Readers
// get a link to the publisher's image, never a copy.
package sharecheck
