package classify

import (
	"fmt"
	"strings"
)

// ServersMarkdown renders the server-behaviour table as docs/servers.md, so
// that the page and the code cannot disagree.
func ServersMarkdown() string {
	var b strings.Builder
	b.WriteString(`# Servers during crash recovery

What each database-like server does while it recovers from a crash, and what the
commands that probes run do meanwhile. BF101 reads this table (it is generated from
` + "`internal/classify/recovery.go`" + `; regenerate with ` + "`go test ./internal/classify -update`" + `).
Every row names the place in the server's own source it was checked against; a row
marked *assumed* was not checked, and findings that rely on it say so.

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
			listens = "run alone (1 replica, and " + strings.Join(s.EnsembleEnv, ", ") + " lists at most one server): yes, a tcpSocket probe passes; a quorum member: no, every probe that connects fails"
		case s.NoCrashRecovery:
			listens = "no recovery phase: it serves as soon as it starts, and no probe fails because of a recovery"
		case s.ListensDuringRecovery:
			listens = "yes: a tcpSocket probe passes"
		case s.PortClosedDuringRecovery:
			listens = "no: every probe that connects fails, tcpSocket included"
		}
		source := "*assumed*"
		if r != nil {
			source = r.Source
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.Name, listens, cell(s.RecoveryAnswer("")), cell(source))
	}
	b.WriteString("\n## What users see\n\n| server | when | message |\n|---|---|---|\n")
	for _, r := range Recoveries {
		for _, m := range r.Messages {
			fmt.Fprintf(&b, "| %s | %s | `%s` |\n", r.Server, cell(m.When), m.Text)
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
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Name, img, verdict, cell(s.What))
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
		fmt.Fprintf(&b, "| %s | %s | %d | `%s` | %s | %s | %s |\n", e.Server, e.Who, e.Port, e.Path, verdict, cell(what), cell(source))
	}
	b.WriteString("\nThe Bitnami Redis scripts were read in bitnami/charts, `bitnami/redis/templates/health-configmap.yaml` (commit 06a7f9aef170014ad00b078a09a4fc100016c0bd).\n")
	return b.String()
}

// cell escapes a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
