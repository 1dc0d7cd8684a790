#!/usr/bin/python3
"""The Python part of scripts/run-workload (see there and docs/experiments.md).

For every data set (each point count and distribution of "data", or a table
loaded by scripts/load-dataset) it runs the peers (PostGIS GiST, a plain
heap, libspatialindex) and then structures x frameworks x page sizes x
devices x build methods: each configuration is built (warm-up builds, then
measured ones) and runs every window set, query_batch set, kNN set and
empty-window set (warm-up rounds, then measured ones).  Every measured run
goes through festival.begin_run / festival.end_run with a label of key=value
tokens, and the experiment's settings are added to the run's config under
the key "experiment".  Every answer is checked against PostGIS's.

Data always comes from festival's generators (festival.generate_points,
generate_windows, generate_knn_points) or from a table scripts/load-dataset
made.  The connection comes from the PG* environment variables.
"""

import argparse
import copy
import hashlib
import json
import math
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cells  # noqa: E402
import config_schema  # noqa: E402
import datagen  # noqa: E402
import peers as peer_runs  # noqa: E402  (peers.py imports this module back)

DEFAULTS = {
    "name": "exp",
    "data": {"points": 20000, "distribution": "uniform", "seed": 1,
             "extent": [0, 0, 100000, 100000], "table": None, "order": "random"},
    "structures": [{"structure": "rtree", "options": {"split": "quadratic"}}],
    "frameworks": [{"framework": "none"}],
    "page_sizes": [4096],
    "devices": [{"name": "wl_buffered", "io": "buffered"}],
    # created like devices but not crossed: fast tiers named by a structure's
    # "fast_device" option (docs/tiers.md)
    "tier_devices": [],
    "builds": ["insert"],
    "windows": {"area_percent": [0.1], "count": 100, "batch": False},
    "knn": {"k": [], "count": 100},
    "empty": {"count": 0},
    "peers": [],
    "memory": False,
    "settings": {},
    "repetitions": 3,
    "warmup": 1,
}

PEERS = {
    # peer -> the build methods it knows and whether it answers queries
    "gist": {"builds": ("insert", "create_index"), "queries": True},
    "heap": {"builds": ("insert",), "queries": False},
    "libspatialindex": {"builds": ("insert",), "queries": True},
}
LSI_VARIANTS = ("rstar", "quadratic", "linear")

# Insertion orders of generated points (data.order).  A build inserts the
# points in the table's physical order (festival.build scans it), so an order
# is a rewrite of the table; ids stay, and with them every query set.
ORDERS = ("random", "hilbert")
HILBERT_BITS = 16

TOKEN_RE = re.compile(r"^[A-Za-z0-9_.:+-]+$")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
GUC_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
DEVICE_KEYS = ("directory", "kind", "io", "engine", "profile")


class WorkloadError(Exception):
    """A problem to report to the user in one line."""


def check_schema(cfg, shown=None):
    """The configuration against experiments/schema.json: a WorkloadError naming
    the path of the first key or value the schema does not accept."""
    try:
        config_schema.validate(cfg)
    except config_schema.SchemaError as e:
        raise WorkloadError(f"{shown}: {e}" if shown else str(e)) from e


def merge_scale(cfg, scale):
    """A configuration file's form for scale: its "scales" entry merged over the rest.

    Keys of the form replace the file's, except objects, which are updated one
    level deep ({"data": {"points": 20000}} keeps the file's distribution and
    seed).  Without scale the file's "default_scale" (or the file as it is).
    """
    check_schema(cfg)
    cfg = copy.deepcopy(cfg)
    scales = cfg.pop("scales", {})
    scale = scale or cfg.pop("default_scale", "")
    cfg.pop("default_scale", None)
    if scale:
        if scale not in scales:
            raise WorkloadError(f"has no scale {scale!r}; it has {sorted(scales)}")
        for k, v in scales[scale].items():
            if isinstance(v, dict) and isinstance(cfg.get(k), dict):
                cfg[k].update(v)
            else:
                cfg[k] = v
    return cfg


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
    """'rtree:split=linear:min_fill=40' -> ('rtree', {'split': 'linear', ...})."""
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
                   help="STRUCTURE[:option=value...] or 'catalog' (every structure festival "
                        "knows), repeatable (e.g. rtree:split=linear)")
    p.add_argument("--framework", action="append",
                   help="none|fast|efind[:option=value...], repeatable or comma-separated")
    p.add_argument("--page-sizes", action="append", help="comma-separated bytes (2048,4096)")
    p.add_argument("--device", action="append",
                   help="NAME[:kind=file|memory:io=direct|buffered:engine=E:profile=P:directory=D]")
    p.add_argument("--build", action="append", help="build methods: insert,str,hilbert,...")
    p.add_argument("--windows", action="append",
                   help="window sets by area percent of the extent (0.1,0.5,1); 'none' for no windows")
    p.add_argument("--window-count", type=int, help="windows per set (default 100)")
    p.add_argument("--batch", action="store_true",
                   help="also run every window set as one festival.query_batch")
    p.add_argument("--knn", action="append", help="kNN k values (10,100); 'none' for no kNN")
    p.add_argument("--knn-count", type=int, help="kNN query points per set (default 100)")
    p.add_argument("--empty-count", type=int,
                   help="windows that find nothing, timed per call (0: none, the default)")
    p.add_argument("--peer", action="append",
                   help="gist|heap|libspatialindex[:variant=rstar], repeatable; 'none' for none")
    p.add_argument("--memory", action="store_true",
                   help="measure every build's peak backend memory (fresh backend per build)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a PostgreSQL setting for every session of the experiment")
    p.add_argument("--points", help="data set size, or comma-separated sizes (one data set each)")
    p.add_argument("--distribution",
                   help="uniform|gaussian_clusters|zipf, or comma-separated (one data set each)")
    p.add_argument("--table", help="the points of this table (scripts/load-dataset) as data")
    p.add_argument("--order", choices=ORDERS,
                   help="insertion order of generated points: random (the generator's, "
                        "default) or hilbert (along the Hilbert curve over the extent)")
    p.add_argument("--scale", type=float,
                   help="multiply every point count and max_points (0.01: a smoke run)")
    p.add_argument("--seed", type=int, help="seed of data and queries")
    p.add_argument("--reps", type=int, help="measured repetitions (default 3)")
    p.add_argument("--warmup", type=int, help="unmeasured warm-up rounds (default 1)")
    p.add_argument("--report", metavar="DIR",
                   help="afterwards, scripts/report on this invocation's runs into DIR")
    p.add_argument("--dry-run", action="store_true", help="print the runs, touch nothing")
    p.add_argument("--keep-indices", action="store_true", help="keep the indices afterwards")
    p.add_argument("--resume", action="store_true",
                   help="skip the configurations (cells) already finished in this database, "
                        "run the others from scratch (scripts/lib/cells.py)")
    p.add_argument("--check-only", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def load_experiment(args):
    exp = copy.deepcopy(DEFAULTS)
    if args.config:
        # run-workload hands over a copy with the scale merged: name the original
        shown = os.environ.get("FEST_CONFIG_SOURCE") or args.config
        try:
            with open(args.config, encoding="utf-8") as f:
                user = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise WorkloadError(f"cannot read {shown}: {e}") from e
        if not isinstance(user, dict):
            raise WorkloadError(f"{shown}: the top level must be a JSON object")
        check_schema(user, shown)
        unknown = set(user) - set(DEFAULTS) - {"comment", "description", "paper_method",
                                               "$schema"}
        if unknown:
            raise WorkloadError(f"{shown}: unknown keys {sorted(unknown)}; "
                                f"accepted: {sorted(DEFAULTS)}")
        for k, v in user.items():
            if isinstance(v, dict) and isinstance(exp.get(k), dict) and k != "settings":
                # a misspelled key inside windows, knn, empty or data would
                # silently run the default: refuse it
                bad = set(v) - set(DEFAULTS[k])
                if bad:
                    raise WorkloadError(f"{shown}: unknown keys {sorted(bad)} in {k!r}; "
                                        f"accepted: {sorted(DEFAULTS[k])}")
                exp[k].update(v)
            else:
                exp[k] = v
    if args.name:
        exp["name"] = args.name
    if args.structure:
        exp["structures"] = []
        for s in split_list(args.structure):
            head, opts = parse_spec(s, "structure")
            exp["structures"].append("catalog" if head == "catalog" and not opts
                                     else {"structure": head, "options": opts})
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
    if args.batch:
        exp["windows"]["batch"] = True
    if args.knn:
        k = split_list(args.knn)
        exp["knn"]["k"] = [] if k == ["none"] else [int(x) for x in k]
    if args.knn_count is not None:
        exp["knn"]["count"] = args.knn_count
    if args.empty_count is not None:
        exp["empty"]["count"] = args.empty_count
    if args.peer:
        p = split_list(args.peer)
        exp["peers"] = [] if p == ["none"] else p
    if args.memory:
        exp["memory"] = True
    if args.set:
        exp["settings"] = dict(exp["settings"])
        for s in args.set:
            if "=" not in s:
                raise WorkloadError(f"--set {s!r}: expected NAME=VALUE")
            k, v = s.split("=", 1)
            exp["settings"][k] = v
    if args.points is not None:
        try:
            pts = [int(x) for x in args.points.split(",") if x != ""]
        except ValueError as e:
            raise WorkloadError(f"--points {args.points!r}: expected N or N,N,...") from e
        exp["data"]["points"] = pts if "," in args.points else pts[0]
    if args.distribution:
        d = args.distribution.split(",")
        exp["data"]["distribution"] = d if len(d) > 1 else d[0]
    if args.table:
        exp["data"]["table"] = args.table
    if args.seed is not None:
        exp["data"]["seed"] = args.seed
    if args.order:
        exp["data"]["order"] = args.order
    if args.reps is not None:
        exp["repetitions"] = args.reps
    if args.warmup is not None:
        exp["warmup"] = args.warmup
    normalise(exp)
    if args.scale is not None:
        apply_scale(exp, args.scale)
    return exp


def apply_scale(exp, scale):
    """Multiply every point count and bound (a small smoke version of an experiment)."""
    if not 0 < scale <= 1000:
        raise WorkloadError(f"--scale {scale} must be in (0, 1000]")

    def s(n):
        return None if n is None else max(1, int(round(n * scale)))
    exp["data"]["points"] = [s(n) for n in exp["data"]["points"]]
    exp["scale"] = scale
    for entry in exp["structures"] + exp["peers"]:
        entry["max_points"] = s(entry.get("max_points"))
        for b in entry.get("builds") or []:
            b["max_points"] = s(b.get("max_points"))
    for b in exp["builds"]:
        b["max_points"] = s(b.get("max_points"))


def normalise_build(b, where):
    if isinstance(b, str):
        b = {"method": b}
    if not isinstance(b, dict) or "method" not in b:
        raise WorkloadError(f"{where}: build entry {b!r} needs a \"method\"")
    bad = set(b) - {"method", "max_points"}
    if bad:
        raise WorkloadError(f"{where}: build {b['method']}: unknown keys {sorted(bad)}; "
                            "accepted: method, max_points")
    check_tokens([b["method"]])
    check_max_points(b.get("max_points"), where)
    return {"method": b["method"], "max_points": b.get("max_points")}


def check_max_points(v, where):
    if v is not None and (not isinstance(v, int) or v < 1):
        raise WorkloadError(f"{where}: max_points {v!r} must be a positive integer")


def normalise(exp):
    """Accept shorthand in the config file and check every value."""
    if not NAME_RE.match(str(exp["name"])):
        raise WorkloadError(f"experiment name {exp['name']!r} must match {NAME_RE.pattern}")
    structures = []
    for s in exp["structures"]:
        if s == "catalog":
            s = {"catalog": True}
        elif isinstance(s, str):
            head, opts = parse_spec(s, "structure")
            s = {"structure": head, "options": opts}
        if not isinstance(s, dict) or ("structure" not in s and not s.get("catalog")):
            raise WorkloadError(f"structure entry {s!r} has no \"structure\" key "
                                "(or is not \"catalog\")")
        bad = set(s) - {"structure", "options", "builds", "frameworks", "max_points", "catalog"}
        if bad:
            raise WorkloadError(f"structure entry {s!r}: unknown keys {sorted(bad)}; accepted: "
                                "structure, options, builds, frameworks, max_points (or catalog)")
        s.setdefault("options", {})
        if s.get("builds") is not None:
            s["builds"] = [normalise_build(b, f"structure {s.get('structure', 'catalog')}")
                           for b in s["builds"]]
        if s.get("frameworks") is not None:
            # a structure that accepts fewer frameworks than the others (lbgrid: none only)
            fws = []
            for f in s["frameworks"]:
                if isinstance(f, str):
                    head, opts = parse_spec(f, "framework")
                    f = dict(opts, framework=head)
                if not isinstance(f, dict) or "framework" not in f:
                    raise WorkloadError(f"structure {s.get('structure', 'catalog')}: framework "
                                        f"entry {f!r} has no \"framework\" key")
                fws.append(f)
            s["frameworks"] = fws
        check_max_points(s.get("max_points"), "structure entry")
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
    tier_devices = []
    for d in exp["tier_devices"]:
        if "name" not in d or set(d) - set(DEVICE_KEYS) - {"name"}:
            raise WorkloadError(f"tier device {d!r}: needs \"name\"; accepted keys: name, "
                                f"{', '.join(DEVICE_KEYS)}")
        tier_devices.append(d)
    exp["tier_devices"] = tier_devices
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
    exp["builds"] = [normalise_build(b, "builds") for b in exp["builds"]]
    peers = []
    for p in exp["peers"]:
        if isinstance(p, str):
            head, opts = parse_spec(p, "peer")
            p = dict(opts, peer=head)
        if not isinstance(p, dict) or p.get("peer") not in PEERS:
            raise WorkloadError(f"peer {p!r}: known peers are {', '.join(PEERS)}")
        bad = set(p) - {"peer", "builds", "max_points", "variant"}
        if bad:
            raise WorkloadError(f"peer {p['peer']}: unknown keys {sorted(bad)}; "
                                "accepted: peer, builds, max_points, variant")
        if p["peer"] == "libspatialindex":
            p.setdefault("variant", "rstar")
            if p["variant"] not in LSI_VARIANTS:
                raise WorkloadError(f"peer libspatialindex: variant {p['variant']!r}; "
                                    f"known: {', '.join(LSI_VARIANTS)}")
        elif "variant" in p:
            raise WorkloadError(f"peer {p['peer']} takes no variant")
        p["builds"] = [normalise_build(b, f"peer {p['peer']}")
                       for b in (p.get("builds") or PEERS[p["peer"]]["builds"])]
        for b in p["builds"]:
            if b["method"] not in PEERS[p["peer"]]["builds"]:
                raise WorkloadError(f"peer {p['peer']} cannot build with {b['method']!r}; it "
                                    f"knows {', '.join(PEERS[p['peer']]['builds'])}")
        check_max_points(p.get("max_points"), f"peer {p['peer']}")
        peers.append(p)
    exp["peers"] = peers
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
    if exp["windows"].get("batch", False) not in (True, False, "only"):
        raise WorkloadError("windows.batch must be true, false or \"only\"")
    for k in exp["knn"]["k"]:
        if int(k) < 1:
            raise WorkloadError(f"kNN k={k} must be positive")
    if int(exp["empty"]["count"]) < 0:
        raise WorkloadError("empty.count must be >= 0")
    if not isinstance(exp["memory"], bool):
        raise WorkloadError("memory must be true or false")
    if not isinstance(exp["settings"], dict):
        raise WorkloadError("settings must be an object of PostgreSQL settings")
    for k in exp["settings"]:
        if not GUC_RE.match(k):
            raise WorkloadError(f"setting name {k!r} is not a PostgreSQL setting name")
    data = exp["data"]
    bad = set(data) - set(DEFAULTS["data"])
    if bad:
        raise WorkloadError(f"data: unknown keys {sorted(bad)}; accepted: "
                            f"{', '.join(DEFAULTS['data'])}")
    # lists make one data set each and put n= / dist= into the labels
    data["label_n"] = isinstance(data["points"], list)
    data["label_dist"] = isinstance(data["distribution"], list)
    if not data["label_n"]:
        data["points"] = [data["points"]]
    if not data["label_dist"]:
        data["distribution"] = [data["distribution"]]
    for n in data["points"]:
        if not isinstance(n, int) or n < 1:
            raise WorkloadError(f"data set size {n!r} must be a positive integer")
    if data["table"] is not None:
        if not isinstance(data["table"], str) or not data["table"]:
            raise WorkloadError("data.table must name a table (scripts/load-dataset makes one)")
        data["label_n"] = data["label_dist"] = False
    if data["order"] not in ORDERS:
        raise WorkloadError(f"data.order {data['order']!r} must be one of {', '.join(ORDERS)}")
    if data["order"] != "random" and data["table"] is not None:
        raise WorkloadError("data.order applies to generated points; a table of "
                            "scripts/load-dataset is inserted in its own order")
    ext = data["extent"]
    if len(ext) != 4 or not (ext[0] < ext[2] and ext[1] < ext[3]):
        raise WorkloadError(f"extent {ext!r} must be [xmin, ymin, xmax, ymax] with min < max")
    # every label token must stay one token
    for s in exp["structures"]:
        if not s.get("catalog"):
            check_tokens([s["structure"]] + [f"{k}={v}" for k, v in s["options"].items()])
    for f in exp["frameworks"] + [f for s in exp["structures"] for f in s.get("frameworks") or []]:
        check_tokens([f"{k}={v}" for k, v in f.items()])
    for d in exp["devices"]:
        check_tokens([d["name"]])
    check_tokens(data["distribution"])


def check_tokens(tokens):
    for t in tokens:
        if not TOKEN_RE.match(str(t).replace("=", "", 1)):
            raise WorkloadError(f"{t!r} cannot go into a run label (letters, digits, _.:+- only)")


def fmt_value(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def datasets(exp):
    """Every data set: a distribution and a size of festival's generator, or a table."""
    data = exp["data"]
    if data["table"] is not None:
        return [{"table": data["table"], "distribution": None, "points": None}]
    return [{"table": None, "distribution": d, "points": n}
            for d in data["distribution"] for n in data["points"]]


def data_label(exp, ds):
    toks = []
    if ds["table"] is not None:
        toks.append(f"data={ds['table']}")
    if exp["data"]["label_dist"]:
        toks.append(f"dist={ds['distribution']}")
    if exp["data"]["label_n"]:
        toks.append(f"n={ds['points']}")
    if exp["data"]["order"] != "random":
        toks.append(f"order={exp['data']['order']}")
    return (" " + " ".join(toks)) if toks else ""


def hilbert_key(x, y, extent, bits=HILBERT_BITS):
    """The distance of (x, y) along the Hilbert curve of 2^bits x 2^bits cells over extent.

    The curve visits the four quadrants of every square in the order
    (0,0), (0,1), (1,1), (1,0), each quadrant's sub-curve turned so that it
    starts next to where the previous one ended; consecutive distances are
    neighbouring cells (what makes the order spatially clustered).
    """
    side = 1 << bits
    cx = min(side - 1, max(0, int((x - extent[0]) / (extent[2] - extent[0]) * side)))
    cy = min(side - 1, max(0, int((y - extent[1]) / (extent[3] - extent[1]) * side)))
    d = 0
    s = side >> 1
    while s:
        rx = 1 if cx & s else 0
        ry = 1 if cy & s else 0
        d += s * s * ((3 * rx) ^ ry)
        # turn the quadrant into the curve's base orientation: the bottom
        # quadrants are mirrored (right one) and transposed; only the bits
        # below s matter from here on
        if ry == 0:
            if rx == 1:
                cx, cy = side - 1 - cx, side - 1 - cy
            cx, cy = cy, cx
        s >>= 1
    return d


def fits(n, *bounds):
    return all(b is None or n is None or n <= b for b in bounds)


def matrix(exp, structures=None):
    """Every configuration: (structure, framework, page size, device, build).

    structures: the structure entries with "catalog" already expanded (the
    runner asks festival); without them a catalog entry stays a placeholder.
    """
    out = []
    seen = set()
    for s in structures if structures is not None else exp["structures"]:
        for f in s.get("frameworks") or exp["frameworks"]:
            # a structure option page_size (e.g. 1 kB for the exponential split) wins
            sizes = ([s["options"]["page_size"]] if "page_size" in s["options"]
                     else exp["page_sizes"])
            for ps in sizes:
                for d in exp["devices"]:
                    for b in s.get("builds") or exp["builds"]:
                        opts = {k: v for k, v in s["options"].items() if k != "page_size"}
                        c = {"structure": {"structure": s.get("structure", "catalog"),
                                           "options": opts},
                             "framework": f, "page_size": ps, "device": d, "build": b,
                             "max_points": s.get("max_points")}
                        key = base_label(exp, c)
                        if key not in seen:  # the catalog repeats an explicit entry
                            seen.add(key)
                            out.append(c)
    return out


def config_tokens(exp, c):
    """Every key=value token of a configuration, in label order."""
    toks = [("exp", exp["name"]), ("structure", c["structure"]["structure"])]
    toks += [(k, fmt_value(v)) for k, v in sorted(c["structure"]["options"].items())]
    toks.append(("framework", c["framework"]["framework"]))
    toks += [(k, fmt_value(v)) for k, v in sorted(c["framework"].items()) if k != "framework"]
    toks += [("page", str(c["page_size"])), ("device", c["device"]["name"]),
             ("build", c["build"]["method"])]
    return toks


def base_label(exp, c):
    """A configuration's run label prefix: every key.  The stored labels keep
    them all (the claims' rules and the cells name runs by them); what prints
    labels for a reader shows only the keys that vary (shown_label)."""
    return " ".join(f"{k}={v}" for k, v in config_tokens(exp, c))


# Keys a shown label keeps even when constant: the experiment, and what was
# measured (a structure, or peer= for the peers).
ALWAYS_SHOWN = ("exp", "structure", "peer")
REP_RE = re.compile(r"(^| )rep=\S+")


def label_keys(exp, configs):
    """{key: value} of the label keys every configuration of exp has with one
    value (ALWAYS_SHOWN aside): what shown_label leaves out and the header
    says once.  A key some configurations lack varies."""
    rows = [dict(config_tokens(exp, c)) for c in configs]
    if not rows:
        return {}
    keys = []
    for c in configs:
        for k, _ in config_tokens(exp, c):
            if k not in keys:
                keys.append(k)
    return {k: rows[0][k] for k in keys
            if k not in ALWAYS_SHOWN and k in rows[0]
            and all(r.get(k) == rows[0][k] for r in rows)}


def shown_label(label, constant):
    """A label as printed for a reader: without the keys every configuration
    shares (label_keys) and without rep=, a repetition and not a key of the
    configuration (festival.compare and scripts/report take medians over the
    repetitions)."""
    toks = [t for t in label.split()
            if not REP_RE.match(" " + t) and t.split("=", 1)[0] not in constant]
    return " ".join(toks)


def reps(exp):
    n = int(exp["repetitions"])
    return f"{n} repetition{'s' if n != 1 else ''}"


def constant_header(constant):
    """The line that names what every configuration of the experiment shares."""
    return ("every configuration: " + " ".join(f"{k}={v}" for k, v in constant.items())
            if constant else "no label key is the same in every configuration")


def peer_label(exp, p, build=None):
    toks = [f"exp={exp['name']}", f"peer={p['peer']}"]
    if "variant" in p:
        toks.append(f"variant={p['variant']}")
    if build is not None:
        toks.append(f"build={build['method']}")
    return " ".join(toks)


def query_workloads(exp, batch=True, knn=True):
    out = []
    only_batch = batch and exp["windows"].get("batch") == "only"
    for pct in exp["windows"]["area_percent"] if not only_batch else []:
        out.append({"workload": "windows", "area_percent": float(pct),
                    "count": int(exp["windows"]["count"])})
    if batch and exp["windows"].get("batch"):
        for pct in exp["windows"]["area_percent"]:
            out.append({"workload": "batch", "area_percent": float(pct),
                        "count": int(exp["windows"]["count"])})
    if knn:
        for k in exp["knn"]["k"]:
            out.append({"workload": "knn", "k": int(k), "count": int(exp["knn"]["count"])})
    if int(exp["empty"]["count"]) > 0:
        out.append({"workload": "empty", "count": int(exp["empty"]["count"])})
    return out


def workloads(exp):
    """The measured runs of one configuration after its build, in order."""
    return [{"workload": "build"}] + query_workloads(exp)


def workload_label(w):
    if w["workload"] == "build":
        return "workload=build"
    if w["workload"] in ("windows", "batch"):
        return f"workload={w['workload']} area={fmt_value(w['area_percent'])}"
    if w["workload"] == "empty":
        return "workload=empty"
    return f"workload=knn k={w['k']}"


def peer_workloads(exp, p):
    """A peer's runs: each build method, then (peers that answer queries) the queries."""
    out = [("build", b, {"workload": "build"}) for b in p["builds"]]
    if PEERS[p["peer"]]["queries"]:
        lsi = p["peer"] == "libspatialindex"
        # libspatialindex answers the windows (checked) but has no query_batch;
        # its kNN and empty-window timings would measure Python, not the library
        for w in query_workloads(exp, batch=False, knn=not lsi):
            if not (lsi and w["workload"] == "empty"):
                out.append(("query", None, w))
    return out


def index_options(c):
    opts = dict(c["structure"]["options"])
    opts.update(c["framework"])
    opts["page_size"] = c["page_size"]
    return opts


def index_name(exp, c, ds):
    h = hashlib.sha1(json.dumps([exp["name"], c, ds], sort_keys=True).encode()).hexdigest()[:12]
    return f"wl_{h}"


def progress(i, n, started, text):
    elapsed = time.monotonic() - started
    if i > 1:
        eta = elapsed / (i - 1) * (n - i + 1)
        eta_text = f"ETA {int(eta // 60)}:{int(eta % 60):02d}"
    else:
        eta_text = "ETA unknown"
    print(f"[{i}/{n}] {eta_text}  {text}", file=sys.stderr, flush=True)


class PeakSampler:
    """Peak memory of one backend, read from /proc/<pid>/status.

    Two figures: RssAnon sampled every 5 ms (the backend's private memory:
    palloc, sort and build buffers; shared buffers and the executable's
    pages are not in it) minus its value at the start, and VmHWM at the end
    (the kernel's exact high-water mark of the whole resident set, shared
    memory the backend touched included).  The backend must be fresh: VmHWM
    never goes down.  Needs the server on this machine and the right to read
    its /proc entries.
    """

    def __init__(self, pid):
        self.path = f"/proc/{pid}/status"
        self.peak = 0
        self.stop_flag = threading.Event()
        self.thread = None

    def read(self):
        out = {}
        try:
            with open(self.path, encoding="ascii") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k in ("RssAnon", "VmHWM", "VmRSS"):
                        out[k] = int(v.split()[0]) * 1024
        except OSError as e:
            raise WorkloadError(f"cannot read {self.path} ({e}): memory measurement needs the "
                                "server on this machine (drop \"memory\")") from e
        return out

    def start(self):
        self.base = self.read()
        self.peak = self.base.get("RssAnon", 0)

        def loop():
            while not self.stop_flag.wait(0.005):
                try:
                    self.peak = max(self.peak, self.read().get("RssAnon", 0))
                except WorkloadError:
                    return
        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()

    def stop(self):
        last = self.read()
        self.stop_flag.set()
        self.thread.join()
        self.peak = max(self.peak, last.get("RssAnon", 0))
        return {"peak_anon_bytes": self.peak - self.base.get("RssAnon", 0),
                "vm_hwm_bytes": last.get("VmHWM"),
                "start_rss_bytes": self.base.get("VmRSS")}


class Runner:
    def __init__(self, conn, exp, keep_indices):
        self.conn = conn
        self.exp = exp
        self.keep = keep_indices
        self.stored = 0
        self.peers = peer_runs.Peers(self)

    def q(self, query, params=None, conn=None):
        cur = (conn or self.conn).execute(query, params)
        return cur.fetchall() if cur.description is not None else []

    def one(self, query, params=None, conn=None):
        rows = self.q(query, params, conn)
        return rows[0][0] if rows else None

    def has_function(self, name):
        return bool(self.one("SELECT count(*) FROM pg_proc p JOIN pg_namespace n "
                             "ON n.oid = p.pronamespace WHERE n.nspname = 'festival' "
                             "AND p.proname = %s", (name,)))

    def session(self, conn):
        """What every session of the experiment sets first."""
        cells.nice_backend(conn)
        self.q("SET client_min_messages = warning", conn=conn)
        self.q("SET festival.progress_interval = 0", conn=conn)
        # JIT compiles a plan whose estimated cost passes jit_above_cost: 150 ms
        # for 100 GiST windows with enable_seqscan off, more than the queries;
        # off unless the experiment's settings say otherwise
        self.q("SET jit = off", conn=conn)
        # the index CPU time, without which a run's modelled elapsed time
        # (index CPU + device seconds) is NULL: on where a device has a
        # profile (the modelled time is reported), unless the settings say
        # off; elsewhere off, its clock reads being part of the cost per call
        # the peers are compared on
        if any(d.get("profile") for d in self.exp["devices"] + self.exp["tier_devices"]):
            self.q("SET festival.track_cpu_time = on", conn=conn)
        for k, v in self.exp["settings"].items():
            self.q("SELECT set_config(%s, %s, false)", (k, str(v)), conn=conn)

    def prepare(self):
        self.q("SET client_min_messages = warning")
        self.q("CREATE EXTENSION IF NOT EXISTS festival CASCADE")
        self.session(self.conn)
        self.has_profiles = self.one("SELECT to_regclass('festival.device_profile') IS NOT NULL")
        for f in ("generate_points", "generate_windows", "generate_knn_points"):
            if not self.has_function(f):
                raise WorkloadError(f"this festival has no festival.{f}; the runner takes its "
                                    "data from festival's generators only")
        self.prepare_devices()
        if self.exp["memory"]:
            for d in self.exp["devices"]:
                if self.device_kind.get(d["name"]) == "memory":
                    raise WorkloadError(f"device {d['name']} is a memory device: its pages live "
                                        "in one backend, so builds cannot run in the fresh "
                                        "backend memory measurement needs; drop \"memory\"")
        self.structures = self.expand_catalog()
        self.first_run = self.one("SELECT coalesce(max(run_id), 0) + 1 FROM festival.run")

    def catalog(self):
        """The structures festival's registry knows, in its order."""
        if self.has_function("structures"):
            return [r[0] for r in self.q("SELECT * FROM festival.structures()")]
        # No catalog function: the registry lists every structure in the
        # hint of the error an unknown structure name raises.
        try:
            with self.conn.transaction():
                self.q("SELECT festival.create_index('wl_catalog_probe', 'wl catalog probe', "
                       "%s, '{}'::jsonb, 'festival.device'::regclass)",
                       (self.exp["devices"][0]["name"],))
        except Exception as e:  # psycopg.errors.InvalidParameterValue
            hint = getattr(getattr(e, "diag", None), "message_hint", None) or ""
            names = re.findall(r"'([A-Za-z0-9_]+)' \(", hint)
            if names:
                return names
            raise WorkloadError(f"cannot list festival's structures: {e}") from e
        raise WorkloadError("cannot list festival's structures: a structure named "
                            "'wl catalog probe' was accepted")

    def expand_catalog(self):
        out = []
        for s in self.exp["structures"]:
            if s.get("catalog"):
                for name in self.catalog():
                    out.append(dict(copy.deepcopy(s), structure=name, catalog=False))
            else:
                out.append(s)
        return out

    def prepare_devices(self):
        for d in self.exp["devices"] + self.exp["tier_devices"]:
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

    # ------------------------------------------------------------------
    # Data: festival's generators, or a table of scripts/load-dataset
    # ------------------------------------------------------------------

    def table(self, suffix):
        return f"wl_{self.exp['name'].lower()}_{suffix}{self.ds_suffix}"

    def prepare_data(self, ds, single):
        data = self.exp["data"]
        seed = int(data["seed"])
        # one data set keeps the plain names (wl_NAME_points); several get a suffix
        self.ds_suffix = "" if single else f"_{ds['distribution']}_{ds['points']}"
        self.own_tables = []
        if ds["table"] is not None:
            self.points = ds["table"]
            if self.one("SELECT to_regclass(%s)", (self.points,)) is None:
                raise WorkloadError(f"data table {self.points} does not exist "
                                    "(scripts/load-dataset makes one)")
            ext = [float(v) for v in self.q(
                f"SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) "
                f"FROM (SELECT ST_Extent(geom) e FROM {self.points}) s")[0]]
            self.generator = f"table {self.points}"
        else:
            ext = [float(v) for v in data["extent"]]
            self.points = self.table("points")
            self.q(f"DROP TABLE IF EXISTS {self.points}")
            if ds["distribution"] in datagen.GENERATORS:
                self.generate_table(self.points, ds["distribution"], int(ds["points"]), seed, ext)
                self.generator = f"scripts/lib/datagen.py {ds['distribution']}"
            else:
                self.q("SELECT festival.generate_points(%s, %s::bigint, %s, %s::int, "
                       "ST_MakeBox2D(ST_MakePoint(%s, %s), ST_MakePoint(%s, %s)))",
                       (self.points, int(ds["points"]), ds["distribution"], seed, *ext))
                self.generator = "festival.generate_points"
            self.own_tables.append(self.points)
            if data["order"] == "hilbert":
                self.reorder_hilbert(self.points, ext)
        self.extent = ext
        self.points_geom = self.geometry_query(self.points).split('"')[1]
        self.npoints = self.one(f"SELECT count(*) FROM {self.points}")
        # the GiST index makes PostGIS's answers cheap and is the GiST peer's query index
        self.points_gist = self.table("points_gist")
        self.q(f"DROP INDEX IF EXISTS {self.points_gist}")
        self.q(f'CREATE INDEX {self.points_gist} ON {self.points} USING gist ("{self.points_geom}")')
        self.q(f"ANALYZE {self.points}")
        box = "ST_MakeBox2D(ST_MakePoint(%s, %s), ST_MakePoint(%s, %s))"
        self.window_tables = {}
        # every window set with the data's seed: exactly what a SQL script's
        # festival.generate_windows(t, count, area, extent, seed) makes, so a
        # config and a script with one seed run the same windows
        for i, pct in enumerate(self.exp["windows"]["area_percent"]):
            t = self.table(f"windows_{i}")
            self.q(f"DROP TABLE IF EXISTS {t}")
            self.q(f"SELECT festival.generate_windows(%s, %s::int, %s::float8, {box}, %s::int)",
                   (t, int(self.exp["windows"]["count"]), float(pct), *ext, seed))
            self.own_tables.append(t)
            self.window_tables[float(pct)] = self.geometry_query(t)
        self.knn_table = None
        if self.exp["knn"]["k"]:
            t = self.table("knn")
            self.q(f"DROP TABLE IF EXISTS {t}")
            self.q(f"SELECT festival.generate_knn_points(%s, %s::int, {box}, %s::int)",
                   (t, int(self.exp["knn"]["count"]), *ext, seed))
            self.own_tables.append(t)
            self.knn_table = self.geometry_query(t)
        self.empty_table = None
        if int(self.exp["empty"]["count"]) > 0:
            # small windows in an extent of the data's size right of the data:
            # every one finds nothing, so the time per call is the overhead
            t = self.table("empty")
            self.q(f"DROP TABLE IF EXISTS {t}")
            w = ext[2] - ext[0]
            self.q(f"SELECT festival.generate_windows(%s, %s::int, 0.001, {box}, %s::int)",
                   (t, int(self.exp["empty"]["count"]), ext[2] + w, ext[1], ext[2] + 2 * w,
                    ext[3], seed + 500))
            self.own_tables.append(t)
            self.empty_table = self.geometry_query(t)
        self.answers = {}
        self.peers.new_data()

    def generate_table(self, table, distribution, n, seed, ext):
        """A table (id bigint primary key, geom geometry) from a datagen generator."""
        self.q(f"CREATE TABLE {table} (id bigint PRIMARY KEY, geom geometry)")
        with self.conn.cursor() as cur:
            with cur.copy(f"COPY {table} (id, geom) FROM STDIN") as cp:
                for i, wkt in datagen.GENERATORS[distribution](n, seed, ext):
                    cp.write_row((i, wkt))
        bad = self.one(f"SELECT count(*) FROM {table} WHERE NOT ST_IsValid(geom)")
        if bad:
            raise WorkloadError(f"generator {distribution} made {bad} invalid geometries")

    def reorder_hilbert(self, table, ext):
        """Rewrite table in Hilbert order of its points over ext (ties by id).

        festival.build inserts in the table's physical order, and CREATE
        TABLE AS writes rows in its query's order, so the rewritten table is
        the insertion order.  Ids and geometries stay as generated.
        """
        geom = self.geometry_query(table).split('"')[1]
        idcol = self.one("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                         "AND attnum > 0 AND format_type(atttypid, atttypmod) IN "
                         "('bigint', 'integer') ORDER BY attnum LIMIT 1", (table,))
        rows = self.q(f'SELECT "{idcol}", ST_X("{geom}"), ST_Y("{geom}") FROM {table}')
        ranked = sorted((hilbert_key(x, y, ext), i) for i, x, y in rows)
        self.q("DROP TABLE IF EXISTS pg_temp.wl_order")
        self.q("CREATE TEMP TABLE wl_order (id bigint, pos bigint)")
        with self.conn.cursor() as cur:
            with cur.copy("COPY pg_temp.wl_order (id, pos) FROM STDIN") as cp:
                for pos, (_, i) in enumerate(ranked):
                    cp.write_row((i, pos))
        self.q(f"ALTER TABLE {table} RENAME TO {table}_unordered")
        self.q(f'CREATE TABLE {table} AS SELECT t.* FROM {table}_unordered t '
               f'JOIN pg_temp.wl_order o ON o.id = t."{idcol}" ORDER BY o.pos')
        self.q(f"DROP TABLE {table}_unordered")
        self.q("DROP TABLE pg_temp.wl_order")
        self.q(f'ALTER TABLE {table} ADD PRIMARY KEY ("{idcol}")')

    def drop_data(self):
        for t in self.own_tables:
            self.q(f"DROP TABLE IF EXISTS {t}")
        if self.points not in self.own_tables:
            self.q(f"DROP INDEX IF EXISTS {self.points_gist}")

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

    def query_table(self, w):
        if w["workload"] in ("windows", "batch"):
            return self.window_tables[w["area_percent"]]
        return self.knn_table if w["workload"] == "knn" else self.empty_table

    def expected(self, w):
        """PostGIS's answer: the answer count (windows), count and distance sum (kNN)."""
        if w["workload"] == "build":
            return self.npoints
        key = workload_label(w).replace("batch", "windows")
        if key not in self.answers:
            if w["workload"] in ("windows", "batch", "empty"):
                self.answers[key] = self.one(
                    f"SELECT count(*) FROM ({self.query_table(w)}) w "
                    f"JOIN {self.points} p ON ST_Intersects(p.\"{self.points_geom}\", w.g)")
            else:
                self.answers[key] = self.peers.gist_query(w)
        return self.answers[key]

    # ------------------------------------------------------------------
    # Measuring
    # ------------------------------------------------------------------

    def measured(self, label, settings, action, conn=None, sampler=None):
        conn = conn or self.conn
        self.one("SELECT festival.begin_run(%s)", (label,), conn=conn)
        try:
            if sampler:
                sampler.start()
            result = action(conn)
            memory = sampler.stop() if sampler else None
        except Exception:
            # a failed run must not look like a measurement: end it and drop its row
            try:
                failed = self.one("SELECT festival.end_run()", conn=conn)
                self.q("DELETE FROM festival.run WHERE run_id = %s", (failed,), conn=conn)
            except Exception:  # the original error matters more
                pass
            raise
        run_id = self.one("SELECT festival.end_run()", conn=conn)
        # the session's festival settings as the run saw them (per-row commits,
        # per-access I/O, log syncing, CPU timing...): the paper semantics the
        # experiment file sets, readable from every run (docs/experiments.md)
        session = dict(self.q("SELECT name, setting FROM pg_settings WHERE name LIKE "
                              "'festival.%' AND name <> 'festival.data_directory' ORDER BY name",
                              conn=conn))
        extra = dict(settings, result=result, session_settings=session)
        if memory is not None:
            extra.update(memory)
            extra["maintenance_work_mem_bytes"] = self.one(
                "SELECT setting::bigint * 1024 FROM pg_settings "
                "WHERE name = 'maintenance_work_mem'", conn=conn)
        self.q("UPDATE festival.run SET config = config || jsonb_build_object('experiment', "
               "%s::jsonb) WHERE run_id = %s", (json.dumps(extra), run_id), conn=conn)
        self.stored += 1
        return result

    def measured_fresh(self, label, settings, action, measure=True):
        """One run on a new backend, its peak memory sampled (exp.memory)."""
        import psycopg
        with psycopg.connect(autocommit=True) as conn:
            self.session(conn)
            if not measure:
                return action(conn)
            pid = self.one("SELECT pg_backend_pid()", conn=conn)
            return self.measured(label, settings, action, conn=conn, sampler=PeakSampler(pid))

    def repeat(self, label, common, w, action, before=None, fresh=False, check=None):
        """Warm-up rounds, then the measured repetitions, each checked."""
        reps, warm = int(self.exp["repetitions"]), int(self.exp["warmup"])
        expected = self.expected(w)
        for i in range(warm + reps):
            if before:
                before()
            rep = i - warm + 1
            full = f"{label} {workload_label(w)} rep={rep}"
            settings = dict(common, workload=w, rep=rep, expected=expected)
            if fresh:
                result = self.measured_fresh(full, settings, action, measure=rep >= 1)
            elif rep >= 1:
                result = self.measured(full, settings, action)
            else:
                result = action(self.conn)
            if not answers_agree(result, expected):
                raise WorkloadError(
                    f"{full} found {result} answers, PostGIS finds {expected}: the experiment "
                    "stops" + (" (the run is stored)" if rep >= 1 else ""))

    # ------------------------------------------------------------------
    # festival
    # ------------------------------------------------------------------

    def build(self, name, method, conn):
        rows = self.one("SELECT festival.build(%s, %s)", (name, method), conn=conn)
        self.one("SELECT festival.flush(%s)", (name,), conn=conn)
        return rows

    def festival_query(self, name, w, conn):
        qt = self.query_table(w)
        if w["workload"] == "batch":
            return self.one(f"SELECT count(*) FROM festival.query_batch(%s, "
                            f"ARRAY(SELECT g FROM ({qt}) w))", (name,), conn=conn)
        if w["workload"] == "knn":
            r = self.q(f"SELECT count(*), sum(q.distance) FROM ({qt}) w, "
                       "LATERAL festival.knn(%s, w.g, %s) q", (name, w["k"]), conn=conn)[0]
            return [r[0], r[1]]
        return self.one(f"SELECT count(*) FROM ({qt}) w, LATERAL festival.query(%s, w.g) q",
                        (name,), conn=conn)

    def reset(self, name, c):
        """Close the index so every measured run starts from the same state.

        Not on memory devices: their pages live only while the index is open.
        """
        if self.device_kind.get(c["device"]["name"]) != "memory":
            self.q("SELECT festival.close(%s)", (name,))

    def run_configuration(self, c, label, ds):
        exp = self.exp
        name = index_name(exp, c, ds)
        self.q("SELECT festival.drop_index(name) FROM festival.index WHERE name = %s", (name,))
        self.q("SELECT festival.create_index(%s, %s, %s, %s::jsonb, %s::regclass)",
               (name, c["structure"]["structure"], c["device"]["name"],
                json.dumps(index_options(c)), self.points))
        common = {"name": exp["name"], "structure": c["structure"]["structure"],
                  "structure_options": c["structure"]["options"], "framework": c["framework"],
                  "page_size": c["page_size"], "device": c["device"],
                  "build": c["build"]["method"], "points": self.npoints,
                  "data": dict(exp["data"], distribution=ds["distribution"],
                               points=ds["points"], generator=self.generator),
                  "repetitions": exp["repetitions"], "warmup": exp["warmup"]}
        method = c["build"]["method"]
        fresh = exp["memory"]
        self.repeat(label, common, {"workload": "build"},
                    lambda conn: self.build(name, method, conn),
                    # the index must not be open here while another backend builds it
                    before=lambda: self.reset(name, c), fresh=fresh)
        for w in query_workloads(exp):
            self.repeat(label, common, w, lambda conn, w=w: self.festival_query(name, w, conn),
                        before=lambda: self.reset(name, c))
        self.q("SELECT festival.close(%s)", (name,))
        if not self.keep:
            self.q("SELECT festival.drop_index(%s)", (name,))


def answers_agree(result, expected):
    """Equal counts; kNN distance sums equal up to rounding."""
    if isinstance(expected, list):
        if not isinstance(result, list) or result[0] != expected[0]:
            return False
        a, b = float(result[1] or 0), float(expected[1] or 0)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return result == expected


def total_configs(exp, configs):
    n = 0
    for ds in datasets(exp):
        n += len(exp["peers"]) + sum(1 for c in configs if fits(ds["points"], c["max_points"],
                                                                 c["build"]["max_points"]))
    return n


def main(argv):
    args = parse_args(argv)
    try:
        exp = load_experiment(args)
        configs = matrix(exp)
        if args.check_only:
            # scripts/run-workload installs what the experiment needs
            if any(p["peer"] == "libspatialindex" for p in exp["peers"]):
                print("needs: rtree")
            return 0
        if args.dry_run:
            constant = label_keys(exp, configs)
            print(constant_header(constant))
            for ds in datasets(exp):
                dl = data_label(exp, ds)
                for p in exp["peers"]:
                    for kind, b, w in peer_workloads(exp, p):
                        if not fits(ds["points"], p.get("max_points"),
                                    b["max_points"] if b else None):
                            continue
                        print(shown_label(f"{peer_label(exp, p, b)}{dl} {workload_label(w)}",
                                          constant) + f" ({reps(exp)})")
                for c in configs:
                    if not fits(ds["points"], c["max_points"], c["build"]["max_points"]):
                        continue
                    for w in workloads(exp):
                        print(shown_label(f"{base_label(exp, c)}{dl} {workload_label(w)}",
                                          constant) + f" ({reps(exp)})")
            print(f"{len(configs)} configurations x {len(datasets(exp))} data sets"
                  + (" (structure=catalog: every structure festival knows)"
                     if any(s.get("catalog") for s in exp["structures"]) else ""))
            return 0
        import psycopg
        with psycopg.connect(autocommit=True) as conn:
            runner = Runner(conn, exp, args.keep_indices)
            runner.prepare()
            configs = matrix(exp, runner.structures)
            # the catalog expanded: the keys every configuration shares
            constant = label_keys(exp, configs)
            sets = datasets(exp)
            total = total_configs(exp, configs)
            print(f"experiment {exp['name']}: {total} configurations over {len(sets)} data "
                  f"set(s), {exp['repetitions']} measured repetitions each, database "
                  f"{conn.info.dbname}", file=sys.stderr, flush=True)
            print(constant_header(constant), file=sys.stderr, flush=True)
            started = time.monotonic()
            tracker = cells.Tracker() if args.resume else None
            if args.resume:
                cells.ensure(conn)
            i = 0
            for ds in sets:
                dl = data_label(exp, ds)
                todo = [c for c in configs
                        if fits(ds["points"], c["max_points"], c["build"]["max_points"])]
                if args.resume:
                    # finished cells are skipped; a data set whose cells are all
                    # finished is not even generated
                    pending = []
                    for c in todo:
                        label = base_label(exp, c) + dl
                        if cells.finished(conn, label, cells.digest(exp, c, ds)):
                            i += 1
                            print(f"[{i}/{total}] finished before, skipped: "
                                  f"{shown_label(label, constant)}",
                                  file=sys.stderr, flush=True)
                        else:
                            pending.append(c)
                    todo = pending
                    if not todo and not exp["peers"]:
                        continue
                runner.prepare_data(ds, single=len(sets) == 1)
                for p in exp["peers"]:
                    i += 1
                    progress(i, total, started, shown_label(peer_label(exp, p) + dl, constant))
                    runner.peers.run(p, dl, ds)
                for c in todo:
                    if not fits(runner.npoints, c["max_points"], c["build"]["max_points"]):
                        continue
                    i += 1
                    label = base_label(exp, c) + dl
                    if args.resume and not tracker.may_start(conn, label):
                        break
                    progress(i, total, started, shown_label(label, constant))
                    if args.resume:
                        cells.clear(conn, label)
                    t0 = time.monotonic()
                    runner.run_configuration(c, label, ds)
                    if args.resume:
                        wall = time.monotonic() - t0
                        cells.done(conn, label, exp["name"], cells.digest(exp, c, ds), wall)
                        tracker.finished_cell(conn, label, wall)
                if len(sets) > 1 and not args.keep_indices:
                    runner.drop_data()
            elapsed = time.monotonic() - started
            print(f"stored {runner.stored} runs in festival.run (labels 'exp={exp['name']} ...') "
                  f"in {elapsed:.1f} s; scripts/report --label 'exp={exp['name']} %' "
                  "--output DIR makes the report", file=sys.stderr)
            first = runner.first_run
        if args.report:
            import subprocess
            report = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report")
            return subprocess.call([report, "--output", args.report,
                                    "--label", f"exp={exp['name']} %",
                                    "--min-run-id", str(first), "--print-peers"])
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
    # run as the module "workload" that peers.py imports, not as a second
    # copy named __main__ (whose WorkloadError would be another class)
    import workload
    sys.exit(workload.main(sys.argv[1:]))
