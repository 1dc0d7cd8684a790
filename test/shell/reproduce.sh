#!/usr/bin/env bash
# scripts/reproduce --scale small --time device: the smoke test of the claim
# registry (docs/experiments.md).  Every claim is decided in direction and
# magnitude on virtual device seconds (deterministic: the same verdicts on
# every run); exactly the claims listed in
# test/shell/fixtures/reproduce-small-device.expected do not hold (a listed
# claim that starts to hold fails the test too, so the list stays exact).
# The small scale is not evidence: the paper scale decides.
# Then: the report (counts first, one row per claim, replay on every shipped
# drive); resuming (a second invocation runs no cell and stores nothing
# twice; a cell interrupted after storing runs is run again, its old runs
# replaced); runs of a configuration the experiment no longer has are not
# counted; a claim with "also" chosen alone; the registry's checks (first
# format refused with the migration's name, "also", scales that are not the
# experiments' forms less a reasoned scales_without, frozen rules, missing
# semantic settings, a parameter fitted to a
# held-out claim, more than five calibration claims); the magnitude rule
# against hand-computed bands; scripts/migrate-claims.
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
fresh_database festival_reproduce_test
tap_plan 39

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repro() { PGDATABASE=festival_reproduce_test "$ROOT/scripts/reproduce" --no-setup \
              --database festival_reproduce_test --scale small --time device --no-charts "$@" 2>&1; }

out=$(repro --output "$work/r" --expect "$ROOT/test/shell/fixtures/reproduce-small-device.expected")
rc=$?
echo "$out" | grep -E '^(holds|does not hold|cannot|measure failed|no experiment|reproduce: [a-z])' | sed 's/^/# /'
tap_is "$rc" "0" "every claim small decides holds in both senses, or is a listed known failure"
tap_like "$out" "reproduce: held out: [0-9]+ of [0-9]+ claims decided; with a paper number \([0-9]+\): direction holds in [0-9]+, magnitude in [0-9]+" \
    "it counts held-out claims, direction and magnitude apart"
md="$work/r/report.md"
nclaims=$(python3 -c "import glob, json; print(sum(len(json.load(open(f))) for f in glob.glob('$ROOT/experiments/claims/*.json')))")
tap_is "$(grep -c '(`[a-z0-9.-]*`) |' "$md")" "$nclaims" "the claim table has one row per registered claim"
tap_like "$(sed -n 5p "$md")" "^\*\*Held out: " "the held-out counts come first"
tap_like "$(sed -n 7p "$md")" "^Calibration: [0-9]+ of 4 claims decided" "calibration is counted apart"
tap_like "$(head -12 "$md")" "Times are virtual device seconds alone" "the report says its times are device seconds"
tap_like "$(grep 'carniel2017-fig6-ssd-query-gain-0.1' "$md")" "\| held out \| gain 89–96 % \| 80.18 to 97.96 \|" \
    "a claim's row shows the paper's range and the magnitude band"
tap_like "$(grep 'carniel2016-fig1-ssd-gain-4kb' "$md")" "\| calibration \|" "a claim of the calibration set is marked"
nprof=$(PGDATABASE=festival_reproduce_test qv -c "SELECT count(*) FROM festival.device_profile WHERE builtin")
tap_is "$(grep -c '^| `[a-z0-9_]*` | [a-z0-9]* | [0-9] | [0-9.]* | [0-9.]* | ' "$md")" "$nprof" "replay shows every shipped profile"
tap_is "$(PGDATABASE=festival_reproduce_test qv -c "SELECT pages_read >= 5000 AND pages_written >= 1000 FROM festival.run WHERE label LIKE 'exp=rpreplay %' AND replay_of IS NULL")" \
    "t" "the replayed build reads and writes the drive at every insert (the papers' semantics), not once at its end"
tap_ok "$( [ -s "$work/r/report.html" ]; echo $?)" "report.html exists"
tap_like "$(grep -c '| `[a-z0-9_]*` | [a-z_]* | .* | \(datasheet\|paper\|published\|assumed\|fitted\) |' "$md")" "^[1-9][0-9]+$" \
    "the report lists the drive-model parameters with their sources"
tap_is "$(PGDATABASE=festival_reproduce_test qv -c "SELECT count(*) FROM festival.run WHERE config -> 'experiment' -> 'session_settings' ->> 'festival.build_commit_rows' IS NULL AND label LIKE 'exp=c%' AND replay_of IS NULL")" \
    "0" "every run records the session's festival settings"

# a run of a configuration the experiment file no longer has (here: H-Grid's
# with other write buffers, a hundred times the device time) stays in
# festival.run; the claims read only the current cells' runs
mix_before=$(echo "$out" | grep -oE 'fevgas2019-thesis-4.3-hgrid-mix  ours=[-0-9.]+')
PGDATABASE=festival_reproduce_test q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE TEMP TABLE stale AS SELECT * FROM festival.run
 WHERE label ~ '^exp=fevgas_hgridmix .*placement=hot ' AND replay_of IS NULL;
UPDATE stale SET run_id = nextval('festival.run_run_id_seq'),
       label = regexp_replace(label, 'write_buffer_pages=[0-9]+', 'write_buffer_pages=77'),
       device_seconds = device_seconds * 100;
DO $$ BEGIN
  EXECUTE (SELECT format('INSERT INTO festival.run (%s) SELECT %1$s FROM stale',
                         string_agg(quote_ident(attname), ', ' ORDER BY attnum))
             FROM pg_attribute WHERE attrelid = 'festival.run'::regclass AND attnum > 0
              AND NOT attisdropped AND attgenerated = '');
END $$;
SQL
tap_unlike "$(PGDATABASE=festival_reproduce_test qv -c "SELECT count(*) FROM festival.run WHERE label LIKE '%write_buffer_pages=77 %'")" "^0$" \
    "runs of an older configuration of the H-Grid mixes are stored ..."
out=$(repro 'fevgas2019-thesis-4.3-hgrid-mix' --reuse --output "$work/stale" --no-replay)
tap_is "$(echo "$out" | grep -oE 'fevgas2019-thesis-4.3-hgrid-mix  ours=[-0-9.]+')" "${mix_before:-no value before}" \
    "... and the claim reading those mixes does not count them"
PGDATABASE=festival_reproduce_test q -c "DELETE FROM festival.run WHERE label LIKE '%write_buffer_pages=77 %'" >/dev/null

# resuming: nothing runs again, nothing is stored twice
before=$(PGDATABASE=festival_reproduce_test qv -c "SELECT count(*) FROM festival.run")
out=$(repro 'carniel2016-*' --output "$work/again" --no-replay)
tap_unlike "$out" "reproduce: running experiments/" "a second invocation runs no experiment ..."
tap_is "$(PGDATABASE=festival_reproduce_test qv -c "SELECT count(*) FROM festival.run")" "$before" "... and stores no run"
cell=$(PGDATABASE=festival_reproduce_test qv -c "SELECT cell FROM festival_cell WHERE experiment = 'c16fastpages' ORDER BY cell LIMIT 1")
n=$(PGDATABASE=festival_reproduce_test qv -c "SELECT count(*) FROM festival.run WHERE starts_with(label, '$cell ')")
PGDATABASE=festival_reproduce_test q -c "DELETE FROM festival_cell WHERE cell = '$cell'" >/dev/null
out=$(repro carniel2016-fig2-ssd-fast-time-grows-with-page --output "$work/resume" --no-replay)
tap_like "$out" "reproduce: 15/15 cells finished, .*; cell finished in" "a cell interrupted after storing runs is run again"
tap_is "$(PGDATABASE=festival_reproduce_test qv -c "SELECT count(*) || '/' || count(DISTINCT label) FROM festival.run WHERE starts_with(label, '$cell ')")" \
    "$n/$n" "its old runs are replaced, not doubled"

# a claim whose measure reads a second experiment ("also") chosen alone
out=$(repro carniel2016-fig3-5-rstar-best-hdd --reuse --output "$work/one" --no-replay)
tap_like "$out" "(holds|does not hold) +carniel2016-fig3-5-rstar-best-hdd  ours=[0-9.]+" "a claim with also is decided when chosen alone"
tap_like "$(grep '^| `experiments/' "$work/one/report.md" | tr '\n' ' ')" \
    "carniel2016-rstar-queries.json.*carniel2017-rtree.json" "its report lists both experiments"

# the registry's checks, on a tree of one claim
mkdir -p "$work/bad/experiments/claims"
cp "$ROOT/experiments/carniel2017-rtree.json" "$work/bad/experiments/x.json"
cp "$ROOT/experiments/carniel2017-rtree.json" "$work/bad/experiments/y.json"
load() {   # load <claim JSON>: what load_claims says of a registry of that one claim
    printf '[%s]\n' "$1" > "$work/bad/experiments/claims/x.json"
    python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import claims
try:
    claims.load_claims(sys.argv[2])
    print("accepted")
except claims.ClaimError as e:
    print(e)' "$ROOT/scripts/lib" "$work/bad" 2>&1
}
base='"id": "x", "paper": "p", "where": "w", "claim": "c", "paper_data": "synthetic", "measure": "SELECT 1 AS ours", "direction": {"op": ">", "value": 0}'
tap_is "$(load "{$base, \"experiment\": \"experiments/x.json\", \"scales\": [\"small\", \"paper\"]}")" "accepted" "a good claim is accepted"
tap_like "$(load "{\"id\": \"x\", \"paper\": \"p\", \"where\": \"w\", \"claim\": \"c\", \"experiment\": \"experiments/x.json\", \"measure\": \"SELECT 1 AS ours\", \"holds\": {\"op\": \">\", \"value\": 0}, \"scales\": [\"small\"]}")" \
    "first claim format .*scripts/migrate-claims" "a claim of the first format is refused, naming the migration"
tap_like "$(load "{$base, \"experiment\": \"experiments/x.json\", \"scales\": [\"paper\"]}")" \
    "scales \['paper'\] must be every scale its experiments have a form for: \['paper', 'small'\]" "scales must be every form of the experiments"
tap_is "$(load "{$base, \"experiment\": \"experiments/x.json\", \"scales\": [\"paper\"], \"scales_without\": {\"small\": \"why\"}}")" \
    "accepted" "a scale the measure cannot use is left out with its reason (scales_without)"
tap_like "$(load "{$base, \"experiment\": \"experiments/x.json\", \"scales\": [\"small\", \"paper\"], \"scales_without\": {\"small\": \"why\"}}")" \
    "both in scales and in scales_without" "... but not a scale it is decided at"
tap_like "$(load "{$base, \"experiment\": \"experiments/x.json\", \"scales\": [\"paper\"], \"scales_without\": {\"small\": \"\"}}")" \
    "scales_without must map scales to the reason" "... and never without a reason"
tap_like "$(load "{$base, \"experiment\": \"experiments/x.json\", \"also\": [\"experiments/x.json\"], \"scales\": [\"small\", \"paper\"]}")" \
    "also names an experiment twice" "also may not repeat the experiment"
tap_like "$(load "{$base, \"experiment\": \"experiments/x.json\", \"magnitude\": {\"quantity\": \"speed\", \"paper\": [1, 2]}, \"scales\": [\"small\", \"paper\"]}")" \
    "magnitude must be" "an unknown magnitude quantity is refused"
python3 -c "
import json; d = json.load(open('$work/bad/experiments/y.json')); del d['settings']['festival.log_sync']
json.dump(d, open('$work/bad/experiments/y.json', 'w'))"
tap_like "$(load "{$base, \"experiment\": \"experiments/y.json\", \"scales\": [\"small\", \"paper\"]}")" \
    "must state its write and read behaviour in \"settings\": festival.log_sync missing" "an experiment must state its semantics"
cal() {    # cal <calibration JSON>: what load_calibration says, for the registry's claims
    python3 -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import claims
try:
    claims.load_calibration(sys.argv[2], claims.load_claims(sys.argv[3]))
    print("accepted")
except claims.ClaimError as e:
    print(e)' "$ROOT/scripts/lib" "$work/cal" "$ROOT"
}
mkdir -p "$work/cal/experiments"
echo '{"calibration_claims": [], "parameters": [{"profile": "h", "parameter": "cache_hit_us", "value": 1, "kind": "fitted", "source": "s", "fitted_to": ["carniel2017-fig2-ssd-gain-4kb"]}]}' > "$work/cal/experiments/calibration.json"
tap_like "$(cal)" "fitted to the held-out claim carniel2017-fig2-ssd-gain-4kb: a defect" "a parameter fitted to a held-out claim is refused"
python3 -c "
import json; ids = [c['id'] for c in json.load(open('$ROOT/experiments/claims/carniel2017.json'))][:6]
json.dump({'calibration_claims': ids, 'parameters': []}, open('$work/cal/experiments/calibration.json', 'w'))"
tap_like "$(cal)" "6 calibration claims, at most 5" "at most five calibration claims"

# the frozen rules (experiments/claims-frozen.json): every registered claim's rule is frozen
# as it was before it ran, and a rule changed afterwards is seen
tap_is "$(python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import claims
cs, fr = claims.load_claims(sys.argv[2]), claims.load_frozen(sys.argv[2])
print(" ".join(c["id"] for c in cs if claims.freeze_state(c, fr) != "frozen") or "all frozen")
c = dict(cs[0]); c["direction"] = {"op": "<", "value": 0}
print(claims.freeze_state(c, fr))
c = dict(cs[0]); c["scales_without"] = {"laptop": "why"}
print(claims.freeze_state(c, fr))' "$ROOT/scripts/lib" "$ROOT")" "all frozen
changed after freezing
changed after freezing" "every claim's rule is frozen unchanged; a changed rule (or scales_without) is reported"

# the magnitude rule, against bands computed by hand: gain g <-> excess g / (100 - g)
bands=$(python3 -c "
import sys; sys.path.insert(0, '$ROOT/scripts/lib'); import claims
print(' '.join('%.2f' % v for q, lo, hi in (('gain', 89, 96), ('ratio', 2.26, 2.26), ('slowdown', 6, 38), ('gain', 14.45, 14.45)) for v in claims.band(q, lo, hi)))")
# 89 %: e = 89/11 = 8.09, /2 = 4.045 -> 80.18 %; 96 %: e = 24, x2 = 48 -> 97.96 %.  2.26x: e 1.26 -> 0.63 and 2.52.
# 6-38 %: e 0.06 / 2 = 0.03, 0.38 x 2 = 0.76.  14.45 %: e 0.1689 -> 0.0845 (7.79 %) and 0.3379 (25.25 %)
tap_is "$bands" "80.18 97.96 1.63 3.52 3.00 76.00 7.79 25.25" "the magnitude bands are the hand-computed ones"

# scripts/migrate-claims converts a claim of the first format into one the registry accepts
printf '[{"id": "x", "paper": "p", "where": "w", "claim": "c on real data", "paper_value": 2.26, "experiment": "experiments/x.json", "measure": "SELECT 1 AS ours", "holds": {"op": ">", "value": 1.0, "range": [2.21, 2.26]}, "scales": ["small"]}]\n' \
    > "$work/bad/experiments/claims/x.json"
out=$(python3 "$ROOT/scripts/migrate-claims" "$work/bad/experiments/claims/x.json" 2>&1)
tap_like "$out" "magnitude ratio \[2.21, 2.26\].*" "the migration guesses the quantity and says so"
tap_is "$(python3 -c "
import json; c = json.load(open('$work/bad/experiments/claims/x.json'))[0]
print(c['direction'], c['magnitude']['quantity'], c['magnitude']['paper'], c['paper_data'], c['scales'], 'MIGRATED' in c['note'])")" \
    "{'op': '>', 'value': 1.0} ratio [2.21, 2.26] real ['small', 'paper'] True" "the migrated claim has direction, magnitude, paper_data, every form and a review mark"
tap_is "$(python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import claims
claims.load_claims(sys.argv[2]); print("accepted")' "$ROOT/scripts/lib" "$work/bad" 2>&1)" "accepted" "the registry accepts the migrated file"

out=$("$ROOT/scripts/reproduce" --no-setup --database festival_reproduce_test no-such-claim 2>&1)
tap_is "$?" "2" "an unknown claim is refused"
tap_like "$out" "no claim matches no-such-claim" "with a message"
tap_done
