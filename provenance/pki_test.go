package provenance_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"math/big"
	"net"
	"time"
)

// The test PKI: root → intermediate → leaves, with Ed25519 keys derived from
// fixed seeds and fixed serials and validity windows, so every certificate
// (and every proof built from them) is the same bytes on every run.

var (
	rootFrom  = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	rootUntil = time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)
	intFrom   = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	intUntil  = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	leafFrom  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	leafUntil = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

	// readAt is the fixed read instant of the valid cases.
	readAt = time.Date(2026, 2, 14, 10, 30, 0, 123456789, time.UTC)
	// afterExpiry and beforeValidity are read instants outside the leaf's window.
	afterExpiry    = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	beforeValidity = time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
)

type pki struct {
	root, inter             *x509.Certificate
	good, wrong, client     *x509.Certificate // leaves, signed by inter
	goodKey, wrongKey, cKey ed25519.PrivateKey
	pool                    *x509.CertPool // holds root only
}

func key(name string) ed25519.PrivateKey {
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

func newPKI() *pki {
	rk, ik := key("root"), key("intermediate")
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
	p := &pki{root: root, inter: inter, goodKey: key("good"), wrongKey: key("wrong"), cKey: key("client")}
	p.good = mustCert(leafTemplate(10, "news.example",
		[]string{"news.example", "lonely.example", "xn--bcher-kva.example"},
		[]net.IP{net.ParseIP("127.0.0.1")}, x509.ExtKeyUsageServerAuth),
		inter, p.goodKey.Public().(ed25519.PublicKey), ik)
	p.wrong = mustCert(leafTemplate(11, "other.example", []string{"other.example"}, nil, x509.ExtKeyUsageServerAuth),
		inter, p.wrongKey.Public().(ed25519.PublicKey), ik)
	p.client = mustCert(leafTemplate(12, "client.example", []string{"client.example"}, nil, x509.ExtKeyUsageClientAuth),
		inter, p.cKey.Public().(ed25519.PublicKey), ik)
	p.pool = x509.NewCertPool()
	p.pool.AddCert(root)
	return p
}

// certificate returns what the test server presents for a server name.
func (p *pki) certificate(serverName string) *tls.Certificate {
	switch serverName {
	case "wrong.example":
		return &tls.Certificate{Certificate: [][]byte{p.wrong.Raw, p.inter.Raw}, PrivateKey: p.wrongKey}
	case "lonely.example": // the intermediate is missing
		return &tls.Certificate{Certificate: [][]byte{p.good.Raw}, PrivateKey: p.goodKey}
	case "client.example":
		return &tls.Certificate{Certificate: [][]byte{p.client.Raw, p.inter.Raw}, PrivateKey: p.cKey}
	}
	return &tls.Certificate{Certificate: [][]byte{p.good.Raw, p.inter.Raw}, PrivateKey: p.goodKey}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
