#!/usr/bin/python3
"""The Python part of scripts/campaign-flips and scripts/campaign-crash.

Talks to the server only through psql (the PG* environment variables name
it), so it needs nothing beyond the Python standard library.  The server
must be local: the crash trials kill a backend with SIGKILL and the flip
trials change index files in the data directory.

flips  Indices of several structures x frameworks, closed cleanly or
       crashed (kill -9 of the session that made acknowledged inserts),
       get one byte flipped: in a meta page, a data page, or the redo log
       (<file>.log).  A new session then queries and checks; each trial is
         correct      every answer equals brute force over the acknowledged
                      rows, and check() is clean or reports the damage;
         clean error  an ERROR with a SQLSTATE, the backend alive, the
                      error names the index or check() reports damage, and
                      no wrong answer before it;
         failure      anything else: a backend crash, a wrong answer
                      without an error, check() silent about a damaged page.
crash  A stream of acknowledged inserts and deletes is killed (kill -9) at a
       random point; every acknowledged change must then be in the index
       (brute force over the source table, which is transactional), the
       index may differ from it only by the statement the kill interrupted,
       and after reconciling that one check() finds no error.

Trials are chosen by a seeded generator: the same --seed and counts give
the same trials.  Prints one table row per kind of trial and a total, and
exits 1 if any trial failed.
"""

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

STRUCTURES = ["rtree", "rstartree", "hilbert", "xbrtree"]
FRAMEWORKS = ["none", "fast", "efind"]
PAGE = 1024
WHOLE = "ST_MakeEnvelope(-10, -10, 2000, 2000)"
CHECK = ("SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; '), '') "
         "FROM festival.check('%s')")
SCHEMA = """
SET client_min_messages = warning;
CREATE FUNCTION pt(i bigint) RETURNS geometry LANGUAGE sql IMMUTABLE
    AS $$ SELECT ST_MakePoint((i * 7919) % 1000 + (i % 10) / 10.0, (i * 104729) % 997 + (i % 7) / 7.0) $$;
CREATE FUNCTION mismatches(ix text, tbl regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    w geometry;
    d bigint;
    n bigint := 0;
BEGIN
    FOR k IN 0..7 LOOP
        w := ST_MakeEnvelope((k * 61) % 880, (k * 37) % 850, (k * 61) % 880 + 120, (k * 37) % 850 + 150);
        EXECUTE format('SELECT count(*) FROM ((SELECT id FROM festival.query(%L, $1) EXCEPT ALL '
                       'SELECT id FROM %s WHERE ST_Intersects(geom, $1)) UNION ALL '
                       '(SELECT id FROM %s WHERE ST_Intersects(geom, $1) EXCEPT ALL '
                       'SELECT id FROM festival.query(%L, $1))) d', ix, tbl, tbl, ix)
            INTO d USING w;
        n := n + d;
    END LOOP;
    RETURN n;
END
$$;
SELECT festival.create_device('campaign', io => 'buffered');
"""


class Psql:
    """Results of one psql run: exit status, lines of output and messages."""

    def __init__(self, sql, db):
        p = subprocess.run(["psql", "-X", "-qAt", "-v", "ON_ERROR_STOP=1",
                            "-v", "VERBOSITY=verbose", "-d", db],
                           input=sql, capture_output=True, text=True)
        self.rc = p.returncode
        self.out = p.stdout.splitlines()
        self.err = p.stderr
        m = re.search(r"^(?:psql:[^\n]*?)?ERROR:  ([0-9A-Z]{5}): (.*)$", self.err, re.M)
        self.sqlstate = m.group(1) if m else None
        self.error = m.group(2) if m else None
        self.lost = ("server closed the connection" in self.err or
                     "connection to server was lost" in self.err or
                     "terminating connection because of crash" in self.err or
                     (self.rc == 2 and m is None))

    def value(self, key):
        for line in self.out:
            if line.startswith(key + "="):
                return line[len(key) + 1:]
        return None


def run(sql, db):
    return Psql(sql, db)


def must(sql, db):
    r = run(sql, db)
    if r.rc != 0:
        sys.exit("campaign: set-up statement failed:\n%s\n%s" % (sql, r.err))
    return r


def wait_for_server():
    for _ in range(240):
        if subprocess.run(["psql", "-X", "-qAt", "-d", "postgres", "-c", "SELECT 1"],
                          capture_output=True).returncode == 0:
            return
        time.sleep(0.25)
    sys.exit("campaign: the server did not come back")


def fresh_database(db):
    must("DROP DATABASE IF EXISTS %s;\nCREATE DATABASE %s;" % (db, db), "postgres")
    must("SET client_min_messages = warning;\nCREATE EXTENSION festival CASCADE;\n" + SCHEMA, db)


def drop_database(db):
    r = run("SELECT name FROM festival.index", db)
    for name in r.out:
        run("SELECT festival.drop_index('%s')" % name, db)
    run("DROP DATABASE IF EXISTS %s" % db, "postgres")


def index_file(db, ix):
    r = must("SELECT current_setting('data_directory') || '/festival/' || d.directory || '/' || i.file_name "
             "FROM festival.index i JOIN festival.device d ON d.name = i.device WHERE i.name = '%s'" % ix, db)
    return r.out[0]


def make_index(db, ix, structure, options, rows):
    """A source table ix_src with rows 1..rows and an index over it, built
    and closed."""
    must("""SET client_min_messages = warning;
SET festival.log_sync = never;
CREATE TABLE %(ix)s_src (id bigint PRIMARY KEY, geom geometry);
INSERT INTO %(ix)s_src SELECT i, pt(i) FROM generate_series(1, %(rows)d) i;
SELECT festival.create_index('%(ix)s', '%(s)s', 'campaign', '%(o)s', '%(ix)s_src');
SELECT festival.build('%(ix)s');
SELECT festival.close('%(ix)s');
""" % {"ix": ix, "s": structure, "o": options, "rows": rows}, db)


def insert_sql(ix, i):
    return ("WITH s AS (INSERT INTO %s_src VALUES (%d, pt(%d)) RETURNING id, geom) "
            "SELECT 'ack' FROM s WHERE festival.insert('%s', id, geom);" % (ix, i, i, ix))


def delete_sql(ix, i):
    return ("WITH s AS (DELETE FROM %s_src WHERE id = %d RETURNING id, geom) "
            "SELECT 'ack' FROM s WHERE festival.delete('%s', id, geom);" % (ix, i, ix))


class Victim:
    """A psql session fed statements one at a time; each answer ends with a
    marker line, so acknowledgements are read as they come."""

    MARK = "-- end of statement --"

    def __init__(self, db):
        self.errors = tempfile.TemporaryFile(mode="w+")
        self.p = subprocess.Popen(["psql", "-X", "-qAt", "-v", "VERBOSITY=verbose", "-d", db],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.errors, text=True, bufsize=1)
        self.pid = int(self.ask("SELECT pg_backend_pid();")[0])

    def send(self, sql):
        self.p.stdin.write(sql + "\n\\echo " + self.MARK + "\n")
        self.p.stdin.flush()

    def read(self):
        lines = []
        while True:
            line = self.p.stdout.readline()
            if line == "":
                return None  # the session is gone
            line = line.rstrip("\n")
            if line == self.MARK:
                return lines
            lines.append(line)

    def ask(self, sql):
        self.send(sql)
        return self.read()

    def kill(self):
        """Kill the backend; return what the session printed after the last
        answer read (answers of statements that completed meanwhile) and
        its messages."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        self.tail = self.p.stdout.read()
        self.p.wait()
        self.errors.seek(0)
        return self.errors.read()


def flip_byte(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xFF]))


EXTRA_OPTIONS = {}


def options_json(structure, fw, rng):
    o = {"framework": fw, "page_size": PAGE}
    o.update(EXTRA_OPTIONS)
    if structure in ("xbrtree", "gridfile", "lbgrid"):
        o["extent"] = [0, 0, 1000, 1000]  # they index points inside only
    if fw != "none" and rng.random() < 0.3:
        o["buffer_size"] = 4096  # flushing units written constantly
    return str(o).replace("'", '"')


# ---------------------------------------------------------------- flips

def flip_target(rng, path, fw):
    """Where to flip: (kind, file, offset)."""
    size = os.path.getsize(path)
    log = path + ".log"
    r = rng.random()
    if fw != "none" and os.path.exists(log) and os.path.getsize(log) > 0 and r < 0.25:
        return "log", log, rng.randrange(os.path.getsize(log))
    if r < 0.55:
        slot = rng.randrange(2)
        return "meta", path, slot * PAGE + rng.randrange(PAGE)
    return "data", path, 2 * PAGE + rng.randrange(max(1, size - 2 * PAGE))


def flips(args, db):
    rng = random.Random(args.seed)
    table = {}
    failures = []
    rows = 300
    batch = 8
    n = 0
    while n < args.flips:
        # a batch of indices: the crashed ones share one victim session
        trials = []
        for _ in range(min(batch, args.flips - n)):
            n += 1
            t = {"ix": "f%d" % n, "structure": rng.choice(args.structures or STRUCTURES),
                 "fw": rng.choice(args.frameworks or FRAMEWORKS),
                 "state": rng.choice(["closed", "crashed"])}
            t["options"] = options_json(t["structure"], t["fw"], rng)
            make_index(db, t["ix"], t["structure"], t["options"], rows)
            t["acked"] = rows
            trials.append(t)
        crashed = [t for t in trials if t["state"] == "crashed"]
        if crashed:
            v = Victim(db)
            for t in crashed:
                for i in range(rows + 1, rows + 1 + rng.randrange(10, 60)):
                    if v.ask(insert_sql(t["ix"], i)) == ["ack"]:
                        t["acked"] += 1
            errors = v.kill()
            wait_for_server()
            if re.search(r"^(psql:.*)?ERROR", errors, re.M):
                failures.append("an insert before any damage failed: " + errors[:500])
        for t in trials:
            path = index_file(db, t["ix"])
            t["where"], f, off = flip_target(rng, path, t["fw"])
            flip_byte(f, off)
            t["file"], t["offset"] = f, off
            with open(f, "rb") as fh:
                fh.seek(off // PAGE * PAGE)
                t["damaged"] = fh.read(PAGE)
            t["detail"] = "%s+%d" % (os.path.basename(f), off)
            verdict, why = judge_flip(db, t)
            kind = "%s %s %s" % (t["fw"], t["state"], t["where"])
            row = table.setdefault(kind, {"trials": 0, "correct": 0, "clean error": 0, "failure": 0})
            row["trials"] += 1
            row[verdict] += 1
            if verdict == "failure":
                failures.append("%s (%s %s, %s): %s" % (t["ix"], t["structure"], kind, t["detail"], why))
            if args.verbose:
                print("%s %s %s %s: %s %s" % (t["ix"], t["structure"], kind, t["detail"], verdict, why))
    return table, failures


def superseded(db, t):
    """check() was silent about a flipped data page.  Right only if the
    page's image on the device is dead: a buffering store holds the whole
    node (a new or rewritten one) and never reads the stored image; its
    next flush (or the end of the session that replayed the log) then
    overwrites the page.  So flush: the damaged image must be gone, and
    answers and check stay right."""
    f, off = t["file"], t["offset"]
    page = off // PAGE * PAGE
    r = run("SELECT festival.flush('%(ix)s');\n%(check)s;\n"
            "SELECT 'mismatches=' || mismatches('%(ix)s', '%(ix)s_src');"
            % {"ix": t["ix"], "check": CHECK % t["ix"]}, db)
    if r.lost:
        wait_for_server()
        return "failure", "check() was silent, the flush crashed the backend"
    with open(f, "rb") as fh:
        fh.seek(page)
        after = fh.read(PAGE)
    if r.sqlstate is not None or r.value("check") != "" or r.value("mismatches") != "0":
        return "failure", "check() was silent, the flush then found: %s %s" % (r.err[:200], " ".join(r.out))
    if t["damaged"] == after:
        return "failure", "check() is silent about a damaged page that stays on the device"
    return "correct", "a dead page image, overwritten by the flush"


def judge_flip(db, t):
    ix = t["ix"]
    q = run("""SELECT 'rows=' || count(*) FROM festival.query('%(ix)s', %(w)s);
SELECT 'missing=' || count(*) FROM %(ix)s_src s WHERE NOT EXISTS
    (SELECT FROM festival.query('%(ix)s', %(w)s) g WHERE g.id = s.id);
SELECT 'extra=' || count(*) FROM (SELECT id FROM festival.query('%(ix)s', %(w)s)
    EXCEPT SELECT id FROM %(ix)s_src) e;
SELECT 'mismatches=' || mismatches('%(ix)s', '%(ix)s_src');
%(check)s;
""" % {"ix": ix, "w": WHOLE, "check": CHECK % ix}, db)
    if q.lost:
        wait_for_server()
        return "failure", "backend crashed: " + q.err.strip()[-300:]
    source = run("SELECT count(*) FROM %s_src" % ix, db)
    if source.out != [str(t["acked"])]:
        return "failure", "the source table holds %s rows, %d acknowledged" % (source.out, t["acked"])
    wrong = None
    if q.sqlstate is None:
        if (q.value("rows") != str(t["acked"]) or q.value("missing") != "0" or
                q.value("extra") != "0" or q.value("mismatches") != "0"):
            wrong = "wrong answer without an error: %s" % " ".join(q.out)
    # the check runs in the session of the queries: its end may already
    # repair a damaged meta copy (the next meta write rewrites it)
    c = q if q.sqlstate is None else run(CHECK % ix, db)
    if c.lost:
        wait_for_server()
        return "failure", "check() crashed the backend"
    reported = c.sqlstate is not None or (c.value("check") or "") != ""
    if wrong:
        return "failure", wrong
    if q.sqlstate is not None:
        if ix in (q.error or "") or reported:
            return "clean error", "%s %s" % (q.sqlstate, q.error)
        return "failure", "error that names no index, check() silent: %s %s" % (q.sqlstate, q.error)
    # a correct answer: every page of the file is reached, free or leaked,
    # so a damaged meta or data page must be reported (a log flip may hit
    # bytes that no longer matter once replayed or emptied)
    if t["where"] != "log" and not reported:
        return superseded(db, t)
    return "correct", (c.value("check") or c.error or "")[:200]


# ---------------------------------------------------------------- crash

def crash(args, db):
    rng = random.Random(args.seed + 1)
    table = {}
    failures = []
    rows = 300
    for n in range(1, args.kills + 1):
        ix = "k%d" % n
        structure = rng.choice(args.structures or ["rtree", "rstartree", "xbrtree"])
        fws = args.frameworks or FRAMEWORKS
        fw = fws[(n - 1) % len(fws)]
        options = options_json(structure, fw, rng)
        if fw != "none" and rng.random() < 0.3:
            options = options[:-1] + ', "log_size": 16384}'
        make_index(db, ix, structure, options, rows)
        present = set(range(1, rows + 1))
        next_id = rows + 1
        v = Victim(db)
        kill_after = rng.randrange(5, 120)
        ops = []
        for _ in range(kill_after + 40):
            if present and rng.random() < 0.3:
                i = rng.choice(sorted(present))
                ops.append(("delete", i))
            else:
                ops.append(("insert", next_id))
                next_id += 1
        # every statement is sent ahead; the backend is killed once
        # kill_after of them are acknowledged, while it runs the next
        for op, i in ops:
            v.send(insert_sql(ix, i) if op == "insert" else delete_sql(ix, i))
        answers = []
        for _ in range(kill_after):
            ans = v.read()
            if ans is None:
                break
            answers.append(ans)
        v.kill()
        wait_for_server()
        # statements that completed between the last answer read and the
        # kill: their answers are in the session's last output
        parts = v.tail.split(Victim.MARK + "\n")
        answers += [p.splitlines() for p in parts[:-1]]
        acked = len(answers)
        for (op, i), ans in zip(ops, answers):
            if ans == ["ack"]:
                (present.add if op == "insert" else present.discard)(i)
        inflight = ops[acked] if acked < len(ops) else None
        verdict, why = judge_crash(db, ix, fw, present, inflight)
        kind = "%s kill" % fw
        row = table.setdefault(kind, {"trials": 0, "correct": 0, "clean error": 0, "failure": 0})
        row["trials"] += 1
        row[verdict] += 1
        if verdict == "failure":
            failures.append("%s (%s %s %s): %s" % (ix, structure, options, inflight, why))
        if args.verbose:
            print("%s %s %s after %d: %s %s" % (ix, structure, options, acked, verdict, why))
    return table, failures


def judge_crash(db, ix, fw, present, inflight):
    got = run("SELECT id FROM festival.query('%s', %s)" % (ix, WHOLE), db)
    if got.lost:
        wait_for_server()
        return "failure", "backend crashed: " + got.err.strip()[-300:]
    if got.sqlstate is not None:
        return "failure", "error after a crash: %s %s" % (got.sqlstate, got.error)
    ids = [int(x) for x in got.out if x.isdigit()]
    src = set(int(x) for x in run("SELECT id FROM %s_src" % ix, db).out)
    if len(ids) != len(set(ids)):
        return "failure", "an object is in the index twice"
    index = set(ids)
    # the source table holds the acknowledged rows and possibly the
    # statement whose commit the kill did not interrupt
    allowed = {inflight[1]} if inflight else set()
    if (src ^ present) - allowed:
        return "failure", "source table differs from the acknowledged rows"
    if (index ^ present) - allowed:
        lost = sorted(present - index - allowed)[:10]
        extra = sorted(index - present - allowed)[:10]
        return "failure", "acknowledged rows missing from the index: %s; unacknowledged or deleted rows in it: %s" % (lost, extra)
    if "WARNING" in got.err and fw != "none":
        return "failure", "a log-backed index warned: " + got.err.strip()[:200]
    # reconcile the interrupted statement, then the check must be clean
    fix = ""
    if inflight:
        i = inflight[1]
        if i in index and i not in src:
            fix = "SELECT festival.delete('%s', %d, pt(%d));" % (ix, i, i)
        elif i in src and i not in index:
            fix = "SELECT festival.insert('%s', %d, pt(%d));" % (ix, i, i)
    c = run(fix + "\nSELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; ') "
            "FILTER (WHERE severity = 'error' OR %s), '') FROM festival.check('%s');"
            % ("true" if fw != "none" else "false", ix), db)
    if c.lost or c.sqlstate is not None:
        return "failure", "reconcile or check failed: %s" % c.err.strip()[:200]
    if c.value("check") != "":
        return "failure", "check(): " + c.value("check")[:300]
    m = run("SELECT 'mismatches=' || mismatches('%s', '%s_src')" % (ix, ix), db)
    if m.value("mismatches") != "0":
        return "failure", "windows differ from brute force: " + " ".join(m.out) + m.err
    return "correct", ""


# ---------------------------------------------------------------- main

def print_table(title, table):
    cols = ["trials", "correct", "clean error", "failure"]
    total = {c: sum(r[c] for r in table.values()) for c in cols}
    width = max([len(k) for k in table] + [len("total"), len(title)])
    print("%-*s | %6s | %7s | %11s | %7s" % ((width, title) + tuple(cols)))
    print("-" * width + "-+--------+---------+-------------+--------")
    for k in sorted(table):
        print("%-*s | %6d | %7d | %11d | %7d" % ((width, k) + tuple(table[k][c] for c in cols)))
    print("%-*s | %6d | %7d | %11d | %7d" % ((width, "total") + tuple(total[c] for c in cols)))
    return total["failure"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["flips", "crash"])
    ap.add_argument("--trials", type=int, default=None, help="number of trials")
    ap.add_argument("--long", action="store_true", help="hundreds of trials")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true", help="one line per trial")
    ap.add_argument("--keep", action="store_true", help="keep the database and indices")
    ap.add_argument("--structures", type=lambda v: v.split(","), default=None,
                    help="comma-separated structures to draw from instead of the standing mix")
    ap.add_argument("--frameworks", type=lambda v: v.split(","), default=None,
                    help="crash, flips: comma-separated frameworks to draw from instead of none, fast, efind")
    ap.add_argument("--options", type=json.loads, default={},
                    help="index options (a JSON object) added to every index, e.g. a cache")
    args = ap.parse_args()
    EXTRA_OPTIONS.update(args.options)
    if args.trials is not None and args.trials < 1:
        ap.error("--trials must be at least 1")
    if args.mode == "flips":
        args.flips = args.trials or (300 if args.long else 50)
    else:
        args.kills = args.trials or (60 if args.long else 10)
    db = "festival_campaign_" + args.mode
    if subprocess.run(["psql", "-X", "-qAt", "-d", "postgres", "-c",
                       "SELECT inet_server_addr() IS NULL"], capture_output=True,
                      text=True).stdout.strip() != "t":
        sys.exit("campaign: needs a server on a local Unix socket (it kills backends and changes files)")
    fresh_database(db)
    start = time.time()
    table, failures = (flips if args.mode == "flips" else crash)(args, db)
    if not args.keep:
        drop_database(db)
    print("# %s campaign, seed %d, %.0f s" % (args.mode, args.seed, time.time() - start))
    nfail = print_table(args.mode, table)
    for f in failures:
        print("FAILURE " + f)
    sys.exit(1 if nfail or failures else 0)


if __name__ == "__main__":
    main()
