package catalog_test

import (
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/testutil"
)

// module is the import path of the repository's root.
const module = "backfire.dev/backfire/"

// Every rule of the registry runs its fixtures: positive and negative, the
// expectations written in them (# want), the prose in their goldens, the
// fixes applied and rescanned. No rule needs a test of its own for this: a
// registered rule without fixtures fails here.
func TestEveryRuleRunsItsFixtures(t *testing.T) {
	root := testutil.RepoRoot(t)
	ruletest.Run(t, catalog.All(), func(r *rules.Rule) string {
		return filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(r.Family(), module)))
	})
}
