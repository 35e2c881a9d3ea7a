package fetch

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// Validator holds the validators a server gave for one URL.
type Validator struct {
	ETag         string // the ETag header, as received
	LastModified string // the Last-Modified header, as received
	// Length is the body's length as read from the wire when the
	// validators were kept, which a 304 to them saves reading again
	// (Event.Saved); 0 when not known. A ValidatorStore keeps it with the
	// validators (fetchtest.Run checks that it does).
	Length int64
}

// ValidatorStore keeps validators per URL. Implementations must be safe for
// concurrent use; [MemoryStore] is the in-memory one, and fetchtest.Run checks
// any other.
type ValidatorStore interface {
	// Get returns the validators kept for key, and whether there are any.
	Get(ctx context.Context, key string) (Validator, bool, error)
	// Put keeps v for key, replacing what was there.
	Put(ctx context.Context, key string, v Validator) error
	// Delete forgets key; deleting an unknown key is not an error.
	Delete(ctx context.Context, key string) error
}

// defaultMaxValidators bounds a zero MemoryStore.
const defaultMaxValidators = 100_000

// MemoryStore is a [ValidatorStore] in memory, bounded to Max entries: past that, an
// arbitrary entry is forgotten for each new one (a forgotten validator only costs
// one unconditional GET). The zero value is ready to use with defaultMaxValidators.
// It is safe for concurrent use.
type MemoryStore struct {
	Max int // 0: defaultMaxValidators

	mu sync.Mutex
	m  map[string]Validator
}

// Get implements [ValidatorStore].
func (s *MemoryStore) Get(_ context.Context, key string) (Validator, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

// Put implements [ValidatorStore].
func (s *MemoryStore) Put(_ context.Context, key string, v Validator) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]Validator)
	}
	limit := s.Max
	if limit <= 0 {
		limit = defaultMaxValidators
	}
	if _, ok := s.m[key]; !ok {
		for k := range s.m {
			if len(s.m) < limit {
				break
			}
			delete(s.m, k)
		}
	}
	s.m[key] = v
	return nil
}

// Delete implements [ValidatorStore].
func (s *MemoryStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// Len returns the number of URLs with validators.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// conditional is the conditional-GET layer: a GET for a URL with validators in
// the ValidatorStore goes out with If-None-Match and If-Modified-Since, so an unchanged
// resource answers 304 with no body. A 200's ETag and Last-Modified are kept only
// once its body has been read to EOF, so a truncated read never turns the next GET
// into a 304 for content we do not have. A ValidatorStore error makes the request
// unconditional (it costs bandwidth, never correctness).
//
// What it reads from a request: its method (only GETs are made conditional)
// and its URL (the key, see "State and keys"). What it adds: the two
// conditional headers, on a clone, and a response body that keeps the 200's
// validators when it is read to its end. It reads nothing any other layer
// leaves behind; under a [Client] it sits below the Identity layer and is used
// by Get and the Doers only, never by HTTPClient.
//
// The zero conditional keeps validators in a private [MemoryStore]. Set the
// fields before the first RoundTrip; a conditional is safe for concurrent use.
type conditional struct {
	Next  http.RoundTripper // nil: http.DefaultTransport
	Store ValidatorStore    // nil: a MemoryStore made on first use

	mem MemoryStore
}

func (v *conditional) store() ValidatorStore {
	if v.Store != nil {
		return v.Store
	}
	return &v.mem
}

// validatorKey is the ValidatorStore key of a request: its URL without
// fragment (validators are kept per URL).
func validatorKey(req *http.Request) string {
	u := *req.URL
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// RoundTrip adds the conditional headers when validators are known, and arranges
// for a complete 200's validators to be kept.
//
// A share image's read (a Get of KindImage) is never conditional and keeps no
// validators: its bytes are judged and dropped, so a 304 would stand for
// nothing the caller has. Nor is a Get with [GetOptions.Unconditional], for
// the same reason. A Get with [GetOptions.DeferValidators] sends the
// validators kept but keeps none of its 200's: its caller keeps them with
// [Client.SaveValidators].
func (v *conditional) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != "" {
		return next(v.Next).RoundTrip(req)
	}
	call := callFrom(req.Context())
	if call != nil && (call.kind == KindImage || call.unconditional) {
		return next(v.Next).RoundTrip(req)
	}
	ctx := req.Context()
	st := v.store()
	var key string // made only when needed: an empty MemoryStore has nothing to look up
	if ms, ok := st.(*MemoryStore); !ok || ms.Len() > 0 {
		key = validatorKey(req)
	}
	var saved int64 // what a 304 to the validators sent saves
	if val, ok, err := v.lookup(ctx, st, key); err == nil && ok && (val.ETag != "" || val.LastModified != "") {
		saved = val.Length
		r := req.Clone(ctx)
		if val.ETag != "" {
			r.Header.Set("If-None-Match", val.ETag)
		}
		if val.LastModified != "" {
			r.Header.Set("If-Modified-Since", val.LastModified)
		}
		req = r
	}
	resp, err := next(v.Next).RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotModified && saved > 0 {
		if t := turnFrom(ctx); t != nil {
			t.setSaved(saved)
		}
	}
	if resp.StatusCode == http.StatusOK && (call == nil || !call.deferred) {
		val := Validator{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
		if val.ETag != "" || val.LastModified != "" {
			if key == "" {
				key = validatorKey(req)
			}
			resp.Body = &keepOnEOF{rc: resp.Body, put: func(n int64) {
				v := val // val is captured by value (never assigned): no allocation of its own
				v.Length = n
				_ = st.Put(context.WithoutCancel(ctx), key, v)
			}}
		}
	}
	return resp, nil
}

// lookup returns the validators kept for key; an empty key (nothing kept at all)
// finds none.
func (v *conditional) lookup(ctx context.Context, st ValidatorStore, key string) (Validator, bool, error) {
	if key == "" {
		return Validator{}, false, nil
	}
	return st.Get(ctx, key)
}

// keepOnEOF calls put once when the body reaches a clean EOF.
type keepOnEOF struct {
	rc  io.ReadCloser
	put func(n int64) // n: the body's bytes
	n   int64
	bad bool
	did bool
}

func (b *keepOnEOF) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF && !b.bad && !b.did:
		b.did = true
		b.put(b.n)
	case err != nil && err != io.EOF:
		b.bad = true
	}
	return n, err
}

func (b *keepOnEOF) Close() error { return b.rc.Close() }
