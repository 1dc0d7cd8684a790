#!/usr/bin/python3
"""Bulk insertions and batch queries for scripts/run-workload.

The xBR+-tree experiments of Fevgas 2019, §3.6 (after Roumelis et al.) run
workloads the generic runner (workload.py) does not have:

  "bulk_insert":   {"batch_percent": P, "methods": ["bulk", "bulk_ssd"]}
                   per data set of N points, a batch of N * P / 100 new
                   points (the data set's distribution, another seed, ids
                   after the data's) goes into the index built from the
                   data set with festival.insert_many, one measured run
                   per method (label workload=insert method=M batch=P),
                   the index rebuilt (unmeasured) before each; the run
                   ends with festival.flush, which makes the batch durable.
  "batch_queries": {"point": {"count": N},
                    "window": {"count": N, "area_percent": A},
                    "range": {"count": N, "area_percent": A},
                    "modes": ["one", "batch", "generic"]}
                   query sets over the built index: point location of N
                   stored points, N windows of A % of the extent, and N
                   distance ranges around stored points whose circles
                   cover A % of the extent; each set runs in every mode
                   (label workload=queries kind=K mode=M): "one" is one
                   festival.query per query (the original algorithms),
                   "batch" one festival.query_batch (the structure's batch
                   search), "generic" the same with
                   festival.generic_query_batch on.

Every configuration (structures x frameworks x page sizes x devices, the
configuration's build method making the base tree) runs on every data set
(data.points may list several sizes).  Indices on file devices are closed
before every measured run, so each starts with a cold page cache and drive;
on memory devices (whose pages live only while the index is open) they are
not.  Every run is checked: the insertion by the entry count and 20 windows
against PostGIS over the data and the batch, the queries by their answer
counts against PostGIS.

This module imports workload.py (and mixes.py's split_config) and changes
nothing in them.  With --resume (scripts/reproduce) every configuration on a
data set is a cell of scripts/lib/cells.py, skipped when finished before.
"""

import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cells  # noqa: E402
import mixes  # noqa: E402
import workload  # noqa: E402
from workload import WorkloadError  # noqa: E402

OWN_KEYS = ("bulk_insert", "batch_queries")
QUERY_KINDS = ("point", "window", "range")
QUERY_MODES = ("one", "batch", "generic")


def check_own(own):
    bi = own.get("bulk_insert")
    if bi is not None:
        if not isinstance(bi, dict) or not bi.get("methods") or \
                not 0 < float(bi.get("batch_percent", 0)) <= 1000:
            raise WorkloadError("bulk_insert needs methods (a list) and batch_percent in (0, 1000]")
    bq = own.get("batch_queries")
    if bq is not None:
        if not isinstance(bq, dict):
            raise WorkloadError("batch_queries must be an object")
        bad = set(bq) - set(QUERY_KINDS) - {"modes"}
        if bad:
            raise WorkloadError(f"batch_queries: unknown keys {sorted(bad)}; accepted: "
                                f"{', '.join(QUERY_KINDS)}, modes")
        for m in bq.get("modes", []):
            if m not in QUERY_MODES:
                raise WorkloadError(f"batch_queries: unknown mode {m!r}; accepted: "
                                    f"{', '.join(QUERY_MODES)}")


class BatchRunner(workload.Runner):
    def prepare_extra(self, own, ds):
        self.own = own
        data = self.exp["data"]
        ext = [float(v) for v in self.extent]
        seed = int(data["seed"])
        n = int(self.npoints)
        box = "ST_MakeBox2D(ST_MakePoint(%s, %s), ST_MakePoint(%s, %s))"
        self.points_id = self.one("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                                  "AND attnum > 0 AND format_type(atttypid, atttypmod) IN "
                                  "('bigint', 'integer') ORDER BY attnum LIMIT 1", (self.points,))
        self.extra_tables = []
        bi = own.get("bulk_insert")
        if bi:
            m = max(1, round(n * float(bi["batch_percent"]) / 100))
            raw = self.table("batch_raw")
            self.extra = self.table("batch")
            self.q(f"DROP TABLE IF EXISTS {raw}")
            self.q(f"DROP TABLE IF EXISTS {self.extra}")
            self.q(f"SELECT festival.generate_points(%s, %s::bigint, %s, %s::int, {box})",
                   (raw, m, ds["distribution"], seed + 7919, *ext))
            rgeom = self.geometry_query(raw).split('"')[1]
            rid = self.one("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                           "AND attnum > 0 AND format_type(atttypid, atttypmod) IN "
                           "('bigint', 'integer') ORDER BY attnum LIMIT 1", (raw,))
            # ids after the data's
            self.q(f'CREATE TABLE {self.extra} AS SELECT {n} + "{rid}"::bigint AS id, "{rgeom}" AS geom '
                   f'FROM {raw}')
            self.q(f"DROP TABLE {raw}")
            self.q(f"CREATE INDEX ON {self.extra} USING gist (geom)")
            self.q(f"ANALYZE {self.extra}")
            self.batch_size = m
            self.check_windows = self.table("batch_windows")
            self.q(f"DROP TABLE IF EXISTS {self.check_windows}")
            self.q(f"SELECT festival.generate_windows(%s, 20, 0.1, {box}, %s::int)",
                   (self.check_windows, *ext, seed + 29))
            self.extra_tables += [self.extra, self.check_windows]
        bq = own.get("batch_queries")
        self.query_sets = {}
        if bq:
            width = ext[2] - ext[0]
            for kind in QUERY_KINDS:
                spec = bq.get(kind)
                if not spec:
                    continue
                t = self.table(f"q_{kind}")
                self.q(f"DROP TABLE IF EXISTS {t}")
                count = int(spec["count"])
                pred, dist = "intersects", None
                if kind == "window":
                    # the data's seed, as workload.py's window sets and a SQL script
                    self.q(f"SELECT festival.generate_windows(%s, %s::int, %s::float8, {box}, %s::int)",
                           (t + "_raw", count, float(spec["area_percent"]), *ext, seed))
                    self.q(f"CREATE TABLE {t} AS SELECT row_number() OVER () AS s, g "
                           f"FROM ({self.geometry_query(t + '_raw')}) w")
                    self.q(f"DROP TABLE {t}_raw")
                else:
                    # stored points, in an order of their own
                    salt = "p" if kind == "point" else "r"
                    self.q(f'CREATE TABLE {t} AS SELECT row_number() OVER (ORDER BY md5("{self.points_id}"::text || %s)) AS s, '
                           f'"{self.points_geom}" AS g FROM {self.points} '
                           f'ORDER BY md5("{self.points_id}"::text || %s) LIMIT %s', (salt, salt, count))
                    if kind == "range":
                        # a circle of the windows' area: A % of the extent
                        pred = "dwithin"
                        dist = width * math.sqrt(float(spec["area_percent"]) / 100.0 / math.pi)
                if pred == "dwithin":
                    expected = self.one(f'SELECT count(*) FROM {t} q JOIN {self.points} p '
                                        f'ON ST_DWithin(p."{self.points_geom}", q.g, %s)', (dist,))
                else:
                    expected = self.one(f'SELECT count(*) FROM {t} q JOIN {self.points} p '
                                        f'ON ST_Intersects(p."{self.points_geom}", q.g)')
                self.query_sets[kind] = {"table": t, "pred": pred, "distance": dist,
                                         "count": count, "expected": expected,
                                         "area_percent": spec.get("area_percent")}
                self.extra_tables.append(t)

    def drop_extra(self):
        for t in self.extra_tables:
            self.q(f"DROP TABLE IF EXISTS {t}")

    # ------------------------------------------------------------------

    def cold(self, name, c):
        """Close the index (not on memory devices): a cold page cache and drive."""
        if self.device_kind.get(c["device"]["name"]) != "memory":
            self.q("SELECT festival.close(%s)", (name,))

    def insert_batch(self, name, method, conn):
        rows = self.one("SELECT festival.insert_many(%s, query => %s, method => %s)",
                        (name, f"SELECT id, geom FROM {self.extra}", method), conn=conn)
        self.one("SELECT festival.flush(%s)", (name,), conn=conn)
        return rows

    def insertion_wrong(self, name):
        """Windows whose answers differ from PostGIS over the data and the batch."""
        return self.one(
            f'SELECT count(*) FROM ({self.geometry_query(self.check_windows)}) w '
            f'WHERE (SELECT count(*) FROM festival.query(%s, w.g)) <> '
            f'(SELECT count(*) FROM {self.points} p WHERE ST_Intersects(p."{self.points_geom}", w.g)) + '
            f'(SELECT count(*) FROM {self.extra} e WHERE ST_Intersects(e.geom, w.g))', (name,))

    def run_queries(self, name, qs, mode, conn):
        self.q("SELECT set_config('festival.generic_query_batch', %s, false)",
               ("on" if mode == "generic" else "off",), conn=conn)
        try:
            if mode == "one":
                return self.one(f"SELECT count(*) FROM (SELECT g FROM {qs['table']} ORDER BY s) q, "
                                "LATERAL festival.query(%s, q.g, %s, true, %s)",
                                (name, qs["pred"], qs["distance"]), conn=conn)
            return self.one(f"SELECT count(*) FROM festival.query_batch(%s, "
                            f"ARRAY(SELECT g FROM {qs['table']} ORDER BY s), %s, %s)",
                            (name, qs["pred"], qs["distance"]), conn=conn)
        finally:
            self.q("RESET festival.generic_query_batch", conn=conn)

    def run_extra(self, c, label, ds):
        exp = self.exp
        name = workload.index_name(exp, c, ds)
        self.q("SELECT festival.drop_index(name) FROM festival.index WHERE name = %s", (name,))
        opts = workload.index_options(c)
        if c["structure"]["structure"] in ("gridfile", "lbgrid", "xbrtree"):
            # inserted points come from the whole extent, not just the data's
            opts.setdefault("extent", [float(v) for v in self.extent])
        self.q("SELECT festival.create_index(%s, %s, %s, %s::jsonb, %s::regclass)",
               (name, c["structure"]["structure"], c["device"]["name"],
                json.dumps(opts), self.points))
        common = {"name": exp["name"], "structure": c["structure"]["structure"],
                  "structure_options": c["structure"]["options"], "framework": c["framework"],
                  "page_size": c["page_size"], "device": c["device"],
                  "build": c["build"]["method"], "points": self.npoints,
                  "data": dict(exp["data"], distribution=ds["distribution"],
                               points=ds["points"], generator=self.generator),
                  "repetitions": exp["repetitions"], "warmup": exp["warmup"]}
        n = int(self.npoints)
        method = c["build"]["method"]

        def build():
            built = self.build(name, method, self.conn)
            if built != n:
                raise WorkloadError(f"{label}: the build inserted {built} of {n} points")

        bi = self.own.get("bulk_insert")
        if bi:
            pct = bi["batch_percent"]
            for m in bi["methods"]:
                for rep in range(1 - int(exp["warmup"]), int(exp["repetitions"]) + 1):
                    build()
                    self.cold(name, c)
                    settings = dict(common, workload={"workload": "insert", "method": m,
                                                      "batch_percent": pct,
                                                      "batch": self.batch_size},
                                    rep=rep, expected=self.batch_size)
                    wl = f"workload=insert method={m} batch={workload.fmt_value(pct)}"
                    if rep >= 1:
                        got = self.measured(f"{label} {wl} rep={rep}", settings,
                                            lambda conn, m=m: self.insert_batch(name, m, conn))
                    else:
                        got = self.insert_batch(name, m, self.conn)
                    entries = int(self.one("SELECT festival.stats(%s)->>'entries'", (name,)))
                    wrong = self.insertion_wrong(name)
                    if got != self.batch_size or entries != n + self.batch_size or wrong != 0:
                        raise WorkloadError(f"{label} {wl} rep={rep}: inserted {got} of "
                                            f"{self.batch_size}, {entries} entries, {wrong} windows "
                                            "differ from PostGIS; the experiment stops")
        bq = self.own.get("batch_queries")
        if bq:
            build()
            for kind, qs in self.query_sets.items():
                for mode in bq.get("modes", ["one", "batch"]):
                    wl = f"workload=queries kind={kind} mode={mode}"
                    for rep in range(1 - int(exp["warmup"]), int(exp["repetitions"]) + 1):
                        self.cold(name, c)
                        settings = dict(common, workload={"workload": "queries", "kind": kind,
                                                          "mode": mode, "count": qs["count"],
                                                          "area_percent": qs["area_percent"],
                                                          "distance": qs["distance"]},
                                        rep=rep, expected=qs["expected"])
                        if rep >= 1:
                            got = self.measured(f"{label} {wl} rep={rep}", settings,
                                                lambda conn, mode=mode, qs=qs:
                                                self.run_queries(name, qs, mode, conn))
                        else:
                            got = self.run_queries(name, qs, mode, self.conn)
                        if got != qs["expected"]:
                            raise WorkloadError(f"{label} {wl} rep={rep} found {got} answers, "
                                                f"PostGIS finds {qs['expected']}: the experiment stops")
        self.q("SELECT festival.close(%s)", (name,))
        if not self.keep:
            self.q("SELECT festival.drop_index(%s)", (name,))


def main(argv):
    split = mixes.split_config(argv, OWN_KEYS, "bulk_insert and batch_queries")
    if split is None:
        return 2
    own, argv, tmp_path = split
    try:
        check_own(own)
        args = workload.parse_args(argv)
        exp = workload.load_experiment(args)
        # windows and kNN sets stay with the generic runner
        exp["windows"]["area_percent"] = []
        exp["knn"]["k"] = []
        sets = workload.datasets(exp)
        configs = workload.matrix(exp)
        nbi = len((own.get("bulk_insert") or {}).get("methods", []))
        bq = own.get("batch_queries") or {}
        nbq = len([k for k in QUERY_KINDS if bq.get(k)]) * len(bq.get("modes", ["one", "batch"]))
        per = (nbi + nbq) * int(exp["repetitions"])
        if args.check_only:
            return 0
        if args.dry_run:
            for ds in sets:
                for c in configs:
                    print(f"{workload.base_label(exp, c)}{workload.data_label(exp, ds)}: "
                          f"{nbi} insertions, {nbq} query runs")
            print(f"{len(configs) * len(sets)} configurations, {len(configs) * len(sets) * per} "
                  "measured runs")
            return 0
        import psycopg
        with psycopg.connect(autocommit=True) as conn:
            r = BatchRunner(conn, exp, args.keep_indices)
            r.prepare()
            configs = workload.matrix(exp, r.structures)
            print(f"experiment {exp['name']}: {len(configs)} configurations x {len(sets)} data sets "
                  f"x {per} measured runs", file=sys.stderr, flush=True)
            started = time.monotonic()
            # --resume (scripts/reproduce): a configuration on a data set is a
            # cell, skipped when finished before with the same digest, its runs
            # replaced when it was interrupted (scripts/lib/cells.py)
            tracker = cells.Tracker() if args.resume else None
            if args.resume:
                cells.ensure(conn)
            k, stop = 0, False
            for ds in sets:
                dl = workload.data_label(exp, ds)
                todo = [c for c in configs if not args.resume or not cells.finished(
                    conn, workload.base_label(exp, c) + dl, cells.digest(exp, c, ds, own))]
                if not todo:
                    k += len(configs)
                    print(f"experiment {exp['name']}{dl}: every configuration finished before",
                          file=sys.stderr, flush=True)
                    continue
                r.prepare_data(ds, single=len(sets) == 1)
                r.prepare_extra(own, ds)
                for c in configs:
                    k += 1
                    label = workload.base_label(exp, c) + dl
                    if c not in todo:
                        print(f"[{k}/{len(configs) * len(sets)}] finished before, skipped: {label}",
                              file=sys.stderr, flush=True)
                        continue
                    if args.resume and not tracker.may_start(conn, label):
                        stop = True
                        break
                    workload.progress(k, len(configs) * len(sets), started, label)
                    if args.resume:
                        cells.run_cell(conn, tracker, label, exp["name"],
                                       cells.digest(exp, c, ds, own),
                                       lambda c=c, label=label: r.run_extra(c, label, ds))
                    else:
                        r.run_extra(c, label, ds)
                r.drop_extra()
                r.drop_data()
                if stop:
                    break
            print(f"stored {r.stored} runs in {time.monotonic() - started:.1f} s; scripts/report "
                  f"--label 'exp={exp['name']} %' --output DIR", file=sys.stderr)
    except WorkloadError as e:
        print(f"run-workload: {e}", file=sys.stderr)
        return 2
    finally:
        os.unlink(tmp_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
