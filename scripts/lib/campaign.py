#!/usr/bin/python3
"""The Python part of scripts/campaign-flips, scripts/campaign-crash and
scripts/campaign-faults (its configuration matrix).

Talks to the server only through psql (the PG* environment variables name
it), so it needs nothing beyond the Python standard library.  The server
must be local: the crash trials kill a backend with SIGKILL and the flip
trials change index files in the data directory.

The matrix.  Every trial runs on one configuration: a structure (rtree,
rstartree, hilbert, xbrtree, gridfile, lbgrid, agrid, fortree), a framework (none,
fast, efind, fortree: the FOR-tree's write buffer), a page cache (none,
lru, hlru, s2q, 2q, clru; 16 or 64 pages of 1 kB) and a tier placement (none: one device; single, all_fast, level,
hot, level_hot, random: with the second device "campaign_fast" as
fast_device; hot+capacity: hot with a fast tier of 3 or 8 pages;
hot+buffers: hot with write buffers of 1 or 2 pages; hot+shared: hot
without write buffers, write_buffers shared_cache; hot+cooling: hot with
cool_after 4 or 16; hot+auto: hot with hot_selectivity_tuning auto over a
fast tier of 3 or 8 pages) and the index's device engine (sync: the device
"campaign", a pread per page; mmap: "campaign_mmap", reads copied out of a
mapping of the file; both buffered).  A
seeded generator deals each dimension's values from a deck shuffled anew
whenever it runs out, so every value of every dimension comes once in as
many trials as that dimension has values: 12 trials cover every cache,
framework, placement and structure.  A combination create_index refuses
by design (LB-Grid under a framework other than none: docs/frameworks.md) is dealt
another structure; each such refusal is checked once per run and listed.
A combination create_index refuses otherwise (an invalid value, an
unsupported feature, or 54000: options too many for the meta page of a
1 kB index, e.g. a grid file under eFIND with a CLRU cache and write
buffers) is skipped and listed, not counted.

flips  Indices closed cleanly or crashed (kill -9 of the session that made
       acknowledged inserts) get one byte flipped: in a meta page, a data
       page (on the tier the page -> tier map names), the redo log
       (<file>.log), the tier map or the hot-page weights.  A new session
       then queries and checks; each trial is
         correct      every answer equals brute force over the acknowledged
                      rows, and check() is clean or reports the damage;
         clean error  an ERROR with a SQLSTATE, the backend alive, the
                      error names the index or check() reports damage, and
                      no wrong answer before it;
         failure      anything else: a backend crash, a wrong answer
                      without an error, check() silent about a damaged page.
crash  Streams of acknowledged inserts and deletes into a few indices at
       once (one session, the statements dealt among the indices) are
       killed (kill -9) at a random point: in the middle of one index's
       statement, between the others'.  Every acknowledged change must
       then be in the index (brute force over the source table, which is
       transactional), the index may differ from it only by the statement
       the kill interrupted, it takes changes (after a clean check() where
       it opened suspect), and after reconciling that statement check()
       finds no error.  Correct, or a failure.
faults The fault layer (festival.inject_fault) fails the i-th operation of
       a target that the configuration has -- write, read, sync of the
       index's device; log_write, log_sync of a FAST/eFIND log; fast:write,
       fast:read, fast:sync of the fast tier; tier_map_write, tier_write of
       the tier map and the hot-page weights -- with ENOSPC, EIO, a torn
       write or a crash, in the middle of a stream of acknowledged inserts
       and deletes followed by flush() and close().  A trial is
         correct      the first error has the fault's SQLSTATE (53100 for
                      ENOSPC and torn, 58030 for EIO) or the backend died
                      of the crash fault, and the index, in that session
                      and the next, answers as brute force over the
                      acknowledged rows and takes changes;
         clean error  the same first error, then the index refused
                      changes (XX001 with the check/build hint) or queries
                      and was right again after check() or build(); if
                      flush() and close() both succeeded, the next session
                      needs no repair;
         failure      anything else: a wrong SQLSTATE, a wrong answer from
                      an index that takes changes, flush() and close()
                      succeeding while acknowledged changes are lost, a
                      fault that fired without an error.
       A fault that never fired is counted apart ("unfired").
table  Combines the trials that earlier runs wrote with --json into one
       table.

--settings runs every session of a campaign with festival settings (a JSON
object, passed in PGOPTIONS), e.g. the window searches a level at a time
(festival.window_search, which is a setting, not an index option).

Each campaign prints a table per kind of trial and per configuration family
(every value of every dimension: its trials, correct, clean errors and
failures), the failing configurations and the refused ones, and exits 1 if
any trial failed.  Trials are chosen by a seeded generator: the same --seed
and counts give the same trials.
"""

import argparse
import json
import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STRUCTURES = ["rtree", "rstartree", "hilbert", "xbrtree", "gridfile", "lbgrid", "agrid", "fortree"]
FRAMEWORKS = ["none", "fast", "efind", "fortree"]
CACHES = ["none", "lru", "hlru", "s2q", "2q", "clru"]
PLACEMENTS = ["none", "single", "all_fast", "level", "hot", "level_hot", "random", "hot+capacity",
              "hot+buffers", "hot+shared", "hot+cooling", "hot+auto"]
# the placement a row names; hot+... are hot with an option of their own
PLACEMENT_OF = {"hot+capacity": "hot", "hot+buffers": "hot", "hot+shared": "hot",
                "hot+cooling": "hot", "hot+auto": "hot"}
ENGINES = ["sync", "mmap"]
# the index's device per engine (the fast tier stays on campaign_fast, sync)
ENGINE_DEVICE = {"sync": "campaign", "mmap": "campaign_mmap"}
DIMENSIONS = ["cache", "framework", "placement", "structure", "engine"]
EXTENT_STRUCTURES = ("hilbert", "xbrtree", "gridfile", "lbgrid", "agrid")
PAGE = 1024
WHOLE = "ST_MakeEnvelope(-10, -10, 2000, 2000)"
CHECK = ("SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; '), '') "
         "FROM festival.check('%s')")
VERDICTS = ["correct", "clean error", "failure"]
# points, windows and comparator are the crash tests' (test/shell/lib/
# crash.bash): fixture.scatter_point, fixture.scatter_windows (16 windows
# and the whole area) and fixture.window_wrong of sql/fixture_helpers.sql,
# loaded first
SCHEMA = r"""
SET client_min_messages = warning;
CREATE FUNCTION pt(i bigint) RETURNS geometry LANGUAGE sql IMMUTABLE
    AS $$ SELECT fixture.scatter_point(i) $$;
CREATE TABLE campaign_windows AS SELECT * FROM fixture.scatter_windows();
-- windows whose answer through ix differs from brute force over tbl
CREATE FUNCTION mismatches(ix text, tbl regclass) RETURNS bigint LANGUAGE sql
    AS $$ SELECT fixture.window_wrong(ix, 'campaign_windows', tbl) $$;
-- one change to index ix and its source table in one subtransaction, so
-- the table holds exactly the acknowledged changes: 'ok', 'false' (the
-- index returned false: a delete that found nothing), 'kept|...' (an
-- error whose detail says the change was logged and is kept: the table
-- takes it too) or 'err|SQLSTATE|message|hint'
CREATE FUNCTION cf_change(ix text, op text, i bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r boolean;
    st text;
    msg text;
    detail text;
    hint text;
BEGIN
    BEGIN
        IF op = 'insert' THEN
            EXECUTE format('INSERT INTO %I VALUES ($1, pt($1))', ix || '_src') USING i;
            r := festival.insert(ix, i, pt(i));
        ELSE
            EXECUTE format('DELETE FROM %I WHERE id = $1', ix || '_src') USING i;
            r := festival.delete(ix, i, pt(i));
        END IF;
    EXCEPTION WHEN others THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                                detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
        IF detail LIKE '%is kept%' THEN
            IF op = 'insert' THEN
                EXECUTE format('INSERT INTO %I VALUES ($1, pt($1))', ix || '_src') USING i;
            ELSE
                EXECUTE format('DELETE FROM %I WHERE id = $1', ix || '_src') USING i;
            END IF;
            RETURN 'kept|' || st || '|' || msg;
        END IF;
        RETURN 'err|' || st || '|' || msg || '|' || coalesce(hint, '');
    END;
    RETURN CASE WHEN r THEN 'ok' ELSE 'false' END;
END $$;
-- cf_change after three point searches of object i when i % 4 < 2: the
-- stream of the adaptive grid file (agrid), whose buckets switch between
-- log and in-place mode only when queries read them (change_sql)
CREATE FUNCTION cf_change_read(ix text, op text, i bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text;
    msg text;
    hint text;
BEGIN
    IF i % 4 < 2 THEN
        BEGIN
            FOR k IN 1..3 LOOP
                PERFORM count(*) FROM festival.query(ix, pt(i));
            END LOOP;
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
            RETURN 'err|' || st || '|' || msg || '|' || coalesce(hint, '');
        END;
    END IF;
    RETURN cf_change(ix, op, i);
END $$;
-- a statement's first column as text, or 'err|SQLSTATE|message|hint'
CREATE FUNCTION cf_try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v text;
    st text;
    msg text;
    hint text;
BEGIN
    EXECUTE sql INTO v;
    RETURN 'ok|' || coalesce(v, '');
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
    RETURN 'err|' || st || '|' || msg || '|' || coalesce(hint, '');
END $$;
-- the index's answers against its source table: 'ok|missing|extra|windows'
-- (fixture.extent_wrong over the whole extent, then the windows that
-- differ), or the error as cf_try gives it
CREATE FUNCTION cf_answers(ix text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    e record;
    st text;
    msg text;
BEGIN
    e := fixture.extent_wrong(ix, (ix || '_src')::regclass, ST_MakeEnvelope(-10, -10, 2000, 2000));
    RETURN 'ok|' || e.missing || '|' || e.extra || '|' || mismatches(ix, (ix || '_src')::regclass);
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    RETURN 'err|' || st || '|' || msg || '|';
END $$;
SELECT festival.create_device('campaign', io => 'buffered');
SELECT festival.create_device('campaign_fast', io => 'buffered');
SELECT festival.create_device('campaign_mmap', io => 'buffered', engine => 'mmap');
"""


class Psql:
    """Results of one psql run: exit status, lines of output and messages."""

    def __init__(self, sql, db):
        p = subprocess.run(["psql", "-X", "-qAt", "-v", "ON_ERROR_STOP=1",
                            "-v", "VERBOSITY=verbose", "-d", db],
                           input=sql, capture_output=True, text=True, env=session_env())
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


# festival settings every session of the campaign starts with (--settings),
# e.g. festival.window_search = level: the same trials over another reading
SESSION_SETTINGS = {}


def session_env():
    """The environment of a campaign session: PGOPTIONS carries
    SESSION_SETTINGS (none: the environment as it is)."""
    if not SESSION_SETTINGS:
        return None
    opts = " ".join("-c %s=%s" % (k, v) for k, v in sorted(SESSION_SETTINGS.items()))
    return dict(os.environ, PGOPTIONS=(os.environ.get("PGOPTIONS", "") + " " + opts).strip())


STARTING = re.compile(r"FATAL:  the database system is (in recovery mode|starting up|not yet accepting connections)")


def run(sql, db):
    """psql; a connection refused while the server restarts after a crash
    (the postmaster may notice the dead backend only after the session
    that saw it die has gone on) is tried again: nothing ran."""
    for _ in range(240):
        r = Psql(sql, db)
        if not (r.rc == 2 and not r.out and STARTING.search(r.err)):
            return r
        time.sleep(0.25)
    sys.exit("campaign: the server did not come back")


def must(sql, db):
    r = run(sql, db)
    if r.rc != 0:
        sys.exit("campaign: set-up statement failed:\n%s\n%s" % (sql, r.err))
    return r


# When the statistics were last reset: a crash restart resets them, so a
# new value tells that the restart a killed backend causes has happened.
LAST_RESET = [None]


def stats_reset():
    p = subprocess.run(["psql", "-X", "-qAt", "-d", "postgres", "-c",
                        "SELECT stats_reset FROM pg_stat_bgwriter"],
                       capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def wait_for_server():
    """After a backend died: wait until the server has gone through its
    crash restart and accepts connections again.  A connection can succeed
    before the postmaster has even noticed the death (then the restart
    would end it, and the next trial would read that as a crash of its
    own), so the restart is recognised by the statistics it resets; a
    server that accepts connections with unchanged statistics for 30 s had
    no restart to make."""
    unchanged = 0
    for _ in range(480):
        now = stats_reset()
        if now is not None:
            if LAST_RESET[0] is None or now != LAST_RESET[0]:
                LAST_RESET[0] = now
                return
            unchanged += 1
            if unchanged >= 120:
                return
        time.sleep(0.25)
    sys.exit("campaign: the server did not come back")


def fresh_database(db):
    must("DROP DATABASE IF EXISTS %s;\nCREATE DATABASE %s;" % (db, db), "postgres")
    must("SET client_min_messages = warning;\nCREATE EXTENSION festival CASCADE;\n"
         "\\i %s\n" % os.path.join(ROOT, "sql", "fixture_helpers.sql") + SCHEMA, db)


def drop_database(db):
    r = run("SELECT name FROM festival.index", db)
    for name in r.out:
        run("SELECT festival.drop_index('%s')" % name, db)
    run("DROP DATABASE IF EXISTS %s" % db, "postgres")


def index_files(db, ix):
    """The index file and, for a tiered index, its fast tier's file ('')."""
    r = must("SELECT current_setting('data_directory') || '/festival/' || d.directory || '/' || i.file_name, "
             "coalesce(current_setting('data_directory') || '/festival/' || f.directory || '/' || i.file_name, '') "
             "FROM festival.index i JOIN festival.device d ON d.name = i.device "
             "LEFT JOIN festival.device f ON f.name = i.options->>'fast_device' "
             "WHERE i.name = '%s'" % ix, db)
    path, fast = r.out[0].split("|")
    return path, fast or None


# ---------------------------------------------------------------- matrix

def refusal(c):
    """Why create_index refuses configuration c by design, or None."""
    if c["structure"] in ("lbgrid", "agrid") and c["framework"] != "none":
        return "LB-Grid and the adaptive grid file are log-structured themselves and accept only framework none (docs/frameworks.md)"
    return None


class Matrix:
    """Configurations dealt from one shuffled deck per dimension."""

    def __init__(self, rng, values):
        self.rng = rng
        self.values = values
        self.decks = {d: [] for d in DIMENSIONS}

    def deal(self, d):
        if not self.decks[d]:
            self.decks[d] = list(self.values[d])
            self.rng.shuffle(self.decks[d])
        return self.decks[d].pop()

    def draw(self):
        c = {d: self.deal(d) for d in DIMENSIONS}
        # a refused combination: the first structure (then framework) left
        # in its deck that works takes the place of the one dealt, which
        # goes back into the deck; failing that, any value that works
        for d in ("structure", "framework"):
            if refusal(c) is None:
                break
            for pool in (list(reversed(self.decks[d])), self.rng.sample(self.values[d], len(self.values[d]))):
                fit = [v for v in pool if refusal(dict(c, **{d: v})) is None]
                if fit:
                    if fit[0] in self.decks[d]:
                        self.decks[d].remove(fit[0])
                        self.decks[d].insert(0, c[d])
                    c[d] = fit[0]
                    break
        return c


def config_value(c, d):
    """A configuration's value of dimension d (trials recorded before the
    engine dimension ran on sync)."""
    return c.get(d, "sync") if d == "engine" else c[d]


def label(c):
    return "%s %s %s %s %s" % (c["structure"], c["framework"], c["cache"], c["placement"],
                               config_value(c, "engine"))


EXTRA_OPTIONS = {}


def options_for(c, rng):
    o = {"framework": c["framework"], "page_size": PAGE}
    if c["structure"] in EXTENT_STRUCTURES:
        o["extent"] = [0, 0, 1000, 1000]  # they index points inside only
    if c["framework"] != "none" and rng.random() < 0.3:
        o["buffer_size"] = 4096  # flushing units written constantly
    if c["cache"] != "none":
        o["cache"] = c["cache"]
        o["cache_size"] = rng.choice([16384, 65536])  # write-backs all the time
        if c["cache"] == "clru":
            o["cache_clru_pages"] = rng.choice([2, 4])
    if c["placement"] != "none":
        o["fast_device"] = "campaign_fast"
        o["placement"] = PLACEMENT_OF.get(c["placement"], c["placement"])
        if o["placement"] in ("hot", "level_hot", "random"):
            o["hot_selectivity"] = 1.0  # promotions all the time
        if c["placement"] == "hot+capacity":
            o["fast_capacity"] = rng.choice([3, 8])  # demotions all the time
        if c["placement"] == "hot+buffers":
            o["write_buffer_pages"] = rng.choice([1, 2])  # buffer flushes all the time
        if c["placement"] == "hot+shared":
            o["write_buffers"] = "shared_cache"  # promotions through the cache
        if c["placement"] == "hot+cooling":
            o["cool_after"] = rng.choice([4, 16])  # demotions at every flush
        if c["placement"] == "hot+auto":
            # s moves every 1000 accesses: up while the small tier thrashes
            o["hot_selectivity_tuning"] = "auto"
            o["fast_capacity"] = rng.choice([3, 8])
    o.update(EXTRA_OPTIONS)
    return o


class Refused(Exception):
    pass


class Trial:
    def __init__(self, ix, c, rng):
        self.ix = ix
        self.c = c
        self.options = options_for(c, rng)

    def opts(self):
        return json.dumps(self.options)


def make_index(db, t, rows):
    """A source table <ix>_src with rows 1..rows and the index over it,
    built and closed.  Raises Refused when create_index refuses the
    options."""
    c = run("""SET client_min_messages = warning;
CREATE TABLE %(ix)s_src (id bigint PRIMARY KEY, geom geometry);
INSERT INTO %(ix)s_src SELECT i, pt(i) FROM generate_series(1, %(rows)d) i;
SELECT festival.create_index('%(ix)s', '%(s)s', '%(dev)s', '%(o)s', '%(ix)s_src');
""" % {"ix": t.ix, "s": t.c["structure"], "o": t.opts(), "rows": rows,
       "dev": ENGINE_DEVICE[t.c["engine"]]}, db)
    if c.rc != 0:
        if c.sqlstate in ("22023", "0A000", "54000"):
            raise Refused("%s %s" % (c.sqlstate, c.error))
        sys.exit("campaign: creating %s (%s) failed:\n%s" % (t.ix, t.opts(), c.err))
    must("""SET client_min_messages = warning;
SET festival.log_sync = never;
SELECT festival.build('%(ix)s');
SELECT festival.close('%(ix)s');
""" % {"ix": t.ix}, db)
    t.present = set(range(1, rows + 1))
    t.path, t.fast_path = index_files(db, t.ix)
    if t.c["structure"] == "agrid":
        READ_FIRST.add(t.ix)


# the indices whose changes are preceded by point searches (cf_change_read):
# the adaptive grid files, so that their buckets switch modes in the streams
READ_FIRST = set()


def change_sql(ix, op, i, key=None):
    """The statement of one change; its answer is one line, <key>=<result>
    (cf_change), or 'ack' for an acknowledged change without a key."""
    f = "cf_change_read" if ix in READ_FIRST else "cf_change"
    if key is None:
        return "SELECT CASE WHEN r IN ('ok') OR r LIKE 'kept|%%' THEN 'ack' ELSE r END FROM %s('%s', '%s', %d) r;" % (f, ix, op, i)
    return "SELECT '%s=' || %s('%s', '%s', %d);" % (key, f, ix, op, i)


class Victim:
    """A psql session fed statements one at a time; each answer ends with a
    marker line, so acknowledgements are read as they come."""

    MARK = "-- end of statement --"

    def __init__(self, db):
        self.errors = tempfile.TemporaryFile(mode="w+")
        self.p = subprocess.Popen(["psql", "-X", "-qAt", "-v", "VERBOSITY=verbose", "-d", db],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.errors, text=True, bufsize=1, env=session_env())
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


def tiers_of_pages(path):
    """Per page, whether the tier map beside the index file names the fast
    tier (layout: src/tier/tier_map.c); None without a readable map."""
    try:
        with open(path + ".tiermap", "rb") as f:
            data = f.read()
        magic, _, _, npages, _, _ = struct.unpack_from("<IHHQII", data, 0)
    except (OSError, struct.error):
        return None
    if magic != 0x50524954:
        return None
    return [b & 1 for b in data[24:24 + npages]]


# ---------------------------------------------------------------- results

class Results:
    def __init__(self, campaign, args):
        self.campaign = campaign
        self.args = args
        self.trials = []
        self.refused = []
        self.unfired = []
        self.notes = []

    def add(self, t, kind, verdict, why, detail=""):
        rec = {"campaign": self.campaign, "ix": t.ix, "config": t.c, "options": t.options,
               "kind": kind, "verdict": verdict, "why": why, "detail": detail}
        self.trials.append(rec)
        if self.args.verbose:
            print("%s %s %s %s: %s %s" % (t.ix, label(t.c), kind, detail, verdict, why), flush=True)

    def refuse(self, t, why):
        self.refused.append("%s (%s): %s" % (label(t.c), t.opts(), why))
        if self.args.verbose:
            print("%s %s: refused: %s" % (t.ix, label(t.c), why), flush=True)


def count_rows(recs, key):
    table = {}
    for r in recs:
        row = table.setdefault(key(r), {"trials": 0, "correct": 0, "clean error": 0, "failure": 0})
        row["trials"] += 1
        row[r["verdict"]] += 1
    return table


def print_table(title, table, order=None, total=None):
    """One row per key of table (in order), then the total (by default the
    sum of the rows)."""
    cols = ["trials", "correct", "clean error", "failure"]
    total = total or {c: sum(r[c] for r in table.values()) for c in cols}
    keys = order if order is not None else sorted(table)
    width = max([len(k) for k in table] + [len("total"), len(title)])
    print("%-*s | %6s | %7s | %11s | %7s" % ((width, title) + tuple(cols)))
    print("-" * width + "-+--------+---------+-------------+--------")
    for k in keys:
        if k in table:
            print("%-*s | %6d | %7d | %11d | %7d" % ((width, k) + tuple(table[k][c] for c in cols)))
    print("%-*s | %6d | %7d | %11d | %7d" % ((width, "total") + tuple(total[c] for c in cols)))
    return total["failure"]


ORDER = {"cache": CACHES, "framework": FRAMEWORKS, "placement": PLACEMENTS, "structure": STRUCTURES,
         "engine": ENGINES}


def print_results(title, recs, refused, unfired):
    """The tables of a run (or of runs combined): per kind of trial, per
    configuration family, then the failing configurations."""
    nfail = print_table(title, count_rows(recs, lambda r: r["kind"]))
    print()
    family = {}
    order = []
    for d in DIMENSIONS:
        for v in ORDER[d] + sorted(set(config_value(r["config"], d) for r in recs) - set(ORDER[d])):
            key = "%s %s" % (d, v)
            rows = [r for r in recs if config_value(r["config"], d) == v]
            if rows:
                family[key] = count_rows(rows, lambda r: key)[key]
                order.append(key)
    print_table("configuration family", family, order,
                count_rows(recs, lambda r: "total").get("total", dict.fromkeys(VERDICTS + ["trials"], 0)))
    failing = count_rows([r for r in recs if r["verdict"] == "failure"], lambda r: label(r["config"]))
    if failing:
        print()
        print("failing configurations (structure framework cache placement engine: failures of trials):")
        alltab = count_rows(recs, lambda r: label(r["config"]))
        for k in sorted(failing):
            print("  %s: %d of %d" % (k, failing[k]["trials"], alltab[k]["trials"]))
    if refused:
        print()
        print("refused combinations (skipped, not counted):")
        for r in refused:
            print("  " + r)
    if unfired:
        print()
        print("%d trials whose fault never fired (not counted)" % len(unfired))
    return nfail


# ---------------------------------------------------------------- shared judge

def check_refusals(db, values, res):
    """Each combination refused by design that the matrix would otherwise
    deal: create_index must refuse it with a clean error."""
    n = 0
    for s in values["structure"]:
        for fw in values["framework"]:
            c = {"structure": s, "framework": fw, "cache": "none", "placement": "none", "engine": "sync"}
            why = refusal(c)
            if why is None:
                continue
            n += 1
            ix = "refused%d" % n
            r = run("SET client_min_messages = warning;\n"
                    "SELECT festival.create_index('%s', '%s', 'campaign', '%s');"
                    % (ix, s, json.dumps(options_for(c, random.Random(0)))), db)
            what = "%s under framework %s, with every cache and placement" % (s, fw)
            if r.rc != 0 and r.sqlstate in ("0A000", "22023"):
                res.refused.append("%s: %s (create_index: %s %s)" % (what, why, r.sqlstate, r.error))
            else:
                res.notes.append("FAILURE create_index accepted %s, which the docs refuse: %s"
                                 % (what, r.err.strip()[:200]))
                run("SELECT festival.drop_index('%s')" % ix, db)


def probe_change(db, t, i):
    """Try one insert into the index (and its source); returns cf_change's
    answer, or None when the backend died."""
    r = run(change_sql(t.ix, "insert", i, "probe"), db)
    if r.lost:
        wait_for_server()
        return None
    if r.value("probe") in ("ok", "false") or (r.value("probe") or "").startswith("kept|"):
        t.present.add(i)
    return r.value("probe") or ("err|%s|%s|" % (r.sqlstate, r.error))


def refused_with_hint(answer):
    """A change refused as the docs say: data_corrupted with the hint to run
    check() and build(), or an incompletely built index (55000)."""
    parts = answer.split("|")
    return parts[0] == "err" and ((parts[1] == "XX001" and "festival.check(" in answer
                                   and "festival.build(" in answer) or parts[1] == "55000")


def judge_reopen(db, t, allowed, promised, what):
    """The index in a new session, after a crash restart or after the
    session of a fault trial ended.  t.present holds the acknowledged rows;
    allowed the ids of statements a kill interrupted or a fault failed,
    which may or may not be in the source table and the index.  promised:
    nothing reported a failure (a crash, or a fault trial whose flush() and
    close() succeeded), so every acknowledged change must be there and no
    repair may be needed.  Returns (verdict, why)."""
    ix = t.ix
    got = run("SELECT id FROM festival.query('%s', %s)" % (ix, WHOLE), db)
    if got.lost:
        wait_for_server()
        return "failure", "backend crashed: " + got.err.strip()[-300:]
    src = set(int(x) for x in run("SELECT id FROM %s_src" % ix, db).out)
    if (src ^ t.present) - allowed:
        return "failure", "source table differs from the acknowledged rows (harness)"
    wrong = None
    if got.sqlstate is not None:
        wrong = "queries fail: %s %s" % (got.sqlstate, got.error)
        if promised:
            return "failure", "error %s: %s %s" % (what, got.sqlstate, got.error)
        if ix not in (got.error or ""):
            return "failure", "an error that names no index: %s %s" % (got.sqlstate, got.error)
    else:
        ids = [int(x) for x in got.out if x.lstrip("-").isdigit()]
        index = set(ids)
        lost = sorted(src - index - allowed)
        extra = sorted(index - src - allowed)
        if len(ids) != len(index) or lost or extra:
            wrong = ("%d acknowledged rows missing from the index %s; %d unacknowledged or deleted rows "
                     "in it %s; %d duplicates" % (len(lost), lost[:8], len(extra), extra[:8], len(ids) - len(index)))
            if promised:
                return "failure", wrong + " " + what
        if "WARNING" in got.err and t.c["framework"] != "none" and promised:
            return "failure", "a log-backed index warned: " + got.err.strip()[:200]
    repaired = False
    probe = probe_change(db, t, 990001)
    if probe is None:
        return "failure", "a change crashed the backend"
    if probe in ("ok", "false") or probe.startswith("kept|"):
        if wrong:
            return "failure", wrong + "; and the index takes changes"
        if probe == "false":
            return "failure", "an insert returned false"
    else:
        if not refused_with_hint(probe):
            return "failure", "a change was refused with " + probe
        c = run("SELECT 'errors=' || count(*) FILTER (WHERE severity = 'error') FROM festival.check('%s')" % ix, db)
        if c.lost or c.sqlstate is not None:
            wait_for_server()
            return "failure", "check() failed: " + c.err.strip()[:200]
        if c.value("errors") != "0" or probe.split("|")[1] == "55000":
            if promised:
                return "failure", "check() finds %s errors %s" % (c.value("errors"), what)
            b = run("SELECT festival.build('%s');" % ix, db)
            if b.rc != 0:
                wait_for_server()
                return "failure", "build() failed: " + b.err.strip()[:200]
            repaired = True
        elif wrong:
            return "failure", wrong + "; and check() is clean"
        probe = probe_change(db, t, 990002)
        if probe != "ok":
            return "failure", "after check()/build() a change was refused: %s" % probe
    # reconcile the statements a kill interrupted: the index then matches
    # the source table, and the check must be clean
    fix = ""
    if not repaired and got.sqlstate is None:
        for i in allowed:
            if i in index and i not in src:
                fix += "SELECT festival.delete('%s', %d, pt(%d));\n" % (ix, i, i)
            elif i in src and i not in index:
                fix += "SELECT festival.insert('%s', %d, pt(%d));\n" % (ix, i, i)
    c = run(fix + "SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; ') "
            "FILTER (WHERE severity = 'error' OR %s), '') FROM festival.check('%s');\n"
            "SELECT 'mismatches=' || mismatches('%s', '%s_src');"
            % ("true" if t.c["framework"] != "none" else "false", ix, ix, ix), db)
    if c.lost or c.sqlstate is not None:
        wait_for_server()
        return "failure", "reconcile or check failed: %s" % c.err.strip()[:200]
    if c.value("check") != "":
        return "failure", "check(): " + c.value("check")[:300]
    if c.value("mismatches") != "0":
        return "failure", "windows differ from brute force: " + " ".join(c.out)
    if repaired or wrong:
        return "clean error", "repaired by build(): " + (wrong or "")[:200]
    return "correct", ""


# ---------------------------------------------------------------- flips

def flip_target(rng, t):
    """Where to flip: (kind, file, offset).  A page is flipped on the tier
    the page -> tier map names (the copy the index reads)."""
    path, fast = t.path, t.fast_path
    tiers = tiers_of_pages(path) if fast else None

    def page_file(p):
        return fast if tiers and p < len(tiers) and tiers[p] else path

    size = os.path.getsize(path)
    log = path + ".log"
    r = rng.random()
    if t.c["framework"] != "none" and os.path.exists(log) and os.path.getsize(log) > 0 and r < 0.2:
        return "log", log, rng.randrange(os.path.getsize(log))
    if fast and r < 0.32:
        side = [f for f in (path + ".tiermap", path + ".tierhot")
                if os.path.exists(f) and os.path.getsize(f) > 0]
        if side:
            f = rng.choice(side)
            return f.rsplit(".", 1)[1], f, rng.randrange(os.path.getsize(f))
    npages = max(len(tiers) if tiers else 0, size // PAGE)
    for _ in range(20):
        if r < 0.55:
            p = rng.randrange(2)
            kind = "meta"
        else:
            p = rng.randrange(2, max(3, npages))
            kind = "data"
        f = page_file(p)
        if os.path.getsize(f) >= (p + 1) * PAGE:
            return kind + (" (fast)" if f == fast else ""), f, p * PAGE + rng.randrange(PAGE)
        r = rng.random()
    return "meta", path, rng.randrange(PAGE)


def flips(args, db, res):
    rng = random.Random(args.seed)
    matrix = Matrix(rng, args.values)
    rows = 300
    batch = 8
    n = 0
    while n < args.flips:
        # a batch of indices: the crashed ones share one victim session
        trials = []
        for _ in range(min(batch, args.flips - n)):
            n += 1
            t = Trial("f%d" % n, matrix.draw(), rng)
            t.state = rng.choice(["closed", "crashed"])
            try:
                make_index(db, t, rows)
            except Refused as e:
                res.refuse(t, str(e))
                continue
            t.acked = rows
            trials.append(t)
        crashed = [t for t in trials if t.state == "crashed"]
        if crashed:
            v = Victim(db)
            for t in crashed:
                for i in range(rows + 1, rows + 1 + rng.randrange(10, 60)):
                    ans = v.ask(change_sql(t.ix, "insert", i))
                    if ans == ["ack"]:
                        t.acked += 1
                    else:
                        res.notes.append("FAILURE %s (%s): an insert before any damage failed: %s"
                                         % (t.ix, label(t.c), ans))
            v.kill()
            wait_for_server()
        for t in trials:
            t.where, f, off = flip_target(rng, t)
            flip_byte(f, off)
            t.file, t.offset = f, off
            with open(f, "rb") as fh:
                fh.seek(off // PAGE * PAGE)
                t.damaged = fh.read(PAGE)
            t.detail = "%s+%d" % (os.path.basename(f), off)
            verdict, why = judge_flip(db, t)
            res.add(t, "%s %s %s" % (t.c["framework"], t.state, t.where), verdict, why, t.detail)


def superseded(db, t):
    """check() was silent about a flipped data page.  Right only if the
    page's image on the device is dead: a buffering store holds the whole
    node (a new or rewritten one) and never reads the stored image; its
    next flush (or the end of the session that replayed the log) then
    overwrites the page.  So flush: the damaged image must be gone, and
    answers and check stay right."""
    f, off = t.file, t.offset
    page = off // PAGE * PAGE
    r = run("SELECT festival.flush('%(ix)s');\n%(check)s;\n"
            "SELECT 'mismatches=' || mismatches('%(ix)s', '%(ix)s_src');"
            % {"ix": t.ix, "check": CHECK % t.ix}, db)
    if r.lost:
        wait_for_server()
        return "failure", "check() was silent, the flush crashed the backend"
    with open(f, "rb") as fh:
        fh.seek(page)
        after = fh.read(PAGE)
    if r.sqlstate is not None or r.value("check") != "" or r.value("mismatches") != "0":
        return "failure", "check() was silent, the flush then found: %s %s" % (r.err[:200], " ".join(r.out))
    if t.damaged == after:
        return "failure", "check() is silent about a damaged page that stays on the device"
    return "correct", "a dead page image, overwritten by the flush"


def judge_flip(db, t):
    ix = t.ix
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
    if source.out != [str(t.acked)]:
        return "failure", "the source table holds %s rows, %d acknowledged" % (source.out, t.acked)
    wrong = None
    if q.sqlstate is None:
        if (q.value("rows") != str(t.acked) or q.value("missing") != "0" or
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
    # bytes that no longer matter once replayed or emptied; a damaged map
    # is refused by its checksum, but its flags byte is outside it; damaged
    # weights are a warning)
    if t.where.split()[0] in ("meta", "data") and not reported:
        return superseded(db, t)
    return "correct", (c.value("check") or c.error or "")[:200]


# ---------------------------------------------------------------- crash

def crash(args, db, res):
    rng = random.Random(args.seed + 1)
    matrix = Matrix(rng, args.values)
    rows = 300
    n = 0
    while n < args.kills:
        # a batch of indices streamed into by one session, killed once
        trials = []
        for _ in range(min(args.batch, args.kills - n)):
            n += 1
            t = Trial("k%d" % n, matrix.draw(), rng)
            if t.c["framework"] != "none" and rng.random() < 0.3:
                t.options["log_size"] = 16384
            try:
                make_index(db, t, rows)
            except Refused as e:
                res.refuse(t, str(e))
                continue
            t.next_id = rows + 1
            t.planned = set(t.present)
            trials.append(t)
        if not trials:
            continue
        kill_after = rng.randrange(10 * len(trials), 60 * len(trials))
        ops = []
        for _ in range(kill_after + 40):
            t = rng.choice(trials)
            if t.planned and rng.random() < 0.3:
                i = rng.choice(sorted(t.planned))
                t.planned.discard(i)
                ops.append((t, "delete", i))
            else:
                ops.append((t, "insert", t.next_id))
                t.planned.add(t.next_id)
                t.next_id += 1
        v = Victim(db)
        # every statement is sent ahead; the backend is killed once
        # kill_after of them are answered, while it runs the next
        for t, op, i in ops:
            v.send(change_sql(t.ix, op, i))
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
        refused = {}
        for (t, op, i), ans in zip(ops, answers):
            if ans == ["ack"]:
                (t.present.add if op == "insert" else t.present.discard)(i)
            elif t.ix not in refused:
                refused[t.ix] = "%s %d answered %s" % (op, i, ans)
        inflight = ops[len(answers)] if len(answers) < len(ops) else None
        for t in trials:
            allowed = {inflight[2]} if inflight and inflight[0] is t else set()
            if t.ix in refused:
                verdict, why = "failure", "a change before the crash failed: " + refused[t.ix]
            else:
                verdict, why = judge_reopen(db, t, allowed, True, "after a crash")
            res.add(t, "%s kill" % t.c["framework"], verdict, why,
                    "in flight: %s %d" % inflight[1:] if allowed else "between statements")


# ---------------------------------------------------------------- faults

FAULT_STATE = {"ENOSPC": "53100", "torn": "53100", "EIO": "58030"}


def fault_targets(c):
    """The fault targets configuration c has."""
    t = ["write", "read", "sync"]
    if c["framework"] != "none":
        t += ["log_write", "log_sync"]
    if c["placement"] != "none":
        t.append("tier_map_write")
        if c["placement"] != "single":  # no page is fast under single
            t += ["fast:write", "fast:read", "fast:sync"]
        if PLACEMENT_OF.get(c["placement"], c["placement"]) in ("hot", "level_hot", "random"):
            t.append("tier_write")  # the weights are written for these only
    return t


def fault_errors(target):
    base = target.split(":")[-1]
    if base.endswith("read"):
        return ["EIO", "crash"]
    if base in ("write", "log_write"):
        return ["ENOSPC", "EIO", "torn", "crash"]
    return ["ENOSPC", "EIO", "crash"]


def fault_position(rng, t):
    """After how many operations of the target the fault fires: within
    what a trial does (a device that holds only meta pages, the slow one
    under all_fast, sees a few writes and reads; a cache takes most reads;
    the fast device is synced once or twice)."""
    base = t.target.split(":")[-1]
    few = (t.c["placement"] == "all_fast") != t.target.startswith("fast:")
    if base == "write" and few or base == "read" and (few or t.c["cache"] != "none"):
        return rng.randrange(4)
    if t.target == "fast:sync":
        return 0
    return rng.randrange({"write": 16, "read": 24, "sync": 2, "log_write": 30, "log_sync": 30,
                          "tier_map_write": 2, "tier_write": 1}[base])


class Balance:
    """Choices that favour what was chosen least so far (seeded ties)."""

    def __init__(self, rng):
        self.rng = rng
        self.seen = {}

    def choose(self, options):
        least = min(self.seen.get(o, 0) for o in options)
        pick = self.rng.choice([o for o in options if self.seen.get(o, 0) == least])
        self.seen[pick] = self.seen.get(pick, 0) + 1
        return pick


def faults(args, db, res):
    rng = random.Random(args.seed + 2)
    matrix = Matrix(rng, args.values)
    targets = Balance(rng)
    errors = Balance(rng)
    rows = 300
    for n in range(1, args.faults + 1):
        t = Trial("x%d" % n, matrix.draw(), rng)
        t.target = targets.choose(fault_targets(t.c))
        t.error = errors.choose(fault_errors(t.target))
        t.pos = fault_position(rng, t)
        try:
            make_index(db, t, rows)
        except Refused as e:
            res.refuse(t, str(e))
            continue
        kind = "%s %s" % (t.target, t.error)
        verdict, why = fault_trial(db, t, rng)
        detail = "%s after %d" % (kind, t.pos)
        if verdict == "unfired":
            res.unfired.append(t.ix)
            if args.verbose:
                print("%s %s %s: unfired" % (t.ix, label(t.c), detail), flush=True)
            continue
        res.add(t, kind, verdict, why, detail)


def fault_trial(db, t, rng):
    ix = t.ix
    planned = set(t.present)
    next_id = max(planned) + 1
    ops = []
    for k in range(rng.randrange(5, 20) + 40):
        if planned and rng.random() < 0.3:
            i = rng.choice(sorted(planned))
            planned.discard(i)
            ops.append(("delete", i))
        else:
            ops.append(("insert", next_id))
            planned.add(next_id)
            next_id += 1
    arm_at = len(ops) - 40
    lines = ["SET client_min_messages = warning;"]
    # a log is synced at every modification only with festival.log_sync =
    # operation (the default never syncs it at flush and close alone)
    if t.target == "log_sync":
        lines.append("SET festival.log_sync = operation;")
    for k, (op, i) in enumerate(ops):
        if k == arm_at:
            lines.append("SELECT 'arm=' || cf_try($$SELECT festival.inject_fault('%s', '%s', %d, '%s')$$);"
                         % (ix, t.target, t.pos, t.error))
        lines.append(change_sql(ix, op, i, "op%d" % k))
    lines += ["SELECT 'answers=' || cf_answers('%s');" % ix,
              change_sql(ix, "insert", 990000, "probe"),
              "SELECT 'fired=' || cf_try($$SELECT festival.fault_status('%s')->>'fired'$$);" % ix,
              "SELECT 'flush=' || cf_try($$SELECT festival.flush('%s')$$);" % ix,
              "SELECT 'fired2=' || cf_try($$SELECT festival.fault_status('%s')->>'fired'$$);" % ix,
              "SELECT 'close=' || cf_try($$SELECT festival.close('%s')$$);" % ix]
    r = run("\n".join(lines) + "\n", db)
    if r.value("arm") != "ok|":
        return "failure", "inject_fault failed: %s" % (r.value("arm") or r.err.strip()[:200])
    # the changes acknowledged, the first error and what followed it
    allowed = set()
    errs = []
    wrong_change = None
    for k, (op, i) in enumerate(ops):
        a = r.value("op%d" % k)
        if a is None:
            allowed.add(i)  # the statement the crash interrupted
            break
        if op == "delete" and i not in t.present and a in ("false", "ok"):
            # the insert of i failed before (the plan assumed it would not):
            # nothing to delete is the right answer, finding it a wrong one
            if a == "ok" and wrong_change is None:
                wrong_change = "delete %d found an entry whose insert had failed" % i
            continue
        if a == "ok" or a.startswith("kept|"):
            (t.present.add if op == "insert" else t.present.discard)(i)
        if a == "false":
            wrong_change = "%s %d returned false" % (op, i)
            if op == "delete":
                t.present.discard(i)
        if a.startswith("err|") or a.startswith("kept|"):
            errs.append(("%s %d" % (op, i), a))
    probe = r.value("probe")
    if probe is not None and (probe == "ok" or probe.startswith("kept|")):
        t.present.add(990000)
    elif probe is None and r.value("answers") is not None:
        allowed.add(990000)
    for key in ("answers", "probe", "flush", "close"):
        a = r.value(key)
        if a is not None and (a.startswith("err|") or a.startswith("kept|")):
            errs.append((key, a))
    if r.lost:
        wait_for_server()
        if t.error != "crash":
            return "failure", "backend crashed: " + r.err.strip()[-300:]
        verdict, why = judge_reopen(db, t, allowed, True, "after the crash fault")
        return verdict, why
    if r.rc != 0:
        return "failure", "the trial's session failed: " + r.err.strip()[:300]
    fired = max([int(v[3:]) for v in (r.value("fired"), r.value("fired2"))
                 if v and re.match(r"ok\|[0-9]+$", v)] + [0])
    if not errs:
        if t.error == "crash":
            return "unfired", ""
        if fired > 0 and not t.target.startswith("fast:"):
            return "failure", "the fault fired and no statement reported an error"
        if wrong_change:
            return "failure", wrong_change
        return "unfired", ""
    first = errs[0][1].split("|")
    want = FAULT_STATE.get(t.error)
    if t.error == "crash":
        return "failure", "the crash fault did not kill the backend, yet %s failed: %s" % errs[0]
    if first[1] != want:
        return "failure", "first error %s at %s, the fault's is %s" % (errs[0][1][:200], errs[0][0], want)
    for where, e in errs:
        if e.split("|")[1] == "XX000":
            return "failure", "an internal error at %s: %s" % (where, e[:200])
    # in the session: a wrong answer only from an index that refuses changes
    a = (r.value("answers") or "").split("|")
    in_session_wrong = a[0] == "ok" and a[1:] != ["0", "0", "0"]
    if wrong_change and not refused_with_hint(probe or ""):
        return "failure", wrong_change + " after the fault, and the index takes changes"
    if in_session_wrong and (probe == "ok" or (probe or "").startswith("kept|")):
        return "failure", ("in the session: %s missing, %s extra, %s windows wrong without an error, "
                           "and the index takes changes" % tuple(a[1:4]))
    if a[0] == "err" and t.ix not in a[2] and a[1] not in (want,):
        return "failure", "a query failed with an error that names no index: " + "|".join(a)
    # nothing reported a failure: flush() and close() succeeded, and the
    # index did not refuse changes as damaged in the session
    # flush() returns the pages it wrote: ok|N
    promised = ((r.value("flush") or "").startswith("ok|")
                and (r.value("close") or "").startswith("ok|")
                and not refused_with_hint(probe or ""))
    verdict, why = judge_reopen(db, t, allowed, promised,
                                "in the next session, though flush() and close() succeeded")
    if verdict == "correct" and in_session_wrong:
        verdict, why = "clean error", "wrong answers in the session from an index that refused changes"
    if verdict == "correct" and refused_with_hint(probe or ""):
        verdict, why = "clean error", "changes refused in the session: " + probe[:120]
    return verdict, why


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["flips", "crash", "faults", "table"])
    ap.add_argument("files", nargs="*", help="table: the --json files of earlier runs")
    ap.add_argument("--trials", type=int, default=None, help="number of trials")
    ap.add_argument("--long", action="store_true", help="hundreds of trials")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true", help="one line per trial")
    ap.add_argument("--keep", action="store_true", help="keep the database and indices")
    ap.add_argument("--json", default=None, help="append every trial to this file (one JSON object a line)")
    for d, values in (("structures", STRUCTURES), ("frameworks", FRAMEWORKS),
                      ("caches", CACHES), ("placements", PLACEMENTS), ("engines", ENGINES)):
        ap.add_argument("--" + d, type=lambda v: v.split(","), default=None,
                        help="comma-separated %s to draw from instead of all of %s" % (d, ",".join(values)))
    ap.add_argument("--batch", type=int, default=4, help="crash: indices one killed session streams into")
    ap.add_argument("--options", type=json.loads, default={},
                    help="index options (a JSON object) added to every index")
    ap.add_argument("--settings", type=json.loads, default={},
                    help="festival settings (a JSON object, e.g. {\"festival.window_search\": \"level\"}) "
                         "every session starts with")
    args = ap.parse_args()
    if args.trials is not None and args.trials < 1:
        ap.error("--trials must be at least 1")
    if args.batch < 1:
        ap.error("--batch must be at least 1")
    if args.mode == "table":
        recs = []
        for f in args.files:
            with open(f) as fh:
                recs += [json.loads(line) for line in fh if line.strip()]
        sys.exit(1 if print_results("kind of trial", recs, [], []) else 0)
    if args.files:
        ap.error("files are for the table mode")
    EXTRA_OPTIONS.update(args.options)
    bad = [k for k, v in args.settings.items()
           if not re.fullmatch(r"festival\.[a-z_]+", k) or not re.fullmatch(r"[A-Za-z0-9_.-]+", str(v))]
    if bad:
        ap.error("--settings: festival.<name> keys with plain values only (%s)" % ", ".join(bad))
    SESSION_SETTINGS.update({k: str(v) for k, v in args.settings.items()})
    args.values = {}
    for d, given, values in (("structure", args.structures, STRUCTURES),
                             ("framework", args.frameworks, FRAMEWORKS),
                             ("cache", args.caches, CACHES),
                             ("placement", args.placements, PLACEMENTS),
                             ("engine", args.engines, ENGINES)):
        bad = [v for v in (given or []) if v not in values]
        if bad:
            ap.error("unknown %s: %s (known: %s)" % (d, ",".join(bad), ",".join(values)))
        args.values[d] = given or values
    if "cache" in args.options:
        args.values["cache"] = [args.options["cache"]]
    if args.mode == "flips":
        args.flips = args.trials or (400 if args.long else 50)
    elif args.mode == "crash":
        args.kills = args.trials or (320 if args.long else 24)
    else:
        args.faults = args.trials or (300 if args.long else 24)
    db = "festival_campaign_" + args.mode
    if subprocess.run(["psql", "-X", "-qAt", "-d", "postgres", "-c",
                       "SELECT inet_server_addr() IS NULL"], capture_output=True,
                      text=True).stdout.strip() != "t":
        sys.exit("campaign: needs a server on a local Unix socket (it kills backends and changes files)")
    fresh_database(db)
    LAST_RESET[0] = stats_reset()
    start = time.time()
    res = Results(args.mode, args)
    check_refusals(db, args.values, res)
    {"flips": flips, "crash": crash, "faults": faults}[args.mode](args, db, res)
    if not args.keep:
        drop_database(db)
    if args.json:
        with open(args.json, "a") as fh:
            for rec in res.trials:
                fh.write(json.dumps(rec) + "\n")
    print("# %s campaign, seed %d, %.0f s%s" % (args.mode, args.seed, time.time() - start,
                                               "".join(", %s = %s" % kv for kv in sorted(SESSION_SETTINGS.items()))))
    nfail = print_results(args.mode, res.trials, res.refused, res.unfired)
    for rec in res.trials:
        if rec["verdict"] == "failure":
            print("FAILURE %s (%s; %s; %s): %s" % (rec["ix"], label(rec["config"]), json.dumps(rec["options"]),
                                                   rec["detail"], rec["why"]))
    for note in res.notes:
        print(note)
    sys.exit(1 if nfail or any(n.startswith("FAILURE") for n in res.notes) else 0)


if __name__ == "__main__":
    main()
