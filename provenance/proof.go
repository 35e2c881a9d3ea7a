package provenance

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/netip"
	"net/url"
	"time"
)

// Schema is the value of [Proof.Schema] for this version of the record.
const Schema = "provenance/v1"

// SDKVersion is the version of politefetch recorded in every proof.
const SDKVersion = "v0.1.0-dev"

// TimeFormat is the layout of every instant in a proof's JSON: RFC 3339 in
// UTC with exactly nine fractional digits, so that the JSON is stable.
const TimeFormat = "2006-01-02T15:04:05.000000000Z"

// Proof records one read of one article: where it was asked for, where it was
// finally read, when, over which hops, and what bytes came back. Its JSON
// encoding (schema "provenance/v1") has fixed field names and fixed time
// formatting, so the same proof always encodes to the same bytes.
type Proof struct {
	Schema         string    `json:"schema"`          // always Schema
	RequestedURL   string    `json:"requested_url"`   // the URL asked for (the first hop)
	FinalURL       string    `json:"final_url"`       // the URL read after redirects (the last hop)
	ReadAt         time.Time `json:"read_at"`         // the instant of the read, UTC
	Hops           []Hop     `json:"hops"`            // one per request, in order
	Digest         string    `json:"digest"`          // "sha256:<lower hex>" of the envelope
	Length         int64     `json:"length"`          // length of the envelope in bytes
	CodingsRemoved []string  `json:"codings_removed"` // content-codings decoded, in the order removed
	Anchor         *Anchor   `json:"anchor"`          // the root the final chain reached; nil if not recorded
	SDKVersion     string    `json:"sdk_version"`     // politefetch's version, see SDKVersion
}

// Hop records one request of a read: one per redirect, and the final one.
type Hop struct {
	URL         string    `json:"url"`          // the URL requested
	Status      int       `json:"status"`       // the HTTP status received
	Location    string    `json:"location"`     // the Location header, for a redirect
	ConnectedIP string    `json:"connected_ip"` // the IP connected to, without port
	TLSVersion  string    `json:"tls_version"`  // as tls.VersionName, e.g. "TLS 1.3"
	CipherSuite string    `json:"cipher_suite"` // IANA name, as tls.CipherSuiteName
	SNI         string    `json:"sni"`          // the server name sent
	HandshakeAt time.Time `json:"handshake_at"` // when the TLS handshake completed, UTC
	Resumed     bool      `json:"resumed"`      // whether the session was resumed
	Chain       []string  `json:"chain"`        // base64 DER, leaf first, as the server presented it
}

// Anchor is the trust anchor a chain reached.
type Anchor struct {
	Bundle     string `json:"bundle"`      // the root bundle's version, or a label for a caller's pool
	RootSHA256 string `json:"root_sha256"` // lower hex SHA-256 of the root's DER
	Subject    string `json:"subject"`     // the root's subject, for people
}

// HopFromTLS builds a Hop from one request's outcome. u is the URL requested,
// status and location come from the response, remoteIP is the address
// connected to (the zero Addr if unknown), cs is the connection state (nil for
// a connection without TLS) and handshakeAt the instant the handshake
// completed. The chain is copied from cs.PeerCertificates, as presented.
func HopFromTLS(u *url.URL, status int, location string, remoteIP netip.Addr, cs *tls.ConnectionState, handshakeAt time.Time) Hop {
	h := Hop{Status: status, Location: location}
	if u != nil {
		h.URL = u.String()
	}
	if remoteIP.IsValid() {
		h.ConnectedIP = remoteIP.WithZone("").Unmap().String()
	}
	if !handshakeAt.IsZero() {
		h.HandshakeAt = handshakeAt.UTC()
	}
	if cs == nil {
		return h
	}
	h.TLSVersion = tls.VersionName(cs.Version)
	h.CipherSuite = tls.CipherSuiteName(cs.CipherSuite)
	h.SNI = cs.ServerName
	h.Resumed = cs.DidResume
	h.Chain = make([]string, 0, len(cs.PeerCertificates))
	for _, c := range cs.PeerCertificates {
		h.Chain = append(h.Chain, base64.StdEncoding.EncodeToString(c.Raw))
	}
	return h
}

// stamp is a time encoded with TimeFormat.
type stamp time.Time

func (s stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(s).UTC().Format(TimeFormat) + `"`), nil
}

func (s *stamp) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, str)
	if err != nil {
		return err
	}
	*s = stamp(t.UTC())
	return nil
}

type proofJSON struct {
	Schema         string   `json:"schema"`
	RequestedURL   string   `json:"requested_url"`
	FinalURL       string   `json:"final_url"`
	ReadAt         stamp    `json:"read_at"`
	Hops           []Hop    `json:"hops"`
	Digest         string   `json:"digest"`
	Length         int64    `json:"length"`
	CodingsRemoved []string `json:"codings_removed"`
	Anchor         *Anchor  `json:"anchor"`
	SDKVersion     string   `json:"sdk_version"`
}

type hopJSON struct {
	URL         string   `json:"url"`
	Status      int      `json:"status"`
	Location    string   `json:"location"`
	ConnectedIP string   `json:"connected_ip"`
	TLSVersion  string   `json:"tls_version"`
	CipherSuite string   `json:"cipher_suite"`
	SNI         string   `json:"sni"`
	HandshakeAt stamp    `json:"handshake_at"`
	Resumed     bool     `json:"resumed"`
	Chain       []string `json:"chain"`
}

// MarshalJSON encodes the proof in the stable "provenance/v1" form.
func (p Proof) MarshalJSON() ([]byte, error) {
	return json.Marshal(proofJSON{
		Schema: p.Schema, RequestedURL: p.RequestedURL, FinalURL: p.FinalURL,
		ReadAt: stamp(p.ReadAt), Hops: p.Hops, Digest: p.Digest, Length: p.Length,
		CodingsRemoved: p.CodingsRemoved, Anchor: p.Anchor, SDKVersion: p.SDKVersion,
	})
}

// UnmarshalJSON decodes a proof; instants are returned in UTC.
func (p *Proof) UnmarshalJSON(b []byte) error {
	var j proofJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = Proof{
		Schema: j.Schema, RequestedURL: j.RequestedURL, FinalURL: j.FinalURL,
		ReadAt: time.Time(j.ReadAt), Hops: j.Hops, Digest: j.Digest, Length: j.Length,
		CodingsRemoved: j.CodingsRemoved, Anchor: j.Anchor, SDKVersion: j.SDKVersion,
	}
	return nil
}

// MarshalJSON encodes the hop with its instant in TimeFormat.
func (h Hop) MarshalJSON() ([]byte, error) {
	return json.Marshal(hopJSON{
		URL: h.URL, Status: h.Status, Location: h.Location, ConnectedIP: h.ConnectedIP,
		TLSVersion: h.TLSVersion, CipherSuite: h.CipherSuite, SNI: h.SNI,
		HandshakeAt: stamp(h.HandshakeAt), Resumed: h.Resumed, Chain: h.Chain,
	})
}

// UnmarshalJSON decodes a hop; its instant is returned in UTC.
func (h *Hop) UnmarshalJSON(b []byte) error {
	var j hopJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*h = Hop{
		URL: j.URL, Status: j.Status, Location: j.Location, ConnectedIP: j.ConnectedIP,
		TLSVersion: j.TLSVersion, CipherSuite: j.CipherSuite, SNI: j.SNI,
		HandshakeAt: time.Time(j.HandshakeAt), Resumed: j.Resumed, Chain: j.Chain,
	}
	return nil
}
