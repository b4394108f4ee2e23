#!/bin/bash
# A health check of the shape of the MariaDB image's healthcheck.sh
# (MariaDB/mariadb-docker healthcheck.sh, commit 148b0e5d33be), written for
# the server lab, not copied: it runs the tests named by its arguments in
# order, as the image's does, and knows two of them.
#   --connect             a TCP connection to localhost; only a "Can't
#                         connect" fails it, so a refused login passes
#   --innodb_initialized  InnoDB is listed as available, over the socket
# The client finds the port and the socket in its defaults (~/.my.cnf),
# as it does in the image.
set -eo pipefail

connect() {
	set +e +o pipefail
	mariadb -h localhost --protocol tcp -e 'select 1' 2>&1 | grep -qF "Can't connect"
	local matched=${PIPESTATUS[1]}
	set -eo pipefail
	[ "$matched" != 0 ]
}

innodb_initialized() {
	local s
	s=$(mariadb -B --skip-column-names -e 'select 1 from information_schema.ENGINES WHERE engine="innodb" AND support in ("YES", "DEFAULT", "ENABLED")')
	[ "$s" == 1 ]
}

for arg in "$@"; do
	test=${arg#--}
	case "$test" in
	connect | innodb_initialized) ;;
	*)
		echo "healthcheck unknown option or test '$test'" >&2
		exit 1
		;;
	esac
	if ! "$test"; then
		echo "healthcheck $test failed" >&2
		exit 1
	fi
done
