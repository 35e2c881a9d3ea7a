package extract

import (
	"strings"
	"testing"
)

// bodyCase is a small page written for one failure class of body detection:
// what the body must hold and what it must not.
type bodyCase struct {
	name      string
	page      string
	want, not []string
}

func checkBodies(t *testing.T, cases []bodyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, err := HTML([]byte(c.page), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			text := a.Text()
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("body lacks %q:\n%s", w, text)
				}
			}
			for _, n := range c.not {
				if strings.Contains(text, n) {
					t.Errorf("body holds %q:\n%s", n, text)
				}
			}
		})
	}
}

// sidebarTeasers is a column of other stories' headlines, each a line of
// prose of its own, as news sites put beside a short post.
const sidebarTeasers = `<div id="rightcol"><ul>
<li><a href="/1"><span class="headline">Ten things nobody tells you about moving to a new city alone</span></a></li>
<li><a href="/2"><span class="headline">The mayor answers readers' questions about the new tram line</span></a></li>
<li><a href="/3"><span class="headline">Why the bakery on Elm Street still makes bread the old way</span></a></li>
<li><a href="/4"><span class="headline">A weekend guide to the riverside markets, stall by stall</span></a></li>
</ul><div id="tomorrow"><span>Tomorrow, in the weekend edition: gardens.</span></div></div>`

func TestBody_ImplausiblyThinOrWrongContainer(t *testing.T) {
	checkBodies(t, []bodyCase{{
		name: "ShortPostInContentContainerBeatsSidebarHeadlines",
		page: `<html><body><div id="page"><div class="post permalink"><h1>A cat in costume</h1>
<div class="post-body"><p>The cat wore a cape for Halloween, and the neighbours came out to see it walk down the street.</p></div></div>
` + sidebarTeasers + `</div></body></html>`,
		want: []string{"The cat wore a cape"},
		not:  []string{"weekend edition", "Elm Street"},
	}, {
		name: "ThinBodyMeasuredAgainWithoutNames",
		page: `<html><body><div class="region"><div id="article" class="cms">
<div class="module content js-social-images">
<p>It is a little late in the year for summer looks, but today marks an important day, and there is a look for it, simple and quick.</p>
<p>Start with a clear base coat, then paint stripes in two colours with a thin brush, and finish with a top coat that dries fast.</p>
</div>
<h2>More to love</h2><ul class="teasers"><li><a href="/a">Lip art</a> 432</li><li><a href="/b">Masquerade make-up</a> 370</li>
<li><a href="/c">Cupcake nails</a> 169</li><li><a href="/d">Colours of the rainbow</a> 143</li><li><a href="/e">Halloween effects</a> 260</li>
<li><a href="/f">The deep lip</a> 553</li><li><a href="/g">Down on the farm</a> 79</li><li><a href="/h">Clean beauty</a> 398</li></ul>
</div></div></body></html>`,
		want: []string{"a clear base coat", "summer looks"},
	}})
}
