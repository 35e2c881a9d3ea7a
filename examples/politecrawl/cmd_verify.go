package main

// politecrawl verify -config FILE [-store FILE]... | verify FILE.warc[.gz]:
// every deposit's proof of fetch checked again, offline, against the pinned
// roots at its read instant, and its envelope against the proof's digest
// and length; of several workers' stores (-store repeated, or a glob),
// each deposit once. A line per failure with the check that broke, a summary, and
// exit status 1 on any failure.

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/provenance/warc"
)

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs, true)
	var nf netFlags
	fs.StringVar(&nf.caFile, "ca", "", "testing: also trust the CA certificates in this PEM file, beside the pinned roots")
	fs.Var(&nf.admit, "admit-private", "testing: accept proofs whose connected address is in this non-public prefix (repeatable)")
	// Accepted so that one set of test flags (a web.flags file) serves every
	// command; verify sends nothing, so it reaches no address.
	fs.StringVar(&nf.connectTo, "connect-to", "", "testing: accepted as crawl takes it, and unused: verify sends nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opts, err := nf.verifyOptions()
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	ctx := context.Background()
	var v verifier
	v.opts, v.out = opts, stdout
	switch {
	case fs.NArg() == 1 && sf.config == "" && len(sf.stores) == 0:
		if err := v.warcFile(fs.Arg(0)); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	case fs.NArg() == 0:
		cfg, set, err := sf.openSet(ctx, "verify")
		if err != nil {
			return err
		}
		defer set.Close()
		v.stores(ctx, cfg, set)
	default:
		if fs.NArg() > 1 || len(sf.stores) > 0 {
			return argsError("verify", fs.Args())
		}
		return errors.New("verify: give -config (and -store) or one WARC file, not both")
	}
	fmt.Fprintf(stdout, "verify: %d proofs checked, %d good, %d failed", v.checked, v.checked-v.failed, v.failed)
	if v.files > 1 {
		fmt.Fprintf(stdout, " in %d stores (%d copies held by more than one store checked once)", v.files, v.copies)
	}
	if v.excerpts > 0 {
		fmt.Fprintf(stdout, " (%d excerpts carry no proof)", v.excerpts)
	}
	fmt.Fprintln(stdout)
	if v.failed > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("verify: %d of %d proofs failed", v.failed, v.checked)}
	}
	if v.checked == 0 {
		// Nothing verified is nothing proved: an empty file, a store
		// without deposits, a file of another kind.
		return &ExitError{Code: 1, Msg: "verify: no proof was checked: nothing here carries a proof of fetch"}
	}
	return nil
}

type verifier struct {
	opts                      provenance.VerifyOptions
	out                       io.Writer
	checked, failed, excerpts int
	files, copies             int // of several stores: how many, and the copies not checked again
}

// stores verifies the deposits of every store of set, each file's own
// list first (a file that cannot hand back a source's deposits fails
// there). A deposit several files hold is checked once when their copies
// are the same (the same proof of the same envelope); a copy whose proof
// differs is another read's claim and is checked as well, so a proof
// tampered with in any file fails.
func (v *verifier) stores(ctx context.Context, cfg *Config, set *storeSet) {
	v.files = len(set.files)
	checked := map[string]bool{} // source, digest, proof
	for _, s := range cfg.Sources {
		for _, f := range set.files {
			where := ""
			if v.files > 1 {
				where = " in " + f.Path()
			}
			list, err := f.Crawl().Deposits.List(ctx, s.ID, time.Time{})
			if err != nil {
				// The store refuses to hand back a damaged deposit: the
				// source's deposits cannot be read one by one past it.
				v.checked++
				v.failed++
				fmt.Fprintf(v.out, "FAIL %s%s: the store cannot read this source's deposits: %v\n", s.ID, where, err)
				continue
			}
			for _, d := range list {
				if d.Envelope == nil {
					v.excerpts++ // an excerpt is not a read: nothing to prove
					continue
				}
				proof, _ := json.Marshal(d.Proof)
				// The envelope's own digest, not the store's record of it:
				// a copy whose bytes were changed is never taken for another.
				key := d.Source + "\x00" + provenance.DigestOf(d.Envelope) + "\x00" + string(proof)
				if checked[key] {
					v.copies++
					continue
				}
				checked[key] = true
				v.check(d.Source+" "+d.Key+where, d.Proof, d.Envelope)
			}
		}
	}
}

// check verifies one deposit and prints a line if it fails.
func (v *verifier) check(name string, p *provenance.Proof, envelope []byte) {
	v.checked++
	if p == nil {
		v.failed++
		fmt.Fprintf(v.out, "FAIL %s: no proof\n", name)
		return
	}
	if _, err := provenance.Verify(p, envelope, v.opts); err != nil {
		v.failed++
		fmt.Fprintf(v.out, "FAIL %s %s (read %s): %s\n", name, p.FinalURL, p.ReadAt.UTC().Format(time.RFC3339), strings.TrimPrefix(err.Error(), "provenance: "))
	}
}

// warcFile verifies every deposit of a WARC file (gzip or not).
func (v *verifier) warcFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		// provenance/warc reads either form; the gzip header is checked
		// here so a wrong suffix gets a clear error.
		if _, err := gzip.NewReader(f); err != nil {
			return fmt.Errorf("%s: not gzip: %w", path, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	n := 0
	for d, err := range warc.Read(r) {
		if err != nil {
			v.checked++
			v.failed++
			fmt.Fprintf(v.out, "FAIL %s: after %d deposits: %v\n", path, n, err)
			return nil
		}
		n++
		v.check(fmt.Sprintf("%s#%d", path, n), d.Proof, d.Envelope)
	}
	return nil
}
