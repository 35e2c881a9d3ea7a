package provenance

import (
	"crypto/x509"
	"runtime/debug"
	"sync"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// BundleModule is the module whose bundle subpackage provides the pinned roots.
const BundleModule = "golang.org/x/crypto/x509roots/fallback"

// BundleVersion is the version of BundleModule this package was written
// against. [PinnedRoots] reports the version actually linked when the build
// information carries it, and this one otherwise.
const BundleVersion = "v0.0.0-20261030153154-30a33513ff6d"

// BundleInfo describes a root pool.
type BundleInfo struct {
	Module  string // the module providing the roots
	Version string // its version
	Roots   int    // how many roots the pool holds
}

// PinnedRoots returns a new pool holding every root of the pinned bundle
// (golang.org/x/crypto/x509roots/fallback/bundle), with their constraints,
// and a description of the bundle. It never reads the system store. Each call
// returns a fresh pool that the caller may modify.
func PinnedRoots() (*x509.CertPool, BundleInfo) {
	pool := x509.NewCertPool()
	info := BundleInfo{Module: BundleModule, Version: bundleVersion()}
	for r := range bundle.Roots() {
		c, err := x509.ParseCertificate(r.Certificate)
		if err != nil {
			continue // the bundle is generated and parsed by its own tests
		}
		if r.Constraint == nil {
			pool.AddCert(c)
		} else {
			pool.AddCertWithConstraint(c, r.Constraint)
		}
		info.Roots++
	}
	return pool, info
}

type pinnedPool struct {
	pool *x509.CertPool
	info BundleInfo
}

// pinned is built once and never modified afterwards; Verify only reads it.
var pinned = sync.OnceValue(func() pinnedPool {
	p, i := PinnedRoots()
	return pinnedPool{p, i}
})

func bundleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == BundleModule {
				if m.Replace != nil && m.Replace.Version != "" {
					return m.Replace.Version
				}
				if m.Version != "" && m.Version != "(devel)" {
					return m.Version
				}
			}
		}
	}
	return BundleVersion
}
