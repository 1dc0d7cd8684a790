#!/usr/bin/env bash
# The adaptive grid file (structure 'agrid', framework none) at every page
# write of its mode switches: a fault (ENOSPC, EIO, a torn write) and a
# kill -9 at each.
#
# The operation ("switch", lib/faults.sql): an index of 150 scattered
# points (buckets of 16, max_fill 60; mode_window 4) whose every point,
# and every point the operation will add, the session has searched (its
# buckets read-heavy), then twelve clustered inserts: the first into a bucket switches it to in-place mode (its
# records written into a fresh page of its own), the next rewrite that
# page in place, later ones switch it back to log mode (a fresh working
# page when the old one is older than the bucket's page) and split it.
# A twin shows that the operation does each (switches both ways).
#
#   faults  every write of the operation, with each error (ft_campaign, cap
#           0): the operation fails with the right SQLSTATE, and the index
#           answers as brute force over the acknowledged rows and takes
#           changes (usable), or refuses them until check()/build()
#           (recovered);
#   kill    the backend kills itself (festival.inject_fault ... 'crash') at
#           each write of the operation: after the restart the first use
#           restores the index from its log pages (in-place pages included),
#           every acknowledged insert is there once, nothing else but the
#           one the kill interrupted, changes are taken at once, check() is
#           clean and answers equal brute force.
# AGRID_CRASH_POSITIONS limits the kill positions (default: every write).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"
source "$(dirname "$0")/lib/faults.bash"

db=festival_agrid_crash
fresh_database "$db"
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (the test kills a backend)"
fi
tmp=$(mktemp -d)
faults_setup
# ft_campaign's options for agrid (lib/faults.sql)
opts='{"framework": "none", "page_size": 1024, "extent": [-1, -1, 1001, 1001], "max_fill": 60, "mode_window": 4}'

# ---- the operation switches both ways ---------------------------------------
out=$(q -c "SET client_min_messages = error" \
        -c "SELECT ft_setup('agtwin', 'agrid', '$opts', 150, 'insert')" \
        -c "SELECT ft_prepare('agtwin', 'switch', 150)" \
        -c "SELECT 'before=' || (festival.stats('agtwin')->'config'->'derived'->>'switches_to_place')" \
        -c "SELECT 'run=' || coalesce(ft_run('agtwin', 'switch', 150, 'insert'), 'ok')" \
        -c "SELECT 'to_place=' || (festival.stats('agtwin')->'config'->'derived'->>'switches_to_place')" \
        -c "SELECT 'to_log=' || (festival.stats('agtwin')->'config'->'derived'->>'switches_to_log')" \
        -c "SELECT 'rewrites=' || (festival.stats('agtwin')->'config'->'derived'->>'rewrites_in_place')" \
        -c "SELECT 'splits=' || (festival.stats('agtwin')->'totals'->>'splits_leaf')" \
        -c "SELECT 'check=' || count(*) FROM festival.check('agtwin')")
tap_like "$out" '^run=ok$' "twin: the twelve inserts succeed"
tap_like "$out" '^to_place=[1-9]' "twin: they switch a bucket to in-place mode ($(echo "$out" | grep to_place=))"
tap_like "$out" '^to_log=[1-9]' "twin: and a bucket back to log mode ($(echo "$out" | grep to_log=))"
tap_like "$out" '^rewrites=[1-9]' "twin: and rewrite a bucket in place ($(echo "$out" | grep rewrites=))"
tap_like "$out" '^check=0$' "twin: check() is clean"
writes=$(qv -c "SET client_min_messages = error" \
            -c "SELECT ft_measure('agm', 'agrid', '$opts', 'switch', 'write', 150, 'insert')")
tap_like "$writes" '^[1-9][0-9]*$' "the operation writes $writes pages"
writes=${writes:-1}

# ---- a fault at every write ---------------------------------------------------
out=$(fault_case agrid none switch write insert 0)
tap_unlike "$out" 'FAIL|ERROR' "faults at each of the $writes writes (ENOSPC, EIO, torn): clean errors and correct answers"
tap_like "$out" '\|(usable|recovered)\|' "faults fired: $(echo "$out" | awk -F'|' '{n += $4} END {print n}') trials"
echo "$out" | sed 's/^/#   /'

# ---- kill -9 at every write -------------------------------------------------
positions=${AGRID_CRASH_POSITIONS:-$(seq 0 $((writes - 1)))}
for pos in $positions; do
    ix=agk_$pos
    q -c "SET client_min_messages = error" \
      -c "SELECT ft_setup('$ix', 'agrid', '$opts', 150, 'insert')" >/dev/null
    # the searches in the victim's own session: the counts are its memory
    stmts="SET client_min_messages = error;"$'\n'
    stmts+="SELECT ft_prepare('$ix', 'switch', 150);"$'\n'
    stmts+="SELECT festival.inject_fault('$ix', 'write', $pos, 'crash');"$'\n'
    for k in $(seq 1 12); do stmts+="SELECT 'ack' FROM ft_insert('$ix', $((150 + k)));"$'\n'; done
    acked=$(printf '%s' "$stmts" | psql -X -qAt -v ON_ERROR_STOP=1 2>/dev/null | grep -c '^ack$')
    wait_for_server
    tap_ok $? "$ix: the server is back (kill at write $pos of $writes, $acked inserts acknowledged before)"
    restored_checks "$ix" "$pos"
    qv -c "SELECT festival.drop_index('$ix')" >/dev/null
done

# ---- the crash, flips and faults campaigns on agrid ---------------------------
root="$(cd "$(dirname "$0")/../.." && pwd)"
for c in crash:4 flips:12 faults:6; do
    out=$("$root/scripts/campaign-${c%%:*}" --no-setup --structures agrid --frameworks none --caches none,clru --placements none \
          --trials "${c##*:}" --seed 5 2>&1)
    rc=$?
    tap_ok "$rc" "campaign-${c%%:*} on agrid: no failure ($(printf '%s\n' "$out" | grep '^total' | tr -s ' '))"
    [ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
done

# the plan at the end: the positions are counted above
tap_plan "$TAP_COUNT"
crash_end "$db"
