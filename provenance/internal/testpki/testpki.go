// Package testpki is the fixed test PKI and proof of politefetch's
// provenance tests, shared by package provenance and package provenance/warc:
// root → intermediate → leaves with Ed25519 keys derived from fixed seeds and
// fixed serials and validity windows, so every certificate, and every proof
// built from them, is the same bytes on every run. Tests only.
package testpki

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"net"
	"time"

	"github.com/politefetch/politefetch/provenance"
)

var (
	rootFrom  = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	rootUntil = time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)
	intFrom   = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	intUntil  = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	leafFrom  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	leafUntil = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

	// ReadAt is the fixed read instant of the valid cases.
	ReadAt = time.Date(2026, 2, 14, 10, 30, 0, 123456789, time.UTC)
	// AfterExpiry and BeforeValidity are read instants outside the leaf's window.
	AfterExpiry    = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	BeforeValidity = time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)

	// Envelope is the article body of the fixed proof.
	Envelope = []byte("<!doctype html><title>Budget vote</title><p>The council voted the budget.</p>\n")
)

// PKI is the test PKI.
type PKI struct {
	Root, Inter             *x509.Certificate
	Good, Wrong, Client     *x509.Certificate // leaves, signed by Inter
	GoodKey, WrongKey, CKey ed25519.PrivateKey
	Pool                    *x509.CertPool // holds Root only
}

// Key returns the fixed Ed25519 key of a name.
func Key(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("politefetch provenance test key " + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func mustCert(tmpl, parent *x509.Certificate, pub ed25519.PublicKey, signer ed25519.PrivateKey) *x509.Certificate {
	der, err := x509.CreateCertificate(nil, tmpl, parent, pub, signer)
	if err != nil {
		panic(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return c
}

func leafTemplate(serial int64, cn string, dns []string, ips []net.IP, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             leafFrom,
		NotAfter:              leafUntil,
		DNSNames:              dns,
		IPAddresses:           ips,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
	}
}

// New builds the test PKI (the same bytes on every call).
func New() *PKI {
	rk, ik := Key("root"), Key("intermediate")
	rootTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Politefetch Test Root", Organization: []string{"politefetch"}},
		NotBefore:             rootFrom,
		NotAfter:              rootUntil,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	root := mustCert(rootTmpl, rootTmpl, rk.Public().(ed25519.PublicKey), rk) // self-signed
	inter := mustCert(&x509.Certificate{
		SerialNumber:          big.NewInt(2),
		Subject:               pkix.Name{CommonName: "Politefetch Test Intermediate", Organization: []string{"politefetch"}},
		NotBefore:             intFrom,
		NotAfter:              intUntil,
		IsCA:                  true,
		MaxPathLenZero:        true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}, root, ik.Public().(ed25519.PublicKey), rk)
	p := &PKI{Root: root, Inter: inter, GoodKey: Key("good"), WrongKey: Key("wrong"), CKey: Key("client")}
	p.Good = mustCert(leafTemplate(10, "news.example",
		[]string{"news.example", "lonely.example", "xn--bcher-kva.example"},
		[]net.IP{net.ParseIP("127.0.0.1")}, x509.ExtKeyUsageServerAuth),
		inter, p.GoodKey.Public().(ed25519.PublicKey), ik)
	p.Wrong = mustCert(leafTemplate(11, "other.example", []string{"other.example"}, nil, x509.ExtKeyUsageServerAuth),
		inter, p.WrongKey.Public().(ed25519.PublicKey), ik)
	p.Client = mustCert(leafTemplate(12, "client.example", []string{"client.example"}, nil, x509.ExtKeyUsageClientAuth),
		inter, p.CKey.Public().(ed25519.PublicKey), ik)
	p.Pool = x509.NewCertPool()
	p.Pool.AddCert(root)
	return p
}

// Certificate returns what the test server presents for a server name.
func (p *PKI) Certificate(serverName string) *tls.Certificate {
	switch serverName {
	case "wrong.example":
		return &tls.Certificate{Certificate: [][]byte{p.Wrong.Raw, p.Inter.Raw}, PrivateKey: p.WrongKey}
	case "lonely.example": // the intermediate is missing
		return &tls.Certificate{Certificate: [][]byte{p.Good.Raw}, PrivateKey: p.GoodKey}
	case "client.example":
		return &tls.Certificate{Certificate: [][]byte{p.Client.Raw, p.Inter.Raw}, PrivateKey: p.CKey}
	}
	return &tls.Certificate{Certificate: [][]byte{p.Good.Raw, p.Inter.Raw}, PrivateKey: p.GoodKey}
}

// SHA256Hex is the lower-hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Fixture is a fixed proof of a read of https://news.example/article after
// two redirects, with the test PKI's chain: the same bytes on every run.
func Fixture(k *PKI) (*provenance.Proof, []byte, provenance.VerifyOptions) {
	chain := []string{base64.StdEncoding.EncodeToString(k.Good.Raw), base64.StdEncoding.EncodeToString(k.Inter.Raw)}
	hop := func(u string, status int, loc string, hs time.Time, resumed bool) provenance.Hop {
		return provenance.Hop{URL: u, Status: status, Location: loc, ConnectedIP: "93.184.215.14",
			TLSVersion: "TLS 1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", SNI: "news.example",
			HandshakeAt: hs, Resumed: resumed, Chain: chain}
	}
	p := &provenance.Proof{
		Schema:       provenance.Schema,
		RequestedURL: "https://news.example/r1",
		FinalURL:     "https://news.example/article",
		ReadAt:       ReadAt,
		Hops: []provenance.Hop{
			hop("https://news.example/r1", 302, "/r2", ReadAt.Add(-30*time.Millisecond), false),
			hop("https://news.example/r2", 301, "https://news.example/article", ReadAt.Add(-30*time.Millisecond), false),
			hop("https://news.example/article", 200, "", ReadAt.Add(-30*time.Millisecond), false),
		},
		Digest:         provenance.DigestOf(Envelope),
		Length:         int64(len(Envelope)),
		CodingsRemoved: []string{"gzip"},
		SDKVersion:     provenance.SDKVersion,
	}
	opts := provenance.VerifyOptions{Roots: k.Pool, RootsLabel: "test-root"}
	if _, err := provenance.Seal(p, Envelope, opts); err != nil {
		panic(err)
	}
	return p, bytes.Clone(Envelope), opts
}
