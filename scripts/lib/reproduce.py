#!/usr/bin/python3
"""The Python part of scripts/reproduce (see there for usage).

Reads the claim registry (experiments/claims/*.json, scripts/lib/claims.py),
the calibration set and the drive-model parameters' sources
(experiments/calibration.json) and the frozen rules
(experiments/claims-frozen.json); picks the claims asked for; splits the
experiments they need into cells (one configuration of one experiment at one
scale, scripts/lib/cells.py) and runs the cells not finished yet in this
database (scripts/run-workload --resume), printing progress and an ETA;
decides every claim whose experiments are complete, in direction and in
magnitude (claims.py); and writes DIR/report.md and DIR/report.html
(reproduce_report.py).

Measures are SQL over festival.run; they may use the temporary view
claim_run that this script creates in its session:

    claim_run(run_id, label, t jsonb, elapsed, device_seconds, pages_read,
              pages_written, profile)

t holds the label's key=value tokens (t->>'exp', t->>'page', ...), elapsed
is model_elapsed_seconds (index CPU + virtual device time), or with
--time device the virtual device seconds alone; replays are left out, and
so is every run that is no run of one of the current cells (its label does
not start with a cell id of the chosen experiments at this scale): the runs
of a configuration an experiment file no longer has (an earlier cache size,
another form) stay in festival.run, and a measure that selects runs by a
few label tokens would otherwise sum over both.

--time device makes every claim a function of deterministic virtual time
only: the index CPU seconds in the modelled elapsed time vary from run to run
on a shared machine, which is enough to flip a close claim.  CI's test uses it.

Exit status: 0 when every claim decided holds in both senses (or, with
--expect, exactly the listed claims fail), 1 otherwise, 2 on a usage or
registry error.
"""

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cells  # noqa: E402
import machines  # noqa: E402
import claims as registry  # noqa: E402
import reproduce_report as report  # noqa: E402
import workload  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# verdicts of a claim at one scale
HOLDS = "holds"
FAILS = "does not hold"
OFFLINE = "cannot be reproduced offline"
NO_FORM = "no experiment form at this scale"
INCOMPLETE = "not run yet"
ERROR = "measure failed"

ELAPSED_COLUMN = {"modelled": "model_elapsed_seconds", "device": "device_seconds"}

CLAIM_VIEW = """
CREATE OR REPLACE TEMP VIEW claim_run AS
SELECT r.run_id, r.label,
       (SELECT coalesce(jsonb_object_agg(split_part(x, '=', 1), substr(x, strpos(x, '=') + 1)), '{}')
        FROM unnest(string_to_array(r.label, ' ')) x WHERE x LIKE '%=%') AS t,
       r.{elapsed_column} AS elapsed, r.device_seconds, r.pages_read, r.pages_written,
       r.profile
FROM festival.run r WHERE r.replay_of IS NULL
  AND EXISTS (SELECT 1 FROM claim_cell c WHERE starts_with(r.label, c.cell || ' '))
"""

# the cells of the chosen experiments at the scale, which claim_run keeps
CLAIM_CELLS = """
CREATE TEMP TABLE IF NOT EXISTS claim_cell (cell text PRIMARY KEY);
TRUNCATE claim_cell;
"""

ESTIMATES = os.path.join(ROOT, "experiments", "cell-estimates.json")


class ReproduceError(Exception):
    """A problem to report to the user in one line."""


def parse_args(argv):
    p = argparse.ArgumentParser(prog="reproduce", description=__doc__.split("\n")[0])
    p.add_argument("claims", nargs="*",
                   help="claim ids or glob patterns (carniel2017-*); default: every claim")
    p.add_argument("--scale", choices=registry.SCALES, default="small")
    p.add_argument("--output", help="report directory (default reproduce-SCALE)")
    p.add_argument("--reuse", action="store_true",
                   help="run nothing: decide the claims on the runs already stored")
    p.add_argument("--rerun", action="store_true",
                   help="forget the chosen claims' finished cells and run them again")
    p.add_argument("--budget-hours", type=float,
                   help="start no cell that would end after this many hours (by the "
                        "estimates); the report is then partial and says so")
    p.add_argument("--list", action="store_true", help="list the claims and exit")
    p.add_argument("--list-cells", action="store_true",
                   help="list the cells the chosen claims need at the scale, with their "
                        "estimated wall time and whether they are finished, and exit")
    p.add_argument("--freeze", action="store_true",
                   help="record the rules of the chosen claims that are not frozen yet in "
                        "experiments/claims-frozen.json, and exit")
    p.add_argument("--time", choices=("modelled", "device"), default="modelled",
                   help="what a claim's elapsed time is: index CPU + virtual device seconds "
                        "(modelled, the default) or the virtual device seconds alone (device: "
                        "deterministic, for tests)")
    p.add_argument("--dpi", type=int, default=80)
    p.add_argument("--no-charts", action="store_true",
                   help="skip the per-experiment reports (scripts/report); CI uses it")
    p.add_argument("--no-replay", action="store_true",
                   help="skip the replay of one traced build on every shipped drive")
    p.add_argument("--worker", action="append", default=[], metavar="CONNINFO",
                   help="run the cells over worker servers (repeat; scripts/run-workload "
                        "--worker, docs/distributed.md)")
    p.add_argument("--queue-only", action="store_true",
                   help="queue the cells for workers that scripts/festival-worker runs")
    p.add_argument("--stall-seconds", type=float, help=argparse.SUPPRESS)
    p.add_argument("--heartbeat", type=float, help=argparse.SUPPRESS)
    p.add_argument("--cells-per-job", type=int, help=argparse.SUPPRESS)
    p.add_argument("--check-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--expect", metavar="FILE",
                   help="lines 'CLAIM-ID why': claims known not to hold (in direction or "
                        "magnitude) at this scale; exit 1 when any other decided claim does not "
                        "hold, or a listed one holds (so the list stays exact)")
    args = p.parse_args(argv)
    if (args.worker or args.queue_only) and args.budget_hours:
        p.error("--budget-hours does not go with --worker or --queue-only")
    return args


def worker_args(args):
    """The options that make scripts/run-workload run the cells over workers."""
    out = [x for w in args.worker for x in ("--worker", w)]
    out += ["--queue-only"] if args.queue_only else []
    for opt in ("stall_seconds", "heartbeat", "cells_per_job"):
        if getattr(args, opt) is not None:
            out += ["--" + opt.replace("_", "-"), f"{getattr(args, opt):g}"]
    return out


def select(claims, patterns):
    if not patterns:
        return claims
    out = [c for c in claims if any(fnmatch.fnmatchcase(c["id"], p) for p in patterns)]
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(c["id"], p) for c in claims)]
    if unmatched:
        raise ReproduceError(f"no claim matches {', '.join(unmatched)}; "
                             "scripts/reproduce --list shows them")
    return out


# ----------------------------------------------------------------------
# Cells
# ----------------------------------------------------------------------

def scaled_experiment(path, scale):
    """The experiment's form for the scale, normalised as run-workload runs it."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return cells.load_experiment(workload.merge_scale(json.load(f), scale))


def experiment_cells(path, scale):
    """[(cell id, digest)] of an experiment at a scale, in the order the runner runs them."""
    exp, own = scaled_experiment(path, scale)
    return exp["name"], [(cid, dg) for cid, dg, _ in cells.cell_list(exp, own)]


def estimates(scale):
    """Estimated wall seconds per cell: experiments/cell-estimates.json (measured)."""
    if not os.path.exists(ESTIMATES):
        return {}
    with open(ESTIMATES, encoding="utf-8") as f:
        return json.load(f).get(scale, {})


def estimate(est, name, cell):
    e = est.get(name)
    if e is None:
        return est.get("_default", 60.0)
    for sub, secs in e.get("match", []):
        if sub in cell:
            return float(secs)
    return float(e.get("default", est.get("_default", 60.0)))


def cell_states(conn, cell_list):
    """{cell: finished?} for [(cell, digest)]."""
    cells.ensure(conn)
    return {cid: cells.finished(conn, cid, dg) for cid, dg in cell_list}


def run_experiment(path, scale, plan_path, deadline, workers=()):
    env = dict(os.environ, FEST_CELL_PLAN=plan_path)
    if deadline:
        env["FEST_CELL_DEADLINE"] = str(deadline)
    print(f"reproduce: running {path} at scale {scale}", file=sys.stderr, flush=True)
    cmd = [os.path.join(ROOT, "scripts", "run-workload"), "--no-setup", "--resume",
           "--config", os.path.join(ROOT, path), "--scale", scale, *workers]
    rc = subprocess.call(cmd, env=env)
    if rc != 0:
        raise ReproduceError(f"scripts/run-workload failed on {path} (exit {rc})")


# ----------------------------------------------------------------------
# Deciding claims
# ----------------------------------------------------------------------

def evaluate(conn, c, scale, complete):
    """(status, ours, direction ok, magnitude ok or None, why) of one claim at a scale."""
    if c["experiment"] is None:
        return OFFLINE, None, None, None, c.get("note", "")
    if scale not in c["scales"]:
        return NO_FORM, None, None, None, c.get("scales_without", {}).get(scale, "")
    missing = [p for p in registry.experiments_of(c) if not complete.get(p)]
    if missing:
        return INCOMPLETE, None, None, None, "cells missing in " + ", ".join(missing)
    try:
        with conn.transaction():
            cur = conn.execute(c["measure"])
            rows = cur.fetchall()
            cols = [d.name for d in cur.description]
    except Exception as e:  # a broken measure is reported, not fatal
        return ERROR, None, None, None, str(e).splitlines()[0]
    if len(rows) != 1 or cols != ["ours"]:
        return ERROR, None, None, None, f"the measure returned {len(rows)} rows with columns {cols}"
    if rows[0][0] is None:
        return ERROR, None, None, None, "the measure returned NULL (no runs?)"
    ours = float(rows[0][0])
    d_ok = registry.direction_holds(c, ours)
    m_ok = registry.magnitude_holds(c, ours)
    status = HOLDS if d_ok and m_ok is not False else FAILS
    return status, ours, d_ok, m_ok, ""


def read_expect(path):
    known = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                known.add(line.split()[0])
    return known


def check_parameters(conn, cal):
    """Every parameter of experiments/calibration.json has the value the profiles ship."""
    bad = []
    for p in cal.get("parameters", []):
        if p.get("value") is None or p.get("parameter", "").startswith("rule:"):
            continue
        col = p["parameter"]
        row = conn.execute("SELECT to_jsonb(d) -> %s FROM festival.device_profile d "
                           "WHERE name = %s", (col, p["profile"])).fetchone()
        if row is None or row[0] is None:
            bad.append(f"{p['profile']}.{col}: no such profile or column")
        elif float(row[0]) != float(p["value"]):
            bad.append(f"{p['profile']}.{col}: festival ships {row[0]}, calibration.json says "
                       f"{p['value']}")
    if bad:
        raise ReproduceError("experiments/calibration.json disagrees with festival.device_profile: "
                             + "; ".join(bad))


def main(argv):
    args = parse_args(argv)
    try:
        all_claims = registry.load_claims(ROOT)
        cal = registry.load_calibration(ROOT, all_claims)
        chosen = select(all_claims, args.claims)
        if args.check_only:
            # scripts/reproduce: arguments and patterns are right, set-up may begin
            return 0
        if args.list:
            for c in chosen:
                print(f"{c['id']:60s} {','.join(c['scales']) or 'offline':20s} {c['claim']}")
            return 0
        if args.freeze:
            added = registry.freeze(ROOT, chosen, time.strftime("%Y-%m-%d", time.gmtime()))
            print(f"reproduce: froze {len(added)} rules in {registry.FROZEN}"
                  + (": " + ", ".join(added) if added else ""), file=sys.stderr)
            return 0
        frozen = registry.load_frozen(ROOT)
        paths = []
        for c in chosen:
            for p in registry.experiments_of(c):
                if p not in paths and args.scale in c["scales"]:
                    paths.append(p)
        est = estimates(args.scale)
        plan = []          # (path, experiment name, [(cell, digest, estimate)])
        for p in paths:
            name, cl = experiment_cells(p, args.scale)
            plan.append((p, name, [(cid, dg, estimate(est, name, cid)) for cid, dg in cl]))
        import psycopg
        with psycopg.connect(autocommit=True) as conn:
            cells.nice_backend(conn)
            conn.execute("SET client_min_messages = warning")
            conn.execute("CREATE EXTENSION IF NOT EXISTS festival CASCADE")
            check_parameters(conn, cal)
            cells.ensure(conn)
            if args.rerun:
                for _, _, cl in plan:
                    for cid, _, _ in cl:
                        cells.clear(conn, cid)
            state = {}
            for _, _, cl in plan:
                state.update(cell_states(conn, [(cid, dg) for cid, dg, _ in cl]))
            if args.list_cells:
                total = 0.0
                for p, name, cl in plan:
                    for cid, _, e in cl:
                        done = state[cid]
                        total += 0 if done else e
                        print(f"{'finished' if done else 'to run':9s} {e:8.0f} s  {cid}")
                print(f"reproduce: {sum(len(cl) for _, _, cl in plan)} cells, "
                      f"{sum(1 for v in state.values() if v)} finished; the rest estimated "
                      f"{cells.fmt_duration(total)}", file=sys.stderr)
                return 0
            outdir = args.output or f"reproduce-{args.scale}"
            started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            t0 = time.monotonic()
            if not args.reuse:
                deadline = time.time() + args.budget_hours * 3600 if args.budget_hours else None
                with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
                    json.dump({"started": time.time(),
                               "cells": [[cid, e] for _, _, cl in plan for cid, _, e in cl]}, tmp)
                try:
                    left = sum(e for _, _, cl in plan for cid, _, e in cl if not state[cid])
                    print(f"reproduce: {sum(len(cl) for _, _, cl in plan)} cells, "
                          f"{sum(1 for v in state.values() if v)} finished before; the rest "
                          f"estimated {cells.fmt_duration(left)}", file=sys.stderr, flush=True)
                    for p, name, cl in plan:
                        if all(state[cid] for cid, _, _ in cl):
                            print(f"reproduce: {p}: every cell finished before",
                                  file=sys.stderr, flush=True)
                            continue
                        if deadline and time.time() >= deadline:
                            break
                        run_experiment(p, args.scale, tmp.name, deadline, worker_args(args))
                finally:
                    os.unlink(tmp.name)
                for _, _, cl in plan:
                    state.update(cell_states(conn, [(cid, dg) for cid, dg, _ in cl]))
            complete = {p: all(state[cid] for cid, _, _ in cl) for p, _, cl in plan}
            cells_done = sum(1 for v in state.values() if v)
            conn.execute(CLAIM_CELLS)
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO claim_cell VALUES (%s) ON CONFLICT DO NOTHING",
                                [(cid,) for _, _, cl in plan for cid, _, _ in cl])
            conn.execute(CLAIM_VIEW.replace("{elapsed_column}", ELAPSED_COLUMN[args.time]))
            results = []
            for c in chosen:
                st, ours, d_ok, m_ok, why = evaluate(conn, c, args.scale, complete)
                results.append({"claim": c, "status": st, "ours": ours, "direction": d_ok,
                                "magnitude": m_ok, "why": why,
                                "set": ("calibration" if c["id"] in cal["calibration_claims"]
                                        else "held out"),
                                "frozen": registry.freeze_state(c, frozen)})
            replay = None
            if not args.no_replay:
                replay = report.replay_section(conn, args.scale)
            wall = sum(r[0] for r in conn.execute(
                f"SELECT coalesce(sum(wall_seconds), 0) FROM {cells.TABLE} WHERE cell = ANY(%s)",
                ([cid for _, _, cl in plan for cid, _, _ in cl],)))
            meta = {"scale": args.scale, "started": started, "elapsed": time.monotonic() - t0,
                    "reused": args.reuse, "time": args.time, "patterns": args.claims,
                    "cells": sum(len(cl) for _, _, cl in plan), "cells_done": cells_done,
                    "cell_wall": wall, "experiments": [(p, n) for p, n, _ in plan],
                    "complete": complete, "calibration": cal,
                    "notes": report.load_notes(ROOT, args.scale),
                    "machines": machines.note(conn, [r[0] for r in conn.execute(
                        "SELECT run_id FROM claim_run WHERE t->>'exp' = ANY(%s)",
                        ([n for _, n, _ in plan],))])}
        if not args.no_charts:
            for p, name, _ in plan:
                if not complete[p]:
                    continue
                sub = os.path.join(outdir, name)
                for fmt in ("md", "html"):
                    rc = subprocess.call([os.path.join(ROOT, "scripts", "report"), "--output", sub,
                                          "--label", f"exp={name} %", "--format", fmt,
                                          "--dpi", str(args.dpi),
                                          "--title", f"{p} at scale {args.scale}"],
                                         stdout=subprocess.DEVNULL)
                    if rc != 0:
                        raise ReproduceError(f"scripts/report failed for {name} (exit {rc})")
        # written last, so its time is the whole invocation's, charts included
        meta["elapsed"] = time.monotonic() - t0
        summary, counts = report.write(outdir, results, meta, replay)
        for r in results:
            print(f"{r['status']:32s} {r['claim']['id']}  ours={report.fmt_num(r['ours'])}"
                  f"  direction={report.yes_no(r['direction'])}"
                  f"  magnitude={report.yes_no(r['magnitude'], '—')}  ({r['set']})",
                  file=sys.stderr)
        print(f"reproduce: {summary}; wrote {outdir}/report.md and {outdir}/report.html "
              f"({cells.fmt_duration(meta['elapsed'])} for the runs, claims and charts)",
              file=sys.stderr)
        if counts.get(ERROR, 0):
            return 1
        failing = {r["claim"]["id"] for r in results if r["status"] == FAILS}
        decided = {r["claim"]["id"] for r in results if r["status"] in (HOLDS, FAILS)}
        if args.expect:
            known = read_expect(args.expect)
            bad = sorted((failing - known) | ((known & decided) - failing))
            for i in bad:
                print(f"reproduce: {i}: " + ("holds now; remove it from " + args.expect
                                             if i in known else "does not hold"), file=sys.stderr)
            return 1 if bad else 0
        return 1 if failing else 0
    except (ReproduceError, registry.ClaimError, workload.WorkloadError) as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
