#!/usr/bin/env bash
# The grid files' sub-directory splits, merges and root pages (issue 23): kill -9
# at the page writes of twelve clustered inserts into a GFFM (gridfile) and
# an LB-Grid (lbgrid) of 150 points whose pages are filled to 30 % (a
# bucket of 12 points or 8 records, a directory page of 5 regions; pages at
# half of that merge), so that
# the inserts split buckets, sub-directories and root pages (the writes the
# two-level grid file adds: the root pages, through gf_root_replace).  After
# each kill: every acknowledged insert is found and nothing else but the one
# the kill interrupted; the index takes changes (after a clean check() when
# it opened suspect, or a build when check() finds errors: a write-through
# GFFM killed in the middle of its writes may be suspect, an LB-Grid
# restores itself from its log pages); its answers are brute force's and
# check() is clean.  Then the same at the page writes of deleting those
# twelve points again, which merges buckets, sub-directories and root pages
# (each union written on a page of its own, so that the page above names it
# only once it is whole).  CI kills at 6 writes spread over each stream;
# CRASH_SPLIT_ALL=1 at every write.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/faults.bash"

fresh_database festival_crash_grid_split
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (the trials kill a backend)"
fi
faults_setup
export CRASH_OPTIONS='"extent": [-1, -1, 1001, 1001], "max_fill": 30, "merge_fill": 50'

# the writes of the twelve inserts, and that they split sub-directories
declare -A writes
for st in gridfile lbgrid; do
    writes[$st]=$(q -c "SET client_min_messages = error" -c "
        SELECT ft_measure('cm_$st', '$st', '{\"framework\": \"none\", \"page_size\": 1024, $CRASH_OPTIONS}',
                          'insert', 'write', 150, 'insert')")
done
positions() {   # positions <writes>: every write, or 6 spread over them
    if [ "${CRASH_SPLIT_ALL:-0}" = 1 ]; then seq 0 $(($1 - 1)); else
        for k in 0 1 2 3 4 5; do echo $(( (k * ($1 - 1)) / 5 )); done | sort -nu; fi
}
# deletes: one per statement, acknowledged in the source table with it
q >/dev/null <<'SQL'
CREATE FUNCTION cg_delete(ix text, id bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM festival.delete(ix, id, ft_cpt(id));
    EXECUTE format('DELETE FROM %I WHERE id = $1', ix || '_src') USING id;
END $$;
-- ix with 150 points and the twelve clustered ones: the writes of deleting those
CREATE FUNCTION cg_delete_writes(ix text, structure text, options jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    before bigint;
BEGIN
    PERFORM ft_setup(ix, structure, options, 150, 'insert');
    PERFORM ft_insert(ix, 150 + k) FROM generate_series(1, 12) k;
    before := (festival.fault_status(ix) ->> 'write')::bigint;
    PERFORM cg_delete(ix, 150 + k) FROM generate_series(1, 12) k;
    RETURN (festival.fault_status(ix) ->> 'write')::bigint - before;
END $$;
SQL
declare -A dwrites
for st in gridfile lbgrid; do
    dwrites[$st]=$(q -c "SET client_min_messages = error" -c "
        SELECT cg_delete_writes('dm_$st', '$st', '{\"framework\": \"none\", \"page_size\": 1024, $CRASH_OPTIONS}')")
done
n=0
for st in gridfile lbgrid; do
    n=$((n + $(positions "${writes[$st]}" | wc -l) * 4 + $(positions "${dwrites[$st]}" | wc -l) * 5))
done
tap_plan $((4 + n))

# sub-directories and root pages split within the twelve inserts
for st in gridfile lbgrid; do
    out=$(q -c "SET client_min_messages = error" -c "
        SELECT ft_setup('cs_$st', '$st', '{\"framework\": \"none\", \"page_size\": 1024, $CRASH_OPTIONS}', 150, 'insert');
        CREATE TEMP TABLE cs_before AS SELECT (festival.stats('cs_$st')->'totals'->>'splits_internal')::int AS s,
            festival.stats('cs_$st')->'config'->'derived'->>'root_pages' AS r;
        SELECT ft_insert('cs_$st', 150 + k) FROM generate_series(1, 12) k;
        SELECT ((festival.stats('cs_$st')->'totals'->>'splits_internal')::int > s)::text || ' '
            || (festival.stats('cs_$st')->'config'->'derived'->>'root_pages' <> r)::text FROM cs_before" | tail -1)
    tap_is "$out" "true true" "$st: the twelve inserts (${writes[$st]} page writes) split sub-directories and root pages"
done

# the deletes merge buckets and sub-directories, and free pages
for st in gridfile lbgrid; do
    out=$(q -c "SET client_min_messages = error" -c "
        SELECT ft_setup('mg_$st', '$st', '{\"framework\": \"none\", \"page_size\": 1024, $CRASH_OPTIONS}', 150, 'insert');
        SELECT count(ft_insert('mg_$st', 150 + k)) FROM generate_series(1, 12) k;
        CREATE TEMP TABLE mg_before AS
        SELECT (festival.stats('mg_$st')->'config'->'derived'->>'root_sub_directories')::int AS subdirs,
               (festival.stats('mg_$st')->'totals'->>'nodes_freed')::int AS freed;
        SELECT count(cg_delete('mg_$st', 150 + k)) FROM generate_series(1, 12) k;
        SELECT ((festival.stats('mg_$st')->'config'->'derived'->>'root_sub_directories')::int < subdirs
                AND (festival.stats('mg_$st')->'totals'->>'nodes_freed')::int > freed)::text FROM mg_before" | tail -1)
    tap_is "$out" "true" "$st: deleting the twelve points (${dwrites[$st]} page writes) merges sub-directories and frees pages"
done

for st in gridfile lbgrid; do
    for pos in $(positions "${writes[$st]}"); do
        ix="ck_${st}_$pos"
        crash_trial "$ix" "$st" none insert "$pos" >/dev/null
        wait_for_server
        out=$(crash_verdict "$ix")
        tap_like "$out" '^missing=0 extra=[01]$' "$st, kill -9 at write $pos of ${writes[$st]}: every acknowledged insert is present"
        tap_like "$out" '^accepted=true$' "$st, kill -9 at write $pos: the index takes changes (after check/build when damaged)"
        tap_like "$out" '^mismatches=0$' "$st, kill -9 at write $pos: answers equal brute force"
        tap_like "$out" '^final_check_errors=0$' "$st, kill -9 at write $pos: check() is clean"
    done
done

for st in gridfile lbgrid; do
    for pos in $(positions "${dwrites[$st]}"); do
        ix="cd_${st}_$pos"
        q -c "SET client_min_messages = error" -c "
            SELECT ft_setup('$ix', '$st', '{\"framework\": \"none\", \"page_size\": 1024, $CRASH_OPTIONS}', 150, 'insert');
            SELECT count(ft_insert('$ix', 150 + k)) FROM generate_series(1, 12) k" >/dev/null
        acked=$({
            echo "SELECT festival.inject_fault('$ix', 'write', $pos, 'crash');"
            for k in $(seq 1 12); do echo "SELECT 'ack' FROM cg_delete('$ix', $((150 + k)));"; done
        } | psql -X -qAt -v ON_ERROR_STOP=1 2>/dev/null | grep -c '^ack$')
        wait_for_server
        # only the delete the kill interrupted may have happened
        lost=$(q -c "SET client_min_messages = error" -c "
            SELECT count(*) FROM ${ix}_src s
            WHERE s.id <> $((150 + acked + 1))
              AND s.id NOT IN (SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000)))")
        tap_is "$lost" "0" "$st, kill -9 at write $pos of ${dwrites[$st]} of the deletes: no entry lost but the one being deleted"
        out=$(crash_verdict "$ix")
        tap_like "$out" '^missing=[01] extra=0$' "$st, deletes killed at write $pos: every acknowledged delete is gone"
        tap_like "$out" '^accepted=true$' "$st, deletes killed at write $pos: the index takes changes (after check/build when damaged)"
        tap_like "$out" '^mismatches=0$' "$st, deletes killed at write $pos: answers equal brute force"
        tap_like "$out" '^final_check_errors=0$' "$st, deletes killed at write $pos: check() is clean"
    done
done
