#!/usr/bin/env bash
# Faults in the xBR+-tree's SSD algorithms and their HDD originals (Fevgas
# 2019 §3.6): the fault layer (festival.inject_fault) fails the i-th page
# write (or log write or sync) of
#   - a festival.insert_many of 120 points (half of them close together,
#     so that leaves overflow and are partitioned) with methods 'bulk_ssd'
#     (under none, FAST and eFIND) and 'bulk' (none), and, for comparison,
#     the generic 'insert' under none;
#   - a build with the four-phase loaders 'four_phase_ssd' (none, FAST,
#     eFIND) and 'four_phase' (none), in maintenance_work_mem = 1MB;
# with ENOSPC, EIO and a torn write.  The trials are those of
# test/shell/faults.sh (lib/faults.sql, ft_trial): each must fail with the
# fault's SQLSTATE and leave an index that answers as brute force over the
# acknowledged rows and takes changes (the batch absent, as one
# modification that failed; or whole, when the error says it was logged
# and is kept), or that refuses changes or queries until check()/build().
# The log is synced at every operation (festival.log_sync = operation), so
# that a fault at log_sync has syncs to fail.
# FAULT_CAP positions per case (spread over the operation's writes; 0: all).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/faults.bash"

FAULT_CAP=${FAULT_CAP:-3}
fresh_database festival_faults_xbr
faults_setup

CASES="many:bulk_ssd:none:write many:bulk_ssd:fast:write many:bulk_ssd:fast:log_write
many:bulk_ssd:fast:log_sync many:bulk_ssd:efind:write many:bulk_ssd:efind:log_write
many:bulk:none:write many:insert:none:write bulk:four_phase_ssd:none:write
bulk:four_phase_ssd:fast:write bulk:four_phase_ssd:efind:write bulk:four_phase:none:write"
tap_plan $(( $(echo $CASES | wc -w) * 2 ))

for c in $CASES; do
    IFS=: read -r op method fw target <<<"$c"
    out=$(q -F'|' -c "SET client_min_messages = error" -c "SET maintenance_work_mem = '1MB'" \
            -c "SET festival.log_sync = operation" \
            -c "SELECT writes, error, outcome, trials FROM ft_campaign('xbrtree', '$fw', '$op', '$target', '$method', $FAULT_CAP)")
    what="xbrtree/$fw $op $method, fault at $target"
    tap_unlike "$out" 'FAIL|ERROR' "$what: clean errors and correct answers"
    tap_like "$out" '\|(usable|recovered)\|' "$what: faults fired ($(echo "$out" | head -1 | cut -d'|' -f1) writes)"
    echo "$out" | sed 's/^/#   /'
done

for ix in $(qv -c "SELECT name FROM festival.index"); do
    qv -c "SELECT festival.drop_index('$ix')" >/dev/null
done
psql -X -q -d postgres -c "DROP DATABASE festival_faults_xbr" >/dev/null 2>&1
tap_done
