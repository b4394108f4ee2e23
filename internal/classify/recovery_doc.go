package classify

import (
	"fmt"
	"strings"
)

// ServersMarkdown renders the server-behaviour table as docs/servers.md, so
// that the page and the code cannot disagree.
func ServersMarkdown() string {
	lab, _ := Lab() // a file that does not parse fails TestLab
	var b strings.Builder
	b.WriteString(`# Servers during crash recovery

What each database-like server does while it recovers from a crash, and what the
commands that probes run do meanwhile. BF101 reads this table (it is generated from
` + "`internal/classify/recovery.go`" + `; regenerate with ` + "`go test ./internal/classify -update`" + `).
Every row names the place in the server's own source it was checked against; a row
marked *assumed* was not checked, and findings that rely on it say so. A row marked
*measured* was also checked on the real server, from its Debian package, by the server
lab: the figures are in [Measured in the server lab](#measured-in-the-server-lab).

## Does it listen while it recovers?

| server | listens during recovery | what it answers | checked in |
|---|---|---|---|
`)
	for i := range Servers {
		s := &Servers[i]
		r := RecoveryOf(s.Name)
		listens := "not known (*assumed* not to answer queries)"
		switch {
		case len(s.EnsembleEnv) > 0:
			listens = "run alone (1 replica, and " + strings.Join(s.EnsembleEnv, ", ") + " lists at most one server): yes, a tcpSocket probe passes; a quorum member: its port is bound before it loads, so a tcpSocket probe passes, but nothing answers until it has loaded: every exec probe fails, ruok too"
		case s.NoCrashRecovery:
			listens = "no recovery phase: it serves as soon as it starts, and no probe fails because of a recovery"
		case s.ListensDuringRecovery:
			listens = "yes: a tcpSocket probe passes"
		case s.PortClosedDuringRecovery:
			listens = "no: every probe that connects fails, tcpSocket included"
		case len(s.ListensAfterLoading) > 0:
			var majors []string
			for _, m := range s.ListensAfterLoading {
				majors = append(majors, fmt.Sprintf("%d.x", m))
			}
			listens = strings.Join(majors, ", ") + " (by the image tag): no, it listens only after loading, so every probe that connects fails, tcpSocket and HTTP health endpoints included; other versions: not known"
		}
		source := "*assumed*"
		if r != nil {
			source = r.Source
		}
		source = lab.measuredServer(s.Name) + source
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.Name, listens, cell(s.RecoveryAnswer("")), cell(source))
	}
	b.WriteString("\n## What users see\n\nA row marked *measured* is one the server lab saw: the signs after the colon are the samples (a probe's exit code and output during the recovery) or log lines of its record that the row stands for, and a row the record stops showing fails the lab and the fast tests.\n\n| server | when | message | checked in |\n|---|---|---|---|\n")
	for i := range Recoveries {
		r := &Recoveries[i]
		for _, m := range r.Messages {
			fmt.Fprintf(&b, "| %s | %s | `%s` | %s |\n", r.Server, cell(m.When), m.Text, cell(lab.measuredMessage(r, m)))
		}
	}
	b.WriteString(`
PostgreSQL's SQLSTATE 57P03 text depends on the version and on the kind of restart: a
liveness probe's kill restarts the container, so the postmaster starts afresh and the
message is "not yet accepting connections" (15 and later) or "starting up" (14 and
earlier); "in recovery mode" is what clients of a postmaster that stayed up see after one
of its backends crashed. Findings quote the text for the version in the image tag when
the tag has one, and both otherwise.

## Probe commands while the server recovers

| command | server | needs | during recovery | verdict | checked in |
|---|---|---|---|---|---|
`)
	for _, c := range Commands {
		source := c.Source
		if source == "" {
			source = "*assumed*"
		}
		source = lab.measuredCommand(c.Server, c.Name) + source
		during := c.During
		if during == "" {
			during = "*assumed* to fail: it needs an answer"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", c.Name, c.Server, cell(c.What), cell(during), c.Verdict, cell(source))
	}
	b.WriteString(`
A redis-cli probe (valkey-cli, keydb-cli) fails while Redis loads its dataset only with
` + "`-e`" + ` or when the script compares the output with PONG (` + "`[ \"$(redis-cli ping)\" = PONG ]`" + `,
` + "`| grep PONG`" + `); a script that also accepts LOADING passes. Where the probe runs a
script that a ConfigMap of the input mounts at that path, backfire reads the script.

## Health-check scripts known by name

| script | image | during recovery | what it does |
|---|---|---|---|
`)
	for _, s := range Scripts {
		img := s.Image
		if img == "" {
			img = "any"
		}
		verdict := Passes
		if s.Queries {
			verdict = Fails
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Name, img, verdict, cell(lab.measuredScript(s)+s.What))
	}
	b.WriteString("\n## Health endpoints known by path\n\nAn httpGet probe, or a curl or wget in an exec probe, of these paths. Every other path on a server's own query API port is assumed to query.\n\n| server | endpoint | port | path | during recovery | what it does | checked in |\n|---|---|---|---|---|---|---|\n")
	for _, e := range HTTPEndpoints {
		verdict := Passes
		if e.Queries {
			verdict = Fails
		}
		what := e.What
		if e.WaitParam != "" {
			verdict += "; with a `" + e.WaitParam + "*` parameter: " + Fails
			what += "; with a `" + e.WaitParam + "*` parameter it " + e.WaitWhat
		}
		source := e.Source
		if source == "" {
			source = "the rule page (docs/rules/BF101.md)"
		}
		port := "any"
		if e.Port != 0 {
			port = fmt.Sprint(e.Port)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %s | %s | %s |\n", e.Server, e.Who, port, e.Path, verdict, cell(what), cell(source))
	}
	b.WriteString("\nThe Bitnami Redis scripts were read in bitnami/charts, `bitnami/redis/templates/health-configmap.yaml` (commit 06a7f9aef170014ad00b078a09a4fc100016c0bd).\n")
	b.WriteString(`
## Shell functions probe scripts call

A probe script is read through the shell functions it calls: a function defined in the
script itself, or in a file of the input that the script sources (` + "`. /scripts/lib.sh`" + `), stands for
its body, with its ` + "`\"$@\"`" + ` and ` + "`$1`" + `... replaced by the call's arguments; a library function of this
table stands for the command it runs. A function defined nowhere backfire can read, in a
script that sources a file the input does not hold, is an assumption: on a database-like
container the probe is *assumed* to need the server to answer, and the finding says so.

| function | library | what it does with its arguments | checked in |
|---|---|---|---|
`)
	for _, f := range ShellFunctions {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s: %s | %s |\n", f.Name, f.Library, f.Runs, cell(f.What), cell(f.Source))
	}
	b.WriteString(`
## Programs beside a server

A container whose image, port or environment names a server is not that server when it
runs one of these: they hold no data and have nothing to recover, so no rule treats
them as the server. They are recognised by the program the command runs, an argument,
an environment variable, an image token, or a port of theirs declared without the
server's.

| family | program | role | recognised by | what it does | checked in |
|---|---|---|---|---|---|
`)
	for _, c := range Companions {
		var by []string
		for _, x := range c.Binaries {
			by = append(by, "runs `"+x+"`")
		}
		for _, x := range c.Args {
			by = append(by, "argument `"+x+"`")
		}
		for _, x := range c.Env {
			by = append(by, "env `"+x+"`")
		}
		for _, x := range c.ImageTokens {
			by = append(by, "image token `"+x+"`")
		}
		for _, x := range c.Ports {
			by = append(by, fmt.Sprintf("port %d without the server's", x))
		}
		if len(c.RolesEnv) > 0 {
			by = append(by, "`"+strings.Join(c.RolesEnv, "`, `")+"` naming none of "+strings.Join(c.DataRoles, ", "))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.Server, c.Name, c.Role, cell(strings.Join(by, "; ")), cell(c.What), cell(c.Source))
	}
	b.WriteString(`
## Components that hold no data

Some servers run as one of several components, chosen by an argument. Only the
components that hold data replay a log when they restart; the others are stateless.

| server | argument | default | components that hold data |
|---|---|---|---|
`)
	for i := range Servers {
		s := &Servers[i]
		if s.ComponentArg == "" {
			continue
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", s.Name, s.ComponentArg, s.DefaultComponent, strings.Join(s.DataComponents, ", "))
	}
	b.WriteString(`
Their write-ahead log survives a kill only on a volume: a container of these servers that
mounts no writable volume (emptyDir, PersistentVolumeClaim, claim template, hostPath)
restarts empty and has no recovery phase.

## What a restart loses

A Redis-protocol server (Redis, Valkey, KeyDB) started with save points switched off
(` + "`--save \"\"`" + `) and without ` + "`--appendonly yes`" + ` writes nothing to disk: a restart loses a cache, not
data, and it loads nothing when it starts (redis: src/server.c ` + "`loadDataFromDisk`" + ` reads the AOF
only when appendonly is on, else an RDB file that no save point ever wrote). It is not
database-like.

A container whose command only waits (` + "`sleep`" + `, ` + "`tail -f /dev/null`" + `, a sleep loop, ` + "`cat`" + ` without
arguments) serves nothing, and neither does one without a command whose image's own
entrypoint only waits:

| image | why | checked in |
|---|---|---|
`)
	for _, im := range IdleImages {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", im.Name, cell(im.What), cell(im.Source))
	}
	b.WriteString(labMarkdown(lab))
	return b.String()
}

// cell escapes a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
