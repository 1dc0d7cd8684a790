"""The peers of scripts/run-workload: PostGIS GiST, a plain heap, libspatialindex.

A peer is what the papers compare their structures with (docs/experiments.md,
"Peers"): PostGIS's GiST index (built by CREATE INDEX or by inserting into an
indexed table, queried through the index), a plain heap (inserts only) and
libspatialindex's R-trees (the Python package rtree, in memory: the linear,
quadratic and R* variants).  Peers take the workload runner's data set, its
window tables and its measuring (Runner.repeat: warm-up and measured
repetitions, each a festival.run row labelled peer=...), so their runs line
up with festival's in scripts/report's "festival / peer" section.  The
runner's PostGIS answers for kNN queries come from gist_query too.
"""

import workload  # the runner's module (it imports this one; used at call time only)


class Peers:
    """The peers' runs on the runner's current data set."""

    def __init__(self, runner):
        self.r = runner
        self.lsi = None         # the libspatialindex index built last
        self.lsi_data = None    # the data set's points and windows, read once

    def new_data(self):
        """The runner made a new data set: libspatialindex reads it again."""
        self.lsi = None
        self.lsi_data = None

    def gist_query(self, w, conn=None):
        """PostGIS's GiST answer to w: a count (windows), or count and distance sum (kNN)."""
        qt = self.r.query_table(w)
        g = f'p."{self.r.points_geom}"'
        if w["workload"] == "knn":
            r = self.r.q(f"SELECT count(*), sum(s.d) FROM ({qt}) w, LATERAL (SELECT {g} <-> w.g "
                         f"AS d FROM {self.r.points} p ORDER BY {g} <-> w.g LIMIT %s) s",
                         (w["k"],), conn=conn)[0]
            return [r[0], r[1]]
        # OFFSET 0 keeps the subquery a subquery: one index scan per window,
        # as festival.query is one call per window (no join of all windows)
        return self.r.one(f"SELECT count(*) FROM ({qt}) w, LATERAL (SELECT 1 "
                          f"FROM {self.r.points} p WHERE ST_Intersects({g}, w.g) OFFSET 0) s",
                          conn=conn)

    def run(self, p, label, ds):
        """Every run of peer p on data set ds: its builds, then its queries."""
        exp = self.r.exp
        common = {"name": exp["name"], "peer": p["peer"], "points": self.r.npoints,
                  "data": dict(exp["data"], distribution=ds["distribution"],
                               points=ds["points"], generator=self.r.generator),
                  "repetitions": exp["repetitions"], "warmup": exp["warmup"]}
        if "variant" in p:
            common["variant"] = p["variant"]
        g = f'"{self.r.points_geom}"'
        rows_table = self.r.table(f"{p['peer']}_rows")
        for kind, b, w in workload.peer_workloads(exp, p):
            if kind == "build" and not workload.fits(self.r.npoints, b["max_points"],
                                                     p.get("max_points")):
                continue
            if kind == "query" and not workload.fits(self.r.npoints, p.get("max_points")):
                continue
            blabel = workload.peer_label(exp, p, b) + label
            settings = dict(common, build=b["method"] if b else None)
            if p["peer"] == "libspatialindex":
                self.lsi_load()
                if kind == "build":
                    self.r.repeat(blabel, settings, w, lambda conn: self.lsi_build(p["variant"]))
                else:
                    self.r.repeat(blabel, settings, w, lambda conn, w=w: self.lsi_query(w))
                continue
            if kind == "query":
                # the planner must take the index (a small data set makes a
                # sequential scan look cheaper)
                self.r.q("SET enable_seqscan = off")
                try:
                    self.r.repeat(blabel, settings, w, lambda conn, w=w: self.gist_query(w, conn))
                finally:
                    self.r.q("RESET enable_seqscan")
                continue
            if b["method"] == "insert":
                # INSERT into a table with (gist) or without (heap) the index
                self.r.q(f"DROP TABLE IF EXISTS {rows_table}")
                self.r.q(f"CREATE TABLE {rows_table} (id bigint, geom geometry(Point))")
                if p["peer"] == "gist":
                    self.r.q(f"CREATE INDEX ON {rows_table} USING gist (geom)")
                self.r.own_tables.append(rows_table)
                action = (lambda conn: self.r.q(
                    f"INSERT INTO {rows_table} SELECT id, {g} FROM {self.r.points}", conn=conn)
                    or self.r.one(f"SELECT count(*) FROM {rows_table}", conn=conn))
                before = lambda: self.r.q(f"TRUNCATE {rows_table}")  # noqa: E731
            else:
                ci = self.r.table("gist_ci")
                action = (lambda conn: self.r.q(
                    f"CREATE INDEX {ci} ON {self.r.points} USING gist ({g})", conn=conn)
                    or self.r.one("SELECT reltuples::bigint FROM pg_class WHERE relname = %s",
                                  (ci,), conn=conn))
                before = lambda: self.r.q(f"DROP INDEX IF EXISTS {ci}")  # noqa: E731
            self.r.repeat(blabel, settings, w, action, before=before, fresh=exp["memory"])
            if b["method"] == "create_index":
                self.r.q(f"DROP INDEX IF EXISTS {self.r.table('gist_ci')}")
            else:
                self.r.q(f"DROP TABLE IF EXISTS {rows_table}")

    def lsi_load(self):
        """The data set's points and windows, read once for libspatialindex."""
        if self.lsi_data is not None:
            return
        try:
            from rtree import index  # noqa: F401
        except ImportError as e:
            raise workload.WorkloadError("peer libspatialindex needs the Python package rtree "
                                "(scripts/run-workload installs it into a virtual environment; "
                                f"run through it): {e}") from e
        g = f'"{self.r.points_geom}"'
        pts = self.r.q(f"SELECT id, ST_X({g}), ST_Y({g}) FROM {self.r.points} ORDER BY id")
        wins = {}
        for pct, qt in self.r.window_tables.items():
            wins[pct] = [tuple(r) for r in self.r.q(
                f"SELECT ST_XMin(g), ST_YMin(g), ST_XMax(g), ST_YMax(g) FROM ({qt}) w")]
        self.lsi_data = (pts, wins)
        self.lsi = None

    def lsi_build(self, variant):
        """An in-memory libspatialindex R-tree of the variant over the data set."""
        from rtree import index
        prop = index.Property()
        prop.dimension = 2
        prop.variant = {"rstar": index.RT_Star, "quadratic": index.RT_Quadratic,
                        "linear": index.RT_Linear}[variant]
        idx = index.Index(properties=prop)  # in memory
        insert = idx.insert
        for i, x, y in self.lsi_data[0]:
            insert(i, (x, y, x, y))
        self.lsi = idx
        return idx.get_size()

    def lsi_query(self, w):
        """The answer count of the window set w through the last libspatialindex build."""
        if self.lsi is None:
            raise workload.WorkloadError("libspatialindex queries need its build in the same "
                                         "experiment")
        count = self.lsi.count
        return sum(count(b) for b in self.lsi_data[1][w["area_percent"]])
