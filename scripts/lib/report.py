"""The report of scripts/report: turn festival.run rows into a report with tables and charts.

    scripts/report --output DIR [--label PATTERN] [--baseline PATTERN]
                   [--min-run-id N] [--format md|html] [--title TEXT] [--print-peers]

Reads the runs whose label is LIKE PATTERN (default: all), groups them by
configuration (the label without its rep=N token), takes the median of every
metric over the repetitions and writes DIR/report.md (or report.html) with:

  - per workload (the label's workload=, area=, k=, inserts= and size= tokens), a table of
    medians: elapsed (wall) time, CPU, I/O and device time, pages read and
    written, submissions, erases, write amplification;
  - bar charts in the style of the papers' figures: elapsed time and device
    time per configuration, grouped by page size (the page= token), one
    panel per device (device= token), each with its own scale;
  - with --baseline KEYS or PATTERN: the gain of every other configuration
    over its baseline, as the papers define it: (baseline - candidate) /
    baseline * 100 (positive: the candidate is faster).  KEYS are key=value
    tokens a baseline's label holds (device=hdd); a PATTERN (with %) is LIKE
    over labels.  A candidate's baseline is the baseline configuration that
    agrees with it on every key both have except the named keys (for a
    pattern, those that separate baseline runs from candidate runs);
  - keys every configuration shares said once at the top, not in rows and
    legends; values to 4 significant digits;
  - pages read per node height (0 = leaves) when runs have reads_per_level;
  - when the runs include peers (peer= tokens: PostGIS GiST, libspatialindex,
    see docs/experiments.md), "festival / peer": every festival
    configuration's median elapsed time divided by its peer's on the same
    data set, one column per data set size (n=), the same in the backend's
    CPU time (cpu_seconds; not for libspatialindex), and the peak backend memory
    of builds run with "memory" (bytes per point and the ratio to
    maintenance_work_mem).  --print-peers also prints that section.

Labels are expected as key=value tokens as scripts/run-workload writes them
(exp=... structure=... page=4096 device=ssd workload=windows area=0.1 rep=2);
any other label is one configuration of its own.  Metrics that other
festival versions add as columns of festival.run (device_seconds,
read_submissions, erases, write_amplification, reads_per_level...) are read
from the column when it exists and from metrics otherwise; a chart without
data is skipped with a note in the report.

The connection comes from the PG* environment variables.  Drawing uses
matplotlib's Agg backend (Debian's python3-matplotlib and python3-psycopg).
"""

import argparse
import html
import math
import os
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import psycopg  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machines  # noqa: E402


class ReportError(Exception):
    """A problem to report to the user in one line."""


# name, title, unit, SQL expression if festival.run has the column, fallback
METRICS = [
    ("wall_seconds", "elapsed s", "run.wall_seconds", None),
    ("cpu_seconds", "CPU s", "run.cpu_seconds", None),
    ("io_seconds", "I/O s", "run.io_seconds", None),
    ("device_seconds", "device s", "run.device_seconds",
     "(run.metrics ->> 'device_seconds')::float8"),
    # elapsed time as the papers measure it: index CPU + virtual device time
    # (docs/measurements.md); the papers' figures are compared with this
    ("model_elapsed_seconds", "modelled elapsed s", "run.model_elapsed_seconds",
     "(run.metrics ->> 'index_cpu_seconds')::float8"
     " + coalesce((run.metrics ->> 'device_seconds')::float8, 0)"),
    ("pages_read", "pages read", "run.pages_read", None),
    ("pages_written", "pages written", "run.pages_written", None),
    ("read_submissions", "read subm.", "run.read_submissions",
     "(run.metrics ->> 'read_submissions')::float8"),
    ("write_submissions", "write subm.", "run.write_submissions",
     "(run.metrics ->> 'write_submissions')::float8"),
    ("erases", "erases", "run.erases", "(run.metrics ->> 'device_erases')::float8"),
    ("write_amplification", "WA", "run.write_amplification",
     "(run.metrics ->> 'ftl_flash_writes')::float8"
     " / nullif((run.metrics ->> 'ftl_host_writes')::float8, 0)"),
    ("flushes", "flushes", "run.flushes", "(run.metrics ->> 'flushes')::float8"),
    ("log_syncs", "log syncs", "run.log_syncs", "(run.metrics ->> 'log_syncs')::float8"),
    ("peak_bytes", "peak memory B", "run.peak_bytes",
     "(run.config -> 'experiment' ->> 'peak_anon_bytes')::float8"),
]
# run-workload's settings of a run, read for the comparison with peers
EXTRA = [
    ("points", "(run.config -> 'experiment' ->> 'points')::float8"),
    ("mwm_bytes", "(run.config -> 'experiment' ->> 'maintenance_work_mem_bytes')::float8"),
    ("calls", "(run.config -> 'experiment' -> 'workload' ->> 'count')::float8"),
]
SECONDS = {"wall_seconds", "cpu_seconds", "io_seconds", "device_seconds",
           "model_elapsed_seconds"}
# inserts= and size=: the insert/search mixes and group point queries of
# scripts/lib/mixes.py (Fevgas 2019, ch. 3)
WORKLOAD_KEYS = ("workload", "area", "k", "inserts", "size")
HIDDEN_KEYS = ("exp",) + WORKLOAD_KEYS


def parse_args(argv):
    p = argparse.ArgumentParser(prog="report", description="Report on festival.run.")
    p.add_argument("--output", required=True, help="directory for the report and charts")
    p.add_argument("--label", default="%", help="LIKE pattern over run labels (default %%)")
    p.add_argument("--baseline", help="LIKE pattern selecting the baseline runs")
    p.add_argument("--format", choices=("md", "html"), default="md")
    p.add_argument("--title", help="report title")
    p.add_argument("--dpi", type=int, default=100)
    p.add_argument("--min-run-id", type=int, default=0,
                   help="only runs with this run_id or later (one run-workload invocation)")
    p.add_argument("--print-peers", action="store_true",
                   help="also print the comparison with the peers on standard output")
    return p.parse_args(argv)


# ---------------------------------------------------------------------------
# Reading the runs
# ---------------------------------------------------------------------------

def run_columns(conn):
    return {r[0] for r in conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'festival.run'::regclass "
        "AND attnum > 0 AND NOT attisdropped").fetchall()}


def fetch_runs(conn, pattern, min_run_id=0):
    if conn.execute("SELECT to_regclass('festival.run')").fetchone()[0] is None:
        raise ReportError("festival.run does not exist in this database "
                          "(CREATE EXTENSION festival, or set PGDATABASE)")
    cols = run_columns(conn)
    exprs = []
    for name, _, column_expr, fallback in METRICS:
        expr = f"{column_expr}::float8" if name in cols else (fallback or "NULL::float8")
        if name == "device_seconds":
            # 0 means "no device profile", not "free": no data rather than a zero bar
            expr = f"nullif({expr}, 0)"
        exprs.append(expr)
    levels = ("run.reads_per_level" if "reads_per_level" in cols
              else "run.metrics -> 'reads_per_level'")
    exprs += [e for _, e in EXTRA]
    rows = conn.execute(
        f"SELECT run.run_id, run.label, {', '.join(exprs)}, {levels} "
        "FROM festival.run run WHERE run.label LIKE %s AND run.run_id >= %s "
        "ORDER BY run.run_id",
        (pattern, min_run_id)).fetchall()
    runs = []
    for row in rows:
        r = {"run_id": row[0], "label": row[1]}
        for (name, *_), v in zip(METRICS, row[2:2 + len(METRICS)]):
            r[name] = v
        for i, (name, _) in enumerate(EXTRA):
            r[name] = row[2 + len(METRICS) + i]
        per_level = row[2 + len(METRICS) + len(EXTRA)]
        r["reads_per_level"] = ({int(k): float(v) for k, v in per_level.items()}
                                if isinstance(per_level, dict) and per_level else None)
        runs.append(r)
    return runs


def tokens(label):
    """'a=1 b=2 free' -> [('a', '1'), ('b', '2'), (None, 'free')]."""
    out = []
    for t in label.split():
        if "=" in t:
            k, v = t.split("=", 1)
            out.append((k, v))
        else:
            out.append((None, t))
    return out


def join_tokens(toks):
    return " ".join(v if k is None else f"{k}={v}" for k, v in toks)


class Config:
    """The runs of one configuration (label without rep=) and their medians."""

    def __init__(self, key, runs):
        self.key = key
        self.runs = runs
        # keys every selected configuration shares (group_configs): said once
        self.hide = ()
        self.toks = tokens(key)
        self.tok = {k: v for k, v in self.toks if k is not None}
        self.median = {}
        for name, *_ in METRICS + EXTRA:
            values = [r[name] for r in runs if r[name] is not None]
            self.median[name] = statistics.median(values) if values else None
        heights = sorted({h for r in runs if r["reads_per_level"] for h in r["reads_per_level"]})
        self.reads_per_level = {}
        for h in heights:
            values = [r["reads_per_level"].get(h, 0.0) for r in runs if r["reads_per_level"]]
            self.reads_per_level[h] = statistics.median(values)

    def workload(self):
        toks = [(k, v) for k, v in self.toks if k in WORKLOAD_KEYS]
        return join_tokens(toks) if toks else "all runs"

    def short(self, drop=()):
        """The configuration's label without the experiment and workload tokens."""
        toks = [(k, v) for k, v in self.toks
                if k not in HIDDEN_KEYS and k not in drop and k not in self.hide]
        return join_tokens(toks) or self.key

    def page(self):
        p = self.tok.get("page")
        try:
            return int(p)
        except (TypeError, ValueError):
            return None


def group_configs(runs):
    by_key = {}
    for r in runs:
        key = join_tokens([(k, v) for k, v in tokens(r["label"]) if k != "rep"])
        by_key.setdefault(key, []).append(r)
    configs = [Config(k, v) for k, v in by_key.items()]
    hide = tuple(constant_tokens(configs))
    for c in configs:
        c.hide = hide
    return configs


def constant_tokens(configs):
    """{key: value} of the label keys every configuration has with one value
    (workload keys aside): rows and legends leave them out, the report says
    them once."""
    if len(configs) < 2:
        return {}
    keys = [k for k, _ in configs[0].toks if k is not None and k not in HIDDEN_KEYS]
    return {k: configs[0].tok[k] for k in keys
            if all(c.tok.get(k) == configs[0].tok[k] for c in configs)}


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------

SIGNIFICANT = 4


def sig(v, digits=SIGNIFICANT):
    """v rounded to significant digits, never in exponent notation."""
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    return f"{round(v, decimals):.{decimals}f}"


def fmt(name, v):
    """A measured value as printed: counts whole, the rest to 4 significant digits."""
    if v is None:
        return "-"
    if name == "peak_bytes" or (name not in SECONDS and float(v).is_integer()):
        return str(int(v))
    return sig(v)


def gain(baseline, candidate):
    """The papers' performance gain: how much the candidate reduced the baseline, %."""
    if baseline is None or candidate is None or baseline == 0:
        return None
    return (baseline - candidate) / baseline * 100.0


def baseline_selector(pattern):
    """--baseline: a LIKE pattern over labels (with %), or key=value tokens
    naming a configuration by some of its keys (structure=rtree)."""
    if "%" in pattern:
        return None
    toks = pattern.split()
    if not toks or any("=" not in t for t in toks):
        raise ReportError(f"--baseline {pattern!r}: give key=value tokens (e.g. "
                          "'structure=rtree split=quadratic') or a LIKE pattern with %")
    return dict(t.split("=", 1) for t in toks)


def is_baseline(c, pattern, named):
    if named is None:
        return any(like(r["label"], pattern) for r in c.runs)
    return all(c.tok.get(k) == v for k, v in named.items())


def pair_with_baseline(configs, baseline_keys, named=None):
    """For every candidate, the baseline configuration it is compared with.

    The contrast keys are those --baseline names (key=value form) or, for a
    LIKE pattern, the label keys whose values among baseline configurations
    never occur among candidates (e.g. device=hdd vs device=ssd).  A
    candidate's baseline agrees with it on every other key that both have:
    a key one of them lacks (a structure's own option, such as the R-tree's
    split beside the R*-tree's reinsert) does not keep them apart.  A
    candidate with several such baselines is listed with them, unpaired.
    Returns (contrast, pairs, unmatched: [(candidate, [baselines])]).
    """
    base = [c for c in configs if c.key in baseline_keys]
    cand = [c for c in configs if c.key not in baseline_keys]
    if not base:
        raise ReportError("--baseline matches none of the selected runs")
    if not cand:
        raise ReportError("--baseline matches every selected run: nothing to compare with")
    if named is not None:
        contrast = sorted(named)
    else:
        keys = {k for c in configs for k in c.tok}
        contrast = []
        for k in sorted(keys):
            bv = {c.tok.get(k) for c in base}
            cv = {c.tok.get(k) for c in cand}
            if not bv & cv:
                contrast.append(k)
    pairs = []
    unmatched = []
    for c in cand:
        match = [b for b in base
                 if all(b.tok[k] == v for k, v in c.tok.items()
                        if k in b.tok and k not in contrast)]
        if len(match) == 1:
            pairs.append((match[0], c))
        else:
            unmatched.append((c, match))
    return contrast, pairs, unmatched


# ---------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------

def slug(text):
    return re.sub(r"[^A-Za-z0-9.]+", "_", text).strip("_") or "all"


def panel_layout(n):
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    return rows, cols


HATCHES = ("", "//", "..", "xx", "\\\\", "++")


def variant_style(i):
    """Fill colour and hatch of the i-th variant: one style per variant in
    every panel and in the legend, told apart beyond ten by the hatch."""
    return {"facecolor": plt.get_cmap("tab10")(i % 10), "hatch": HATCHES[(i // 10) % len(HATCHES)],
            "edgecolor": "black", "linewidth": 0.4}


def bar_chart(configs, metric, ylabel, title, path, dpi, value_of=None):
    """Seeds' style: bars per configuration, grouped by page size, one panel per device."""
    from matplotlib.patches import Patch
    value_of = value_of or (lambda c: c.median[metric])
    devices = sorted({c.tok.get("device", "") for c in configs})
    rows, cols = panel_layout(len(devices))
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.2 * rows), squeeze=False)
    drawn = False
    # tokens every bar shares go to the title, so the legend names only differences
    all_variants = sorted({c.short(drop=("page", "device")) for c in configs})
    common = set.intersection(*(set(v.split()) for v in all_variants)) if all_variants else set()
    # one style per variant over all panels: the legend's colours are every panel's
    style = {v: variant_style(i) for i, v in enumerate(all_variants)}
    shown = set()

    def legend_name(variant):
        return " ".join(t for t in variant.split() if t not in common) or variant
    if common:
        title = f"{title}\n{' '.join(t for t in all_variants[0].split() if t in common)}"
    for ax, device in zip(axes.flat, devices):
        mine = [c for c in configs if c.tok.get("device", "") == device]
        pages = sorted({c.page() for c in mine}, key=lambda p: (p is None, p or 0))
        variants = sorted({c.short(drop=("page", "device")) for c in mine})
        width = 0.8 / max(1, len(variants))
        for vi, variant in enumerate(variants):
            xs, ys = [], []
            for pi, page in enumerate(pages):
                for c in mine:
                    if c.page() == page and c.short(drop=("page", "device")) == variant:
                        v = value_of(c)
                        if v is not None:
                            xs.append(pi - 0.4 + width * (vi + 0.5))
                            ys.append(v)
            if ys:
                drawn = True
                shown.add(variant)
            ax.bar(xs, ys, width, **style[variant])
        ax.set_xticks(range(len(pages)))
        ax.set_xticklabels([f"{p // 1024} KB" if p and p % 1024 == 0 else str(p)
                            for p in pages])
        ax.set_xlabel("page size")
        ax.set_ylabel(ylabel)
        ax.set_title(f"device {device}" if device else title, fontsize=10)
        if metric == "gain":
            ax.axhline(0, color="black", linewidth=0.8)
        ax.grid(axis="y", alpha=0.3)
        ax.margins(y=0.05)
    for ax in list(axes.flat)[len(devices):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    names = [v for v in all_variants if v in shown]
    handles = [Patch(label=legend_name(v), **style[v]) for v in names]
    ncol = max(1, min(len(names), 2 * cols))
    fig.tight_layout()
    # below the panels, and saved with a box fitted to everything drawn: the
    # legend is never cut off, however many rows it takes
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol,
               fontsize=8, frameon=False)
    if drawn:
        fig.savefig(path, dpi=dpi, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return drawn


def height_chart(configs, title, path, dpi):
    """Pages read per node height, stacked, per page size; one panel per variant+device.

    The panels share the y axis: equal bars are equal counts in every panel."""
    mine = [c for c in configs if c.reads_per_level]
    if not mine:
        return False
    panels = sorted({c.short(drop=("page",)) for c in mine})[:9]
    rows, cols = panel_layout(len(panels))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False,
                             sharey=True)
    heights = sorted({h for c in mine for h in c.reads_per_level})
    for ax, panel in zip(axes.flat, panels):
        cs = sorted([c for c in mine if c.short(drop=("page",)) == panel],
                    key=lambda c: (c.page() is None, c.page() or 0))
        bottom = [0.0] * len(cs)
        for h in heights:
            ys = [c.reads_per_level.get(h, 0.0) for c in cs]
            ax.bar(range(len(cs)), ys, 0.6, bottom=bottom, label=f"height {h}",
                   color=plt.get_cmap("tab10")(h % 10))
            bottom = [b + y for b, y in zip(bottom, ys)]
        ax.set_xticks(range(len(cs)))
        ax.set_xticklabels([f"{c.page() // 1024} KB" if c.page() and c.page() % 1024 == 0
                            else str(c.page() or c.short()) for c in cs])
        ax.set_title(panel, fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("pages read (median)")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(title)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=max(1, min(len(labels), 6)), fontsize=8, frameon=False)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------
# The document: blocks rendered as Markdown or HTML
# ---------------------------------------------------------------------------

def render_md(blocks):
    out = []
    for b in blocks:
        if b[0] == "h":
            out.append("#" * b[1] + " " + b[2] + "\n")
        elif b[0] == "p":
            out.append(b[1] + "\n")
        elif b[0] == "table":
            head, rows = b[1], b[2]
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|")
            for r in rows:
                out.append("| " + " | ".join(str(x) for x in r) + " |")
            out.append("")
        elif b[0] == "img":
            out.append(f"![{b[2]}]({b[1]})\n")
    return "\n".join(out)


def render_html(blocks, title):
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
           f"<title>{html.escape(title)}</title>",
           "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}"
           "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
           "td{text-align:right}td:first-child{text-align:left}img{max-width:100%}</style>",
           "</head><body>"]
    for b in blocks:
        if b[0] == "h":
            out.append(f"<h{b[1]}>{html.escape(b[2])}</h{b[1]}>")
        elif b[0] == "p":
            out.append(f"<p>{html.escape(b[1])}</p>")
        elif b[0] == "table":
            out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in b[1])
                       + "</tr>")
            for r in b[2]:
                out.append("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in r)
                           + "</tr>")
            out.append("</table>")
        elif b[0] == "img":
            out.append(f"<p><img src=\"{html.escape(b[1])}\" alt=\"{html.escape(b[2])}\"></p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def workload_order(name):
    """build first, then windows by area, kNN by k, mixes, groups, the rest."""
    tok = dict(t for t in tokens(name) if t[0] is not None)
    kind = {"build": 0, "windows": 1, "knn": 2, "mix": 3, "group": 4}.get(tok.get("workload"), 5)
    num = 0.0
    for k in ("area", "k", "inserts", "size"):
        try:
            num = float(tok.get(k, 0))
        except ValueError:
            pass
    return (kind, num, name)


def build_report(configs, args):
    blocks = []
    title = args.title or f"festival runs like '{args.label}'"
    nruns = sum(len(c.runs) for c in configs)
    blocks.append(("h", 1, title))
    blocks.append(("p", f"{nruns} runs in {len(configs)} configurations; every number is the "
                        "median over a configuration's repetitions. Times in seconds; "
                        "device s is the virtual time of a device profile (empty without one)."))
    shared = constant_tokens(configs)
    if shared:
        blocks.append(("p", "Every configuration: "
                            + " ".join(f"{k}={v}" for k, v in shared.items())
                            + " (left out of the rows and legends below)."))
    present = [m for m in METRICS if any(c.median[m[0]] is not None for c in configs)]
    absent = [m[1] for m in METRICS if m not in present]
    if absent:
        blocks.append(("p", "No data in these runs for: " + ", ".join(absent) + "."))
    groups = {}
    for c in configs:
        groups.setdefault(c.workload(), []).append(c)
    pairs_by_group = {}
    if args.baseline:
        named = baseline_selector(args.baseline)
        baseline_keys = {c.key for c in configs if is_baseline(c, args.baseline, named)}
        contrast, pairs, unmatched = pair_with_baseline(configs, baseline_keys, named)
        for b, c in pairs:
            pairs_by_group.setdefault(c.workload(), []).append((b, c))
        what = (f"the configurations with {args.baseline}" if named is not None
                else f"runs like '{args.baseline}'")
        blocks.append(("p", f"Baseline: {what}. A candidate is compared with the baseline "
                            "configuration that agrees with it on every key both have except "
                            f"{', '.join(contrast) or '(no key)'}. Gain = (baseline - "
                            "candidate) / baseline * 100: positive when the candidate is "
                            "faster."))
        lone = [c.short() + f" ({c.workload()})" for c, m in unmatched if not m]
        many = [c.short() + f" ({c.workload()}): " + " or ".join(b.short() for b in m)
                for c, m in unmatched if m]
        if lone:
            blocks.append(("p", "Without a baseline: " + "; ".join(lone) + "."))
        if many:
            blocks.append(("p", "With several baselines (name more keys in --baseline to "
                                "choose one): " + "; ".join(many) + "."))
    blocks += peers_section(configs)
    for gname in sorted(groups, key=workload_order):
        group = sorted(groups[gname], key=lambda c: (c.short(drop=("page",)),
                                                     c.page() or 0, c.key))
        blocks.append(("h", 2, f"Workload: {gname}"))
        head = ["configuration", "runs"] + [m[1] for m in present]
        rows = [[c.short(), len(c.runs)] + [fmt(m[0], c.median[m[0]]) for m in present]
                for c in group]
        blocks.append(("table", head, rows))
        s = slug(gname)
        charts = (("wall_seconds", "elapsed time", "elapsed"),
                  ("device_seconds", "device time", "device"),
                  ("model_elapsed_seconds", "modelled elapsed time", "model_elapsed"))
        for metric, what, prefix in charts:
            if metric == "model_elapsed_seconds" and not any(
                    c.median.get("device_seconds") for c in group):
                continue        # without a device profile it is only CPU time
            fname = f"{prefix}_{s}.png"
            if bar_chart(group, metric, f"{what} (s)", f"{gname}: {what}",
                         os.path.join(args.output, fname), args.dpi):
                blocks.append(("img", fname, f"{gname}: {what}"))
            else:
                why = ("(it needs festival.track_cpu_time on for every operation of a run: "
                       "without the index CPU time it is NULL, never the device time alone)"
                       if metric == "model_elapsed_seconds"
                       else "(device time needs a device with a profile)")
                blocks.append(("p", f"No {what} chart: no run of this workload has {what} "
                                    f"{why}."))
        pairs = pairs_by_group.get(gname, [])
        if args.baseline and pairs:
            blocks.append(("h", 3, f"Gains over the baseline: {gname}"))
            grows = []
            for b, c in sorted(pairs, key=lambda p: (p[1].short(drop=("page",)),
                                                     p[1].page() or 0)):
                grows.append([c.short(), b.short()]
                             + [fmt_gain(gain(b.median[m], c.median[m]))
                                for m in ("wall_seconds", "device_seconds",
                                          "model_elapsed_seconds", "pages_read",
                                          "pages_written")])
            blocks.append(("table", ["candidate", "baseline", "elapsed gain %",
                                     "device gain %", "modelled elapsed gain %",
                                     "pages read gain %",
                                     "pages written gain %"], grows))
            # with device profiles the papers' comparison is the modelled elapsed
            # time; the device time when a run lacks its CPU part (and named so)
            profiled = any(c.median.get("device_seconds") for _, c in pairs)
            timed = all(b.median.get("model_elapsed_seconds") is not None
                        and c.median.get("model_elapsed_seconds") is not None for b, c in pairs)
            gm = ("wall_seconds" if not profiled
                  else "model_elapsed_seconds" if timed else "device_seconds")
            gwhat = {"wall_seconds": "elapsed-time", "device_seconds": "device-time",
                     "model_elapsed_seconds": "modelled elapsed-time"}[gm]
            gmap = {c.key: gain(b.median[gm], c.median[gm]) for b, c in pairs}
            fname = f"gain_{s}.png"
            if bar_chart([c for _, c in pairs], "gain", "gain over baseline (%)",
                         f"{gname}: {gwhat} gain over the baseline",
                         os.path.join(args.output, fname), args.dpi,
                         value_of=lambda c: gmap.get(c.key)):
                blocks.append(("img", fname, f"{gname}: gain"))
        fname = f"io_per_height_{s}.png"
        if height_chart(group, f"{gname}: pages read per node height (0 = leaves)",
                        os.path.join(args.output, fname), args.dpi):
            blocks.append(("img", fname, f"{gname}: I/O per height"))
        else:
            blocks.append(("p", "No I/O-per-height chart: these runs carry no reads_per_level."))
    return title, blocks


# ---------------------------------------------------------------------------
# festival / peers (PostGIS GiST, libspatialindex)
# ---------------------------------------------------------------------------

# a libspatialindex variant and the festival configurations it is compared with
LSI_MATCH = {"rstar": ({"structure": "rstartree"}, {"structure": "rtree", "split": "rstar"}),
             "quadratic": ({"structure": "rtree", "split": "quadratic"},),
             "linear": ({"structure": "rtree", "split": "linear"},)}
DATA_KEYS = ("data", "dist", "n")


def peer_of(f, peers):
    """The peer configurations a festival configuration is compared with."""
    out = []
    wl = f.tok.get("workload")
    data = tuple(f.tok.get(k) for k in DATA_KEYS)
    for p in peers:
        if tuple(p.tok.get(k) for k in DATA_KEYS) != data or p.tok.get("workload") != wl:
            continue
        if p.tok.get("area") != f.tok.get("area") or p.tok.get("k") != f.tok.get("k"):
            continue
        peer = p.tok["peer"]
        if wl == "build":
            insert = f.tok.get("build") == "insert"
            if peer == "gist" and p.tok.get("build") == ("insert" if insert else "create_index"):
                out.append(p)
            elif peer == "libspatialindex" and insert and any(
                    all(f.tok.get(k) == v for k, v in m.items())
                    for m in LSI_MATCH.get(p.tok.get("variant"), ())):
                out.append(p)
        elif peer == "gist" and wl in ("windows", "knn", "empty"):
            out.append(p)
    return out


def n_key(c):
    try:
        return int(c.tok.get("n") or c.median.get("points") or 0)
    except ValueError:
        return 0


def peers_section(configs):
    """festival / peer per data set size, and the peak memory of builds."""
    peers = [c for c in configs if "peer" in c.tok]
    mine = [c for c in configs if "peer" not in c.tok]
    if not peers:
        return []
    sizes = sorted({n_key(c) for c in configs})
    # tokens every festival configuration shares are said once, not per row
    shared = set.intersection(*(set(f.short(drop=DATA_KEYS).split()) for f in mine)) \
        if mine else set()

    def name(c):
        return " ".join(t for t in c.short(drop=DATA_KEYS).split() if t not in shared) \
            or c.short(drop=DATA_KEYS)
    head_n = [f"n={n}" for n in sizes]
    rows = {}
    cpu_rows = {}
    for f in mine:
        for p in peer_of(f, peers):
            what = f.workload()
            key = (name(f), what, p.short(drop=DATA_KEYS + ("build",)))
            # libspatialindex works in the client, not in the measured backend
            if p.tok["peer"] != "libspatialindex":
                a, b = f.median["cpu_seconds"], p.median["cpu_seconds"]
                cpu_rows.setdefault(key, {})[n_key(f)] = \
                    "-" if not a or not b else sig(a / b, 3)
            a, b = f.median["wall_seconds"], p.median["wall_seconds"]
            cell = "-" if not a or not b else sig(a / b, 3)
            if f.tok.get("workload") == "empty" and f.median.get("calls") and a and b:
                calls = f.median["calls"]
                cell += f" ({sig(a / calls * 1e6, 3)} vs {sig(b / calls * 1e6, 3)} µs/call)"
            rows.setdefault(key, {})[n_key(f)] = cell
        # with the heap peer: GiST's index work alone, its INSERT minus the heap's
        if f.tok.get("workload") == "build" and f.tok.get("build") == "insert":
            data = tuple(f.tok.get(k) for k in DATA_KEYS)
            same = [p for p in peers if tuple(p.tok.get(k) for k in DATA_KEYS) == data
                    and p.tok.get("workload") == "build" and p.tok.get("build") == "insert"]
            gist = [p for p in same if p.tok["peer"] == "gist"]
            heap = [p for p in same if p.tok["peer"] == "heap"]
            if gist and heap:
                a = f.median["wall_seconds"]
                b = gist[0].median["wall_seconds"] - heap[0].median["wall_seconds"]
                key = (name(f), f.workload(), "peer=gist minus peer=heap (index work only)")
                rows.setdefault(key, {})[n_key(f)] = sig(a / b, 3) if a and b > 0 else "-"
    blocks = [("h", 2, "festival / peers"),
              ("p", "Median elapsed time of festival divided by the peer's on the same data "
                    "(below 1: festival is faster). One-at-a-time builds are compared with "
                    "INSERT into a GiST-indexed table and with libspatialindex's insertions "
                    "of the same variant (and, with the heap peer, with GiST's INSERT minus "
                    "the heap's INSERT: its index work alone), bulk loads with CREATE INDEX "
                    "USING gist, windows, "
                    "kNN and empty windows with the same queries through GiST. Every "
                    "answer was checked against PostGIS's before it was stored."
                    + (f" Every festival configuration has {' '.join(sorted(shared))}."
                       if shared else ""))]
    order = {"build": 0, "windows": 1, "knn": 2, "empty": 3}

    def ratio_table(cells_by_row):
        """Rows (festival, workload, peer) by workload, then configuration."""
        keys = sorted(cells_by_row, key=lambda k: (
            workload_order(k[1]), order.get(k[1].split()[0][9:], 9), k[0], k[2]))
        return ("table", ["festival", "workload", "peer"] + head_n,
                [list(k) + [cells_by_row[k].get(n, "") for n in sizes] for k in keys])
    blocks.append(ratio_table(rows))
    if cpu_rows:
        blocks.append(("h", 3, "In backend CPU time"))
        blocks.append(("p", "The same comparisons in the backend's CPU time (festival.run."
                            "cpu_seconds, medians): on a shared machine the elapsed ratios "
                            "above compare moments of different load, while CPU time counts "
                            "only what each side computed. Not for libspatialindex, which "
                            "works in the client process."))
        blocks.append(ratio_table(cpu_rows))
    mem = [c for c in configs if c.tok.get("workload") == "build"
           and c.median.get("peak_bytes") is not None]
    if mem:
        mrows = {}
        for c in mem:
            n = n_key(c)
            pk = c.median["peak_bytes"]
            mwm = c.median.get("mwm_bytes")
            cell = f"{pk / n:.0f} B/pt, {pk / 1048576:.0f} MB" if n else f"{pk / 1048576:.0f} MB"
            if mwm:
                cell += f", {sig(pk / mwm, 3)}× mwm"
            mrows.setdefault(name(c) if "peer" not in c.tok else c.short(drop=DATA_KEYS),
                             {})[n] = cell
        blocks.append(("h", 3, "Peak backend memory of builds"))
        blocks.append(("p", "Peak private (anonymous) memory of the backend that built, above "
                            "its level at the start of the run: /proc/<pid>/status RssAnon "
                            "sampled every 5 ms on a fresh backend; per point, in MB, and "
                            "divided by maintenance_work_mem (mwm)."))
        blocks.append(("table", ["configuration"] + head_n,
                       [[k] + [v.get(n, "") for n in sizes] for k, v in sorted(mrows.items())]))
    return blocks


def fmt_gain(v):
    return "-" if v is None else sig(v, 3)


def like(text, pattern):
    """SQL LIKE with the default escape character, for the baseline pattern."""
    rx = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            rx.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        rx.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.fullmatch("".join(rx), text, re.S) is not None


def main(argv):
    args = parse_args(argv)
    try:
        try:
            conn = psycopg.connect(autocommit=True)
        except psycopg.OperationalError as e:
            raise ReportError(f"cannot connect (set PGHOST, PGPORT, PGDATABASE): {e}") from e
        with conn:
            runs = fetch_runs(conn, args.label, args.min_run_id)
            # which machines made the runs, and what compares across them
            machine_note = machines.note(conn, [r["run_id"] for r in runs])
        if not runs:
            raise ReportError(f"no run in festival.run has a label like '{args.label}'")
        os.makedirs(args.output, exist_ok=True)
        configs = group_configs(runs)
        title, blocks = build_report(configs, args)
        blocks[2:2] = [("p", text) for text in machine_note]
        path = os.path.join(args.output, f"report.{args.format}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(render_md(blocks) if args.format == "md" else render_html(blocks, title))
        charts = sum(1 for b in blocks if b[0] == "img")
        if args.print_peers:
            peer_blocks = peers_section(configs)
            print(render_md(peer_blocks) if peer_blocks
                  else "(no peers among these runs: nothing to compare with)")
        print(f"wrote {path}: {len(runs)} runs, {len(configs)} configurations, {charts} charts")
    except ReportError as e:
        print(f"report: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
