#!/usr/bin/env bash
# festival.write_through_per_access = on (FESTIval's accounting: a node the
# modification wrote before is read from the device again, a node written
# k times is written k times at the commit, the same image in the same
# place of the commit order) must fail and crash as the default does.
#
# Faults: ENOSPC, EIO or a torn write at every page write of twelve
# R*-tree inserts that overflow leaves (forced reinsertion rewrites the
# leaf and its parent, then each reinserted entry writes them again), and
# at a few writes of a one-at-a-time build: every trial ends with the
# device's error and an index that answers as brute force and takes
# changes, at once or after check()/build() (lib/faults.sql).
# Crashes: kill -9 at writes of those inserts, the repeated ones included:
# after the restart every acknowledged insert is present.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/faults.bash"

fresh_database festival_wtpa
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (crash trials kill a backend)"
fi
faults_setup
ON="SET festival.write_through_per_access = on"
CRASH_POSITIONS=${CRASH_POSITIONS:-"0 5 12 20 27 33"}
tap_plan $((3 + 3 * 2 + 2 + $(echo $CRASH_POSITIONS | wc -w) * 3))

# the inserts write more pages with the setting: the repeats are there to fail
w_off=$(q -c "SET client_min_messages = error" \
          -c "SELECT ft_measure('wt_m0', 'rstartree', '{\"framework\": \"none\", \"page_size\": 1024}', 'insert', 'write', 150, 'str')")
w_on=$(q -c "SET client_min_messages = error" -c "$ON" \
         -c "SELECT ft_measure('wt_m1', 'rstartree', '{\"framework\": \"none\", \"page_size\": 1024}', 'insert', 'write', 150, 'str')")
tap_like "$w_off" '^[0-9]+$' "the twelve inserts write $w_off pages by default"
tap_like "$w_on" '^[0-9]+$' "and $w_on pages with write_through_per_access"
tap_ok "$([ "${w_on:-0}" -gt "${w_off:-0}" ]; echo $?)" "so some pages are written more than once"

for e in ENOSPC EIO torn; do
    out=$(q -F'|' -c "SET client_min_messages = error" -c "$ON" \
            -c "SELECT writes, error, outcome, trials FROM ft_campaign('rstartree', 'none', 'insert', 'write', 'str', 0, 150, ARRAY['$e'])")
    tap_unlike "$out" 'FAIL|ERROR' "$e at every write of the inserts: clean errors and correct answers"
    tap_like "$out" "\|$e\|(usable|recovered)\|" "$e: faults fired ($(echo "$out" | head -1 | cut -d'|' -f1) writes)"
    echo "$out" | grep -E 'FAIL|ERROR' | sed 's/^/#   /'
done
out=$(q -F'|' -c "SET client_min_messages = error" -c "$ON" -c "SET festival.build_commit_rows = 1" \
        -c "SELECT writes, error, outcome, trials FROM ft_campaign('rstartree', 'none', 'build', 'write', 'str', 4)")
tap_unlike "$out" 'FAIL|ERROR' "faults during a one-at-a-time build: clean errors and correct answers"
tap_like "$out" '\|(usable|recovered)\|' "build: faults fired ($(echo "$out" | head -1 | cut -d'|' -f1) writes)"

export CRASH_PRELUDE="$ON;"
for pos in $CRASH_POSITIONS; do
    crash_trial "wt_cr_$pos" rstartree none insert "$pos" >/dev/null
    wait_for_server
    out=$(crash_verdict "wt_cr_$pos")
    tap_like "$out" '^missing=0 extra=[0-1]$' "kill -9 at write $pos of the inserts: every acknowledged insert is present"
    tap_like "$out" '^accepted=true$' "kill -9 at write $pos: the index takes changes again (after check/build when damaged)"
    tap_like "$out" '^mismatches=0$' "kill -9 at write $pos: answers equal brute force"
done

for ix in $(qv -c "SELECT name FROM festival.index"); do
    qv -c "SELECT festival.drop_index('$ix')" >/dev/null
done
psql -X -q -d postgres -c "DROP DATABASE festival_wtpa" >/dev/null 2>&1
tap_done
