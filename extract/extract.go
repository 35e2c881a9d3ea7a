package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// DefaultMaxBytes is the largest envelope [HTML] reads when [Options.MaxBytes]
// is zero: 8 MiB, several times the largest article pages seen in practice.
// A page beyond it is refused with [ErrTooLarge], not truncated: an article
// cut short is not the article. The parsed tree takes memory in proportion to
// the envelope, several tens of bytes per byte for a page of nothing but
// empty elements, so the cap is also what bounds memory.
const DefaultMaxBytes = 8 << 20

// maxDepth is how deep the body detector descends below <body>. The parser
// itself refuses documents nested deeper than 512 elements.
const maxDepth = 400

// ErrTooLarge reports an envelope larger than the cap in [Options.MaxBytes].
var ErrTooLarge = errors.New("extract: envelope larger than the cap")

// ErrMalformed reports a document the HTML parser refuses, such as one nested
// deeper than the parser's limit. The parser's own error is wrapped.
var ErrMalformed = errors.New("extract: document refused by the HTML parser")

// Options tune [HTML]. The zero value (or a nil *Options) is the default for
// every field.
type Options struct {
	// ContentType is the Content-Type header the envelope was served with;
	// its charset parameter decides the decoding of an envelope that is not
	// valid UTF-8 (one that is, is read as UTF-8 whatever is declared). "":
	// the charset is sniffed from the bytes (byte-order mark, <meta
	// charset> in the first 1,024 bytes, else in the head's first 64 KiB),
	// and windows-1252 is assumed when nothing is declared.
	ContentType string
	// MaxBytes caps the envelope's length. 0: DefaultMaxBytes. A longer
	// envelope returns ErrTooLarge before any parsing.
	MaxBytes int
}

func (o *Options) maxBytes() int {
	if o == nil || o.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return o.MaxBytes
}

func (o *Options) contentType() string {
	if o == nil {
		return ""
	}
	return o.ContentType
}

// HTML reads an article from a page: envelope is the response body as
// received (content-codings already removed), pageURL the address it was read
// from, used to resolve relative links (nil: links are kept as written). The
// page is parsed once; the body's blocks and the metadata are both read from
// that one tree. opts may be nil.
//
// The work is linear in the envelope's length and bounded by
// [Options.MaxBytes]; an envelope beyond it returns [ErrTooLarge], and one
// the parser refuses returns an error matching [ErrMalformed]. A page with no
// detectable body returns an Article with no Blocks and a nil error.
// HTML is safe for concurrent use.
func HTML(envelope []byte, pageURL *url.URL, opts *Options) (*Article, error) {
	if max := opts.maxBytes(); len(envelope) > max {
		return nil, fmt.Errorf("%w: %d bytes, cap %d", ErrTooLarge, len(envelope), max)
	}
	doc, err := parse(envelope, opts.contentType())
	if err != nil {
		return nil, err
	}
	a := &Article{}
	readMeta(doc, pageURL, a)
	readBody(doc, pageURL, a, opts)
	return a, nil
}

// parse decodes the envelope's charset when it is not UTF-8 and parses it.
// Bytes that are valid UTF-8 are read as UTF-8 whatever the page declares:
// legacy-encoded text is almost never valid UTF-8 beyond ASCII, and pages
// saved by a browser often keep a stale declaration.
func parse(envelope []byte, contentType string) (*html.Node, error) {
	var r io.Reader = bytes.NewReader(envelope)
	if !utf8.Valid(envelope) {
		enc, name, certain := charset.DetermineEncoding(envelope, contentType)
		if !certain && name == "windows-1252" {
			// Nothing in the first 1,024 bytes, or windows-1252 itself:
			// look further into the head before taking the default.
			if late := lateCharset(envelope); late != "" {
				enc, _ = charset.Lookup(late)
			}
		}
		r = enc.NewDecoder().Reader(r)
	}
	doc, err := html.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return doc, nil
}
