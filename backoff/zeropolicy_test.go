package backoff

import (
	"reflect"
	"testing"
	"time"
)

// TestPolicy_IsZero_EveryFieldCounts: a Policy setting any one field, of all
// the fields Policy has (found by reflection, so a field added later is
// covered without touching this test), is not the zero Policy, and a Ledger
// does not read it as StrictNews.
func TestPolicy_IsZero_EveryFieldCounts(t *testing.T) {
	t.Parallel()
	if !(Policy{}).IsZero() || !(Policy{RefuseStatus: []int{}}).IsZero() {
		t.Fatal("the zero Policy (or one with an empty RefuseStatus) is not IsZero")
	}
	typ := reflect.TypeFor[Policy]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var p Policy
		v := reflect.ValueOf(&p).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(int64(time.Minute))
		case reflect.Float64:
			v.SetFloat(3)
		case reflect.Slice:
			v.Set(reflect.ValueOf([]int{500}))
		default:
			t.Fatalf("field %s of kind %v: teach this test to set it", f.Name, v.Kind())
		}
		if p.IsZero() {
			t.Errorf("a Policy setting only %s is IsZero: it would silently become StrictNews", f.Name)
		}
		if r := p.resolved(); reflect.DeepEqual(r, StrictNews().resolved()) {
			t.Errorf("a Policy setting only %s resolves to StrictNews", f.Name)
		}
	}
}

// TestObserve_VerdictOnEveryEvent: the event Observe returns carries the
// policy's verdict on the answer, whatever the event (none, refused,
// cleared), so a caller learns from the ledger whether an answer was a
// refusal instead of listing statuses of its own.
func TestObserve_VerdictOnEveryEvent(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		pol    Policy
		status int
		want   Verdict
	}{
		{"strict 429", StrictNews(), 429, Refusal},
		{"strict 503 is not a refusal", StrictNews(), 503, Neutral},
		{"digest 503", Digest(), 503, Refusal},
		{"digest 403 is not a refusal", Digest(), 403, Neutral},
		{"vault 404", Vault(), 404, Refusal},
		{"vault 200", Vault(), 200, Success},
		{"zero policy 401", Policy{}, 401, Refusal},
	} {
		l := &Ledger{Policy: tc.pol}
		ev, err := l.Observe(t.Context(), "a.example", NewOutcome(Article, tc.status, nil, nil), now)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Verdict != tc.want {
			t.Errorf("%s: verdict %v, want %v", tc.name, ev.Verdict, tc.want)
		}
		if tc.want == Refusal && ev.Type != EventRefused && ev.Type != EventSuspended {
			t.Errorf("%s: event %v for a refusal", tc.name, ev.Type)
		}
		// A success after it clears, and says so.
		if tc.want == Refusal {
			ev, err = l.Observe(t.Context(), "a.example", NewOutcome(Article, 200, nil, nil), now.Add(time.Hour))
			if err != nil || ev.Verdict != Success || ev.Type != EventCleared {
				t.Errorf("%s: the 200 after: %v %v %v", tc.name, ev.Type, ev.Verdict, err)
			}
		}
	}
}

// TestSlowsDown_S2_RefusalOrAskedToWait: an answer slows a crawler down when
// the policy counts it a refusal, or when it is a 429 or a 503 whatever the
// policy counts; a 200, a 404 or a 500 under a policy that does not refuse
// them does not.
func TestSlowsDown_S2_RefusalOrAskedToWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		pol    Policy
		status int
		want   bool
	}{
		{"strict 401", StrictNews(), 401, true},
		{"strict 403", StrictNews(), 403, true},
		{"strict 429", StrictNews(), 429, true},
		{"strict 503", StrictNews(), 503, true},
		{"strict 500", StrictNews(), 500, false},
		{"strict 404", StrictNews(), 404, false},
		{"strict 200", StrictNews(), 200, false},
		{"digest 403", Digest(), 403, false},
		{"digest 503", Digest(), 503, true},
		{"vault 404", Vault(), 404, true},
	} {
		if got := tc.pol.SlowsDown(NewOutcome(Feed, tc.status, nil, nil)); got != tc.want {
			t.Errorf("%s: SlowsDown %v, want %v", tc.name, got, tc.want)
		}
	}
	if !StrictNews().SlowsDown(Outcome{Kind: Feed, Status: 200, Challenge: "cloudflare"}) {
		t.Error("a challenge page does not slow the crawler down")
	}
}
