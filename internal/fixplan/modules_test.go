package fixplan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/testutil"
)

// A template that names sixteen modules' resources maps before the
// top-level one it prints the database's resources from (with
// .Values.resources, toYaml .): the reference nearest the line that
// writes resources: is tried first, so the top-level map is reached
// (before, the sixteen filled the eight candidates and it was left).
func TestNearestTemplateRefRanksFirst(t *testing.T) {
	src := filepath.Join(testutil.RepoRoot(t), "internal", "fixplan", "testdata", "modules")
	chart := filepath.Join(t.TempDir(), "modules")
	if err := os.CopyFS(chart, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	o := options(chart)
	o.Helm = &helm.Options{}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Left {
		t.Errorf("left %s: %s", l.Finding.Rule, l.Reason)
	}
	if len(p.Routes) != 1 || strings.Join(p.Routes[0].Keys, ",") != "resources" || len(p.Fixed) != 1 {
		t.Errorf("routes %+v, want the top-level resources map", p.Routes)
	}
}

// Mastodon's chart (testdata/corpus/mastodon, with Bitnami's Elasticsearch
// chart as its dependency) prints each sidekiq worker's resources from
// `$context.Values.mastodon.sidekiq.resources`, with the top-level
// `resources` as the default, inside a range over the workers. The
// dependency's values tree holds many `resources` maps before it, so the
// map is reached only through the template's own reference: BF201 on the
// sidekiq Deployment goes to mastodon.sidekiq.resources (the top-level
// map would change the other Deployments too), and the web Deployment's
// to mastodon.web.resources. Before references through a variable were
// listed, the sidekiq finding was left with "the chart's values do not
// reach".
func TestModuleResourcesThroughAVariable(t *testing.T) {
	chart := copyChart(t, "mastodon", "mastodon")
	// The other two dependencies, switched off: Helm wants them present.
	for _, dep := range []string{"postgresql", "redis"} {
		testutil.WriteFiles(t, chart, map[string]string{
			"charts/" + dep + "/Chart.yaml": "apiVersion: v2\nname: " + dep + "\nversion: 0.0.0\n",
		})
	}
	o := options(chart)
	o.Scan.Rules.Config = &config.Config{Disable: []string{"BF303"}}
	o.Helm = &helm.Options{Set: []string{
		"postgresql.enabled=false", "postgresql.postgresqlHostname=db",
		"redis.enabled=false", "redis.hostname=redis",
		"mastodon.secrets.secret_key_base=a", "mastodon.secrets.otp_secret=a",
		"mastodon.secrets.vapid.private_key=a", "mastodon.secrets.vapid.public_key=a",
		"mastodon.secrets.activeRecordEncryption.primaryKey=a",
		"mastodon.secrets.activeRecordEncryption.deterministicKey=a",
		"mastodon.secrets.activeRecordEncryption.keyDerivationSalt=a",
	}}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) > 0 {
		t.Fatalf("input errors: %v", p.Errors)
	}
	for _, l := range p.Left {
		t.Errorf("left %s on %s: %s", l.Finding.Rule, l.Finding.Object, l.Reason)
	}
	want := map[string]string{
		"release-name-mastodon-sidekiq-all-queues": "mastodon.sidekiq.resources",
		"release-name-mastodon-web":                "mastodon.web.resources",
	}
	for _, r := range p.Routes {
		prefix, ok := want[r.Object.Name]
		if !ok || !strings.HasSuffix(r.Block, ".resources") {
			continue
		}
		for _, k := range r.Keys {
			if k != prefix && !strings.HasPrefix(k, prefix+".") {
				t.Errorf("%s: key %s, want under %s", r.Object.Name, k, prefix)
			}
		}
		delete(want, r.Object.Name)
	}
	for name, prefix := range want {
		t.Errorf("%s: no values route to %s (routes %+v)", name, prefix, p.Routes)
	}
}
