// Package serverlab holds the server lab: tests that start real servers
// from Debian's packages (PostgreSQL, Redis, MariaDB, etcd, ZooKeeper,
// RabbitMQ, Prometheus, InfluxDB, ClickHouse), each in a temporary directory as an unprivileged user, kill
// them with SIGKILL under a write load, and record what the probe commands
// of internal/classify's tables do while they recover; then stop them with
// SIGTERM with a client connected, and let a liveness budget shorter than
// the recovery kill them over and over: during that loop the server gets
// a tenth of a core (see starve), as a BestEffort pod does on a busy node,
// so that the recovery outlasts the budget on any machine. A row of the
// tables that a measurement contradicts fails the test. Every process a
// lab starts is killed when its test ends, daemons that left the server's
// process group too (see sweep).
//
// It is a package of the main module, not a module of its own, because it
// needs nothing but the standard library and internal/classify (the
// modules under test/ exist to keep heavy dependencies out of go.mod). It
// runs only with BACKFIRE_SERVER_LAB=1, which hack/test-serverlab.sh sets
// after installing the packages; it is kept apart from
// BACKFIRE_HEAVY_TESTS so that its timings are not taken while `go test
// ./...` compiles and tests other packages on the same cores.
//
// go test ./internal/serverlab -update writes the run to
// internal/classify/lab.json, from which docs/servers.md is rendered.
package serverlab
