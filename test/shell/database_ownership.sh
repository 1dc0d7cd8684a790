#!/usr/bin/env bash
# One database owns an index's files (docs/durability.md): a pg_dump of a
# database restored into another, and a CREATE DATABASE ... TEMPLATE copy,
# carry festival.index rows that name the original's files; the copy
# refuses to open them (naming the owner, hinting adopt_index), its
# drop_index leaves them to the original (which keeps answering), and
# adopt_index gives it its own copy.  DROP DATABASE leaves its files, which
# festival.orphan_files() lists and festival.remove_orphan_file() removes;
# a file a live database owns is refused.  A backend killed (kill -9) inside
# adopt_index leaves a complete copy its catalog does not name, which
# orphan_files lists; so is an unfinished ".adopting" copy; a copy that
# fails changes nothing.  Before owners were recorded the
# restored database's drop_index deleted the original's file, and the
# TEMPLATE copy opened the original's file as its own.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

if [ "$(psql -X -qAt -d postgres -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (the test kills a backend)"
fi
tap_plan 39
work=$(mktemp -d)
cleanup() {
    # the copy's own files go with its index, not left as orphans
    psql -X -q -d own_copy -c "SELECT festival.drop_index('my_gf')" >/dev/null 2>&1
    for db in own_scratch own_restored own_copy own_keeper; do
        psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
    done
    rm -rf "$work"
}
trap cleanup EXIT

for db in own_restored own_copy own_keeper; do
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
done
fresh_database own_scratch
q <<'SQL' >/dev/null
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SELECT festival.create_device('own_dev', io => 'buffered');
CREATE TABLE pts AS SELECT i AS id, ST_MakePoint(i % 100, i / 100) AS geom FROM generate_series(1, 2000) i;
CREATE UNIQUE INDEX ON pts (id);
SELECT festival.create_index('my_gf', 'rtree', 'own_dev', '{"page_size": 1024}', 'pts');
SELECT festival.build('my_gf');
-- a tiered index: its pages on a second device, its map beside the file
SELECT festival.create_device('own_fast', io => 'buffered');
SELECT festival.create_index('my_tier', 'rtree', 'own_dev',
    '{"page_size": 1024, "fast_device": "own_fast", "placement": "all_fast"}', 'pts');
SELECT festival.build('my_tier');
SELECT festival.close('my_tier');
SQL
window="ST_MakeEnvelope(0, 0, 50, 10)"
expected=$(qv -c "SELECT count(*) FROM pts WHERE geom && $window")
count_in() { qv -d "$1" -c "SET client_min_messages = warning" -c "SELECT count(*) FROM festival.query('my_gf', $window)"; }
tap_is "$(count_in own_scratch)" "$expected" "the original answers as PostGIS does"
file=$(qv -c "SELECT festival.stats('my_gf')->>'file'")
tier_count_in() { qv -d "$1" -c "SET client_min_messages = warning" -c "SELECT count(*) FROM festival.query('my_tier', $window)"; }
tier_file=$(qv -c "SELECT file_name FROM festival.index WHERE name = 'my_tier'")
fast_dir=$(dirname "$file")/../own_fast
dir=$(dirname "$file")

# --- pg_dump and restore into another database ---
pg_dump -d own_scratch -f "$work/d.sql"
createdb own_restored
psql -X -q -d own_restored -f "$work/d.sql" >"$work/restore.log" 2>&1
tap_is "$(qv -d own_restored -c "SELECT file_name FROM festival.index WHERE name = 'my_gf'")" "$(basename "$file")" \
    "the restored catalog row names the original's file"
out=$(q -d own_restored -c "SELECT count(*) FROM festival.query('my_gf', $window)")
tap_like "$out" "belongs to database \"own_scratch\" \\(OID [0-9]+\\), not to database \"own_restored\"" \
    "the restored database refuses to open the original's file, naming both databases"
tap_like "$out" "festival.adopt_index\\('my_gf'\\)" "and its hint names adopt_index"
out=$(q -d own_restored -c "SELECT festival.insert('my_gf', 99999, 'POINT(1 1)')")
tap_like "$out" "belongs to database \"own_scratch\"" "nor does it change it"
out=$(q -d own_restored -c "SELECT festival.drop_index('my_gf')")
tap_like "$out" "left in place" "drop_index in the restored database leaves the original's file"
tap_like "$out" "^f$" "and returns false: no file is removed"
tap_ok "$([ -f "$file" ]; echo $?)" "the original's file is still there"
tap_is "$(count_in own_scratch)" "$expected" "and the original still answers"
q -d own_restored -c "SELECT festival.drop_index('my_tier')" >/dev/null
tap_ok "$([ -f "$fast_dir/$tier_file" ] && [ "$(tier_count_in own_scratch)" = "$expected" ]; echo $?)" \
    "so does a tiered original, its fast tier's file included"

# restore again and adopt
psql -X -q -d postgres -c "DROP DATABASE own_restored" && createdb own_restored
psql -X -q -d own_restored -f "$work/d.sql" >"$work/restore.log" 2>&1
# a backend killed inside adopt_index, after the copy and before the commit
restored_oid=$(qv -d postgres -c "SELECT oid FROM pg_database WHERE datname = 'own_restored'")
PGDATABASE=own_restored victim_start "$work/victim.err"
victim_ask "BEGIN" >/dev/null
crash_copy=$(victim_ask "SELECT festival.adopt_index('my_gf')")
victim_kill
wait_for_server
tap_is "$crash_copy" "db${restored_oid}_my_gf.festival" "a victim's adopt_index made its copy, then its backend was killed"
tap_is "$(qv -d own_restored -c "SELECT file_name FROM festival.index WHERE name = 'my_gf'")" "$(basename "$file")" \
    "the uncommitted adoption left the catalog naming the original"
tap_is "$(qv -d own_restored -c "SELECT reason FROM festival.orphan_files() WHERE file_name = '$crash_copy'")" \
    "this database owns it, but no index of festival.index names it" \
    "orphan_files lists the copy the killed adoption left"
# the state of a kill before the copy was this database's
cp "$file" "$dir/db${restored_oid}_my_gf.festival.adopting"
tap_like "$(qv -d own_restored -c "SELECT string_agg(file_name || ': ' || reason, ', ' ORDER BY file_name) FROM festival.orphan_files() WHERE owner_database_oid = $restored_oid")" \
    "db${restored_oid}_my_gf.festival: this database owns it.*, db${restored_oid}_my_gf.festival.adopting: a copy festival.adopt_index left unfinished" \
    "and an unfinished .adopting copy"
tap_is "$(qv -d own_restored -c "SELECT sum(festival.remove_orphan_file(device, file_name)) FROM festival.orphan_files() WHERE owner_database_oid = $restored_oid")" \
    "2" "remove_orphan_file removes both"
# a copy that fails (the device directory made read-only for the server)
if chmod 500 "$dir" 2>/dev/null; then
    out=$(q -d own_restored -c "SELECT festival.adopt_index('my_gf')")
    chmod 700 "$dir"
    tap_like "$out" "ERROR: .*could not create file" "an adoption whose copy fails is an ERROR"
    tap_ok "$([ "$(qv -d own_restored -c "SELECT file_name FROM festival.index WHERE name = 'my_gf'")" = "$(basename "$file")" ] &&
              ! ls "$dir" | grep -q "^db${restored_oid}_"; echo $?)" \
        "and changes nothing: the catalog names the original, no copy is left"
else
    tap_ok 0 "# SKIP cannot make the device directory read-only"
    tap_ok 0 "# SKIP cannot make the device directory read-only"
fi
new_name=$(qv -d own_restored -c "SELECT festival.adopt_index('my_gf')")
tap_unlike "$new_name" "^$(basename "$file")\$" "adopt_index gives the restored index a file name of its own ($new_name)"
tap_is "$(count_in own_restored)" "$expected" "the adopted copy answers as PostGIS does"
qv -d own_restored -c "SELECT festival.insert('my_gf', 99999, 'POINT(1 1)')" >/dev/null
tap_is "$(count_in own_restored)" "$((expected + 1))" "the adopted copy takes changes"
tap_is "$(count_in own_scratch)" "$expected" "which the original does not see"
q -d own_restored -c "SELECT festival.drop_index('my_gf')" >/dev/null
tap_ok "$([ ! -f "$dir/$new_name" ] && [ -f "$file" ]; echo $?)" \
    "dropping the adopted index removes its copy, not the original"
tier_name=$(qv -d own_restored -c "SELECT festival.adopt_index('my_tier')")
tap_ok "$([ -f "$fast_dir/$tier_name" ] && [ "$(tier_count_in own_restored)" = "$expected" ] &&
          [ "$(qv -d own_restored -c "SELECT count(*) > 0 FROM festival.tier_pages('my_tier') WHERE tier = 'fast'")" = t ]; echo $?)" \
    "an adopted tiered index has its own fast tier's file and answers from it"
q -d own_restored -c "SELECT festival.drop_index('my_tier')" >/dev/null
q -d own_scratch -c "SELECT festival.drop_index('my_tier')" >/dev/null
tap_ok "$([ ! -e "$fast_dir/$tier_name" ] && [ ! -e "$fast_dir/$tier_file" ] && [ ! -e "$dir/$tier_name" ]; echo $?)" \
    "and its drop, like the original's, removes only its own files"

# --- CREATE DATABASE ... TEMPLATE ---
q -c "SELECT festival.close('my_gf')" >/dev/null
psql -X -q -d postgres -c "CREATE DATABASE own_copy TEMPLATE own_scratch"
out=$(q -d own_copy -c "SELECT count(*) FROM festival.query('my_gf', $window)")
tap_like "$out" "belongs to database \"own_scratch\".*not to database \"own_copy\"" \
    "a TEMPLATE copy refuses to open the template's file"
uid_of() { qv -d "$1" -c "SELECT database_uid FROM festival.database_identity"; }
tap_ok "$([ "$(uid_of own_copy)" = "$(uid_of own_scratch)" ]; echo $?)" \
    "the TEMPLATE copy still has the template's identifier: its first use failed and rolled back the new one"
qv -d own_copy -c "SELECT count(*) FROM festival.orphan_files()" >/dev/null
tap_ok "$([ "$(uid_of own_copy)" != "$(uid_of own_scratch)" ]; echo $?)" \
    "its first use that commits gives it an identifier of its own"
tap_ok "$([ -n "$(uid_of own_restored)" ] && [ "$(uid_of own_restored)" != "$(uid_of own_scratch)" ]; echo $?)" \
    "the restored database has one of its own too (pg_dump does not carry it)"

# --- DROP DATABASE leaves files: orphans ---
fresh_database own_keeper
q -c "SET client_min_messages = warning" -c "SELECT festival.create_device('own_dev', io => 'buffered')" >/dev/null
out=$(q -c "SELECT festival.remove_orphan_file('own_dev', '$(basename "$file")')")
tap_like "$out" "is not an orphan: it belongs to database \"own_scratch\"" \
    "a file of a live database is not an orphan and is not removed"
scratch_oid=$(qv -d postgres -c "SELECT oid FROM pg_database WHERE datname = 'own_scratch'")
psql -X -q -d postgres -c "DROP DATABASE own_scratch"
# (files of other databases dropped earlier may share the directory)
orphans_of_scratch() {
    qv -d "$1" -c "SELECT string_agg(file_name || ':' || reason, ',') FROM festival.orphan_files() WHERE owner_database_oid = $scratch_oid"
}
tap_is "$(orphans_of_scratch own_keeper)" "$(basename "$file"):its database (OID $scratch_oid) was dropped" \
    "orphan_files lists the dropped database's file, and only it"
tap_is "$(orphans_of_scratch own_copy)" "" \
    "but not in the TEMPLATE copy, whose catalog still names it"
out=$(q -d own_copy -c "SELECT count(*) FROM festival.query('my_gf', $window)")
tap_like "$out" "belongs to a dropped database \\(OID $scratch_oid\\)" "which still refuses it"
tap_is "$(qv -d own_copy -c "SELECT festival.adopt_index('my_gf') <> '$(basename "$file")'")" "t" \
    "and adopts a copy of its own"
tap_is "$(count_in own_copy)" "$expected" "which answers as PostGIS does"
tap_is "$(orphans_of_scratch own_copy)" "$(basename "$file"):its database (OID $scratch_oid) was dropped" \
    "after which the copy lists the original as an orphan too"
tap_is "$(qv -c "SELECT festival.remove_orphan_file('own_dev', '$(basename "$file")') >= 1")" "t" \
    "remove_orphan_file removes it"
tap_ok "$([ ! -e "$file" ]; echo $?)" "the file is gone"
tap_is "$(qv -c "SELECT count(*) FROM festival.orphan_files() WHERE owner_database_oid = $scratch_oid")" "0" \
    "and no orphan of it is left"
tap_is "$(count_in own_copy)" "$expected" "the adopted copy still answers"
tap_done
