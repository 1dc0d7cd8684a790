--
-- fixture_helpers: functions shared by more than one test file, in schema
-- fixture.  The one source of them: sql/fixture.sql includes this file for
-- the pg_regress suites, scripts/test loads it into festival_tap for the
-- pgTAP files (docs/development.md, "Test layout").  Needs festival and
-- PostGIS installed in the database.
--
CREATE SCHEMA IF NOT EXISTS fixture;
-- the pgTAP files call these after SET ROLE to unprivileged roles too
GRANT USAGE ON SCHEMA fixture TO PUBLIC;

-------------------------------------------------------------------------------
-- Geometry and index walks (pg_regress suites)
-------------------------------------------------------------------------------

-- g with its arcs linearised as festival does (ST_CurveToLine, 32 segments
-- a quadrant): brute-force distances must be measured on the same lines
CREATE OR REPLACE FUNCTION fixture.lin(g geometry) RETURNS geometry
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN ST_HasArc(g) THEN ST_CurveToLine(g, 32, 0, 0) ELSE g END
$$;

-- every entry of every node reachable from the root, page numbers left out
-- (they may differ between frameworks): (level, position, object id in
-- leaves, box); two indices holding the same tree give the same rows
CREATE OR REPLACE FUNCTION fixture.nodes(idx text)
RETURNS TABLE (level int, pos int, ref bigint, x1 float8, y1 float8, x2 float8, y2 float8)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT n.level, n."position", CASE WHEN n.level = 0 THEN n.ref END,
		   n.xmin, n.ymin, n.xmax, n.ymax
	FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n
$$;

-- every leaf entry reachable from the root (id, box): indices that received
-- the same objects hold the same rows, whatever the shape of their trees
CREATE OR REPLACE FUNCTION fixture.entries(idx text)
RETURNS TABLE (id bigint, x1 float8, y1 float8, x2 float8, y2 float8)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT n.ref, n.xmin, n.ymin, n.xmax, n.ymax
	FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level = 0
$$;

-- rows where festival.knn(idx, q, k) differs from brute force over src
-- (ids in order, or distances to 1e-9), for every q of queries and k of ks
-- (default 1, 10, 100); 0 when festival is right
CREATE OR REPLACE FUNCTION fixture.knn_wrong(idx text, src regclass, queries geometry[],
											 ks int[] DEFAULT ARRAY[1, 10, 100]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	wrong bigint := 0;
	n bigint;
	q geometry;
	k int;
BEGIN
	FOREACH q IN ARRAY queries LOOP
		FOREACH k IN ARRAY ks LOOP
			EXECUTE format(
				'WITH f AS (SELECT row_number() OVER () AS r, id, round(distance::numeric, 9) AS d
							FROM festival.knn(%L, $1, $2)),
					  b AS (SELECT row_number() OVER (ORDER BY ST_Distance(geom, $1), id) AS r, id,
								   round(ST_Distance(geom, $1)::numeric, 9) AS d
							FROM %s ORDER BY ST_Distance(geom, $1), id LIMIT $2)
				 SELECT count(*) FROM f FULL JOIN b USING (r)
				 WHERE f.id IS DISTINCT FROM b.id OR f.d IS DISTINCT FROM b.d', idx, src)
			INTO n USING q, k;
			wrong := wrong + n;
		END LOOP;
	END LOOP;
	RETURN wrong;
END
$$;

-- answers of one festival.query_batch over the fx_query geometries of qids,
-- missing or extra against the intersects rows of brute (pred, qid, id, as
-- fx_brute makes); 0 when festival is right
CREATE OR REPLACE FUNCTION fixture.batch_wrong(idx text, brute regclass, qids int[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	wrong bigint;
BEGIN
	EXECUTE format(
		'WITH q AS (SELECT qid, row_number() OVER (ORDER BY qid) AS no FROM unnest($2) qid),
			  f AS (SELECT q.qid, r.id
					FROM festival.query_batch($1, (SELECT array_agg(g ORDER BY qid) FROM fx_query
												   WHERE qid = ANY ($2))) r
					JOIN q ON q.no = r.query_no),
			  b AS (SELECT qid, id FROM %s WHERE pred = ''intersects'' AND qid = ANY ($2))
		 SELECT (SELECT count(*) FROM (TABLE f EXCEPT ALL TABLE b) d)
				+ (SELECT count(*) FROM (TABLE b EXCEPT ALL TABLE f) d)', brute)
	INTO wrong USING idx, qids;
	RETURN wrong;
END
$$;

-- one row per index of indices (a table with columns ord and name) after a
-- phase: brute-force answers over src for every predicate and the queries
-- qids (kept in brute_table, a table (pred, qid, id)), festival's answers, those
-- missing and extra, rows of festival.check(), and whether the index holds
-- exactly the rows of src; ok when all agree
CREATE OR REPLACE FUNCTION fixture.verify_indices(phase text, indices regclass, src regclass,
												  brute_table regclass, qids int[])
RETURNS TABLE (what text, ord int, name text, brute bigint, answers numeric, missing numeric,
			   extra numeric, check_rows bigint, entries_exact boolean, ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
	i record;
	src_rows bigint;
BEGIN
	EXECUTE format('TRUNCATE %s', brute_table);
	EXECUTE format('INSERT INTO %s SELECT * FROM fx_brute(%L, %L)', brute_table, src, qids);
	FOR i IN EXECUTE format('SELECT x.ord, x.name FROM %s x ORDER BY x.ord', indices) LOOP
		what := phase;
		ord := i.ord;
		name := i.name;
		EXECUTE format('SELECT count(*) FROM %s', brute_table) INTO brute;
		SELECT sum(c.festival), sum(c.missing), sum(c.extra) INTO answers, missing, extra
		FROM fx_compare(i.name, brute_table, qids) c;
		check_rows := (SELECT count(*) FROM festival.check(i.name));
		EXECUTE format('SELECT count(*) FROM %s', src) INTO src_rows;
		entries_exact := (festival.stats(i.name)->>'entries')::bigint = src_rows;
		ok := answers = brute AND missing = 0 AND extra = 0 AND check_rows = 0 AND entries_exact;
		RETURN NEXT;
	END LOOP;
END
$$;

-------------------------------------------------------------------------------
-- Errors, files and pages (pgTAP files)
-------------------------------------------------------------------------------

-- error_matches(statement, sqlstate, message, detail, hint, description):
-- a pgTAP test that the statement fails with this SQLSTATE and that its
-- message, detail and hint match the regular expressions given (NULL: not
-- checked)
CREATE OR REPLACE FUNCTION fixture.error_matches(stmt text, want_state text, want_message text,
									  want_detail text, want_hint text, description text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	got_state	text;
	got_message	text;
	got_detail	text;
	got_hint	text;
BEGIN
	BEGIN
		EXECUTE stmt;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS got_state = RETURNED_SQLSTATE, got_message = MESSAGE_TEXT,
								got_detail = PG_EXCEPTION_DETAIL, got_hint = PG_EXCEPTION_HINT;
	END;
	IF got_state IS NULL THEN
		RETURN ok(false, description) || E'\n' || diag('    no exception thrown');
	END IF;
	IF got_state = want_state
		AND (want_message IS NULL OR got_message ~ want_message)
		AND (want_detail IS NULL OR coalesce(got_detail, '') ~ want_detail)
		AND (want_hint IS NULL OR coalesce(got_hint, '') ~ want_hint) THEN
		RETURN ok(true, description);
	END IF;
	RETURN ok(false, description) || E'\n' || diag(format(
		E'    caught: %s: %s\n    detail: %s\n    hint:   %s\n    wanted: %s: %s\n    detail: %s\n    hint:   %s',
		got_state, got_message, got_detail, got_hint,
		want_state, want_message, want_detail, want_hint));
END
$$;

-- the directory festival keeps its devices in
CREATE OR REPLACE FUNCTION fixture.festival_dir() RETURNS text LANGUAGE sql AS $$
	SELECT CASE
		WHEN s = '' THEN d || '/festival'
		WHEN s LIKE '/%' THEN s
		ELSE d || '/' || s
	END
	FROM (SELECT current_setting('data_directory') AS d,
				 coalesce(current_setting('festival.data_directory', true), '') AS s) AS x
$$;

-- run a shell command as the server's user (it reads COPY's one row first,
-- so that COPY never writes into a closed pipe)
CREATE OR REPLACE FUNCTION fixture.sh(cmd text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('COPY (SELECT 1) TO PROGRAM %L', 'cat >/dev/null; ' || cmd);
END
$$;

-- bytes as printf(1) octal escapes (dash's printf knows no \x)
CREATE OR REPLACE FUNCTION fixture.octal(data bytea) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg(format('\%s%s%s', b >> 6, (b >> 3) & 7, b & 7), '' ORDER BY i)
	FROM (SELECT i, get_byte(data, i) AS b FROM generate_series(0, length(data) - 1) AS i) AS x
$$;

-- write bytes into a file at an offset, in place
CREATE OR REPLACE FUNCTION fixture.write_at(path text, off bigint, data bytea) RETURNS void LANGUAGE sql AS $$
	SELECT fixture.sh(format('printf ''%s'' | dd of=''%s'' bs=1 seek=%s conv=notrunc status=none',
							 fixture.octal(data), path, off))
$$;

-- little-endian integers
CREATE OR REPLACE FUNCTION fixture.le(v bigint, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg(set_byte('\x00'::bytea, 0, ((v >> (8 * i)) & 255)::int), ''::bytea ORDER BY i)
	FROM generate_series(0, n - 1) AS i
$$;

CREATE OR REPLACE FUNCTION fixture.get_le(data bytea, off int, n int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
	SELECT sum(get_byte(data, off + i)::bigint << (8 * i))::bigint FROM generate_series(0, n - 1) AS i
$$;

-- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as PostgreSQL's pg_crc32c
CREATE OR REPLACE FUNCTION fixture.crc32c(data bytea) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	crc bigint := 4294967295;
	tbl bigint[];
	c bigint;
BEGIN
	FOR n IN 0..255 LOOP
		c := n;
		FOR k IN 1..8 LOOP
			IF c & 1 = 1 THEN c := (c >> 1) # 2197175160; ELSE c := c >> 1; END IF;
		END LOOP;
		tbl[n] := c;
	END LOOP;
	FOR i IN 0..length(data) - 1 LOOP
		crc := tbl[(crc # get_byte(data, i)) & 255] # (crc >> 8);
	END LOOP;
	RETURN crc # 4294967295;
END
$$;

-- pages: read, change a field, recompute the checksum (format/page.h), write
CREATE OR REPLACE FUNCTION fixture.read_page(path text, ps int, p bigint) RETURNS bytea LANGUAGE sql AS $$
	SELECT pg_read_binary_file(path, p * ps, ps)
$$;

CREATE OR REPLACE FUNCTION fixture.put(page bytea, off int, data bytea) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
	SELECT overlay(page PLACING data FROM off + 1)
$$;

CREATE OR REPLACE FUNCTION fixture.seal(page bytea) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
	SELECT fixture.put(page, 0, fixture.le(fixture.crc32c(substr(page, 5)), 4))
$$;

CREATE OR REPLACE FUNCTION fixture.forge_page(path text, ps int, p bigint, off int, val bigint, nbytes int)
RETURNS void LANGUAGE sql AS $$
	SELECT fixture.write_at(path, p * ps,
		fixture.seal(fixture.put(fixture.read_page(path, ps, p), off, fixture.le(val, nbytes))))
$$;

-- the meta copy a reader takes (format/meta.h: body at 32, generation at body 16)
CREATE OR REPLACE FUNCTION fixture.newest_meta(path text, ps int) RETURNS int LANGUAGE sql AS $$
	SELECT CASE WHEN fixture.get_le(fixture.read_page(path, ps, 0), 48, 8)
				   > fixture.get_le(fixture.read_page(path, ps, 1), 48, 8) THEN 0 ELSE 1 END
$$;

-- the file of an index
CREATE OR REPLACE FUNCTION fixture.index_file(ix text) RETURNS text LANGUAGE sql AS $$
	SELECT fixture.festival_dir() || '/' || d.directory || '/' || i.file_name
	FROM festival.index i JOIN festival.device d ON d.name = i.device
	WHERE i.name = ix
$$;

-- the rows of festival.check(), or one row describing its failure
CREATE OR REPLACE FUNCTION fixture.check_of(ix text) RETURNS TABLE (severity text, page bigint, message text)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY SELECT * FROM festival.check(ix);
EXCEPTION WHEN OTHERS THEN
	RETURN QUERY SELECT 'check() failed'::text, NULL::bigint, SQLSTATE || ': ' || SQLERRM;
END
$$;
