package extract

import (
	"bytes"
	"mime"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// maxHeadScan is how far into a page lateCharset looks for a declaration
// the standard prescan (the first 1,024 bytes) did not reach.
const maxHeadScan = 64 << 10

// lateCharset looks for the name of a charset declared in a <meta> of the page's head,
// within its first maxHeadScan bytes, past the 1,024 bytes the standard
// prescan reads: pages that put scripts, styles or comments first declare
// it later. It stops at the first <body> or </head>, or at any element the
// body begins with, and returns the encoding's name, "" when nothing is declared there. A UTF-8
// or UTF-16 declaration is no use to bytes that are not valid UTF-8, and is
// passed over as the standard prescan does.
func lateCharset(b []byte) string {
	if len(b) > maxHeadScan {
		b = b[:maxHeadScan]
	}
	z := html.NewTokenizer(bytes.NewReader(b))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.EndTagToken:
			if name, _ := z.TagName(); atom.Lookup(name) == atom.Head {
				return ""
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch atom.Lookup(name) {
			case atom.Body, atom.P, atom.Div, atom.Article, atom.Main, atom.Table:
				return ""
			case atom.Meta:
				if !hasAttr {
					continue
				}
				if name := metaCharset(z); name != "" {
					return name
				}
			}
		}
	}
}

// metaCharset reads the charset a <meta> token declares: its charset
// attribute, or the charset parameter of an http-equiv=content-type's
// content.
func metaCharset(z *html.Tokenizer) string {
	var cs, content string
	equiv := false
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "charset":
			cs = string(v)
		case "content":
			content = string(v)
		case "http-equiv":
			equiv = strings.EqualFold(strings.TrimSpace(string(v)), "content-type")
		}
		if !more {
			break
		}
	}
	if cs == "" && equiv {
		if _, params, err := mime.ParseMediaType(content); err == nil {
			cs = params["charset"]
		}
	}
	if cs == "" {
		return ""
	}
	e, name := charset.Lookup(strings.TrimSpace(cs))
	if e == nil || name == "utf-8" || strings.HasPrefix(name, "utf-16") {
		return ""
	}
	return name
}
