# shellcheck shell=bash
# scripts/lib.sh: shared set-up for festival's scripts (sourced, not run).
#
#   fest_setup            install missing Debian packages, build, install
#   fest_server           use the server the PG* variables point at, or start
#                         a throwaway cluster (stopped when the script exits)
#   fest_start_cluster P [OPTS]  start a throwaway cluster on port P (its own
#                         socket directory; OPTS: more server options, e.g.
#                         "-c shared_preload_libraries=festival") and point
#                         the PG* variables at it
#   fest_psql ...         psql with ON_ERROR_STOP, quiet
#   fest_usage            print the calling script's header comment (its usage)
#   fest_value OPT ARGS   exit 2 unless the option OPT has a value after it
#   fest_venv MODULE PKG  print the python of the scripts' virtual environment
#                         ($FEST_VENV, default ~/.cache/festival/venv: Debian's
#                         python3 and its packages, plus PyPI's), installing
#                         PKG from PyPI first when MODULE does not import
#
# A server counts as configured when PGHOST, PGPORT, PGDATABASE or PGSERVICE
# is set; festival and PostGIS must be installable there (CREATE EXTENSION
# needs a superuser).  Otherwise the cluster is created in a fresh directory
# under /tmp, owned by the "postgres" system user, listening only on a Unix
# socket in that directory, and removed at exit.

set -euo pipefail

FEST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG

FEST_PACKAGES=(
    postgresql-15 postgresql-server-dev-15 postgresql-15-postgis-3
    postgresql-15-postgis-3-scripts postgresql-contrib libgeos-dev make gcc
    postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
    python3-psycopg python3-matplotlib python3-venv
    libaio-dev liburing-dev
)

fest_log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# The header comment of the script that sourced this file, without its
# "#!" line and "# " prefixes: every script's usage lives there, once.
fest_usage() {
    awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}

# fest_value OPTION "$@" (the arguments from OPTION on): an option that takes
# a value must have one; exits 2 (a usage error) before any set-up work.
fest_value() {
    local opt=$1
    shift
    if [ $# -eq 0 ] || [[ "$1" == --* ]]; then
        echo "$(basename "$0"): $opt needs a value (--help shows the usage)" >&2
        exit 2
    fi
}

# PyPI's procrastinate (scripts/lib/distributed.py), pinned: its queue
# tables live in the result database, so every host runs the same version
FEST_PROCRASTINATE=procrastinate==3.10.0

fest_venv() {
    local venv=${FEST_VENV:-$HOME/.cache/festival/venv}
    if ! "$venv/bin/python" -c "import $1, psycopg" 2>/dev/null; then
        fest_log "installing PyPI's $2 into $venv"
        /usr/bin/python3 -m venv --system-site-packages "$venv" >&2
        "$venv/bin/pip" install -q --disable-pip-version-check "$2" >&2
    fi
    echo "$venv/bin/python"
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else fest_log "need root for: $*"; return 1
    fi
}

# Install only the Debian packages that are missing.
fest_install_packages() {
    local missing=() p
    for p in "${FEST_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    fest_log "installing Debian packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        "${missing[@]}" >/dev/null
}

# FEST_ASSERT=1 (scripts/test sets it) builds with Assert()s on; every other
# script builds without.  The Makefile rebuilds when the setting changes.
fest_build_install() {
    local assert=${FEST_ASSERT:-0}
    fest_log "building festival (assertions: $([ "$assert" = 1 ] && echo on || echo off))"
    make -C "$FEST_ROOT" -s PG_CONFIG="$PG_CONFIG" FEST_ASSERT="$assert" >/dev/null
    as_root make -C "$FEST_ROOT" -s PG_CONFIG="$PG_CONFIG" FEST_ASSERT="$assert" install >/dev/null
}

fest_setup() {
    fest_install_packages
    fest_build_install
}

FEST_TMP_CLUSTER=""
FEST_TMP_CLUSTERS=()

fest_stop_cluster() {
    local dir
    for dir in "${FEST_TMP_CLUSTERS[@]}"; do
        if [ -d "$dir" ]; then
            fest_run_as_postgres "$($PG_CONFIG --bindir)/pg_ctl" -D "$dir/data" \
                -m fast -w stop >/dev/null 2>&1 || true
            rm -rf "$dir"
        fi
    done
}

fest_run_as_postgres() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"
    else "$@"
    fi
}

# fest_start_cluster <port> [server options]: a throwaway cluster listening only on a Unix
# socket in its own directory (so the port never collides with another
# server's), stopped and removed when the script exits; its directory in
# FEST_TMP_CLUSTER, its PG* variables exported.
fest_start_cluster() {
    local bindir dir
    bindir=$("$PG_CONFIG" --bindir)
    dir=$(mktemp -d /tmp/festival-pg.XXXXXX)
    chmod 755 "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$dir"; fi
    FEST_TMP_CLUSTERS+=("$dir")
    trap fest_stop_cluster EXIT
    fest_log "starting a throwaway PostgreSQL cluster in $dir"
    fest_run_as_postgres "$bindir/initdb" -D "$dir/data" -A trust -U postgres \
        -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
    fest_run_as_postgres "$bindir/pg_ctl" -D "$dir/data" \
        -l "$dir/server.log" -w -t 60 \
        -o "-p $1 -k $dir -c listen_addresses= -c fsync=off -c max_connections=40 ${2:-}" \
        start >/dev/null
    FEST_TMP_CLUSTER=$dir
    export PGHOST="$dir" PGPORT=$1 PGUSER=postgres PGDATABASE=postgres
    export FEST_SERVER_LOG="$dir/server.log"
}

# Start a throwaway cluster unless the environment names a server.
fest_server() {
    if [ -n "${PGHOST:-}${PGPORT:-}${PGDATABASE:-}${PGSERVICE:-}" ]; then
        fest_log "using the configured server (PGHOST=${PGHOST:-} PGPORT=${PGPORT:-})"
        return 0
    fi
    fest_start_cluster 54329
}

fest_psql() {
    psql -X -q -v ON_ERROR_STOP=1 "$@"
}
