#!/usr/bin/env bash
# LB-Grid (structure 'lbgrid', framework none) after kill -9: its log pages
# hold every acknowledged change, and the first use after the crash rebuilds
# the bucket table and the directory from them (lbgrid.c, lb_recover), so
# nothing acknowledged is lost and the index takes changes at once, without
# the check() a write-through index needs (docs/durability.md).
#
#   midstream  a victim session inserts one object per statement (source
#              table and index in one statement) and its backend is killed
#              with SIGKILL in the middle of a burst, as test/shell/
#              crash_fast_efind.sh does for FAST and eFIND;
#   split      the backend kills itself (festival.inject_fault ... 'crash')
#              at the i-th page write of an insert that splits a full
#              bucket (the insert found on an identical twin index), for
#              several i: before, between and after the compacted log
#              page, the sub-directory and the meta pages.
# Then: every acknowledged object is in the index exactly once, nothing
# else but the insert the kill interrupted, check() is clean, changes are
# accepted and answers equal brute force.
#
# Then, small, the crash and byte-flip campaigns (scripts/campaign-crash,
# campaign-flips) on lbgrid without a cache, on one device (the standing
# campaigns draw it with caches and tiers too).  Its fault campaign (ENOSPC, EIO and torn
# writes) is test/shell/faults.sh's (lib/faults.bash, FAULT_STRUCTURES).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"
source "$(dirname "$0")/lib/faults.bash"

SPLIT_POSITIONS=${SPLIT_POSITIONS:-"0 1 2 3"}
nsplit=$(echo $SPLIT_POSITIONS | wc -w)
crash_begin festival_lbgrid_crash $((14 + nsplit * 7 + 2)) with_device
faults_setup

# lb_first_use <index>: the first use after the crash restart
lb_first_use() {
    local ix=$1 out
    out=$(q -c "CREATE TEMP TABLE got AS SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
            -c "SELECT 'acked_in_source=' || count(*) FROM ${ix}_src WHERE id <= $ACKED" \
            -c "SELECT 'missing=' || count(*) FROM ${ix}_src s WHERE NOT EXISTS (SELECT FROM got g WHERE g.id = s.id)" \
            -c "SELECT 'extra=' || coalesce(string_agg(id::text, ','), '') FROM (SELECT id FROM got EXCEPT SELECT id FROM ${ix}_src) e" \
            -c "SELECT 'duplicates=' || count(*) - count(DISTINCT id) FROM got" \
            -c "SELECT 'reconciled=' || count(festival.delete('$ix', id, pt(id))) FROM (SELECT id FROM got EXCEPT SELECT id FROM ${ix}_src) e" \
            -c "SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; '), '') FROM festival.check('$ix')")
    tap_like "$out" "^NOTICE:  index \"$ix\" was not closed cleanly; its structure restored it from its log pages \([0-9]+ entries\)$" \
        "$ix: the first use says the log pages restored it"
    tap_unlike "$out" 'WARNING|ERROR' "$ix: and neither warns nor fails"
    tap_like "$out" "^acked_in_source=$ACKED$" "$ix: the source table holds all $ACKED acknowledged objects"
    tap_like "$out" '^missing=0$' "$ix: every acknowledged object is in the index"
    tap_like "$out" "^extra=($((ACKED + 1)))?$" "$ix: nothing else but the insert the kill interrupted"
    tap_like "$out" '^duplicates=0$' "$ix: no object is in the index twice"
    tap_like "$out" '^check=$' "$ix: festival.check() finds nothing"
}

# ---- midstream --------------------------------------------------------------
ix=lbk
q <<SQL >/dev/null
SET client_min_messages = warning;
CREATE TABLE ${ix}_src (id bigint PRIMARY KEY, geom geometry);
INSERT INTO ${ix}_src SELECT i, pt(i) FROM generate_series(1, 2000) i;
SELECT festival.create_index('$ix', 'lbgrid', 'crash', '{"page_size": 1024}', '${ix}_src');
SELECT festival.build('$ix');
SELECT festival.close('$ix');
SQL
ACKED=2000
victim_start "$tmp/$ix.err"
victim_insert "$ix" 2001 2100
tap_is "$INSERT_ACKS" "100" "$ix: the victim acknowledged 100 inserts"
victim_kill_midstream "$ix" 2101 200 60
tap_ok "$([ "$BURST_ACKED" -lt 200 ]; echo $?)" \
    "$ix: its backend was killed in the middle of 200 inserts ($BURST_ACKED acknowledged)"
wait_for_server
tap_ok $? "$ix: the server is back after the crash restart"
lb_first_use "$ix"
out=$(q -c "WITH s AS (INSERT INTO ${ix}_src SELECT i, pt(i) FROM generate_series(3001, 3100) i RETURNING id, geom)
            SELECT 'inserted=' || count(*) FILTER (WHERE festival.insert('$ix', id, geom)) FROM s" \
        -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')")
tap_unlike "$out" 'not closed cleanly|WARNING|ERROR' "$ix: the next session opens it silently"
tap_like "$out" '^inserted=100$' "$ix: 100 more inserts, no check needed"
tap_like "$out" '^mismatches=0$' "$ix: window queries give what brute force gives"

# ---- during a split -----------------------------------------------------------
# the insert that splits: the first clustered insert (ft_cpt) after 150
# scattered points that raises splits_leaf on a twin
q -c "SET client_min_messages = error" \
  -c "SELECT ft_setup('lbtwin', 'lbgrid', '{\"page_size\": 1024}', 150, 'insert')" >/dev/null
kstar=$(qv -c "CREATE FUNCTION lb_kstar() RETURNS int LANGUAGE plpgsql AS \$\$
                 DECLARE s0 int; BEGIN
                 FOR k IN 1..80 LOOP
                     s0 := (festival.stats('lbtwin')->'totals'->>'splits_leaf')::int;
                     PERFORM ft_insert('lbtwin', 150 + k);
                     IF (festival.stats('lbtwin')->'totals'->>'splits_leaf')::int > s0 THEN
                         RETURN k;
                     END IF;
                 END LOOP;
                 RETURN NULL; END \$\$" -c "SELECT lb_kstar()")
tap_ok "$([ -n "$kstar" ]; echo $?)" "a clustered insert splits a bucket of the twin (insert ${kstar:-none})"
echo "# the split happens at clustered insert ${kstar:-?}"
for pos in $SPLIT_POSITIONS; do
    ix=lbs_$pos
    q -c "SET client_min_messages = error" \
      -c "SELECT ft_setup('$ix', 'lbgrid', '{\"page_size\": 1024}', 150, 'insert')" \
      -c "SELECT count(ft_insert('$ix', 150 + k)) FROM generate_series(1, ${kstar:-1} - 1) k" >/dev/null
    before=$(qv -c "SELECT (festival.stats('$ix')->'totals'->>'splits_leaf')::int")
    acked=$(printf '%s\n' \
        "SELECT festival.inject_fault('$ix', 'write', $pos, 'crash');" \
        "SELECT 'ack' FROM ft_insert('$ix', 150 + ${kstar:-1});" \
        "SELECT 'ack' FROM ft_insert('$ix', 151 + ${kstar:-1});" |
        psql -X -qAt -v ON_ERROR_STOP=1 2>/dev/null | grep -c '^ack$')
    wait_for_server
    tap_ok $? "$ix: the server is back (kill at write $pos of the split, $acked acknowledged after it)"
    tap_is "$acked" 0 "$ix: the backend died during the split"
    restored_checks "$ix" "$pos"
done

# ---- the crash and flips campaigns on lbgrid (its fault campaign is in
# faults.sh, FAULT_STRUCTURES) ------------------------------------------
root="$(cd "$(dirname "$0")/../.." && pwd)"
for c in crash:4 flips:12; do
    out=$("$root/scripts/campaign-${c%%:*}" --no-setup --structures lbgrid --frameworks none --caches none --placements none \
          --trials "${c##*:}" --seed 3 2>&1)
    rc=$?
    tap_ok "$rc" "campaign-${c%%:*} on lbgrid: no failure ($(printf '%s\n' "$out" | grep '^total' | tr -s ' '))"
    [ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
done

crash_end festival_lbgrid_crash
