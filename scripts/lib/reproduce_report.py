"""The report of scripts/reproduce: DIR/report.md and DIR/report.html.

First the counts (held-out claims first, calibration apart, direction and
magnitude separately, direction-only claims apart), then one row per claim:
the paper's value and range, the magnitude band of the rule
(scripts/lib/claims.py), ours, the residual, the direction and magnitude
verdicts, calibration or held out, the paper's method facts, and for every
claim that does not hold in both senses the reason recorded in
experiments/verdict-notes.json (checked against the paper's method section).
Then the experiments (the paper's method against ours), the drive-model
parameters and their sources (experiments/calibration.json), and one traced
build replayed on every shipped drive.
"""

import html
import json
import math
import os

import claims as registry

HOLDS, FAILS = "holds", "does not hold"
DECIDED = (HOLDS, FAILS)

TIME_WORDS = {
    "modelled": ("Times are modelled elapsed times (index CPU seconds + virtual device seconds, "
                 "`festival.run.model_elapsed_seconds`, docs/measurements.md)"),
    "device": ("Times are virtual device seconds alone (`--time device`: "
               "`festival.run.device_seconds`, docs/measurements.md; index CPU time left out)"),
}


def fmt_num(v):
    if v is None:
        return "—"
    if isinstance(v, float) and math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if abs(v) >= 1000 or v == int(v):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}"
    return f"{v:.4g}" if abs(v) < 100 else f"{v:.1f}"


def yes_no(v, none="—"):
    return none if v is None else ("holds" if v else "fails")


def load_notes(root, scale):
    path = os.path.join(root, "experiments", "verdict-notes.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f).get(scale, {})


def paper_range(c):
    m = c.get("magnitude")
    if not m:
        return fmt_num(c.get("paper_value"))
    lo, hi = m["paper"]
    unit = {"gain": " %", "slowdown": " %", "ratio": "×"}[m["quantity"]]
    text = fmt_num(lo) if lo == hi else f"{fmt_num(lo)}–{fmt_num(hi)}"
    return f"{m['quantity']} {text}{unit}"


def band_text(c):
    m = c.get("magnitude")
    if not m:
        return "direction only"
    lo, hi = registry.band(m["quantity"], *m["paper"])
    return f"{fmt_num(lo)} to {fmt_num(hi)}"


def residual(c, ours):
    pv = c.get("paper_value")
    if ours is None or pv in (None, 0):
        return None
    return ours / float(pv)


def claim_note(c, r, verdict_note, res):
    """Everything known about a claim's verdict, whatever it is: the claim's
    own note (experiments/claims/*.json), the verdict note of this scale
    (experiments/verdict-notes.json; a failing claim without one says so),
    and how far ours is from the paper's value when it is off by 2x or
    more, for a claim that holds as much as for one that fails."""
    parts = []
    if c.get("note"):
        parts.append(c["note"])
    if verdict_note:
        parts.append(verdict_note)
    elif r["status"] == FAILS:
        parts.append("No reason recorded yet.")
    if res is not None and res > 0 and (res >= 2 or res <= 0.5):
        parts.append(f"Ours is {fmt_num(res)}× the paper's value "
                     f"({fmt_num(r['ours'])} against {fmt_num(c['paper_value'])}).")
    return " ".join(p.strip() for p in parts)


def method_text(c, cfgs):
    m = dict(cfgs.get(c["experiment"], {}).get("paper_method", {})) if c["experiment"] else {}
    m.update(c.get("method", {}))
    order = ("data", "page_size", "buffer", "io", "time")
    parts = [f"{k.replace('_', ' ')}: {m[k]}" for k in order if m.get(k)]
    return "; ".join(parts) or "—"


def counts_of(results):
    """The summary counts of a list of results (one set: held out or calibration)."""
    dec = [r for r in results if r["status"] in DECIDED]
    num = [r for r in dec if r["claim"].get("magnitude")]
    dir_only = [r for r in dec if not r["claim"].get("magnitude")]
    return {
        "claims": len(results), "decided": len(dec),
        "number": len(num),
        "number_direction": sum(1 for r in num if r["direction"]),
        "number_magnitude": sum(1 for r in num if r["magnitude"]),
        "number_both": sum(1 for r in num if r["direction"] and r["magnitude"]),
        "direction_only": len(dir_only),
        "direction_only_holds": sum(1 for r in dir_only if r["direction"]),
    }


def count_sentence(name, k):
    if not k["claims"]:
        return f"{name}: none"
    if not k["decided"]:
        return f"{name}: {k['claims']} claims, none decided yet"
    return (f"{name}: {k['decided']} of {k['claims']} claims decided; with a paper number "
            f"({k['number']}): direction holds in {k['number_direction']}, magnitude in "
            f"{k['number_magnitude']}, both in {k['number_both']}; direction only "
            f"({k['direction_only']}): {k['direction_only_holds']} hold")


def experiment_configs(root, meta):
    out = {}
    for path, _ in meta["experiments"]:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            out[path] = json.load(f)
    return out


def ours_method(cfg, scale):
    """Our data, devices and settings at the scale, in one line."""
    form = cfg.get("scales", {}).get(scale, {})
    data = dict(cfg.get("data", {}))
    data.update(form.get("data", {}))
    devices = form.get("devices", cfg.get("devices", []))
    settings = cfg.get("settings", {})
    dev = ", ".join(f"{d['name']} ({d.get('profile', 'no profile')}, {d.get('kind', 'file')}"
                    + (f", {d['io']} I/O" if d.get("kind", "file") == "file" else "") + ")"
                    for d in devices)
    sem = ", ".join(f"{k.replace('festival.', '')}={v}" for k, v in settings.items())
    return (f"{data.get('distribution')} {data.get('points', 0):,} points/objects, seed "
            f"{data.get('seed')}; devices {dev}; settings {sem}")


def write(outdir, results, meta, replay):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.makedirs(outdir, exist_ok=True)
    scale = meta["scale"]
    cfgs = experiment_configs(root, meta)
    held = [r for r in results if r["set"] == "held out"]
    cal = [r for r in results if r["set"] == "calibration"]
    kh, kc = counts_of(held), counts_of(cal)
    by_status = {}
    for r in results:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    partial = meta["cells_done"] < meta["cells"]
    summary = (count_sentence("held out", kh) + "; " + count_sentence("calibration", kc))
    others = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()) if s not in DECIDED)
    cmd = "scripts/reproduce" + "".join(f" '{p}'" for p in meta["patterns"]) \
        + f" --scale {scale}" + ("" if meta["time"] == "modelled" else f" --time {meta['time']}")
    title = f"Reproducing the papers' claims (scale {scale}{', PARTIAL' if partial else ''})"
    head = [f"# {title}", "",
            f"Generated {meta['started']} by `{cmd}`"
            + (" from the runs already stored (`--reuse`)." if meta["reused"]
               else f" (this invocation took {int(meta['elapsed']) // 60} min {int(meta['elapsed']) % 60} s "
                    "for its runs, claims and charts; installing festival and starting a "
                    "server not counted).")
            + f" Cells finished: {meta['cells_done']} of {meta['cells']}, "
            f"{meta['cell_wall'] / 3600:.2f} h of wall time in all."
            + (f" **Partial:** the claims whose cells are missing are \"not run yet\"; "
               f"`{cmd}` finishes them (it skips the finished cells)." if partial else ""),
            "",
            f"**{count_sentence('Held out', kh)}.**", "",
            f"{count_sentence('Calibration', kc)} (the claims the drive model's fitted "
            "parameters were fitted to, experiments/calibration.json; not evidence)."
            + (f" Not decided: {others}." if others else ""), "",
            "How a claim is decided (scripts/lib/claims.py, docs/experiments.md): *direction* — "
            "ours satisfies the claim's condition (e.g. a gain > 0); *magnitude* — for a claim "
            "whose paper states a number, ours lies within a factor of "
            f"{registry.MAGNITUDE_FACTOR:g} of the paper's range on the paper's quantity, "
            "measured as the excess t_slow / t_fast − 1 (a factor of 2 on a small gain, on the "
            "remaining time for a gain near 100 %; the *band* column). One rule for every "
            "claim, written before the runs. A claim holds when both hold; a claim without a "
            "paper number is decided in direction only and counted apart. "
            + TIME_WORDS[meta["time"]] + " on the shipped device profiles (docs/devices.md). "
            "Gains are the papers' `(baseline − candidate) / baseline × 100`. A real-data "
            "figure decided on our synthetic stand-in says so.", ""]
    for text in meta.get("machines", []):   # scripts/lib/machines.py
        head += [text, ""]
    cols = ["claim", "paper, where", "set", "paper's value", "band", "ours", "residual",
            "direction", "magnitude", "verdict", "paper's method", "note"]
    rows = []
    notes = meta["notes"]
    for r in results:
        c = r["claim"]
        verdict = r["status"]
        if r["why"] and r["status"] not in DECIDED:
            verdict += f": {r['why']}"
        if c["paper_data"].startswith("real") and r["status"] in DECIDED:
            verdict += " (real-data figure, decided on synthetic data)"
        if r["frozen"] != "frozen":
            verdict += f" [rule {r['frozen']}]"
        res = residual(c, r["ours"])
        note = claim_note(c, r, notes.get(c["id"]), res)
        rows.append([f"{c['claim']} (`{c['id']}`)", f"{c['paper']}, {c['where']}", r["set"],
                     paper_range(c), band_text(c), fmt_num(r["ours"]),
                     fmt_num(res) if res is not None else "—",
                     yes_no(r["direction"]), yes_no(r["magnitude"], "direction only"
                                                    if r["direction"] is not None else "—"),
                     verdict, method_text(c, cfgs), note])
    md = head + ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in rows:
        md.append("| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ")
                                     for x in row) + " |")
    md += ["", "## Experiments: the papers' method and ours", "",
           "| experiment | complete | the paper's method | ours at this scale | report |",
           "|---|---|---|---|---|"]
    for path, name in meta["experiments"]:
        cfg = cfgs[path]
        pm = cfg.get("paper_method", {})
        pmt = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in pm.items()) or "—"
        link = f"[report]({name}/report.md)" if meta["complete"].get(path) else "—"
        md.append(f"| `{path}` (`exp={name}`) | {'yes' if meta['complete'].get(path) else 'no'}"
                  f" | {pmt} | {ours_method(cfg, scale)} | {link} |")
    md += ["", "## Drive-model parameters and their sources", "",
           "Every parameter of the shipped drives' model with its source "
           "(experiments/calibration.json; docs/devices.md). *fitted*: chosen so that a "
           "claim of the calibration set holds; *assumed*: no source (a typical value), "
           "named as such. A parameter fitted to a held-out claim is refused by "
           "scripts/reproduce.", "",
           "| profile | parameter | value | kind | source | fitted to |", "|---|---|---|---|---|---|"]
    kinds = {}
    for p in meta["calibration"].get("parameters", []):
        kinds[p["kind"]] = kinds.get(p["kind"], 0) + 1
        md.append(f"| `{p['profile']}` | {p['parameter']} | {p.get('value', '')} | {p['kind']} | "
                  f"{p['source']} | {', '.join(p.get('fitted_to', [])) or '—'} |")
    md += ["", "Parameters by kind: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
           + ".", ""]
    md += ["## Calibration set", "", "Claims decided with parameters fitted to them "
           "(counted apart from the held-out claims): "
           + ", ".join(f"`{i}`" for i in meta["calibration"]["calibration_claims"]) + ".", ""]
    if replay:
        points, src, live, rrows = replay
        md += ["## One workload on every shipped drive (festival.replay)", "",
               f"The quadratic R-tree (4 KB pages) built one insert at a time over {points:,} "
               "clustered points (one commit per row, every node access on the drive), "
               f"traced once on `hdd_wd_7200` (run {src}, {live:.3f} device s), "
               "then re-costed with `festival.replay(run_id, profile)` on every shipped profile "
               "without running the workload again (`_v1`: device model 1).", "",
               "| profile | kind | model | device s | modelled elapsed s | erases | write amplification |",
               "|---|---|---|---|---|---|---|"]
        for name, kind, mv, dev, el, er, wa in (r[:7] for r in rrows):
            md.append(f"| `{name}` | {kind} | {mv} | {dev:.3f} | "
                      f"{'—' if el is None else f'{el:.3f}'} | {er} | "
                      f"{'' if wa is None else f'{wa:.3f}'} |")
        md.append("")
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    write_html(outdir, title, head, cols, rows, results)
    return summary, by_status


def write_html(outdir, title, head, cols, rows, results):
    h = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
         f"<title>{html.escape(title)}</title>",
         "<style>body{font-family:sans-serif;max-width:110em}table{border-collapse:collapse}"
         "td,th{border:1px solid #aaa;padding:3px 6px;vertical-align:top;font-size:90%}"
         ".holds{background:#dfd}.fails{background:#fdd}.other{background:#eee}</style>"
         "</head><body>", f"<h1>{html.escape(title)}</h1>"]
    for line in head[2:]:
        if line:
            h.append(f"<p>{html.escape(line.replace('**', '').replace('`', ''))}</p>")
    h.append("<table><tr>" + "".join(f"<th>{html.escape(x)}</th>" for x in cols) + "</tr>")
    for r, row in zip(results, rows):
        cls = "holds" if r["status"] == HOLDS else "fails" if r["status"] == FAILS else "other"
        h.append(f"<tr class='{cls}'>" + "".join(
            f"<td>{html.escape(str(x)).replace('`', '')}</td>" for x in row) + "</tr>")
    h.append("</table><p>The experiments, the drive-model parameters and the replay are in "
             "report.md.</p></body></html>")
    with open(os.path.join(outdir, "report.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(h) + "\n")


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
    # its modelled elapsed time needs the index CPU time of every operation;
    # the papers' semantics (docs/experiments.md): one commit per inserted
    # row and every node access on the drive, so that the trace holds the
    # build's reads and writes, not one batch written at its end
    conn.execute("SET festival.track_cpu_time = on")
    conn.execute("SET festival.build_commit_rows = 1")
    conn.execute("SET festival.write_through_per_access = on")
    conn.execute("SELECT festival.begin_run(%s, trace => true)", (label,))
    conn.execute("SELECT festival.create_index('rp_replay_ix', 'rtree', 'rp_replay', "
                 "'{\"page_size\": 4096, \"split\": \"quadratic\", \"min_fill\": 50}'::jsonb, "
                 "'rp_replay_points'::regclass)")
    conn.execute("SELECT festival.build('rp_replay_ix')")
    conn.execute("SELECT festival.flush('rp_replay_ix')")
    src = conn.execute("SELECT festival.end_run()").fetchone()[0]
    conn.execute("SELECT festival.drop_index('rp_replay_ix')")
    conn.execute("RESET festival.build_commit_rows")
    conn.execute("RESET festival.write_through_per_access")
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
