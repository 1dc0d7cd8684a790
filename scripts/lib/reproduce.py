#!/usr/bin/python3
"""The Python part of scripts/reproduce (see there for usage).

Reads every claim file in experiments/claims/ (docs/experiments.md, "The
claim registry"), picks the claims asked for, runs each experiment they need
once (scripts/run-workload --config FILE --scale SCALE), evaluates every
claim's measure and writes DIR/report.md and DIR/report.html: first the
claim table, then the per-experiment charts (scripts/report), then one
traced build replayed on every shipped drive (festival.replay).

A claim whose measure compares runs of two experiments names the second
(and any further) in "also": a list of experiment files run like its
"experiment" whenever the claim is chosen.

Measures are SQL over festival.run; they may use the temporary view
claim_run that this script creates in its session:

    claim_run(run_id, label, t jsonb, elapsed, device_seconds, pages_read,
              pages_written, profile)

t holds the label's key=value tokens (t->>'exp', t->>'page', ...), elapsed
is model_elapsed_seconds (index CPU + virtual device time), or with
--time device the virtual device seconds alone; replays are left out.

--time device makes every claim a function of deterministic virtual time
only: the index CPU seconds in the modelled elapsed time vary from run to run
on a shared machine (by a median 6.5 %, up to about a third, at small scale),
which is enough to flip a close claim.  CI's test uses it.

Exit status: 0 when every claim the scale can decide holds, 1 when one does
not, 2 on a usage or configuration error.
"""

import argparse
import fnmatch
import glob
import html
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLAIM_KEYS = {"id", "paper", "where", "claim", "paper_value", "experiment", "also", "measure",
              "holds", "scales", "note"}
REQUIRED = {"id", "paper", "where", "claim", "experiment", "measure", "holds", "scales"}
OPS = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
       "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}
SCALES = ("small", "laptop", "paper")

HOLDS = "holds"
FAILS = "does not hold"
UNDECIDED = "cannot be decided at this scale"
OFFLINE = "cannot be reproduced offline"
NOT_RUN = "not run (no experiment configured yet)"
ERROR = "measure failed"

ELAPSED_COLUMN = {"modelled": "model_elapsed_seconds", "device": "device_seconds"}
TIME_WORDS = {
    "modelled": ("Times are modelled elapsed times (index CPU seconds + virtual device seconds, "
                 "`festival.run.model_elapsed_seconds`, docs/measurements.md)"),
    "device": ("Times are virtual device seconds alone (`--time device`: "
               "`festival.run.device_seconds`, docs/measurements.md; index CPU time left out)"),
}

CLAIM_VIEW = """
CREATE OR REPLACE TEMP VIEW claim_run AS
SELECT r.run_id, r.label,
       (SELECT coalesce(jsonb_object_agg(split_part(x, '=', 1), substr(x, strpos(x, '=') + 1)), '{}')
        FROM unnest(string_to_array(r.label, ' ')) x WHERE x LIKE '%=%') AS t,
       r.{elapsed_column} AS elapsed, r.device_seconds, r.pages_read, r.pages_written,
       r.profile
FROM festival.run r WHERE r.replay_of IS NULL
"""


class ReproduceError(Exception):
    """A problem to report to the user in one line."""


def parse_args(argv):
    p = argparse.ArgumentParser(prog="reproduce", description=__doc__.split("\n")[0])
    p.add_argument("claims", nargs="*",
                   help="claim ids or glob patterns (carniel2017-*); default: every claim")
    p.add_argument("--scale", choices=SCALES, default="small")
    p.add_argument("--output", help="report directory (default reproduce-SCALE)")
    p.add_argument("--reuse", action="store_true",
                   help="use the experiments' runs already stored instead of running them again")
    p.add_argument("--list", action="store_true", help="list the claims and exit")
    p.add_argument("--time", choices=("modelled", "device"), default="modelled",
                   help="what a claim's elapsed time is: index CPU + virtual device seconds "
                        "(modelled, the default) or the virtual device seconds alone (device: "
                        "deterministic, for tests)")
    p.add_argument("--dpi", type=int, default=80)
    p.add_argument("--no-charts", action="store_true",
                   help="skip the per-experiment reports (scripts/report); CI uses it")
    p.add_argument("--expect", metavar="FILE",
                   help="lines 'CLAIM-ID does not hold: why': claims known not to hold at this "
                        "scale; exit 1 when any other decidable claim does not hold, or a listed "
                        "one holds (so the list stays exact)")
    return p.parse_args(argv)


def load_claims():
    claims = []
    seen = set()
    files = sorted(glob.glob(os.path.join(ROOT, "experiments", "claims", "*.json")))
    if not files:
        raise ReproduceError("no claim files in experiments/claims/")
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise ReproduceError(f"cannot read {path}: {e}") from e
        if not isinstance(data, list):
            raise ReproduceError(f"{path}: the top level must be a JSON array of claims")
        for c in data:
            name = c.get("id", "?") if isinstance(c, dict) else "?"
            if not isinstance(c, dict) or not REQUIRED <= set(c) or set(c) - CLAIM_KEYS:
                raise ReproduceError(
                    f"{path}: claim {name} must have the keys {sorted(REQUIRED)} "
                    f"(and optionally paper_value, also, note), not {sorted(c) if isinstance(c, dict) else c}")
            if c["id"] in seen:
                raise ReproduceError(f"{path}: claim id {c['id']} appears twice")
            seen.add(c["id"])
            if c["holds"].get("op") not in OPS:
                raise ReproduceError(f"{path}: claim {name}: holds.op must be one of {sorted(OPS)}")
            if c["experiment"] is not None and not os.path.exists(os.path.join(ROOT, c["experiment"])):
                raise ReproduceError(f"{path}: claim {name}: no experiment file {c['experiment']}")
            also = c.get("also", [])
            # "also": the further experiments the measure reads; only next to
            # an experiment, each once, each a file
            if (not isinstance(also, list) or not all(isinstance(a, str) for a in also)
                    or ("also" in c and not also)):
                raise ReproduceError(f"{path}: claim {name}: also must be a non-empty list of "
                                     "experiment files")
            if also and c["experiment"] is None:
                raise ReproduceError(f"{path}: claim {name}: also needs an experiment")
            if len(set(also)) != len(also) or c["experiment"] in also:
                raise ReproduceError(f"{path}: claim {name}: also names an experiment twice")
            for a in also:
                if not os.path.exists(os.path.join(ROOT, a)):
                    raise ReproduceError(f"{path}: claim {name}: no experiment file {a}")
            c["_file"] = os.path.relpath(path, ROOT)
            claims.append(c)
    return claims


def select(claims, patterns):
    if not patterns:
        return claims
    out = []
    for c in claims:
        if any(fnmatch.fnmatchcase(c["id"], p) or c["id"] == p for p in patterns):
            out.append(c)
    unmatched = [p for p in patterns if not any(
        fnmatch.fnmatchcase(c["id"], p) or c["id"] == p for c in claims)]
    if unmatched:
        raise ReproduceError(f"no claim matches {', '.join(unmatched)}; "
                             "scripts/reproduce --list shows them")
    return out


def experiments_of(c):
    """The experiment files a claim's measure reads: its experiment, then its also list."""
    return ([c["experiment"]] if c["experiment"] else []) + c.get("also", [])


def experiment_name(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return json.load(f).get("name", "exp")


def run_experiment(conn, path, scale, reuse):
    name = experiment_name(path)
    pattern = f"exp={name} %"
    have = conn.execute("SELECT count(*) FROM festival.run WHERE label LIKE %s "
                        "AND replay_of IS NULL", (pattern,)).fetchone()[0]
    if reuse and have:
        print(f"reproduce: {path}: reusing {have} stored runs", file=sys.stderr)
        return name
    # runs of an earlier invocation would be medians together with these
    conn.execute("DELETE FROM festival.io_trace WHERE run_id IN "
                 "(SELECT run_id FROM festival.run WHERE label LIKE %s)", (pattern,))
    conn.execute("DELETE FROM festival.run WHERE label LIKE %s", (pattern,))
    print(f"reproduce: running {path} at scale {scale}", file=sys.stderr, flush=True)
    cmd = [os.path.join(ROOT, "scripts", "run-workload"), "--no-setup",
           "--config", os.path.join(ROOT, path), "--scale", scale]
    rc = subprocess.call(cmd)
    if rc != 0:
        raise ReproduceError(f"scripts/run-workload failed on {path} (exit {rc})")
    return name


def has_form(path, scale):
    """Does the experiment configuration have a form (its "scales" section) for scale?"""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return scale in json.load(f).get("scales", {})


def evaluate(conn, c, scale, formless=()):
    """(status, ours, why) for one claim."""
    for p in experiments_of(c):
        if p in formless:
            return UNDECIDED, None, f"{p} has no {scale} form"
    if c["experiment"] is None or c["measure"] is None:
        note = c.get("note", "")
        # a claim without an experiment is either impossible offline (its note
        # says why) or simply not configured yet
        return (OFFLINE if "offline" in note.lower() else NOT_RUN), None, note
    decidable = scale in c["scales"]
    try:
        with conn.transaction():
            cur = conn.execute(c["measure"])
            rows = cur.fetchall()
            cols = [d.name for d in cur.description]
    except Exception as e:  # a broken measure is reported, not fatal
        if not decidable:  # e.g. a configuration only the larger form runs
            return UNDECIDED, None, c.get("note", "")
        return ERROR, None, str(e).splitlines()[0]
    if len(rows) != 1 or cols != ["ours"]:
        return ERROR, None, f"the measure returned {len(rows)} rows with columns {cols}"
    ours = rows[0][0]
    if ours is None:
        if not decidable:
            return UNDECIDED, None, c.get("note", "")
        return ERROR, None, "the measure returned NULL (no runs?)"
    ours = float(ours)
    if not decidable:
        return UNDECIDED, ours, c.get("note", "")
    ok = OPS[c["holds"]["op"]](ours, float(c["holds"]["value"]))
    return (HOLDS if ok else FAILS), ours, c.get("note", "")


def read_expect(path):
    known = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                known.add(line.split()[0])
    return known


def fmt_num(v):
    if v is None:
        return "—"
    if abs(v) >= 1000 or v == int(v):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}"
    return f"{v:.4g}" if abs(v) < 100 else f"{v:.1f}"


def residual(c, ours):
    pv = c.get("paper_value")
    if ours is None or pv in (None, 0):
        return None
    return ours / float(pv)


def replay_section(conn, scale):
    """One traced build replayed on every shipped drive."""
    points = 5000 if scale == "small" else 100000
    conn.execute("SET client_min_messages = warning")
    conn.execute("DROP TABLE IF EXISTS rp_replay_points")
    conn.execute("SELECT festival.generate_points('rp_replay_points', %s::bigint, "
                 "'gaussian_clusters', 2, ST_MakeBox2D(ST_MakePoint(-73.99, -33.75), "
                 "ST_MakePoint(-28.85, 5.27)))", (points,))
    if not conn.execute("SELECT count(*) FROM festival.device WHERE name = 'rp_replay'").fetchone()[0]:
        conn.execute("SELECT festival.create_device('rp_replay', kind => 'memory', "
                     "profile => 'hdd_wd_7200')")
    conn.execute("SELECT festival.drop_index(name) FROM festival.index WHERE name = 'rp_replay_ix'")
    old = [r[0] for r in conn.execute("SELECT run_id FROM festival.run WHERE label LIKE 'exp=rpreplay %'")]
    if old:
        conn.execute("DELETE FROM festival.io_trace WHERE run_id = ANY(%s)", (old,))
        conn.execute("DELETE FROM festival.run WHERE run_id = ANY(%s) OR replay_of = ANY(%s)",
                     (old, old))
    label = (f"exp=rpreplay structure=rtree split=quadratic page=4096 points={points} "
             "device=rp_replay workload=build")
    conn.execute("SELECT festival.begin_run(%s, trace => true)", (label,))
    conn.execute("SELECT festival.create_index('rp_replay_ix', 'rtree', 'rp_replay', "
                 "'{\"page_size\": 4096, \"split\": \"quadratic\", \"min_fill\": 50}'::jsonb, "
                 "'rp_replay_points'::regclass)")
    conn.execute("SELECT festival.build('rp_replay_ix')")
    conn.execute("SELECT festival.flush('rp_replay_ix')")
    src = conn.execute("SELECT festival.end_run()").fetchone()[0]
    conn.execute("SELECT festival.drop_index('rp_replay_ix')")
    # one statement per replay: a replay's row is visible only to later statements
    profiles = [r[0] for r in conn.execute(
        "SELECT name FROM festival.device_profile WHERE builtin ORDER BY name")]
    ids = [conn.execute("SELECT festival.replay(%s, %s)", (src, p)).fetchone()[0] for p in profiles]
    rows = conn.execute(
        "SELECT r.profile, p.kind, p.model_version, r.device_seconds, r.model_elapsed_seconds, "
        "r.erases, r.write_amplification, r.run_id FROM festival.run r "
        "JOIN festival.device_profile p ON p.name = r.profile WHERE r.run_id = ANY(%s) "
        "ORDER BY p.model_version DESC, r.device_seconds", (ids,)).fetchall()
    live = conn.execute("SELECT device_seconds FROM festival.run WHERE run_id = %s",
                        (src,)).fetchone()[0]
    return points, src, live, rows


def write_report(outdir, scale, results, experiments, replay, started, elapsed_s, reused,
                 time_basis="modelled"):
    os.makedirs(outdir, exist_ok=True)
    counts = {}
    for _, st, *_ in results:
        counts[st] = counts.get(st, 0) + 1
    decided = counts.get(HOLDS, 0) + counts.get(FAILS, 0)
    summary = (f"{counts.get(HOLDS, 0)} of {decided} claims decidable at scale {scale} hold"
               f" ({len(results)} claims: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
               + ")")
    head = ["claim", "paper", "where", "paper's value", "ours", "result", "residual (ours ÷ paper)",
            "command"]
    rows = []
    for c, st, ours, why in results:
        res = residual(c, ours)
        cmd = f"scripts/reproduce {c['id']} --scale {scale}" if c["experiment"] else "—"
        status = st + (f": {why}" if why and st in (OFFLINE, NOT_RUN, UNDECIDED, ERROR) else "")
        rows.append([f"{c['claim']} (`{c['id']}`)", c["paper"], c["where"],
                     fmt_num(c.get("paper_value")) + (
                         f" (range {c['holds']['range'][0]}–{c['holds']['range'][1]})"
                         if c["holds"].get("range") else ""),
                     fmt_num(ours), status, fmt_num(res) if res is not None else "—", f"`{cmd}`"])

    md = [f"# Reproducing the papers' claims (scale {scale})", "",
          f"Generated {started} by `scripts/reproduce --scale {scale}"
          + ("" if time_basis == "modelled" else f" --time {time_basis}") + "`"
          + (" from the experiments' stored runs (`--reuse`). " if reused else f" in {elapsed_s:.0f} s. ")
          + f"**{summary}.**", "",
          TIME_WORDS[time_basis] + " on the shipped "
          "device profiles (docs/devices.md: device model 3 for the HDD and SSD of Carniel "
          "et al., model 2 for the others). Gains are the papers' `(baseline − candidate) / baseline × 100`. "
          "A claim holds when `ours` satisfies its `holds` condition "
          "(experiments/claims/*.json); the residual compares ours with the paper's figure.", "",
          "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        md.append("| " + " | ".join(str(x).replace("|", "\\|") for x in r) + " |")
    md.append("")
    md.append("## Experiments")
    md.append("")
    for path, name in experiments:
        md.append(f"- `{path}` (runs labelled `exp={name}`): [report]({name}/report.md), "
                  f"[HTML]({name}/report.html)")
    md.append("")
    if replay:
        points, src, live, rrows = replay
        md += ["## One workload on every shipped drive (festival.replay)", "",
               f"The quadratic R-tree (4 KB pages) built one insert at a time over {points:,} "
               f"clustered points, traced once on `hdd_wd_7200` (run {src}, {live:.3f} device s), "
               "then re-costed with `festival.replay(run_id, profile)` on every shipped profile "
               "without running the workload again (`_v1`: device model 1).", "",
               "| profile | kind | model | device s | modelled elapsed s | erases | write amplification |",
               "|---|---|---|---|---|---|---|"]
        for name, kind, mv, dev, el, er, wa in (r[:7] for r in rrows):
            md.append(f"| `{name}` | {kind} | {mv} | {dev:.3f} | {el:.3f} | {er} | "
                      f"{'' if wa is None else f'{wa:.3f}'} |")
        md.append("")
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")

    # HTML: the same content; tables as tables
    h = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
         f"<title>Reproducing the papers' claims (scale {scale})</title>",
         "<style>body{font-family:sans-serif;max-width:90em}table{border-collapse:collapse}"
         "td,th{border:1px solid #aaa;padding:3px 6px;vertical-align:top}"
         ".holds{background:#dfd}.fails{background:#fdd}.other{background:#eee}</style>"
         "</head><body>",
         f"<h1>Reproducing the papers' claims (scale {html.escape(scale)})</h1>",
         f"<p>Generated {html.escape(started)} by <code>scripts/reproduce --scale {scale}"
         + ("" if time_basis == "modelled" else f" --time {time_basis}") + "</code>. "
         f"<b>{html.escape(summary)}.</b> " + html.escape(TIME_WORDS[time_basis].replace("`", ""))
         + " on the shipped device profiles (device model 3 for the HDD and SSD "
         "of Carniel et al., model 2 for the others).</p>",
         "<table><tr>" + "".join(f"<th>{html.escape(x)}</th>" for x in head) + "</tr>"]
    for (c, st, _, _), r in zip(results, rows):
        cls = "holds" if st == HOLDS else "fails" if st == FAILS else "other"
        h.append(f"<tr class='{cls}'>" + "".join(
            f"<td>{html.escape(str(x)).replace('`', '')}</td>" for x in r) + "</tr>")
    h.append("</table><h2>Experiments</h2><ul>")
    for path, name in experiments:
        h.append(f"<li><code>{html.escape(path)}</code>: <a href='{name}/report.html'>report</a></li>")
    h.append("</ul>")
    if replay:
        points, src, live, rrows = replay
        h.append("<h2>One workload on every shipped drive (festival.replay)</h2>"
                 f"<p>Run {src} ({points:,} points, quadratic R-tree, 4 KB) traced on "
                 "hdd_wd_7200 and re-costed on every shipped profile.</p><table><tr><th>profile</th>"
                 "<th>kind</th><th>model</th><th>device s</th><th>modelled elapsed s</th>"
                 "<th>erases</th><th>write amplification</th></tr>")
        for name, kind, mv, dev, el, er, wa in (r[:7] for r in rrows):
            h.append(f"<tr><td>{name}</td><td>{kind}</td><td>{mv}</td><td>{dev:.3f}</td>"
                     f"<td>{el:.3f}</td><td>{er}</td><td>{'' if wa is None else f'{wa:.3f}'}</td></tr>")
        h.append("</table>")
    h.append("</body></html>")
    with open(os.path.join(outdir, "report.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(h) + "\n")
    return summary, counts


def main(argv):
    args = parse_args(argv)
    try:
        claims = select(load_claims(), args.claims)
        if args.list:
            for c in claims:
                print(f"{c['id']:60s} {','.join(c['scales']) or 'offline':12s} {c['claim']}")
            return 0
        import psycopg
        outdir = args.output or f"reproduce-{args.scale}"
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        t0 = time.monotonic()
        with psycopg.connect(autocommit=True) as conn:
            conn.execute("SET client_min_messages = warning")
            conn.execute("CREATE EXTENSION IF NOT EXISTS festival CASCADE")
            paths = []
            for c in claims:
                for p in experiments_of(c) if c["measure"] else []:
                    if p not in paths:
                        paths.append(p)
            # an experiment without a form for this scale is not run: its
            # claims cannot be decided here (e.g. the thesis's "laptop" forms)
            formless = [p for p in paths if not has_form(p, args.scale)]
            for p in formless:
                print(f"reproduce: {p} has no {args.scale} form; its claims are not decided",
                      file=sys.stderr)
            experiments = [(p, run_experiment(conn, p, args.scale, args.reuse))
                           for p in paths if p not in formless]
            conn.execute(CLAIM_VIEW.replace("{elapsed_column}", ELAPSED_COLUMN[args.time]))
            results = [(c, *evaluate(conn, c, args.scale, formless)) for c in claims]
            replay = replay_section(conn, args.scale)
            elapsed_s = time.monotonic() - t0
            summary, counts = write_report(outdir, args.scale, results, experiments, replay,
                                           started, elapsed_s, args.reuse, args.time)
        for path, name in ([] if args.no_charts else experiments):
            sub = os.path.join(outdir, name)
            for fmt in ("md", "html"):
                rc = subprocess.call([os.path.join(ROOT, "scripts", "report"), "--output", sub,
                                      "--label", f"exp={name} %", "--format", fmt,
                                      "--dpi", str(args.dpi),
                                      "--title", f"{path} at scale {args.scale}"],
                                     stdout=subprocess.DEVNULL)
                if rc != 0:
                    raise ReproduceError(f"scripts/report failed for {name} (exit {rc})")
        for c, st, ours, why in results:
            print(f"{st:32s} {c['id']}  ours={fmt_num(ours)}", file=sys.stderr)
        print(f"reproduce: {summary}; report in {outdir}/report.md", file=sys.stderr)
        if counts.get(ERROR, 0):
            return 1
        if args.expect:
            known = read_expect(args.expect)
            bad = [c["id"] for c, st, *_ in results
                   if (st == FAILS) != (c["id"] in known) and st in (HOLDS, FAILS)]
            for i in bad:
                print(f"reproduce: {i}: " + ("holds now; remove it from " + args.expect
                                             if i in known else "does not hold"), file=sys.stderr)
            return 1 if bad else 0
        return 1 if counts.get(FAILS, 0) else 0
    except ReproduceError as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
