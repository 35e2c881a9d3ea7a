package extract

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrNoID reports an article that states no identifier under the scheme
// asked for.
var ErrNoID = errors.New("extract: no identifier under that scheme")

// IDConflictError reports an article whose sources state different
// identifiers under one scheme, such as a shortlink's ?p=12 and a body
// class postid-13. V3 stops the fetch then: nothing is deposited.
type IDConflictError struct {
	Scheme string
	IDs    []Identifier // every identifier stated under Scheme
}

func (e *IDConflictError) Error() string {
	vals := make([]string, len(e.IDs))
	for i, id := range e.IDs {
		vals[i] = id.Value + " (" + id.Source + ")"
	}
	return fmt.Sprintf("extract: %s identifiers disagree: %s", e.Scheme, strings.Join(vals, ", "))
}

// ID returns the identifier a states under scheme (e.g. "wordpress"),
// once every source that states one agrees on it: the value a crawler
// compares with the feed's and the backlog's (V3). It returns ErrNoID when
// no source states one, and an *IDConflictError when two differ.
func (a *Article) ID(scheme string) (string, error) {
	var v string
	var all []Identifier
	conflict := false
	for _, id := range a.IDs {
		if id.Scheme != scheme {
			continue
		}
		all = append(all, id)
		if v != "" && id.Value != v {
			conflict = true
		}
		v = id.Value
	}
	switch {
	case len(all) == 0:
		return "", ErrNoID
	case conflict:
		return "", &IDConflictError{Scheme: scheme, IDs: all}
	}
	return v, nil
}

// The identifiers a page states for its article, each with its source
// (V3). Besides JSON-LD identifier and @id and microdata identifier and
// itemid (read with their items), these are read, each only where its
// form is particular to one CMS:
//
//   - WordPress: the shortlink <link rel=shortlink href="…?p=N">, the
//     REST link <link rel=alternate type=application/json
//     href="…/wp-json/wp/v2/posts/N"> (or ?rest_route=/wp/v2/posts/N),
//     and the body class postid-N;
//   - Drupal: the shortlink <link rel=shortlink href="…/node/N"> and the
//     data-history-node-id attribute Drupal's history module sets on a
//     node's full view.
//
// A source that states two different ids for one page states none. Arc
// XP and Ghost put no id in their pages' markup that is theirs alone (a
// generic data-post-id is as often a related story's), so neither is
// read.
func (p *pageScan) readIDs(c *cands) {
	var shortWP, shortDrupal, rest []string
	for _, l := range p.links {
		if l.anchor || l.href == "" || !(hasRel(l.rel, "shortlink") || hasRel(l.rel, "alternate") && l.typ == "application/json") {
			continue
		}
		u, err := url.Parse(p.resolve(l.href))
		if err != nil {
			continue
		}
		switch {
		case hasRel(l.rel, "shortlink"):
			if id := u.Query().Get("p"); isDigits(id) {
				shortWP = append(shortWP, id)
			} else if id, ok := strings.CutPrefix(u.Path, "/node/"); ok && isDigits(id) {
				shortDrupal = append(shortDrupal, id)
			}
		case hasRel(l.rel, "alternate") && l.typ == "application/json":
			if id, ok := wpRESTID(u); ok {
				rest = append(rest, id)
			}
		}
	}
	if id, ok := only(shortWP); ok {
		c.addID("wordpress", id, "link[rel=shortlink]")
	}
	if id, ok := only(rest); ok {
		c.addID("wordpress", id, "link[rel=alternate][type=application/json]")
	}
	var classes []string
	for _, cl := range strings.Fields(p.bodyClass) {
		if id, ok := strings.CutPrefix(cl, "postid-"); ok && isDigits(id) {
			classes = append(classes, id)
		}
	}
	if id, ok := only(classes); ok {
		c.addID("wordpress", id, "body[class~=postid-N]")
	}
	if id, ok := only(shortDrupal); ok {
		c.addID("drupal", id, "link[rel=shortlink]")
	}
	if id, ok := only(p.drupalNodes); ok && isDigits(id) {
		c.addID("drupal", id, "[data-history-node-id]")
	}
}

// wpRESTID reads the post id of a WordPress REST URL for one post.
func wpRESTID(u *url.URL) (string, bool) {
	path := u.Path
	if r := u.Query().Get("rest_route"); r != "" {
		path = "/wp-json" + r
	}
	i := strings.Index(path, "/wp-json/wp/v2/posts/")
	if i < 0 {
		return "", false
	}
	id := strings.TrimSuffix(path[i+len("/wp-json/wp/v2/posts/"):], "/")
	return id, isDigits(id)
}

// only returns the one distinct value of vs; false when there are none or
// several.
func only(vs []string) (string, bool) {
	if len(vs) == 0 {
		return "", false
	}
	for _, v := range vs[1:] {
		if v != vs[0] {
			return "", false
		}
	}
	return vs[0], true
}

func isDigits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
