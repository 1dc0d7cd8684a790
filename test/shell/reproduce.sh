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
# replay shows every shipped profile, and bad arguments are refused.
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
fresh_database festival_reproduce_test
tap_plan 9

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

out=$("$ROOT/scripts/reproduce" --no-setup --database festival_reproduce_test no-such-claim 2>&1)
tap_is "$?" "2" "an unknown claim is refused"
tap_like "$out" "no claim matches no-such-claim" "with a message"
tap_done
