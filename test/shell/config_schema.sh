#!/usr/bin/env bash
# One schema for every experiment configuration (issue 28 item 7):
# experiments/schema.json is valid JSON that every committed experiment file
# follows, and scripts/run-workload refuses a key the schema does not know
# anywhere in a file (inside windows, knn, empty, batch_queries, a scale's
# form, a structure entry, ...) with exit 2 and the key's path, before any
# set-up.  Each case runs without PG* variables, so that a script that went
# on would try to build and start a cluster ("==>" lines).
source "$(dirname "$0")/lib/tap.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# file | what the message must name
CASES=(
    '{"knn": {"K": [10]}}|unknown key knn.K'
    '{"batch_queries": {"window": {"area_percent": 1, "cnt": 5}}}|unknown key batch_queries.window.cnt'
    '{"groups": {"points": 10, "sizse": [1]}}|unknown key groups.sizse'
    '{"scales": {"small": {"windows": {"area": [1]}}}}|unknown key scales.small.windows.area'
    '{"structures": [{"structure": "rtree"}, {"structure": "rtree", "optoins": {}}]}|unknown key structures\[1\].optoins'
    '{"tier_devices": [{"name": "f", "profil": "x"}]}|unknown key tier_devices\[0\].profil'
    '{"repetitions": "3"}|repetitions must be integer'
    '{"windows": {"batch": "yes"}}|windows.batch is "yes"'
)
tap_plan $(( ${#CASES[@]} * 2 + 3 ))

tap_is "$(/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1])); print("ok")' "$ROOT/experiments/schema.json")" \
    ok "experiments/schema.json is JSON"
bad=$(/usr/bin/python3 - "$ROOT" <<'PY'
import glob, json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "scripts", "lib"))
import config_schema
# the files that are not run-workload configurations
OTHERS = {"schema.json", "calibration.json", "cell-estimates.json", "claims-frozen.json",
          "verdict-notes.json"}
n = 0
for p in sorted(glob.glob(os.path.join(sys.argv[1], "experiments", "*.json"))):
    if os.path.basename(p) in OTHERS:
        continue
    n += 1
    try:
        config_schema.validate(json.load(open(p, encoding="utf-8")))
    except config_schema.SchemaError as e:
        print(f"{os.path.basename(p)}: {e}")
print(f"checked {n}", file=sys.stderr)
PY
)
tap_is "$bad" "" "every committed experiment file follows the schema"
# the validator is not a pass-everything: the schema's own example of a typo
tap_like "$(/usr/bin/python3 -c "
import sys; sys.path.insert(0, '$ROOT/scripts/lib'); import config_schema
try:
    config_schema.validate({'knn': {'k': [10], 'count': 'many'}})
except config_schema.SchemaError as e:
    print(e)")" "knn.count must be integer" "a value of the wrong type is refused with its path"

i=0
for c in "${CASES[@]}"; do
    json=${c%%|*}
    want=${c#*|}
    i=$((i + 1))
    echo "$json" > "$TMP/c$i.json"
    out=$(env -u PGHOST -u PGPORT -u PGDATABASE -u PGSERVICE -u PGUSER \
          timeout 60 "$ROOT/scripts/run-workload" --config "$TMP/c$i.json" --dry-run 2>&1 </dev/null)
    rc=$?
    tap_is "$rc" 2 "$json: exit 2"
    tap_like "$out" "$want" "$json: the message names the path"
    echo "$out" | grep -E '==>|Traceback' | head -2 | sed 's/^/#   /'
done
tap_done
