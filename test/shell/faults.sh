#!/usr/bin/env bash
# Faults of the device (issue 9): the fault-injecting device layer
# (festival.inject_fault) fails the i-th page write of an operation with
# ENOSPC, EIO or a torn write, for every structure x framework and the
# operations that write: inserts that split (and, with FAST/eFIND, their
# log writes and syncs), a flush, a log compaction, a bulk load and a
# one-at-a-time build.  Every trial must end with an error of the right
# SQLSTATE and an index that either answers as brute force over the
# acknowledged rows and accepts changes, or refuses changes (or queries,
# half built) until check()/build() bring it back (lib/faults.sql).
# CI tries at most FAULT_CAP positions per case (spread over the
# operation's writes); scripts/campaign-faults --long tries them all.
#
# Then kill -9 at writes of twelve inserts that split (framework none: 16
# page writes; CI tries the split's and a few others, CRASH_INSERT_POSITIONS
# and CRASH_FLUSH_POSITIONS choose) and of a flush (fast): after the
# restart every acknowledged insert is present.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/faults.bash"

FAULT_CAP=${FAULT_CAP:-3}
fresh_database festival_faults
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (crash trials kill a backend)"
fi
faults_setup

ncases=0
for st in $FAULT_STRUCTURES; do
    for fw in $(fault_frameworks "${st%%:*}"); do
        for _ in $(fault_operations "$fw"); do ncases=$((ncases + 1)); done
    done
done
CRASH_INSERT_POSITIONS=${CRASH_INSERT_POSITIONS:-"0 1 4 5 6 7 10 15"}
CRASH_FLUSH_POSITIONS=${CRASH_FLUSH_POSITIONS:-"0 3 5 9"}
ncrash=$(( $(echo $CRASH_INSERT_POSITIONS | wc -w) + $(echo $CRASH_FLUSH_POSITIONS | wc -w) ))
tap_plan $((ncases * 2 + 2 + ncrash * 4))

# the reported bug: ENOSPC on the page a split adds leaves the index usable
out=$(fault_case rtree none insert write str 0)
tap_like "$out" '\|ENOSPC\|usable\|([2-9]|[1-9][0-9])$' \
    "rtree/none: ENOSPC on the pages a split adds leaves the index usable, nothing to repair"
tap_unlike "$out" 'FAIL' "rtree/none: every write of twelve inserts that split, failed with ENOSPC, EIO or torn: no failure"

for st in $FAULT_STRUCTURES; do
    s=${st%%:*}; bulk=${st##*:}
    for fw in $(fault_frameworks "${st%%:*}"); do
        for o in $(fault_operations "$fw"); do
            op=${o%%:*}; target=${o##*:}
            out=$(fault_case "$s" "$fw" "$op" "$target" "$bulk" "$FAULT_CAP")
            tap_unlike "$out" 'FAIL|ERROR' "$s/$fw $op, fault at $target: clean errors and correct answers"
            tap_like "$out" '\|(usable|recovered)\|' "$s/$fw $op, fault at $target: faults fired ($(echo "$out" | head -1 | cut -d'|' -f1) writes)"
            echo "$out" | grep -E 'FAIL|ERROR' | sed 's/^/#   /'
        done
    done
done

# crash (kill -9) at every write of inserts that split, and of a flush
crash_check() {   # crash_check <index> <label> <extra allowed> <refused before check>
    local out
    wait_for_server
    out=$(crash_verdict "$1")
    tap_like "$out" '^missing=0 extra=[0-'"$3"']$' "$2: every acknowledged insert is present after the restart"
    tap_like "$out" "^refused=$4$" "$2: changes before a check: refused is $4 (write-through: suspect)"
    tap_like "$out" '^accepted=true$' "$2: the index takes changes again (after check/build when damaged)"
    tap_like "$out" '^mismatches=0$' "$2: answers equal brute force"
}
for pos in $CRASH_INSERT_POSITIONS; do
    crash_trial "cr_none_$pos" rtree none insert "$pos" >/dev/null
    # write 0 clears the clean flag: killed before it, the file is still clean
    if [ "$pos" -eq 0 ]; then suspect=false; else suspect=true; fi
    crash_check "cr_none_$pos" "rtree/none, kill -9 at write $pos of 12 inserts" 1 $suspect
done
for pos in $CRASH_FLUSH_POSITIONS; do
    crash_trial "cr_fast_$pos" rtree fast flush "$pos" >/dev/null
    crash_check "cr_fast_$pos" "rtree/fast, kill -9 at write $pos of a flush" 0 false
done

for ix in $(qv -c "SELECT name FROM festival.index"); do
    qv -c "SELECT festival.drop_index('$ix')" >/dev/null
done
psql -X -q -d postgres -c "DROP DATABASE festival_faults" >/dev/null 2>&1
tap_done
