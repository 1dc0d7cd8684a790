"""Which machines made a set of runs, and which figures compare across machines.

A run that a worker of scripts/lib/distributed.py stored carries
config -> 'worker' (host, CPU model, PostgreSQL and festival versions); a
run made on the result server itself carries none.  scripts/report and
scripts/reproduce put note() in their reports: virtual device time and
the counters are the same on every machine (festival's device model is
deterministic), the wall, CPU and I/O seconds and the modelled elapsed time
(it adds the index CPU seconds) are not, and a report over runs of more
than one machine says so and names them, rather than mixing their wall
times silently.
"""

INDEPENDENT = ("virtual device time (device s), pages read and written, read and write "
               "submissions, erases, write amplification, nodes visited and splits")
DEPENDENT = ("wall, CPU, index, refine and I/O seconds, and the modelled elapsed time (it adds "
             "the index CPU seconds)")


def machines(conn, run_ids):
    """[(machine, server versions, runs)] of the runs, most runs first; machine is
    'host (CPU model)', or None for runs made on the result server itself."""
    rows = conn.execute(
        "SELECT config->'worker'->>'host', config->'worker'->>'cpu_model', "
        "string_agg(DISTINCT 'PostgreSQL ' || (config->'worker'->>'postgresql') || ', festival ' "
        "|| coalesce(config->'worker'->>'festival', '?'), '; '), count(*) "
        "FROM festival.run WHERE run_id = ANY(%s) GROUP BY 1, 2 ORDER BY 4 DESC, 1",
        (list(run_ids),)).fetchall()
    return [((f"{h} ({cpu or 'CPU not recorded'})" if h is not None else None), v, n)
            for h, cpu, v, n in rows]


def note(conn, run_ids):
    """Paragraphs (plain text) for a report over the runs."""
    ms = machines(conn, run_ids)
    text = [f"Machine-independent: {INDEPENDENT}. Machine-dependent: {DEPENDENT}."]
    if len(ms) > 1:
        names = "; ".join(f"{m or 'the result server itself (machine not recorded)'}"
                          f"{' — ' + v if v else ''}: {n} runs" for m, v, n in ms)
        text.append(f"These runs come from {len(ms)} machines ({names}). Compare their "
                    "machine-independent figures; their wall, CPU and I/O times are each "
                    "machine's own and are not comparable across machines (the medians below "
                    "mix them where one configuration ran on several).")
    elif ms and ms[0][0] is not None:
        text.append(f"Every run comes from one machine: {ms[0][0]} — {ms[0][1]}.")
    return text
