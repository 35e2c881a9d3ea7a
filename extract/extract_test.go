package extract

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestHTML_TooLarge(t *testing.T) {
	t.Parallel()
	page := []byte("<p>" + strings.Repeat("a", 2000) + "</p>")
	if _, err := HTML(page, nil, &Options{MaxBytes: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if _, err := HTML(page, nil, &Options{MaxBytes: 4000}); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, DefaultMaxBytes+1)
	if _, err := HTML(big, nil, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("default cap: err = %v, want ErrTooLarge", err)
	}
}

// TestHTML_DeepNesting: a document nested deeper than the parser allows is
// refused with ErrMalformed, fast, and one just inside the limit is read.
func TestHTML_DeepNesting(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("<div>", 100_000) + "<p>" + strings.Repeat("word ", 50) + "</p>"
	if _, err := HTML([]byte(deep), nil, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
	inside := strings.Repeat("<div>", 400) + "<p>" + strings.Repeat("word, ", 50) + "</p>"
	a, err := HTML([]byte(inside), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = a // the paragraph sits below the detector's depth bound; reading it is not required
}

// TestHTML_TenMegabytesOfDivs: 10 MB of sibling <div>s (and 1 MB of nested
// ones), under a
// cap raised to allow them, is read without error; BenchmarkHostile shows the
// time and memory grow linearly with the size.
func TestHTML_TenMegabytesOfDivs(t *testing.T) {
	if testing.Short() {
		t.Skip("10 MB page")
	}
	t.Parallel()
	for _, page := range []string{hostilePage("flat", 10<<20), hostilePage("nested", 1<<20)} {
		a, err := HTML([]byte(page), nil, &Options{MaxBytes: 11 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(a.Text()); n > len(page) {
			t.Fatalf("text of %d bytes from a %d-byte page", n, len(page))
		}
	}
}

// hostilePage builds about size bytes of divs: "flat" siblings, each with a
// little text, or "nested" runs of 400 that close again.
func hostilePage(shape string, size int) string {
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString("<html><body>")
	for b.Len() < size {
		switch shape {
		case "flat":
			b.WriteString("<div>x, y</div>")
		default:
			b.WriteString(strings.Repeat("<div>", 400))
			b.WriteString("text, more text")
			b.WriteString(strings.Repeat("</div>", 400))
		}
	}
	b.WriteString("</body></html>")
	return b.String()
}

func BenchmarkHostile(b *testing.B) {
	for _, shape := range []string{"flat", "nested"} {
		for _, size := range []int{1 << 20, 4 << 20} {
			page := []byte(hostilePage(shape, size))
			b.Run(fmt.Sprintf("%s/%dMiB", shape, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(page)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := HTML(page, nil, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestHTML_Charset decodes a page declared ISO-8859-1 whose bytes are not
// UTF-8, and one whose Content-Type says so.
func TestHTML_Charset(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/body/latin1.html")
	if err != nil {
		t.Fatal(err)
	}
	a, err := HTML(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text(), "Le café de la gare a rouvert ses portes lundi, après trois mois") {
		t.Errorf("declared charset not decoded: %q", a.Text())
	}
	page := []byte("<p>" + strings.Repeat("Caf\xe9 cr\xe8me, ", 10) + "</p>")
	a, err = HTML(page, nil, &Options{ContentType: "text/html; charset=windows-1252"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text(), "Café crème") {
		t.Errorf("Content-Type charset not decoded: %q", a.Text())
	}
}

// BenchmarkHTML reads each page of testdata/body: parse, metadata and body.
func BenchmarkHTML(b *testing.B) {
	for _, name := range []string{"news", "blog", "layout-table"} {
		page, err := os.ReadFile("testdata/body/" + name + ".html")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := HTML(page, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
