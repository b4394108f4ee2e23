package classify

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// PID1Of decides, from the command alone, whether the shell that starts a
// server stays PID 1 (and so swallows the stop signal): by where the
// server's command sits in the script and which shell runs it.
func TestPID1Of(t *testing.T) {
	pg := Verdict{DatabaseLike: true, Server: &Servers[0]}
	for _, tc := range []struct {
		name    string
		c       corev1.Container
		keeps   bool
		assumed bool
		exec    string // the script with exec, "" when none is proposed
	}{
		{"exec'd", corev1.Container{Image: "postgres:16", Command: []string{"sh", "-c", "chown -R 999 /data; exec postgres -D /data"}}, false, false, ""},
		{"exec after an assignment", corev1.Container{Image: "postgres:16", Command: []string{"sh", "-c", "PGDATA=/x exec postgres"}}, false, false, ""},
		{"dash forks the last command", corev1.Container{Image: "postgres:16", Command: []string{"sh", "-c", "chown -R 999 /data && postgres -D /data"}}, true, false, "chown -R 999 /data && exec postgres -D /data"},
		{"alpine's busybox execs it", corev1.Container{Image: "postgres:16-alpine", Command: []string{"sh", "-c", "chown -R 999 /data; postgres -D /data"}}, false, false, ""},
		{"an unknown image's sh is assumed dash", corev1.Container{Image: "registry.example.com/pg:1", Command: []string{"/bin/sh", "-c", "docker-entrypoint.sh postgres"}}, true, true, "exec docker-entrypoint.sh postgres"},
		{"bash execs a last simple command", corev1.Container{Image: "postgres:16", Command: []string{"bash", "-c", "mkdir -p /run/pg; postgres"}}, false, false, ""},
		{"bash forks one with a redirection", corev1.Container{Image: "postgres:16", Command: []string{"bash", "-c", "postgres > /var/log/pg.log 2>&1"}}, true, false, "exec postgres > /var/log/pg.log 2>&1"},
		{"backgrounded, then wait", corev1.Container{Image: "postgres:16", Command: []string{"/bin/bash", "-c"}, Args: []string{"postgres & wait"}}, true, false, ""},
		{"in a pipeline", corev1.Container{Image: "postgres:16", Command: []string{"bash", "-ec", "postgres 2>&1 | tee /log/pg.log"}}, true, false, ""},
		{"commands follow it", corev1.Container{Image: "postgres:16", Command: []string{"bash", "-c", "postgres; echo stopped"}}, true, false, ""},
		{"a trap forwards", corev1.Container{Image: "postgres:16", Command: []string{"sh", "-c", "trap 'kill -INT $pid' TERM; postgres & pid=$!; wait"}}, false, false, ""},
		{"not a shell", corev1.Container{Image: "postgres:16", Command: []string{"docker-entrypoint.sh", "postgres"}}, false, false, ""},
		{"a shell that starts something else", corev1.Container{Image: "postgres:16", Command: []string{"sh", "-c", "sleep infinity"}}, false, false, ""},
		{"inside an if: not read", corev1.Container{Image: "postgres:16", Command: []string{"sh", "-c", "if [ -f /x ]; then postgres; fi"}}, false, false, ""},
	} {
		p := PID1Of(&tc.c, pg)
		if p.Keeps != tc.keeps || (p.Assumed != "") != tc.assumed || p.Exec != tc.exec {
			t.Errorf("%s: keeps %v (%s), assumed %q, exec %q; want keeps %v, assumed %v, exec %q", tc.name, p.Keeps, p.Why, p.Assumed, p.Exec, tc.keeps, tc.assumed, tc.exec)
		}
	}
}

func TestStopSignalOf(t *testing.T) {
	sigint := corev1.SIGINT
	for _, tc := range []struct {
		c    corev1.Container
		want string
	}{
		{corev1.Container{Image: "postgres:16"}, "SIGINT"},
		{corev1.Container{Image: "docker.io/library/postgres:16-alpine"}, "SIGINT"},
		{corev1.Container{Image: "docker.io/bitnami/postgresql:17.6.0-debian-12-r4"}, "SIGTERM"},
		{corev1.Container{Image: "goharbor/harbor-db:v2.13.0"}, "SIGTERM"},
		{corev1.Container{Image: "docker.io/bitnami/postgresql:17", Lifecycle: &corev1.Lifecycle{StopSignal: &sigint}}, "SIGINT"},
		{corev1.Container{Image: "registry.example.com/team/postgres:16"}, ""},
		{corev1.Container{Image: "ghcr.io/cloudnative-pg/postgresql:16"}, ""},
	} {
		if got := StopSignalOf(&tc.c).Signal; got != tc.want {
			t.Errorf("%s: %q, want %q", tc.c.Image, got, tc.want)
		}
	}
}

// The stop reading parses shell scripts and server flags from manifests:
// whatever they hold, it must not panic.
func FuzzStopReading(f *testing.F) {
	for _, s := range []string{
		"chown -R 999 /data && postgres -D /data",
		"postgres & wait",
		"trap 'kill -INT $pid' TERM; postgres & pid=$!; wait",
		"if [ -f x ]; then\n  redis-server --save '' --maxmemory 4gb\nfi",
		"exec gosu postgres postgres -c shared_buffers=4GB",
		"'unterminated \"quote \\",
		"a |",
		"; ; && ||",
	} {
		f.Add("postgres:16", s, "--maxmemory 4gb")
	}
	f.Fuzz(func(t *testing.T, image, script, args string) {
		for i := range Servers {
			v := Verdict{DatabaseLike: true, Server: &Servers[i]}
			for _, c := range []corev1.Container{
				{Image: image, Command: []string{"sh", "-c", script}, Args: []string{args}},
				{Image: image, Command: []string{"bash", "-ec"}, Args: []string{script}},
				{Image: image, Args: []string{script, args}},
			} {
				PID1Of(&c, v)
				StopSignalOf(&c)
				CleanStopOf(&c, v, 100)
			}
		}
	})
}
