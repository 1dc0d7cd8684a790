"""The claim registry: reading and checking claims, the magnitude rule,
the calibration set and the frozen rules (docs/experiments.md, "The claim
registry").  scripts/reproduce (reproduce.py) decides the claims with it;
scripts/migrate-claims converts claim files of the first format.

The magnitude rule, one for every claim, written before any claim ran with it
and never adjusted per claim:

    A claim whose paper states a number is decided in magnitude on the
    quantity the paper reports: a gain (percent of the baseline's time saved,
    (baseline - candidate) / baseline x 100), a slowdown (percent more time
    than the baseline) or a ratio (baseline / candidate: a speedup, a ratio of
    read operations).  Each is a monotone function of the excess
    e = t_slow / t_fast - 1 (gain g: e = g / (100 - g); slowdown s: e = s / 100;
    ratio r: e = r - 1).  Ours holds in magnitude when its excess lies within
    a factor of MAGNITUDE_FACTOR (2) of the paper's range of excesses:
    e_lo / 2 <= e_ours <= 2 e_hi.  For small effects this is a factor of 2 on
    the gain itself (a 14.45 % gain allows 7.8-25 %); for a gain near 100 % it is
    a factor of 2 on the remaining time (89-96 % allows 80-98 %); a speedup of
    10x allows 5.5-19x.  A claim without a paper number (a direction, a best
    page size, a share of configurations) is decided in direction only and
    counted apart.

Direction: ours satisfies the claim's "direction" condition (op, value), e.g.
a gain > 0 or a ratio > 1.
"""

import glob
import hashlib
import json
import math
import os

MAGNITUDE_FACTOR = 2.0
QUANTITIES = ("gain", "slowdown", "ratio")
OPS = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
       "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}
SCALES = ("small", "laptop", "paper")
CLAIM_KEYS = {"id", "paper", "where", "claim", "paper_value", "paper_data", "experiment", "also",
              "measure", "direction", "magnitude", "scales", "scales_without", "method", "note"}
REQUIRED = {"id", "paper", "where", "claim", "paper_data", "experiment", "measure", "direction",
            "scales"}
# the write and read behaviour every experiment a claim uses must state in its
# "settings" (so that a reader sees it, and every run records it)
SEMANTIC_SETTINGS = ("festival.build_commit_rows", "festival.write_through_per_access",
                     "festival.log_sync", "festival.track_cpu_time")
MAX_CALIBRATION = 5
SOURCE_KINDS = ("datasheet", "paper", "published", "measured", "assumed", "fitted", "rule")
RULE_KEYS = ("experiment", "also", "measure", "direction", "magnitude", "scales")


class ClaimError(Exception):
    """A problem with the registry, reported in one line."""


# ----------------------------------------------------------------------
# The magnitude rule
# ----------------------------------------------------------------------

def excess(quantity, v):
    """t_slow / t_fast - 1 of a value of the quantity (inf for a 100 % gain)."""
    if v is None:
        return math.inf
    if quantity == "gain":
        return math.inf if v >= 100 else v / (100.0 - v)
    if quantity == "slowdown":
        return v / 100.0
    return v - 1.0


def from_excess(quantity, e):
    if math.isinf(e):
        return math.inf if e > 0 else -math.inf
    if quantity == "gain":
        return 100.0 * e / (1.0 + e) if e > -1 else -math.inf
    if quantity == "slowdown":
        return 100.0 * e
    return e + 1.0


def band(quantity, lo, hi, factor=MAGNITUDE_FACTOR):
    """The values of the quantity that hold in magnitude against the paper's [lo, hi]."""
    e_lo, e_hi = excess(quantity, lo), excess(quantity, hi)
    low = e_lo / factor if e_lo > 0 else e_lo * factor
    high = e_hi * factor if e_hi > 0 else e_hi / factor
    return from_excess(quantity, low), from_excess(quantity, high)


def magnitude_holds(claim, ours):
    """True/False, or None for a claim decided in direction only."""
    m = claim.get("magnitude")
    if not m:
        return None
    lo, hi = band(m["quantity"], *m["paper"])
    return lo <= ours <= hi


def direction_holds(claim, ours):
    d = claim["direction"]
    return OPS[d["op"]](ours, float(d["value"]))


# ----------------------------------------------------------------------
# Reading the registry
# ----------------------------------------------------------------------

def experiment_forms(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        cfg = json.load(f)
    return set(cfg.get("scales", {})) & set(SCALES), cfg


def experiments_of(c):
    """The experiment files a claim's measure reads: its experiment, then its also list."""
    return ([c["experiment"]] if c["experiment"] else []) + c.get("also", [])


def check_claim(root, path, c, forms_cache):
    name = c.get("id", "?") if isinstance(c, dict) else "?"
    where = f"{path}: claim {name}"
    if not isinstance(c, dict):
        raise ClaimError(f"{path}: every claim must be a JSON object")
    if "holds" in c:
        raise ClaimError(f"{where} is in the first claim format (\"holds\"); convert the file "
                         "with scripts/migrate-claims (docs/experiments.md)")
    missing, unknown = REQUIRED - set(c), set(c) - CLAIM_KEYS
    if missing or unknown:
        raise ClaimError(f"{where}: missing keys {sorted(missing)}, unknown keys "
                         f"{sorted(unknown)}; a claim has {sorted(CLAIM_KEYS)}")
    d = c["direction"]
    if not isinstance(d, dict) or d.get("op") not in OPS or not isinstance(
            d.get("value"), (int, float)) or set(d) - {"op", "value"}:
        raise ClaimError(f"{where}: direction must be {{\"op\": one of {sorted(OPS)}, "
                         "\"value\": a number}")
    m = c.get("magnitude")
    if m is not None:
        ok = (isinstance(m, dict) and m.get("quantity") in QUANTITIES
              and isinstance(m.get("paper"), list) and len(m["paper"]) == 2
              and isinstance(m["paper"][0], (int, float))
              and (m["paper"][1] is None or isinstance(m["paper"][1], (int, float)))
              and set(m) <= {"quantity", "paper", "basis"})
        if not ok:
            raise ClaimError(f"{where}: magnitude must be {{\"quantity\": one of {QUANTITIES}, "
                             "\"paper\": [lo, hi or null], \"basis\": why}} or null")
        if m["paper"][1] is not None and m["paper"][1] < m["paper"][0]:
            raise ClaimError(f"{where}: magnitude.paper must be [lo, hi] with lo <= hi")
        if m["quantity"] == "gain" and (m["paper"][1] or 0) >= 100:
            raise ClaimError(f"{where}: a gain is below 100 %")
    also = c.get("also", [])
    if (not isinstance(also, list) or not all(isinstance(a, str) for a in also)
            or ("also" in c and not also)):
        raise ClaimError(f"{where}: also must be a non-empty list of experiment files")
    if also and c["experiment"] is None:
        raise ClaimError(f"{where}: also needs an experiment")
    if len(set(also)) != len(also) or c["experiment"] in also:
        raise ClaimError(f"{where}: also names an experiment twice")
    if not isinstance(c["scales"], list) or set(c["scales"]) - set(SCALES):
        raise ClaimError(f"{where}: scales must be a list of {SCALES}")
    for p in experiments_of(c):
        if not os.path.exists(os.path.join(root, p)):
            raise ClaimError(f"{where}: no experiment file {p}")
        if p not in forms_cache:
            forms_cache[p] = experiment_forms(root, p)
        settings = forms_cache[p][1].get("settings", {})
        lacking = [s for s in SEMANTIC_SETTINGS if s not in settings]
        if lacking:
            raise ClaimError(f"{where}: experiment {p} must state its write and read "
                             f"behaviour in \"settings\": {', '.join(lacking)} missing")
    without = c.get("scales_without", {})
    if not isinstance(without, dict) or set(without) - set(SCALES) or not all(
            isinstance(v, str) and v.strip() for v in without.values()) or (
            "scales_without" in c and not without):
        raise ClaimError(f"{where}: scales_without must map scales to the reason the claim's "
                         "measure cannot be decided on that scale's form")
    if set(without) & set(c["scales"]):
        raise ClaimError(f"{where}: a scale is both in scales and in scales_without")
    if experiments_of(c):
        # decided at every scale it can run: the forms every experiment it reads
        # has, except those declared (with the reason) in scales_without, which is
        # part of the frozen rule
        can = set.intersection(*(forms_cache[p][0] for p in experiments_of(c)))
        if set(c["scales"]) | set(without) != can:
            raise ClaimError(f"{where}: scales {sorted(c['scales'])} must be every scale its "
                             f"experiments have a form for: {sorted(can)}"
                             + (f" (less scales_without {sorted(without)})" if without else ""))
    elif c["scales"]:
        raise ClaimError(f"{where}: a claim without an experiment has no scales")
    if c["experiment"] is None and c["measure"] is not None:
        raise ClaimError(f"{where}: a measure needs an experiment")


def load_claims(root):
    claims, seen, forms = [], set(), {}
    files = sorted(glob.glob(os.path.join(root, "experiments", "claims", "*.json")))
    if not files:
        raise ClaimError("no claim files in experiments/claims/")
    for path in files:
        rel = os.path.relpath(path, root)
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise ClaimError(f"cannot read {rel}: {e}") from e
        if not isinstance(data, list):
            raise ClaimError(f"{rel}: the top level must be a JSON array of claims")
        for c in data:
            check_claim(root, rel, c, forms)
            if c["id"] in seen:
                raise ClaimError(f"{rel}: claim id {c['id']} appears twice")
            seen.add(c["id"])
            c["_file"] = rel
            claims.append(c)
    return claims


# ----------------------------------------------------------------------
# Calibration apart from validation
# ----------------------------------------------------------------------

def load_calibration(root, claims):
    """experiments/calibration.json: the calibration set and every drive-model parameter's source.

    A parameter fitted to a claim outside the calibration set is a defect:
    the registry is refused until the parameter has an independent source or
    the claim joins the calibration set (at most MAX_CALIBRATION claims).
    """
    path = os.path.join(root, "experiments", "calibration.json")
    with open(path, encoding="utf-8") as f:
        cal = json.load(f)
    ids = {c["id"] for c in claims}
    cset = cal.get("calibration_claims", [])
    if len(cset) > MAX_CALIBRATION:
        raise ClaimError(f"experiments/calibration.json: {len(cset)} calibration claims, at most "
                         f"{MAX_CALIBRATION}")
    for i in cset:
        if i not in ids:
            raise ClaimError(f"experiments/calibration.json: calibration claim {i} is not in the "
                             "registry")
    for p in cal.get("parameters", []):
        name = f"{p.get('profile')}.{p.get('parameter')}"
        if p.get("kind") not in SOURCE_KINDS or not p.get("source"):
            raise ClaimError(f"experiments/calibration.json: parameter {name} needs a kind "
                             f"({', '.join(SOURCE_KINDS)}) and a source")
        if p["kind"] == "fitted" and not p.get("fitted_to"):
            raise ClaimError(f"experiments/calibration.json: fitted parameter {name} must name "
                             "the claims it was fitted to (fitted_to)")
        for i in p.get("fitted_to", []):
            if i not in cset:
                raise ClaimError(f"experiments/calibration.json: parameter {name} was fitted to "
                                 f"the held-out claim {i}: a defect (give the parameter an "
                                 "independent source or put the claim in the calibration set)")
    return cal


# ----------------------------------------------------------------------
# Frozen rules
# ----------------------------------------------------------------------

FROZEN = os.path.join("experiments", "claims-frozen.json")


def rule_digest(c):
    body = {k: c.get(k) for k in RULE_KEYS}
    # a later key of the rule joins the digest only where it is used, so that
    # the rules frozen before it existed keep their digests
    if "scales_without" in c:
        body["scales_without"] = c["scales_without"]
    return hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def load_frozen(root):
    path = os.path.join(root, FROZEN)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def freeze_state(c, frozen):
    """'frozen', 'not frozen' or 'changed after freezing'."""
    f = frozen.get(c["id"])
    if f is None:
        return "not frozen"
    return "frozen" if f["digest"] == rule_digest(c) else "changed after freezing"


def freeze(root, claims, when):
    """Record the rule of every claim not frozen yet; a frozen rule is never replaced."""
    frozen = load_frozen(root)
    added = []
    for c in claims:
        if c["id"] not in frozen:
            frozen[c["id"]] = {"digest": rule_digest(c), "frozen": when}
            added.append(c["id"])
    with open(os.path.join(root, FROZEN), "w", encoding="utf-8") as f:
        json.dump(dict(sorted(frozen.items())), f, indent=1)
        f.write("\n")
    return added
