package probes_test

import (
	"backfire.dev/backfire/internal/catalog"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// key identifies a finding the way these tests expect it.
type key struct{ rule, kind, name, container string }

// scanProbes runs the probe family over paths, rendering Helm charts the
// way `backfire scan` does.
func scanProbes(t *testing.T, paths ...string) *scan.Result {
	t.Helper()
	charts, err := helm.New(helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := scan.Run(scan.Options{Paths: paths, Catalog: catalog.Family("probes"), Charts: charts, KeepObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		t.Logf("input error (not the rules' business): %v", e)
	}
	return res
}

// exactly checks that the findings are precisely want (with the reason each
// is right), and returns them by key for closer checks.
func exactly(t *testing.T, res *scan.Result, want map[key]string) map[key]finding.Finding {
	t.Helper()
	got := map[key]finding.Finding{}
	for _, f := range res.Findings {
		k := key{f.Rule, f.Object.Kind, f.Object.Name, f.Container}
		if _, dup := got[k]; dup {
			t.Errorf("%v reported twice", k)
		}
		got[k] = f
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %v: %s", k, f.Message)
		}
	}
	for k, why := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("missing %v (%s)", k, why)
		}
	}
	return got
}

func TestCorpusArgoRolloutsExamples(t *testing.T) {
	res := scanProbes(t, testutil.Corpus(t, "argo-rollouts-examples"))
	if res.Summary.Objects < 50 {
		t.Fatalf("only %d objects decoded: the corpus was not read", res.Summary.Objects)
	}
	exactly(t, res, map[key]string{
		// helm-blue-green renders a Rollout (replicaCount 1) whose liveness
		// and readiness are both httpGet / on port http with every timing
		// left at its default.
		{"BF102", "Rollout", "release-name-helm-guestbook", "helm-guestbook"}: "httpGet liveness, timeoutSeconds unset: 1 s",
		{"BF103", "Rollout", "release-name-helm-guestbook", "helm-guestbook"}: "same httpGet check, liveness budget 31 s equals readiness's 31 s",
	})
	// Absent on purpose: the examples run demo web servers (no database, so
	// no BF101), no readiness probe sets failureThreshold 1 (no BF104), and
	// the other Rollouts have no probes at all.
}

func TestCorpusRolloutsDemo(t *testing.T) {
	// The example directories are Kustomize overlays; their plain files are
	// scanned one by one.
	var files []string
	root := testutil.Corpus(t, "rollouts-demo")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	res := scanProbes(t, files...)
	rollouts := 0
	for _, o := range res.Objects {
		if o.Kind == "Rollout" {
			rollouts++
		}
	}
	if rollouts < 5 {
		t.Fatalf("only %d Rollouts decoded from %d files: the corpus was not read", rollouts, len(files))
	}
	// Nothing: the demo Rollouts probe readiness with tcpSocket on 8080 and
	// the default failureThreshold (no BF104), and have no liveness probe
	// (no BF101, BF102, BF103).
	exactly(t, res, map[key]string{})
}

func TestCorpusHarborChart(t *testing.T) {
	res := scanProbes(t, testutil.Corpus(t, "harbor-helm"))
	got := exactly(t, res, map[key]string{
		// The registry's PostgreSQL: exec /docker-healthcheck.sh (psql),
		// 300/10/1/3, readiness the same script with the same thresholds.
		{"BF101", "StatefulSet", "release-name-harbor-database", "database"}: "querying liveness on harbor-db",
		{"BF102", "StatefulSet", "release-name-harbor-database", "database"}: "timeoutSeconds 1 from values.yaml, database-like: error",
		{"BF103", "StatefulSet", "release-name-harbor-database", "database"}: "same script, 31 s against 31 s",
		// Every other component: httpGet liveness with timeoutSeconds 1 from
		// values.yaml, and readiness on the same path with the same numbers.
		{"BF102", "Deployment", "release-name-harbor-core", "core"}:             "timeoutSeconds 1",
		{"BF103", "Deployment", "release-name-harbor-core", "core"}:             "same /api/v2.0/ping, 21 s against 21 s",
		{"BF102", "Deployment", "release-name-harbor-jobservice", "jobservice"}: "timeoutSeconds 1",
		{"BF103", "Deployment", "release-name-harbor-jobservice", "jobservice"}: "same /api/v1/stats",
		{"BF102", "Deployment", "release-name-harbor-portal", "portal"}:         "timeoutSeconds 1",
		{"BF103", "Deployment", "release-name-harbor-portal", "portal"}:         "same /",
		{"BF102", "Deployment", "release-name-harbor-registry", "registry"}:     "timeoutSeconds 1",
		{"BF103", "Deployment", "release-name-harbor-registry", "registry"}:     "same / on 5000",
		{"BF102", "Deployment", "release-name-harbor-registry", "registryctl"}:  "timeoutSeconds 1",
		{"BF103", "Deployment", "release-name-harbor-registry", "registryctl"}:  "same /api/health",
		{"BF102", "StatefulSet", "release-name-harbor-trivy", "trivy"}:          "timeoutSeconds 1 (failureThreshold 10)",
		// Harbor's Valkey (save points in its redis.conf) is Ready by a
		// tcpSocket check while it loads its dataset and answers -LOADING.
		{"BF106", "StatefulSet", "release-name-harbor-redis", "redis"}: "tcpSocket readiness on 6379, one replica: info",
	})
	// Absent on purpose: Harbor's Redis is probed with tcpSocket (no BF101
	// or BF102 although it is database-like); trivy's readiness uses another
	// path than its liveness (no BF103); no readiness sets failureThreshold 1;
	// the database's readiness runs the psql script, which fails while it
	// recovers (no BF106).
	db := got[key{"BF101", "StatefulSet", "release-name-harbor-database", "database"}]
	if db.Severity != finding.Error {
		t.Errorf("BF101 on the database is %s, want error", db.Severity)
	}
	if !strings.HasSuffix(db.File, filepath.Join("templates", "database", "database-ss.yaml")) {
		t.Errorf("BF101 points at %s, want the database template", db.File)
	}
	if s := got[key{"BF102", "StatefulSet", "release-name-harbor-database", "database"}].Severity; s != finding.Error {
		t.Errorf("BF102 on the database is %s, want error", s)
	}
	redis := got[key{"BF106", "StatefulSet", "release-name-harbor-redis", "redis"}]
	if redis.Severity != finding.Info || !strings.Contains(string(redis.Fix.Patch), `valkey-cli -p 6379 ping`) {
		t.Errorf("BF106 on Harbor's Valkey: %s, patch %s; want info, a valkey-cli PONG check", redis.Severity, redis.Fix.Patch)
	}
	if s := got[key{"BF102", "StatefulSet", "release-name-harbor-trivy", "trivy"}].Severity; s != finding.Warning {
		t.Errorf("BF102 on trivy is %s, want warning (not a database)", s)
	}
}

func TestExamples(t *testing.T) {
	res := scanProbes(t, filepath.Join(testutil.RepoRoot(t), "examples"))
	got := exactly(t, res, map[key]string{
		// Seed 003: the registry's PostgreSQL.
		{"BF101", "StatefulSet", "registry-database", "database"}: "querying liveness on harbor-db",
		{"BF102", "StatefulSet", "registry-database", "database"}: "timeoutSeconds 1 on a database",
		{"BF103", "StatefulSet", "registry-database", "database"}: "same /docker-healthcheck.sh, 31 s against 31 s",
		// Seed 000: readiness failureThreshold 1; KEDA min 8 and
		// minPodsPerReplicaSet 2 give the first step (setWeight 1) 2 pods.
		{"BF104", "Rollout", "order-front-api", "api"}: "2 canary pods at the first step",
		// The same probe at every replica count: 4 sync gunicorn workers
		// under 900m, timeout 1 s, failureThreshold 1.
		{"BF107", "Rollout", "order-front-api", "api"}: "a probe queued behind 4 workers, stretched 4.4x",
	})
	// Absent on purpose: healthy-web (liveness /healthz with timeoutSeconds
	// 3, readiness /ready, 6 replicas) and order-front-api's liveness
	// (timeoutSeconds 5, /live differs from /ready).

	db := got[key{"BF101", "StatefulSet", "registry-database", "database"}]
	if db.Severity != finding.Error {
		t.Errorf("BF101 severity %s, want error", db.Severity)
	}
	mech := strings.Join(db.Mechanism, "\n")
	for _, want := range []string{
		"Killed 330 s after start if never healthy (300 + 3 x 10)",
		"a crash recovery longer than 330 s from the container's start never completes; recovery restarts from scratch at every kill",
		`SQLSTATE 57P03 "the database system is not yet accepting connections" (PostgreSQL 15 and later; "the database system is starting up" up to 14`,
		"(3-1) x 10 + 1 = 21 s after the first slow answer, SIGKILL at most 120 s after SIGTERM",
		"Adding CPU only makes the first slow minute rarer",
	} {
		if !strings.Contains(mech, want) {
			t.Errorf("BF101 mechanism lacks %q:\n%s", want, mech)
		}
	}
	for k, v := range map[string]any{"timeToKillSeconds": 21, "neverHealthyKillSeconds": 330, "initialDelaySeconds": 300, "server": "PostgreSQL"} {
		if db.Evidence[k] != v {
			t.Errorf("BF101 evidence %s = %v, want %v", k, db.Evidence[k], v)
		}
	}
	if s := got[key{"BF102", "StatefulSet", "registry-database", "database"}].Severity; s != finding.Error {
		t.Errorf("BF102 severity %s, want error (database-like)", s)
	}
	if p := string(db.Fix.Patch); !strings.Contains(p, `"exec":null`) || !strings.Contains(p, `"tcpSocket":{"port":5432}`) {
		t.Errorf("BF101 fix does not replace exec with tcpSocket 5432: %s", p)
	}
	flap := got[key{"BF107", "Rollout", "order-front-api", "api"}]
	if flap.Evidence["missCpuMs"] != 225.0 || flap.Evidence["stretch"] != 4.4 {
		t.Errorf("BF107 evidence %v, want a probe missed behind 225 ms of CPU, stretched 4.4x (90 ms / 4 workers per 100 ms)", flap.Evidence)
	}
}

// YugabyteDB's tserver listens on 6379 (it answers Redis commands) but
// runs /home/yugabyte/bin/yb-tserver: a port alone does not make it Redis,
// so its liveness timeout is a warning, as its sibling yb-master's is.
func TestCorpusYugabyteChart(t *testing.T) {
	res := scanProbes(t, testutil.Corpus(t, "yugabyte"))
	got := exactly(t, res, map[key]string{
		{"BF102", "StatefulSet", "yb-master", "yb-master"}:   "disk-check liveness, timeoutSeconds 1",
		{"BF102", "StatefulSet", "yb-tserver", "yb-tserver"}: "the same, not a Redis server",
	})
	for k, f := range got {
		if f.Severity != finding.Warning || strings.Contains(strings.Join(f.Mechanism, " "), "Redis") {
			t.Errorf("%v: %s, %q; want a warning that does not call it Redis", k, f.Severity, f.Mechanism)
		}
	}
}

// Dragonfly's chart probes with the image's healthcheck.sh, echo PING |
// nc; exit $?: it passes as soon as the port opens, so the liveness probe
// does not kill a load (no BF101, which assumed it needed PONG), and the
// readiness probe lets a loading server take traffic (BF106, info).
func TestCorpusDragonflyChart(t *testing.T) {
	res := scanProbes(t, testutil.Corpus(t, "dragonfly"))
	exactly(t, res, map[key]string{
		{"BF103", "Deployment", "release-name-dragonfly", "dragonfly"}: "the same script for both, 35 s against 35 s",
		{"BF106", "Deployment", "release-name-dragonfly", "dragonfly"}: "nc readiness passes while it answers -LOADING",
	})
}

// InfluxDB 1.x opens its HTTP listener only after loading every shard
// (cmd/influxd/run/server.go Server.Open): the chart's /ping liveness, 30 +
// 3 x 10 = 60 s, kills a longer load. Missed before, as /ping "answers
// without running a query".
func TestCorpusInfluxDB1Chart(t *testing.T) {
	res := scanProbes(t, testutil.Corpus(t, "influxdb"))
	got := exactly(t, res, map[key]string{
		{"BF101", "StatefulSet", "release-name-influxdb", "release-name-influxdb"}: "/ping needs the HTTP listener, open only after loading",
	})
	f := got[key{"BF101", "StatefulSet", "release-name-influxdb", "release-name-influxdb"}]
	if !strings.Contains(f.Message, "60 s (30 + 3 x 10)") {
		t.Errorf("BF101: %s; want the 60 s budget", f.Message)
	}
}
