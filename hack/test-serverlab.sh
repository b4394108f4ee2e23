#!/usr/bin/env bash
# The server lab (internal/serverlab): real servers from Debian's packages,
# crashed under a write load, with the probe commands of the server tables
# run while they recover. It installs the packages it needs (as root, with
# sudo when you are not), then runs the servers one at a time, each as an
# unprivileged user in a temporary directory: a few minutes on 2 cores.
# A server that cannot start on the machine skips with the reason.
# -update writes the run to internal/classify/lab.json; then
# `go test ./internal/classify -update` renders docs/servers.md from it.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(postgresql-15 postgresql-client-15 redis-server redis-tools mariadb-server mariadb-client
  etcd-server etcd-client zookeeper rabbitmq-server curl netcat-openbsd
  prometheus influxdb influxdb-client clickhouse-server clickhouse-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q
  # Debian starts a server's service when it installs it, where an init
  # system runs; the lab starts its own on other ports, so that is harmless.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# One server at a time (-p 1, and the tests are not parallel), timed.
start=$(date +%s)
BACKFIRE_SERVER_LAB=1 go test -p 1 -count=1 -timeout 20m -v ./internal/serverlab "$@"
echo "server lab: $(( $(date +%s) - start )) s"
