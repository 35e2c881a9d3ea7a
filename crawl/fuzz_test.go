package crawl

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSource loads a source from JSON as the CLI would (unknown fields
// refused) and validates it: never a panic; an invalid source is always a
// *SourceError naming a field; a valid one survives a JSON round trip
// still valid. Seeds: testdata/sources.
func FuzzSource(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "sources", "*.json"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeStrict(b)
		if err != nil {
			return
		}
		err = s.Validate()
		if err != nil {
			var se *SourceError
			if !errors.As(err, &se) || se.Field == "" {
				t.Fatalf("Validate = %v, want a *SourceError naming a field", err)
			}
			return
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := decodeStrict(again)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", again, err)
		}
		if err := s2.Validate(); err != nil {
			t.Fatalf("a valid source is invalid after a round trip: %v\n%s", err, again)
		}
	})
}

func decodeStrict(b []byte) (*Source, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Source
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// The seed files load and validate as their names say.
func TestSource_TestdataSeeds(t *testing.T) {
	t.Parallel()
	for name, valid := range map[string]bool{"wordpress.json": true, "cms.json": true, "bad-interval.json": false} {
		b, err := os.ReadFile(filepath.Join("testdata", "sources", name))
		if err != nil {
			t.Fatal(err)
		}
		s, err := decodeStrict(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.Validate(); (err == nil) != valid {
			t.Errorf("%s: Validate = %v, want valid %v", name, err, valid)
		}
	}
}
