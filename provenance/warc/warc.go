// Package warc writes deposits (an article's envelope, its HTTP exchange and
// its proof of fetch) as WARC 1.1 records and reads them back, apart from
// package provenance so that importers of the fetch chain do not compile a
// WARC library they never use.
//
// A [Writer] writes, per deposit, a request and a response record (or a
// resource record when there was no HTTP exchange) and a metadata record
// carrying the proof's JSON; record IDs and dates are derived from the
// deposit, so the same deposits always give the same bytes. [Read] reads
// them back; verify each proof with provenance.Verify.
package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/nlnwa/gowarc/v3"

	"github.com/politefetch/politefetch/provenance"
)

// ErrInvalid reports a WARC file that [Read] cannot turn into deposits, or a
// deposit that [Writer.Write] cannot write.
var ErrInvalid = errors.New("warc: not a valid deposit file")

// Deposit is one article as archived: its proof, its envelope (the body after
// removing content-codings) and, for an HTTP read, the request and response
// headers and status.
type Deposit struct {
	Proof          *provenance.Proof
	Envelope       []byte
	RequestHeader  http.Header // headers sent (Host is taken from the final URL); nil for none
	ResponseHeader http.Header // headers received
	Status         int         // HTTP status; 0 writes a resource record instead of request and response
	Proto          string      // HTTP protocol, "HTTP/1.1" (the zero value) or "HTTP/2.0"
}

// WARC names of the records and fields this package writes.
const (
	warcSoftware = "politefetch/" + provenance.SDKVersion
	jsonType     = "application/json"
	httpRespType = "application/http;msgtype=response"
	httpReqType  = "application/http;msgtype=request"
	// The WARC-Protocol and WARC-Cipher-Suite fields are proposed extensions
	// of WARC 1.1 (iipc/warc-specifications issues #42 and #86).
	fieldProtocol    = "WARC-Protocol"
	fieldCipherSuite = "WARC-Cipher-Suite"
)

// recordNamespace is the UUID namespace of the name-based (version 5) record
// IDs: a record's ID is a function of its deposit, so writing the same
// deposits twice gives the same bytes.
var recordNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("politefetch/provenance/warc"))

// gowarcOptions serialises gowarc's option constructor, which is called by
// NewRecordBuilder and NewWarcFileReaderFromStream: in v3.1.0 it calls
// uuid.EnableRandPool, an unsynchronised write to a variable of
// github.com/google/uuid, so concurrent calls race. The mutex guards only
// that call; it holds no state of ours.
var gowarcOptions sync.Mutex

func newRecordBuilder(t gowarc.RecordType) gowarc.WarcRecordBuilder {
	gowarcOptions.Lock()
	defer gowarcOptions.Unlock()
	return gowarc.NewRecordBuilder(t, gowarc.WithStrictValidation(), gowarc.WithDefaultDigestAlgorithm("sha256"))
}

// Writer writes deposits to W as WARC 1.1 records: a warcinfo record
// before the first deposit, then per deposit a request, a response (HTTP
// status line, headers and envelope) or a resource record, and a metadata
// record carrying the proof's JSON (WARC-Refers-To the response). Record IDs
// and dates are derived from the deposit, so the output is reproducible
// byte for byte. Block and payload digests are "sha256:" lower hex; the
// payload digest of the response is the proof's digest.
//
// Set W (and Gzip, to compress each record as its own gzip member for a
// .warc.gz file) before the first Write. A Writer is not safe for
// concurrent use; the caller closes W.
type Writer struct {
	W    io.Writer
	Gzip bool

	wroteInfo bool
}

// Write writes deps to w as an uncompressed WARC 1.1 file.
func Write(w io.Writer, deps ...Deposit) error {
	ww := &Writer{W: w}
	for _, d := range deps {
		if err := ww.Write(d); err != nil {
			return err
		}
	}
	return nil
}

// Write appends the records of one deposit, preceded by a warcinfo record on
// the first call.
func (ww *Writer) Write(d Deposit) error {
	if d.Proof == nil {
		return fmt.Errorf("%w: deposit without proof", ErrInvalid)
	}
	proofJSON, err := json.Marshal(d.Proof)
	if err != nil {
		return err
	}
	rs := &records{proofJSON: proofJSON, date: d.Proof.ReadAt.UTC().Format(provenance.TimeFormat)}
	defer rs.close()
	if !ww.wroteInfo {
		if err := rs.warcinfo(); err != nil {
			return err
		}
	}
	if err := rs.exchange(d); err != nil {
		return err
	}
	if err := rs.build(gowarc.Metadata, [][2]string{
		{gowarc.WarcRecordID, rs.id("metadata")},
		{gowarc.WarcDate, rs.date},
		{gowarc.WarcTargetURI, d.Proof.FinalURL},
		{gowarc.WarcRefersTo, rs.id("response")},
		{gowarc.ContentType, jsonType},
	}, proofJSON, nil); err != nil {
		return err
	}
	m := gowarc.NewMarshaler()
	for _, r := range rs.recs {
		if err := ww.marshal(m, r); err != nil {
			return err
		}
	}
	ww.wroteInfo = true
	return nil
}

// records are the records of one deposit, built in the order they are
// written.
type records struct {
	proofJSON []byte // the proof's JSON: the metadata record's block, and what record IDs derive from
	date      string // WARC-Date of every record: the read's instant
	recs      []gowarc.WarcRecord
}

// id is the record ID, in angle brackets, of the deposit's record of kind
// ("request", "response", …): a function of the proof, so reproducible.
func (rs *records) id(kind string) string {
	return "<" + uuid.NewSHA1(recordNamespace, append([]byte(kind+"\n"), rs.proofJSON...)).URN() + ">"
}

// close releases every record built.
func (rs *records) close() {
	for _, r := range rs.recs {
		r.Close()
	}
}

// build appends a record of type t with the fields that are set, block,
// and the payload digest of payload when it is not nil.
func (rs *records) build(t gowarc.RecordType, fields [][2]string, block []byte, payload []byte) error {
	rb := newRecordBuilder(t)
	for _, f := range fields {
		if f[1] != "" {
			rb.AddWarcHeader(f[0], f[1])
		}
	}
	rb.AddWarcHeader(gowarc.ContentLength, strconv.Itoa(len(block)))
	rb.AddWarcHeader(gowarc.WarcBlockDigest, provenance.DigestOf(block))
	if payload != nil {
		rb.AddWarcHeader(gowarc.WarcPayloadDigest, provenance.DigestOf(payload))
	}
	if _, err := rb.Write(block); err != nil {
		rb.Close()
		return err
	}
	r, _, err := rb.Build()
	if err != nil {
		return fmt.Errorf("%w: building %s record: %v", ErrInvalid, t, err)
	}
	// gowarc writes names it does not know in Go's canonical case
	// (Warc-Protocol); names are case-insensitive, but spell them as
	// the proposal does.
	for _, f := range *r.WarcHeader() {
		switch {
		case strings.EqualFold(f.Name, fieldProtocol):
			f.Name = fieldProtocol
		case strings.EqualFold(f.Name, fieldCipherSuite):
			f.Name = fieldCipherSuite
		}
	}
	rs.recs = append(rs.recs, r)
	return nil
}

// warcinfo appends the file's warcinfo record.
func (rs *records) warcinfo() error {
	info := "software: " + warcSoftware + "\r\n" +
		"format: WARC File Format 1.1\r\n" +
		"description: deposits with proofs of fetch (" + provenance.Schema + ")\r\n"
	return rs.build(gowarc.Warcinfo, [][2]string{
		{gowarc.WarcRecordID, rs.id("warcinfo")},
		{gowarc.WarcDate, rs.date},
		{gowarc.ContentType, gowarc.ApplicationWarcFields},
	}, []byte(info), nil)
}

// exchange appends what was read: the request and the response records of
// an HTTP exchange, or a resource record when the deposit has no status.
// Each carries the final hop's protocols, cipher suite and address.
func (rs *records) exchange(d Deposit) error {
	p := d.Proof
	last := provenance.Hop{}
	if len(p.Hops) > 0 {
		last = p.Hops[len(p.Hops)-1]
	}
	var protocols []string
	if d.Status != 0 {
		protocols = append(protocols, warcProto(d.Proto))
	}
	if v := tlsProto(last.TLSVersion); v != "" {
		protocols = append(protocols, v)
	}
	fields := func(id, contentType string, extra ...[2]string) [][2]string {
		out := [][2]string{{gowarc.WarcRecordID, id}, {gowarc.WarcDate, rs.date}, {gowarc.WarcTargetURI, p.FinalURL}}
		out = append(out, extra...)
		out = append(out, [2]string{gowarc.WarcIPAddress, last.ConnectedIP}, [2]string{gowarc.ContentType, contentType})
		for _, pr := range protocols {
			out = append(out, [2]string{fieldProtocol, pr})
		}
		return append(out, [2]string{fieldCipherSuite, last.CipherSuite})
	}
	mainID := rs.id("response")
	if d.Status == 0 {
		ct := d.ResponseHeader.Get("Content-Type")
		if ct == "" {
			ct = "application/octet-stream"
		}
		return rs.build(gowarc.Resource, fields(mainID, ct), d.Envelope, d.Envelope)
	}
	req, err := requestBlock(p.FinalURL, d.RequestHeader)
	if err != nil {
		return err
	}
	if err := rs.build(gowarc.Request, fields(rs.id("request"), httpReqType, [2]string{gowarc.WarcConcurrentTo, mainID}), req, nil); err != nil {
		return err
	}
	return rs.build(gowarc.Response, fields(mainID, httpRespType), responseBlock(d.Status, d.ResponseHeader, d.Envelope), d.Envelope)
}

func (ww *Writer) marshal(m gowarc.Marshaler, r gowarc.WarcRecord) error {
	if !ww.Gzip {
		_, _, err := m.Marshal(ww.W, r, 0)
		return err
	}
	var buf bytes.Buffer
	if _, _, err := m.Marshal(&buf, r, 0); err != nil {
		return err
	}
	zw := gzip.NewWriter(ww.W) // a zero header: no name, no time, reproducible
	if _, err := zw.Write(buf.Bytes()); err != nil {
		return err
	}
	return zw.Close()
}

func warcProto(proto string) string {
	switch proto {
	case "HTTP/2.0", "HTTP/2":
		return "h2"
	case "HTTP/3.0", "HTTP/3":
		return "h3"
	case "HTTP/1.0":
		return "http/1.0"
	}
	return "http/1.1"
}

func tlsProto(v string) string {
	if n, ok := strings.CutPrefix(v, "TLS "); ok {
		return "tls/" + n
	}
	return ""
}

// canonicalHeader copies h with canonical keys, dropping the keys in drop.
func canonicalHeader(h http.Header, drop ...string) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if contains(drop, ck) {
			continue
		}
		out[ck] = append(out[ck], vs...)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func writeHeader(buf *bytes.Buffer, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
			buf.WriteString(k + ": " + strings.TrimSpace(v) + "\r\n")
		}
	}
}

func requestBlock(finalURL string, h http.Header) ([]byte, error) {
	u, err := url.Parse(finalURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: final URL %q", ErrInvalid, finalURL)
	}
	var buf bytes.Buffer
	buf.WriteString("GET " + u.RequestURI() + " HTTP/1.1\r\n")
	buf.WriteString("Host: " + u.Host + "\r\n")
	writeHeader(&buf, canonicalHeader(h, "Host"))
	buf.WriteString("\r\n")
	return buf.Bytes(), nil
}

// responseBlock renders the response as it is archived: the envelope is the
// decoded body, so Content-Encoding and Transfer-Encoding are dropped and
// Content-Length states the envelope's length (the codings removed are in the
// proof).
func responseBlock(status int, h http.Header, envelope []byte) []byte {
	var buf bytes.Buffer
	text := http.StatusText(status)
	if text == "" {
		text = "status code " + strconv.Itoa(status)
	}
	buf.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + text + "\r\n")
	hh := canonicalHeader(h, "Content-Encoding", "Transfer-Encoding", "Content-Length")
	hh["Content-Length"] = []string{strconv.Itoa(len(envelope))}
	writeHeader(&buf, hh)
	buf.WriteString("\r\n")
	buf.Write(envelope)
	return buf.Bytes()
}

// Read reads the deposits of a WARC file written by [Writer], in order:
// uncompressed, compressed per record, or compressed in any other valid gzip
// layout (a file re-compressed as one member, say); offsets in errors are
// then of the uncompressed stream. gowarc checks every record's
// syntax, Content-Length and digests; a deposit is yielded when its metadata
// record (the proof) is read. Records of other kinds or from other writers
// that do not form a deposit are skipped. After an error, iteration stops.
// The deposits are not verified: call [provenance.Verify] on each.
func Read(r io.Reader) iter.Seq2[Deposit, error] {
	return func(yield func(Deposit, error) bool) {
		// gowarc reads gzip one member per record and takes a member holding
		// several records for the end of the file; Go's gzip reader reads
		// every layout (members concatenated, however cut), so a compressed
		// file reaches gowarc uncompressed.
		br := bufio.NewReader(r)
		if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
			zr, err := gzip.NewReader(br)
			if err != nil {
				yield(Deposit{}, fmt.Errorf("%w: %v", ErrInvalid, err))
				return
			}
			defer zr.Close()
			r = zr
		} else {
			r = br
		}
		gowarcOptions.Lock()
		wr, err := gowarc.NewWarcFileReaderFromStream(r, 0, gowarc.WithStrictValidation())
		gowarcOptions.Unlock()
		if err != nil {
			yield(Deposit{}, fmt.Errorf("%w: %v", ErrInvalid, err))
			return
		}
		defer wr.Close()
		requests := map[string]http.Header{}
		mains := map[string]*Deposit{}
		for rec, err := range wr.Records() {
			if err != nil {
				yield(Deposit{}, fmt.Errorf("%w: at offset %d: %v", ErrInvalid, rec.Offset, err))
				return
			}
			d, done, err := readRecord(rec.WarcRecord, requests, mains)
			rec.Close()
			if err != nil {
				yield(Deposit{}, fmt.Errorf("%w: record at offset %d: %v", ErrInvalid, rec.Offset, err))
				return
			}
			if done && !yield(d, nil) {
				return
			}
		}
		if len(mains) > 0 {
			yield(Deposit{}, fmt.Errorf("%w: %d response or resource records without a proof", ErrInvalid, len(mains)))
		}
	}
}

func readRecord(r gowarc.WarcRecord, requests map[string]http.Header, mains map[string]*Deposit) (Deposit, bool, error) {
	h := r.WarcHeader()
	block, err := r.Block().RawBytes()
	if err != nil {
		return Deposit{}, false, err
	}
	raw, err := io.ReadAll(block)
	if err != nil {
		return Deposit{}, false, err
	}
	switch r.Type() {
	case gowarc.Request:
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return Deposit{}, false, err
		}
		hdr := req.Header
		if len(hdr) == 0 {
			hdr = nil
		}
		requests[h.Get(gowarc.WarcConcurrentTo)] = hdr
	case gowarc.Response:
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			return Deposit{}, false, err
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return Deposit{}, false, err
		}
		hdr := resp.Header
		hdr.Del("Content-Length")
		d := &Deposit{Envelope: body, ResponseHeader: hdr, Status: resp.StatusCode, Proto: "HTTP/1.1"}
		for _, pr := range h.GetAll(fieldProtocol) {
			switch pr {
			case "h2":
				d.Proto = "HTTP/2.0"
			case "h3":
				d.Proto = "HTTP/3.0"
			case "http/1.0":
				d.Proto = "HTTP/1.0"
			}
		}
		id := h.Get(gowarc.WarcRecordID)
		if rh, ok := requests[id]; ok {
			d.RequestHeader = rh
			delete(requests, id)
		}
		mains[id] = d
	case gowarc.Resource:
		d := &Deposit{Envelope: raw}
		if ct := h.Get(gowarc.ContentType); ct != "" && ct != "application/octet-stream" {
			d.ResponseHeader = http.Header{"Content-Type": {ct}}
		}
		mains[h.Get(gowarc.WarcRecordID)] = d
	case gowarc.Metadata:
		if !strings.HasPrefix(h.Get(gowarc.ContentType), jsonType) {
			return Deposit{}, false, nil
		}
		ref := h.Get(gowarc.WarcRefersTo)
		d, ok := mains[ref]
		if !ok {
			return Deposit{}, false, fmt.Errorf("metadata refers to %s, not a response or resource read before it", ref)
		}
		var p provenance.Proof
		if err := json.Unmarshal(raw, &p); err != nil {
			return Deposit{}, false, fmt.Errorf("proof: %v", err)
		}
		delete(mains, ref)
		d.Proof = &p
		return *d, true, nil
	}
	return Deposit{}, false, nil
}
