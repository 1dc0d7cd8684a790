#!/usr/bin/env bash
# scripts/lib/mixes.py's "fresh_index": every mix after the first runs on an
# index dropped, created and built again (unmeasured), so nothing a mix did
# (cache, splits, H-Grid's detector weights and placement) carries over.
# Independent answer: with fresh_index the second repetition of a mix, which
# follows the first, reads, writes and costs exactly what the first did on
# the measured build (virtual device time is deterministic); without it, on
# H-Grid, the first repetition's operations have heated pages and the second
# differs although its inserts were deleted.  The rebuild is not a run.
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
fresh_database festival_mixes_fresh_test
tap_plan 6

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the H-Grid mix file's small form, H-Grid (placement hot) alone, mixes as given
config() {  # NAME MIXES FRESH (two repetitions)
    python3 - "$ROOT/experiments/fevgas2019-thesis-hgrid-mix.json" "$1" "$2" "$3" "$work/$1.json" <<'PY'
import json, sys
src, name, mixes, fresh, out = sys.argv[1:]
d = json.load(open(src))
d["name"] = name
small = d["scales"]["small"]
small["repetitions"] = 2
small["mixes"] = {"insert_percent": json.loads(mixes), "operations": 2000,
                  "fresh_index": fresh == "true"}
small["structures"] = [s for s in small["structures"]
                       if s.get("options", {}).get("placement") == "hot"]
assert len(small["structures"]) == 1
d["scales"] = {"small": small}
json.dump(d, open(out, "w"))
PY
}
config mffresh '[0, 20]' true
config mfkept '[0, 20]' false
for n in mffresh mfkept; do
    out=$("$ROOT/scripts/run-workload" --no-setup --config "$work/$n.json" --scale small 2>&1) || { echo "$out" | sed 's/^/# /'; }
done
mix() {  # EXP REP: the 20/80 mix run's pages read, written and device seconds
    qv -c "SELECT pages_read || ' ' || pages_written || ' ' || round(device_seconds::numeric, 9)
           FROM festival.run WHERE label ~ '^exp=$1 .* workload=mix inserts=20 rep=$2\$'"
}
f1=$(mix mffresh 1); f2=$(mix mffresh 2); k1=$(mix mfkept 1); k2=$(mix mfkept 2)
echo "# 20/80, fresh index: rep 1 $f1, rep 2 $f2; the same index: rep 1 $k1, rep 2 $k2"
tap_like "$f1" "^[1-9][0-9]* [0-9]+ [0-9.]+$" "the 20/80 mix ran"
tap_is "$f2" "$f1" "with fresh_index a mix's second repetition costs what its first did"
tap_ok "$( [ "$k2" != "$k1" ]; echo $?)" "without it the first repetition changes the second (the test can fail)"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label ~ '^exp=mffresh ' AND replay_of IS NULL")" "5" \
    "one build run and four mix runs: the rebuilds are not runs"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label ~ '^exp=mffresh .* workload=mix' AND (config -> 'experiment' -> 'workload' ->> 'fresh_index')::boolean")" "4" \
    "each mix run records fresh_index in its config"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label ~ '^exp=mffresh .* workload=build' AND pages_written > 0")" "1" \
    "the measured build wrote its pages"
