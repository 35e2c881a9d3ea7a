package extract

import (
	"errors"
	"testing"
)

// TestID_V3_SourcesMustAgree: an id is given only when every source that
// states one under the scheme gives the same string.
func TestID_V3_SourcesMustAgree(t *testing.T) {
	t.Parallel()
	agree := `<html><head><link rel="shortlink" href="/?p=4411"></head><body class="single postid-4411"><p>x</p></body></html>`
	a := metaOf(t, []byte(agree), goldenPage)
	if v, err := a.ID("wordpress"); v != "4411" || err != nil {
		t.Errorf("ID = %q, %v; want 4411", v, err)
	}
	if _, err := a.ID("drupal"); !errors.Is(err, ErrNoID) {
		t.Errorf("drupal ID: %v, want ErrNoID", err)
	}

	differ := `<html><head><link rel="shortlink" href="/?p=12"></head><body class="postid-13"><p>x</p></body></html>`
	a = metaOf(t, []byte(differ), goldenPage)
	_, err := a.ID("wordpress")
	var ce *IDConflictError
	if !errors.As(err, &ce) || ce.Scheme != "wordpress" || len(ce.IDs) != 2 {
		t.Fatalf("ID of a page whose sources differ: %v", err)
	}
	if want := "extract: wordpress identifiers disagree: 12 (link[rel=shortlink]), 13 (body[class~=postid-N])"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
