#!/usr/bin/env bash
# The redo log of a FAST or eFIND index damaged after a crash (kill -9 of
# the backend, then the file changed before the index is opened again).
#
# A torn tail (the END record and the last bytes of the records before it
# cut off, as a crash in the middle of a write leaves it) ends the log: the incomplete last modification is
# dropped, opening succeeds, the index holds every acknowledged object but
# possibly the last one and its structure is sound.  New records follow
# the last good one: a second crash loses nothing acknowledged since.
# Variants: default options (the log ends with an insert) and buffer_size
# 16384 (the log mostly ends with a flush, whose pages are then already
# written while the log does not say so).
#
# A torn flush record, made on purpose: a leaf loses two entries, its unit
# is flushed (festival.flush_unit), the crash tears the record of that
# flush.  The pages are written but the log does not say so (a crash
# between the sync of the index file and the log write leaves this state,
# and so does an OS crash that loses the unsynced end of the log); replay
# must recognize them by the checksums logged before the writes and not
# apply their changes again (FAST's changes by position do not fit a leaf
# that shrank).  Variant: the unit's pages are put back as they were
# before the flush, as if the crash came before the writes: replay must
# then apply the changes.
#
# A byte flipped in the middle of the log, with valid records after it, is
# corruption: opening fails with ERRCODE_DATA_CORRUPTED (XX001) naming the
# log and the byte offset, the backend stays up, and the index can still
# be dropped (its files go with it).  So is a byte flipped in the last
# group, which the log's END record follows (the flip campaign once found
# it dropped as a torn tail: an acknowledged insert lost in silence).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_log_damage 114 with_device
whole="ST_MakeEnvelope(-10, -10, 2000, 2000)"

# torn_tail <index> <options>
torn_tail() {
    local ix=$1 log out before
    crash_index "$ix" "$2" 2000
    ACKED=2000
    victim_start "$tmp/$ix.err"
    victim_insert "$ix" 2001 2200
    victim_kill_midstream "$ix" 2201 200 100
    tap_ok "$([ "$INSERT_ACKS" -eq 200 ] && [ "$BURST_ACKED" -lt 200 ]; echo $?)" \
        "$ix: the victim acknowledged $((ACKED - 2000)) inserts and was killed in the middle of more"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"

    log="$(index_file "$ix").log"
    before=$(stat -c %s "$log")
    # a torn write: its END record (40 bytes, log.h) and the last 5 bytes
    # of its records never landed
    truncate -s -45 "$log"
    tap_is "$(stat -c %s "$log")" "$((before - 45))" "$ix: 45 bytes cut off the end of its log"

    # a second victim opens it (replaying the log up to the torn record),
    # inserts more and is killed too: its records follow the last good one
    victim_start "$tmp/$ix.2.err"
    out=$(victim_ask "CREATE TEMP TABLE got AS SELECT id FROM festival.query('$ix', $whole)")
    out=$(cat "$tmp/$ix.2.err")
    tap_like "$out" "^NOTICE:  index \"$ix\" was not closed cleanly; its log restored [1-9][0-9]* modifications$" \
        "$ix: opening replays what precedes the torn record"
    tap_unlike "$out" 'WARNING|ERROR' "$ix: and neither warns nor fails"
    out=$(victim_ask "SELECT count(*) FROM ${ix}_src s WHERE id < $ACKED AND NOT EXISTS (SELECT FROM got g WHERE g.id = s.id)")
    tap_is "$out" "0" "$ix: every acknowledged object but the last is in the index"
    out=$(victim_ask "SELECT 'extra=' || coalesce(string_agg(id::text, ','), '') FROM (SELECT id FROM got EXCEPT SELECT id FROM ${ix}_src) e")
    tap_like "$out" "^extra=($((ACKED + 1)))?$" "$ix: and nothing else but the insert the kill interrupted"
    out=$(victim_ask "SELECT count(*) - count(DISTINCT id) FROM got")
    tap_is "$out" "0" "$ix: no object twice"
    # the objects the torn record may have held, back in the index
    out=$(victim_ask "SELECT count(festival.insert('$ix', id, geom, if_absent => true)) FROM ${ix}_src WHERE id >= $ACKED")
    ACKED=$(qv -c "SELECT max(id) FROM ${ix}_src")
    victim_insert "$ix" $((ACKED + 1)) $((ACKED + 100))
    tap_is "$INSERT_ACKS" "100" "$ix: the second victim acknowledged 100 more inserts"
    victim_kill_midstream "$ix" $((ACKED + 1)) 100 50
    wait_for_server
    tap_ok $? "$ix: the server is back after a second crash restart"

    out=$(q -c "CREATE TEMP TABLE got AS SELECT id FROM festival.query('$ix', $whole)" \
            -c "SELECT 'missing=' || count(*) FROM ${ix}_src s WHERE NOT EXISTS (SELECT FROM got g WHERE g.id = s.id)" \
            -c "SELECT 'duplicates=' || count(*) - count(DISTINCT id) FROM got" \
            -c "SELECT 'check: ' || severity || ' ' || coalesce(page::text, '-') || ' ' || message FROM festival.check('$ix')
                WHERE message NOT LIKE 'the index holds % entries but source table %'
                  AND message NOT LIKE 'entry $((ACKED + 1)) with MBR % is in the index but not in source table %'")
    # (the insert the kill interrupted may be in the index: its group was
    # logged, its transaction never committed)
    tap_like "$out" "^NOTICE:  index \"$ix\" was not closed cleanly; its log restored [1-9][0-9]* modifications$" \
        "$ix: the second crash is recovered too"
    tap_unlike "$out" 'WARNING|ERROR' "$ix: without a warning"
    tap_like "$out" '^missing=0$' "$ix: every object of the source table is in the index"
    tap_like "$out" '^duplicates=0$' "$ix: no object twice"
    tap_unlike "$out" '^check: ' "$ix: check() finds no structural problem"
}

# torn_flush <index> <options>: the last group of the log records a
# flush, and the crash tore it: the flushed pages are written (and synced)
# but the log does not say so, so replay applies their buffered changes
# once more, over the versions already written.  That must give the same
# nodes.  The flushed leaf lost two entries (its changes end shorter than
# they began), the case where changes recorded by position no longer fit.
torn_flush() {
    local ix=$1 log out page ids flushed=1 k unit file p
    local unwritten=${3:-}
    crash_index "$ix" "$2" 2000
    file=$(index_file "$ix")
    victim_start "$tmp/$ix.err"
    page=$(victim_ask "SELECT n.page FROM generate_series(2, (festival.stats('$ix')->>'pages')::int - 1) p,
                       festival.node('$ix', p) n WHERE n.level = 0 GROUP BY 1 HAVING count(*) >= 16 ORDER BY 1 LIMIT 1")
    ids=$(victim_ask "SELECT string_agg(ref::text, ',') FROM (SELECT ref FROM festival.node('$ix', $page) ORDER BY position LIMIT 2) r")
    out=$(victim_ask "WITH d AS (DELETE FROM ${ix}_src WHERE id IN ($ids) RETURNING id, geom)
                      SELECT count(*) FILTER (WHERE festival.delete('$ix', id, geom)) FROM d")
    cp "$file" "$tmp/$ix.before"
    for k in $(seq 1 20); do
        unit=$(victim_ask "SELECT string_agg(page::text, ',') FROM festival.flush_unit('$ix')")
        case ",$unit," in *",$page,"*) flushed=0; break ;; esac
    done
    victim_kill
    tap_ok "$([ "$out" = "2" ] && [ "$flushed" -eq 0 ]; echo $?)" \
        "$ix: two entries of leaf ${page:-?} deleted, then its unit flushed (pages $unit), then killed"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"

    if [ -n "$unwritten" ]; then
        # the unit's pages as they were before the flush (zeros where the
        # file was shorter): the writes never happened
        for p in ${unit//,/ }; do
            if [ $(((p + 1) * 1024)) -le "$(stat -c %s "$tmp/$ix.before")" ]; then
                dd if="$tmp/$ix.before" of="$file" bs=1024 skip="$p" seek="$p" count=1 conv=notrunc status=none
            else
                dd if=/dev/zero of="$file" bs=1024 seek="$p" count=1 conv=notrunc status=none
            fi
        done
    fi
    log="$file.log"
    # a torn write of the flush's group: its END record (40 bytes, log.h)
    # never landed, nor the last 5 bytes of the group
    truncate -s -45 "$log"
    out=$(q -c "CREATE TEMP TABLE got AS SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
            -c "SELECT 'differences=' || count(*) FROM ((SELECT id FROM got EXCEPT ALL SELECT id FROM ${ix}_src)
                UNION ALL (SELECT id FROM ${ix}_src EXCEPT ALL SELECT id FROM got)) d" \
            -c "SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; '), '') FROM festival.check('$ix')")
    tap_like "$out" "^NOTICE:  index \"$ix\" was not closed cleanly; its log restored [1-9][0-9]* modifications$" \
        "$ix: opening after the flush record was torn replays the log"
    tap_unlike "$out" 'WARNING|ERROR' "$ix: and neither warns nor fails"
    tap_like "$out" '^differences=0$' "$ix: the index holds exactly the objects of the source table"
    tap_like "$out" '^check=$' "$ix: festival.check() finds nothing"
}

# flipped_byte <index> <options>
flipped_byte() {
    local ix=$1 file log out offsets n off pid
    crash_index "$ix" "$2" 2000
    ACKED=2000
    victim_start "$tmp/$ix.err"
    victim_insert "$ix" 2001 2300
    victim_kill
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"

    file=$(index_file "$ix")
    log="$file.log"
    # the sequence number of the middle record: its group and many after it stay valid
    mapfile -t offsets < <(log_record_offsets "$log")
    n=${#offsets[@]}
    off=${offsets[$((n / 2))]}
    flip_byte "$log" $((off + 8))
    tap_ok "$([ "$n" -gt 100 ]; echo $?)" "$ix: a byte flipped in record $((n / 2)) of $n (at byte $off)"

    out=$(psql -X -qAt -v VERBOSITY=verbose \
            -c "SELECT 'pid=' || pg_backend_pid()" \
            -c "SELECT count(*) FROM festival.query('$ix', $whole)" \
            -c "SELECT count(*) FROM festival.query('$ix', $whole)" \
            -c "SELECT 'pid=' || pg_backend_pid()" \
            -c "SELECT 'still working=' || count(*) FROM ${ix}_src" \
            -c "SELECT 'drop=' || festival.drop_index('$ix')::text" 2>&1)
    tap_like "$out" "^ERROR:  XX001: log of index \"$ix\" is corrupted at byte $off$" \
        "$ix: opening fails with SQLSTATE XX001 naming the log and the byte offset"
    tap_like "$out" "^DETAIL:  A damaged record at byte $off is followed by valid records" \
        "$ix: the detail says valid records follow the damage"
    tap_is "$(printf '%s\n' "$out" | grep -c '^ERROR:  XX001: log of index')" "2" \
        "$ix: a second attempt in the same session fails the same way"
    tap_unlike "$out" 'server closed the connection|connection to server was lost|PANIC|FATAL' \
        "$ix: the backend survives"
    tap_is "$(printf '%s\n' "$out" | grep '^pid=' | uniq | wc -l)" "1" "$ix: the session goes on in the same backend"
    tap_like "$out" '^still working=2300$' "$ix: and runs other statements"
    tap_like "$out" '^drop=true$' "$ix: the index can be dropped (its files removed at commit)"
    tap_is "$(qv -c "SELECT count(*) FROM festival.index WHERE name = '$ix'")" "0" "$ix: its catalog row is gone"
    tap_ok "$([ ! -e "$file" ] && [ ! -e "$log" ]; echo $?)" "$ix: its file and its log are removed"
}

# flipped_last <index> <options>: a byte flipped in the last group of the
# log, which only the END record follows: corruption too, never a torn
# tail that would drop an acknowledged change in silence
flipped_last() {
    local ix=$1 file log out offsets n off
    crash_index "$ix" "$2" 2000
    victim_start "$tmp/$ix.err"
    victim_insert "$ix" 2001 2050
    victim_kill
    wait_for_server
    file=$(index_file "$ix")
    log="$file.log"
    mapfile -t offsets < <(log_record_offsets "$log")
    n=${#offsets[@]}
    off=${offsets[$((n - 2))]}
    tap_is "$(od -An -tu1 -j $((${offsets[$((n - 1))]} + 20)) -N1 "$log" | tr -d ' ')" "9" \
        "$ix: the log ends with an END record after the last group"
    flip_byte "$log" $((off + 8))
    out=$(psql -X -qAt -v VERBOSITY=verbose -c "SELECT count(*) FROM festival.query('$ix', $whole)" \
            -c "SELECT 'drop=' || festival.drop_index('$ix')::text" 2>&1)
    tap_like "$out" "^ERROR:  XX001: log of index \"$ix\" is corrupted at byte $off$" \
        "$ix: a byte flipped in the last record of the last group is corruption (XX001 naming the byte)"
    tap_like "$out" "^DETAIL:  A damaged record at byte $off is followed by valid records" \
        "$ix: because the END record follows it"
    tap_like "$out" '^drop=true$' "$ix: the index can be dropped"
}

for fw in fast efind; do
    torn_tail "${fw}_torn" "{\"framework\": \"$fw\", \"page_size\": 1024}"
    torn_tail "${fw}_torn_flush" "{\"framework\": \"$fw\", \"page_size\": 1024, \"buffer_size\": 16384}"
    torn_flush "${fw}_torn_shrunk" "{\"framework\": \"$fw\", \"page_size\": 1024}"
    torn_flush "${fw}_unwritten" "{\"framework\": \"$fw\", \"page_size\": 1024}" unwritten
    flipped_byte "${fw}_flip" "{\"framework\": \"$fw\", \"page_size\": 1024}"
    flipped_last "${fw}_flip_last" "{\"framework\": \"$fw\", \"page_size\": 1024}"
done

crash_end festival_log_damage
