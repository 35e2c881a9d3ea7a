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

func TestBody_SectionsOfOneArticle(t *testing.T) {
	checkBodies(t, []bodyCase{{
		name: "RecipeKeepsIntroductionIngredientsMethodAndNotes",
		page: `<html><body><nav><a href="/">Home</a> <a href="/recipes">Recipes</a></nav><main><div class="recipe">
<div class="intro"><p>This loaf is the one we bake every Sunday: a crisp crust, a soft crumb, and hardly any work on the day, since the dough rises overnight.</p></div>
<div class="ingredients"><h2>Ingredients</h2><ul><li>500 g strong white flour</li><li>10 g salt</li><li>7 g dried yeast</li><li>350 ml warm water</li></ul></div>
<div class="method"><h2>Method</h2><p>Mix the flour, salt and yeast in a large bowl, then pour in the water and stir until it comes together, shaggy and sticky.</p>
<p>Knead for ten minutes, until smooth, then leave it covered in a warm place for an hour, or until it has doubled in size.</p>
<p>Shape it into a round, put it on a floured tray, and bake at 220 degrees for thirty minutes, until it sounds hollow when tapped.</p></div>
<div class="notes"><h2>Baking notes</h2><table><tr><td>Oven</td><td>220 °C, fan 200 °C</td></tr><tr><td>Keeps</td><td>three days, wrapped</td></tr></table></div>
</div></main><footer><p>Copyright the bakery, all rights reserved, every recipe tested twice.</p></footer></body></html>`,
		want: []string{"every Sunday", "500 g strong white flour", "Knead for ten minutes", "220 °C, fan 200 °C"},
		not:  []string{"all rights reserved"},
	}, {
		name: "GuideKeepsLeadTableAndFAQ",
		page: `<html><body><div id="wrap"><article><h1>Choosing a tent</h1>
<p class="lead">A tent is the one piece of kit you cannot improvise, so it pays to choose it with care, for the season and for the people in it.</p>
<h2>Sizes at a glance</h2>
<table><tr><th>People</th><th>Floor</th><th>Weight</th></tr><tr><td>1</td><td>2.1 m²</td><td>1.2 kg</td></tr><tr><td>2</td><td>2.8 m²</td><td>1.8 kg</td></tr><tr><td>4</td><td>5.5 m²</td><td>4.1 kg</td></tr></table>
<h2>Questions readers ask</h2>
<dl><dt>Is a double wall worth the weight?</dt><dd>Yes, in any weather with rain, since condensation stays off your sleeping bag.</dd>
<dt>Do I need a footprint?</dt><dd>On rough ground it doubles the life of the floor, so for most people it is.</dd></dl>
</article></div></body></html>`,
		want: []string{"cannot improvise", "2.8 m²", "double wall worth the weight", "condensation stays off"},
	}})
}

// articleParas is a plain article of three paragraphs for the boilerplate
// cases to sit beside.
const articleParas = `<p>The council voted on Tuesday to keep the library open on Sundays, after a petition signed by four thousand residents.</p>
<p>The cost, about forty thousand a year, will come from the parking budget, which ran a surplus for the third year running.</p>
<p>Staff said Sunday is the busiest day for families, and that the reading room is often full before noon.</p>`

func TestBody_BoilerplateBoxesLeftOut(t *testing.T) {
	checkBodies(t, []bodyCase{{
		name: "DownloadAsPDFAppPromoAndCopyright",
		page: `<html><body><div id="main"><div class="entry">` + articleParas + `
<div class="pdf-download"><p>Download this article as a PDF, to read it later, offline, wherever you are going next.</p></div>
<div class="app-box"><p>Read every story first in our app, with alerts for the news that matters to you, free to install.</p></div>
</div><div class="copyright"><p>Copyright, the city paper, its writers and photographers: no part may be reproduced without permission.</p></div></div></body></html>`,
		want: []string{"keep the library open", "reading room"},
		not:  []string{"as a PDF", "in our app", "reproduced"},
	}})
}

// newsletterText is a pop-up's pitch, long enough to read as an article.
const newsletterText = `<p>Join forty thousand readers who start their day with our morning briefing, written by the editors, every weekday at six.</p>
<p>You will get the five stories that matter, a long read for the weekend, and a puzzle, and you can leave with one click, whenever you like.</p>
<p>We never share your address with anyone, and we will not send you offers from partners, advertisers or anybody else, ever.</p>
<p>Sign up now and get our guide to the city's hidden restaurants, free, as a thank-you for joining, the day your first briefing arrives.</p>`

func TestBody_HiddenPopupAndTemplateBodies(t *testing.T) {
	checkBodies(t, []bodyCase{{
		name: "PopupByClassIsNotTheArticle",
		page: `<html><body><div class="newsletter-popup"><div class="inner">` + newsletterText + newsletterText + `</div></div>
<div id="main"><div>` + articleParas + `</div></div></body></html>`,
		want: []string{"keep the library open"},
		not:  []string{"morning briefing"},
	}, {
		name: "DialogRoleIsNotTheArticle",
		page: `<html><body><div role="dialog" class="box"><div class="inner">` + newsletterText + newsletterText + `</div></div>
<div id="main"><div>` + articleParas + `</div></div></body></html>`,
		want: []string{"keep the library open"},
		not:  []string{"morning briefing"},
	}, {
		name: "BloggerPostInTextTemplateScript",
		page: `<html><body><div class="header"><h1>Notes from the allotment</h1><p class="tagline">Growing things, badly, since 2009.</p></div>
<div class="main"><div class="post"><script type="text/template">
<div class="post-body entry-content"><p>The leeks went in on Saturday, a row of forty, each dropped into a hole made with the handle of an old spade.</p>
<p>Watering them in is the whole trick: fill each hole to the brim, and leave the soil to settle around the stems by itself.</p></div>
</script></div></div><div class="sidebar"><h2>Archive</h2><ul><li><a href="/2024">2024</a></li><li><a href="/2023">2023</a></li></ul></div></body></html>`,
		want: []string{"The leeks went in on Saturday", "Watering them in"},
	}})
}
