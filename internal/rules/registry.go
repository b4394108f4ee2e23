package rules

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// registry holds every rule a family package registered as it was
// initialised. It is read through package catalog, which imports every
// family: read here, it would hold only the families some import pulled in.
var registry struct {
	mu    sync.Mutex
	rules []*Rule
}

// Register adds a rule to the catalog and returns it, so that a family
// declares each rule in one statement:
//
//	var BF103 = rules.Register(&rules.Rule{ID: "BF103", ...})
//
// The rule is filed under the package that registers it (its family, where
// its fixtures live: testdata/ID). A duplicate ID or slug is a programming
// error and panics at start-up.
func Register(r *Rule) *Rule {
	r.family = callerPackage()
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, o := range registry.rules {
		if strings.EqualFold(o.ID, r.ID) || o.Slug == r.Slug {
			panic(fmt.Sprintf("rules: %s (%s) registered twice: %s and %s", r.ID, r.Slug, o.family, r.family))
		}
	}
	registry.rules = append(registry.rules, r)
	return r
}

// Registered returns the registered rules in ID order. Use catalog.All,
// which makes sure every family is registered.
func Registered() []*Rule {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	out := slices.Clone(registry.rules)
	slices.SortFunc(out, func(a, b *Rule) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Family is the import path of the package that registered the rule
// ("backfire.dev/backfire/internal/rules/probes"), "" for a rule that was
// not registered (a test's).
func (r *Rule) Family() string { return r.family }

// EvidenceTypes returns the types of r.Evidence.
func (r *Rule) EvidenceTypes() []reflect.Type {
	out := make([]reflect.Type, len(r.Evidence))
	for i, e := range r.Evidence {
		out[i] = reflect.TypeOf(e)
	}
	return out
}

// declares reports whether v is of one of the rule's evidence types.
func (r *Rule) declares(v any) bool {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return slices.Contains(r.EvidenceTypes(), t)
}

// callerPackage is the import path of the package whose initialisation
// called Register: the function two frames up is "PATH.init" (or a
// closure in it), and PATH ends at the first dot after its last slash.
func callerPackage() string {
	pc, _, _, ok := runtime.Caller(2)
	if !ok {
		return ""
	}
	name := runtime.FuncForPC(pc).Name()
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}
