package feed

import "time"

// ExcerptLabel is the label every [Excerpt] carries, for readers to see.
const ExcerptLabel = "excerpt"

// Excerpt is a story kept only as its feed describes it, for when the article
// itself may not be read: the publisher refused, robots.txt forbids it, or the
// source has no full-text licence. It holds the headline, description
// and share image exactly as the feed gave them, a link to the original, and
// the label [ExcerptLabel]; nothing is completed or fetched to fill it.
type Excerpt struct {
	Label       string    // always ExcerptLabel
	Headline    string    // the item's title, as written
	Description string    // the item's description, as written
	Image       string    // the share image the feed names; "" when none
	ImageCredit string    // the credit the feed states for Image; "" when none
	Link        string    // the original article's address
	ID          string    // the publisher's identifier; "" when none
	Published   time.Time // zero when the feed gives none
}

// Excerpt returns the story as the feed describes it, labelled as an excerpt
// with a link to the original.
func (it Item) Excerpt() Excerpt {
	return Excerpt{
		Label:       ExcerptLabel,
		Headline:    it.Title,
		Description: it.Description,
		Image:       it.Image,
		ImageCredit: it.ImageCredit,
		Link:        it.Link,
		ID:          it.ID,
		Published:   it.Published,
	}
}
