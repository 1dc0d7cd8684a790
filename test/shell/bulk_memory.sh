#!/usr/bin/env bash
# The bulk loads in bounded memory keep nothing that grows with the
# points beside their external sorts (at most two alive, half of
# maintenance_work_mem each): the xBR+-tree's per-leaf records
# (xbrtree_bulk.c), STR's parents and slices (rtree_bulk.c) and the grid
# file's halvings and buckets (gridfile_bulk.c) go through temporary files
# and further sorts, so the backend's peak private memory does not grow
# with the points.  Measured here as the
# peak of RssAnon (/proc/<pid>/status, sampled every 5 ms, less its value
# before the build, as scripts/run-workload --memory does) with
# maintenance_work_mem = 4MB: a load of 1.25M points may take at most
# 256 kB more than one of 700k points (before the xBR+-tree's arrays were
# first taken out of its sort's budget: 7124 and 7696 kB; now 6932 and
# 6920 kB), and at most 3 MB more than
# maintenance_work_mem (a new backend's first build loads PostGIS and
# fills its caches, and the gathering of the source rows and its hand-over
# to the first sort take a little beyond it, the same at any size).
# Then 360k points in 32MB, which the in-memory load took past its budget
# (45584 kB before; 30932 kB after, through the external sort).
# Each index is checked and answers a window as PostGIS.
source "$(dirname "$0")/lib/tap.bash"

fresh_database festival_bulk_memory
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ] || ! command -v python3 >/dev/null; then
    tap_skip_all "needs a server on a local Unix socket (the test reads the backend's /proc entry) and python3"
fi
tap_plan 54

q <<'SQL' >/dev/null
SET client_min_messages = warning;
SELECT festival.create_device('bm', io => 'buffered');
SELECT festival.generate_points('small', 700000, 'uniform', 14, ST_MakeBox2D(ST_MakePoint(0,0), ST_MakePoint(1e6,1e6)));
SELECT festival.generate_points('big', 1250000, 'uniform', 14, ST_MakeBox2D(ST_MakePoint(0,0), ST_MakePoint(1e6,1e6)));
SELECT festival.generate_points('mid', 360000, 'uniform', 14, ST_MakeBox2D(ST_MakePoint(0,0), ST_MakePoint(1e6,1e6)));
-- a build from a table never analyzed costs the backend about 1.2 MB
-- more (the same at any size, not the load's own); analyzed here, the
-- figures do not depend on whether autovacuum came first
ANALYZE small, big, mid;
SELECT festival.create_index('xm', 'xbrtree', 'bm', '{"page_size": 4096}', 'mid');
SELECT festival.create_index('xs', 'xbrtree', 'bm', '{"page_size": 4096}', 'small');
SELECT festival.create_index('xb', 'xbrtree', 'bm', '{"page_size": 4096}', 'big');
SELECT festival.create_index(s || n, structure, 'bm', '{"page_size": 4096}', CASE s WHEN 's' THEN 'small' ELSE 'big' END)
FROM (VALUES ('r1', 'rtree'), ('x1', 'xbrtree'), ('g1', 'gridfile'), ('h1', 'hilbert')) v(n, structure),
     unnest(ARRAY['s', 'b']) s;
SQL

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# peak <index> [mwm [method]]: "<peak RssAnon above the start, kB> <psql output on one
# line>" for a build by method ('bulk') with maintenance_work_mem = mwm (4MB) on a new
# backend (what a first build loads once, PostGIS and the caches, is in both figures)
peak() {
    local fifo="$work/fifo" out="$work/out" stop="$work/stop" pid sampler
    rm -f "$fifo" "$out" "$stop" "$work/peak"
    mkfifo "$fifo"
    psql -X -qAt <"$fifo" >"$out" 2>&1 &
    exec 3>"$fifo"
    echo "SELECT 'pid=' || pg_backend_pid();" >&3
    echo "SET maintenance_work_mem = '${2:-4MB}'; SET jit = off; SET client_min_messages = debug1;" >&3
    for _ in $(seq 100); do grep -q '^pid=' "$out" && break; sleep 0.1; done
    pid=$(sed -n 's/^pid=//p' "$out")
    python3 - "$pid" "$stop" >"$work/peak" <<'PY' &
import os, sys, time
path, stop = f"/proc/{sys.argv[1]}/status", sys.argv[2]
def anon():
    with open(path) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
base = peak = anon()
print("ready", flush=True)
while not os.path.exists(stop):
    peak = max(peak, anon())
    time.sleep(0.005)
print(max(peak, anon()) - base)
PY
    sampler=$!
    for _ in $(seq 1200); do grep -q ready "$work/peak" && break; sleep 0.05; done
    echo "SELECT 'built=' || festival.build('$1', '${3:-bulk}'); SELECT 'done';" >&3
    for _ in $(seq 1200); do grep -q '^done' "$out" && break; sleep 0.05; done
    touch "$stop"
    wait "$sampler"
    exec 3>&-
    wait
    echo "$(tail -1 "$work/peak") $(tr '\n' ' ' <"$out")"
}

# flat_pair <label> <700k index> <1.25M index> <mwm kB> [method]: both loads
# go through the external sort, the sampler saw each (at least half of mwm,
# what the sort alone fills), the peak grows by at most 256 kB from 700k to
# 1.25M points and stays within mwm + 3 MB; sets big to the 1.25M build's
# line
flat_pair() {
    local label=$1 mwm_kb=$4 small small_kb big_kb
    small=$(peak "$2" "$((mwm_kb / 1024))MB" "${5:-bulk}")
    big=$(peak "$3" "$((mwm_kb / 1024))MB" "${5:-bulk}")
    small_kb=${small%% *}
    big_kb=${big%% *}
    echo "# $label: peak RssAnon above the start: 700k points ${small_kb} kB, 1.25M points ${big_kb} kB (maintenance_work_mem ${mwm_kb} kB)"
    tap_like "$small" 'continues in an external sort.*built=700000' "$label, 700k points: loaded through the external sort"
    tap_like "$big" 'continues in an external sort.*built=1250000' "$label, 1.25M points: loaded through the external sort"
    tap_ok $((small_kb >= mwm_kb / 2 ? 0 : 1)) "$label, 700k points: the sampler saw the build (${small_kb} kB)"
    tap_ok $((big_kb >= mwm_kb / 2 ? 0 : 1)) "$label, 1.25M points: the sampler saw the build (${big_kb} kB)"
    tap_ok $((big_kb - small_kb <= 256 ? 0 : 1)) "$label: the peak grows by at most 256 kB from 700k to 1.25M points (${small_kb} kB, ${big_kb} kB)"
    tap_ok $((big_kb <= mwm_kb + 3072 ? 0 : 1)) "$label, 1.25M points: the peak is at most maintenance_work_mem + 3 MB (${big_kb} kB)"
}

flat_pair "xBR+ bulk in 4MB" xs xb 4096

# 360k points in 32MB: the in-memory load would hold 124 bytes a point
# (the gathered BulkItem, the loader's entry and its place), 45 MB; it goes
# through the external sort instead (api_index.c's bulk_over_budget was
# counting 88 bytes, and the peak was 46 MB before)
mid=$(peak xm 32MB)
mid_kb=${mid%% *}
echo "# peak RssAnon above the start: 360k points ${mid_kb} kB (maintenance_work_mem 32768 kB)"
tap_like "$mid" 'continues in an external sort.*built=360000' "360k points in 32MB: loaded through the external sort"
tap_ok $((mid_kb >= 16384 ? 0 : 1)) "360k points in 32MB: the sampler saw the build (${mid_kb} kB)"
tap_ok $((mid_kb <= 32768 + 3584 ? 0 : 1)) "360k points in 32MB: the peak is at most maintenance_work_mem + 3.5 MB (${mid_kb} kB)"

# In 1MB (PostgreSQL's least maintenance_work_mem) the xBR+-tree's
# per-leaf records (about 310 bytes a leaf with a run list that
# partition did not free) exceed the budget at these sizes: before they
# went to temporary files and further sorts, its peak grew with the
# points (700k / 1.25M points: 3740 / 4992 kB; now 3264 / 3252 kB).  STR,
# the grid file and the Hilbert R-tree peak about alike at both sizes,
# before (3676 / 3888, 3776 / 3776 and 3776 / 3776 kB) as now (3644 /
# 3636, 3640 / 3536 and 3560 / 3560 kB): what they kept
# beside a sort (STR's parents, up to half of the budget, and a slice of
# about sqrt(n * M) boxes; the grid file's halvings and buckets, 64 bytes
# a bucket; the Hilbert R-tree's 4 bytes a node) stays below what the
# hand-over from the gathered rows to the first sort takes at this size.
for l in r1:str x1:bulk g1:bulk h1:hilbert; do
    ix=${l%%:*}
    flat_pair "$ix (${l#*:}) in 1MB" "s$ix" "b$ix" 1024 "${l#*:}"
    if [ "$ix" = r1 ]; then
        # a slice of 1.25M points, 11161 boxes, is more than the 512 kB
        # left beside the input's sort: it is sorted on its own
        tap_like "$big" 'slices of level 0 of index "br1" go to external sorts' "r1, 1.25M points in 1MB: the slices go through sorts of their own"
    fi
done

window="ST_MakeEnvelope(200000, 300000, 260000, 390000)"
for ix in xs:small xb:big sr1:small br1:big sx1:small bx1:big sg1:small bg1:big sh1:small bh1:big; do
    out=$(q -c "SELECT 'check=' || count(*) FROM festival.check('${ix%%:*}')" \
            -c "SELECT 'query=' || count(*) FROM festival.query('${ix%%:*}', $window)" \
            -c "SELECT 'brute=' || count(*) FROM ${ix#*:} WHERE ST_Intersects(geom, $window)" | tr '\n' ' ')
    tap_like "$out" 'check=0' "index ${ix%%:*}: check() is clean"
    q_n=$(sed -n 's/.*query=\([0-9]*\).*/\1/p' <<<"$out")
    b_n=$(sed -n 's/.*brute=\([0-9]*\).*/\1/p' <<<"$out")
    tap_is "$q_n" "$b_n" "index ${ix%%:*}: a window answers as PostGIS ($b_n points)"
done
tap_done
