package classify

import (
	"fmt"
	"path"
	"slices"
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
	// Queues: each worker serves one request at a time, so a request
	// that finds every worker busy (a probe's too) waits in the listen
	// backlog until one finishes: gunicorn's sync worker class (its
	// default), uwsgi without an async mode or threads, unicorn.
	Queues bool
	// Class says how the worker model was read: "sync worker class
	// (gunicorn's default)", "-k gevent".
	Class string
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
	// defaultN is the worker count when nothing sets one (0: not known
	// to be a fixed number, celery's is the CPU count).
	defaultN int
	// classFlags name the worker model (gunicorn's -k); queues says
	// whether the default model serves one request per worker at a time,
	// and async lists the words of the command that turn that off.
	classFlags []string
	queues     bool
	async      []string
}

// workerServers is the table; extend it, not the code. WEB_CONCURRENCY is
// read by gunicorn, uvicorn and puma, and by platform conventions for
// others, so it counts whatever the command is.
var workerServers = []workerServer{
	// gunicorn: workers default 1, worker_class default "sync", which
	// handles one request at a time (docs.gunicorn.org, Settings and
	// Design: "Sync Workers").
	{name: "gunicorn", flags: []string{"--workers", "-w"}, argsEnv: []string{"GUNICORN_CMD_ARGS"},
		defaultN: 1, classFlags: []string{"--worker-class", "-k"}, queues: true},
	// uwsgi: one process unless --processes; a process serves one request
	// unless it runs threads or an async loop.
	{name: "uwsgi", flags: []string{"--processes", "--workers", "-p"}, env: []string{"UWSGI_PROCESSES", "UWSGI_WORKERS"},
		defaultN: 1, queues: true, async: []string{"--gevent", "--async", "--threads", "--enable-threads", "--ugreen", "--asyncio"}},
	{name: "uvicorn", flags: []string{"--workers"}},
	{name: "hypercorn", flags: []string{"--workers", "-w"}},
	{name: "puma", flags: []string{"--workers", "-w"}, env: []string{"PUMA_WORKERS"}},
	// unicorn: single-threaded worker processes, worker_processes 1 by
	// default.
	{name: "unicorn", env: []string{"UNICORN_WORKERS"}, defaultN: 1, queues: true},
	{name: "celery", flags: []string{"--concurrency", "-c"}, env: []string{"CELERYD_CONCURRENCY", "CELERY_WORKER_CONCURRENCY"}},
}

// namesCount says whether a count flag is written with a value that is
// not a number ("--workers $(WORKERS)"): the count is not known, and the
// default does not apply.
func namesCount(tokens, flags []string) bool {
	for _, t := range tokens {
		for _, f := range flags {
			if t == f || strings.HasPrefix(t, f+"=") {
				return true
			}
		}
	}
	return false
}

// model says whether the server's workers serve one request at a time,
// and how that was read: the worker-class flag (on the command line or in
// an arguments variable), else the async words, else the default.
func (s workerServer) model(tokens []string, env map[string]string) (bool, string) {
	if !s.queues {
		return false, ""
	}
	words := append([]string{}, tokens...)
	for _, name := range s.argsEnv {
		words = append(words, strings.Fields(unquote(env[name]))...)
	}
	for i, t := range words {
		for _, f := range s.classFlags {
			v := ""
			switch {
			case t == f && i+1 < len(words):
				v = words[i+1]
			case strings.HasPrefix(t, f+"="):
				v = t[len(f)+1:]
			default:
				continue
			}
			return v == "sync", f + " " + v
		}
		if slices.Contains(s.async, t) {
			return false, t
		}
	}
	if len(s.classFlags) > 0 {
		return true, "the sync worker class, " + s.name + "'s default"
	}
	return true, "one request per " + s.name + " process at a time"
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
		w, ok := flagCount(tokens[at+1:], s.flags)
		for _, name := range s.argsEnv {
			if !ok {
				if w, ok = flagCount(strings.Fields(unquote(env[name])), s.flags); ok {
					w.Source = "env " + name + "=" + env[name]
				}
			}
		}
		for _, name := range append(s.env, genericWorkerEnv...) {
			if n, found := count(env[name]); !ok && found {
				w, ok = Workers{N: n, Source: "env " + name + "=" + env[name]}, true
			}
		}
		if !ok && s.defaultN > 0 && !namesCount(tokens[at+1:], s.flags) {
			w = Workers{N: s.defaultN, Source: fmt.Sprintf("%s's default of %d", s.name, s.defaultN)}
			ok = true
		}
		if ok {
			w.Server = s.name
			w.Queues, w.Class = s.model(tokens[at+1:], env)
			return w
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
