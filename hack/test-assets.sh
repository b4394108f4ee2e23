#!/usr/bin/env bash
# Provides a real kube-apiserver and etcd for integration tests (controller-runtime
# envtest). setup-envtest cannot download release binaries here (only the Go module
# proxy and Debian apt are reachable), so we build them from the Go module proxy in a
# throwaway module outside the repo and cache them: the cold build takes ~15 minutes,
# later runs return at once. Usage:
#   export KUBEBUILDER_ASSETS=$(hack/test-assets.sh)
# Logs go to stderr; the only stdout line is the assets dir.
set -euo pipefail

K8S_VERSION=1.37.2   # kube-apiserver; its staging modules are v0.37.2
ETCD_VERSION=3.7.3
DIR=${BACKFIRE_ASSETS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/backfire/test-assets/v$K8S_VERSION}

exec 3>&1 1>&2   # keep stdout for the final line only
log() { echo "test-assets: $*"; }
runs() { [ -x "$DIR/$1" ] && "$DIR/$1" --version >/dev/null 2>&1; }

mkdir -p "$DIR"
exec 9>"$DIR/.lock" && flock 9   # concurrent callers wait for one build
if runs kube-apiserver && runs etcd; then echo "$DIR" >&3; exit 0; fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK" "$DIR"/.*.partial' EXIT
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

# build NAME PKG LDFLAGS: builds PKG (already required by $WORK/NAME/go.mod) into $DIR/NAME.
build() {
  local start=$SECONDS
  log "building $1 (this takes minutes)"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$2" >"$WORK/$1/tools.go"
  # set -e is off when called from `if`, hence the explicit `|| return`.
  (cd "$WORK/$1" && go mod tidy && go build -trimpath -ldflags="-s -w $3" -o "$DIR/.$1.partial" "$2") || return
  mv -f "$DIR/.$1.partial" "$DIR/$1" || return   # atomic: a killed build never leaves a half binary
  log "built $1 in $((SECONDS - start))s: $("$DIR/$1" --version | head -n1)"
}

if ! runs etcd; then
  mkdir "$WORK/etcd"
  printf 'module assets/etcd\n\ngo 1.26\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" >"$WORK/etcd/go.mod"
  if ! build etcd go.etcd.io/etcd/server/v3 ""; then
    log "etcd build failed; falling back to Debian's etcd-server"
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q etcd-server
    cp /usr/bin/etcd "$DIR/.etcd.partial" && mv -f "$DIR/.etcd.partial" "$DIR/etcd"
  fi
fi

if ! runs kube-apiserver; then
  # kubernetes requires its staging modules (k8s.io/api, ...) at v0.0.0 and replaces
  # them with ./staging; a dependent module must repeat those replaces with real versions.
  mkdir "$WORK/kube-apiserver"
  (cd "$WORK/kube-apiserver" && go mod download "k8s.io/kubernetes@v$K8S_VERSION")
  kmod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v$K8S_VERSION.mod"
  {
    echo "module assets/kube-apiserver"
    grep -E '^(go|godebug) ' "$kmod"
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo "replace ("
    sed -nE "s#^\s*(k8s\.io/[^ ]+) => \./staging/.*#\t\1 => \1 v0.${K8S_VERSION#1.}#p" "$kmod"
    echo ")"
  } >"$WORK/kube-apiserver/go.mod"
  ldflags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=v$K8S_VERSION -X $pkg.gitMajor=${K8S_VERSION%%.*}"
    ldflags+=" -X $pkg.gitMinor=$(cut -d. -f2 <<<"$K8S_VERSION")"
  done
  build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
fi

runs kube-apiserver && runs etcd
echo "$DIR" >&3
