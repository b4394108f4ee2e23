package stop

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestWindow(t *testing.T) {
	for _, c := range []struct{ g, p, since, before int }{
		{30, 0, 30, 30},
		{30, 10, 20, 30},
		{30, 30, 2, 30}, // the hook used it all: the 2 s floor
		{30, 45, 2, 30}, // the hook is cut at the grace period
		{0, 0, 2, 0},
	} {
		since, before := Window(c.g, c.p)
		if since != c.since || before != c.before {
			t.Errorf("Window(%d, %d) = %d, %d; want %d, %d", c.g, c.p, since, before, c.since, c.before)
		}
	}
}

func TestPreStopSeconds(t *testing.T) {
	exec := func(cmd ...string) *corev1.Container {
		return &corev1.Container{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: cmd}}}}
	}
	for _, c := range []struct {
		name    string
		c       *corev1.Container
		n       int
		ok, has bool
	}{
		{"none", &corev1.Container{}, 0, false, false},
		{"sleep action", &corev1.Container{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 15}}}}, 15, true, true},
		{"exec sleep", exec("sleep", "20"), 20, true, true},
		{"sh -c sleep", exec("/bin/sh", "-c", "sleep 30"), 30, true, true},
		{"a script", exec("/bin/sh", "-c", "nginx -s quit; sleep 5"), 0, false, true},
		{"httpGet", &corev1.Container{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/drain"}}}}, 0, false, true},
	} {
		n, ok, has := PreStopSeconds(c.c)
		if n != c.n || ok != c.ok || has != c.has {
			t.Errorf("%s: %d %v %v, want %d %v %v", c.name, n, ok, has, c.n, c.ok, c.has)
		}
	}
}
