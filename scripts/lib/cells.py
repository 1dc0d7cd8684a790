"""Cells: the unit of work of scripts/reproduce (docs/experiments.md, "Cells").

A cell is one configuration of one experiment at one scale: its build and
every measured workload after it, which scripts/run-workload (workload.py,
mixes.py) runs in one go.  Its id is the configuration's run-label prefix
(exp=NAME structure=... page=... device=... build=insert, plus the data
label), the same prefix every run of the cell carries in festival.run, so a
cell id is unique within a database.

State lives in the database next to the runs, in the table public.festival_cell:
a cell is finished when its row exists, was made from the same configuration
(digest) and its runs are still in festival.run.  A cell that was interrupted
has runs and no row: its runs are deleted before it runs again, so a resumed
invocation never stores a configuration twice and never mixes two
configurations' runs.  A cell whose configuration changed (another digest) is
run again.

Cells of one experiment share only their data set, which each invocation
generates again from its seed, so the cell list can be split between
servers by id (sharding: docs/experiments.md; not implemented here).

Progress: scripts/reproduce writes a plan (every cell it will run, with an
estimate of its wall time) to the file named by FEST_CELL_PLAN; after each
cell the runner prints how many of the plan's cells are finished and an ETA
(the estimates of the cells left, scaled by how this invocation's finished
cells compared with their estimates).
"""

import hashlib
import json
import os
import sys
import time

TABLE = "public.festival_cell"
DDL = f"""CREATE TABLE IF NOT EXISTS {TABLE} (
    cell text PRIMARY KEY,
    experiment text NOT NULL,
    digest text NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(),
    wall_seconds float8 NOT NULL,
    runs int NOT NULL)"""

# keys of an experiment that do not change what a cell measures: prose, the
# paper's method facts (reported, not run), and the matrix axes (a cell
# carries its own structure, framework, page size, device and build)
NEUTRAL_KEYS = ("description", "comment", "paper_method", "structures", "frameworks",
                "page_sizes", "devices", "builds", "peers", "default_scale")


def digest(exp, config, dataset, extra=None):
    """The configuration a cell measures, as a short hash."""
    body = {k: v for k, v in exp.items() if k not in NEUTRAL_KEYS}
    text = json.dumps([body, config, dataset, extra], sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def nice_backend(conn):
    """Give this connection's server backend the client's niceness.

    The machine is shared: a client started under nice(1) should not leave
    its heavy lifting to a backend at full priority.  Needs the right to
    renice the backend (root, or the server's user); silently does nothing
    otherwise.
    """
    try:
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        if mine <= 0:
            return
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        if os.getpriority(os.PRIO_PROCESS, pid) < mine:
            os.setpriority(os.PRIO_PROCESS, pid, mine)
    except (OSError, AttributeError):
        pass


def ensure(conn):
    conn.execute("SET client_min_messages = warning")
    conn.execute(DDL)


def run_count(conn, cell):
    return conn.execute("SELECT count(*) FROM festival.run WHERE replay_of IS NULL AND "
                        "starts_with(label, %s)", (cell + " ",)).fetchone()[0]


def finished(conn, cell, dg):
    row = conn.execute(f"SELECT digest, runs FROM {TABLE} WHERE cell = %s", (cell,)).fetchone()
    return row is not None and row[0] == dg and run_count(conn, cell) == row[1]


def clear(conn, cell):
    """Forget a cell: its state row and every run it stored (a partial cell)."""
    ids = [r[0] for r in conn.execute(
        "SELECT run_id FROM festival.run WHERE starts_with(label, %s)", (cell + " ",))]
    if ids:
        conn.execute("DELETE FROM festival.io_trace WHERE run_id = ANY(%s)", (ids,))
        conn.execute("DELETE FROM festival.run WHERE run_id = ANY(%s) OR replay_of = ANY(%s)",
                     (ids, ids))
    conn.execute(f"DELETE FROM {TABLE} WHERE cell = %s", (cell,))
    return len(ids)


def done(conn, cell, experiment, dg, wall):
    n = run_count(conn, cell)
    conn.execute(f"INSERT INTO {TABLE} (cell, experiment, digest, wall_seconds, runs) "
                 "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (cell) DO UPDATE SET "
                 "experiment = EXCLUDED.experiment, digest = EXCLUDED.digest, "
                 "finished_at = now(), wall_seconds = EXCLUDED.wall_seconds, runs = EXCLUDED.runs",
                 (cell, experiment, dg, wall, n))
    return n


def run_cell(conn, tracker, label, experiment, dg, run):
    """Run one cell for a runner with --resume: forget the runs an interrupted
    attempt stored, run it (run()), record it finished with its wall time."""
    clear(conn, label)
    t0 = time.monotonic()
    run()
    wall = time.monotonic() - t0
    done(conn, label, experiment, dg, wall)
    tracker.finished_cell(conn, label, wall)


def fmt_duration(s):
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Tracker:
    """Progress against scripts/reproduce's plan: cells finished, elapsed time and ETA."""

    def __init__(self):
        self.plan = {}
        self.started = time.time()
        # scripts/reproduce --budget-hours: no cell starts that would end after this
        self.deadline = float(os.environ.get("FEST_CELL_DEADLINE") or 0) or None
        path = os.environ.get("FEST_CELL_PLAN")
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                plan = json.load(f)
            self.plan = {c: float(est) for c, est in plan["cells"]}
            self.started = float(plan.get("started", self.started))

    def may_start(self, conn, cell):
        """False when the cell's estimate would carry it past the deadline."""
        if self.deadline is None:
            return True
        ok = time.time() + self.plan.get(cell, 0.0) <= self.deadline
        if not ok:
            self.report(conn, f"not started (the budget ends before its estimate): {cell}")
        return ok

    def finished_cell(self, conn, cell, wall):
        self.report(conn, f"finished in {wall:.0f} s: {cell}")

    def report(self, conn, text):
        if not self.plan:
            print(f"cell {text}", file=sys.stderr, flush=True)
            return
        ids = list(self.plan)
        rows = conn.execute(f"SELECT cell, wall_seconds, finished_at >= to_timestamp(%s) "
                            f"FROM {TABLE} WHERE cell = ANY(%s)", (self.started, ids)).fetchall()
        have = {r[0] for r in rows}
        # how this invocation's cells compared with their estimates scales the rest
        actual = sum(r[1] for r in rows if r[2])
        estimated = sum(self.plan[r[0]] for r in rows if r[2])
        scale = actual / estimated if estimated > 0 else 1.0
        left = sum(est for c, est in self.plan.items() if c not in have)
        print(f"reproduce: {len(have)}/{len(ids)} cells finished, "
              f"{fmt_duration(time.time() - self.started)} elapsed, "
              f"ETA {fmt_duration(left * scale)}; cell {text}", file=sys.stderr, flush=True)
