package classify

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// What a server needs to stop cleanly, and whether the stop signal reaches
// it. Each fact is cited in docs/rules/BF601.md.

// ServerPrograms are the executables that run a server in the foreground,
// and the images' entrypoints that exec one ("exec "$@"").
var ServerPrograms = map[string][]string{
	"PostgreSQL": {"postgres", "postmaster", "docker-entrypoint.sh", "run.sh", "entrypoint.sh"},
	"MySQL":      {"mysqld", "mariadbd", "docker-entrypoint.sh", "run.sh", "entrypoint.sh"},
	"MongoDB":    {"mongod", "docker-entrypoint.sh", "run.sh", "entrypoint.sh"},
	"Redis":      {"redis-server", "valkey-server", "keydb-server", "docker-entrypoint.sh", "run.sh", "entrypoint.sh"},
	"etcd":       {"etcd"},
}

// StopSignal is the signal the runtime sends a container to stop it, and
// where that was read.
type StopSignal struct {
	Signal string // "SIGTERM", "SIGINT"; "" when not known
	From   string // "lifecycle.stopSignal", "the image bitnami/postgresql sets no STOPSIGNAL"
}

// imageStopSignals: what images set as STOPSIGNAL, by repository, read in
// their Dockerfiles. An image not listed is not known.
var imageStopSignals = []struct {
	repos  []string // repository paths ("bitnami/postgresql") or official names ("postgres")
	signal string
	why    string
}{
	// docker-library/postgres Dockerfile-debian.template and
	// Dockerfile-alpine.template: STOPSIGNAL SIGINT (a fast shutdown),
	// inherited by images built FROM postgres.
	{[]string{"postgres", "library/postgres", "postgis/postgis", "timescale/timescaledb", "timescale/timescaledb-ha"}, "SIGINT", "the image sets STOPSIGNAL SIGINT (docker-library/postgres)"},
	// bitnami/containers bitnami/postgresql/*/debian-12/Dockerfile: no
	// STOPSIGNAL; run.sh execs postgres, so PID 1 gets SIGTERM.
	{[]string{"bitnami/postgresql", "bitnami/postgresql-repmgr", "bitnamilegacy/postgresql", "bitnamilegacy/postgresql-repmgr", "bitnamisecure/postgresql"}, "SIGTERM", "the image sets no STOPSIGNAL (bitnami/containers bitnami/postgresql Dockerfile), so the runtime sends SIGTERM"},
	// goharbor/harbor make/photon/db/Dockerfile and Dockerfile.base: no
	// STOPSIGNAL; docker-entrypoint.sh execs postgres.
	{[]string{"goharbor/harbor-db"}, "SIGTERM", "the image sets no STOPSIGNAL (goharbor/harbor make/photon/db/Dockerfile), so the runtime sends SIGTERM"},
}

// StopSignalOf says what signal stops container c: its
// lifecycle.stopSignal (the ContainerStopSignals gate), else what its image
// is known to set.
func StopSignalOf(c *corev1.Container) StopSignal {
	if c.Lifecycle != nil && c.Lifecycle.StopSignal != nil {
		return StopSignal{Signal: string(*c.Lifecycle.StopSignal), From: "lifecycle.stopSignal"}
	}
	repo := imageRepository(c.Image)
	for _, s := range imageStopSignals {
		for _, r := range s.repos {
			if repo == r || strings.HasSuffix(repo, "/"+r) && strings.Count(r, "/") > 0 || r == path.Base(repo) && !strings.Contains(r, "/") && isOfficial(repo) {
				return StopSignal{Signal: s.signal, From: s.why}
			}
		}
	}
	return StopSignal{}
}

// isOfficial: a Docker Hub official image, named without a namespace
// ("postgres", "docker.io/library/postgres").
func isOfficial(repo string) bool {
	return !strings.Contains(repo, "/") || strings.HasPrefix(repo, "library/")
}

// PID1 is what runs as the container's first process when its command is
// a shell: whether the server it starts is exec'd in its place.
type PID1 struct {
	// Shell is the shell the command runs ("sh", "bash"); "" when the
	// command is not a shell with a -c script.
	Shell string
	// Field is where the script is written: "command" or "args", with
	// Index its item.
	Field string
	Index int
	// Script is the -c script; Server the server's command in it ("postgres
	// -D /data"), at the top level of the script.
	Script, Server string
	// Keeps: the shell stays PID 1 with the server as its child. Why says
	// how that was read; Assumed when it rests on which shell /bin/sh is.
	Keeps   bool
	Why     string
	Assumed string
	// Exec is the script with exec put in front of the server's command,
	// when that is where it belongs (the last command, run in the
	// foreground); "" when only a person can restructure the script.
	Exec string
}

// PID1Of reads container c's command and args: a shell with a -c script
// that starts the server of verdict v without exec keeps the shell as PID
// 1. Only the script's top level is read; a script that traps the stop
// signals is taken to forward them.
func PID1Of(c *corev1.Container, v Verdict) PID1 {
	if v.Server == nil {
		return PID1{}
	}
	progs := ServerPrograms[v.Server.Name]
	if len(progs) == 0 {
		return PID1{}
	}
	argv := append(append([]string{}, c.Command...), c.Args...)
	if len(argv) < 3 {
		return PID1{}
	}
	shell := path.Base(argv[0])
	if !contains(shells, shell) {
		return PID1{}
	}
	at := -1
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		if strings.Contains(strings.TrimLeft(a, "-"), "c") && i+1 < len(argv) {
			at = i + 1
			break
		}
	}
	if at < 0 {
		return PID1{}
	}
	p := PID1{Shell: shell, Script: argv[at], Field: "command", Index: at}
	if at >= len(c.Command) {
		p.Field, p.Index = "args", at-len(c.Command)
	}
	stmts := topLevel(p.Script)
	server := -1
	for i, s := range stmts {
		if s.runs(progs) {
			server = i
		}
	}
	if server < 0 {
		return PID1{}
	}
	for _, s := range stmts {
		if s.traps() {
			return PID1{} // a trap of TERM or INT: taken to forward the signal
		}
	}
	s := stmts[server]
	p.Server = strings.Join(s.words, " ")
	last := server == len(stmts)-1
	switch {
	case s.exec():
		return PID1{} // exec'd: the server is PID 1
	case s.sep == "&":
		p.Keeps, p.Why = true, "the script starts "+s.program()+" in the background (&) and stays to wait for it"
	case s.sep == "|" || server > 0 && stmts[server-1].sep == "|":
		p.Keeps, p.Why = true, "the script runs "+s.program()+" in a pipeline, which the shell forks and waits for"
	case !last:
		p.Keeps, p.Why = true, "commands follow "+s.program()+" in the script, so the shell stays to run them"
	case shell == "bash" && s.redirects:
		p.Keeps, p.Why = true, "bash forks a last command that has a redirection (builtins/evalstring.c should_optimize_fork)"
		p.Exec = withExec(p.Script, s)
	case shell == "bash":
		return PID1{} // bash execs a -c string's last simple command (should_optimize_fork)
	default:
		// sh, dash, ash: Debian's dash forks every command of -c (the
		// Debian patch that drops the EV_EXIT of evalstring(minusc)),
		// BusyBox ash execs the last one.
		sh := shOf(c.Image)
		if shell != "dash" && sh != "dash" {
			if sh != "" || alpine(c.Image) {
				return PID1{} // BusyBox ash, or bash as sh: the last command is exec'd
			}
			p.Assumed = "/bin/sh in image " + imageRepository(c.Image) + " is assumed to be dash (Debian, Ubuntu and the images built on them): BusyBox ash (Alpine's /bin/sh) or bash would exec the script's last command instead."
		}
		p.Keeps = true
		p.Why = shell + " forks " + s.program() + ", the script's last command, and waits for it: Debian's and Ubuntu's dash never execs a -c command in the shell's place"
		p.Exec = withExec(p.Script, s)
	}
	return p
}

// shOf says which shell /bin/sh is in an image whose base is known: dash
// in the Debian and Ubuntu based official and Bitnami images, bash in the
// Oracle Linux based official mysql image; "" when not known.
func shOf(image string) string {
	if alpine(image) {
		return "ash"
	}
	repo := imageRepository(image)
	switch {
	case strings.HasPrefix(repo, "bitnami/") || strings.HasPrefix(repo, "bitnamilegacy/"):
		return "dash" // bitnami/minideb, Debian
	case isOfficial(repo):
		switch strings.TrimPrefix(repo, "library/") {
		case "postgres", "redis", "mongo", "mariadb", "debian", "ubuntu":
			return "dash" // FROM debian or ubuntu
		case "mysql":
			if strings.Contains(image[strings.LastIndex(image, ":")+1:], "debian") && strings.Contains(image, ":") {
				return "dash"
			}
			return "bash" // FROM oraclelinux: /bin/sh is bash
		}
	}
	return ""
}

// alpine: the image's tag names an Alpine base, whose /bin/sh is BusyBox.
func alpine(image string) bool {
	i := strings.LastIndex(image, ":")
	return i >= 0 && strings.Contains(image[i:], "alpine")
}

// statement is one simple command at the top level of a script, as
// written, and what follows it.
type statement struct {
	words     []string
	start     int    // offset of its first word in the script
	sep       string // ";", "&&", "||", "&", "|", "\n" or "" at the end
	redirects bool
}

// program is the statement's command after exec, assignments and wrappers.
func (s statement) program() string {
	w := stripWrappers(s.words)
	if len(w) == 0 {
		return ""
	}
	return path.Base(w[0])
}

func (s statement) exec() bool {
	for _, w := range s.words {
		switch {
		case w == "exec":
			return true
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
			continue // an assignment in front
		default:
			return false
		}
	}
	return false
}

func (s statement) runs(progs []string) bool {
	return contains(progs, s.program())
}

// traps: trap ... TERM, INT, QUIT or EXIT (by name or number).
func (s statement) traps() bool {
	if len(s.words) == 0 || s.words[0] != "trap" {
		return false
	}
	for _, w := range s.words[1:] {
		switch strings.TrimPrefix(strings.ToUpper(w), "SIG") {
		case "TERM", "INT", "QUIT", "15", "2", "3":
			return true
		}
	}
	return false
}

// withExec puts exec in front of the statement's command in the script.
func withExec(script string, s statement) string {
	return script[:s.start] + "exec " + script[s.start:]
}

// topLevel splits a script into its top-level simple commands: quotes and
// command substitutions are parts of words, and a command that opens a
// compound (if, while, a function, a subshell) ends the reading, since
// what runs last is then not a simple command.
func topLevel(script string) []statement {
	var out []statement
	var cur statement
	var w strings.Builder
	inWord, start := false, -1
	flushWord := func() {
		if inWord {
			word := w.String()
			if strings.ContainsAny(word, "<>") {
				cur.redirects = true
			} else {
				if len(cur.words) == 0 {
					cur.start = start
				}
				cur.words = append(cur.words, word)
			}
			w.Reset()
			inWord = false
		}
	}
	flush := func(sep string) {
		flushWord()
		if len(cur.words) > 0 {
			cur.sep = sep
			out = append(out, cur)
		} else if sep != "\n" && sep != ";" && len(out) > 0 {
			out[len(out)-1].sep = sep
		}
		cur = statement{}
	}
	var quote byte
	for i := 0; i < len(script); i++ {
		r := script[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' && i+1 < len(script) {
				i++
				w.WriteByte(script[i])
				continue
			}
			w.WriteByte(r)
		case r == '\'' || r == '"':
			if !inWord {
				start = i
			}
			quote, inWord = r, true
			w.WriteByte(r)
		case r == '$' && i+1 < len(script) && script[i+1] == '(' || r == '`':
			open := i + 1
			if r == '$' {
				open = i + 2
			}
			end := substitutionEnd(script, open, r)
			if !inWord {
				start = i
			}
			w.WriteString(script[i:min(end+1, len(script))])
			inWord = true
			i = end
		case r == '\\' && i+1 < len(script) && script[i+1] == '\n':
			flushWord()
			i++
		case r == '#' && !inWord:
			for i+1 < len(script) && script[i+1] != '\n' {
				i++
			}
		case r == ' ' || r == '\t':
			flushWord()
		case r == '\n' || r == ';':
			flush(string(r))
		case r == '&' || r == '|':
			sep := string(r)
			if i+1 < len(script) && script[i+1] == r {
				sep += string(r)
				i++
			} else if r == '&' && inWord && strings.HasSuffix(w.String(), ">") {
				w.WriteByte(r) // 2>&1
				continue
			}
			flush(sep)
		case r == '(' || r == ')' || r == '{' || r == '}':
			return out // a compound: what runs last is not read
		default:
			if !inWord {
				start = i
			}
			w.WriteByte(r)
			inWord = true
		}
		if len(cur.words) == 0 && !inWord {
			continue
		}
		if len(cur.words) > 0 && contains(compoundWords, cur.words[0]) {
			return out
		}
	}
	flush("")
	return out
}

// compoundWords open a command that is not a simple one.
var compoundWords = []string{"if", "while", "until", "for", "case", "function", "select"}

// CleanStop is how long a server needs after its stop signal to stop
// cleanly, where the manifest gives the numbers: the data it must write
// before it exits, at an assumed write rate.
type CleanStop struct {
	Seconds int
	// Formula spells it out: "4 GiB of shared_buffers / 100 MiB/s".
	Formula string
	// What the server writes: "a shutdown checkpoint".
	What string
}

// CleanStopOf is the clean stop of container c, classified as v, at
// mibPerSecond: PostgreSQL writes every dirty page of shared_buffers in its
// shutdown checkpoint (at most shared_buffers, when the command sets it);
// Redis with save points writes its whole dataset to the RDB file before
// it exits (at most maxmemory, else the container's memory limit). ok is
// false when the manifest does not say.
func CleanStopOf(c *corev1.Container, v Verdict, mibPerSecond int) (CleanStop, bool) {
	if v.Server == nil || mibPerSecond <= 0 {
		return CleanStop{}, false
	}
	words := argvWords(c)
	var bytes int64
	var from, what string
	switch v.Server.Name {
	case "PostgreSQL":
		val, ok := pgSetting(words, "shared_buffers")
		if !ok {
			return CleanStop{}, false
		}
		n, ok := pgSize(val)
		if !ok {
			return CleanStop{}, false
		}
		bytes, from, what = n, "shared_buffers "+val, "its shutdown checkpoint writes every dirty page of shared_buffers"
	case "Redis":
		if !redisServerRuns(c, words) || redisConfigFile(words) {
			return CleanStop{}, false // a start script or a config file: its save points are not in the manifest
		}
		if v, ok := flagValue(words, "--save"); ok && strings.Trim(v, `"' `) == "" {
			return CleanStop{}, false // no save points: nothing to write
		}
		if val, ok := flagValue(words, "--maxmemory"); ok {
			n, ok := redisSize(val)
			if !ok || n == 0 {
				return CleanStop{}, false
			}
			bytes, from = n, "maxmemory "+val
		} else if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			bytes, from = q.Value(), "the memory limit "+q.String()
		} else {
			return CleanStop{}, false
		}
		what = "with save points (the defaults, when nothing sets them) it writes its whole dataset to the RDB file before it exits"
	default:
		return CleanStop{}, false
	}
	rate := int64(mibPerSecond) << 20
	secs := int((bytes + rate - 1) / rate)
	return CleanStop{Seconds: secs, What: what,
		Formula: fmt.Sprintf("%s / %d MiB/s = %d s", from, mibPerSecond, secs)}, true
}

// pgSetting reads -c name=value, --name=value or -cname=value.
func pgSetting(words []string, name string) (string, bool) {
	for i, w := range words {
		switch {
		case w == "-c" && i+1 < len(words) && strings.HasPrefix(words[i+1], name+"="):
			return strings.TrimPrefix(words[i+1], name+"="), true
		case strings.HasPrefix(w, "-c"+name+"="):
			return strings.TrimPrefix(w, "-c"+name+"="), true
		case strings.HasPrefix(w, "--"+name+"="):
			return strings.TrimPrefix(w, "--"+name+"="), true
		}
	}
	return "", false
}

// pgSize reads a PostgreSQL memory setting: a unit of kB, MB, GB or TB
// (1024-based), or a bare number of 8 kB pages.
func pgSize(s string) (int64, bool) {
	s = strings.Trim(s, `"'`)
	units := []struct {
		suffix string
		mult   int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), 10, 64)
			return n * u.mult, err == nil && n > 0
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * 8192, err == nil && n > 0
}

// redisSize reads a Redis memory value: 1k = 1000, 1kb = 1024, and so on
// for m, mb, g, gb (redis.conf, "Note on units").
func redisSize(s string) (int64, bool) {
	s = strings.ToLower(strings.Trim(s, `"'`))
	units := []struct {
		suffix string
		mult   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			n, err := strconv.ParseInt(strings.TrimSuffix(s, u.suffix), 10, 64)
			return n * u.mult, err == nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// flagValue reads --flag value or --flag=value.
func flagValue(words []string, flag string) (string, bool) {
	for i, w := range words {
		switch {
		case w == flag && i+1 < len(words):
			return words[i+1], true
		case strings.HasPrefix(w, flag+"="):
			return strings.TrimPrefix(w, flag+"="), true
		}
	}
	return "", false
}

// redisServerRuns: the command line is the server's own (redis-server
// with its flags), or empty on the official image, whose CMD is
// redis-server alone.
func redisServerRuns(c *corev1.Container, words []string) bool {
	if len(c.Command) == 0 && len(c.Args) == 0 {
		repo := imageRepository(c.Image)
		return isOfficial(repo) && strings.TrimPrefix(repo, "library/") == "redis"
	}
	for _, w := range words {
		switch path.Base(w) {
		case "redis-server", "valkey-server", "keydb-server":
			return true
		}
	}
	return false
}

// redisConfigFile: redis-server is given a configuration file.
func redisConfigFile(words []string) bool {
	for i, w := range words {
		if strings.HasSuffix(path.Base(w), "-server") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			return true
		}
		if strings.HasSuffix(w, ".conf") {
			return true
		}
	}
	return false
}
