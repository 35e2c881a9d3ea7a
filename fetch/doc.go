// Package fetch is politefetch's politeness chain: one HTTP client that is
// identified, paced per host, obedient to robots.txt and to refusals, safe against
// SSRF, bounded in time and bytes, and able to prove what it read.
//
// A Go service replaces its http.Client with a [Client] built from a [Policy]. A
// preset is a policy, never an identity: name your crawler in it before [New]
// accepts it.
//
//	pol := fetch.Digest() // or StrictNews(), Vault(), or your own Policy
//	pol.Name, pol.Version = "ExampleBot", "1.0" // your crawler, as publishers will see it
//	pol.InfoURL, pol.Contact = "https://example.org/bot", "bot@example.org"
//	c, err := fetch.New(pol)
//	if err != nil { ... } // an *IdentityError names what is missing
//	defer c.Close()
//	res, err := c.Get(ctx, "https://publisher.example/feed.xml", fetch.GetOptions{Kind: fetch.KindFeed})
//	var refused *fetch.RefusedError
//	switch {
//	case errors.As(err, &refused): // we chose not to ask: robots, cool-down, policy (refused.Until: until when)
//	case err != nil:               // network, TLS, time-out, or a body we could not read in full
//	case res.NotModified:          // 304: nothing to parse (conditional GET)
//	case res.Complete():           // a final 200 received in full, decoded, with a media type
//	}
//
// Three ways in, one chain. [Client.Get] returns a [Result] with the decoded body
// and its proof of fetch. [Client.Doer] reads feeds, sitemaps and API lists as
// their [Kind] for code that wants an *http.Response (package feed): conditional,
// decoded, bounded. [Client.HTTPClient] serves ordinary http.Client code: never
// conditional unless the caller asks, GET and HEAD only, and a header it cannot
// send as written is refused, not dropped (see its doc). [Client.Explain] says
// whether a URL may be read now and why, layer by layer, without sending it.
//
// One Get goes, hop by hop:
//
//  1. URL policy: https only (and http where the policy allows it), host admitted
//     and in its canonical form, tracking parameters stripped.
//  2. Redirect policy (http.Client.CheckRedirect): at most N hops, the same
//     schemes, admitted hosts, no undeclared parameter added, no Referer or
//     credential carried over.
//  3. For every hop, the layers, in this order (the one statement of it; the
//     rest of the documentation refers here): the robots gate (robots.txt,
//     fetched first through the layers below it, never through this gate),
//     the pacer (start-to-start interval per host, in-flight limit, FIFO; the
//     answer grace below), the ledger gate (cool-downs and suspensions, checked
//     at the request's turn; every response observed), the identity layer
//     (exactly User-Agent, Accept, Accept-Encoding: identity and the credential
//     where admitted) and the validators (conditional GET, for Get and the
//     Doers only). robots.txt requests go through the pacer, the ledger gate
//     and the identity layer only.
//  4. The base transport: no proxy, no compression of its own, a bounded number
//     of connections per host, every address checked at connect time, TLS roots as
//     configured; a connection idle for three of the policy's longest intervals
//     (5 s at least, 90 s at most) is closed, so a host whose crawl is over
//     keeps no connection open; each request goes on the wire once (a request
//     whose connection failed after it was written is not sent again within
//     the interval, [ErrNotResent]).
//  5. The body: read within the wire and decoded caps and the Get's deadline,
//     content-codings removed by us, completeness and media type checked, a
//     provenance.Proof filled.
//
// A refusal we make is a *[RefusedError] (errors.As), whose Reason also matches a
// sentinel (errors.Is(err, fetch.ErrCooldown)); its text says once what was
// refused, why and until when. A robots.txt request that never left the process
// (refused by the ledger, its pacing turn not had, the shared [Schedule]
// failing) is our failure, not the publisher's answer: the request that needed
// it gets that refusal or failure (matching robots.ErrNotSent), nothing is
// recorded in the robots store, and the next request asks again. A request the chain cannot send as the caller
// wrote it is a *[RequestError]. A refusal the server makes is a [Result] (or a
// response) the ledger has already learned from.
//
// # State and keys
//
// Every piece of state the chain keeps is keyed by one form of the host, made by
// internal/hostkey: the host name in lower case, IDNA A-labels, no trailing dot,
// IP literals in canonical form (a non-canonical IPv4 literal such as 127.1 is
// refused, never guessed), no scheme, and the port only when it is not the
// scheme's default ("example.com", "example.com:8443"). The request itself goes
// out with that host, so what is paced is what is sent.
//
//   - Pacing (the pacer, a shared [Schedule]): per host key, or per registrable
//     domain (eTLD+1 of the host key, port dropped) when Policy.PerSite is set.
//   - The refusal ledger (backoff.Ledger, backoff.Store): per host key without
//     its port (a refusal from a host binds every port of it), or per
//     registrable domain under PerSite; the key is backoff.Ledger.Key.
//   - robots.txt (robots.Cache, robots.Store): per host key for https; a plain
//     http site (Policy.AllowHTTP) has its own file, keyed "http://" and the
//     host key, since RFC 9309 scopes robots.txt to scheme, host and port.
//   - Validators (the validators layer, [ValidatorStore]): per URL, as requested (the
//     host key, tracking parameters stripped, no fragment).
//
// [Client.Explain] reports the keys a URL maps to (Explanation.Host and Key).
//
// Pacing holds across every goroutine of a Client; with a shared [Schedule]
// ([Stores].Schedule) it holds across processes too. fetchtest checks other
// implementations of [ValidatorStore] and [Schedule].
//
// Time comes from one clock ([WithClock]: any Clock of package clock, whose
// Manual clock tests use): every instant the chain records comes from it,
// and every wait ends with its context.
//
// A caller who gives up (its context cancelled, its deadline passed) gets its
// context's error at once. A request already written whose answer has not
// begun is still awaited, for five seconds at most, in the background: the
// publisher's answer, a refusal above all, is observed and recorded, and the
// host's turn is not given back before it comes. Nothing more is sent for it.
// [Client.Close] ends those waits and awaits their goroutines.
//
// # Observing
//
// [WithObserver] shows each request's life as [Event]s: waiting for the
// host's slot and for how long, sent, answered (status, bytes), a 304 and
// the bytes it saved, robots.txt fetched, refused and why, failed. The
// observer is called on the chain's goroutines and must not block; see
// [WithObserver] for who calls it and when.
package fetch
