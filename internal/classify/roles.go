package classify

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// This file is the table of what runs beside a server without being it:
// the routers, poolers, proxies, consoles and monitors of each server
// family. They hold no data and never recover, so no rule treats them as
// the server, whatever their image is called. Every row names where its
// role was checked (docs/servers.md is generated from it).

// Companion is a program of a server family that is not the server.
type Companion struct {
	Server string // the family it belongs to: "MongoDB"
	Name   string // "mongos"
	Role   string // "query router"
	// Binaries are the program's names as a command runs them: the
	// command's first word, or a command of its shell script.
	Binaries []string
	// Args are words of the command that switch the server's own binary
	// into this role ("--sentinel").
	Args []string
	// Env are NAME=value pairs that make the server's image run this role
	// (Bitnami's MONGODB_SHARDING_MODE=mongos).
	Env []string
	// ImageTokens are tokens of the image's repository basename that name
	// the program ("object-browser" is a run of two tokens).
	ImageTokens []string
	// Ports are the program's own ports: a container of the server's image
	// that declares one of them and none of the server's runs it.
	Ports []int32
	// RolesEnv are variables that list a node's roles (node.roles); a node
	// whose list names none of DataRoles holds no data.
	RolesEnv  []string
	DataRoles []string
	What      string // "routes queries to the shards and holds no data"
	Source    string
}

// Companions are the programs of the server families that run beside the
// server. A container that runs one is not database-like.
var Companions = []Companion{
	{Server: "MongoDB", Name: "mongos", Role: "query router",
		Binaries: []string{"mongos"}, Env: []string{"MONGODB_SHARDING_MODE=mongos"},
		What:   "routes the clients' operations to the shards and holds no data: the cluster's metadata lives on the config servers",
		Source: "MongoDB manual, \"mongos\" (mongodb.com/docs/manual/core/sharded-cluster-query-router/); Bitnami: bitnami/charts mongodb-sharded/templates/mongos/mongos-dep-sts.yaml sets MONGODB_SHARDING_MODE=mongos and probes pgrep -x mongos"},
	{Server: "PostgreSQL", Name: "PgBouncer", Role: "connection pooler",
		Binaries: []string{"pgbouncer"}, ImageTokens: []string{"pgbouncer"}, Ports: []int32{6432},
		What:   "pools client connections to PostgreSQL servers and stores no data",
		Source: "PgBouncer documentation, \"Usage\" and \"Configuration\" (pgbouncer.org/usage.html: a lightweight connection pooler; listen_port default 6432)"},
	{Server: "PostgreSQL", Name: "Pgpool-II", Role: "connection pooler and load balancer",
		Binaries: []string{"pgpool"}, ImageTokens: []string{"pgpool"}, Ports: []int32{9999},
		What:   "pools connections and balances queries across PostgreSQL servers; it keeps no database of its own",
		Source: "Pgpool-II documentation, \"What is Pgpool-II?\" (pgpool.net/docs/latest/en/html/intro-whatis.html; port default 9999)"},
	{Server: "PostgreSQL", Name: "Odyssey", Role: "connection pooler",
		Binaries: []string{"odyssey"}, ImageTokens: []string{"odyssey"},
		What:   "pools client connections to PostgreSQL servers and stores no data",
		Source: "yandex/odyssey README (a scalable PostgreSQL connection pooler)"},
	{Server: "MySQL", Name: "ProxySQL", Role: "SQL proxy",
		Binaries: []string{"proxysql"}, ImageTokens: []string{"proxysql"}, Ports: []int32{6033, 6032},
		What:   "routes MySQL traffic to backend servers; its own SQLite keeps only its configuration",
		Source: "ProxySQL documentation (proxysql.com/documentation/: the MySQL protocol on 6033, the admin interface on 6032)"},
	{Server: "MySQL", Name: "MySQL Router", Role: "query router",
		Binaries: []string{"mysqlrouter"}, ImageTokens: []string{"mysql-router", "mysqlrouter"}, Ports: []int32{6446, 6447},
		What:   "routes clients to the members of an InnoDB Cluster and holds no data",
		Source: "MySQL Router manual, \"Introduction\" (dev.mysql.com/doc/mysql-router/8.0/en/: classic protocol on 6446 read-write and 6447 read-only)"},
	{Server: "MySQL", Name: "MaxScale", Role: "database proxy",
		Binaries: []string{"maxscale"}, ImageTokens: []string{"maxscale"},
		What:   "routes MariaDB and MySQL traffic to backend servers and holds no data",
		Source: "MariaDB MaxScale documentation, \"About MariaDB MaxScale\" (mariadb.com/kb/en/maxscale/)"},
	{Server: "Redis", Name: "Redis Sentinel", Role: "monitor",
		Binaries: []string{"redis-sentinel", "valkey-sentinel"}, Args: []string{"--sentinel"}, Ports: []int32{26379},
		What:   "monitors Redis servers and holds no dataset",
		Source: "redis: src/server.c `checkForSentinelMode` (redis-sentinel or --sentinel), `main` (loadDataFromDisk only outside sentinel_mode); src/sentinel.c `initSentinelConfig` (port 26379)"},
	{Server: "Elasticsearch", Name: "coordinating or ingest node", Role: "node without data",
		RolesEnv:  []string{"node.roles", "OPENSEARCH_NODE_ROLES", "ELASTICSEARCH_NODE_ROLES"},
		DataRoles: []string{"data", "data_content", "data_hot", "data_warm", "data_cold", "data_frozen", "master", "cluster_manager", "search"},
		What:      "routes requests and runs ingest pipelines but holds no shards and no cluster state: its node.roles list no data or master role",
		Source:    "Elasticsearch reference, \"Node settings\" (elastic.co/guide/en/elasticsearch/reference/current/modules-node.html: data nodes hold the shards; a node with node.roles: [] is coordinating only); OpenSearch documentation, \"Cluster formation\" (the same roles, with cluster_manager for master)"},
	{Server: "MinIO", Name: "MinIO Console", Role: "web console",
		ImageTokens: []string{"object-browser", "console"},
		What:        "is a web UI that calls the MinIO API and stores nothing",
		Source:      "bitnami/charts minio/templates/console/deployment.yaml (bitnami/minio-object-browser runs `server --port 9090` and mounts only /tmp and /.console); minio/object-browser README"},
}

// Pod is what the classifier reads of the pod around a container: its
// volumes, to tell the container that keeps data from its neighbours.
// The zero Pod knows no volume.
type Pod struct {
	Spec *corev1.PodSpec
	// Claims are the names of the StatefulSet's volumeClaimTemplates: the
	// pod mounts them by name without declaring them.
	Claims []string
}

// Mount is a volume mount whose volume outlives the container.
type Mount struct {
	Path, Volume string
	// Kind is "PersistentVolumeClaim x", "volumeClaimTemplate x",
	// "ephemeral volume claim", "hostPath", "emptyDir".
	Kind string
}

func (m Mount) String() string { return m.Path + " (" + m.Kind + ")" }

// PersistentMounts returns the mounts of c whose volume outlives the pod:
// a PersistentVolumeClaim, a volumeClaimTemplate, an ephemeral claim, a
// hostPath.
func (p Pod) PersistentMounts(c *corev1.Container) []Mount {
	return p.mounts(c, false)
}

// WritableMounts returns the mounts of c whose data survives a restart of
// the container: the persistent ones and emptyDir volumes.
func (p Pod) WritableMounts(c *corev1.Container) []Mount {
	return p.mounts(c, true)
}

func (p Pod) mounts(c *corev1.Container, emptyDir bool) []Mount {
	var out []Mount
	for _, vm := range c.VolumeMounts {
		if vm.ReadOnly {
			continue
		}
		if kind := p.volumeKind(vm.Name, emptyDir); kind != "" {
			out = append(out, Mount{Path: vm.MountPath, Volume: vm.Name, Kind: kind})
		}
	}
	return out
}

func (p Pod) volumeKind(name string, emptyDir bool) string {
	if p.Spec != nil {
		for _, v := range p.Spec.Volumes {
			if v.Name != name {
				continue
			}
			switch {
			case v.PersistentVolumeClaim != nil:
				return "PersistentVolumeClaim " + v.PersistentVolumeClaim.ClaimName
			case v.Ephemeral != nil:
				return "ephemeral volume claim " + name
			case v.HostPath != nil:
				return "hostPath " + v.HostPath.Path
			case v.EmptyDir != nil && emptyDir:
				return "emptyDir " + name
			}
			return ""
		}
	}
	if slices.Contains(p.Claims, name) {
		return "volumeClaimTemplate " + name
	}
	return ""
}

// companion finds the companion program container c runs, for a container
// whose image matched server s (nil when none did), and says how it was
// recognised; nil when it runs none.
func companion(c *corev1.Container, s *Server, tokens []string) (*Companion, string) {
	progs := programs(c)
	words := commandWords(c)
	for i := range Companions {
		cp := &Companions[i]
		for _, b := range cp.Binaries {
			if slices.Contains(progs, b) {
				return cp, "it runs " + b
			}
		}
		if s == nil || cp.Server != s.Name {
			continue
		}
		for _, a := range cp.Args {
			if slices.Contains(words, a) {
				return cp, "it runs with " + a
			}
		}
		for _, e := range c.Env {
			if slices.Contains(cp.Env, e.Name+"="+e.Value) {
				return cp, "env " + e.Name + "=" + e.Value
			}
			if slices.Contains(cp.RolesEnv, e.Name) && e.ValueFrom == nil {
				if roles := rolesOf(e.Value); !slices.ContainsFunc(roles, func(r string) bool { return slices.Contains(cp.DataRoles, r) }) {
					return cp, fmt.Sprintf("env %s=%q", e.Name, e.Value)
				}
			}
		}
		for _, it := range cp.ImageTokens {
			want := splitTokens(it)
			for j := 0; j+len(want) <= len(tokens); j++ {
				if slices.Equal(tokens[j:j+len(want)], want) {
					return cp, "image token " + it
				}
			}
		}
		if len(cp.Ports) > 0 && declaresAny(c, cp.Ports) && !declaresAny(c, s.Ports) && !declaresAny(c, s.ImagePorts) {
			var own []string
			for _, p := range append(slices.Clone(s.Ports), s.ImagePorts...) {
				own = append(own, itoa(p))
			}
			return cp, "it listens on " + portList(c, cp.Ports) + ", " + cp.Name + "'s port, and not on " + strings.Join(own, " or ")
		}
	}
	return nil, ""
}

// rolesOf splits a node.roles value: "[ingest, ml]", "ingest,ml", "".
func rolesOf(v string) []string {
	v = strings.Trim(strings.TrimSpace(v), "[]")
	var out []string
	for _, r := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, strings.Trim(r, `"'`))
	}
	return out
}

func declaresAny(c *corev1.Container, ports []int32) bool {
	for _, p := range c.Ports {
		if containsPort(ports, p.ContainerPort) {
			return true
		}
	}
	return false
}

func portList(c *corev1.Container, ports []int32) string {
	var out []string
	for _, p := range c.Ports {
		if containsPort(ports, p.ContainerPort) {
			out = append(out, itoa(p.ContainerPort))
		}
	}
	return strings.Join(out, ", ")
}

// commandWords are the words of c's command and arguments, split inside
// shell scripts.
func commandWords(c *corev1.Container) []string {
	var out []string
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		out = append(out, strings.Fields(a)...)
	}
	return out
}

// programs are the names of the programs c's command runs: its first word
// (after wrappers such as exec, tini --), and every command of a shell
// script it runs. A container without a command runs its image's
// entrypoint: none is known.
func programs(c *corev1.Container) []string {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(c.Command) == 0 || len(argv) == 0 {
		return nil
	}
	_, cmds := commandsOf(argv)
	var out []string
	for _, cmd := range cmds {
		out = append(out, path.Base(cmd[0]))
	}
	return out
}

// execWord matches the program a shell script execs, after any variables
// in front of it (exec ${k8s_parent} /home/yugabyte/bin/yb-tserver).
var execWord = lazyregexp.New(`(?:^|[\s;&|(])exec\s+(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\s+)*([^\s;&|$-][^\s;&|]*)`)

// mainProgram is the program c runs as its main process, as far as its
// command says: the program a shell script execs, or the command's first
// word after wrappers (tini --). "" when the command leaves it to the
// image's entrypoint, runs a script, or a shell that execs nothing.
func mainProgram(c *corev1.Container) string {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(c.Command) == 0 || len(argv) == 0 {
		return ""
	}
	if w := stripWrappers(argv); len(w) > 0 && len(w) < len(argv) {
		argv = w // tini -- /bin/bash -c ...: the shell is the command
	}
	script, cmds := commandsOf(argv)
	prog := ""
	switch {
	case script != "":
		if m := execWord().FindAllStringSubmatch(script, -1); len(m) > 0 {
			prog = m[len(m)-1][1]
		}
	case len(cmds) > 0 && len(cmds[0]) > 0:
		prog = cmds[0][0]
	}
	if prog == "" || isScript(prog) || contains(shells, path.Base(prog)) || strings.Contains(strings.ToLower(path.Base(prog)), "entrypoint") {
		return ""
	}
	return prog
}

// runsServer says whether program prog may be server s: its path names
// one of s's image tokens or names (redis-server, /opt/bitnami/redis/bin/...),
// or it is one of the server's clients or tools.
func runsServer(s *Server, prog string) bool {
	p := strings.ToLower(prog)
	for _, t := range append(slices.Clone(s.ImageTokens), s.ImageNames...) {
		if strings.Contains(p, strings.ToLower(t)) {
			return true
		}
	}
	return false
}

// cacheOnly reads a Redis-protocol server's command line: it runs as a
// cache when it is started with save points switched off (--save "") and
// without an append-only file (--appendonly yes). Redis then writes nothing
// to disk, so a restart loses a cache, not data, and loads nothing (redis
// src/server.c loadDataFromDisk: the AOF only with appendonly on, else an
// RDB file, which no save point ever wrote).
func cacheOnly(c *corev1.Container) string {
	words := argvWords(c)
	saveOff, aofOn := false, false
	for i, w := range words {
		switch w {
		case "--save":
			if i+1 < len(words) && (words[i+1] == "" || words[i+1] == `""` || words[i+1] == "''") {
				saveOff = true
			}
		case "--appendonly":
			aofOn = i+1 < len(words) && strings.EqualFold(words[i+1], "yes")
		}
	}
	if saveOff && !aofOn {
		return `it is started with --save "" and without --appendonly yes`
	}
	return ""
}

// argvWords are the words of c's command line as the program receives
// them: list items as they are, shell scripts split into words.
func argvWords(c *corev1.Container) []string {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) == 0 {
		return nil
	}
	script, cmds := commandsOf(argv)
	if script == "" {
		return argv
	}
	var out []string
	for _, cmd := range cmds {
		out = append(out, cmd...)
	}
	return out
}

// IdleImages are images whose own entrypoint only waits: tooling images
// that people exec into.
var IdleImages = []struct{ Name, What, Source string }{
	{Name: "admin-tools", What: "Temporal's admin tools image, whose entrypoint is tini -- sleep infinity",
		Source: "temporalio/docker-builds admin-tools.Dockerfile (ENTRYPOINT [\"tini\", \"--\", \"sleep\", \"infinity\"])"},
}

// idleCommands only wait: a container that runs nothing else serves
// nothing.
var idleCommands = []string{"sleep", "true", ":", "wait", "pause", "trap"}

// Idle says why container c runs nothing but a wait (sleep infinity, tail
// -f /dev/null, a sleep loop, or an image whose entrypoint only sleeps),
// or "". Such a container serves nothing: restarting it costs nothing.
func Idle(c *corev1.Container) string {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(c.Command) == 0 {
		base := path.Base(imageRepository(c.Image))
		for _, im := range IdleImages {
			if im.Name == base && len(c.Args) == 0 {
				return "image " + imageRepository(c.Image) + " is " + im.What
			}
		}
		return "" // the image's entrypoint, with these arguments: unknown
	}
	_, cmds := commandsOf(argv)
	if len(cmds) == 0 {
		return ""
	}
	for _, cmd := range cmds {
		name := path.Base(cmd[0])
		switch {
		case slices.Contains(idleCommands, name):
		case name == "tail" && slices.Contains(cmd[1:], "-f") && slices.Contains(cmd[1:], "/dev/null"):
		case name == "cat" && len(cmd) == 1:
		default:
			return ""
		}
	}
	return "its command only waits (" + strings.Join(argv, " ") + ")"
}
