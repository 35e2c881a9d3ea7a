package main

import (
	"reflect"
	"strings"
	"testing"
)

// The state's backend is chosen in one place: every section of the
// configuration's store that can hold the state (a pointer to a type with
// check, open and where) is a row of the backends table under its own key,
// and the row answers for that section alone. A backend added as a section
// without its row, or a row without its section, fails here.
func TestBackends_EveryStateSectionIsOneRow(t *testing.T) {
	sectionType := reflect.TypeFor[stateSection]()
	st := reflect.TypeFor[StoreConfig]()
	rows := map[string]int{}
	for i, b := range backends {
		if _, dup := rows[b.key]; dup {
			t.Errorf("backend %q has two rows", b.key)
		}
		rows[b.key] = i
	}
	sections := 0
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Type.Kind() != reflect.Pointer || !f.Type.Implements(sectionType) {
			continue
		}
		sections++
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		row, ok := rows[key]
		if !ok {
			t.Errorf("store.%s (%s) holds a state backend but has no row in backends", key, f.Type)
			continue
		}
		// Only this section set: its row, and no other, answers with it.
		var sc StoreConfig
		v := reflect.New(f.Type.Elem())
		reflect.ValueOf(&sc).Elem().Field(i).Set(v)
		for j, b := range backends {
			sec, set := b.section(&sc)
			switch {
			case j == row && (!set || sec != v.Interface()):
				t.Errorf("store.%s set: its row does not return it (%v, %v)", key, sec, set)
			case j != row && set:
				t.Errorf("store.%s set: the row of %q answers too", key, b.key)
			}
		}
		if got, _, ok := sc.stateSection(); !ok || got != "store."+key {
			t.Errorf("store.%s set: the state is chosen as %q (%v)", key, got, ok)
		}
	}
	if sections != len(backends) {
		t.Errorf("%d state sections in StoreConfig, %d rows in backends", sections, len(backends))
	}
	if _, _, ok := (&StoreConfig{}).stateSection(); ok {
		t.Error("no section set, yet a backend other than the file is chosen")
	}
}
