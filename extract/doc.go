// Package extract turns a page (or a CMS API's JSON) into an [Article]: the
// body as ordered blocks and the metadata the publisher stated, each field
// copied from where the publisher put it and none ever completed. It never
// fetches anything.
//
// # Body
//
// [HTML] parses the page once and finds the article's body by measuring
// every element below <body> in one pass: its text, the share of it inside
// links, and its paragraphs of prose (a paragraph of 25 bytes or more credits
// its container in full and the next two above it by a half and a third,
// more for commas and length). Boilerplate is left out before it is
// measured: scripts, media, form controls and hidden elements always; an
// element whose class or id names comments always; one named like a widget
// (share, social, related, newsletter, advertisement, gallery, …) or a
// <nav>, <aside>, <header>, <footer> or <form> unless it plainly holds an
// article (three paragraphs, 600 bytes, few links); one named like layout
// (sidebar, menu, footer, …) unless a content word (article, body, content,
// entry, story, post, …) is in the name too. The container whose prose
// scores highest, less its links, is the body; its siblings that score a
// fifth as well or hold a paragraph of prose join it, and so do the
// sections of the article beside it (a heading, a titled section, a list,
// a table or a paragraph longer than a byline, with few links: a recipe's
// ingredients, a guide's questions), and every element of the same tag and
// class that holds prose (a body split into chunks around advertisements).
// A body found in a data table's rows is the table. A pop-up (role=dialog,
// aria-modal, a popup or overlay class) is never the body. A body with
// under 250 bytes of running text (paragraphs, quotes, preformatted text)
// is implausibly thin: it is measured again without the names, in case a
// wrapper was misnamed, and with the markup of text/template scripts in
// place (Blogger keeps a post there), and the candidate with twice the
// running text is kept. Text has no soft hyphens.
//
// The result is rendered in reading order as [Block]s: paragraphs, headings
// with their level, lists with their items, quotations, preformatted text
// as written, data tables as rows of cells joined by " | ", and the
// captions of figures (text only; images are never read). A paragraph that
// is mostly links, an <article> beside another (a teaser), a block that
// repeats the headline or the title, and a heading over nothing are left
// out.
//
// Work is linear in the envelope, which is refused over [Options.MaxBytes]
// ([ErrTooLarge]); a document nested deeper than the parser accepts is
// refused with [ErrMalformed], and the detector reads at most 400 levels
// below <body>.
//
// # Metadata
//
// Every metadata field records where it was read in its Source: a JSON-LD
// path ("json-ld:NewsArticle.headline"), a tag ("meta[property=og:title]",
// "link[rel=canonical]", "html[lang]"), a microdata property
// ("microdata:NewsArticle.author"), a CMS field ("wordpress:title.rendered",
// "cms:data.attributes.title"). A page's metadata is read from these
// sources, most trusted first:
//
//  1. JSON-LD: the page's Article node (any schema.org type named
//     *Article, BlogPosting, LiveBlogPosting, SocialMediaPosting,
//     DiscussionForumPosting or Report), at the top of a script, in an
//     array or an @graph, or as a WebPage's mainEntity, with @id
//     references resolved; of several, the one whose url, @id or
//     mainEntityOfPage is the page's URL or its canonical, else the first
//     that names no page, else none (every one names another page: the
//     page lists others' articles);
//  2. OpenGraph (og:*) and its article:* properties (an article:author
//     or article:publisher that is a URL is a profile page, not a name);
//  3. Twitter cards (twitter:title, twitter:description, twitter:image; a
//     twitter:creator is an account, not a name);
//  4. plain meta names (title, description, author, keywords,
//     news_keywords, date, language);
//  5. Dublin Core (DC.* and dcterms.*);
//  6. microdata: the itemprops of the first itemscope of an Article type
//     (an itemprop inside a nested item belongs to that item);
//  7. markup that names a byline as one: <a rel=author> whose text is a
//     name, or an itemprop=author outside any Article item. A class such as
//     "byline" or "author" is styling, not a statement, and is not read;
//     a page whose bylines name more than four people lists other
//     stories', and none is read;
//  8. <html lang> and <meta http-equiv=content-language> (one tag, not a
//     list), then an hreflang alternate that points at the page itself;
//  9. for dates, what the page shows: a <time> marked as the publication
//     (pubdate, itemprop, or its or an ancestor's class: published,
//     posted, entry-date, byline, …) or as an update (updated,
//     modified), then the first date in the short text of an element whose
//     class names a byline, dateline or publication date. An unmarked
//     <time> is not read;
//  10. for the Section, after JSON-LD articleSection, article:section and
//     microdata: a meta name section, category or parsely-section, then the
//     first link marked rel=category (WordPress's "category tag"), then a
//     breadcrumb trail (a JSON-LD BreadcrumbList, else the first element
//     named breadcrumb): its last entry that is neither the page nor the
//     site's home.
//
// Two fields have a mechanism made for them and depart from that order:
// the canonical URL is read first from <link rel=canonical>, then JSON-LD
// url and mainEntityOfPage, then og:url and microdata; the language from
// JSON-LD inLanguage, then <html lang> and content-language, then the meta
// names, Dublin Core and microdata that name one, then og:locale (its "_"
// written "-"), then a self-referencing hreflang; a value that is not a
// language tag in form ("english") is not read as one.
//
// The most trusted source that states a field gives its value; each less
// trusted source that states a different value is kept in the field's
// Conflicts (dates that name the same instant, or a date and a date-time on
// that date, agree; so do "en" and "en-GB", and URLs that differ only by a
// fragment or a trailing slash). Of the publication dates, the most
// trusted gives way to an earlier one when it is also the stated
// modification date, and an instant in UTC to the same instant in the
// page's own zone, or to a shown date that is its day in some zone but not
// in UTC, so the day is the publisher's. For Authors and Keywords the most trusted
// source that names any gives the whole list, and a less trusted list that
// names others is one Conflict, its entries joined by "; ", on the first
// entry. Access fails closed: a wall declared by any source
// (isAccessibleForFree false on the Article, on one of its hasPart, on a
// WebPage or in microdata; article:content_tier locked or metered) makes it Gated, whatever
// another source says; otherwise a source stating free access makes it
// Free.
//
// Nothing is ever completed: no date from the URL or from HTTP headers, no
// language from the text, no headline from <title> (it names the page, not
// the article), no author from the page's layout, no id derived from
// the page's own URL. A URL is resolved against the page's URL; text has its entities
// decoded and its white space collapsed. A date-time is kept as written
// with its zone; its Time is set only when it states an offset (RFC 3339
// and the common ISO 8601 forms, basic or extended, padded or not; the
// RFC 1123 and date(1) forms, with a zone name only where its offset is not
// in doubt: CEST, PDT, JST, but not IST, CST, BST or EST), and a date
// alone (ISO 8601, day first with dots as in 30.07.2019, or with an
// English month name; never 01/02/2006, whose order is not stated) is
// DateOnly. The offset is kept as written, so the day is the page's own. A CMS's placeholder for a date it lacks
// ("0001-01-01T00:00:00Z", "0000-00-00") states none. A value that does not parse as a date stays as written, with a
// zero Time.
//
// TranslationOf is set only when the page designates its original
// unambiguously: JSON-LD translationOfWork (or isTranslationOf), microdata
// translationOfWork, or <link rel=translation-of>, every one that is given
// naming the same original, which is not the page itself. hreflang
// alternates are versions, not originals, and never make one.
//
// # Identifiers
//
// IDs lists every CMS identifier the page states, each with its Scheme and
// Source, so a crawler can demand that the feed's, the backlog's and the
// article's agree (V3): JSON-LD identifier (a text, a number, or a
// PropertyValue's value) and @id; microdata identifier and itemid;
// WordPress's shortlink (?p=N), REST link (/wp-json/wp/v2/posts/N) and
// postid-N body class; Drupal's shortlink (/node/N) and
// data-history-node-id. A source that states two different ids states none;
// [Article.ID] gives the id a scheme's sources agree on, or says they
// differ.
// Arc XP and Ghost pages carry no id in their markup that is theirs alone
// (a data-post-id is as often a related story's), so none is read for
// them; read their APIs with a [Mapping].
//
// # Bounds
//
// Hostile markup costs bounded work. JSON-LD is read from at most 64
// scripts, 1 MiB each and 4 MiB in all, 32 levels deep and 10,000 objects
// in all; a script over a cap is skipped whole, found by one scan of its
// bytes before it is decoded, and the others are still read. A page
// contributes at most 1,024 meta tags and 1,024 links, 64 authors, 256
// keywords and 64 identifiers.
//
// # CMS APIs
//
// [WordPress] reads a post of WordPress's REST API and [WordPressPosts] a
// list of them; a [Mapping] reads any other CMS API whose fields a source
// declares, as paths into its JSON (V2).
package extract
