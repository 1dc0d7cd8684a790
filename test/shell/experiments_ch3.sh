#!/usr/bin/env bash
# The Fevgas 2019 chapter 3 configurations (experiments/thesis-ch3-*.json)
# at their small scale through scripts/run-workload: --scale merges the
# "small" form; the group point queries and the insert/search mixes run
# through scripts/lib/mixes.py.  Every run is a labelled festival.run row
# whose result is checked here independently of the runner: each group
# point and each mix search found its stored point (counted against the
# data table), each insert was acknowledged; the claims of
# experiments/claims/fevgas2019-thesis.json that these runs decide at
# "small" evaluate to one number each.  A scale the file lacks is refused.
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
fresh_database festival_ch3_test
tap_plan 14

out=$("$ROOT/scripts/run-workload" --no-setup --config "$ROOT/experiments/thesis-ch3-group.json" --scale nosuch 2>&1)
tap_ok "$( [ $? -ne 0 ]; echo $?)" "an unknown scale is refused"
tap_like "$out" "has no scale 'nosuch'" "with a message naming it"

# a structure's own framework list is checked like the top-level one
bad=$(mktemp); trap 'rm -f "$bad"' EXIT
python3 -c "
import json; d = json.load(open('$ROOT/experiments/thesis-ch3-group.json'))
d['structures'][1]['frameworks'] = [{'buffer_size': 1}]; json.dump(d, open('$bad', 'w'))"
out=$("$ROOT/scripts/run-workload" --no-setup --config "$bad" --scale small --dry-run 2>&1)
tap_is "$?" "2" "a structure's framework entry without \"framework\" is refused"
tap_like "$out" "structure lbgrid: framework entry .* has no \"framework\" key" "with a message naming the structure"

out=$("$ROOT/scripts/run-workload" --no-setup --config "$ROOT/experiments/thesis-ch3-group.json" --scale small 2>&1)
tap_is "$?" "0" "the group point query configuration runs at small scale"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label ~ '^exp=ch3group structure=(gridfile|lbgrid|rstartree) .* workload=(build|group size=(1|10|100)) rep=1\$'")" "12" \
    "3 structures x (build, groups of 1, 10, 100) = 12 labelled runs"
# the searched points are stored points: every one must be found
stored=$(qv -c "SELECT count(*) FROM wl_ch3group_group_points g JOIN wl_ch3group_points p ON p.id = g.id")
tap_is "$(qv -c "SELECT string_agg(DISTINCT config -> 'experiment' ->> 'result', ',') FROM festival.run WHERE label LIKE 'exp=ch3group % workload=group %'")" \
    "$stored" "every group run found all $stored searched points"
tap_is "$(qv -c "SELECT bool_and(read_submissions < pages_read) FROM festival.run WHERE label LIKE 'exp=ch3group structure=gridfile % workload=group size=100 %'")" \
    "t" "groups of 100 read their pages in fewer submissions than pages"

out=$("$ROOT/scripts/run-workload" --no-setup --config "$ROOT/experiments/thesis-ch3-mix.json" --scale small --points 5000 2>&1)
tap_is "$?" "0" "the insert/search mix configuration runs at small scale"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label ~ '^exp=ch3mix .* workload=mix inserts=(0|20|40|60|80|100) rep=1\$'")" "30" \
    "(2 structures x 2 frameworks + lbgrid x none) x 6 mixes = 30 mix runs"
# lbgrid's own \"frameworks\" (none only) replaces the file's none and fast for it alone
tap_is "$(qv -c "SELECT string_agg(DISTINCT substring(label from 'framework=[a-z]+'), ',') FROM festival.run WHERE label LIKE 'exp=ch3mix structure=lbgrid %'")" \
    "framework=none" "lbgrid runs under its own framework list (none) only"
# operations of each mix: inserts succeed, searches find stored points
ops=$(qv -c "SELECT string_agg(n::text, ',' ORDER BY p) FROM (
        SELECT p, (SELECT count(*) FROM wl_ch3mix_points) AS np, n FROM (VALUES
          (0, (SELECT count(*) FROM wl_ch3mix_mix_0 m WHERE ins OR EXISTS (SELECT FROM wl_ch3mix_points d WHERE d.id = m.id))),
          (100, (SELECT count(*) FROM wl_ch3mix_mix_100 m WHERE ins OR EXISTS (SELECT FROM wl_ch3mix_points d WHERE d.id = m.id)))) v(p, n)) s")
got=$(qv -c "SELECT string_agg(r, ',' ORDER BY p) FROM (SELECT DISTINCT (config -> 'experiment' -> 'workload' ->> 'insert_percent')::int AS p, config -> 'experiment' ->> 'result' AS r
        FROM festival.run WHERE label ~ 'exp=ch3mix .* workload=mix inserts=(0|100) ') s")
tap_is "$got" "$ops" "every search of the 0/100 and 100/0 mixes found its point, every insert was acknowledged ($ops)"
tap_is "$(qv -c "SELECT count(*) FROM festival.index")" "0" "the runner dropped its indices"

# the claims these runs decide at small scale evaluate to one number each
n=0; bad=""
while IFS= read -r measure; do
    v=$(qv -c "$measure")
    n=$((n + 1))
    [[ "$v" =~ ^-?[0-9.e+-]+$ ]] || bad+=" [$measure -> '$v']"
done < <(python3 -c "
import json
for c in json.load(open('$ROOT/experiments/claims/fevgas2019-thesis.json')):
    if 'small' in c['scales'] and ('group' in c['experiment'] or 'mix' in c['experiment']):
        print(c['measure'])")
tap_is "$bad" "" "the $n group and mix claims decidable at small scale evaluate to numbers"

q -c "SELECT festival.drop_device(name) FROM festival.device WHERE name LIKE 'ch3\_%'" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE festival_ch3_test" >/dev/null 2>&1
tap_done
