#!/usr/bin/env bash
# The standing damage campaigns at their small size, against the suite's
# server, over the configuration matrix (structure x framework x cache x
# tier placement, scripts/lib/campaign.py; every cache, framework,
# placement and structure in each): scripts/campaign-flips (50 byte flips
# in meta pages, data pages, logs, tier maps and weights of closed and
# crashed indices) and scripts/campaign-crash (24 kill -9 trials in
# streams of inserts and deletes).  Each exits non-zero on any failure (a
# backend crash, a wrong answer without an error, an acknowledged change
# lost, check() silent about damage); the tables they print are shown as
# TAP comments.  Their --long modes are for humans.  Then 16 flips and 8
# kills over the four trees with window searches a level at a time in
# batches of 4 (--settings: festival.window_search = level).
source "$(dirname "$0")/lib/tap.bash"

if [ "$(psql -X -qAt -d postgres -c "SELECT inet_server_addr() IS NULL" 2>/dev/null)" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (the campaigns kill backends)"
fi
tap_plan 4
root=$(cd "$(dirname "$0")/../.." && pwd)

for c in flips crash; do
    out=$("$root/scripts/campaign-$c" --no-setup 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed 's/^/# /'
    tap_ok "$rc" "campaign-$c: no failure ($(printf '%s\n' "$out" | grep '^total' | tr -s ' '))"
done
level='{"festival.window_search": "level", "festival.queue_depth": 4}'
for c in "flips 16" "crash 8"; do
    set -- $c
    out=$("$root/scripts/campaign-$1" --no-setup --trials "$2" --structures rtree,rstartree,hilbert,xbrtree \
        --settings "$level" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed 's/^/# /'
    tap_ok "$rc" "campaign-$1, window searches a level at a time: no failure ($(printf '%s\n' "$out" | grep '^total' | tr -s ' '))"
done
tap_done
