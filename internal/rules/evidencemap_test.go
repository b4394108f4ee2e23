package rules_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"backfire.dev/backfire/internal/evidence"
	"backfire.dev/backfire/internal/rules"
	_ "backfire.dev/backfire/internal/rules/probes"
	_ "backfire.dev/backfire/internal/rules/resources"
)

// fill sets each field of the struct v points to either to its zero value
// or to a value of its own: a pointer field nil, to a zero or to a value.
func fill(v reflect.Value, rng *rand.Rand) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() || rng.IntN(3) == 0 {
			continue // zero
		}
		if f.Kind() == reflect.Pointer {
			p := reflect.New(f.Type().Elem())
			if rng.IntN(2) == 0 {
				setValue(p.Elem(), rng)
			}
			f.Set(p)
			continue
		}
		setValue(f, rng)
	}
}

func setValue(f reflect.Value, rng *rand.Rand) {
	switch f.Kind() {
	case reflect.String:
		f.SetString([]string{"PostgreSQL", "image postgres, port 5432", "x"}[rng.IntN(3)])
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		f.SetInt(int64(rng.IntN(1000)) - 500)
	case reflect.Uint64, reflect.Uint32:
		f.SetUint(uint64(rng.IntN(1000)) + 1)
	case reflect.Float64:
		f.SetFloat(rng.Float64())
	}
}

// Every evidence type that builds its own map builds what evidence.Map
// makes of it, field for field and type for type, over values with every
// field zero, set, or (a pointer) absent: a field added to the struct and
// not to its map fails here.
func TestEvidenceMapsAreEvidenceMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mappers := 0
	for _, r := range rules.Registered() {
		for _, typ := range r.EvidenceTypes() {
			if !typ.Implements(reflect.TypeFor[rules.EvidenceMapper]()) {
				continue
			}
			mappers++
			for range 200 {
				v := reflect.New(typ).Elem()
				fill(v, rng)
				got, want := v.Interface().(rules.EvidenceMapper).EvidenceMap(), evidence.Map(v.Interface())
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: %s.EvidenceMap() = %#v, evidence.Map = %#v", r.ID, typ.Name(), got, want)
				}
			}
		}
	}
	// BF101, BF102, BF106 and BF201 build their own.
	if mappers < 4 {
		t.Fatalf("%d evidence types build their own map, want the four most frequent findings'", mappers)
	}
}
