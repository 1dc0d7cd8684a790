"""Cells of one experiment over several worker servers, on procrastinate.

    distributed.py coordinate --config FILE [--source NAME] [--worker CONNINFO ...]
        [--queue-only] [--cells-per-job N] [--stall-seconds S] [--heartbeat S]
        [-- RUNNER-ARGS ...]
    distributed.py work --coordinator CONNINFO --local CONNINFO [--name NAME]
        [--heartbeat S]

scripts/run-workload --worker CONNINFO (and scripts/reproduce --worker)
run `coordinate`; scripts/festival-worker runs `work` on a worker host
(docs/distributed.md).  Both run in the scripts' virtual environment, where
scripts/lib.sh's fest_venv installs procrastinate from PyPI.

The coordinator is the server the PG* variables name: its database holds
the results (festival.run, public.festival_cell of scripts/lib/cells.py)
and procrastinate's queue (its procrastinate_* tables).  It splits the
experiment (FILE: a configuration with its scale merged) into cells
(cells.cell_list), forgets the runs of cells an interrupted invocation left
half-stored, defers the cells not finished yet as jobs of up to
--cells-per-job cells of one data set (one runner start and one data
generation for them; queueing lock: the job's first cell, and cells queued
or running in an earlier invocation's jobs are left out, so a resumed
invocation never queues a cell twice), starts one
worker process per --worker server (none with --queue-only: workers come
from scripts/festival-worker), prints progress and an ETA, hands the jobs
of workers whose heartbeat stopped to the others, and waits until every
cell is finished or has failed.

A worker process takes one job at a time.  It runs the job's cells on its
own server (scripts/run-workload --resume with FEST_ONLY_CELLS naming them,
the experiment's peers left out) and, as soon as the runner records a cell
finished, copies its runs into the
coordinator's festival.run in one transaction together with the cell's
row in public.festival_cell: a cell's runs land whole or not at all, and a
cell whose row exists is never stored again, whichever worker ran it and
however often the queue delivered it.  Every copied run gets
config -> 'worker': the worker's host, CPU model and count, PostgreSQL and
festival versions, the server's system identifier, the devices the cell
used (with their profiles) and the digest of the data the cell ran on.

Failures: a cell whose runner exits 2 (a configuration error) or fails
with an SQL error while its server stays up and printed no connection
error fails once, reported on the coordinator, and is not retried.  A cell that loses its server (backend or
server killed: connection errors, or the server unreachable after the
failure) is tried up to 3 times (ATTEMPTS), on any worker; a worker whose
server is down stops taking jobs.  A worker process killed with its job
stops sending heartbeats; after --stall-seconds the coordinator hands the
job back to the queue (the worker's runner dies with it: parent-death
signal).  Each failure is a row of public.festival_cell_error, printed once.

Data: each worker generates the data sets itself from the experiment's
seed; when a cell starts the runner writes the digest of its data tables
(cells.data_digest) and the coordinator refuses a cell whose data differs
from what another worker made for the same data set.
"""

import argparse
import asyncio
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cells  # noqa: E402
import workload  # noqa: E402

import procrastinate  # noqa: E402
import psycopg  # noqa: E402
from psycopg.conninfo import conninfo_to_dict  # noqa: E402
from psycopg.types.json import Jsonb  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TASK = "festival.run_cell"
QUEUE = "festival"
# attempts of a cell whose server or worker dies, the first included
ATTEMPTS = 3
ERRORS = "public.festival_cell_error"
ERRORS_DDL = f"""CREATE TABLE IF NOT EXISTS {ERRORS} (
    id bigserial PRIMARY KEY,
    cell text NOT NULL,
    worker text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('retried', 'failed')),
    message text NOT NULL,
    at timestamptz NOT NULL DEFAULT now())"""

# libpq connection keywords and the environment variables scripts/run-workload reads
CONNINFO_ENV = {"host": "PGHOST", "hostaddr": "PGHOSTADDR", "port": "PGPORT",
                "dbname": "PGDATABASE", "user": "PGUSER", "password": "PGPASSWORD",
                "passfile": "PGPASSFILE", "sslmode": "PGSSLMODE", "sslcert": "PGSSLCERT",
                "sslkey": "PGSSLKEY", "sslrootcert": "PGSSLROOTCERT", "sslcrl": "PGSSLCRL",
                "service": "PGSERVICE", "connect_timeout": "PGCONNECT_TIMEOUT",
                "application_name": "PGAPPNAME", "options": "PGOPTIONS",
                "target_session_attrs": "PGTARGETSESSIONATTRS"}

# what a runner prints when its server went away under it (not the cell's fault)
LOST = re.compile(r"server closed the connection|terminating connection|connection to server|"
                  r"could not connect|the database system is|consuming input failed|"
                  r"SSL SYSCALL|Connection refused|no connection to the server|"
                  r"connection is lost|connection already closed|server process .* terminated")


class DistributedError(Exception):
    """A problem to report to the user in one line."""


class CellLost(Exception):
    """The cell's server went away: retried, on any worker."""


class CellFailed(Exception):
    """The cell fails by itself (configuration, SQL error, other data): not retried."""


def env_for(conninfo):
    """os.environ with the PG* variables of conninfo only."""
    try:
        params = conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError as e:
        raise DistributedError(f"bad connection string {conninfo!r}: {e}") from e
    unknown = sorted(set(params) - set(CONNINFO_ENV))
    if unknown:
        raise DistributedError(f"connection string {conninfo!r}: {', '.join(unknown)} cannot be "
                               "passed to scripts/run-workload (use a service file, PGSERVICE)")
    if "dbname" not in params and "service" not in params:
        raise DistributedError(f"connection string {conninfo!r} names no dbname: a worker's "
                               "runs need a database of their own")
    # libpq's variables (PGHOST...) are the worker's; PG_CONFIG and the like stay
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG") or k.startswith("PG_")}
    env.update({CONNINFO_ENV[k]: str(v) for k, v in params.items()})
    return env


def make_app(conninfo):
    connector = procrastinate.PsycopgConnector(conninfo=conninfo, min_size=1, max_size=3)
    app = procrastinate.App(connector=connector)
    app.task(name=TASK, queue=QUEUE, pass_context=True,
             retry=procrastinate.RetryStrategy(max_attempts=ATTEMPTS - 1, wait=1,
                                               retry_exceptions={CellLost}))(run_cell_job)
    return app


# ----------------------------------------------------------------------
# The worker
# ----------------------------------------------------------------------

class Worker:
    """What one worker process knows: its server, the coordinator, who it is."""
    local = None
    coordinator = None
    name = None
    machine = None


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine(conn):
    """The worker's host and server, as config -> 'worker' records them."""
    row = conn.execute(
        "SELECT current_setting('server_version'), version(), "
        "(SELECT extversion FROM pg_extension WHERE extname = 'festival'), "
        "host(inet_server_addr()), inet_server_port()").fetchone()
    try:
        with conn.transaction():
            sysid = str(conn.execute("SELECT system_identifier FROM pg_control_system()")
                        .fetchone()[0])
    except psycopg.Error:
        sysid = None            # not a superuser and not granted: left out
    return {"name": Worker.name, "host": socket.gethostname(), "cpu_model": cpu_model(),
            "cpus": os.cpu_count(), "postgresql": row[0], "postgresql_build": row[1],
            "festival": row[2], "server_address": row[3], "server_port": row[4],
            "system_identifier": sysid}


def local_alive(wait=15.0):
    """The worker's server accepts connections (within `wait` seconds: the
    crash restart after a killed backend takes a moment)."""
    until = time.monotonic() + wait
    while True:
        try:
            with psycopg.connect(Worker.local, connect_timeout=5) as c:
                c.execute("SELECT 1")
            return True
        except psycopg.Error:
            if time.monotonic() >= until:
                return False
            time.sleep(0.5)


def stop_worker(why):
    """This worker cannot run cells (its server is down): finish the job, take no other."""
    print(f"festival-worker {Worker.name}: {why}; stopping", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGTERM)


def report_error(cell, kind, message):
    try:
        with psycopg.connect(Worker.coordinator, autocommit=True) as c:
            c.execute(f"INSERT INTO {ERRORS} (cell, worker, kind, message) VALUES (%s, %s, %s, %s)",
                      (cell, Worker.name, kind, message[-2000:]))
    except psycopg.Error as e:
        print(f"festival-worker {Worker.name}: cannot report {kind} of {cell}: {e}",
              file=sys.stderr, flush=True)


def die_with_parent():
    """preexec_fn: the runner is killed when the worker process dies (kill -9 included)."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG


def data_tables(exp, ds, n_sets):
    """The regular expression naming the data tables of ds as workload.py makes them."""
    if ds["table"] is not None:
        return "^" + re.escape(ds["table"]) + "$"
    suffix = "" if n_sets == 1 else f"_{ds['distribution']}_{ds['points']}"
    return "^" + re.escape(f"wl_{exp['name'].lower()}_") + "[a-z]+(_[0-9]+)?" + re.escape(suffix) + "$"


def run_cell_job(context, cells_, experiment, data_set, data_tables, config, argv, source):
    """Cells of one data set on this worker's server, each one's runs copied into the
    coordinator's as soon as it finishes."""
    attempt = context.job.attempts + 1
    with psycopg.connect(Worker.coordinator, autocommit=True) as coord:
        done = {r[0] for r in coord.execute(
            f"SELECT cell FROM {cells.TABLE} c JOIN unnest(%s::text[], %s::text[]) j(cell, dg) "
            "USING (cell) WHERE c.digest = j.dg",
            ([c for c, _ in cells_], [d for _, d in cells_]))}
    pending = {c: d for c, d in cells_ if c not in done}
    if not pending:
        print(f"festival-worker {Worker.name}: finished before: job {context.job.id}",
              file=sys.stderr, flush=True)
        return
    try:
        local = psycopg.connect(Worker.local, autocommit=True, connect_timeout=10)
    except psycopg.Error as e:
        if local_alive():
            raise CellLost(f"{Worker.name}: its server was restarting: {e}") from e
        for c in pending:
            report_error(c, "retried", f"{Worker.name}: its server is unreachable: {e}")
        stop_worker("its server is unreachable")
        raise CellLost(str(e)) from e
    with local:
        cells.ensure(local)
        for c in pending:
            cells.clear(local, c)
        before = local.execute("SELECT coalesce(max(run_id), 0) FROM festival.run").fetchone()[0]
        Worker.machine = Worker.machine or machine(local)
    for c in pending:
        print(f"festival-worker {Worker.name}: running {c} (job {context.job.id}, attempt "
              f"{attempt})", file=sys.stderr, flush=True)
    cfg = dict(config, peers=[])
    with tempfile.TemporaryDirectory(prefix="festival-cell-") as tmp:
        cfg_path = os.path.join(tmp, "experiment.json")
        digest_path = os.path.join(tmp, "data-digest.json")
        err_path = os.path.join(tmp, "stderr")
        with open(cfg_path, "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        env = env_for(Worker.local)
        env.update(FEST_ONLY_CELLS="\n".join(pending), FEST_CELL_DATA_DIGEST=digest_path,
                   FEST_CELL_DATA_TABLES=data_tables, FEST_CONFIG_SOURCE=source)
        env.pop("FEST_CELL_PLAN", None)
        with open(err_path, "w", encoding="utf-8") as err:
            proc = subprocess.Popen([os.path.join(ROOT, "scripts", "run-workload"), "--no-setup",
                                     "--resume", "--config", cfg_path, *argv],
                                    env=env, stdout=subprocess.DEVNULL, stderr=err,
                                    preexec_fn=die_with_parent)

        lost = []

        def copy_finished():
            """Store every pending cell the runner finished; a failure stops the runner."""
            try:
                with psycopg.connect(Worker.local, autocommit=True) as lc:
                    finished = lc.execute(f"SELECT cell, wall_seconds FROM {cells.TABLE} "
                                          "WHERE cell = ANY(%s)", (list(pending),)).fetchall()
                for c, wall in finished:
                    with open(digest_path, encoding="utf-8") as f:
                        data = json.load(f)
                    store(c, pending[c], experiment, data_set, data, before, wall,
                          context.job.id, attempt)
                    del pending[c]
            except psycopg.OperationalError as e:
                lost.append(str(e))     # a server went away: retried below
            except CellFailed as e:
                proc.kill()
                proc.wait()
                for c in pending:
                    report_error(c, "failed", f"{Worker.name}: {e}")
                raise

        while proc.poll() is None:
            time.sleep(0.5)
            copy_finished()
        copy_finished()
        with open(err_path, encoding="utf-8") as f:
            stderr = f.read()
    tail = "\n".join([line for line in stderr.strip().splitlines()
                      if "finished before, skipped" not in line][-6:])
    if not pending:
        return
    if proc.returncode == 0:
        tail = f"the runner ended without finishing these cells\n{tail}"
    alive = local_alive()
    if lost:
        tail += f"\nstoring: {lost[-1]}"
    # exit 2 is a configuration error, unless the server went away (psql exits 2 then too)
    if proc.returncode < 0 or LOST.search(stderr) or not alive or lost:
        for c in pending:
            report_error(c, "retried", f"{Worker.name}: {tail}")
        if not alive:
            stop_worker("its server went away")
        raise CellLost(tail)
    for c in pending:
        report_error(c, "failed", f"{Worker.name}: exit {proc.returncode}: {tail}")
    raise CellFailed(tail)


def store(cell, digest, experiment, data_set, data, before, wall, job, attempt):
    """Copy the cell's runs from the worker's server into the coordinator's, once."""
    with psycopg.connect(Worker.local, autocommit=True) as local:
        local_cols = run_columns(local)
        runs = [r[0] for r in local.execute(
            "SELECT to_jsonb(r) FROM festival.run r WHERE r.run_id > %s AND r.replay_of IS NULL "
            "AND starts_with(r.label, %s) ORDER BY r.run_id", (before, cell + " "))]
        devices = sorted({d for r in runs for d in (r.get("device") or "").split(",") if d})
        device_rows = [r[0] for r in local.execute(
            "SELECT to_jsonb(d) FROM festival.device d WHERE d.name = ANY(%s) ORDER BY d.name",
            (devices,))]
    if not runs:
        raise CellFailed(f"the runner stored no run of {cell}")
    worker = dict(Worker.machine, devices=device_rows, job=job, attempt=attempt,
                  data_digest=data and data["digest"], data_tables=data and data["tables"])
    with psycopg.connect(Worker.coordinator, autocommit=True) as coord:
        cols = [c for c in run_columns(coord) & local_cols
                if c not in ("run_id", "model_elapsed_seconds", "replay_of")]
        with coord.transaction():
            # one data set's cells are checked against each other one at a time
            coord.execute("SELECT pg_advisory_xact_lock(hashtext('festival_cell ' || %s))",
                          (data_set,))
            if data is not None:
                other = coord.execute(
                    f"SELECT cell, worker, data_digest FROM {cells.TABLE} WHERE data_set = %s "
                    "AND data_digest <> %s LIMIT 1", (data_set, data["digest"])).fetchone()
                if other:
                    raise CellFailed(
                        f"data of {data_set} differ: {Worker.name} made digest "
                        f"{data['digest'][:16]}, {other[1]} made {other[2][:16]} for {other[0]}; "
                        "the workers' festival or PostGIS versions differ")
            row = coord.execute(
                f"INSERT INTO {cells.TABLE} (cell, experiment, digest, wall_seconds, runs, worker, "
                "data_set, data_digest) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (cell) DO NOTHING RETURNING cell",
                (cell, experiment, digest, wall, len(runs), Worker.name, data_set,
                 data and data["digest"])).fetchone()
            if row is None:
                print(f"festival-worker {Worker.name}: {cell} was stored by another worker; "
                      "these runs are dropped", file=sys.stderr, flush=True)
                return
            collist = ", ".join(f'"{c}"' for c in cols)
            with coord.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO festival.run ({collist}) SELECT {collist} FROM "
                    "jsonb_populate_record(NULL::festival.run, %s)",
                    [(Jsonb(dict(r, config=with_worker(r.get("config"), worker))),) for r in runs])
    with psycopg.connect(Worker.local, autocommit=True) as local:
        cells.clear(local, cell)
    print(f"festival-worker {Worker.name}: stored {len(runs)} runs of {cell} in {wall:.1f} s",
          file=sys.stderr, flush=True)


def with_worker(config, worker):
    if isinstance(config, dict):
        return dict(config, worker=worker)
    return {"runs": config, "worker": worker}


def run_columns(conn):
    return {r[0] for r in conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'festival.run'::regclass "
        "AND attnum > 0 AND NOT attisdropped")}


def work(args):
    Worker.local = args.local
    Worker.coordinator = args.coordinator
    env_for(args.local)                 # checked before the first job
    if not args.name:
        p = conninfo_to_dict(args.local)
        args.name = f"{socket.gethostname()}:{p.get('port', '5432')}/{p.get('dbname', '')}"
    Worker.name = args.name
    app = make_app(args.coordinator)

    async def run():
        async with app.open_async():
            await app.run_worker_async(queues=[QUEUE], name=args.name, concurrency=1, wait=True,
                                       update_heartbeat_interval=args.heartbeat,
                                       stalled_worker_timeout=max(30.0, 10 * args.heartbeat),
                                       delete_jobs="never")
    print(f"festival-worker {args.name}: taking cells from the coordinator", file=sys.stderr,
          flush=True)
    asyncio.run(run())
    return 0


# ----------------------------------------------------------------------
# The coordinator
# ----------------------------------------------------------------------

def plan_estimates():
    """scripts/reproduce's estimates of the cells ({cell: seconds}), if it wrote a plan."""
    path = os.environ.get("FEST_CELL_PLAN")
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return {c: float(e) for c, e in json.load(f)["cells"]}
    return {}


def eta(todo, recent, elapsed, estimates):
    """Seconds the cells in todo still need at the pace of this invocation's finished
    cells (recent; weighted by scripts/reproduce's estimates when it gave them), or None."""
    if not todo:
        return 0.0
    if not recent:
        return None
    if estimates:
        return elapsed * (sum(estimates.get(c, 60.0) for c in todo)
                          / sum(estimates.get(c, 60.0) for c in recent))
    return elapsed * len(todo) / len(recent)


def coordinate(args):
    with open(args.config, encoding="utf-8") as f:
        cfg = json.load(f)
    exp, own = cells.load_experiment(cfg, args.runner_args)
    if any(s.get("catalog") for s in exp["structures"]):
        raise DistributedError("structure=catalog needs a server to expand it; name the "
                               "structures to run an experiment over workers")
    if exp["peers"]:
        print("distributed: the experiment's peers are left out: their runs are wall times "
              "only, which differ from machine to machine; run them on one server "
              "(scripts/run-workload without --worker)", file=sys.stderr, flush=True)
    todo_list = cells.cell_list(exp, own)
    n_sets = len(workload.datasets(exp))
    source = args.source or args.config
    conn = psycopg.connect(autocommit=True)
    conn.execute("SET client_min_messages = warning")
    conn.execute("CREATE EXTENSION IF NOT EXISTS festival CASCADE")
    cells.ensure(conn)
    conn.execute(ERRORS_DDL)
    coordinator_dsn = conn.info.dsn
    if conn.info.password and "password" not in coordinator_dsn:
        coordinator_dsn += f" password={conn.info.password}"
    app = make_app(coordinator_dsn)
    started = time.time()
    last_error = conn.execute(f"SELECT coalesce(max(id), 0) FROM {ERRORS}").fetchone()[0]
    ids = [cid for cid, _, _ in todo_list]

    async def main():
        async with app.open_async():
            if conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()[0] is None:
                await app.schema_manager.apply_schema_async()
            # cells queued or running already (an earlier invocation's jobs)
            busy = {(r[0], r[1]) for r in conn.execute(
                "SELECT c->>0, c->>1 FROM procrastinate_jobs j, "
                "jsonb_array_elements(j.args->'cells_') c "
                "WHERE j.task_name = %s AND j.status IN ('todo', 'doing')", (TASK,))}
            batches = {}        # data label -> [(cell, digest)], in the runner's order
            for cid, dg, ds in todo_list:
                if cells.finished(conn, cid, dg) or (cid, dg) in busy:
                    continue
                cells.clear(conn, cid)
                batches.setdefault(workload.data_label(exp, ds), (ds, []))[1].append([cid, dg])
            pending = sum(len(b) for _, b in batches.values())
            per_job = args.cells_per_job or (
                1 if args.queue_only else
                max(1, min(8, pending // (3 * max(1, len(args.worker))))))
            queued = 0
            for dl, (ds, batch) in batches.items():
                for k in range(0, len(batch), per_job):
                    part = batch[k:k + per_job]
                    try:
                        await app.configure_task(TASK, queueing_lock=part[0][0],
                                                 lock=part[0][0]).defer_async(
                            cells_=part, experiment=exp["name"],
                            data_set=f"exp={exp['name']}{dl}",
                            data_tables=data_tables(exp, ds, n_sets), config=cfg,
                            argv=list(args.runner_args), source=source)
                        queued += len(part)
                    except procrastinate.exceptions.AlreadyEnqueued:
                        pass
            print(f"distributed: experiment {exp['name']}: {len(ids)} cells, {queued} queued now "
                  f"({per_job} a job), "
                  f"{sum(1 for c, d, _ in todo_list if cells.finished(conn, c, d))} finished "
                  f"before; queue and results in database {conn.info.dbname}",
                  file=sys.stderr, flush=True)
            return await watch()

    procs = []

    def live_workers():
        if args.queue_only:
            return conn.execute("SELECT count(*) FROM procrastinate_workers WHERE last_heartbeat "
                                "> now() - make_interval(secs => %s)",
                                (args.stall_seconds,)).fetchone()[0]
        return sum(1 for _, p in procs if p.poll() is None)

    async def watch():
        nonlocal last_error
        for i, w in enumerate(args.worker):
            name = f"w{i + 1}"
            cmd = [sys.executable, os.path.abspath(__file__), "work", "--coordinator",
                   coordinator_dsn, "--local", w, "--name", name, "--heartbeat",
                   str(args.heartbeat)]
            procs.append((name, subprocess.Popen(cmd)))
            print(f"distributed: worker {name} (pid {procs[-1][1].pid}) runs cells on {w}",
                  file=sys.stderr, flush=True)
        estimates = plan_estimates()
        gone = set()
        last_line = ""
        while True:
            for name, p in procs:
                if p.poll() is not None and name not in gone:
                    gone.add(name)
                    print(f"distributed: worker {name} exited ({p.returncode}); its cell goes "
                          "back to the queue once its heartbeat is "
                          f"{args.stall_seconds:.0f} s old", file=sys.stderr, flush=True)
            for job in await app.job_manager.get_stalled_jobs(
                    queue=QUEUE, task_name=TASK, seconds_since_heartbeat=args.stall_seconds):
                job_cells = [c for c, _ in job.task_kwargs.get("cells_", [])]
                stored = {r[0] for r in conn.execute(
                    f"SELECT cell FROM {cells.TABLE} WHERE cell = ANY(%s)", (job_cells,))}
                if job.attempts + 1 >= ATTEMPTS:
                    await app.job_manager.finish_job_by_id_async(
                        job.id, procrastinate.jobs.Status.FAILED, delete_job=False)
                    msg = f"its worker stopped {job.attempts + 1} times; given up"
                    kind = "failed"
                else:
                    await app.job_manager.retry_job(job)
                    msg = "its worker stopped sending heartbeats; back in the queue"
                    kind = "retried"
                for cell in job_cells:
                    if cell not in stored:
                        conn.execute(f"INSERT INTO {ERRORS} (cell, worker, kind, message) "
                                     "VALUES (%s, 'coordinator', %s, %s)", (cell, kind, msg))
            for eid, cell, worker, kind, message in conn.execute(
                    f"SELECT id, cell, worker, kind, message FROM {ERRORS} WHERE id > %s "
                    "AND cell = ANY(%s) ORDER BY id", (last_error, ids)):
                last_error = eid
                print(f"distributed: cell {kind} ({worker}): {cell}\n    "
                      + message.replace("\n", "\n    "), file=sys.stderr, flush=True)
            done = dict(conn.execute(
                f"SELECT cell, wall_seconds FROM {cells.TABLE} WHERE cell = ANY(%s)", (ids,)))
            states = dict(conn.execute(
                "SELECT DISTINCT ON (c->>0) c->>0, j.status::text FROM procrastinate_jobs j, "
                "jsonb_array_elements(j.args->'cells_') c WHERE j.task_name = %s "
                "AND c->>0 = ANY(%s) ORDER BY c->>0, j.id DESC", (TASK, ids)))
            failed = [c for c in ids if c not in done and states.get(c) in ("failed", "cancelled",
                                                                           "aborted")]
            running = sum(1 for c in ids if c not in done and states.get(c) == "doing")
            todo = [c for c in ids if c not in done and c not in failed]
            live = live_workers()
            recent = [r[0] for r in conn.execute(
                f"SELECT cell FROM {cells.TABLE} WHERE cell = ANY(%s) "
                "AND finished_at >= to_timestamp(%s)", (ids, started))]
            left = eta(todo, recent, time.time() - started, estimates)
            line = (f"distributed: {len(done)}/{len(ids)} cells finished, {running} running, "
                    f"{len(failed)} failed, {live} workers, "
                    f"{cells.fmt_duration(time.time() - started)} elapsed, ETA "
                    + (cells.fmt_duration(left) if left is not None else "unknown"))
            if line.split(" elapsed")[0] != last_line:
                print(line, file=sys.stderr, flush=True)
                last_line = line.split(" elapsed")[0]
            if not todo:
                return failed
            if live == 0 and procs:     # with --queue-only, workers may come later
                raise DistributedError(f"no worker is left and {len(todo)} cells are not "
                                       "finished; the same command resumes them")
            await asyncio.sleep(1.0)

    try:
        failed = asyncio.run(main())
    finally:
        for _, p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for _, p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    n = conn.execute(f"SELECT coalesce(sum(runs), 0) FROM {cells.TABLE} WHERE cell = ANY(%s)",
                     (ids,)).fetchone()[0]
    print(f"distributed: {len(ids) - len(failed)}/{len(ids)} cells finished ({n} runs in "
          f"festival.run, labels 'exp={exp['name']} ...') in "
          f"{cells.fmt_duration(time.time() - started)}"
          + (f"; {len(failed)} failed (see above)" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


def parse_args(argv):
    p = argparse.ArgumentParser(prog="distributed.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("coordinate")
    c.add_argument("--config", required=True)
    c.add_argument("--source")
    c.add_argument("--worker", action="append", default=[],
                   help="libpq connection string of a worker server (repeat)")
    c.add_argument("--queue-only", action="store_true",
                   help="start no worker: scripts/festival-worker runs them")
    c.add_argument("--stall-seconds", type=float, default=30.0,
                   help="a worker silent this long has died (default 30)")
    c.add_argument("--heartbeat", type=float, default=5.0,
                   help="seconds between a worker's heartbeats (default 5)")
    c.add_argument("--cells-per-job", type=int,
                   help="cells of one data set a job runs in one runner (default: a third "
                        "of each worker's share, 1 to 8; 1 with --queue-only)")
    c.add_argument("runner_args", nargs="*")
    w = sub.add_parser("work")
    w.add_argument("--coordinator", required=True)
    w.add_argument("--local", required=True)
    w.add_argument("--name")
    w.add_argument("--heartbeat", type=float, default=5.0)
    args = p.parse_args(argv)
    if args.command == "coordinate":
        if not args.worker and not args.queue_only:
            p.error("give --worker CONNINFO (repeat) or --queue-only")
        for w in args.worker:
            env_for(w)
        if args.heartbeat * 2 >= args.stall_seconds:
            p.error("--stall-seconds must be more than twice --heartbeat")
    return args


def main(argv):
    try:
        args = parse_args(argv)
        return coordinate(args) if args.command == "coordinate" else work(args)
    except (DistributedError, workload.WorkloadError) as e:
        print(f"distributed: {e}", file=sys.stderr)
        return 2
    except psycopg.OperationalError as e:
        print(f"distributed: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("distributed: interrupted; the same command resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # run as the module "distributed", whose task and exceptions procrastinate
    # finds by name, not as a second copy named __main__
    import distributed
    sys.exit(distributed.main(sys.argv[1:]))
