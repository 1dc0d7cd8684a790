#!/usr/bin/python3
"""The Python part of scripts/run-workload (see there for usage).

Runs structures x frameworks x page sizes x devices x build methods; for
each configuration it builds the index (warm-up builds, then measured ones)
and runs every window set and kNN set (warm-up rounds, then measured ones).
Every measured run goes through festival.begin_run / festival.end_run with a
label of key=value tokens, and the experiment's settings are added to the
run's config under the key "experiment".

The connection comes from the PG* environment variables.  Uses the data
generators festival.generate_points / festival.generate_windows when the
installed festival has them, and its own seeded SQL otherwise; uses device
profiles (festival.device_profile) only when asked to and refuses clearly
when this festival has none.
"""

import argparse
import copy
import hashlib
import json
import re
import sys
import time

DEFAULTS = {
    "name": "exp",
    "data": {"points": 20000, "distribution": "uniform", "seed": 1,
             "extent": [0, 0, 100000, 100000]},
    "structures": [{"structure": "rtree", "options": {"split": "quadratic"}}],
    "frameworks": [{"framework": "none"}],
    "page_sizes": [4096],
    "devices": [{"name": "wl_buffered", "io": "buffered"}],
    "builds": ["insert"],
    "windows": {"area_percent": [0.1], "count": 100},
    "knn": {"k": [], "count": 100},
    "repetitions": 3,
    "warmup": 1,
}

TOKEN_RE = re.compile(r"^[A-Za-z0-9_.:+-]+$")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
DEVICE_KEYS = ("directory", "kind", "io", "engine", "profile")


class WorkloadError(Exception):
    """A problem to report to the user in one line."""


def scalar(text):
    """'4096' -> 4096, '0.5' -> 0.5, 'true' -> True, anything else a string."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text in ("true", "false"):
        return text == "true"
    return text


def parse_spec(spec, first_key):
    """'rtree:split=linear:min_fill=40' -> {first_key: 'rtree', 'options'...}."""
    parts = spec.split(":")
    head, rest = parts[0], parts[1:]
    opts = {}
    for part in rest:
        if "=" not in part:
            raise WorkloadError(f"bad specification {spec!r}: expected key=value after ':'")
        k, v = part.split("=", 1)
        opts[k] = scalar(v)
    return head, opts


def split_list(values, conv=str):
    out = []
    for v in values:
        out.extend(conv(x) for x in v.split(",") if x != "")
    return out


def parse_args(argv):
    p = argparse.ArgumentParser(prog="run-workload",
                                description="Run an experiment matrix into festival.run.")
    p.add_argument("--config", help="JSON experiment file (see experiments/)")
    p.add_argument("--name", help="experiment name (the label's exp=)")
    p.add_argument("--structure", action="append",
                   help="STRUCTURE[:option=value...], repeatable (e.g. rtree:split=linear)")
    p.add_argument("--framework", action="append",
                   help="none|fast|efind[:option=value...], repeatable or comma-separated")
    p.add_argument("--page-sizes", action="append", help="comma-separated bytes (2048,4096)")
    p.add_argument("--device", action="append",
                   help="NAME[:kind=file|memory:io=direct|buffered:engine=E:profile=P:directory=D]")
    p.add_argument("--build", action="append", help="build methods: insert,str,hilbert,...")
    p.add_argument("--windows", action="append",
                   help="window sets by area percent of the extent (0.1,0.5,1); 'none' for no windows")
    p.add_argument("--window-count", type=int, help="windows per set (default 100)")
    p.add_argument("--knn", action="append", help="kNN k values (10,100); 'none' for no kNN")
    p.add_argument("--knn-count", type=int, help="kNN query points per set (default 100)")
    p.add_argument("--points", type=int, help="data set size")
    p.add_argument("--distribution", help="uniform|gaussian_clusters (others need festival.generate_points)")
    p.add_argument("--seed", type=int, help="seed of data and queries")
    p.add_argument("--reps", type=int, help="measured repetitions (default 3)")
    p.add_argument("--warmup", type=int, help="unmeasured warm-up rounds (default 1)")
    p.add_argument("--scale", help="apply the config's scales.NAME overrides (small, paper)")
    p.add_argument("--dry-run", action="store_true", help="print the runs, touch nothing")
    p.add_argument("--keep-indices", action="store_true", help="keep the indices afterwards")
    p.add_argument("--check-only", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def load_experiment(args):
    exp = copy.deepcopy(DEFAULTS)
    if args.config:
        try:
            with open(args.config, encoding="utf-8") as f:
                user = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise WorkloadError(f"cannot read {args.config}: {e}") from e
        if not isinstance(user, dict):
            raise WorkloadError(f"{args.config}: the top level must be a JSON object")
        unknown = set(user) - set(DEFAULTS) - {"comment", "description", "scales"}
        if unknown:
            raise WorkloadError(f"{args.config}: unknown keys {sorted(unknown)}; "
                                f"accepted: {sorted(DEFAULTS)}")
        # "scales": {"small": {...}, "paper": {...}}: overrides chosen by
        # --scale (scripts/reproduce); without --scale the file's own values
        scales = user.pop("scales", {})
        if args.scale:
            if args.scale not in scales:
                raise WorkloadError(f"{args.config}: no scale {args.scale!r}; "
                                    f"it has {sorted(scales) or 'none'}")
            for k, v in scales[args.scale].items():
                if isinstance(v, dict) and isinstance(user.get(k), dict):
                    user[k] = dict(user[k], **v)
                else:
                    user[k] = v
        for k, v in user.items():
            if isinstance(v, dict) and isinstance(exp.get(k), dict):
                exp[k].update(v)
            else:
                exp[k] = v
    if args.scale and not args.config:
        raise WorkloadError("--scale needs --config (the scales are the config's)")
    if args.name:
        exp["name"] = args.name
    if args.structure:
        exp["structures"] = []
        for s in split_list(args.structure):
            head, opts = parse_spec(s, "structure")
            exp["structures"].append({"structure": head, "options": opts})
    if args.framework:
        exp["frameworks"] = []
        for s in split_list(args.framework):
            head, opts = parse_spec(s, "framework")
            exp["frameworks"].append(dict(opts, framework=head))
    if args.page_sizes:
        exp["page_sizes"] = split_list(args.page_sizes, int)
    if args.device:
        exp["devices"] = []
        for s in args.device:
            head, opts = parse_spec(s, "name")
            exp["devices"].append(dict(opts, name=head))
    if args.build:
        exp["builds"] = split_list(args.build)
    if args.windows:
        w = split_list(args.windows)
        exp["windows"]["area_percent"] = [] if w == ["none"] else [float(x) for x in w]
    if args.window_count is not None:
        exp["windows"]["count"] = args.window_count
    if args.knn:
        k = split_list(args.knn)
        exp["knn"]["k"] = [] if k == ["none"] else [int(x) for x in k]
    if args.knn_count is not None:
        exp["knn"]["count"] = args.knn_count
    if args.points is not None:
        exp["data"]["points"] = args.points
    if args.distribution:
        exp["data"]["distribution"] = args.distribution
    if args.seed is not None:
        exp["data"]["seed"] = args.seed
    if args.reps is not None:
        exp["repetitions"] = args.reps
    if args.warmup is not None:
        exp["warmup"] = args.warmup
    normalise(exp)
    return exp


def normalise(exp):
    """Accept shorthand in the config file and check every value."""
    if not NAME_RE.match(str(exp["name"])):
        raise WorkloadError(f"experiment name {exp['name']!r} must match {NAME_RE.pattern}")
    structures = []
    for s in exp["structures"]:
        if isinstance(s, str):
            head, opts = parse_spec(s, "structure")
            s = {"structure": head, "options": opts}
        if "structure" not in s:
            raise WorkloadError(f"structure entry {s!r} has no \"structure\" key")
        s.setdefault("options", {})
        structures.append(s)
    exp["structures"] = structures
    frameworks = []
    for f in exp["frameworks"]:
        if isinstance(f, str):
            head, opts = parse_spec(f, "framework")
            f = dict(opts, framework=head)
        if "framework" not in f:
            raise WorkloadError(f"framework entry {f!r} has no \"framework\" key")
        frameworks.append(f)
    exp["frameworks"] = frameworks
    devices = []
    for d in exp["devices"]:
        if isinstance(d, str):
            head, opts = parse_spec(d, "name")
            d = dict(opts, name=head)
        if "name" not in d:
            raise WorkloadError(f"device entry {d!r} has no \"name\" key")
        bad = set(d) - set(DEVICE_KEYS) - {"name"}
        if bad:
            raise WorkloadError(f"device {d['name']}: unknown keys {sorted(bad)}; "
                                f"accepted: name, {', '.join(DEVICE_KEYS)}")
        devices.append(d)
    exp["devices"] = devices
    for key in ("page_sizes", "builds", "structures", "frameworks", "devices"):
        if not exp[key]:
            raise WorkloadError(f"the matrix needs at least one entry in {key}")
    for ps in exp["page_sizes"]:
        if not isinstance(ps, int) or ps <= 0:
            raise WorkloadError(f"page size {ps!r} is not a positive integer")
    if int(exp["repetitions"]) < 1 or int(exp["warmup"]) < 0:
        raise WorkloadError("repetitions must be >= 1 and warmup >= 0")
    for pct in exp["windows"]["area_percent"]:
        if not 0 < float(pct) <= 100:
            raise WorkloadError(f"window area {pct}% is not in (0, 100]")
    for k in exp["knn"]["k"]:
        if int(k) < 1:
            raise WorkloadError(f"kNN k={k} must be positive")
    if int(exp["data"]["points"]) < 1:
        raise WorkloadError("the data set needs at least one point")
    ext = exp["data"]["extent"]
    if len(ext) != 4 or not (ext[0] < ext[2] and ext[1] < ext[3]):
        raise WorkloadError(f"extent {ext!r} must be [xmin, ymin, xmax, ymax] with min < max")
    # every label token must stay one token
    for s in exp["structures"]:
        check_tokens([s["structure"]] + [f"{k}={v}" for k, v in s["options"].items()])
    for f in exp["frameworks"]:
        check_tokens([f"{k}={v}" for k, v in f.items()])
    for d in exp["devices"]:
        check_tokens([d["name"]])
    check_tokens(exp["builds"])


def check_tokens(tokens):
    for t in tokens:
        if not TOKEN_RE.match(str(t).replace("=", "", 1)):
            raise WorkloadError(f"{t!r} cannot go into a run label (letters, digits, _.:+- only)")


def fmt_value(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def matrix(exp):
    """Every configuration: (structure, framework, page size, device, build)."""
    out = []
    for s in exp["structures"]:
        for f in exp["frameworks"]:
            for ps in exp["page_sizes"]:
                for d in exp["devices"]:
                    for b in exp["builds"]:
                        out.append({"structure": s, "framework": f, "page_size": ps,
                                    "device": d, "build": b})
    return out


def base_label(exp, c):
    toks = [f"exp={exp['name']}", f"structure={c['structure']['structure']}"]
    toks += [f"{k}={fmt_value(v)}" for k, v in sorted(c["structure"]["options"].items())]
    toks.append(f"framework={c['framework']['framework']}")
    toks += [f"{k}={fmt_value(v)}" for k, v in sorted(c["framework"].items()) if k != "framework"]
    toks += [f"page={c['page_size']}", f"device={c['device']['name']}", f"build={c['build']}"]
    return " ".join(toks)


def workloads(exp):
    """The measured runs of one configuration after its build, in order."""
    out = [{"workload": "build"}]
    for pct in exp["windows"]["area_percent"]:
        out.append({"workload": "windows", "area_percent": float(pct),
                    "count": int(exp["windows"]["count"])})
    for k in exp["knn"]["k"]:
        out.append({"workload": "knn", "k": int(k), "count": int(exp["knn"]["count"])})
    return out


def workload_label(w):
    if w["workload"] == "build":
        return "workload=build"
    if w["workload"] == "windows":
        return f"workload=windows area={fmt_value(w['area_percent'])}"
    return f"workload=knn k={w['k']}"


def index_options(c):
    opts = dict(c["structure"]["options"])
    opts.update(c["framework"])
    opts["page_size"] = c["page_size"]
    return opts


def index_name(exp, c):
    h = hashlib.sha1(json.dumps([exp["name"], c], sort_keys=True).encode()).hexdigest()[:12]
    return f"wl_{h}"


def progress(i, n, started, text):
    elapsed = time.monotonic() - started
    if i > 1:
        eta = elapsed / (i - 1) * (n - i + 1)
        eta_text = f"ETA {int(eta // 60)}:{int(eta % 60):02d}"
    else:
        eta_text = "ETA unknown"
    print(f"[{i}/{n}] {eta_text}  {text}", file=sys.stderr, flush=True)


class Runner:
    def __init__(self, conn, exp, keep_indices):
        self.conn = conn
        self.exp = exp
        self.keep = keep_indices
        self.answers = {}   # workload label -> the answer count PostGIS finds
        self.stored = 0

    def q(self, query, params=None):
        cur = self.conn.execute(query, params)
        return cur.fetchall() if cur.description is not None else []

    def one(self, query, params=None):
        rows = self.q(query, params)
        return rows[0][0] if rows else None

    def has_function(self, name):
        return bool(self.one("SELECT count(*) FROM pg_proc p JOIN pg_namespace n "
                             "ON n.oid = p.pronamespace WHERE n.nspname = 'festival' "
                             "AND p.proname = %s", (name,)))

    def prepare(self):
        self.q("SET client_min_messages = warning")
        self.q("CREATE EXTENSION IF NOT EXISTS festival CASCADE")
        self.q("SET festival.progress_interval = 0")
        self.has_profiles = self.one("SELECT to_regclass('festival.device_profile') IS NOT NULL")
        self.has_gen_points = self.has_function("generate_points")
        self.has_gen_windows = self.has_function("generate_windows")
        self.prepare_devices()
        self.prepare_data()

    def prepare_devices(self):
        for d in self.exp["devices"]:
            if d.get("profile") is not None:
                if not self.has_profiles:
                    raise WorkloadError(
                        f"device {d['name']} asks for profile {d['profile']!r}, but this festival "
                        "has no device profiles (table festival.device_profile is missing); "
                        "install a festival with device profiles or drop the profile")
                if not self.one("SELECT count(*) FROM festival.device_profile WHERE name = %s",
                                (d["profile"],)):
                    known = [r[0] for r in self.q("SELECT name FROM festival.device_profile "
                                                  "ORDER BY name")]
                    raise WorkloadError(f"device {d['name']}: unknown profile {d['profile']!r}; "
                                        f"known: {', '.join(known)}")
            row = self.q("SELECT kind, io, engine, profile FROM festival.device WHERE name = %s",
                         (d["name"],))
            if row:
                have = dict(zip(("kind", "io", "engine", "profile"), row[0]))
                for k in ("kind", "io", "engine", "profile"):
                    if k in d and d[k] != have[k]:
                        raise WorkloadError(
                            f"device {d['name']} exists with {k}={have[k]!r}, the experiment "
                            f"asks for {d[k]!r}; drop it (festival.drop_device) or rename it")
                continue
            args = ", ".join(f"{k} => %({k})s" for k in DEVICE_KEYS if k in d)
            self.q(f"SELECT festival.create_device(%(name)s{', ' + args if args else ''})", d)
        self.device_kind = dict(self.q("SELECT name, kind FROM festival.device"))

    def table(self, suffix):
        return f"wl_{self.exp['name'].lower()}_{suffix}"

    def prepare_data(self):
        data = self.exp["data"]
        ext = [float(v) for v in data["extent"]]
        seed = int(data["seed"])
        self.points = self.table("points")
        self.q(f"DROP TABLE IF EXISTS {self.points}")
        if self.has_gen_points:
            self.q("SELECT festival.generate_points(%s, %s::bigint, %s, %s::int, "
                   "ST_MakeBox2D(ST_MakePoint(%s, %s), ST_MakePoint(%s, %s)))",
                   (self.points, int(data["points"]), data["distribution"], seed, *ext))
            self.generator = "festival.generate_points"
        else:
            self.own_points(self.points, int(data["points"]), data["distribution"], seed, ext)
            self.generator = "run-workload SQL"
        self.points_geom = self.geometry_query(self.points).split('"')[1]
        # a GiST index makes the brute-force answer counts cheap
        self.q(f'CREATE INDEX ON {self.points} USING gist ("{self.points_geom}")')
        self.q(f"ANALYZE {self.points}")
        self.window_tables = {}
        for i, pct in enumerate(self.exp["windows"]["area_percent"]):
            t = self.table(f"windows_{i}")
            self.q(f"DROP TABLE IF EXISTS {t}")
            n = int(self.exp["windows"]["count"])
            if self.has_gen_windows:
                self.q("SELECT festival.generate_windows(%s, %s::int, %s::float8, "
                       "ST_MakeBox2D(ST_MakePoint(%s, %s), ST_MakePoint(%s, %s)), %s::int)",
                       (t, n, float(pct), *ext, seed + 1 + i))
            else:
                self.own_windows(t, n, float(pct), seed + 1 + i, ext)
            self.window_tables[float(pct)] = self.geometry_query(t)
        self.knn_table = None
        if self.exp["knn"]["k"]:
            t = self.table("knn")
            self.q(f"DROP TABLE IF EXISTS {t}")
            n = int(self.exp["knn"]["count"])
            if self.has_function("generate_knn_points"):
                self.q("SELECT festival.generate_knn_points(%s, %s::int, "
                       "ST_MakeBox2D(ST_MakePoint(%s, %s), ST_MakePoint(%s, %s)), %s::int)",
                       (t, n, *ext, seed))
            else:
                self.own_points(t, n, "uniform", seed + 1000, ext)
            self.knn_table = self.geometry_query(t)

    def geometry_query(self, table):
        """SELECT <geometry> FROM table ORDER BY <id>, whatever a generator named them."""
        cols = self.q("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                      "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped "
                      "ORDER BY attnum", (table,))
        geom = [c for c, t in cols if t.startswith("geometry")]
        order = [c for c, t in cols if t in ("bigint", "integer")]
        if not geom:
            raise WorkloadError(f"table {table} has no geometry column")
        return (f'SELECT "{geom[0]}" AS g FROM {table} ORDER BY '
                + (f'"{order[0]}"' if order else "ctid"))

    def set_seed(self, seed):
        # setseed() takes a value in [-1, 1]
        self.q("SELECT setseed(%s)", ((seed % 1000003) / 1000003.0,))

    def own_points(self, table, n, distribution, seed, ext):
        xmin, ymin, xmax, ymax = ext
        self.set_seed(seed)
        self.q(f"CREATE TABLE {table} (id bigint PRIMARY KEY, geom geometry(Point))")
        if distribution == "uniform":
            self.q(f"INSERT INTO {table} SELECT i, ST_MakePoint(%s + random() * %s, "
                   "%s + random() * %s) FROM generate_series(1, %s) i",
                   (xmin, xmax - xmin, ymin, ymax - ymin, n))
        elif distribution == "gaussian_clusters":
            # Carniel et al. 2018: 125 clusters; standard deviation 1% of the
            # extent's width
            self.q(f"""
                WITH centres AS (
                    SELECT c, %(xmin)s + random() * %(w)s AS cx, %(ymin)s + random() * %(h)s AS cy
                    FROM generate_series(0, 124) c)
                INSERT INTO {table}
                SELECT i, ST_MakePoint(
                    least(%(xmax)s, greatest(%(xmin)s, cx + 0.01 * %(w)s
                        * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))),
                    least(%(ymax)s, greatest(%(ymin)s, cy + 0.01 * %(w)s
                        * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))))
                FROM generate_series(1, %(n)s) i JOIN centres ON centres.c = i %% 125""",
                   {"xmin": xmin, "ymin": ymin, "xmax": xmax, "ymax": ymax,
                    "w": xmax - xmin, "h": ymax - ymin, "n": n})
        else:
            raise WorkloadError(f"distribution {distribution!r} needs festival.generate_points, "
                                "which this festival lacks; run-workload itself knows "
                                "uniform and gaussian_clusters")

    def own_windows(self, table, n, pct, seed, ext):
        """Windows of the extent's shape covering pct% of its area, uniformly placed."""
        xmin, ymin, xmax, ymax = ext
        scale = (pct / 100.0) ** 0.5
        w, h = (xmax - xmin) * scale, (ymax - ymin) * scale
        self.set_seed(seed)
        self.q(f"CREATE TABLE {table} (id bigint PRIMARY KEY, geom geometry(Polygon))")
        self.q(f"INSERT INTO {table} SELECT i, ST_MakeEnvelope(x, y, x + %s, y + %s) FROM "
               "(SELECT i, %s + random() * %s AS x, %s + random() * %s AS y "
               " FROM generate_series(1, %s) i) s",
               (w, h, xmin, (xmax - xmin) - w, ymin, (ymax - ymin) - h, n))

    def measured(self, label, settings, action):
        self.one("SELECT festival.begin_run(%s)", (label,))
        try:
            result = action()
        except Exception:
            # a failed run must not look like a measurement: end it and drop its row
            try:
                failed = self.one("SELECT festival.end_run()")
                self.q("DELETE FROM festival.run WHERE run_id = %s", (failed,))
            except Exception:  # the original error matters more
                pass
            raise
        run_id = self.one("SELECT festival.end_run()")
        self.q("UPDATE festival.run SET config = config || jsonb_build_object('experiment', "
               "%s::jsonb) WHERE run_id = %s",
               (json.dumps(dict(settings, result=result)), run_id))
        self.stored += 1
        return result

    def build(self, name, method):
        rows = self.one("SELECT festival.build(%s, %s)", (name, method))
        self.q("SELECT festival.flush(%s)", (name,))
        return rows

    def windows(self, name, w):
        return self.one(f"SELECT count(*) FROM ({self.window_tables[w['area_percent']]}) w, "
                        "LATERAL festival.query(%s, w.g) q", (name,))

    def knn(self, name, w):
        return self.one(f"SELECT count(*) FROM ({self.knn_table}) w, "
                        "LATERAL festival.knn(%s, w.g, %s) q", (name, w["k"]))

    def reset(self, name, c):
        """Close the index so every measured run starts from the same state.

        Not on memory devices: their pages live only while the index is open.
        """
        if self.device_kind.get(c["device"]["name"]) != "memory":
            self.q("SELECT festival.close(%s)", (name,))

    def expected_answers(self, w):
        """The answer count PostGIS finds (windows) or k per query point (kNN)."""
        if w["workload"] == "build":
            return int(self.exp["data"]["points"])
        key = workload_label(w)
        if key not in self.answers:
            if w["workload"] == "windows":
                self.answers[key] = self.one(
                    f"SELECT count(*) FROM ({self.window_tables[w['area_percent']]}) w "
                    f"JOIN {self.points} p ON ST_Intersects(p.{self.points_geom}, w.g)")
            else:
                n = self.one(f"SELECT count(*) FROM {self.points}")
                self.answers[key] = min(w["k"], n) * w["count"]
        return self.answers[key]

    def run_configuration(self, c, label):
        exp = self.exp
        name = index_name(exp, c)
        self.q("SELECT festival.drop_index(name) FROM festival.index WHERE name = %s", (name,))
        self.q("SELECT festival.create_index(%s, %s, %s, %s::jsonb, %s::regclass)",
               (name, c["structure"]["structure"], c["device"]["name"],
                json.dumps(index_options(c)), self.points))
        common = {"name": exp["name"], "structure": c["structure"]["structure"],
                  "structure_options": c["structure"]["options"], "framework": c["framework"],
                  "page_size": c["page_size"], "device": c["device"], "build": c["build"],
                  "data": dict(exp["data"], generator=self.generator),
                  "repetitions": exp["repetitions"], "warmup": exp["warmup"]}
        for w in workloads(exp):
            if w["workload"] == "build":
                action = lambda: self.build(name, c["build"])  # noqa: E731
            elif w["workload"] == "windows":
                action = lambda w=w: self.windows(name, w)  # noqa: E731
            else:
                action = lambda w=w: self.knn(name, w)  # noqa: E731
            expected = self.expected_answers(w)
            for _ in range(int(exp["warmup"])):
                self.reset(name, c)
                action()
            for rep in range(1, int(exp["repetitions"]) + 1):
                self.reset(name, c)
                result = self.measured(f"{label} {workload_label(w)} rep={rep}",
                                       dict(common, workload=w, rep=rep, expected=expected),
                                       action)
                if expected is not None and result != expected:
                    raise WorkloadError(
                        f"{label} {workload_label(w)} rep={rep} found {result} answers, "
                        f"PostGIS finds {expected}: the experiment stops (the run is stored)")
        self.q("SELECT festival.close(%s)", (name,))
        if not self.keep:
            self.q("SELECT festival.drop_index(%s)", (name,))


def main(argv):
    args = parse_args(argv)
    try:
        exp = load_experiment(args)
        configs = matrix(exp)
        runs_per_config = len(workloads(exp)) * int(exp["repetitions"])
        if args.check_only:
            return 0
        if args.dry_run:
            for c in configs:
                for w in workloads(exp):
                    print(f"{base_label(exp, c)} {workload_label(w)} rep=1..{exp['repetitions']}")
            print(f"{len(configs)} configurations, {len(configs) * runs_per_config} measured runs")
            return 0
        import psycopg
        with psycopg.connect(autocommit=True) as conn:
            runner = Runner(conn, exp, args.keep_indices)
            runner.prepare()
            print(f"experiment {exp['name']}: {len(configs)} configurations x "
                  f"{runs_per_config} measured runs, {exp['data']['points']} points "
                  f"({runner.generator}), database {conn.info.dbname}",
                  file=sys.stderr, flush=True)
            started = time.monotonic()
            for i, c in enumerate(configs, 1):
                label = base_label(exp, c)
                progress(i, len(configs), started, label)
                runner.run_configuration(c, label)
            total = time.monotonic() - started
            print(f"stored {runner.stored} runs in festival.run (labels 'exp={exp['name']} ...') "
                  f"in {total:.1f} s; scripts/report --label 'exp={exp['name']} %' "
                  "--output DIR makes the report", file=sys.stderr)
    except WorkloadError as e:
        print(f"run-workload: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # psycopg errors: show the server's message
        name = type(e).__name__
        if name.endswith("Error") and hasattr(e, "diag"):
            diag = e.diag
            msg = diag.message_primary or str(e)
            hint = f" (hint: {diag.message_hint})" if diag.message_hint else ""
            print(f"run-workload: {msg}{hint}", file=sys.stderr)
            return 1
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
