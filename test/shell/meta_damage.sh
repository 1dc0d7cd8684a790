#!/usr/bin/env bash
# One damaged meta copy never loses acknowledged data (issue 9, item 1).
#
# Every meta update writes the same state into both meta pages (a pair of
# generations, src/format/meta.h), so when one copy is damaged the other
# holds the latest state.  Scenario, for the write-through store (framework
# none), FAST and eFIND, with 4 kB pages: 1,000 points built and closed; one
# session makes 50 acknowledged inserts and its backend is killed (kill -9);
# one byte of meta page 0 or 1 is flipped; the next session then
#   - is warned that the meta page is damaged (the other copy is used),
#   - answers a window query over everything with every acknowledged object
#     (compared with the source table, which holds exactly the acknowledged
#     ones) and 17 windows as brute force does, without an error,
#   - replays the log exactly as without the damage (FAST/eFIND), or opens
#     the index suspect (write-through: the existing "not closed cleanly"
#     warning),
#   - gets the damaged copy reported by festival.check() (and nothing else);
# after festival.flush() the damaged copy is rewritten: check() is clean and
# the next session opens the index without a meta warning.  A closed (clean)
# index with one flipped copy behaves the same, without replay.
#
# Before the paired writes the older copy was used: eFIND/FAST opened an
# unclean index as clean and silently lost the 50 inserts, write-through
# failed with "outside its data pages" or lost entries.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_meta_damage 104 with_device
whole="ST_MakeEnvelope(-10, -10, 2000, 2000)"
PAGE=4096

# answers <index> <expected rows>: the first session after the damage
answers() {
    q -c "SELECT 'rows=' || count(*) FROM festival.query('$1', $whole)" \
      -c "SELECT 'missing=' || count(*) FROM $1_src s WHERE NOT EXISTS (SELECT FROM festival.query('$1', $whole) g WHERE g.id = s.id)" \
      -c "SELECT 'mismatches=' || brute_force_mismatches('$1', '$1_src')" \
      -c "SELECT 'check=' || coalesce(string_agg(severity || ': ' || coalesce(page::text, '-') || ': ' || message, '; '), '') FROM festival.check('$1')"
}

# repaired <index>: flush rewrites the damaged copy; check is then clean and
# the next session opens silently (four assertions)
repaired() {
    local ix=$1 out
    out=$(q -c "SELECT festival.flush('$ix')" -c "SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; '), '') FROM festival.check('$ix')")
    tap_unlike "$out" 'WARNING|ERROR' "$ix: festival.flush() succeeds"
    tap_like "$out" '^check=$' "$ix: after the flush festival.check() finds nothing"
    out=$(q -c "SELECT 'rows=' || count(*) FROM festival.query('$ix', $whole)" -c "SELECT festival.close('$ix')")
    tap_unlike "$out" 'WARNING|ERROR|NOTICE' "$ix: the next session opens it silently"
    tap_like "$out" "^rows=$2$" "$ix: and finds all $2 objects"
}

# crashed <framework> <meta page>
crashed() {
    local fw=$1 slot=$2 ix="${1}_crash_$2" out
    crash_index "$ix" "{\"framework\": \"$fw\", \"page_size\": $PAGE}" 1000
    ACKED=1000
    victim_start "$tmp/$ix.err"
    victim_insert "$ix" 1001 1050
    tap_is "$INSERT_ACKS" "50" "$ix: 50 inserts acknowledged"
    victim_kill
    wait_for_server
    flip_byte "$(index_file "$ix")" $((slot * PAGE + 1000))

    out=$(answers "$ix")
    tap_like "$out" "^WARNING:  meta page $slot of index \"$ix\" is damaged: " \
        "$ix: opening warns that meta page $slot is damaged"
    tap_unlike "$out" 'ERROR' "$ix: no error"
    tap_like "$out" '^rows=1050$' "$ix: a window over everything returns all 1,050 acknowledged objects"
    tap_like "$out" '^missing=0$' "$ix: every object of the source table is in the answer"
    tap_like "$out" '^mismatches=0$' "$ix: 17 windows answer as brute force does"
    if [ "$fw" = none ]; then
        tap_like "$out" "^WARNING:  index \"$ix\" was not closed cleanly$" \
            "$ix: write-through after the kill: opened suspect, as without the damage"
    else
        tap_like "$out" "^NOTICE:  index \"$ix\" was not closed cleanly; its log restored 50 modifications$" \
            "$ix: the log replays the 50 inserts, as without the damage"
    fi
    tap_like "$out" "^check=warning: $slot: meta page $slot is damaged \([^;]*\); the other copy holds the latest state[^;]*$" \
        "$ix: festival.check() reports the damaged copy and nothing else"
    repaired "$ix" 1050
}

# closed <framework> <meta page>: a cleanly closed index
closed() {
    local fw=$1 slot=$2 ix="${1}_closed_$2" out
    crash_index "$ix" "{\"framework\": \"$fw\", \"page_size\": $PAGE}" 1000
    flip_byte "$(index_file "$ix")" $((slot * PAGE + 1000))
    out=$(answers "$ix")
    tap_like "$out" "^WARNING:  meta page $slot of index \"$ix\" is damaged: " \
        "$ix: opening warns that meta page $slot is damaged"
    tap_unlike "$out" 'ERROR|not closed cleanly' "$ix: and nothing else"
    tap_like "$out" '^rows=1000$' "$ix: a window over everything returns all 1,000 objects"
    tap_like "$out" "^check=warning: $slot: meta page $slot is damaged \([^;]*\); the other copy holds the latest state[^;]*$" \
        "$ix: festival.check() reports the damaged copy and nothing else"
    repaired "$ix" 1000
}

for fw in none fast efind; do
    for slot in 1 0; do
        crashed "$fw" "$slot"
    done
done
for fw in none efind; do
    closed "$fw" 0
    closed "$fw" 1
done

crash_end festival_meta_damage
