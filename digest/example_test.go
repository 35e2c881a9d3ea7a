package digest_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/politefetch/politefetch/digest"
	"github.com/politefetch/politefetch/extract"
)

func ExampleSentences() {
	for _, s := range digest.Sentences(`Dr. Ruiz said the U.S. rate rose to 3.5 % in Jan. It was "a surprise." M. Dupont et Mme Martin ont signé le 3. Mai… Die Linie Nr. 5 fährt z.B. nachts.`) {
		fmt.Println(s)
	}
	// Output:
	// Dr. Ruiz said the U.S. rate rose to 3.5 % in Jan.
	// It was "a surprise."
	// M. Dupont et Mme Martin ont signé le 3. Mai…
	// Die Linie Nr. 5 fährt z.B. nachts.
}

func ExampleExtractive() {
	a := &extract.Article{Headline: extract.Field{Value: "City opens its first tram line"}}
	for _, p := range []string{
		"The city opened its first tram line on Monday after four years of works. The line links the station and the university.",
		"Officials expect 40,000 riders a day. Critics said the tram line cost too much.",
		"A bakery near the depot sold out of bread by noon.",
	} {
		a.Blocks = append(a.Blocks, extract.Block{Kind: extract.Paragraph, Text: p})
	}
	s, err := digest.Extractive{}.Summarize(context.Background(), a)
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(s.Sentences, "\n"))
	// Output:
	// The city opened its first tram line on Monday after four years of works.
	// The line links the station and the university.
}

func ExampleBuilder_Build() {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	pub := digest.Publisher{Source: "herald", Name: "The Herald", Category: "World"}
	stories := []digest.Story{{
		Publisher: pub, URL: "https://herald.example/strike", Headline: "Trains stop on Thursday",
		Published: now.Add(-15 * time.Minute), Excerpt: true,
		Description: "Half of all trains will run. Unions oppose the reform. More strikes may follow.",
	}}
	var b digest.Builder
	d, err := b.Build(context.Background(), now, stories, digest.Preferences{})
	if err != nil {
		panic(err)
	}
	for _, s := range d.Sections {
		for _, c := range s.Cards {
			fmt.Println(s.Category, "|", c.Brand, "|", c.Age, "|", c.Headline)
			fmt.Println(c.SummaryText())
			fmt.Println(c.Excerpt, c.URL)
		}
	}
	// Output:
	// World | The Herald | 15 mins ago | Trains stop on Thursday
	// Half of all trains will run. Unions oppose the reform.
	// true https://herald.example/strike
}
