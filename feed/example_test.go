package feed_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/politefetch/politefetch/feed"
)

// Reading a feed twice: the second read sends the validators and gets a 304,
// which costs no parse (D4). Trigger mode (V1) keeps references only.
func ExampleReader_Read() {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, `<rss version="2.0"><channel><title>Example</title>
<item><title>Budget</title><link>/2026/budget?utm_source=rss</link><guid isPermaLink="false">https://example.test/?p=123</guid>
<pubDate>Mon, 30 Nov 2026 08:00:00 GMT</pubDate></item>
<item><title>Undated</title><link>/2026/undated</link><guid isPermaLink="false">https://example.test/?p=122</guid></item>
</channel></rss>`)
	}))
	defer srv.Close()

	parses := 0
	r := &feed.Reader{Client: srv.Client(), RefsOnly: true, OnParse: func(string) { parses++ }}
	ctx := context.Background()
	res, err := r.Read(ctx, srv.URL+"/feed.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, it := range res.Feed.Items {
		ref := it.Ref()
		fmt.Printf("id=%s path=%s published=%v title=%q\n", ref.ID, ref.URL[len(srv.URL):], ref.Published, it.Title)
	}
	res, err = r.Read(ctx, srv.URL+"/feed.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("not modified:", res.NotModified, "parses:", parses)
	// Output:
	// id=123 path=/2026/budget published=2026-11-30 08:00:00 +0000 UTC title=""
	// id=122 path=/2026/undated published=0001-01-01 00:00:00 +0000 UTC title=""
	// not modified: true parses: 1
}
