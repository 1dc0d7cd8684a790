# shellcheck shell=bash
# test/shell/lib/tap.bash: tiny TAP helpers for shell tests (sourced).
#
# Shell tests run with the PG* variables of the server under test, print TAP
# and are run by `prove`.  They need a local server (they send signals to
# its processes); against a remote one they skip.

set -uo pipefail

TAP_COUNT=0
TAP_FAILED=0

tap_plan() { echo "1..$1"; }

tap_ok() {   # tap_ok <condition-exit-status> <description>
    TAP_COUNT=$((TAP_COUNT + 1))
    TAP_LAST_OK=$1
    if [ "$1" -eq 0 ]; then
        echo "ok $TAP_COUNT - $2"
    else
        echo "not ok $TAP_COUNT - $2"
        TAP_FAILED=$((TAP_FAILED + 1))
    fi
}

tap_is() {   # tap_is <got> <expected> <description>
    if [ "$1" = "$2" ]; then
        tap_ok 0 "$3"
    else
        tap_ok 1 "$3"
        echo "#   got:      '$1'"
        echo "#   expected: '$2'"
    fi
}

# tap_match <want-match: 0|1> <got> <regex> <description>
tap_match() {
    local matched=1
    # a here-string, not a pipe: with pipefail, grep -q leaving early
    # would fail the pipe (SIGPIPE) and turn a match into a mismatch
    if grep -Eq -- "$3" <<<"$2"; then matched=0; fi
    if [ "$1" -eq 0 ]; then tap_ok "$matched" "$4"; else tap_ok $((1 - matched)) "$4"; fi
    if [ "$TAP_LAST_OK" -ne 0 ]; then
        echo "#   got:      '$2'"
        if [ "$1" -eq 0 ]; then echo "#   expected to match: '$3'"
        else echo "#   expected not to match: '$3'"; fi
    fi
}

tap_like()   { tap_match 0 "$@"; }   # tap_like <got> <regex> <description>
tap_unlike() { tap_match 1 "$@"; }   # tap_unlike <got> <regex> <description>

tap_skip_all() { echo "1..0 # SKIP $1"; exit 0; }

tap_done() { exit $((TAP_FAILED > 0 ? 1 : 0)); }

# psql returning bare values; stderr is kept (warnings, errors).
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@" 2>&1; }

# psql returning bare values only (messages discarded).
qv() { psql -X -qAt -v ON_ERROR_STOP=1 "$@" 2>/dev/null; }

# node_digest <index>: an md5 of every node page's entries (level, position,
# reference, box), in page order: equal digests are the same tree, node for
# node.
node_digest() {
    qv -c "SELECT md5(string_agg(concat_ws(',', p, n.level, n.position, n.ref, n.xmin, n.ymin, n.xmax, n.ymax), ';'
                                 ORDER BY p, n.position))
           FROM generate_series(2, (festival.stats('$1')->>'pages')::bigint - 1) p, LATERAL festival.node('$1', p) n"
}

# scattered_points <table> <n>: a table (id, geom) of n points spread over
# 100003 x 99991 by two multiplicative steps (no two alike), with a unique
# index on id, as the crash and fault tests build their indices from.
scattered_points() {
    q -c "CREATE TABLE $1 AS
              SELECT i AS id, ST_MakePoint((i::bigint * 7919) % 100003, (i::bigint * 104729) % 99991) AS geom
              FROM generate_series(1, $2) i" \
      -c "CREATE UNIQUE INDEX ON $1 (id)" >/dev/null
}

# When the server's statistics were last reset: a crash restart resets
# them (fresh_database and wait_for_server keep it).
TAP_LAST_RESET=""
stats_reset() { psql -X -qAt -d postgres -c "SELECT stats_reset FROM pg_stat_bgwriter" 2>/dev/null; }

# Wait until the server has gone through the crash restart a killed backend
# causes and accepts connections again.  A connection can succeed before the
# postmaster has even noticed the death (the restart would then end the
# test's next session), so the restart is recognised by the statistics it
# resets; unchanged for 10 s with connections accepted, there was none.
wait_for_server() {
    local now unchanged=0
    for _ in $(seq 1 240); do
        now=$(stats_reset)
        if [ -n "$now" ]; then
            if [ "$now" != "$TAP_LAST_RESET" ]; then TAP_LAST_RESET=$now; return 0; fi
            unchanged=$((unchanged + 1))
            [ "$unchanged" -ge 40 ] && return 0
        fi
        sleep 0.25
    done
    return 1
}

# A fresh database for one test file; sets PGDATABASE.
fresh_database() {
    local db=$1
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
    export PGDATABASE=$db
    q -c "CREATE EXTENSION festival CASCADE" >/dev/null
    TAP_LAST_RESET=$(stats_reset)
}
