package redis

import "testing"

// FuzzLedgerRecord: any stored value either decodes or is reported
// corrupt, never a panic; what decodes encodes back to the same record.
// Seeds: below, and testdata/fuzz/FuzzLedgerRecord.
func FuzzLedgerRecord(f *testing.F) {
	f.Add(`{"strikes":2,"kind":1,"status":429,"challenge":"cloudflare","last_at":1767225600000000000,"until":1767225900000000000}`)
	f.Add(`{"suspended":true,"next_check":1}`)
	f.Add(`{}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, v string) {
		st, err := decodeState(v, 0)
		if err != nil {
			return
		}
		again, err := decodeState(string(encodeState(st, 0)), 0)
		if err != nil {
			t.Fatalf("re-decoding %q: %v", v, err)
		}
		if again.Strikes != st.Strikes || !again.Until.Equal(st.Until) || !again.LastAt.Equal(st.LastAt) ||
			!again.NextCheck.Equal(st.NextCheck) || again.Suspended != st.Suspended || again.LastChallenge != st.LastChallenge {
			t.Fatalf("%q: %+v, then %+v", v, st, again)
		}
	})
}
