package extract

import (
	"strings"
	"testing"

	"golang.org/x/net/html/charset"
)

// lateHead is a head whose declaration comes after more than 1,024 bytes of
// script and style, past the standard prescan.
func lateHead(pad int, decl string) string {
	return "<html><head><title>t</title><script>var config = {" + strings.Repeat(" ", pad) + "};</script>" + decl + "</head>"
}

func TestHTML_CharsetDeclaredLateInTheHead(t *testing.T) {
	cases := []struct {
		name, page, want string
	}{{
		name: "Windows1250PastByte2000",
		// "Příliš žluťoučký kůň úpěl ďábelské ódy." in windows-1250.
		page: lateHead(1960, `<meta http-equiv="Content-Type" content="text/html; charset=windows-1250">`) +
			"<body><p>P\xf8\xedli\x9a \x9elu\x9dou\xe8k\xfd k\xf9\xf2 \xfap\xecl \xef\xe1belsk\xe9 \xf3dy, and more words to make a paragraph.</p></body></html>",
		want: "Příliš žluťoučký kůň úpěl ďábelské ódy",
	}, {
		name: "GB2312PastByte1100",
		// "中文新闻" in GB2312.
		page: lateHead(1100, `<meta charset="gb2312">`) +
			"<body><p>\xd6\xd0\xce\xc4\xd0\xc2\xce\xc5, a paragraph of news that is long enough to be read as one.</p></body></html>",
		want: "中文新闻",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(c.page[:1024], "<script>") || strings.Contains(c.page[:1024], "charset") {
				t.Fatal("the declaration must lie past the first 1,024 bytes")
			}
			a, err := HTML([]byte(c.page), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Text(); !strings.Contains(got, c.want) {
				t.Errorf("Text() = %q, want it to hold %q", got, c.want)
			}
		})
	}
}

// A declaration inside the body is not the page's: nothing is declared in
// the head, so windows-1252 is assumed.
func TestHTML_CharsetInTheBodyIsNotRead(t *testing.T) {
	page := lateHead(1100, "") + "<body><p>Caf\xe9 prices rose again this spring, by a tenth, the owners said.</p><meta charset=\"windows-1250\"></body></html>"
	a, err := HTML([]byte(page), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Text(); !strings.Contains(got, "Café prices") {
		t.Errorf("Text() = %q", got)
	}
}

func TestText_SoftHyphensRemoved(t *testing.T) {
	page := "<html><body><article><h2>Donau\u00addampf\u00adschiff</h2><p>Die Donau\u00addampf\u00adschiff\u00adfahrts\u00adgesellschaft f&shy;uhr, wie jeden Sommer, von Wien bis Budapest.</p>" +
		"<pre>Fahr\u00adplan</pre></article></body></html>"
	a, err := HTML([]byte(page), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := a.Text()
	if strings.Contains(text, "\u00ad") {
		t.Errorf("Text() keeps a soft hyphen: %q", text)
	}
	for _, w := range []string{"Donaudampfschifffahrtsgesellschaft fuhr", "Fahrplan"} {
		if !strings.Contains(text, w) {
			t.Errorf("Text() = %q, want %q", text, w)
		}
	}
}

// FuzzLateCharset: any bytes give "" or the name of an encoding the
// charset package knows, never UTF-8 or UTF-16.
func FuzzLateCharset(f *testing.F) {
	for _, s := range []string{
		"",
		lateHead(1100, `<meta charset="gb2312">`),
		`<meta http-equiv=content-type content="text/html;charset=koi8-r">`,
		`<meta http-equiv="Content-Type" content="text/html; charset=">`,
		`<meta charset=utf-16le><meta charset=iso-8859-2>`,
		`<!-- <meta charset=shift_jis> --><meta charset=euc-kr`,
		`<head><script>"<meta charset=big5>"</script></head><meta charset=big5>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		name := lateCharset(b)
		if name == "" {
			return
		}
		if e, canon := charset.Lookup(name); e == nil || canon != name || name == "utf-8" || strings.HasPrefix(name, "utf-16") {
			t.Fatalf("lateCharset = %q (Lookup: %v, %q)", name, e, canon)
		}
	})
}
