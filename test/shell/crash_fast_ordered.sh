#!/usr/bin/env bash
# FAST over structures whose nodes are ordered (the xBR+-tree, the Hilbert
# R-tree) logs a node that gained or lost one entry as one INSERT or DELETE
# item, which moves the later entries (nodestore/fast.c, log payload
# format 2, log/log.h).  A backend killed (kill -9) in the middle of a
# stream of inserts leaves a log of such items; after the restart their
# replay must rebuild exactly the acknowledged index.
#
# Each ordered case: an index over 2,000 points, built and closed; a victim
# session deletes objects 1..60 and puts them back (DELETE and INSERT items
# in the leaves, one statement each with the source table), inserts 100
# more and is killed in the middle of 200 further inserts.  Before the
# index is opened again the log is read here (its record layout, log.h):
# it must hold INSERT and DELETE items (without them the same build logs
# half a leaf of SET items per insert).  Then recovery_checks (the log
# replayed, every acknowledged object there exactly once, check() clean)
# and 200 more inserts answered as brute force.
#   xbr_plain   xBR+-tree, default FAST options (nothing flushed: the log
#               restores every modification since the build)
#   xbr_flush   xBR+-tree, buffer_size 4096: units written all the time,
#               replay starts from pages that hold part of the items
#   hil_plain   Hilbert R-tree, default options
#
# A fault: the log write of an insert into an xBR+-tree leaf is torn
# (festival.inject_fault): the statement fails, the backend is killed
# afterwards, and replay drops the torn group and keeps the rest.
#
# An item of an unknown kind in a sealed record is corruption: the first
# use fails with data_corrupted (XX001).
#
# A log of payload format 1 (before INSERT and DELETE existed) still
# replays: an R-tree under FAST (its nodes are sets: positional items only)
# is killed the same way, its log header is set back to format 1 (with its
# CRC), and the restart replays it and raises the header to format 2.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_ordered 83 with_device

# log_item_kinds <log file>: the MOD items of the log by kind (40-byte
# record headers from byte 512, 8-aligned; type 4 MOD; items of
# payload/count bytes, the kind at byte 4 of each): "set=a truncate=b
# insert=c delete=d other=e records=n flushes=f" (f: FLUSH records, type 6)
log_item_kinds() {
    python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
kinds = [0] * 5
off, records, flushes = 512, 0, 0
while off + 40 <= len(data):
    magic, length, _lsn, _crc, rtype, _fl, _lv, _pg, count, _r = struct.unpack_from("<IIQIBBHQII", data, off)
    if magic != 0x43455246 or length < 40 or off + length > len(data):
        break
    records += 1
    flushes += rtype == 6
    if rtype == 4 and count > 0:
        item = (length - 40) // count
        for i in range(count):
            kinds[min(data[off + 40 + i * item + 4], 4)] += 1
    off += (length + 7) // 8 * 8
print("set=%d truncate=%d insert=%d delete=%d other=%d records=%d flushes=%d" % (*kinds, records, flushes))
PY
}

# log_header_version <log file> [new version]: the header's writer_version
# (byte 40); with a new version, write it and the header CRC (CRC32C of
# bytes [0, 44) with the crc field, bytes 32-35, zero).
log_header_version() {
    PYTHONPATH="$(dirname "$0")/lib" python3 - "$@" <<'PY'
import struct, sys
from crc32c import crc32c
path = sys.argv[1]
with open(path, "r+b") as f:
    head = bytearray(f.read(512))
    if len(sys.argv) > 2:
        struct.pack_into("<I", head, 40, int(sys.argv[2]))
        struct.pack_into("<I", head, 32, 0)
        struct.pack_into("<I", head, 32, crc32c(bytes(head[:44])))
        f.seek(0)
        f.write(head)
    print(struct.unpack_from("<I", head, 40)[0])
PY
}

# log_set_first_kind <log file> <kind>: the kind of the first INSERT item
# of the log set to <kind> and its record's CRC (CRC32C of the record, its
# length bytes, with the crc field, bytes 16-19, zero) made again; prints
# "sealed"
log_set_first_kind() {
    PYTHONPATH="$(dirname "$0")/lib" python3 - "$@" <<'PY'
import struct, sys
from crc32c import crc32c
path, kind = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, "rb").read())
off = 512
while off + 40 <= len(data):
    magic, length, _lsn, _crc, rtype, _fl, _lv, _pg, count, _r = struct.unpack_from("<IIQIBBHQII", data, off)
    if magic != 0x43455246 or length < 40:
        break
    if rtype == 4 and count > 0:
        item = (length - 40) // count
        hit = [i for i in range(count) if data[off + 40 + i * item + 4] == 2]
        if hit:
            data[off + 40 + hit[0] * item + 4] = kind
            struct.pack_into("<I", data, off + 16, 0)
            struct.pack_into("<I", data, off + 16, crc32c(bytes(data[off:off + length])))
            open(path, "r+b").write(data)
            print("sealed")
            break
    off += (length + 7) // 8 * 8
PY
}

# after_restart_work <index>: 200 more inserts in a new session, answers
# as brute force (two assertions)
after_restart_work() {
    local ix=$1 out
    out=$(q -c "WITH s AS (INSERT INTO ${ix}_src SELECT i, pt(i) FROM generate_series(3001, 3200) i RETURNING id, geom)
                SELECT 'inserted=' || count(*) FILTER (WHERE festival.insert('$ix', id, geom)) FROM s" \
            -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')")
    tap_like "$out" '^inserted=200$' "$ix: 200 more inserts after the restart"
    tap_like "$out" '^mismatches=0$' "$ix: window queries give what brute force gives"
}

# ordered_case <index> <structure> <options json> <all restored: 1, or 0
# when units are flushed (the log must say so)>
ordered_case() {
    local ix=$1 all=$4 i acks=0 kinds
    crash_index "$ix" "$3" 2000 "$2"
    ACKED=2000
    victim_start "$tmp/$ix.err"
    for i in $(seq 1 60); do
        [ "$(victim_ask "$(delete_sql "$ix" "$i")")" = t ] && acks=$((acks + 1))
        [ "$(victim_ask "$(insert_sql "$ix" "$i")")" = t ] && acks=$((acks + 1))
    done
    tap_is "$acks" 120 "$ix: the victim deleted objects 1..60 and put them back (120 acknowledgements)"
    victim_insert "$ix" 2001 2100
    tap_is "$INSERT_ACKS" 100 "$ix: the victim acknowledged 100 inserts"
    victim_kill_midstream "$ix" 2101 200 100
    tap_ok "$([ "$BURST_ACKED" -lt 200 ]; echo $?)" \
        "$ix: its backend was killed in the middle of 200 inserts ($BURST_ACKED acknowledged)"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"
    kinds=$(log_item_kinds "$(index_file "$ix").log")
    echo "# $ix log: $kinds"
    tap_like "$kinds" ' insert=[1-9][0-9]* ' "$ix: the log holds INSERT items"
    tap_like "$kinds" ' delete=[1-9][0-9]* other=0 ' "$ix: and DELETE items, and no unknown kind"
    recovery_checks "$ix"
    if [ "$all" = 0 ]; then
        tap_unlike "$kinds" ' flushes=0$' "$ix: flushing units were written before the kill"
    else
        tap_ok "$([ "${RESTORED:-0}" -ge $((ACKED - 2000 + 120)) ]; echo $?)" \
            "$ix: the log restored every acknowledged change ($RESTORED modifications, $((ACKED - 2000 + 120)) acknowledged)"
    fi
    after_restart_work "$ix"
}

ordered_case xbr_plain xbrtree '{"framework": "fast", "page_size": 1024}' 1
ordered_case xbr_flush xbrtree '{"framework": "fast", "page_size": 1024, "buffer_size": 4096, "flushing_unit": 2}' 0
ordered_case hil_plain hilbert '{"framework": "fast", "page_size": 1024}' 1

# a fault (festival.inject_fault): the log write of an insert into an
# xBR+-tree leaf (its INSERT item) is torn, the statement fails; the backend
# is then killed between statements; replay drops the torn group
ix=xbr_torn
crash_index "$ix" '{"framework": "fast", "page_size": 1024}' 2000 xbrtree
ACKED=2000
victim_start "$tmp/$ix.err"
victim_ask "SET festival.log_sync = operation" >/dev/null
victim_insert "$ix" 2001 2050
tap_is "$INSERT_ACKS" 50 "$ix: the victim acknowledged 50 inserts"
victim_ask "SELECT festival.inject_fault('$ix', 'log_write', 0, 'torn')" >/dev/null
tap_is "$(victim_ask "$(insert_sql "$ix" 2051)")" "" "$ix: the insert whose log write tears is not acknowledged"
tap_like "$(cat "$tmp/$ix.err")" 'ERROR: .*log' "$ix: it failed with an error about the log"
victim_kill
wait_for_server
tap_ok $? "$ix: the server is back after the crash restart"
tap_like "$(log_item_kinds "$(index_file "$ix").log")" ' insert=[1-9][0-9]* ' "$ix: the log holds INSERT items"
recovery_checks "$ix"
after_restart_work "$ix"

# an item of an unknown kind, sealed with a valid CRC: the first use
# fails with data_corrupted (XX001) naming the malformed record
ix=xbr_badkind
crash_index "$ix" '{"framework": "fast", "page_size": 1024}' 2000 xbrtree
ACKED=2000
victim_start "$tmp/$ix.err"
victim_insert "$ix" 2001 2020
victim_kill
wait_for_server
tap_is "$(log_set_first_kind "$(index_file "$ix").log" 7)" "sealed" "$ix: the first INSERT item of its log made kind 7, the record's CRC recomputed"
out=$(q -c "SET client_min_messages = error" -c "\set VERBOSITY verbose" \
        -c "SELECT count(*) FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000))" 2>&1)
tap_like "$out" 'ERROR:  XX001: log of index "xbr_badkind" holds a malformed record' \
    "$ix: the first use fails with data_corrupted, naming the malformed record"

# a log of payload format 1
ix=rt_format1
crash_index "$ix" '{"framework": "fast", "page_size": 1024}' 2000
ACKED=2000
victim_start "$tmp/$ix.err"
victim_insert "$ix" 2001 2100
tap_is "$INSERT_ACKS" 100 "$ix: the victim acknowledged 100 inserts"
victim_kill_midstream "$ix" 2101 200 100
wait_for_server
tap_ok $? "$ix: the server is back after the crash restart"
log="$(index_file "$ix").log"
tap_like "$(log_item_kinds "$log")" ' insert=0 delete=0 other=0 ' \
    "$ix: an R-tree's log holds positional items only"
tap_is "$(log_header_version "$log" 1)" 1 "$ix: its header set back to payload format 1"
recovery_checks "$ix"
tap_is "$(log_header_version "$log")" 2 "$ix: opened, the log says payload format 2"
after_restart_work "$ix"

crash_end festival_crash_ordered
