package classify

import (
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Workers is how many worker processes a container runs, as its command or
// environment says: a pre-forking server whose workers share one cpu
// quota (BF202) and queue the probe's request behind their own (BF107).
type Workers struct {
	N      int
	Server string // "gunicorn"; "" when only a generic variable said so
	Source string // "--workers 4", "env WEB_CONCURRENCY=4"
}

// workerServer is a pre-forking server and how it is told its worker count.
type workerServer struct {
	name string
	// flags take the count as the next token, after '=', or (single-letter
	// flags) glued on: "--workers 4", "--workers=4", "-w4".
	flags []string
	// env holds variables the server reads its count from.
	env []string
	// argsEnv holds variables with extra command-line flags.
	argsEnv []string
}

// workerServers is the table; extend it, not the code. WEB_CONCURRENCY is
// read by gunicorn, uvicorn and puma, and by platform conventions for
// others, so it counts whatever the command is.
var workerServers = []workerServer{
	{name: "gunicorn", flags: []string{"--workers", "-w"}, argsEnv: []string{"GUNICORN_CMD_ARGS"}},
	{name: "uwsgi", flags: []string{"--processes", "--workers", "-p"}, env: []string{"UWSGI_PROCESSES", "UWSGI_WORKERS"}},
	{name: "uvicorn", flags: []string{"--workers"}},
	{name: "hypercorn", flags: []string{"--workers", "-w"}},
	{name: "puma", flags: []string{"--workers", "-w"}, env: []string{"PUMA_WORKERS"}},
	{name: "unicorn", env: []string{"UNICORN_WORKERS"}},
	{name: "celery", flags: []string{"--concurrency", "-c"}, env: []string{"CELERYD_CONCURRENCY", "CELERY_WORKER_CONCURRENCY"}},
}

// genericWorkerEnv counts whatever the command is.
var genericWorkerEnv = []string{"WEB_CONCURRENCY"}

// WorkersOf reads the worker count of c. Flags win over the environment,
// as they do in the servers themselves; N is 0 when nothing says.
func WorkersOf(c *corev1.Container) Workers {
	tokens := commandTokens(c)
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	for _, s := range workerServers {
		at := serverToken(tokens, s.name)
		if at < 0 {
			continue
		}
		if w, ok := flagCount(tokens[at+1:], s.flags); ok {
			w.Server = s.name
			return w
		}
		for _, name := range s.argsEnv {
			if w, ok := flagCount(strings.Fields(unquote(env[name])), s.flags); ok {
				w.Server, w.Source = s.name, "env "+name+"="+env[name]
				return w
			}
		}
		for _, name := range append(s.env, genericWorkerEnv...) {
			if n, ok := count(env[name]); ok {
				return Workers{N: n, Server: s.name, Source: "env " + name + "=" + env[name]}
			}
		}
	}
	// The command may be the image's own (not in the manifest): a variable
	// that only a server reads still says how many workers run.
	for _, s := range workerServers {
		for _, name := range s.env {
			if n, ok := count(env[name]); ok {
				return Workers{N: n, Server: s.name, Source: "env " + name + "=" + env[name]}
			}
		}
		for _, name := range s.argsEnv {
			if w, ok := flagCount(strings.Fields(unquote(env[name])), s.flags); ok {
				w.Server, w.Source = s.name, "env "+name+"="+env[name]
				return w
			}
		}
	}
	for _, name := range genericWorkerEnv {
		if n, ok := count(env[name]); ok {
			return Workers{N: n, Source: "env " + name + "=" + env[name]}
		}
	}
	return Workers{}
}

// commandTokens splits command and args into words, so that a shell
// command ("sh -c 'exec gunicorn -w 4 app'") is read like a direct one.
func commandTokens(c *corev1.Container) []string {
	var out []string
	for _, s := range append(append([]string{}, c.Command...), c.Args...) {
		for _, f := range strings.Fields(s) {
			out = append(out, unquote(f))
		}
	}
	return out
}

func unquote(s string) string { return strings.Trim(s, `"'`) }

// serverToken finds the server's executable among the words: "gunicorn",
// "/usr/local/bin/gunicorn", "python -m gunicorn".
func serverToken(tokens []string, name string) int {
	for i, t := range tokens {
		if path.Base(t) == name {
			return i
		}
	}
	return -1
}

// flagCount finds the first of flags with an integer value.
func flagCount(tokens, flags []string) (Workers, bool) {
	for i, t := range tokens {
		for _, f := range flags {
			var v string
			switch {
			case t == f && i+1 < len(tokens):
				v = tokens[i+1]
			case strings.HasPrefix(t, f+"="):
				v = t[len(f)+1:]
			case len(f) == 2 && strings.HasPrefix(t, f) && len(t) > 2:
				v = t[2:] // -w4
			default:
				continue
			}
			if n, ok := count(v); ok {
				src := f + " " + v
				if t != f {
					src = t
				}
				return Workers{N: n, Source: src}, true
			}
		}
	}
	return Workers{}, false
}

func count(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil && n > 0
}
