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
servers by id: scripts/lib/distributed.py runs each cell on one of several
worker servers (docs/distributed.md).  For it a runner honours two
environment variables: FEST_ONLY_CELLS (cell ids, one a line) makes every
other cell count as finished, so the runner runs just those; and
FEST_CELL_DATA_DIGEST=PATH with FEST_CELL_DATA_TABLES=REGEX writes, when a
cell starts (clear()), a digest of the data tables whose names match REGEX
to PATH, so the coordinator can check every worker generated the same bytes.

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
# filled by scripts/lib/distributed.py for a cell a worker server ran; NULL
# for a cell run on this server
DDL_WORKER = [f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS worker text",
              f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS data_set text",
              f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS data_digest text"]

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


def load_experiment(cfg, argv=()):
    """(exp, own) of a configuration (scale merged), normalised as run-workload
    runs it: own holds the keys of the runners of their own (mixes.py,
    batches.py), which go into those runners' cell digests."""
    import tempfile
    import workload
    cfg = dict(cfg)
    own = {k: cfg.pop(k) for k in ("mixes", "groups", "bulk_insert", "batch_queries") if k in cfg}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
        json.dump(cfg, tmp)
    try:
        exp = workload.load_experiment(workload.parse_args(["--config", tmp.name, *argv]))
    finally:
        os.unlink(tmp.name)
    if own:
        exp["windows"]["area_percent"] = []
        exp["knn"]["k"] = []
    return exp, own


def cell_list(exp, own=None):
    """[(cell id, digest, data set)] of an experiment, in the order its runner runs them."""
    import workload
    out = []
    for ds in workload.datasets(exp):
        dl = workload.data_label(exp, ds)
        for c in workload.matrix(exp):
            if workload.fits(ds["points"], c["max_points"], c["build"]["max_points"]):
                out.append((workload.base_label(exp, c) + dl,
                            digest(exp, c, ds, own) if own else digest(exp, c, ds), ds))
    return out


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
    for ddl in DDL_WORKER:
        conn.execute(ddl)


def only_cells():
    """The cells FEST_ONLY_CELLS restricts a runner to, or None."""
    text = os.environ.get("FEST_ONLY_CELLS")
    return None if text is None else {c for c in text.split("\n") if c}


def run_count(conn, cell):
    return conn.execute("SELECT count(*) FROM festival.run WHERE replay_of IS NULL AND "
                        "starts_with(label, %s)", (cell + " ",)).fetchone()[0]


def finished(conn, cell, dg):
    only = only_cells()
    if only is not None and cell not in only:
        return True
    row = conn.execute(f"SELECT digest, runs FROM {TABLE} WHERE cell = %s", (cell,)).fetchone()
    return row is not None and row[0] == dg and run_count(conn, cell) == row[1]


# the last data digest of this process: (the tables' names and oids, digest);
# a runner's cells of one data set share their tables, digested once
_last_digest = [None, None]


def data_digest(conn, pattern):
    """sha256 over the data tables whose names match the regular expression
    pattern (in name order), each as COPY's text of its rows in physical
    order: the order festival.build inserts them in.  Tables made again
    (new oids) are digested again."""
    h = hashlib.sha256()
    tables = conn.execute(
        "SELECT c.relname, c.oid::bigint FROM pg_class c WHERE c.relkind = 'r' "
        "AND c.relname ~ %s AND pg_table_is_visible(c.oid) ORDER BY c.relname",
        (pattern,)).fetchall()
    names = [n for n, _ in tables]
    if _last_digest[0] == tables:
        return _last_digest[1], names
    for name in names:
        h.update(f"table {name}\n".encode())
        with conn.cursor() as cur:
            with cur.copy(f'COPY (SELECT * FROM "{name}" ORDER BY ctid) TO STDOUT') as cp:
                for block in cp:
                    h.update(block)
    _last_digest[:] = [tables, h.hexdigest()]
    return h.hexdigest(), names


def clear(conn, cell):
    """Forget a cell: its state row and every run it stored (a partial cell).

    Runners call it right before a cell runs, with its data prepared: the
    moment FEST_CELL_DATA_DIGEST asks for the data's digest."""
    out = os.environ.get("FEST_CELL_DATA_DIGEST")
    if out and os.environ.get("FEST_CELL_DATA_TABLES"):
        dg, names = data_digest(conn, os.environ["FEST_CELL_DATA_TABLES"])
        with open(out + ".new", "w", encoding="utf-8") as f:
            json.dump({"cell": cell, "digest": dg, "tables": names}, f)
        os.replace(out + ".new", out)   # whole, for a reader polling it
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
