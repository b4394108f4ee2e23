package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/testutil"
)

// The ClusterRole that docs/cluster.md gives lets a scan read every kind it
// lists, and its table names each of them.
func TestDocumentedRBACCoversTheKinds(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "cluster.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "kind: ClusterRole\n")
	if start < 0 {
		t.Fatal("docs/cluster.md has no ClusterRole")
	}
	block := doc[start:]
	block = "apiVersion: rbac.authorization.k8s.io/v1\n" + block[:strings.Index(block, "---")]
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal([]byte(block), &role); err != nil {
		t.Fatal(err)
	}
	for _, k := range DefaultKinds {
		ok := slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, k.Group) && slices.Contains(r.Resources, k.Resource) && slices.Contains(r.Verbs, "list")
		})
		if !ok {
			t.Errorf("the documented ClusterRole does not grant list on %s", k.Name())
		}
		if !strings.Contains(doc, "| "+k.Kind) && !strings.Contains(doc, ", "+k.Kind) {
			t.Errorf("the table of docs/cluster.md does not name %s", k.Kind)
		}
	}
}
