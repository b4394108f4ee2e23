package flagger_test

import (
	"testing"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/ruletest"
)

// This family's rules run their fixtures here too, so a wrong fixture fails
// go test ./internal/rules/... and not only the catalog's test.
func TestFixtures(t *testing.T) { ruletest.RunFamily(t, catalog.All()) }
