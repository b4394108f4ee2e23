package classify

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestWorkersOf(t *testing.T) {
	env := func(kv ...string) []corev1.EnvVar {
		var out []corev1.EnvVar
		for i := 0; i < len(kv); i += 2 {
			out = append(out, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		c       corev1.Container
		n       int
		server  string
		sourced string
	}{
		{"gunicorn --workers N", corev1.Container{Command: []string{"gunicorn", "--workers", "4", "app:wsgi"}}, 4, "gunicorn", "--workers 4"},
		{"gunicorn --workers=N", corev1.Container{Command: []string{"/usr/local/bin/gunicorn"}, Args: []string{"--workers=3"}}, 3, "gunicorn", "--workers=3"},
		{"gunicorn -wN", corev1.Container{Command: []string{"python", "-m", "gunicorn", "-w8", "app"}}, 8, "gunicorn", "-w8"},
		{"shell command", corev1.Container{Command: []string{"sh", "-c", "exec gunicorn -w 2 app"}}, 2, "gunicorn", "-w 2"},
		{"GUNICORN_CMD_ARGS", corev1.Container{Env: env("GUNICORN_CMD_ARGS", "--bind=0.0.0.0 --workers=5")}, 5, "gunicorn", "env GUNICORN_CMD_ARGS=--bind=0.0.0.0 --workers=5"},
		{"flag wins over env", corev1.Container{Command: []string{"gunicorn", "-w", "2"}, Env: env("WEB_CONCURRENCY", "9")}, 2, "gunicorn", "-w 2"},
		{"WEB_CONCURRENCY for a named server", corev1.Container{Command: []string{"uvicorn", "app:api"}, Env: env("WEB_CONCURRENCY", "4")}, 4, "uvicorn", "env WEB_CONCURRENCY=4"},
		{"WEB_CONCURRENCY alone", corev1.Container{Env: env("WEB_CONCURRENCY", "3")}, 3, "", "env WEB_CONCURRENCY=3"},
		{"uwsgi --processes", corev1.Container{Args: []string{"uwsgi", "--processes", "6"}}, 6, "uwsgi", "--processes 6"},
		{"uwsgi -w is its module, not workers: one process, its default", corev1.Container{Args: []string{"uwsgi", "-w", "app"}}, 1, "uwsgi", "uwsgi's default of 1"},
		{"UWSGI_PROCESSES", corev1.Container{Env: env("UWSGI_PROCESSES", "4")}, 4, "uwsgi", "env UWSGI_PROCESSES=4"},
		{"celery -c", corev1.Container{Command: []string{"celery", "-A", "tasks", "worker", "-c", "16"}}, 16, "celery", "-c 16"},
		{"puma -w", corev1.Container{Command: []string{"bundle", "exec", "puma", "-w", "3"}}, 3, "puma", "-w 3"},
		{"flag before the server", corev1.Container{Command: []string{"nice", "-w", "4", "app"}}, 0, "", ""},
		{"value from a variable", corev1.Container{Command: []string{"gunicorn", "--workers", "$(WORKERS)"}}, 0, "", ""},
		{"valueFrom env is unknown", corev1.Container{Env: []corev1.EnvVar{{Name: "WEB_CONCURRENCY", ValueFrom: &corev1.EnvVarSource{}}}}, 0, "", ""},
		{"nothing", corev1.Container{Command: []string{"nginx", "-g", "daemon off;"}}, 0, "", ""},
		{"gunicorn with no count: its default", corev1.Container{Command: []string{"gunicorn", "app:wsgi"}}, 1, "gunicorn", "gunicorn's default of 1"},
	} {
		w := WorkersOf(&tc.c)
		if w.N != tc.n || w.Server != tc.server || w.Source != tc.sourced {
			t.Errorf("%s: %+v, want %d %q %q", tc.name, w, tc.n, tc.server, tc.sourced)
		}
	}
}

// Whether a worker serves one request at a time is read from the worker
// class: gunicorn's default sync class queues, -k gevent does not.
func TestWorkersQueue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      corev1.Container
		queues bool
		class  string
	}{
		{"gunicorn default", corev1.Container{Command: []string{"gunicorn", "-w", "8", "app"}}, true, "the sync worker class, gunicorn's default"},
		{"gunicorn -k sync", corev1.Container{Command: []string{"gunicorn", "-k", "sync", "-w", "2"}}, true, "-k sync"},
		{"gunicorn --worker-class=gevent", corev1.Container{Command: []string{"gunicorn", "--worker-class=gevent", "-w", "2"}}, false, "--worker-class gevent"},
		{"gunicorn uvicorn workers", corev1.Container{Command: []string{"gunicorn", "-k", "uvicorn.workers.UvicornWorker", "-w", "4"}}, false, "-k uvicorn.workers.UvicornWorker"},
		{"gunicorn class in GUNICORN_CMD_ARGS", corev1.Container{Command: []string{"gunicorn", "-w", "4"}, Env: []corev1.EnvVar{{Name: "GUNICORN_CMD_ARGS", Value: "-k gthread --threads 8"}}}, false, "-k gthread"},
		{"uwsgi processes", corev1.Container{Command: []string{"uwsgi", "--processes", "4"}}, true, "one request per uwsgi process at a time"},
		{"uwsgi with threads", corev1.Container{Command: []string{"uwsgi", "--processes", "4", "--threads", "2"}}, false, "--threads"},
		{"uvicorn", corev1.Container{Command: []string{"uvicorn", "--workers", "4"}}, false, ""},
	} {
		w := WorkersOf(&tc.c)
		if w.Queues != tc.queues || w.Class != tc.class {
			t.Errorf("%s: queues %v (%q), want %v (%q)", tc.name, w.Queues, w.Class, tc.queues, tc.class)
		}
	}
}
