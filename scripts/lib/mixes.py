#!/usr/bin/python3
"""Insert/search mixes and group point queries for scripts/run-workload.

The thesis experiments of Fevgas 2019, ch. 3 (Fig. 3.9-3.12 and 3.15) run
workloads the generic runner (workload.py) does not have:

  "mixes":  {"insert_percent": [0, 20, ...], "operations": N}
            N operations per mix, the given percent of them inserts of new
            points (the data set's generator continued: its points n+1 ..
            n+N with the data set's seed and distribution), the rest
            point searches of stored points, interleaved; one measured run
            per mix (label workload=mix inserts=P).  After each run its
            inserts are deleted again (unmeasured), so every mix starts from
            the built index's points; the index itself keeps what the mixes
            before did to it (its cache, bucket splits, a hot-region
            detector's weights and placement).
            "fresh_index": true drops, creates and builds the index again
            (unmeasured) before every mix after the first, as the thesis
            initialised its indices for each workload (§3.5.2, §4.3.4):
            nothing a mix did carries over to the next.
  "groups": {"sizes": [1, 10, 100], "points": N}
            N stored points searched in groups (Alg. 8): size 1 is one
            festival.query per point, larger sizes one festival.query_batch
            per group (label workload=group size=G).

The rest of the configuration is a runner configuration (workload.py reads
it: data, structures, frameworks, page sizes, devices, builds, repetitions,
warm-up; windows and kNN sets run too when given).  Every configuration is
built once (a measured build run, as the runner does), then runs its mixes
and groups.  Every run's answers are checked: each search of a mix and each
point of a group finds its point.

This module imports workload.py and changes nothing in it.
"""

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cells  # noqa: E402
import workload  # noqa: E402
from workload import WorkloadError  # noqa: E402

OWN_KEYS = ("mixes", "groups")


class MixRunner(workload.Runner):
    def set_seed(self, seed):
        # setseed() takes a value in [-1, 1]
        self.q("SELECT setseed(%s)", ((seed % 1000003) / 1000003.0,))

    def prepare_extra(self, own):
        self.own = own
        data = self.exp["data"]
        ext = [float(v) for v in self.extent]
        n = int(self.npoints)
        seed = int(data["seed"])
        mixes = own.get("mixes")
        groups = own.get("groups")
        if mixes:
            ops = int(mixes["operations"])
            # new points: the generator's points n+1 .. n+ops of the data set's
            # own seed and distribution, i.e. the data set continued.  (A data set
            # of its own of ops points was one Gaussian cluster whenever ops <
            # 12,000: gaussian_clusters makes round(n / 8000) clusters.)  Ids
            # above the data's.
            self.extra = self.table("extra")
            whole = self.table("extra_all")
            self.q(f"DROP TABLE IF EXISTS {self.extra}")
            self.q(f"DROP TABLE IF EXISTS {whole}")
            self.q("SELECT festival.generate_points(%s, %s::bigint, %s, %s::int, "
                   "ST_MakeBox2D(ST_MakePoint(%s, %s), ST_MakePoint(%s, %s)))",
                   (whole, n + ops, self.dataset["distribution"], seed, *ext))
            wgeom = self.geometry_query(whole).split('"')[1]
            wid = self.one("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                           "AND attnum > 0 AND format_type(atttypid, atttypmod) IN "
                           "('bigint', 'integer') ORDER BY attnum LIMIT 1", (whole,))
            self.q(f'CREATE TABLE {self.extra} AS SELECT "{wid}" - {n} AS id, "{wgeom}" AS geom '
                   f'FROM {whole} WHERE "{wid}" > {n}')
            self.q(f"DROP TABLE {whole}")
            geom = self.geometry_query(self.extra).split('"')[1]
            idcol = self.one("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                             "AND attnum > 0 AND format_type(atttypid, atttypmod) IN "
                             "('bigint', 'integer') ORDER BY attnum LIMIT 1", (self.extra,))
            self.set_seed(seed + 13)
            for p in mixes["insert_percent"]:
                t = self.table(f"mix_{int(p)}")
                self.q(f"DROP TABLE IF EXISTS {t}")
                # operation seq: an insert when random() < p%, else a search of a stored point
                self.q(f"""
                    CREATE TABLE {t} AS
                    WITH o AS (SELECT s, random() * 100 < %s AS ins FROM generate_series(1, %s) s),
                         ins AS (SELECT s, row_number() OVER (ORDER BY s) AS r FROM o WHERE ins),
                         sea AS (SELECT s, row_number() OVER (ORDER BY s) AS r FROM o WHERE NOT ins),
                         ext AS (SELECT "{idcol}" AS id, "{geom}" AS g,
                                        row_number() OVER (ORDER BY "{idcol}") AS r FROM {self.extra}),
                         pts AS (SELECT id, geom AS g, row_number() OVER (ORDER BY md5(id::text || %s)) AS r
                                 FROM (SELECT "{self.points_id}" AS id, "{self.points_geom}" AS geom
                                       FROM {self.points}) p)
                    SELECT ins.s, true AS ins, {n} + 1 + ext.id AS id, ext.g
                    FROM ins JOIN ext ON ext.r = ins.r
                    UNION ALL
                    SELECT sea.s, false, pts.id, pts.g FROM sea JOIN pts ON pts.r = 1 + (sea.r - 1) %% {n}""",
                       (float(p), ops, str(p)))
        if groups:
            self.group_table = self.table("group_points")
            self.q(f"DROP TABLE IF EXISTS {self.group_table}")
            self.q(f"""CREATE TABLE {self.group_table} AS
                       SELECT row_number() OVER (ORDER BY md5(id::text)) AS s, id, g
                       FROM (SELECT "{self.points_id}" AS id, "{self.points_geom}" AS g
                             FROM {self.points}) p
                       ORDER BY md5(id::text) LIMIT %s""", (int(groups["points"]),))

    def mix(self, name, p):
        t = self.table(f"mix_{int(p)}")
        # in seq order: festival.insert, or whether the point search found it
        found = self.one(f"""
            SELECT count(*) FILTER (WHERE r) FROM (
                SELECT CASE WHEN ins THEN festival.insert(%s, id, g)
                            ELSE EXISTS (SELECT FROM festival.query(%s, g) q WHERE q.id = o.id) END AS r
                FROM (SELECT * FROM {t} ORDER BY s) o) x""", (name, name))
        return found

    def unmix(self, name, p):
        t = self.table(f"mix_{int(p)}")
        self.q(f"SELECT count(festival.delete(%s, id, g)) FROM {t} WHERE ins", (name,))
        self.q("SELECT festival.flush(%s)", (name,))

    def group(self, name, size):
        t = self.group_table
        if size == 1:
            return self.one(f"SELECT count(*) FROM (SELECT * FROM {t} ORDER BY s) o "
                            "WHERE EXISTS (SELECT FROM festival.query(%s, o.g) q WHERE q.id = o.id)",
                            (name,))
        return self.one(f"""
            WITH gr AS (SELECT (s - 1) / %s AS grp, array_agg(g ORDER BY s) AS arr,
                               array_agg(id ORDER BY s) AS ids
                        FROM {t} GROUP BY 1)
            SELECT count(*) FROM gr, LATERAL festival.query_batch(%s, gr.arr) r
            WHERE r.id = gr.ids[r.query_no]""", (size, name))

    def run_extra(self, c, label):
        exp = self.exp
        name = workload.index_name(exp, c, self.dataset)
        opts = workload.index_options(c)
        if c["structure"]["structure"] in ("gridfile", "lbgrid", "xbrtree"):
            # inserted points come from the whole extent, not just the data's
            opts.setdefault("extent", [float(v) for v in self.extent])

        def create():
            self.q("SELECT festival.drop_index(name) FROM festival.index WHERE name = %s", (name,))
            self.q("SELECT festival.create_index(%s, %s, %s, %s::jsonb, %s::regclass)",
                   (name, c["structure"]["structure"], c["device"]["name"],
                    json.dumps(opts), self.points))
        create()
        common = {"name": exp["name"], "structure": c["structure"]["structure"],
                  "structure_options": c["structure"]["options"], "framework": c["framework"],
                  "page_size": c["page_size"], "device": c["device"],
                  "build": c["build"]["method"],
                  "data": dict(exp["data"], distribution=self.dataset["distribution"],
                               points=self.dataset["points"], generator=self.generator),
                  "repetitions": exp["repetitions"], "warmup": exp["warmup"]}
        n = int(self.npoints)
        built = self.measured(f"{label} workload=build rep=1",
                              dict(common, workload={"workload": "build"}, rep=1, expected=n),
                              lambda conn: self.build(name, c["build"]["method"], conn))
        if built != n:
            raise WorkloadError(f"{label}: the build inserted {built} of {n} points")
        runs = []
        mixes = self.own.get("mixes") or {}
        fresh = bool(mixes.get("fresh_index"))
        # whether a mix has run on the index since it was built
        used = [False]

        def rebuild(p):
            """Outside the measured run: a fresh index when a mix has used this one."""
            if fresh and used[0]:
                self.q("SELECT festival.close(%s)", (name,))
                create()
                if self.build(name, c["build"]["method"], self.conn) != n:
                    raise WorkloadError(f"{label}: a rebuild before mix {p} did not insert {n} points")
                used[0] = False

        def mix_action(p):
            assert not (fresh and used[0]), "a fresh-index mix on a used index"
            used[0] = True
            return self.mix(name, p)

        for p in mixes.get("insert_percent", []):
            t = self.table(f"mix_{int(p)}")
            expected = self.one(f"SELECT count(*) FROM {t}")
            settings = {"workload": "mix", "insert_percent": p, "operations": expected}
            if fresh:
                settings["fresh_index"] = True
            runs.append((f"workload=mix inserts={int(p)}", settings, expected,
                         lambda p=p: mix_action(p),
                         None if fresh else (lambda p=p: self.unmix(name, p)),
                         lambda p=p: rebuild(p)))
        groups = self.own.get("groups") or {}
        for g in groups.get("sizes", []):
            expected = self.one(f"SELECT count(*) FROM {self.group_table}")
            runs.append((f"workload=group size={int(g)}",
                         {"workload": "group", "size": g, "points": expected},
                         expected, lambda g=g: self.group(name, int(g)), None, None))
        for wl, settings, expected, action, undo, before in runs:
            for _ in range(int(exp["warmup"])):
                if before:
                    before()
                action()
                if undo:
                    undo()
            for rep in range(1, int(exp["repetitions"]) + 1):
                if before:
                    before()
                result = self.measured(f"{label} {wl} rep={rep}",
                                       dict(common, workload=settings, rep=rep, expected=expected),
                                       lambda conn: action())
                if undo:
                    undo()
                if result != expected:
                    raise WorkloadError(f"{label} {wl} rep={rep}: {result} of {expected} "
                                        "operations succeeded; the experiment stops")
        self.q("SELECT festival.close(%s)", (name,))
        if not self.keep:
            self.q("SELECT festival.drop_index(%s)", (name,))


def split_config(argv, own_keys, what):
    """The configuration file of argv minus own_keys, for workload.py's parser.

    Returns (own, argv naming a temporary copy without them, the copy's
    path), or None (after a message) when argv names no configuration file.
    """
    cfg_path = None
    for i, a in enumerate(argv):
        if a == "--config" and i + 1 < len(argv):
            cfg_path = argv[i + 1]
    if cfg_path is None:
        print(f"run-workload: {what} need --config FILE", file=sys.stderr)
        return None
    with open(cfg_path, encoding="utf-8") as f:
        cfg = json.load(f)
    own = {k: cfg.pop(k) for k in own_keys if k in cfg}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
        json.dump(cfg, tmp)
    return own, [tmp.name if a == cfg_path else a for a in argv], tmp.name


def main(argv):
    split = split_config(argv, OWN_KEYS, "mixes and groups")
    if split is None:
        return 2
    own, argv, tmp_path = split
    try:
        args = workload.parse_args(argv)
        exp = workload.load_experiment(args)
        # windows and kNN sets stay with the generic runner
        exp["windows"]["area_percent"] = []
        exp["knn"]["k"] = []
        sets = workload.datasets(exp)
        if len(sets) != 1:
            raise WorkloadError("mixes and groups run on one data set: give one point count "
                                "and one distribution")
        configs = workload.matrix(exp)
        nmix = len((own.get("mixes") or {}).get("insert_percent", []))
        ngrp = len((own.get("groups") or {}).get("sizes", []))
        per = 1 + (nmix + ngrp) * int(exp["repetitions"])
        if args.check_only:
            return 0
        if args.dry_run:
            for c in configs:
                print(f"{workload.base_label(exp, c)} workload=build, {nmix} mixes, {ngrp} group sizes")
            print(f"{len(configs)} configurations, {len(configs) * per} measured runs")
            return 0
        import psycopg
        with psycopg.connect(autocommit=True) as conn:
            r = MixRunner(conn, exp, args.keep_indices)
            r.prepare()
            configs = workload.matrix(exp, r.structures)
            if args.resume:
                cells.ensure(conn)
                dl = workload.data_label(exp, sets[0])
                if all(cells.finished(conn, workload.base_label(exp, c) + dl,
                                      cells.digest(exp, c, sets[0], own)) for c in configs):
                    print(f"experiment {exp['name']}: every configuration finished before",
                          file=sys.stderr, flush=True)
                    return 0
            r.dataset = sets[0]
            r.prepare_data(sets[0], single=True)
            r.points_id = r.one("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                                "AND attnum > 0 AND format_type(atttypid, atttypmod) IN "
                                "('bigint', 'integer') ORDER BY attnum LIMIT 1", (r.points,))
            r.prepare_extra(own)
            print(f"experiment {exp['name']}: {len(configs)} configurations x {per} measured runs, "
                  f"{r.npoints} points", file=sys.stderr, flush=True)
            started = time.monotonic()
            tracker = cells.Tracker() if args.resume else None
            for i, c in enumerate(configs, 1):
                label = workload.base_label(exp, c) + workload.data_label(exp, sets[0])
                dg = cells.digest(exp, c, sets[0], own)
                if args.resume and cells.finished(conn, label, dg):
                    print(f"[{i}/{len(configs)}] finished before, skipped: {label}",
                          file=sys.stderr, flush=True)
                    continue
                if args.resume and not tracker.may_start(conn, label):
                    break
                workload.progress(i, len(configs), started, label)
                if args.resume:
                    cells.run_cell(conn, tracker, label, exp["name"], dg,
                                   lambda c=c, label=label: r.run_extra(c, label))
                else:
                    r.run_extra(c, label)
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
