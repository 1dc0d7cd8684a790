#!/usr/bin/python3
"""Issue 26's table in one command: festival against its peers, side by side.

scripts/run-workload runs this module for a configuration with a
"peer_table" section (experiments/peers_table.json):

  scripts/run-workload --config experiments/peers_table.json [--scale F] [--reps N]

Per data set (every point count x distribution of the section, festival's
generators, one seed; a buffered device unless said otherwise, its engine the
section's "engine": sync by default, or mmap), with 300 windows (100 each of 0.001, 0.01 and 0.1 %
of the extent) and 100 kNN points (k = 10):

  builds   festival one at a time (festival.build 'insert') of a quadratic
           R-tree and an R*-tree without cache, of an R*-tree with an lru
           cache (cache_size), and the xBR+ bulk load; PostGIS INSERT into a
           table with a GiST and with an SP-GiST index, CREATE INDEX USING
           gist; each rebuilt and measured "build" repetitions times.
  windows  the 300 windows through the quadratic R-tree one festival.query
           each and one festival.query_batch; one festival.query_batch_ids
           (a row per window, its ids as an array) against one
           array(SELECT id FROM festival.query(...)) per window, like for
           like (and the first pair over an
           STR-loaded quadratic R-tree on a direct-I/O device); PostGIS GiST and SP-GiST (one
           index scan per window); SQLite 3's R*Tree (the python3 sqlite3
           module, in memory, the points' exact coordinates in auxiliary
           columns so the answer is exact, not float32-rounded);
           libspatialindex (PyPI rtree, R*, in memory, inserted one at a
           time) one count per window and one intersection_v call for all.
  kNN      festival.knn per point, one festival.knn_batch_ids call for all
           the points, GiST's <-> ordering, one nearest_v call.
  reads    the 300 windows over an STR-loaded quadratic R-tree on a
           device with the io_uring engine (libaio where the kernel refuses
           io_uring), direct I/O and buffered, read depth-first, a level
           at a time (festival.window_search) and as one
           festival.query_batch_ids of all 300 (one traversal: each level's
           pages of every window read together, in groups of up to 64
           nodes; the three alternate round by round), and
           on a memory device with a simulated NVMe drive
           (nvme_intel_p3700, virtual device time): backend CPU and wall of
           each, microseconds per page of festival's device reads (the run's
           read_seconds / pages_read, or device_seconds on the simulated
           drive) and of the whole query (wall / pages_read); for direct I/O
           against fio's 4 kB random read at queue depth 32
           (1 / IOPS) over the same index file, opened read-only with
           O_DIRECT and the same engine, for fio_seconds (scaled by --scale,
           at least 1).  Without fio on the PATH the fio rows are skipped
           with a message.  A section with "only": "reads" runs these rows
           alone (experiments/peers_reads.json); "window_areas" replaces
           the windows' sizes (percent of the extent, windows_per_area of
           each: experiments/peers_reads_large.json, 1 %).  "only":
           "queries" runs the window and kNN rows without the reads rows
           and builds each index once, unmeasured beyond that one build
           (experiments/peers_queries.json).

JIT is off in the session (festival's source cursors run without it too).
Time is the backend's CPU (the first field of /proc/<pid>/schedstat, read
before and after; libspatialindex and SQLite run in this process, whose own
CPU is read the same way) and the wall clock, median of the repetitions
after the warm-up rounds.  Every answer is checked against a brute force in
NumPy over the points' coordinates: the number of points in every window
(each system's own per-window count, the batch's per query_no), the sorted
k nearest distances of every kNN point; a mismatch is an error (exit 1).
The machine's load average is printed before and after.  The table prints
festival / peer ratios, median over median, with the issue's target; it
checks nothing against them (benchmarks print, tests do not time).

--scale F multiplies the point counts (the smoke form: 0.01).  The data
sets and indices live in the database run-workload names; they are
dropped at the end.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

AREAS = (0.001, 0.01, 0.1)

# festival builds: name -> (structure, options, method)
FESTIVAL_BUILDS = {
    "quadratic": ("rtree", {"split": "quadratic"}, "insert"),
    "rstar": ("rstartree", {}, "insert"),
    "rstar_lru": ("rstartree", {"cache": "lru"}, "insert"),
    "xbr_bulk": ("xbrtree", {}, "bulk"),
}

# windows: festival one and batch (buffered, direct I/O), the array batch
# and one array per window, GiST, SP-GiST, SQLite, libspatialindex per call
# and vectorised; kNN: festival, knn_batch_ids, GiST, libspatialindex; windows on a batched
# engine (direct I/O, buffered, simulated) depth-first, a level at a time and as one
# query_batch_ids, CPU and per page; fio
QUERY_MEASURES = 34

# The rows: (label, festival measure, peer measure, target or None).
ROWS = [
    ("query_batch of 300 windows / the same one at a time", "win_batch", "win_one", "<= 0.67"),
    ("query_batch / one at a time, direct I/O (STR-loaded quadratic)", "win_batch_direct",
     "win_one_direct", "<= 0.67"),
    ("windows (quadratic, no cache) / GiST", "win_one", "win_gist", None),
    ("windows (quadratic, no cache) / SP-GiST", "win_one", "win_spgist", None),
    ("windows (quadratic, no cache) / SQLite R*Tree", "win_one", "win_sqlite", None),
    ("windows (quadratic, no cache) / libspatialindex per call", "win_one", "win_lsi_call", None),
    ("windows (quadratic, no cache) / libspatialindex vectorised", "win_one", "win_lsi_vec", "<= 1.0"),
    ("kNN k=10 (quadratic) / libspatialindex vectorised", "knn_fest", "knn_lsi_vec", "<= 1.0"),
    ("kNN k=10 (quadratic) / GiST", "knn_fest", "knn_gist", None),
    ("windows, festival array batch (query_batch_ids) / libspatialindex vectorised",
     "win_batch_ids", "win_lsi_vec", "<= 1.0"),
    ("kNN k=10, festival knn_batch_ids / libspatialindex nearest_v", "knn_batch_ids",
     "knn_lsi_vec", "<= 1.0"),
    ("query_batch_ids / one festival.query per window as an array", "win_batch_ids",
     "win_one_ids", "<= 0.67"),
    ("R*-tree build, no cache / SP-GiST INSERT", "build_rstar", "build_spgist", "<= 1.0"),
    ("R*-tree build, no cache / GiST INSERT", "build_rstar", "build_gist", "<= 1.0"),
    ("R*-tree build, lru / SP-GiST INSERT", "build_rstar_lru", "build_spgist", "<= 0.8"),
    ("quadratic build, no cache / SP-GiST INSERT", "build_quadratic", "build_spgist", "<= 1.0"),
    ("xBR+ bulk / GiST CREATE INDEX", "build_xbr_bulk", "build_gist_ci", "<= 0.8"),
    ("direct-I/O reads, depth-first, us per page / fio 4 kB random read at QD 32",
     "io_depth_first", "io_fio", None),
    ("direct-I/O reads, a level at a time, us per page / fio 4 kB random read at QD 32",
     "io_level", "io_fio", "<= 1.2"),
    ("direct-I/O reads, one query_batch_ids of the 300 windows, us per page / fio 4 kB "
     "random read at QD 32", "io_batch", "io_fio", "<= 1.2"),
    ("windows a level at a time / depth-first, direct I/O (io_uring)", "win_io_level",
     "win_io_depth_first", None),
    ("windows a level at a time / depth-first, buffered (io_uring)", "win_io_buf_level",
     "win_io_buf_depth_first", None),
    ("device time per page, a level at a time / depth-first, simulated NVMe (P3700)",
     "io_sim_level", "io_sim_depth_first", None),
    ("windows, one query_batch_ids / a level at a time, direct I/O (io_uring)", "win_io_batch",
     "win_io_level", None),
    ("device time per page, one query_batch_ids / a level at a time, simulated NVMe (P3700)",
     "io_sim_batch", "io_sim_level", None),
]

# The rows of "only": "reads" (the reads rows and their data alone)
READS_KEYS = {"io_depth_first", "io_level", "io_fio", "win_io_level", "win_io_depth_first",
              "win_io_buf_level", "win_io_buf_depth_first", "io_sim_level", "io_batch",
              "win_io_batch", "io_sim_batch"}

# fio's queue depth for the reads row (issue 26)
FIO_DEPTH = 32

# the simulated drive of the reads rows' virtual device time
SIM_PROFILE = "nvme_intel_p3700"


class TableError(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(prog="run-workload (peer_table)")
    p.add_argument("--config", required=True)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--reps", type=int)
    p.add_argument("--name")
    p.add_argument("--check-only", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    return p.parse_args(argv)


def load(args):
    try:
        cfg = json.load(open(args.config, encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TableError(f"cannot read {args.config}: {e}") from e
    t = cfg.get("peer_table")
    if not isinstance(t, dict):
        raise TableError("the configuration has no peer_table section")
    known = {"points", "distributions", "seed", "extent", "windows_per_area", "knn",
             "page_size", "cache_size", "repetitions", "warmup", "fio_seconds", "only",
             "window_areas", "engine"}
    bad = set(t) - known
    if bad:
        raise TableError(f"peer_table: unknown keys {sorted(bad)}; accepted: {', '.join(sorted(known))}")
    if not (args.scale > 0):
        raise TableError("--scale must be > 0")
    t = dict(t)
    t["points"] = [max(100, int(round(n * args.scale))) for n in t["points"]]
    t["fio_seconds"] = max(1, int(round(t.get("fio_seconds", 5) * min(1.0, args.scale))))
    if t.get("engine", "sync") not in ("sync", "mmap"):
        raise TableError("peer_table: engine accepts \"sync\" or \"mmap\"")
    if t.get("only", "reads") not in ("reads", "queries"):
        raise TableError("peer_table: only accepts \"reads\" or \"queries\"")
    if args.reps is not None:
        if args.reps < 1:
            raise TableError("--reps must be >= 1")
        t["repetitions"] = {"build": args.reps, "query": args.reps}
    return t


# ---------------------------------------------------------------------------
# measuring
# ---------------------------------------------------------------------------

def schedstat_seconds(pid):
    """CPU time of a process's main thread so far (/proc/<pid>/schedstat)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def own_cpu_seconds():
    """This thread's CPU time (libspatialindex and SQLite run in it); its
    own schedstat is only brought up to date at the scheduler's ticks."""
    return time.thread_time()


class Measure:
    """Medians of backend (or this process's) CPU and wall per measure."""

    def __init__(self, backend_pid):
        self.pid = backend_pid
        self.samples = {}

    def run(self, key, action, reps, warmup=0, in_process=False, before=None):
        result = None
        for r in range(warmup + reps):
            if before is not None:
                before()
            clock = own_cpu_seconds if in_process else (lambda: schedstat_seconds(self.pid))
            c0, t0 = clock(), time.perf_counter()
            result = action()
            c1, t1 = clock(), time.perf_counter()
            if r >= warmup:
                self.samples.setdefault(key, []).append((c1 - c0, t1 - t0))
        return result

    def median(self, key):
        s = self.samples.get(key)
        if not s:
            return None
        return (statistics.median(x[0] for x in s), statistics.median(x[1] for x in s))


# ---------------------------------------------------------------------------
# answers
# ---------------------------------------------------------------------------

def check_counts(system, got, expected):
    """got and expected: per-window answer counts; a difference is an error."""
    got = [int(x) for x in got]
    expected = [int(x) for x in expected]
    if len(got) != len(expected):
        raise TableError(f"{system}: {len(got)} windows answered, {len(expected)} expected")
    bad = [i for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    if bad:
        i = bad[0]
        raise TableError(f"{system}: {len(bad)} windows answer differently from the brute "
                         f"force; window {i + 1}: {got[i]} answers, {expected[i]} expected")


def check_knn(system, got, expected, rel=1e-9):
    """got and expected: per query point, the sorted k nearest distances."""
    if len(got) != len(expected):
        raise TableError(f"{system}: {len(got)} kNN queries answered, {len(expected)} expected")
    for i, (g, e) in enumerate(zip(got, expected)):
        g = sorted(float(x) for x in g)
        if len(g) != len(e) or any(abs(a - b) > rel * max(1.0, abs(b)) for a, b in zip(g, e)):
            raise TableError(f"{system}: kNN query {i + 1} answers distances {g[:3]}... "
                             f"({len(g)}), the brute force {list(e[:3])}... ({len(e)})")


def lsi_intersection_v(idx, mins, maxs, capacity):
    """Index.intersection_v (one libspatialindex call for all windows) with an
    answer buffer of capacity ids: rtree 1.4's own growth step adds an
    uint64 count to an int, which NumPy 1.x makes a float, and fails.
    Returns the per-window counts; calls again only if the buffer fills."""
    import ctypes
    import numpy as np
    from rtree import core
    mins, maxs = idx._prepare_v_arrays(mins, maxs)
    n, d = mins.shape
    si, sj = mins.strides[0] // mins.itemsize, mins.strides[1] // mins.itemsize
    ids = np.empty(int(capacity), dtype=np.int64)
    counts = np.zeros(n, dtype=np.uint64)
    done = ctypes.c_int64(0)
    first = 0
    while first < n:
        core.rt.Index_Intersects_id_v(idx.handle, n - first, d, len(ids), si, sj,
                                      mins[first:].ctypes.data, maxs[first:].ctypes.data,
                                      ids.ctypes.data, counts[first:].ctypes.data,
                                      ctypes.byref(done))
        if done.value == 0:
            ids = np.empty(2 * len(ids), dtype=np.int64)
            continue
        first += done.value
    return counts


# ---------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------

class Table:
    def __init__(self, cfg, conn):
        self.cfg = cfg
        self.c = conn
        self.pid = self.one("SELECT pg_backend_pid()")
        self.results = {}        # (n, dist) -> Measure
        x0, y0, x1, y1 = cfg["extent"]
        self.box = f"BOX({x0} {y0},{x1} {y1})"

    def q(self, sql, params=None):
        return self.c.execute(sql, params).fetchall()

    def one(self, sql, params=None):
        return self.c.execute(sql, params).fetchone()[0]

    def exec(self, sql, params=None):
        self.c.execute(sql, params)

    def drop_indices(self):
        for (name,) in self.q("SELECT name FROM festival.index WHERE name LIKE 'pt26\\_%'"):
            self.exec("SELECT festival.drop_index(%s)", (name,))

    def setup(self):
        import numpy  # noqa: F401  (the brute force; fails early without it)
        from rtree import index  # noqa: F401
        # enable_seqscan = off (the PostGIS windows) adds its disable cost to
        # every plan, over jit_above_cost: JIT would compile every statement
        self.exec("SET jit = off")
        self.exec("CREATE EXTENSION IF NOT EXISTS postgis")
        self.exec("CREATE EXTENSION IF NOT EXISTS festival")
        self.drop_indices()
        # the buffered device's engine: "sync" (a pread per page) or "mmap"
        # (pages copied out of a mapping of the file: docs/devices.md)
        engine = self.cfg.get("engine", "sync")
        have = self.q("SELECT engine FROM festival.device WHERE name = 'pt26_dev'")
        if have and have[0][0] != engine:
            self.exec("SELECT festival.drop_device('pt26_dev')")
            have = []
        if not have:
            self.exec("SELECT festival.create_device('pt26_dev', io => 'buffered', engine => %s)",
                      (engine,))
        print(f"# festival's buffered device: engine {engine}", flush=True)
        if self.one("SELECT count(*) FROM festival.device WHERE name = 'pt26_direct_dev'") == 0:
            self.exec("SELECT festival.create_device('pt26_direct_dev', io => 'direct')")
        self.io_engine = self.batched_device()
        self.fio = shutil.which("fio")
        if self.fio is None:
            print("# fio is not installed (apt-get install fio): the rows of direct-I/O reads "
                  "against fio are skipped", flush=True)
        seed = self.cfg["seed"]
        self.exec("DROP TABLE IF EXISTS pt26_win, pt26_knn")
        parts = []
        areas = self.cfg.get("window_areas", AREAS)
        for k, a in enumerate(areas):
            t = f"pt26_win{k}"
            self.exec(f"DROP TABLE IF EXISTS {t}")
            self.exec("SELECT festival.generate_windows(%s, %s, %s, %s::box2d, %s)",
                      (t, self.cfg["windows_per_area"], a, self.box, seed + 1 + k))
            parts.append(f"SELECT id + {k * self.cfg['windows_per_area']} AS id, geom FROM {t}")
        self.exec("CREATE TABLE pt26_win AS " + " UNION ALL ".join(parts))
        for k in range(len(areas)):
            self.exec(f"DROP TABLE pt26_win{k}")
        self.exec("SELECT festival.generate_knn_points('pt26_knn', %s, %s::box2d, %s)",
                  (self.cfg["knn"]["count"], self.box, seed + 9))
        self.windows = self.q("SELECT ST_XMin(geom), ST_YMin(geom), ST_XMax(geom), ST_YMax(geom) "
                              "FROM pt26_win ORDER BY id")
        self.knn_points = self.q("SELECT ST_X(geom), ST_Y(geom) FROM pt26_knn ORDER BY id")

    def batched_device(self):
        """pt26_io_dev (direct I/O) and pt26_io_buf_dev (buffered) with
        io_uring, or libaio where the kernel refuses io_uring; returns the
        engine."""
        import psycopg
        for dev in ("pt26_io_dev", "pt26_io_buf_dev", "pt26_io_sim_dev"):
            self.exec("SELECT festival.drop_device(name) FROM festival.device WHERE name = %s", (dev,))
        engine = "io_uring"
        try:
            self.exec("SELECT festival.create_device('pt26_io_dev', io => 'direct', engine => 'io_uring')")
        except psycopg.errors.FeatureNotSupported:
            print("# io_uring is not available here: the reads rows use libaio", flush=True)
            engine = "libaio"
            self.exec("SELECT festival.create_device('pt26_io_dev', io => 'direct', engine => 'libaio')")
        self.exec("SELECT festival.create_device('pt26_io_buf_dev', io => 'buffered', engine => %s)",
                  (engine,))
        self.exec("SELECT festival.create_device('pt26_io_sim_dev', kind => 'memory', engine => %s, "
                  "profile => %s)", (engine, SIM_PROFILE))
        return engine

    def index_path(self, ix):
        return self.one(
            "SELECT CASE WHEN s = '' THEN d || '/festival' WHEN s LIKE '/%%' THEN s "
            "ELSE d || '/' || s END || '/' || dv.directory || '/' || i.file_name "
            "FROM festival.index i JOIN festival.device dv ON dv.name = i.device, "
            "(SELECT current_setting('data_directory') AS d, "
            "coalesce(current_setting('festival.data_directory', true), '') AS s) x "
            "WHERE i.name = %s", (ix,))

    def fio_read(self, path):
        """fio's 4 kB random read at queue depth 32 over path (read-only,
        O_DIRECT, the device's engine): microseconds per page (1 / IOPS)."""
        cmd = [self.fio, "--name=pt26", f"--filename={path}", "--readonly", "--direct=1",
               "--rw=randread", f"--bs={self.cfg['page_size']}", f"--ioengine={self.io_engine}",
               f"--iodepth={FIO_DEPTH}", "--time_based", f"--runtime={self.cfg['fio_seconds']}",
               "--output-format=json"]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise TableError(f"fio failed ({' '.join(cmd)}): {out.stderr.strip()[:500]}")
        iops = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]["read"]["iops"]
        if not iops > 0:
            raise TableError(f"fio read nothing from {path}")
        return 1e6 / iops

    def io_reads(self, m, pts, expect_win, total):
        """The reads rows: the windows over an STR-loaded R-tree on a
        batched engine, direct I/O and buffered, depth-first and a level at
        a time (the two modes alternate round by round), each round a
        festival run; then fio over the direct-I/O index's file."""
        ps = self.cfg["page_size"]
        reps_q = self.cfg["repetitions"]["query"]
        warm = self.cfg["warmup"]["query"]
        one_sql = "SELECT count(*) FROM pt26_win w, LATERAL festival.query(%s, w.geom) q"
        # the batch: every window in one traversal, each level's pages of all
        # the windows read together (groups of up to 64 nodes)
        batch_sql = ("SELECT sum(cardinality(ids))::bigint FROM festival.query_batch_ids(%s, "
                     "(SELECT array_agg(geom ORDER BY id) FROM pt26_win))")
        modes = (("depth-first", "depth_first", one_sql), ("level", "level", one_sql),
                 ("level", "batch", batch_sql))
        for ix, dev, io, tag in (("pt26_io", "pt26_io_dev", "direct I/O", "io"),
                                 ("pt26_io_buf", "pt26_io_buf_dev", "buffered", "io_buf"),
                                 ("pt26_io_sim", "pt26_io_sim_dev", f"simulated {SIM_PROFILE}",
                                  "io_sim")):
            self.exec("SELECT festival.create_index(%s, 'rtree', %s, %s::jsonb, %s::regclass)",
                      (ix, dev, json.dumps({"split": "quadratic", "page_size": ps}), pts))
            self.exec("SELECT festival.build(%s, 'str')", (ix,))
            per_window = ("SELECT count(q.id) FROM pt26_win w LEFT JOIN LATERAL "
                          "festival.query(%s, w.geom) q ON true GROUP BY w.id ORDER BY w.id")
            counts = {}
            for mode in ("depth-first", "level"):
                self.exec("SELECT set_config('festival.window_search', %s, false)", (mode,))
                check_counts(f"festival.query, {io}, {mode}",
                             [r[0] for r in self.q(per_window, (ix,))], expect_win)
            check_counts(f"festival.query_batch_ids, {io}", [r[0] for r in self.q(
                "SELECT cardinality(ids) FROM festival.query_batch_ids(%s, (SELECT array_agg("
                "geom ORDER BY id) FROM pt26_win)) ORDER BY query_no", (ix,))], expect_win)
            for r in range(warm + reps_q):
                for mode, suffix, sql in modes:
                    self.exec("SELECT set_config('festival.window_search', %s, false)", (mode,))
                    self.exec("SELECT festival.begin_run(%s)", (f"pt26 reads {io} {suffix}",))
                    c0, t0 = schedstat_seconds(self.pid), time.perf_counter()
                    got = self.one(sql, (ix,))
                    c1, t1 = schedstat_seconds(self.pid), time.perf_counter()
                    run = self.one("SELECT festival.end_run()")
                    if got != total:
                        raise TableError(f"{io} {mode}: {got} answers, {total} expected")
                    # device time: the reads' wall time, or the simulated drive's
                    pages, subs, read_s, device_s = self.q(
                        "SELECT pages_read, read_submissions, (metrics->>'read_seconds')::float8, "
                        "device_seconds FROM festival.run WHERE run_id = %s", (run,))[0]
                    self.exec("DELETE FROM festival.run WHERE run_id = %s", (run,))
                    if r < warm:
                        continue
                    m.samples.setdefault(f"win_{tag}_{suffix}", []).append((c1 - c0, t1 - t0))
                    if pages > 0:
                        dev_s = device_s if tag == "io_sim" else read_s
                        m.samples.setdefault(f"{tag}_{suffix}", []).append(
                            (dev_s * 1e6 / pages, (t1 - t0) * 1e6 / pages))
                    counts[suffix] = (pages, subs)
            self.exec("RESET festival.window_search")
            if counts["depth_first"][0] != counts["level"][0]:
                raise TableError(f"{io} reads: depth-first read {counts['depth_first']} "
                                 f"(pages, submissions), level {counts['level']}: the pages differ")
            pages, sub_df = counts["depth_first"]
            sub_lv = counts["level"][1]
            pages_b, sub_b = counts["batch"]
            print(f"# {io} ({self.io_engine}): {pages} pages per round, in {sub_df} submissions "
                  f"depth-first, {sub_lv} a level at a time ({pages / max(1, sub_lv):.2f} pages each); "
                  f"the batch {pages_b} pages in {sub_b} submissions ({pages_b / max(1, sub_b):.2f} each)",
                  flush=True)
            if tag == "io" and self.fio is not None:
                us = self.fio_read(self.index_path(ix))
                m.samples.setdefault("io_fio", []).append((us, us))
            self.exec("SELECT festival.drop_index(%s)", (ix,))

    def dataset(self, n, dist):
        import numpy as np
        cfg = self.cfg
        m = Measure(self.pid)
        reps_b = cfg["repetitions"]["build"]
        reps_q = cfg["repetitions"]["query"]
        warm = cfg["warmup"]["query"]
        pts = "pt26_pts"
        self.exec(f"DROP TABLE IF EXISTS {pts}, pt26_gist, pt26_spgist")
        self.exec("SELECT festival.generate_points(%s, %s, %s, %s, %s::box2d)",
                  (pts, n, dist, cfg["seed"], self.box))
        self.exec(f"VACUUM ANALYZE {pts}")
        rows = self.q(f"SELECT id, ST_X(geom), ST_Y(geom) FROM {pts} ORDER BY id")
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        xs = np.array([r[1] for r in rows])
        ys = np.array([r[2] for r in rows])
        del rows

        # the brute force: points in each window, the k nearest distances
        expect_win = [int(np.count_nonzero((xs >= a) & (xs <= c) & (ys >= b) & (ys <= d)))
                      for a, b, c, d in self.windows]
        if cfg.get("only") == "reads":
            self.io_reads(m, pts, expect_win, sum(expect_win))
            self.exec(f"DROP TABLE IF EXISTS {pts}")
            self.results[(n, dist)] = m
            print(f"# {dist} {n}: every answer equals the brute force's "
                  f"({len(self.windows)} windows, {sum(expect_win)} answers)", flush=True)
            return
        k = cfg["knn"]["k"]
        expect_knn = []
        for px, py in self.knn_points:
            d = np.hypot(xs - px, ys - py)
            expect_knn.append(sorted(np.partition(d, k - 1)[:k].tolist()) if len(d) > k
                              else sorted(d.tolist()))

        # festival builds
        ps = cfg["page_size"]
        queries_only = cfg.get("only") == "queries"
        if queries_only:
            reps_b = 1
        for name, (structure, options, method) in FESTIVAL_BUILDS.items():
            if queries_only and name != "quadratic":
                continue        # the queries use the quadratic R-tree only
            ix = f"pt26_{name}"
            opts = dict(options, page_size=ps)
            if opts.get("cache"):
                opts["cache_size"] = cfg["cache_size"]

            def fresh(ix=ix, structure=structure, opts=opts):
                self.exec("SELECT festival.drop_index(name) FROM festival.index WHERE name = %s",
                          (ix,))
                self.exec("SELECT festival.create_index(%s, %s, 'pt26_dev', %s::jsonb, %s::regclass)",
                          (ix, structure, json.dumps(opts), pts))
            built = m.run(f"build_{name}",
                          lambda ix=ix, method=method: self.one("SELECT festival.build(%s, %s)",
                                                                (ix, method)),
                          reps_b, before=fresh)
            if built != n:
                raise TableError(f"festival {name}: build returned {built} entries, {n} expected")
            if name != "quadratic":
                self.exec("SELECT festival.drop_index(%s)", (ix,))

        # PostGIS builds: INSERT into an indexed table, CREATE INDEX
        for am in ("gist", "spgist"):
            t = f"pt26_{am}"
            self.exec(f"CREATE TABLE {t} (id bigint, geom geometry(Point))")
            self.exec(f"CREATE INDEX {t}_geom ON {t} USING {am} (geom)")
            m.run(f"build_{am}",
                  lambda t=t: self.exec(f"INSERT INTO {t} SELECT id, geom FROM {pts}"),
                  reps_b, before=lambda t=t: self.exec(f"TRUNCATE {t}"))
            if self.one(f"SELECT count(*) FROM {t}") != n:
                raise TableError(f"PostGIS {am}: the table lost rows")
            self.exec(f"VACUUM ANALYZE {t}")
        if not queries_only:
            m.run("build_gist_ci",
                  lambda: self.exec(f"CREATE INDEX pt26_ci ON {pts} USING gist (geom)"),
                  reps_b, before=lambda: self.exec("DROP INDEX IF EXISTS pt26_ci"))
        self.exec("DROP INDEX IF EXISTS pt26_ci")

        # windows: festival, one call each and one batch
        ix = "pt26_quadratic"
        per_window = ("SELECT count(q.id) FROM pt26_win w LEFT JOIN LATERAL {f} q ON true "
                      "GROUP BY w.id ORDER BY w.id")
        check_counts("festival.query", [r[0] for r in self.q(per_window.format(
            f="festival.query(%s, w.geom)"), (ix,))], expect_win)
        got = dict(self.q("SELECT query_no, count(*) FROM festival.query_batch(%s, "
                          "(SELECT array_agg(geom ORDER BY id) FROM pt26_win)) GROUP BY 1", (ix,)))
        check_counts("festival.query_batch", [got.get(i + 1, 0) for i in range(len(self.windows))],
                     expect_win)
        batch_ids_sql = ("SELECT query_no, cardinality(ids) FROM festival.query_batch_ids(%s, "
                         "(SELECT array_agg(geom ORDER BY id) FROM pt26_win)) ORDER BY 1")
        got = self.q(batch_ids_sql, (ix,))
        if [r[0] for r in got] != list(range(1, len(self.windows) + 1)):
            raise TableError("festival.query_batch_ids: not one row per window in order")
        check_counts("festival.query_batch_ids", [r[1] for r in got], expect_win)
        one_ids_sql = ("SELECT cardinality(array(SELECT id FROM festival.query(%s, w.geom))) "
                       "FROM pt26_win w ORDER BY w.id")
        check_counts("festival.query as arrays", [r[0] for r in self.q(one_ids_sql, (ix,))],
                     expect_win)
        total = sum(expect_win)
        runs = {
            "win_one": ("SELECT count(*) FROM pt26_win w, LATERAL festival.query(%s, w.geom) q", (ix,)),
            "win_batch": ("SELECT count(*) FROM festival.query_batch(%s, "
                          "(SELECT array_agg(geom ORDER BY id) FROM pt26_win))", (ix,)),
            "win_batch_ids": ("SELECT sum(cardinality(ids))::bigint FROM festival.query_batch_ids(%s, "
                              "(SELECT array_agg(geom ORDER BY id) FROM pt26_win))", (ix,)),
            "win_one_ids": ("SELECT sum(cardinality(array(SELECT id FROM festival.query(%s, w.geom))))"
                            "::bigint FROM pt26_win w", (ix,)),
        }
        # PostGIS: one index scan per window (OFFSET 0 keeps the subquery a subquery)
        self.exec("SET enable_seqscan = off")
        self.exec("SET enable_bitmapscan = off")
        for am in ("gist", "spgist"):
            sub = (f"(SELECT 1 AS id FROM pt26_{am} p WHERE ST_Intersects(p.geom, w.geom) OFFSET 0)")
            check_counts(f"PostGIS {am}", [r[0] for r in self.q(per_window.format(f=sub))],
                         expect_win)
            plan = "\n".join(r[0] for r in self.q(
                f"EXPLAIN SELECT count(*) FROM pt26_win w, LATERAL {sub} s"))
            if f"pt26_{am}_geom" not in plan:
                raise TableError(f"PostGIS {am}: the plan does not use the index:\n{plan}")
            runs[f"win_{am}"] = (f"SELECT count(*) FROM pt26_win w, LATERAL {sub} s", None)
        # the same pair on a direct-I/O device (every node read from the
        # drive, not the OS page cache): an STR load of the same split
        self.exec("SELECT festival.create_index('pt26_direct', 'rtree', 'pt26_direct_dev', %s::jsonb, "
                  "%s::regclass)", (json.dumps({"split": "quadratic", "page_size": ps}), pts))
        self.exec("SELECT festival.build('pt26_direct', 'str')")
        got = dict(self.q("SELECT query_no, count(*) FROM festival.query_batch('pt26_direct', "
                          "(SELECT array_agg(geom ORDER BY id) FROM pt26_win)) GROUP BY 1"))
        check_counts("festival.query_batch, direct I/O",
                     [got.get(i + 1, 0) for i in range(len(self.windows))], expect_win)
        runs["win_one_direct"] = (runs["win_one"][0], ("pt26_direct",))
        runs["win_batch_direct"] = (runs["win_batch"][0], ("pt26_direct",))
        for key, (sql, params) in runs.items():
            got = m.run(key, lambda sql=sql, params=params: self.one(sql, params), reps_q, warm)
            if got != total:
                raise TableError(f"{key}: {got} answers, {total} expected")
        if not queries_only:
            self.io_reads(m, pts, expect_win, total)

        # SQLite R*Tree, in memory, exact coordinates in auxiliary columns
        import sqlite3
        lite = sqlite3.connect(":memory:")
        lite.execute("CREATE VIRTUAL TABLE rt USING rtree(id, minx, maxx, miny, maxy, +x, +y)")
        lite.executemany("INSERT INTO rt VALUES (?, ?, ?, ?, ?, ?, ?)",
                         ((int(i), float(x), float(x), float(y), float(y), float(x), float(y))
                          for i, x, y in zip(ids, xs, ys)))
        lite.commit()
        lite_sql = ("SELECT count(*) FROM rt WHERE minx <= ? AND maxx >= ? AND miny <= ? "
                    "AND maxy >= ? AND x BETWEEN ? AND ? AND y BETWEEN ? AND ?")

        def lite_counts():
            cur = lite.cursor()
            return [cur.execute(lite_sql, (c, a, d, b, a, c, b, d)).fetchone()[0]
                    for a, b, c, d in self.windows]
        check_counts("SQLite R*Tree", lite_counts(), expect_win)
        m.run("win_sqlite", lambda: sum(lite_counts()), reps_q, warm, in_process=True)
        lite.close()

        # libspatialindex: R*, in memory, inserted one at a time
        from rtree import index
        prop = index.Property()
        prop.dimension = 2
        prop.variant = index.RT_Star
        lsi = index.Index(properties=prop)
        for i, x, y in zip(ids.tolist(), xs.tolist(), ys.tolist()):
            lsi.insert(i, (x, y, x, y))
        mins = np.array([(a, b) for a, b, _, _ in self.windows], dtype=np.float64)
        maxs = np.array([(c, d) for _, _, c, d in self.windows], dtype=np.float64)
        check_counts("libspatialindex per call", [lsi.count(w) for w in self.windows], expect_win)
        cap = 2 * max(total, len(self.windows))
        check_counts("libspatialindex vectorised", lsi_intersection_v(lsi, mins, maxs, cap),
                     expect_win)
        m.run("win_lsi_call", lambda: sum(lsi.count(w) for w in self.windows), reps_q, warm,
              in_process=True)
        m.run("win_lsi_vec", lambda: int(lsi_intersection_v(lsi, mins, maxs, cap).sum()), reps_q, warm,
              in_process=True)

        # kNN: festival, GiST, libspatialindex (one nearest_v call)
        kp = np.array(self.knn_points, dtype=np.float64)
        fest_knn = [[r[0] for r in self.q("SELECT distance FROM festival.knn(%s, %s::geometry, %s)",
                                          (ix, f"POINT({px!r} {py!r})", k))]
                    for px, py in self.knn_points]
        check_knn("festival.knn", fest_knn, expect_knn)
        knn_batch_sql = ("SELECT {} FROM festival.knn_batch_ids(%s, (SELECT array_agg(geom ORDER BY id) "
                         "FROM pt26_knn), %s)")
        got = self.q(knn_batch_sql.format("query_no, distances") + " ORDER BY 1", (ix, k))
        if [r[0] for r in got] != list(range(1, len(self.knn_points) + 1)):
            raise TableError("festival.knn_batch_ids: not one row per kNN point in order")
        check_knn("festival.knn_batch_ids", [r[1] for r in got], expect_knn)
        # the query point as a constant: an index-ordered scan per point
        gist_sql = ("SELECT ST_Distance(p.geom, q.g) FROM (SELECT %s::geometry AS g) q, "
                    "LATERAL (SELECT geom FROM pt26_gist ORDER BY geom <-> q.g LIMIT %s) p")
        qids = [r[0] for r in self.q("SELECT id FROM pt26_knn ORDER BY id")]
        check_knn("PostGIS GiST kNN",
                  [[r[0] for r in self.q(gist_sql, (f"POINT({px!r} {py!r})", k))]
                   for px, py in self.knn_points], expect_knn)
        got_ids, counts = lsi.nearest_v(kp, kp, num_results=k, strict=True)
        pos = {int(i): j for j, i in enumerate(ids.tolist())}
        lsi_knn, at = [], 0
        for qn, cnt in enumerate(counts.tolist()):
            sel = [pos[int(i)] for i in got_ids[at:at + cnt]]
            at += cnt
            lsi_knn.append([float(np.hypot(xs[j] - kp[qn][0], ys[j] - kp[qn][1])) for j in sel])
        check_knn("libspatialindex nearest_v", lsi_knn, expect_knn)
        m.run("knn_fest", lambda: self.one("SELECT count(*) FROM pt26_knn q, "
                                           "LATERAL festival.knn(%s, q.geom, %s) r", (ix, k)),
              reps_q, warm)
        m.run("knn_batch_ids", lambda: self.one(knn_batch_sql.format("sum(cardinality(ids))::bigint"),
                                                (ix, k)),
              reps_q, warm)
        m.run("knn_gist", lambda: self.one("SELECT count(*) FROM pt26_knn q, LATERAL (SELECT 1 FROM "
                                           "pt26_gist p ORDER BY p.geom <-> q.geom LIMIT %s) s", (k,)),
              reps_q, warm)
        m.run("knn_lsi_vec", lambda: int(lsi.nearest_v(kp, kp, num_results=k, strict=True)[1].sum()),
              reps_q, warm, in_process=True)
        self.exec("RESET enable_seqscan")
        self.exec("RESET enable_bitmapscan")
        del lsi

        self.drop_indices()
        self.exec(f"DROP TABLE IF EXISTS {pts}, pt26_gist, pt26_spgist")
        self.results[(n, dist)] = m
        print(f"# {dist} {n}: every answer equals the brute force's "
              f"({len(self.windows)} windows, {total} answers; {len(qids)} kNN points, k = {k})",
              flush=True)

    def teardown(self):
        self.drop_indices()
        self.exec("DROP TABLE IF EXISTS pt26_win, pt26_knn, pt26_pts, pt26_gist, pt26_spgist")
        self.exec("SELECT festival.drop_device(name) FROM festival.device "
                  "WHERE name IN ('pt26_dev', 'pt26_direct_dev', 'pt26_io_dev', 'pt26_io_buf_dev', "
                  "'pt26_io_sim_dev')")


def fmt_ratio(f, p, i):
    if f is None or p is None or p[i] <= 0:
        return "-"
    return f"{f[i] / p[i]:.2f}"


def print_table(t, cfg):
    sets = sorted(t.results)
    head = " | ".join(f"{d} {n}" for n, d in sets)
    print()
    print("## festival / peer: backend CPU ratio (wall ratio), medians")
    print()
    print("(the rows of device time per page: festival's device read time per page / fio's, or")
    print("the simulated drive's; in parentheses the whole query's wall time per page)")
    print()
    print(f"| case | {head} | target |")
    print("|---|" + "---|" * len(sets) + "---|")
    for label, fk, pk, target in ROWS:
        if cfg.get("only") == "reads" and fk not in READS_KEYS:
            continue
        if cfg.get("only") == "queries" and (fk in READS_KEYS or fk.startswith("build_")):
            continue
        cells = []
        for s in sets:
            m = t.results[s]
            f, p = m.median(fk), m.median(pk)
            cells.append(f"{fmt_ratio(f, p, 0)} ({fmt_ratio(f, p, 1)})")
        print(f"| {label} | " + " | ".join(cells) + f" | {target or ''} |")
    # build CPU per object from the smallest to the largest size
    sizes = sorted({n for n, _ in sets})
    if len(sizes) > 1 and cfg.get("only") not in ("reads", "queries"):
        lo, hi = sizes[0], sizes[-1]
        for name, label in (("quadratic", "quadratic"), ("rstar", "R*-tree")):
            cells = []
            for d in cfg["distributions"]:
                a = t.results.get((lo, d))
                b = t.results.get((hi, d))
                if a and b and a.median(f"build_{name}") and b.median(f"build_{name}"):
                    g = (b.median(f"build_{name}")[0] / hi) / (a.median(f"build_{name}")[0] / lo)
                    cells.append(f"{d} x{g:.2f}")
            print(f"| build CPU per object {lo} -> {hi}, {label} (no cache) | "
                  + ", ".join(cells) + " | <= x1.35 |")
    print()
    print("## medians: backend CPU s / wall s (io_*: device us per page / wall us per page)")
    print()
    keys = sorted({k for m in t.results.values() for k in m.samples})
    print(f"| measure | {head} |")
    print("|---|" + "---|" * len(sets))
    for k in keys:
        cells = []
        for s in sets:
            v = t.results[s].median(k)
            cells.append("-" if v is None else f"{v[0]:.4f} / {v[1]:.4f}")
        print(f"| {k} | " + " | ".join(cells) + " |")


def main(argv):
    args = parse_args(argv)
    try:
        cfg = load(args)
        if args.check_only:
            print("needs: rtree")
            return 0
        if args.dry_run:
            for n in cfg["points"]:
                for d in cfg["distributions"]:
                    print(f"data set {d} {n}: {len(FESTIVAL_BUILDS)} festival builds, 3 PostGIS builds "
                          f"x {cfg['repetitions']['build']}; {QUERY_MEASURES} query measures x "
                          f"{cfg['repetitions']['query']} (+{cfg['warmup']['query']} warm-up)")
            return 0
        import psycopg
        print(f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        with psycopg.connect(autocommit=True) as conn:
            t = Table(cfg, conn)
            t.setup()
            try:
                for n in cfg["points"]:
                    for d in cfg["distributions"]:
                        t.dataset(n, d)
            finally:
                t.teardown()
        print_table(t, cfg)
        print()
        print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
    except TableError as e:
        print(f"run-workload: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
