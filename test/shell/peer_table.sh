#!/usr/bin/env bash
# experiments/peers_table.json (issue 26's table) as a smoke run: --scale
# 0.01 makes its 200k and 1M points 2,000 and 10,000, uniform and
# clustered.  One invocation of scripts/run-workload runs festival, PostGIS
# GiST and SP-GiST, SQLite's R*Tree and libspatialindex (per call and
# vectorised) side by side and prints the table.  Checked: it exits 0 and
# says, per data set, that every answer equals the NumPy brute force; the
# table has every row of the issue and a ratio in every cell; the load
# average is printed before and after; and the checks themselves fail on
# one answer too many or too few, on a window missing and on a kNN distance
# off (peer_table.check_counts / check_knn, which end the run with exit 1).
# The direct-I/O reads rows (depth-first, a level at a time and one
# query_batch_ids of all the windows, against fio at queue depth 32): with
# fio installed each has a ratio in every cell, the level search used no
# more submissions than depth-first for the same pages, and the batch no
# more pages and no more submissions than the level search; without fio
# the run says it skips them and their cells are "-".
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
fresh_database festival_peer_table_test
tap_plan 12

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ROOT/scripts/run-workload" --no-setup --config "$ROOT/experiments/peers_table.json" \
    --scale 0.01 --reps 1 >"$work/out" 2>&1
tap_is "$?" "0" "run-workload runs the smoke version of experiments/peers_table.json"
[ "$TAP_LAST_OK" -ne 0 ] && sed 's/^/#   /' "$work/out" | tail -20
out=$(cat "$work/out")

tap_is "$(grep -cE '^# (uniform|gaussian_clusters) (2000|10000): every answer equals the brute force' "$work/out")" "4" \
    "every answer of the four data sets equals the brute force's"
rows=$(grep -cE '^\| (query_batch|query_batch_ids|windows|kNN|R\*-tree build|quadratic build|xBR\+ bulk)[ ,].*( \| [0-9]+\.[0-9]{2} \([0-9]+\.[0-9]{2}\)){4} \| ' "$work/out")
tap_is "$rows" "20" "20 rows festival / peer with a CPU and a wall ratio for each data set (the issue's 14, level ÷ depth-first windows direct and buffered, the array batches against libspatialindex and one array per window, the reads' batch ÷ a level at a time)"
[ "$TAP_LAST_OK" -ne 0 ] && grep '^| ' "$work/out" | sed 's/^/#   /' | head -20
tap_is "$(grep -cE '^\| build CPU per object 2000 -> 10000, (quadratic|R\*-tree) \(no cache\) \| uniform x[0-9.]+, gaussian_clusters x[0-9.]+ \|' "$work/out")" "2" \
    "build CPU per object from the smaller to the larger size, per distribution"
tap_like "$out" '^# load average before: [0-9.]+ [0-9.]+ [0-9.]+' "the load average before"
tap_like "$out" '^# load average after: [0-9.]+ [0-9.]+ [0-9.]+' "the load average after"
tap_is "$(qv -c "SELECT count(*) FROM festival.index WHERE name LIKE 'pt26%'")" "0" "its indices are dropped"

if command -v fio >/dev/null; then
    tap_is "$(grep -cE '^\| direct-I/O reads, (depth-first|a level at a time|one query_batch_ids of the 300 windows), us per page / fio .*( \| [0-9]+\.[0-9]{2} \([0-9]+\.[0-9]{2}\)){4} \| ' "$work/out")" "3" \
        "the three direct-I/O reads rows against fio have a ratio in every cell"
else
    tap_like "$out" '^# fio is not installed' "without fio the run says it skips the reads rows"
fi
tap_is "$(awk '/^# direct I\/O \((io_uring|libaio)\): [0-9]+ pages per round, in [0-9]+ submissions depth-first, [0-9]+ a level at a time/ { n++; if ($13 + 0 > $10 + 0) bad++ } END { print n + 0, bad + 0 }' "$work/out")" "4 0" \
    "per data set, a level at a time used no more submissions than depth-first"
# the batch: fields 24 and 27 are its pages and submissions
tap_is "$(awk '/^# direct I\/O \((io_uring|libaio)\): .* the batch [0-9]+ pages in [0-9]+ submissions/ { n++; if ($24 + 0 > $5 + 0 || $27 + 0 > $13 + 0) bad++ } END { print n + 0, bad + 0 }' "$work/out")" "4 0" \
    "per data set, one query_batch_ids read no more pages than the windows one by one, in no more submissions than a level at a time"

# The checks fail on any difference (each line: the exception's class, or "passed").
checks=$(/usr/bin/python3 - "$ROOT/scripts/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import peer_table as pt
cases = [
    (pt.check_counts, ("s", [1, 2, 3], [1, 2, 3])),
    (pt.check_counts, ("s", [1, 2, 4], [1, 2, 3])),
    (pt.check_counts, ("s", [1, 2, 2], [1, 2, 3])),
    (pt.check_counts, ("s", [1, 2], [1, 2, 3])),
    (pt.check_knn, ("s", [[2.0, 1.0]], [[1.0, 2.0]])),
    (pt.check_knn, ("s", [[1.0, 2.000001]], [[1.0, 2.0]])),
    (pt.check_knn, ("s", [[1.0]], [[1.0, 2.0]])),
]
for f, a in cases:
    try:
        f(*a)
        print("passed")
    except pt.TableError:
        print("TableError")
PY
)
tap_is "$(echo $checks)" "passed TableError TableError TableError passed TableError TableError" \
    "equal answers pass; one more, one fewer, a window missing, a distance off, a neighbour missing fail"

# Without fio's measure the reads rows print "-" (what a run without fio prints).
rows=$(/usr/bin/python3 - "$ROOT/scripts/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import peer_table as pt
t = type("T", (), {})()
m = pt.Measure(0)
m.samples = {"io_depth_first": [(100.0, 110.0)], "io_level": [(50.0, 55.0)]}
t.results = {(10, "uniform"): m}
pt.print_table(t, {"distributions": ["uniform"]})
PY
)
tap_is "$(echo "$rows" | grep -cE '^\| direct-I/O reads, .* \| - \(-\) \| ')" "3" \
    "without fio's measure the three reads rows print no ratio"
tap_done
