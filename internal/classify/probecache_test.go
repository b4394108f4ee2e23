package classify

import (
	"path"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Each part of the key tells apart two probes that read differently: a
// cache keyed without it would give the second the first's answer. The
// cache must answer each as ProbeWith does, asked in either order.
func TestProbeCacheKeysEverythingAnAnswerReads(t *testing.T) {
	redis, pg := Verdict{DatabaseLike: true, Server: serverNamed("Redis")}, Verdict{DatabaseLike: true, Server: serverNamed("PostgreSQL")}
	exec := func(argv ...string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: argv}}}
	}
	type ask struct {
		kind  string
		image string
		probe *corev1.Probe
		v     Verdict
		files Files
	}
	script := func(string) (File, bool) {
		return File{Text: "redis-cli -e ping", From: "ConfigMap health, key ping.sh"}, true
	}
	pairs := map[string][2]ask{
		"the server": {
			{"StatefulSet", "redis", exec("psql", "-c", "SELECT 1"), redis, nil},
			{"StatefulSet", "redis", exec("psql", "-c", "SELECT 1"), pg, nil}},
		"database-like": {
			{"StatefulSet", "redis", exec("check.sh"), redis, nil},
			{"StatefulSet", "redis", exec("check.sh"), Verdict{Server: redis.Server}, nil}},
		"runs to completion": {
			{"StatefulSet", "redis", exec("check.sh"), redis, nil},
			{"Job", "redis", exec("check.sh"), redis, nil}},
		"the image": {
			{"StatefulSet", "mariadb:11", exec("healthcheck.sh"), redis, nil},
			{"StatefulSet", "dragonfly:1", exec("healthcheck.sh"), redis, nil}},
		"the command": {
			{"StatefulSet", "redis", exec("redis-cli", "ping"), redis, nil},
			{"StatefulSet", "redis", exec("redis-cli", "-e", "ping"), redis, nil}},
		"the words' bounds": {
			{"StatefulSet", "redis", exec("redis-cli", "-e ping"), redis, nil},
			{"StatefulSet", "redis", exec("redis-cli -e", "ping"), redis, nil}},
		"no command": {
			{"StatefulSet", "redis", exec(), redis, nil},
			{"StatefulSet", "redis", exec(""), redis, nil}},
		"a file of the input": {
			{"StatefulSet", "redis", exec("sh", "-c", "/health/ping.sh"), redis, nil},
			{"StatefulSet", "redis", exec("sh", "-c", "/health/ping.sh"), redis, script}},
	}
	for what, pair := range pairs {
		first, second := ProbeWith(pair[0].kind, &corev1.Container{Image: pair[0].image}, pair[0].probe, pair[0].v, pair[0].files),
			ProbeWith(pair[1].kind, &corev1.Container{Image: pair[1].image}, pair[1].probe, pair[1].v, pair[1].files)
		if first == second {
			t.Errorf("%s: the pair reads the same (%q): it tells nothing apart", what, first.Evidence)
			continue
		}
		for _, order := range [][2]int{{0, 1}, {1, 0}} {
			pc := NewProbeCache(16)
			for range 2 { // the second round answers from the cache
				for _, i := range order {
					a := pair[i]
					got := pc.ProbeWith(a.kind, &corev1.Container{Image: a.image}, a.probe, a.v, a.files)
					if want := ProbeWith(a.kind, &corev1.Container{Image: a.image}, a.probe, a.v, a.files); got != want {
						t.Errorf("%s: the cache answers %q, ProbeWith %q", what, got.Evidence, want.Evidence)
					}
				}
			}
		}
	}
}

// A full cache still answers, without remembering more.
func TestProbeCacheIsBounded(t *testing.T) {
	pc := NewProbeCache(2)
	v := Verdict{DatabaseLike: true, Server: serverNamed("Redis")}
	for _, cmd := range []string{"redis-cli ping", "redis-cli -e ping", "valkey-cli ping", "keydb-cli ping"} {
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", cmd}}}}
		c := &corev1.Container{Image: "redis"}
		if got, want := pc.ProbeWith("StatefulSet", c, p, v, nil), ProbeWith("StatefulSet", c, p, v, nil); got != want {
			t.Errorf("%s: the cache answers %q, ProbeWith %q", cmd, got.Evidence, want.Evidence)
		}
	}
	if n := pc.n.Load(); n != 2 {
		t.Errorf("the cache holds %d answers, its bound is 2", n)
	}
}

// fuzzCache is shared by the fuzzer's inputs, so that one input answered
// with another's would show.
var fuzzCache = NewProbeCache(1 << 16)

func FuzzProbeCache(f *testing.F) {
	f.Add("sh\n-c\npg_isready -h 127.0.0.1", "postgres:16.4", uint8(0), true, false, false)
	f.Add("sh\n-c\nredis-cli ping | grep PONG", "redis:7.2", uint8(1), true, false, true)
	f.Add("/scripts/ping_liveness_local.sh\n5", "bitnami/redis", uint8(1), true, false, true)
	f.Add("healthcheck.sh", "mariadb:11", uint8(2), true, true, false)
	f.Add("sh\n-c\n. /opt/lib.sh; check_health", "zookeeper", uint8(3), false, false, true)
	f.Fuzz(func(t *testing.T, command, image string, server uint8, databaseLike, job, withFiles bool) {
		var argv []string
		if command != "" {
			argv = strings.Split(command, "\n")
		}
		var v Verdict
		if int(server) < len(Servers) {
			// a verdict is database-like only with a server
			v = Verdict{DatabaseLike: databaseLike, Server: &Servers[server]}
		}
		kind := "StatefulSet"
		if job {
			kind = "Job"
		}
		var files Files
		if withFiles {
			files = func(p string) (File, bool) {
				if strings.HasSuffix(p, ".sh") {
					return File{Text: "redis-cli -e ping\n" + p, From: "ConfigMap s, key " + path.Base(p)}, true
				}
				return File{}, false
			}
		}
		c := &corev1.Container{Image: image}
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: argv}}}
		want := ProbeWith(kind, c, p, v, files)
		for range 2 {
			if got := fuzzCache.ProbeWith(kind, c, p, v, files); got != want {
				t.Fatalf("the cache answers %+v, ProbeWith %+v", got, want)
			}
		}
	})
}
