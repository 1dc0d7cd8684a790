-- test/shell/lib/faults.sql: the fault trials of test/shell/faults.sh and
-- scripts/campaign-faults (loaded into a fresh database; needs festival
-- and a device named "ft").
--
-- A trial builds a small index (ft_setup), arms the fault layer at the
-- i-th page write (or log write) of an operation, runs the operation and
-- judges what it left (ft_trial):
--   unfired    the operation did fewer than i+1 writes of the target;
--   usable     it failed with a proper SQLSTATE, and the index answers as
--              brute force over the acknowledged rows, accepts changes and
--              checks clean without any repair;
--   recovered  it failed with a proper SQLSTATE, the index then refused
--              changes (data_corrupted with the check/build hint) or
--              queries (incompletely built), and check() or build()
--              brought it back to the brute-force answers;
--   FAIL: ...  anything else (a wrong SQLSTATE, a wrong answer, a change
--              accepted by a damaged index, a failing check).
-- Every change the trial acknowledges is recorded in the source table in
-- the same subtransaction, so the table holds exactly the acknowledged rows.

SET client_min_messages = warning;

CREATE FUNCTION ft_pt(i bigint) RETURNS geometry LANGUAGE sql IMMUTABLE
    AS $$ SELECT ST_MakePoint((i * 7919) % 1000 + (i % 10) / 10.0, (i * 104729) % 997 + (i % 7) / 7.0) $$;
-- the objects trials insert: close together, so that a few inserts split
-- a leaf (and its parents, in time)
CREATE FUNCTION ft_cpt(i bigint) RETURNS geometry LANGUAGE sql IMMUTABLE
    AS $$ SELECT ST_MakePoint(500 + (i % 17) * 0.37, 400 + (i % 13) * 0.29) $$;

-- windows whose answers differ between the index and brute force over its
-- source (fixture.window_wrong, sql/fixture_helpers.sql: faults_setup loads it)
CREATE TABLE ft_windows AS
    SELECT k AS id, CASE WHEN k = 0 THEN ST_MakeEnvelope(-10, -10, 2000, 2000)
                         ELSE ST_MakeEnvelope(k * 150, k * 130, k * 150 + 300, k * 130 + 280) END AS g
    FROM generate_series(0, 4) k;
CREATE FUNCTION ft_mismatches(ix text) RETURNS bigint LANGUAGE sql
    AS $$ SELECT fixture.window_wrong(ix, 'ft_windows', (ix || '_src')::regclass) $$;

CREATE FUNCTION ft_check_errors(ix text) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM festival.check(ix) WHERE severity = 'error' $$;

-- A fresh index ix of n objects, built with method (inserted one at a time
-- unless the operation is a bulk load: a bulk load leaves a free page, and
-- a split that reuses it overwrites a page; ft_drop removes it:
-- a campaign is one transaction, so every trial has an index of its own).
CREATE FUNCTION ft_setup(ix text, structure text, options jsonb, n int, method text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, geom geometry)', ix || '_src');
    EXECUTE format('INSERT INTO %I SELECT i, ft_pt(i) FROM generate_series(1, %s) i', ix || '_src', n);
    PERFORM festival.create_index(ix, structure, 'ft', options, (ix || '_src')::regclass);
    PERFORM festival.build(ix, method);
END $$;

-- One insert, acknowledged in the source table in the same subtransaction.
-- Clustered objects (ft_cpt) split leaves; scattered ones (ft_pt, with
-- scattered) touch many pages, so that a compaction has pages to flush.
CREATE FUNCTION ft_insert(ix text, id bigint, scattered boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    g geometry := CASE WHEN scattered THEN ft_pt(id) ELSE ft_cpt(id) END;
BEGIN
    PERFORM festival.insert(ix, id, g);
    EXECUTE format('INSERT INTO %I VALUES ($1, $2)', ix || '_src') USING id, g;
END $$;

-- One festival.insert_many of 120 objects (ids n + 1 .. n + 120: 60 close
-- together, which split leaves, and 60 scattered) with method, acknowledged
-- in the source table in the same subtransaction: all of them or none.
CREATE FUNCTION ft_insert_many(ix text, n int, method text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    rows text := format('SELECT i, CASE WHEN i %% 2 = 0 THEN ft_cpt(i) ELSE ft_pt(i) END FROM generate_series(%s, %s) i',
                        n + 1, n + 120);
BEGIN
    PERFORM festival.insert_many(ix, query => rows, method => method);
    EXECUTE format('INSERT INTO %I %s', ix || '_src', rows);
END $$;

-- The build method that repairs ix after operation op (bulk: the
-- operation's bulk-load or insert_many method).
CREATE FUNCTION ft_rebuild_method(op text, bulk text) RETURNS text LANGUAGE sql AS $$
    SELECT CASE op WHEN 'build' THEN 'insert' WHEN 'many' THEN 'insert' ELSE bulk END $$;

-- Run operation op on ix (set up with n objects); the first error ends it.
-- Returns NULL, or the error as 'SQLSTATE|message|hint'.  Operations:
-- insert (twelve inserts that split; switch: the same after ft_prepare's
-- searches), compact (60 scattered inserts), flush,
-- bulk (festival.build(ix, bulk)), build (festival.build(ix, 'insert')),
-- many (ft_insert_many with method bulk).
CREATE FUNCTION ft_run(ix text, op text, n int, bulk text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    detail text;
    st text;
    msg text;
    hint text;
BEGIN
    IF op IN ('insert', 'compact', 'switch') THEN
        FOR k IN 1..(CASE op WHEN 'compact' THEN 60 ELSE 12 END) LOOP
            BEGIN
                PERFORM ft_insert(ix, n + k, op = 'compact');
            EXCEPTION WHEN others THEN
                GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT,
                                        detail = PG_EXCEPTION_DETAIL;
                -- the error says the change was logged and is kept
                IF detail LIKE '%is kept%' THEN
                    EXECUTE format('INSERT INTO %I VALUES ($1, $2)', ix || '_src')
                        USING n + k, CASE WHEN op = 'compact' THEN ft_pt(n + k) ELSE ft_cpt(n + k) END;
                END IF;
                RETURN st || '|' || msg || '|' || hint;
            END;
        END LOOP;
    ELSE
        BEGIN
            CASE op
                WHEN 'flush' THEN PERFORM festival.flush(ix);
                WHEN 'bulk' THEN PERFORM festival.build(ix, bulk);
                WHEN 'build' THEN PERFORM festival.build(ix, 'insert');
                WHEN 'many' THEN PERFORM ft_insert_many(ix, n, bulk);
            END CASE;
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT,
                                    detail = PG_EXCEPTION_DETAIL;
            -- the batch was logged (journal, FAST, eFIND) and is kept, whole
            IF op = 'many' AND detail LIKE '%is kept%' THEN
                EXECUTE format('INSERT INTO %I SELECT i, CASE WHEN i %% 2 = 0 THEN ft_cpt(i) ELSE ft_pt(i) END '
                               'FROM generate_series(%s, %s) i', ix || '_src', n + 1, n + 120);
            END IF;
            RETURN st || '|' || msg || '|' || hint;
        END;
    END IF;
    RETURN NULL;
END $$;

-- Before the operation: what it needs in place (a flush needs buffered
-- changes; switch, the inserts of insert into an adaptive grid file whose
-- buckets are read-heavy, three point searches of every object and four
-- at each point the inserts will add, so that the inserts switch buckets
-- to in-place mode, rewrite them in place and switch them back to log
-- mode).
CREATE FUNCTION ft_prepare(ix text, op text, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF op = 'switch' THEN
        EXECUTE format('SELECT count(*) FROM %I s CROSS JOIN generate_series(1, 3) g, '
                       'festival.query(%L, s.geom) q', ix || '_src', ix);
        PERFORM count(*) FROM generate_series(n + 1, n + 12) i CROSS JOIN generate_series(1, 4) g,
                              festival.query(ix, ft_cpt(i)) q;
    END IF;
    IF op = 'flush' THEN
        FOR k IN 1..25 LOOP
            PERFORM ft_insert(ix, n + 1000 + k);
        END LOOP;
    END IF;
END $$;

-- Page writes (target write) or log writes (log_write) op does.
CREATE FUNCTION ft_measure(ix text, structure text, options jsonb, op text, target text,
                           n int, bulk text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    before bigint;
    err text;
BEGIN
    PERFORM ft_setup(ix, structure, options, n, CASE WHEN op IN ('bulk', 'compact') THEN bulk ELSE 'insert' END);
    PERFORM ft_prepare(ix, op, n);
    before := (festival.fault_status(ix) ->> target)::bigint;
    err := ft_run(ix, op, n, bulk);
    IF err IS NOT NULL THEN
        RAISE EXCEPTION 'operation % failed without a fault: %', op, err;
    END IF;
    before := (festival.fault_status(ix) ->> target)::bigint - before;
    PERFORM ft_drop(ix);
    RETURN before;
END $$;

CREATE FUNCTION ft_drop(ix text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM festival.drop_index(ix);
    EXECUTE format('DROP TABLE %I', ix || '_src');
END $$;

-- Can ix take a change now?  NULL if it did, else the error.
CREATE FUNCTION ft_try_change(ix text, id bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text;
    msg text;
    hint text;
BEGIN
    PERFORM ft_insert(ix, id);
    RETURN NULL;
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
    RETURN st || '|' || msg || '|' || hint;
END $$;

-- Brute-force mismatches, or -1 if a query fails (with the error in *err).
CREATE FUNCTION ft_answers(ix text, OUT mismatches bigint, OUT err text) LANGUAGE plpgsql AS $$
DECLARE
    st text;
    msg text;
BEGIN
    mismatches := ft_mismatches(ix);
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    mismatches := -1;
    err := st || '|' || msg;
END $$;

CREATE FUNCTION ft_trial1(ix text, structure text, options jsonb, op text, target text,
                         error text, i bigint, n int, bulk text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    err text;
    change text;
    ans record;
    repaired boolean := false;
    fired bigint;
    want_state text := CASE error WHEN 'EIO' THEN '58030' ELSE '53100' END;
BEGIN
    PERFORM ft_setup(ix, structure, options, n, CASE WHEN op IN ('bulk', 'compact') THEN bulk ELSE 'insert' END);
    PERFORM ft_prepare(ix, op, n);
    fired := (festival.fault_status(ix) ->> 'fired')::bigint;
    PERFORM festival.inject_fault(ix, target, i, error);
    err := ft_run(ix, op, n, bulk);
    IF err IS NULL THEN
        IF (festival.fault_status(ix) ->> 'fired')::bigint > fired THEN
            RETURN 'FAIL: the fault fired but the operation succeeded';
        END IF;
        PERFORM festival.clear_fault(ix);
        RETURN 'unfired';
    END IF;
    IF split_part(err, '|', 1) <> want_state THEN
        RETURN 'FAIL: wrong error ' || err;
    END IF;

    -- queries: answered correctly, or refused as incompletely built
    ans := ft_answers(ix);
    IF ans.mismatches = -1 AND split_part(ans.err, '|', 1) = '55000' THEN
        PERFORM festival.build(ix, ft_rebuild_method(op, bulk));
        repaired := true;
    ELSIF ans.mismatches <> 0 THEN
        -- a damaged index may answer wrongly only if it also refuses changes
        change := ft_try_change(ix, 900000 + i);
        IF change IS NULL THEN
            RETURN 'FAIL: wrong answers (' || ans.mismatches || ', ' || coalesce(ans.err, '') || ') and changes accepted';
        END IF;
    END IF;

    -- changes: accepted, or refused with the check/build hint until repaired
    change := ft_try_change(ix, 900000 + i);
    IF change IS NOT NULL THEN
        IF split_part(change, '|', 1) <> 'XX001' OR change NOT LIKE '%festival.check(%festival.build(%' THEN
            RETURN 'FAIL: change refused with ' || change;
        END IF;
        IF ft_check_errors(ix) > 0 THEN
            PERFORM festival.build(ix, ft_rebuild_method(op, bulk));
        END IF;
        repaired := true;
        change := ft_try_change(ix, 900000 + i);
        IF change IS NOT NULL THEN
            RETURN 'FAIL: still refused after check/build: ' || change;
        END IF;
    END IF;

    ans := ft_answers(ix);
    IF ans.mismatches <> 0 THEN
        RETURN 'FAIL: ' || ans.mismatches || ' ids differ from brute force ' || coalesce(ans.err, '');
    END IF;
    IF ft_check_errors(ix) > 0 THEN
        RETURN 'FAIL: check() finds errors';
    END IF;
    RETURN CASE WHEN repaired THEN 'recovered' ELSE 'usable' END;
END $$;

-- One trial on an index of its own, dropped afterwards.
CREATE FUNCTION ft_trial(ix text, structure text, options jsonb, op text, target text,
                         error text, i bigint, n int, bulk text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    outcome text;
    msg text;
BEGIN
    BEGIN
        outcome := ft_trial1(ix, structure, options, op, target, error, i, n, bulk);
    EXCEPTION WHEN others THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
        outcome := 'FAIL: unexpected error ' || msg;
    END;
    IF EXISTS (SELECT 1 FROM festival.index WHERE name = ix) THEN
        PERFORM ft_drop(ix);
    END IF;
    RETURN outcome;
END $$;

-- The positions to try among w writes: all of them, or at most cap
-- spread over the range (always the first and the last).
CREATE FUNCTION ft_positions(w bigint, cap int) RETURNS SETOF bigint LANGUAGE sql AS $$
    SELECT DISTINCT p FROM (
        SELECT CASE WHEN cap <= 0 OR w <= cap THEN g
                    ELSE (g * (w - 1)) / greatest(cap - 1, 1) END AS p
        FROM generate_series(0, CASE WHEN cap <= 0 OR w <= cap THEN w - 1 ELSE cap - 1 END) g) s
    ORDER BY p $$;

-- Every trial of one structure, framework and operation: a row per outcome.
-- errors: the errors to try (NULL: ENOSPC, EIO and, for writes, torn).  A
-- campaign runs in one transaction, and every trial's dropped index holds
-- a lock until its end: long campaigns call this once per error.
CREATE FUNCTION ft_campaign(structure text, framework text, op text, target text,
                            bulk text, cap int, n int DEFAULT 150, errors text[] DEFAULT NULL)
RETURNS TABLE (writes bigint, error text, outcome text, trials bigint)
LANGUAGE plpgsql AS $$
DECLARE
    ix text := 'ft_' || structure || '_' || framework;
    options jsonb := jsonb_build_object('framework', framework, 'page_size', 1024);
    -- room for the points ft_trial adds (xbrtree indices have a fixed extent);
    -- the grid files' pages are filled to 30 % (a bucket of 12 points or 8
    -- records, a directory page of 5 regions), so that the inserts that
    -- split buckets split sub-directories and root pages too
    extent jsonb := CASE
        WHEN structure = 'xbrtree' THEN '{"extent": [-1, -1, 1001, 1001]}'
        WHEN structure IN ('gridfile', 'lbgrid') THEN '{"extent": [-1, -1, 1001, 1001], "max_fill": 30}'
        -- the adaptive grid file's buckets of 16 points, switching after
        -- 4 operations: the inserts of switch switch a bucket both ways,
        -- rewrite it in place and split it (test/shell/agrid_crash.sh)
        WHEN structure = 'agrid' THEN '{"extent": [-1, -1, 1001, 1001], "max_fill": 60, "mode_window": 4}'
        ELSE '{}' END;
    w bigint;
    p bigint;
BEGIN
    options := options || extent;
    IF op = 'compact' THEN
        options := options || '{"log_size": 8192}';
    END IF;
    w := ft_measure(ix || '_w', structure, options, op, target, n, bulk);
    CREATE TEMP TABLE IF NOT EXISTS ft_outcomes (error text, outcome text);
    TRUNCATE ft_outcomes;
    -- syncs fail or not; only writes can be torn
    FOR e IN 0..(CASE WHEN target LIKE '%sync' THEN 1 ELSE 2 END) LOOP
        CONTINUE WHEN errors IS NOT NULL AND NOT (ARRAY['ENOSPC', 'EIO', 'torn'])[e + 1] = ANY (errors);
        FOR p IN SELECT * FROM ft_positions(w, cap) LOOP
            INSERT INTO ft_outcomes VALUES ((ARRAY['ENOSPC', 'EIO', 'torn'])[e + 1],
                ft_trial(ix || '_' || e || '_' || p, structure, options, op, target,
                         (ARRAY['ENOSPC', 'EIO', 'torn'])[e + 1], p, n, bulk));
        END LOOP;
    END LOOP;
    RETURN QUERY SELECT w, o.error, o.outcome, count(*) FROM ft_outcomes o GROUP BY 1, 2, 3 ORDER BY 2, 3;
END $$;
