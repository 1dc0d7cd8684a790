#!/usr/bin/env bash
# The damage campaigns restricted to the grid file (structure 'gridfile'),
# against the suite's server: 9 kill -9 trials in streams of inserts and
# deletes (three under each of the frameworks none, FAST and eFIND: every
# acknowledged change survives, check() is clean once the interrupted
# statement is reconciled) and 24 byte flips in meta pages, data pages and
# logs (each answered correctly or refused with a clean error naming the
# damage); then 8 kill -9 trials under the cache clru.  The standing
# campaigns (campaigns.sh) keep their own mix.
source "$(dirname "$0")/lib/tap.bash"

if [ "$(psql -X -qAt -d postgres -c "SELECT inet_server_addr() IS NULL" 2>/dev/null)" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (the campaigns kill backends)"
fi
tap_plan 3
root=$(cd "$(dirname "$0")/../.." && pwd)

for c in crash:9 flips:24; do
    out=$("$root/scripts/campaign-${c%%:*}" --no-setup --structures gridfile --caches none --placements none \
          --trials "${c##*:}" --seed 3 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed 's/^/# /'
    tap_ok "$rc" "campaign-${c%%:*} on gridfile: no failure ($(printf '%s\n' "$out" | grep '^total' | tr -s ' '))"
done

# the cache clru (16 pages, cold lists of 2: batches written all the time)
# under FAST and eFIND, whose redo logs restore what a kill -9 takes from
# a write-back cache (under framework none such an index is suspect)
out=$("$root/scripts/campaign-crash" --no-setup --structures gridfile --frameworks fast,efind --placements none \
      --options '{"cache": "clru", "cache_size": 16384, "cache_clru_pages": 2}' --trials 8 --seed 5 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
tap_ok "$rc" "campaign-crash on gridfile under cache clru: no failure ($(printf '%s\n' "$out" | grep '^total' | tr -s ' '))"
tap_done
