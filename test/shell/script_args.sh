#!/usr/bin/env bash
# The scripts' arguments are checked before any set-up (issue 28 item 8):
# a missing option value, an unknown option, a bad value or a claim pattern
# that matches nothing exits 2 with a message naming the script, before
# installing, building or starting a cluster; --help prints the usage
# (the header comment), never lines of code.  Each case runs in a copy of
# the environment without PG* variables, so that a script that went on
# would try to build and start a throwaway cluster, which the output
# would show ("==>" set-up lines).
source "$(dirname "$0")/lib/tap.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# misspelled keys inside a configuration's sections (item 7): refused, not
# run with the defaults
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo '{"knn": {"K": [10]}}' > "$TMP/knn.json"
echo '{"windows": {"area_percent": [1], "cnt": 5}}' > "$TMP/windows.json"
echo '{"empty": {"counts": 3}}' > "$TMP/empty.json"
echo '{"data": {"pionts": 3}}' > "$TMP/data.json"
echo '{}' > "$TMP/plain.json"
CASES=(
    "run-workload --config $TMP/knn.json --dry-run"
    "run-workload --config $TMP/windows.json --dry-run"
    "run-workload --config $TMP/empty.json --dry-run"
    "run-workload --config $TMP/data.json --dry-run"
    "reproduce --scale"
    "reproduce --sclae small"
    "reproduce --budget-hours"
    "reproduce no-such-claim-anywhere"
    "run-workload --config"
    "run-workload --database"
    "run-workload --scale"
    "run-workload --no-such-option"
    "demo --points"
    "demo --points many"
    "demo --io sideways"
    "demo --no-such-option"
    "campaign-faults --seed"
    "run-workload --worker"
    "run-workload --worker dbname=w"
    "run-workload --config $TMP/plain.json --queue-only --report r"
    "reproduce --worker dbname=w --budget-hours 1"
    "festival-worker"
    "festival-worker --coordinator"
)
HELP=(reproduce run-workload demo campaign-crash campaign-faults campaign-flips load-dataset
      festival-worker)
tap_plan $(( ${#CASES[@]} * 2 + ${#HELP[@]} ))

for c in "${CASES[@]}"; do
    read -r -a argv <<<"$c"
    out=$(env -u PGHOST -u PGPORT -u PGDATABASE -u PGSERVICE -u PGUSER \
          timeout 60 "$ROOT/scripts/${argv[0]}" "${argv[@]:1}" 2>&1 </dev/null)
    rc=$?
    tap_is "$rc" 2 "$c: exit 2"
    tap_unlike "$out" '==>|unbound variable|Traceback' "$c: no set-up, no shell or Python error before the message"
    echo "$out" | head -2 | sed 's/^/#   /'
done

for s in "${HELP[@]}"; do
    out=$("$ROOT/scripts/$s" --help 2>&1 </dev/null)
    # usage text: its first line names the script; no shell code
    first=$(echo "$out" | head -1)
    if [[ "$first" == *"scripts/$s"* ]] && ! grep -qE '^(source|set -|if |while |case |\s+--[a-z-]+\) )' <<<"$out"; then
        tap_ok 0 "$s --help: the usage, no code"
    else
        tap_ok 1 "$s --help: the usage, no code"
        echo "$out" | head -5 | sed 's/^/#   /'
    fi
done
tap_done
