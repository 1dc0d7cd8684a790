#!/usr/bin/env bash
# The README's first psql session runs verbatim on a fresh database (the
# README says every statement is checked): the SQL block after "As a
# superuser" is extracted and run with ON_ERROR_STOP; then its promises are
# checked against independent answers: the 'contains' query finds parcel 1
# (PostGIS agrees on the same rows), the window query equals brute force,
# and check() is clean.
source "$(dirname "$0")/lib/tap.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
tap_plan 6
# a database without festival: the session creates the extension itself
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS festival_readme" -c "CREATE DATABASE festival_readme" >/dev/null

sql=$(awk '/^As a superuser/ { want = 1 } want && /^```sql$/ { inside = 1; next }
           inside && /^```$/ { exit } inside { print }' "$ROOT/README.md")
tap_like "$sql" "create_index\\('parcels_rt'" "the README's session is found"

out=$(psql -X -q -v ON_ERROR_STOP=1 -d festival_readme 2>&1 <<<"$sql")
tap_is "$?" "0" "it runs without an error"
echo "$out" | grep -E "ERROR|WARNING" | head -5 | sed 's/^/#   /'

got=$(qv -d festival_readme -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM festival.query('parcels_rt', (SELECT ST_Centroid(geom) FROM parcels WHERE id = 1), 'contains')")
want=$(qv -d festival_readme -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM parcels WHERE ST_Contains(geom, (SELECT ST_Centroid(geom) FROM parcels WHERE id = 1))")
tap_is "$got" "$want" "its contains query answers as PostGIS ($got)"
tap_like "$got" '(^|,)1(,|$)' "parcel 1 among them"
tap_is "$(qv -d festival_readme -c "SELECT (SELECT count(*) FROM festival.query('parcels_rt', ST_MakeEnvelope(0, 0, 500, 500))) = (SELECT count(*) FROM parcels WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 500, 500)))")" \
    "t" "its window query answers as PostGIS"
tap_is "$(qv -d festival_readme -c "SELECT count(*) FROM festival.check('parcels_rt')")" "0" "check() is clean"

qv -d festival_readme -c "SELECT festival.drop_index(name) FROM festival.index" >/dev/null
qv -d festival_readme -c "SELECT festival.drop_device('ssd')" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE festival_readme" >/dev/null 2>&1
tap_done
