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

-- windows (rows (id, g) of wins) whose festival.query(idx, g) answer differs
-- from brute force over src (rows (id, geom), intersects); 0 when festival
-- is right.  The campaigns and crash tests call it after every trial: JIT
-- (the brute force's estimated cost is high) would compile each call anew
-- for 75 ms
CREATE OR REPLACE FUNCTION fixture.window_wrong(idx text, wins regclass, src regclass)
RETURNS bigint LANGUAGE plpgsql SET jit = off AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format(
		'SELECT count(*) FROM %s w
		 WHERE ARRAY(SELECT q.id FROM festival.query(%L, w.g) q ORDER BY 1)
			   IS DISTINCT FROM
			   ARRAY(SELECT s.id FROM %s s WHERE ST_Intersects(s.geom, w.g) ORDER BY 1)',
		wins, idx, src)
	INTO n;
	RETURN n;
END
$$;

-- run a statement: 'ok', or the SQLSTATE of the error it raised (the suites
-- that check that a fault or damage ends a statement with the right error)
CREATE OR REPLACE FUNCTION fixture.sqlstate_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END
$$;

-- The scattered objects and windows of the crash tests and the campaigns
-- (test/shell/lib/crash.bash, scripts/lib/campaign.py), one definition for
-- both: object i is the point scatter_point(i), spread over [0, 1000) x
-- [0, 997) without repeats for i < 997000; scatter_windows() gives 16
-- windows of 120 x 150 over that area and, as window 16, one holding the
-- whole area (so an object lost anywhere is seen too).  Those callers make
-- a table of the windows once and compare with window_wrong above.
CREATE OR REPLACE FUNCTION fixture.scatter_point(i bigint) RETURNS geometry
LANGUAGE sql IMMUTABLE AS $$
	SELECT ST_MakePoint((i * 7919) % 1000 + (i % 10) / 10.0, (i * 104729) % 997 + (i % 7) / 7.0)
$$;

CREATE OR REPLACE FUNCTION fixture.scatter_windows() RETURNS TABLE (id int, g geometry)
LANGUAGE sql IMMUTABLE AS $$
	SELECT k, CASE WHEN k = 16 THEN ST_MakeEnvelope(-10, -10, 2000, 2000)
			  ELSE ST_MakeEnvelope((k * 61) % 880, (k * 37) % 850,
								   (k * 61) % 880 + 120, (k * 37) % 850 + 150) END
	FROM generate_series(0, 16) k
$$;

-- festival.query(idx, w) against every row of src (rows (id, geom)): the
-- rows of src it misses, and the ids it answers that are no row of src or
-- that it answers twice; (0, 0) when the index holds exactly src within w
-- (the campaigns and the tests that fill a device pass a window holding
-- everything)
CREATE OR REPLACE FUNCTION fixture.extent_wrong(idx text, src regclass, w geometry,
												OUT missing bigint, OUT extra bigint)
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
	got bigint[] := ARRAY(SELECT id FROM festival.query(idx, w));
BEGIN
	EXECUTE format('SELECT count(*) FROM %s WHERE id <> ALL ($1)', src) INTO missing USING got;
	EXECUTE format('SELECT count(*) FROM unnest($1) g(id) WHERE NOT EXISTS (SELECT FROM %s s WHERE s.id = g.id)',
				   src) INTO extra USING got;
	extra := extra + cardinality(got) - (SELECT count(DISTINCT x) FROM unnest(got) x);
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
-- Grid files under changes (pg_regress suites gridfile and lbgrid)
--
-- The points-only grid structures go through the same differential phases:
-- a build, inserts, deletes emptying whole regions, updates, deletes of
-- nearly everything and reinserts, a flush, a close and reopen and a new
-- session, each followed by fixture.grid_verify.  The data, the query
-- geometries on halving lines and the changes of each phase are made
-- here, once; a suite names its tables and indices.  Everything is
-- generated without random(), on the extent [0, 0, 300, 300].
-------------------------------------------------------------------------------

-- fill src (id, geom) with the points an index is built from and later
-- with those inserted one at a time after the build.  src: fx_pts (a grid
-- with copies and off-grid points), a dense cluster at (150, 150), 120
-- points on halving lines and copies copies of POINT(150 150) (almost a
-- bucket: duplicate-heavy); later: 300 points spread by two primes and 10
-- copies of POINT(225 75)
CREATE OR REPLACE FUNCTION fixture.grid_points(src regclass, later regclass, copies int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('INSERT INTO %s SELECT id, geom FROM fx_pts', src);
	EXECUTE format(
		'INSERT INTO %s
		 SELECT 4000 + i, ST_MakePoint(140 + (i * 37 %% 200) / 10.0, 140 + (i * 53 %% 200) / 10.0)
		 FROM generate_series(0, 199) i', src);
	EXECUTE format(
		'INSERT INTO %s
		 SELECT 5000 + i, CASE i %% 4
			 WHEN 0 THEN ST_MakePoint(75, 1.5 * i)
			 WHEN 1 THEN ST_MakePoint(1.5 * i, 37.5)
			 WHEN 2 THEN ST_MakePoint(150, 300 - 1.5 * i)
			 ELSE ST_MakePoint(1.5 * i, 150) END
		 FROM generate_series(0, 119) i', src);
	EXECUTE format('INSERT INTO %s SELECT 6001 + i, ''POINT(150 150)'' FROM generate_series(0, $1 - 1) i', src)
	USING copies;
	EXECUTE format(
		'INSERT INTO %s
		 SELECT 7000 + i, ST_MakePoint((i * 7919 %% 3001) / 10.0, (i * 104729 %% 3001) / 10.0)
		 FROM generate_series(0, 299) i', later);
	EXECUTE format('INSERT INTO %s SELECT 7500 + i, ST_MakePoint(225, 75) FROM generate_series(0, 9) i', later);
END
$$;

-- add to fx_query, as qids first + 1 .. first + 7, query geometries on the
-- halving lines of the extent (labelled with prefix); the suite deletes
-- them at its end
CREATE OR REPLACE FUNCTION fixture.grid_queries(first int, prefix text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE
		'INSERT INTO fx_query
		 SELECT $1 + n, $2 || '': '' || label, g
		 FROM (VALUES
			 (1, ''window with edges on halving lines'', ST_MakeEnvelope(75, 75, 150, 150)),
			 (2, ''the centre point (its copies)'', ''POINT(150 150)''::geometry),
			 (3, ''a point on two halving lines'', ''POINT(75 37.5)''),
			 (4, ''window across the cluster'', ST_MakeEnvelope(145, 141, 151.3, 157)),
			 (5, ''line along a halving line'', ''LINESTRING(150 0, 150 300)''),
			 (6, ''the upper right quarter'', ST_MakeEnvelope(150, 150, 300, 300)),
			 (7, ''the extent''''s top edge'', ST_MakeEnvelope(0, 300, 300, 300))) v(n, label, g)'
	USING first, prefix;
END
$$;

-- one phase of changes, made to every index of indices (a table with
-- columns ord and name; in ord order, each object in id order) and then
-- to src, whose rows are what the indices must hold afterwards:
--   insert       the rows of later
--   delete       everything in the lower left quarter [0, 150)^2 but the
--                cluster (ids 4000..4999), and every other point
--                elsewhere: buckets and directory pages merge
--   update       every 7th point moves across regions: mirrored, onto the
--                halving line x = 75, or onto y = 150
--   delete most  every point but one in ten; aside (id, geom) keeps them
--   reinsert     every third point of aside
--   flush        festival.flush (src unchanged)
--   close        festival.close: the next call opens the index from its
--                file again (src unchanged)
-- one row per index: the calls that returned true (for a delete, the
-- objects found; for flush, 1 once it returned)
CREATE OR REPLACE FUNCTION fixture.grid_phase(phase text, indices regclass, src regclass,
											  later regclass, aside regclass)
RETURNS TABLE (name text, changed bigint)
LANGUAGE plpgsql AS $$
DECLARE
	rows_query text;	-- (id, geom, new_geom) of the phase, before src changes
	call text;
	i record;
BEGIN
	CASE phase
		WHEN 'insert' THEN
			rows_query := format('SELECT id, geom, NULL::geometry AS new_geom FROM %s', later);
			call := 'festival.insert(%L, r.id, r.geom)';
		WHEN 'delete' THEN
			rows_query := format('SELECT id, geom, NULL::geometry AS new_geom FROM %s
								  WHERE (ST_X(geom) < 150 AND ST_Y(geom) < 150 AND id NOT BETWEEN 4000 AND 4999)
										OR id %% 2 = 0', src);
			call := 'festival.delete(%L, r.id, r.geom)';
		WHEN 'update' THEN
			rows_query := format('SELECT id, geom,
										 CASE WHEN id %% 3 = 0 THEN ST_MakePoint(300 - ST_X(geom), 300 - ST_Y(geom))
											  WHEN id %% 3 = 1 THEN ST_MakePoint(75, ST_Y(geom) / 2)
											  ELSE ST_MakePoint(ST_X(geom) / 2, 150) END AS new_geom
								  FROM %s WHERE id %% 7 = 3', src);
			call := 'festival.update(%L, r.id, r.geom, r.id, r.new_geom)';
		WHEN 'delete most' THEN
			EXECUTE format('TRUNCATE %s', aside);
			EXECUTE format('INSERT INTO %s SELECT id, geom FROM %s WHERE id %% 10 <> 1', aside, src);
			rows_query := format('SELECT id, geom, NULL::geometry AS new_geom FROM %s', aside);
			call := 'festival.delete(%L, r.id, r.geom)';
		WHEN 'reinsert' THEN
			rows_query := format('SELECT id, geom, NULL::geometry AS new_geom FROM %s WHERE id %% 3 = 0', aside);
			call := 'festival.insert(%L, r.id, r.geom)';
		WHEN 'flush', 'close' THEN
			-- one call per index
			rows_query := 'SELECT 0::bigint AS id, NULL::geometry AS geom, NULL::geometry AS new_geom';
			call := CASE phase WHEN 'flush' THEN '(SELECT true FROM festival.flush(%L) f)' ELSE 'festival.close(%L)' END;
		ELSE
			RAISE EXCEPTION 'unknown phase %', phase;
	END CASE;
	-- the rows once, so that every index gets the same ones in the same order
	DROP TABLE IF EXISTS pg_temp.fixture_grid_rows;
	EXECUTE format('CREATE TEMP TABLE fixture_grid_rows AS %s', rows_query);
	FOR i IN EXECUTE format('SELECT x.ord, x.name FROM %s x ORDER BY x.ord', indices) LOOP
		name := i.name;
		EXECUTE format('SELECT count(*) FILTER (WHERE ' || call || ')
						FROM (SELECT * FROM pg_temp.fixture_grid_rows ORDER BY id) r', i.name)
		INTO changed;
		RETURN NEXT;
	END LOOP;
	CASE phase
		WHEN 'insert', 'reinsert' THEN
			EXECUTE format('INSERT INTO %s SELECT id, geom FROM pg_temp.fixture_grid_rows', src);
		WHEN 'delete', 'delete most' THEN
			EXECUTE format('DELETE FROM %s WHERE id IN (SELECT id FROM pg_temp.fixture_grid_rows)', src);
		WHEN 'update' THEN
			EXECUTE format('UPDATE %s s SET geom = r.new_geom FROM pg_temp.fixture_grid_rows r WHERE s.id = r.id', src);
		WHEN 'flush', 'close' THEN
			NULL;	-- the objects stay
	END CASE;
	DROP TABLE pg_temp.fixture_grid_rows;
END
$$;

-- every index of indices (columns ord, name and same_as: the index it
-- must equal, or NULL) against brute force over src after a phase; one
-- row per index:
--   cases, answers       predicate x query cases of qids, brute-force answers
--   missing, extra       answers festival.query lost or invented (fx_compare)
--   dw_answers, dw_wrong ST_DWithin answers for every query of qids and d
--                        of distances, and those festival.query(...,
--                        'dwithin', distance => d) lost or invented (NULL
--                        when no distances are given)
--   knn_wrong            festival.knn (k = 1, 10, 100 at knn_points, where
--                        fx_pts has ties) against ORDER BY ST_Distance, id
--   batch_wrong          festival.query_batch over the queries
--   check_rows           rows of festival.check()
--   entries_exact        the index holds as many entries as src has rows
--   height, level1       its height and the entries of its level-1 nodes
--                        (a grid file's bucket references)
--   same                 same = 'nodes': every node of the index equals
--                        those of same_as (fixture.nodes: node by node,
--                        entry by entry); same = 'entries': the leaf
--                        entries do (fixture.entries)
-- brute (pred, qid, id) receives the brute-force answers.  The row type
-- is named so that a suite can wrap the call in a function of its own.
DO $$
BEGIN
	CREATE TYPE fixture.grid_check AS (
		phase text, index text, cases bigint, answers numeric, missing numeric, extra numeric,
		dw_answers bigint, dw_wrong bigint, knn_wrong bigint, batch_wrong bigint, check_rows bigint,
		entries_exact boolean, height int, level1 bigint, same_as boolean);
EXCEPTION WHEN duplicate_object THEN
	NULL;	-- loaded again into the same database
END
$$;
CREATE OR REPLACE FUNCTION fixture.grid_verify(phase text, indices regclass, src regclass,
											   brute regclass, qids int[], same text,
											   distances float8[] DEFAULT NULL,
											   knn_points geometry[] DEFAULT ARRAY['POINT(45 45)', 'POINT(150 150)',
												   'POINT(70 30)', 'POINT(-10 310)', 'POINT(225 75)']::geometry[])
RETURNS SETOF fixture.grid_check
LANGUAGE plpgsql AS $$
DECLARE
	r fixture.grid_check;
	i record;
	src_rows bigint;
	walk text := CASE same WHEN 'nodes' THEN 'fixture.nodes' WHEN 'entries' THEN 'fixture.entries' END;
BEGIN
	IF walk IS NULL THEN
		RAISE EXCEPTION 'same must be ''nodes'' or ''entries''';
	END IF;
	EXECUTE format('TRUNCATE %s', brute);
	EXECUTE format('INSERT INTO %s SELECT * FROM fx_brute(%L, %L)', brute, src, qids);
	EXECUTE format('SELECT count(*) FROM %s', src) INTO src_rows;
	DROP TABLE IF EXISTS pg_temp.fixture_grid_dw;
	IF distances IS NOT NULL THEN
		EXECUTE format('CREATE TEMP TABLE fixture_grid_dw AS
						SELECT q.qid, d, s.id FROM fx_query q CROSS JOIN unnest($2) d
						JOIN %s s ON ST_DWithin(s.geom, q.g, d) WHERE q.qid = ANY ($1)', src)
		USING qids, distances;
	END IF;
	FOR i IN EXECUTE format('SELECT x.ord, x.name, x.same_as FROM %s x ORDER BY x.ord', indices) LOOP
		r.phase := phase;
		r.index := i.name;
		SELECT count(*), sum(c.brute), sum(c.missing), sum(c.extra) INTO r.cases, r.answers, r.missing, r.extra
		FROM fx_compare(i.name, brute, qids) c;
		r.dw_answers := NULL;
		r.dw_wrong := NULL;
		IF distances IS NOT NULL THEN
			EXECUTE 'SELECT count(*) FROM pg_temp.fixture_grid_dw' INTO r.dw_answers;
			EXECUTE 'WITH f AS (SELECT q.qid, d, r.id FROM fx_query q CROSS JOIN unnest($2) d
								CROSS JOIN LATERAL festival.query($3, q.g, ''dwithin'', distance => d) r
								WHERE q.qid = ANY ($1))
					 SELECT (SELECT count(*) FROM (TABLE f EXCEPT ALL TABLE pg_temp.fixture_grid_dw) x)
							+ (SELECT count(*) FROM (TABLE pg_temp.fixture_grid_dw EXCEPT ALL TABLE f) x)'
			INTO r.dw_wrong USING qids, distances, i.name;
		END IF;
		r.knn_wrong := fixture.knn_wrong(i.name, src, knn_points);
		r.batch_wrong := fixture.batch_wrong(i.name, brute, qids);
		r.check_rows := (SELECT count(*) FROM festival.check(i.name));
		r.entries_exact := (festival.stats(i.name)->>'entries')::bigint = src_rows;
		r.height := (festival.stats(i.name)->>'height')::int;
		r.level1 := (SELECT count(*) FROM fixture.nodes(i.name) n WHERE n.level = 1);
		r.same_as := NULL;
		IF i.same_as IS NOT NULL THEN
			EXECUTE format('SELECT NOT EXISTS ((SELECT * FROM %1$s($1) EXCEPT ALL SELECT * FROM %1$s($2))
											   UNION ALL
											   (SELECT * FROM %1$s($2) EXCEPT ALL SELECT * FROM %1$s($1)))', walk)
			INTO r.same_as USING i.name, i.same_as;
		END IF;
		RETURN NEXT r;
	END LOOP;
	DROP TABLE IF EXISTS pg_temp.fixture_grid_dw;
END
$$;

-- the regions of a grid index's dump (festival.dump), for each index of
-- names: its nodes, those at level 0, those with a region; the regions
-- that do not cover their node's MBR or are not covered by their parent's
-- region; the directory pages, and those whose children's regions differ
-- in area, or in the area of their union, from the page's own region (a
-- gap or an overlap).  The snapshots are deleted again.
CREATE OR REPLACE FUNCTION fixture.grid_regions(names text[])
RETURNS TABLE (name text, nodes bigint, leaves bigint, with_region bigint, outside_region bigint,
			   outside_parent bigint, directory_pages bigint, area_differs bigint, union_differs bigint)
LANGUAGE plpgsql AS $$
DECLARE
	sid bigint;
BEGIN
	FOR i IN 1 .. cardinality(names) LOOP
		name := names[i];
		sid := festival.dump(names[i], NULL);
		SELECT count(*), count(*) FILTER (WHERE n.level = 0),
			   count(*) FILTER (WHERE n.region IS NOT NULL),
			   count(*) FILTER (WHERE n.region IS NOT NULL AND NOT ST_Covers(n.region, n.mbr)),
			   count(*) FILTER (WHERE p.page IS NOT NULL AND p.region IS NOT NULL
								AND NOT ST_Covers(p.region, n.region))
		INTO nodes, leaves, with_region, outside_region, outside_parent
		FROM festival.index_node n
		LEFT JOIN festival.index_node p ON p.snapshot_id = n.snapshot_id AND p.page = n.parent
		WHERE n.snapshot_id = sid;
		SELECT count(*),
			   count(*) FILTER (WHERE abs(s.area - ST_Area(p.region)) > 1e-6 * ST_Area(p.region)),
			   count(*) FILTER (WHERE abs(s.union_area - ST_Area(p.region)) > 1e-6 * ST_Area(p.region))
		INTO directory_pages, area_differs, union_differs
		FROM festival.index_node p
		JOIN (SELECT c.parent, sum(ST_Area(c.region)) AS area, ST_Area(ST_Union(c.region)) AS union_area
			  FROM festival.index_node c WHERE c.snapshot_id = sid AND c.parent IS NOT NULL
			  GROUP BY c.parent) s ON s.parent = p.page
		WHERE p.snapshot_id = sid AND p.level > 0;
		DELETE FROM festival.index_snapshot WHERE snapshot_id = sid;
		RETURN NEXT;
	END LOOP;
END
$$;

-- an index idx (created by the caller, without source) over an awkward
-- extent whose halving lines are no exact binary fractions, [-0.3, -1.7,
-- 0.7, 1.1], receives a 23 x 23 grid of points reaching its corners and
-- edges, then loses them all again: one row with the points inserted,
-- those a query of their own location does not find, the rows of
-- check() and the height when full; the points a window finds and those
-- PostGIS finds in it; the points deleted and those left; and, when
-- empty, the height, the free pages, the logical buckets (LB-Grid) and
-- the rows of check()
CREATE OR REPLACE FUNCTION fixture.grid_awkward_extent(idx text)
RETURNS TABLE (inserted bigint, not_found bigint, check_rows bigint, height int,
			   in_window bigint, window_brute bigint, deleted bigint, left_over bigint,
			   empty_height int, empty_free_pages bigint, empty_buckets bigint, empty_check_rows bigint)
LANGUAGE plpgsql AS $$
BEGIN
	DROP TABLE IF EXISTS pg_temp.fixture_awkward;
	CREATE TEMP TABLE fixture_awkward AS
	SELECT i::bigint AS id, ST_MakePoint(-0.3 + (i % 23) / 22.0, -1.7 + (i / 23 % 23) * 2.8 / 22.0) AS geom
	FROM generate_series(0, 528) i;
	EXECUTE 'SELECT count(*) FILTER (WHERE festival.insert($1, id, geom)) FROM pg_temp.fixture_awkward'
	INTO inserted USING idx;
	EXECUTE 'SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM festival.query($1, p.geom) q WHERE q.id = p.id))
			 FROM pg_temp.fixture_awkward p'
	INTO not_found USING idx;
	check_rows := (SELECT count(*) FROM festival.check(idx));
	height := (festival.stats(idx)->>'height')::int;
	in_window := (SELECT count(*) FROM festival.query(idx, ST_MakeEnvelope(-0.1, 0, 0.7, 1.1)));
	EXECUTE 'SELECT count(*) FROM pg_temp.fixture_awkward WHERE geom && ST_MakeEnvelope(-0.1, 0, 0.7, 1.1)'
	INTO window_brute;
	EXECUTE 'SELECT count(*) FILTER (WHERE festival.delete($1, id, geom)) FROM pg_temp.fixture_awkward'
	INTO deleted USING idx;
	left_over := (SELECT count(*) FROM festival.query(idx, ST_MakeEnvelope(-0.3, -1.7, 0.7, 1.1)));
	empty_height := (festival.stats(idx)->>'height')::int;
	empty_free_pages := (festival.stats(idx)->>'free_pages')::bigint;
	empty_buckets := (festival.stats(idx)->'config'->'derived'->>'logical_buckets')::bigint;
	empty_check_rows := (SELECT count(*) FROM festival.check(idx));
	DROP TABLE pg_temp.fixture_awkward;
	RETURN NEXT;
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
