#!/usr/bin/env python3
"""Re-cost the stored runs of experiments/carniel2017-rtree.json on a changed
ssd_kingston_v300 profile, or with an extra CPU cost per node entry, and
re-evaluate every claim of experiments/claims/carniel201[67].json that uses
them, at the small and the paper scale, without running anything again.
(An analysis aid for docs/experiments.md, "Paper scale: why four page-size
claims fail"; not a shipped tool.)

The SSD runs (device model 3, no drive cache, sync engine: one page per
command) cost exactly (src/device/sim.c)
    reads  x (read_latency_us  + page / seq_read_mbps)
  + writes x (write_latency_us + page / seq_write_mbps)
  + writes x (read_latency_us + 4096 / seq_read_mbps)   if page < 4096 (read-modify-write)
  + erases x erase_latency_us + interference hits x interference_us,
and the interference hits are what remains of the stored device seconds, so
a change of those parameters re-costs them exactly.  HDD runs are kept as
stored.  cpu_per_entry_us=C adds C microseconds of CPU per entry of every
node a run read or wrote (a window's entries_examined; a build's estimated
from its reads and writes per level and the tree's mean node occupancy).
hdd_hit_us=H re-costs the HDD builds (every command a cache hit there: commands
x the difference); the HDD windows, which have misses, are kept as stored.
time=device decides on device seconds alone.

Usage: recost.py [name=value ...]      e.g. recost.py read_latency_us=130
run from the repository root, with PGDATABASE holding a table
    runs(scale text, run_id bigint, label text, device_seconds float8,
         cpu float8, pages_read bigint, pages_written bigint, profile text,
         metrics jsonb)
copied from festival.run (cpu = metrics->>'index_cpu_seconds'); see
docs/experiments.md for the copy commands.
"""
import json, subprocess, sys, glob

BASE = dict(read_latency_us=100.0, write_latency_us=50.0, seq_read_mbps=250.0,
            seq_write_mbps=200.0, erase_latency_us=2000.0, interference_us=200.0,
            time="elapsed", cpu_per_entry_us=0.0,
            hdd_hit_us=140.0)
P = dict(BASE)
for a in sys.argv[1:]:
    k, v = a.split("=")
    P[k] = v if k == "time" else float(v)

def cost_sql(p, intf=True):
    """Seconds of an SSD run under profile p (intf: add the interference hits)."""
    sql = (f"(pr * ({p['read_latency_us']} + pg / {p['seq_read_mbps']})"
           f" + pw * ({p['write_latency_us']} + pg / {p['seq_write_mbps']})"
           f" + CASE WHEN pg < 4096 THEN pw * ({p['read_latency_us']} + 4096 / {p['seq_read_mbps']}) ELSE 0 END"
           f" + erases * {p['erase_latency_us']}")
    if intf:
        sql += f" + intf * {p['interference_us']}"
    return sql + ") / 1e6"

setup = f"""
CREATE TEMP VIEW rr AS
SELECT scale, run_id, label, device_seconds, cpu, pages_read AS pr, pages_written AS pw, profile,
       (regexp_match(label, 'page=(\\d+)'))[1]::int AS pg,
       coalesce((metrics->>'device_erases')::float8, 0) AS erases,
       -- entries of the nodes a run read or wrote: a window search examines every
       -- entry of every node it reads (entries_examined); a build's are estimated
       -- from the reads and writes per level and the mean occupancy of leaves and
       -- internal nodes of the finished tree
       CASE WHEN label LIKE '%workload=build%' THEN
         ((metrics->'reads_per_level'->>'0')::float8 + (metrics->'writes_per_level'->>'0')::float8)
           * (metrics->>'inserts')::float8 / ((metrics->>'splits_leaf')::float8 + 1)
         + (pages_read + pages_written - (metrics->'reads_per_level'->>'0')::float8
            - (metrics->'writes_per_level'->>'0')::float8)
           * ((metrics->>'nodes_allocated')::float8 - 1)
           / greatest((metrics->>'nodes_allocated')::float8 - (metrics->>'splits_leaf')::float8 - 1, 1)
       ELSE coalesce((metrics->>'entries_examined')::float8, 0) END AS ee
FROM runs;
CREATE TEMP VIEW rr2 AS
SELECT *, round(((device_seconds * 1e6 - ({cost_sql(BASE, False)}) * 1e6) / {BASE['interference_us']})::numeric) AS intf FROM rr;
CREATE TEMP TABLE rc AS
SELECT scale, run_id, label, pr AS pages_read, pw AS pages_written, profile, cpu + ee * {P['cpu_per_entry_us']} / 1e6 AS cpu,
       CASE WHEN label LIKE '%device=rp_ssd%' THEN {cost_sql(P)}
            WHEN label LIKE '%workload=build%'
            THEN device_seconds + (pr + pw) * ({P['hdd_hit_us']} - {BASE['hdd_hit_us']}) / 1e6
            ELSE device_seconds END AS device_seconds
FROM rr2;
"""

claims = []
for f in sorted(glob.glob("experiments/claims/carniel201[67].json")):
    for c in json.load(open(f)):
        if c.get("experiment") == "experiments/carniel2017-rtree.json":
            claims.append(c)

def psql(sql):
    out = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(out.stderr)
    return out.stdout.strip()

rows = []
for scale in ("small", "paper"):
    view = f"""CREATE TEMP VIEW claim_run AS
SELECT run_id, label, (SELECT coalesce(jsonb_object_agg(split_part(x, '=', 1), substr(x, strpos(x, '=') + 1)), '{{}}')
        FROM unnest(string_to_array(label, ' ')) x WHERE x LIKE '%=%') AS t,
       device_seconds {'+ cpu' if P['time'] == 'elapsed' else ''} AS elapsed, device_seconds,
       pages_read, pages_written, profile
FROM rc WHERE scale = '{scale}';"""
    for c in claims:
        if scale not in c["scales"]:
            continue
        v = psql(setup + view + c["measure"])
        ours = float(v) if v else None
        op, val = c["holds"]["op"], c["holds"]["value"]
        ok = ours is not None and eval(f"{ours} {op} {val}")
        rows.append((c["id"], scale, ours, "holds" if ok else "FAILS"))
print("params:", {k: v for k, v in P.items() if BASE.get(k) != v} or "shipped")
for r in rows:
    print(f"{r[0]:58s} {r[1]:6s} {r[2]:>10.4g} {r[3]}")
