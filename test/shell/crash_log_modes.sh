#!/usr/bin/env bash
# What a crash (kill -9 of the backend) leaves of a FAST or eFIND index
# whose log is disabled or not synced at every modification.
#
# log_size 0 disables the log: opening after the crash warns that the index
# was not closed cleanly, and the detail says that the log is disabled and
# the changes buffered since the last flush are lost.
#
# festival.log_sync = never (sync only at flush and close) and timer (sync
# at most every festival.log_sync_interval): the kill of a process leaves
# what it wrote in the kernel's page cache, so recovery still restores
# every modification written, that is every acknowledged one.  These two
# modes promise NOTHING after a crash of the operating system or a power
# loss: the unsynced tail of the log is lost then.  This test only shows
# that a process crash loses nothing and that the modes are in effect
# (the victim counts no sync, or fewer syncs than inserts).
#
# The setting applies to the statements that follow it: set while the
# index is already open in the session, it governs the next inserts.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_modes 58 with_device

# without_log <index> <framework>
without_log() {
    local ix=$1 out file
    crash_index "$ix" "{\"framework\": \"$2\", \"page_size\": 1024, \"log_size\": 0}" 2000
    ACKED=2000
    victim_start "$tmp/$ix.err"
    victim_insert "$ix" 2001 2300
    tap_is "$INSERT_ACKS" "300" "$ix: the victim acknowledged 300 inserts"
    victim_kill_midstream "$ix" 2301 200 100
    wait_for_server
    tap_ok $? "$ix: the server is back after its backend was killed"
    file=$(index_file "$ix")
    tap_ok "$([ -e "$file" ] && [ ! -e "$file.log" ]; echo $?)" "$ix: the index has no log file"

    out=$(q -c "SELECT count(*) FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000))")
    tap_like "$out" "^WARNING:  index \"$ix\" was not closed cleanly$" "$ix: opening warns that it was not closed cleanly"
    tap_like "$out" '^DETAIL:  .*its log is disabled \(log_size 0\): changes made since its last flush are lost' \
        "$ix: the detail says the log is disabled and buffered changes since the last flush are lost"
    tap_unlike "$out" 'restored' "$ix: nothing is restored"
}

# unsynced <index> <framework> <festival.log_sync> [festival.log_sync_interval]
unsynced() {
    local ix=$1 mode=$3 out syncs
    crash_index "$ix" "{\"framework\": \"$2\", \"page_size\": 1024}" 2000
    ACKED=2000
    victim_start "$tmp/$ix.err"
    victim_ask "SET festival.log_sync = $mode" >/dev/null
    [ -n "${4:-}" ] && victim_ask "SET festival.log_sync_interval = '$4'" >/dev/null
    victim_insert "$ix" 2001 2300
    tap_is "$INSERT_ACKS" "300" "$ix: the victim acknowledged 300 inserts with festival.log_sync = $mode"
    syncs=$(victim_ask "SELECT festival.stats('$ix')->'totals'->>'log_syncs'")
    if [ "$mode" = "never" ]; then
        tap_is "$syncs" "0" "$ix: and did not sync its log"
    else
        tap_ok "$([ "${syncs:-300}" -lt 10 ] 2>/dev/null; echo $?)" \
            "$ix: and synced its log $syncs times, not at every insert"
    fi
    victim_kill_midstream "$ix" 2301 200 100
    wait_for_server
    tap_ok $? "$ix: the server is back after its backend was killed"
    recovery_checks "$ix"
}

# set_while_open <index> <framework>: log_sync changed after the index was opened
set_while_open() {
    local ix=$1 before after
    crash_index "$ix" "{\"framework\": \"$2\", \"page_size\": 1024}" 2000
    ACKED=2000
    victim_start "$tmp/$ix.err"
    victim_ask "SET festival.log_sync = never" >/dev/null
    victim_insert "$ix" 2001 2010
    victim_ask "SET festival.log_sync = operation" >/dev/null
    before=$(victim_ask "SELECT festival.stats('$ix')->'totals'->>'log_syncs'")
    victim_insert "$ix" 2011 2060
    after=$(victim_ask "SELECT festival.stats('$ix')->'totals'->>'log_syncs'")
    victim_end
    tap_ok "$([ $((after - before)) -ge 50 ] 2>/dev/null; echo $?)" \
        "$ix: festival.log_sync = operation, set while the index is open, syncs each of the next 50 inserts ($before, then $after syncs)"
}

for fw in fast efind; do
    without_log "${fw}_nolog" "$fw"
    unsynced "${fw}_never" "$fw" never
    unsynced "${fw}_timer" "$fw" timer 1h
    set_while_open "${fw}_set" "$fw"
done

crash_end festival_crash_modes
