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
# The insertion order data.order = "hilbert" (the kNN file's laptop-hilbert
# form, shrunk): the same generated points, physically in Hilbert order (the
# order festival.build inserts them), the curve checked by its defining
# property (a bijection whose consecutive cells are neighbours).
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
fresh_database festival_ch3_test
tap_plan 21

out=$("$ROOT/scripts/run-workload" --no-setup --config "$ROOT/experiments/thesis-ch3-group.json" --scale nosuch 2>&1)
tap_ok "$( [ $? -ne 0 ]; echo $?)" "an unknown scale is refused"
tap_like "$out" "has no scale 'nosuch'" "with a message naming it"

# a structure's own framework list is checked like the top-level one
bad=$(mktemp); trap 'rm -f "$bad"' EXIT
python3 -c "
import json; d = json.load(open('$ROOT/experiments/thesis-ch3-group.json'))
# the small form's own structure list (buffers kept at the paper's ratio) replaces the file's
s = d['scales']['small'].get('structures') or d['structures']
s[1]['frameworks'] = [{'buffer_size': 1}]; json.dump(d, open('$bad', 'w'))"
out=$("$ROOT/scripts/run-workload" --no-setup --config "$bad" --scale small --dry-run 2>&1)
tap_is "$?" "2" "a structure's framework entry without \"framework\" is refused"
tap_like "$out" "scales.small.structures\\[1\\].frameworks\\[0\\] needs the key 'framework'" \
    "with a message naming the entry's path (experiments/schema.json)"

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

# the claims these two files' runs decide at small scale evaluate to one number each
# (the H-Grid mix file has its own claims and its own test)
n=0; bad=""
while IFS= read -r measure; do
    v=$(qv -c "$measure")
    n=$((n + 1))
    [[ "$v" =~ ^-?[0-9.e+-]+$ ]] || bad+=" [$measure -> '$v']"
done < <(python3 -c "
import json
for c in json.load(open('$ROOT/experiments/claims/fevgas2019-thesis.json')):
    if 'small' in c['scales'] and c['experiment'] in ('experiments/thesis-ch3-group.json', 'experiments/thesis-ch3-mix.json'):
        print(c['measure'])")
tap_is "$bad" "" "the $n group and mix claims decidable at small scale evaluate to numbers"

# data.order: the Hilbert key is a curve (every cell once, consecutive cells adjacent)
curve=$(/usr/bin/python3 -c "
import sys; sys.path.insert(0, '$ROOT/scripts/lib'); import workload as w
b = 4; n = 1 << b
c = sorted((w.hilbert_key(x + 0.5, y + 0.5, [0, 0, n, n], b), x, y) for x in range(n) for y in range(n))
ok = [k for k, _, _ in c] == list(range(n * n)) and all(abs(p[1] - q[1]) + abs(p[2] - q[2]) == 1 for p, q in zip(c, c[1:]))
print('curve' if ok else 'not a curve')")
tap_is "$curve" "curve" "hilbert_key visits the 16 x 16 cells once each, consecutive keys adjacent"
out=$("$ROOT/scripts/run-workload" --no-setup --config "$ROOT/experiments/thesis-ch3-knn.json" --scale laptop-hilbert \
      --points 3000 --structure rstartree --knn 10 --knn-count 5 2>&1)
tap_is "$?" "0" "the kNN file's laptop-hilbert form runs (3,000 points)"
q -c "SELECT festival.generate_points('ch3_ref', 3000, 'uniform', 3, ST_MakeBox2D(ST_MakePoint(0, 0), ST_MakePoint(100000, 100000)))" >/dev/null
tap_is "$(qv -c "SELECT count(*) FROM ch3_ref r FULL JOIN wl_ch3knnhilbert_points p ON p.id = r.id AND ST_Equals(p.geom, r.geom) WHERE p.id IS NULL OR r.id IS NULL")" \
    "0" "the ordered table holds the generated points and ids, no other"
# physical order (festival.build's scan) against the keys; the generator's order is not sorted
sorted=$(for t in wl_ch3knnhilbert_points ch3_ref; do
    qv -c "SELECT ST_X(geom) || ' ' || ST_Y(geom) FROM $t ORDER BY ctid" | /usr/bin/python3 -c "
import sys; sys.path.insert(0, '$ROOT/scripts/lib'); import workload as w
k = [w.hilbert_key(*map(float, l.split()), [0, 0, 100000, 100000]) for l in sys.stdin]
print('sorted' if k == sorted(k) and len(k) == 3000 else 'unsorted')"; done | paste -sd,)
tap_is "$sorted" "sorted,unsorted" "the ordered table is in Hilbert order, the generated one is not"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label ~ '^exp=ch3knnhilbert structure=rstartree .* build=insert order=hilbert workload=(build|knn k=10) rep=1\$'")" \
    "2" "its runs carry order=hilbert in their labels (build, 10NN)"
out=$("$ROOT/scripts/run-workload" --no-setup --config "$ROOT/experiments/thesis-ch3-knn.json" --scale small --order zorder --dry-run 2>&1)
tap_like "$out" "invalid choice: 'zorder'" "an unknown --order is refused"
out=$("$ROOT/scripts/run-workload" --no-setup --config "$ROOT/experiments/thesis-ch3-knn.json" --scale small --order hilbert --table ch3_ref --dry-run 2>&1)
tap_like "$out" "data.order applies to generated points" "an order with a table of its own is refused"
q -c "DROP TABLE ch3_ref" >/dev/null

q -c "SELECT festival.drop_device(name) FROM festival.device WHERE name LIKE 'ch3\_%'" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE festival_ch3_test" >/dev/null 2>&1
tap_done
