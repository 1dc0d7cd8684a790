#!/usr/bin/env bash
# scripts/reproduce --scale small --time device: every claim of the registry
# that the small scale can decide must hold on virtual device seconds, except
# the claims listed in test/shell/fixtures/reproduce-small-device.expected
# (claims the calibrated device model does not reproduce, each with its
# reason); a listed claim that starts to hold fails the test too, so the list
# stays exact.  Virtual time is deterministic (index CPU time, which the
# default modelled elapsed time adds, is not), so this is a test of the device
# model against the papers with the same verdicts on every run.
# Then the report: its first table lists every claim of experiments/claims,
# replay shows every shipped profile, and bad arguments are refused.  A claim
# whose measure reads a second experiment ("also") runs both when chosen
# alone, and a bad "also" is refused.
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
fresh_database festival_reproduce_test
tap_plan 18

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

out=$(PGDATABASE=festival_reproduce_test "$ROOT/scripts/reproduce" --no-setup --database festival_reproduce_test \
      --scale small --time device --no-charts --output "$work/r" \
      --expect "$ROOT/test/shell/fixtures/reproduce-small-device.expected" 2>&1)
rc=$?
echo "$out" | grep -E '^(holds|does not hold|cannot|measure failed|reproduce:)' | sed 's/^/# /'
tap_is "$rc" "0" "every claim small decides holds, or is a listed known failure"
tap_like "$out" "reproduce: [0-9]+ of [0-9]+ claims decidable at scale small hold" "it says how many hold"
md="$work/r/report.md"
nclaims=$(python3 -c "import glob, json; print(sum(len(json.load(open(f))) for f in glob.glob('$ROOT/experiments/claims/*.json')))")
tap_is "$(grep -c '(`[a-z0-9.-]*`) |' "$md")" "$nclaims" "the claim table has one row per registered claim"
tap_like "$(head -8 "$md")" "claims decidable at scale small hold" "the summary comes first"
tap_like "$(head -8 "$md")" "^Times are virtual device seconds alone" "the report says its times are device seconds"
nprof=$(PGDATABASE=festival_reproduce_test qv -c "SELECT count(*) FROM festival.device_profile WHERE builtin")
tap_is "$(grep -c '^| `[a-z0-9_]*` | ' "$md")" "$nprof" "replay shows every shipped profile"
tap_ok "$( [ -s "$work/r/report.html" ]; echo $?)" "report.html exists"

# carniel2016-fig3-5-rstar-best-hdd compares c16rstarq's R*-tree with c17rtree's
# R-trees ("also"): chosen alone it must still have both experiments' runs
# (--reuse keeps those of the run above, so this costs only the replay section)
out=$(PGDATABASE=festival_reproduce_test "$ROOT/scripts/reproduce" --no-setup --database festival_reproduce_test \
      carniel2016-fig3-5-rstar-best-hdd --reuse --scale small --time device --no-charts \
      --output "$work/one" 2>&1)
tap_like "$out" "(holds|does not hold) +carniel2016-fig3-5-rstar-best-hdd  ours=[0-9.]+" \
    "a claim with also is decided when chosen alone"
tap_like "$(grep '^- `experiments/' "$work/one/report.md" | tr '\n' ' ')" \
    "carniel2016-rstar-queries.json.*carniel2017-rtree.json" "its report lists both experiments"

# a bad "also" is refused when the claims are read (a registry of one claim)
mkdir -p "$work/bad/experiments/claims"
cp "$ROOT/experiments/carniel2017-rtree.json" "$work/bad/experiments/x.json"
bad_also() {   # bad_also <experiment JSON> <also JSON>: what load_claims says
    printf '[{"id": "x", "paper": "p", "where": "w", "claim": "c", "experiment": %s, "also": %s, "measure": "SELECT 1 AS ours", "holds": {"op": ">", "value": 0}, "scales": ["small"]}]\n' \
        "$1" "$2" > "$work/bad/experiments/claims/x.json"
    python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import reproduce
reproduce.ROOT = sys.argv[2]
try:
    reproduce.load_claims()
    print("accepted")
except reproduce.ReproduceError as e:
    print(e)' "$ROOT/scripts/lib" "$work/bad" 2>&1
}
tap_like "$(bad_also '"experiments/x.json"' '[]')" \
    "experiments/claims/x.json: claim x: also must be a non-empty list of experiment files$" \
    "an empty also is refused"
tap_is "$(cp "$work/bad/experiments/x.json" "$work/bad/experiments/y.json"
          bad_also '"experiments/x.json"' '["experiments/y.json"]')" "accepted" "a good also is accepted"
tap_like "$(bad_also '"experiments/x.json"' '"experiments/x.json"')" "also must be a non-empty list" \
    "also must be a list"
tap_like "$(bad_also 'null' '["experiments/x.json"]')" "also needs an experiment" \
    "also needs an experiment"
tap_like "$(bad_also '"experiments/x.json"' '["experiments/x.json"]')" "also names an experiment twice" \
    "also may not repeat the experiment"
tap_like "$(bad_also '"experiments/x.json"' '["experiments/none.json"]')" \
    "no experiment file experiments/none.json" "also names existing files"
tap_is "$(bad_also '"experiments/x.json"' '["experiments/carniel2017-rtree.json"]' | sed 's/.*: //')" \
    "no experiment file experiments/carniel2017-rtree.json" "the files are relative to the tree's root"

out=$("$ROOT/scripts/reproduce" --no-setup --database festival_reproduce_test no-such-claim 2>&1)
tap_is "$?" "2" "an unknown claim is refused"
tap_like "$out" "no claim matches no-such-claim" "with a message"
tap_done
