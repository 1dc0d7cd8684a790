--
-- xbrtree: the xBR+-tree (structure 'xbrtree', points only) under every
-- framework (none, FAST, eFIND), built one point at a time ('insert') and
-- by bulk loading ('bulk').
--
-- All six indices receive the same modifications in the same order: a
-- build, inserts, deletes clearing whole quadrants (so that leaves and
-- internal nodes merge), updates, a close and reopen in the same session
-- and a new session (\c).  After every phase the answers of festival.query
-- for every predicate and the point query geometries (fx_query qid >= 100,
-- and the quadrant-border queries added below) must equal PostGIS brute
-- force over xb_src, festival.check() must return no rows, and the trees
-- under FAST and eFIND must equal the write-through tree of the same build
-- method node by node, entry positions included (eFIND returns merged
-- nodes in the structure's entry order: (x, y, id) in leaves, quadrant
-- addresses above).
--
-- Pages of 1024 bytes (41 points per leaf, 17 entries per internal node)
-- make trees of 3 and 4 levels; the extent [0, 0, 300, 300] puts quadrant
-- borders at 150, 75, 225, 37.5..., where many points lie.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
-- the logs of FAST and eFIND are synced at flushes only (speed; crash
-- safety is tested elsewhere)
SET festival.log_sync = never;

SELECT festival.create_device('xb_dev', io => 'buffered');

-- the data: fx_pts (a grid with copies and off-grid points), a dense
-- cluster around the centre of the extent, points on quadrant borders and
-- 20 copies of the centre point
CREATE TABLE xb_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO xb_src SELECT id, geom FROM fx_pts;
INSERT INTO xb_src
SELECT 4000 + i, ST_MakePoint(140 + (i * 37 % 200) / 10.0, 140 + (i * 53 % 200) / 10.0)
FROM generate_series(0, 199) i;
INSERT INTO xb_src
SELECT 5000 + i, CASE i % 4
	WHEN 0 THEN ST_MakePoint(75, 1.5 * i)
	WHEN 1 THEN ST_MakePoint(1.5 * i, 37.5)
	WHEN 2 THEN ST_MakePoint(150, 300 - 1.5 * i)
	ELSE ST_MakePoint(1.5 * i, 262.5) END
FROM generate_series(0, 119) i;
INSERT INTO xb_src SELECT 6001 + i, 'POINT(150 150)' FROM generate_series(0, 19) i;

-- inserted one at a time after the build
CREATE TABLE xb_later (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO xb_later
SELECT 7000 + i, ST_MakePoint((i * 7919 % 3001) / 10.0, (i * 104729 % 3001) / 10.0)
FROM generate_series(0, 299) i;
INSERT INTO xb_later SELECT 7500 + i, ST_MakePoint(150, 75) FROM generate_series(0, 9) i;
SELECT (SELECT count(*) FROM xb_src) AS built_points, (SELECT count(*) FROM xb_later) AS later_points,
	   (SELECT count(DISTINCT geom) FROM xb_src) AS built_locations;

-- query geometries on quadrant borders (removed at the end)
INSERT INTO fx_query VALUES
	(901, 'xbr: window with edges on quadrant borders', ST_MakeEnvelope(75, 75, 150, 150)),
	(902, 'xbr: the centre point (20 copies)', 'POINT(150 150)'),
	(903, 'xbr: a point on a border', 'POINT(75 37.5)'),
	(904, 'xbr: window across the cluster', ST_MakeEnvelope(145, 141, 151.3, 157)),
	(905, 'xbr: line along a border', 'LINESTRING(150 0, 150 300)'),
	(906, 'xbr: the upper right quadrant', ST_MakeEnvelope(150, 150, 300, 300)),
	(907, 'xbr: empty window inside the extent', ST_MakeEnvelope(1, 1, 4, 4));

CREATE TABLE xb_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, method text NOT NULL,
					   options jsonb NOT NULL);
INSERT INTO xb_index VALUES
	(1, 'xb_none_ins', 'insert', '{"page_size": 1024}'),
	(2, 'xb_fast_ins', 'insert', '{"page_size": 1024, "framework": "fast", "buffer_size": 16384,
		"flushing_unit": 4, "flushing_policy": "fast_star"}'),
	(3, 'xb_efind_ins', 'insert', '{"page_size": 1024, "framework": "efind", "buffer_size": 16384,
		"flushing_unit": 4, "flushing_policy": "mhao", "read_buffer_policy": "lru",
		"read_buffer_percent": 20, "temporal_control": "both"}'),
	(4, 'xb_none_bulk', 'bulk', '{"page_size": 1024}'),
	(5, 'xb_fast_bulk', 'bulk', '{"page_size": 1024, "framework": "fast", "buffer_size": 16384,
		"flushing_unit": 3, "flushing_policy": "fast"}'),
	(6, 'xb_efind_bulk', 'bulk', '{"page_size": 1024, "framework": "efind", "buffer_size": 16384,
		"flushing_unit": 3, "flushing_policy": "mh", "read_buffer_policy": "s2q",
		"read_buffer_percent": 25, "temporal_control": "both"}');

-- the extent is taken from the source
SELECT name, festival.create_index(name, 'xbrtree', 'xb_dev', options, 'xb_src', 'id', 'geom') > 0 AS created
FROM xb_index ORDER BY ord;
SELECT festival.stats('xb_none_ins')->'config'->'options'->'extent' AS extent,
	   festival.stats('xb_none_ins')->'config'->'derived' AS derived;

-------------------------------------------------------------------------------
-- Verification after each phase
-------------------------------------------------------------------------------
CREATE TABLE xb_qids AS SELECT array_agg(qid ORDER BY qid) AS qids FROM fx_query WHERE qid >= 100;

CREATE FUNCTION xb_verify(phase text)
RETURNS TABLE (phase_ text, index text, cases bigint, answers numeric, missing numeric,
			   extra numeric, check_rows bigint, height int, leaves bigint, same_as_none boolean)
LANGUAGE plpgsql AS $$
DECLARE
	q int[] := (SELECT qids FROM xb_qids);
BEGIN
	DROP TABLE IF EXISTS xb_brute;
	CREATE TEMP TABLE xb_brute AS SELECT * FROM fx_brute('xb_src', q);
	RETURN QUERY
	SELECT phase, i.name, c.cases, c.answers, c.missing, c.extra,
		   (SELECT count(*) FROM festival.check(i.name)),
		   (festival.stats(i.name)->>'height')::int,
		   (SELECT count(*) FROM fixture.nodes(i.name) n WHERE n.level = 1),
		   CASE WHEN i.name LIKE 'xb_none%' THEN NULL ELSE
			   NOT EXISTS ((SELECT * FROM fixture.nodes(i.name)
							EXCEPT ALL SELECT * FROM fixture.nodes('xb_none_' || i.method_tag))
						   UNION ALL
						   (SELECT * FROM fixture.nodes('xb_none_' || i.method_tag)
							EXCEPT ALL SELECT * FROM fixture.nodes(i.name))) END
	FROM (SELECT x.ord, x.name, CASE x.method WHEN 'insert' THEN 'ins' ELSE 'bulk' END AS method_tag
		  FROM xb_index x) i
	CROSS JOIN LATERAL (SELECT count(*) AS cases, sum(f.brute) AS answers,
							   sum(f.missing) AS missing, sum(f.extra) AS extra
						FROM fx_compare(i.name, 'xb_brute', q) f) c
	ORDER BY i.ord;
END
$$;

-------------------------------------------------------------------------------
-- Phase 1: build
-------------------------------------------------------------------------------
SELECT name, festival.build(name, method) AS built FROM xb_index ORDER BY ord;
SELECT * FROM xb_verify('build');

-------------------------------------------------------------------------------
-- Phase 2: inserts (one at a time, the same order for every index)
-------------------------------------------------------------------------------
SELECT i.name, count(*) FILTER (WHERE s.ok) AS inserted
FROM xb_index i CROSS JOIN LATERAL
	(SELECT festival.insert(i.name, l.id, l.geom) AS ok
	 FROM (SELECT * FROM xb_later ORDER BY id) l) s
GROUP BY i.ord, i.name ORDER BY i.ord;
INSERT INTO xb_src SELECT * FROM xb_later;
SELECT * FROM xb_verify('insert');

-------------------------------------------------------------------------------
-- Phase 3: deletes: everything in the lower left quadrant [0, 150)^2 but
-- the cluster, and every other point elsewhere: leaves empty out and merge
-------------------------------------------------------------------------------
CREATE TABLE xb_gone AS
SELECT id, geom FROM xb_src
WHERE (ST_X(geom) < 150 AND ST_Y(geom) < 150 AND id NOT BETWEEN 4000 AND 4999) OR id % 2 = 0;
SELECT i.name, count(*) FILTER (WHERE s.ok) AS deleted
FROM xb_index i CROSS JOIN LATERAL
	(SELECT festival.delete(i.name, g.id, g.geom) AS ok
	 FROM (SELECT * FROM xb_gone ORDER BY id) g) s
GROUP BY i.ord, i.name ORDER BY i.ord;
DELETE FROM xb_src WHERE id IN (SELECT id FROM xb_gone);
-- deleting what is not there
SELECT festival.delete('xb_none_ins', 1, 'POINT(0 0)') AS deleted_again,
	   festival.delete('xb_none_ins', 3, 'POINT(500 500)') AS outside_extent;
SELECT * FROM xb_verify('delete');

-------------------------------------------------------------------------------
-- Phase 4: updates: points move across quadrants, some onto borders and
-- into the emptied quadrant
-------------------------------------------------------------------------------
CREATE TABLE xb_moves AS
SELECT id, geom AS old_geom,
	   CASE WHEN id % 3 = 0 THEN ST_MakePoint(300 - ST_X(geom), 300 - ST_Y(geom))
			WHEN id % 3 = 1 THEN ST_MakePoint(75, ST_Y(geom) / 2)
			ELSE ST_MakePoint(ST_X(geom) / 2, 150) END AS new_geom
FROM xb_src WHERE id % 7 = 3;
SELECT i.name, count(*) FILTER (WHERE s.ok) AS updated
FROM xb_index i CROSS JOIN LATERAL
	(SELECT festival.update(i.name, m.id, m.old_geom, m.id, m.new_geom) AS ok
	 FROM (SELECT * FROM xb_moves ORDER BY id) m) s
GROUP BY i.ord, i.name ORDER BY i.ord;
UPDATE xb_src s SET geom = m.new_geom FROM xb_moves m WHERE s.id = m.id;
SELECT * FROM xb_verify('update');

-------------------------------------------------------------------------------
-- Phase 5: delete nearly everything, then insert again: trees shrink and
-- regrow in emptied space
-------------------------------------------------------------------------------
CREATE TABLE xb_gone2 AS SELECT id, geom FROM xb_src WHERE id % 10 <> 1;
SELECT i.name, count(*) FILTER (WHERE s.ok) AS deleted
FROM xb_index i CROSS JOIN LATERAL
	(SELECT festival.delete(i.name, g.id, g.geom) AS ok
	 FROM (SELECT * FROM xb_gone2 ORDER BY id) g) s
GROUP BY i.ord, i.name ORDER BY i.ord;
DELETE FROM xb_src WHERE id IN (SELECT id FROM xb_gone2);
SELECT * FROM xb_verify('delete most');
SELECT i.name, count(*) FILTER (WHERE s.ok) AS inserted
FROM xb_index i CROSS JOIN LATERAL
	(SELECT festival.insert(i.name, g.id, g.geom) AS ok
	 FROM (SELECT * FROM xb_gone2 WHERE id % 3 = 0 ORDER BY id) g) s
GROUP BY i.ord, i.name ORDER BY i.ord;
INSERT INTO xb_src SELECT * FROM xb_gone2 WHERE id % 3 = 0;
SELECT * FROM xb_verify('reinsert');

-------------------------------------------------------------------------------
-- Phase 6: close and reopen in the same session, then a new session
-------------------------------------------------------------------------------
SELECT count(*) FILTER (WHERE closed) AS closed
FROM (SELECT festival.close(name) AS closed FROM xb_index) s;
SELECT name, (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(0, 0, 300, 300))) AS found,
	   (SELECT count(*) FROM xb_src) AS expected
FROM xb_index ORDER BY ord;
\c
SET client_min_messages = warning;
SET festival.log_sync = never;
SELECT * FROM xb_verify('new session');

-------------------------------------------------------------------------------
-- Refused calls
-------------------------------------------------------------------------------
\set VERBOSITY default
-- a geometry that is not a point, inserted and built
SELECT festival.insert('xb_none_ins', 9001, 'LINESTRING(10 10, 20 20)');
CREATE TABLE xb_mixed (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO xb_mixed VALUES (1, 'POINT(1 1)'), (2, 'POLYGON((0 0, 5 0, 5 5, 0 0))');
SELECT festival.create_index('xb_mixed_idx', 'xbrtree', 'xb_dev', '{}', 'xb_mixed', 'id', 'geom') > 0 AS created;
-- no such build method
SELECT festival.build('xb_mixed_idx', 'str');
SELECT festival.build('xb_mixed_idx');
SELECT festival.build('xb_mixed_idx', 'bulk');
-- a point outside the extent
SELECT festival.insert('xb_none_ins', 9002, 'POINT(300.5 10)');
CREATE TABLE xb_out (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO xb_out VALUES (1, 'POINT(1 1)'), (2, 'POINT(150 50)');
SELECT festival.create_index('xb_small', 'xbrtree', 'xb_dev', '{"extent": [0, 0, 100, 100]}',
							 'xb_out', 'id', 'geom') > 0 AS created;
SELECT festival.build('xb_small', 'bulk');
-- no source and no extent, and an empty extent
SELECT festival.create_index('xb_noext', 'xbrtree', 'xb_dev');
SELECT festival.create_index('xb_noext', 'xbrtree', 'xb_dev', '{"extent": [0, 0, 0, 10]}');
-- more copies of one point than a leaf holds
CREATE TABLE xb_copies AS SELECT i::bigint AS id, 'POINT(5 5)'::geometry AS geom FROM generate_series(1, 60) i;
SELECT festival.create_index('xb_copies_idx', 'xbrtree', 'xb_dev', '{"page_size": 1024, "extent": [0, 0, 10, 10]}',
							 'xb_copies', 'id', 'geom') > 0 AS created;
SELECT festival.build('xb_copies_idx');
SELECT festival.build('xb_copies_idx', 'bulk');
\set VERBOSITY terse
-- the refused calls changed nothing
SELECT count(*) AS check_rows, (SELECT count(*) FROM festival.query('xb_none_ins', ST_MakeEnvelope(0, 0, 300, 300))) AS found,
	   (SELECT count(*) FROM xb_src) AS expected
FROM festival.check('xb_none_ins');

-- an index without source, with an explicit extent: insert, query, delete
SELECT festival.create_index('xb_free', 'xbrtree', 'xb_dev', '{"extent": [-10, -10, 10, 10], "page_size": 1024}') > 0 AS created;
SELECT count(*) FILTER (WHERE festival.insert('xb_free', i, ST_MakePoint((i % 21) - 10, (i / 21 % 21) - 10))) AS inserted
FROM generate_series(0, 440) i;
SELECT count(*) AS in_window,
	   (SELECT count(*) FROM generate_series(0, 440) i
		WHERE (i % 21) - 10 BETWEEN -3 AND 4 AND (i / 21 % 21) - 10 BETWEEN 0 AND 10) AS expected
FROM festival.query('xb_free', ST_MakeEnvelope(-3, 0, 4, 10));
SELECT count(*) FILTER (WHERE festival.delete('xb_free', i, ST_MakePoint((i % 21) - 10, (i / 21 % 21) - 10))) AS deleted
FROM generate_series(0, 440) i;
SELECT count(*) AS left_over FROM festival.query('xb_free', ST_MakeEnvelope(-10, -10, 10, 10));
SELECT (festival.stats('xb_free')->>'height')::int AS height, count(*) AS check_rows FROM festival.check('xb_free');

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(festival.drop_index(name)) AS dropped
FROM (SELECT name FROM xb_index
	  UNION ALL VALUES ('xb_mixed_idx'), ('xb_small'), ('xb_copies_idx'), ('xb_free')) n;
SELECT festival.drop_device('xb_dev');
DELETE FROM fx_query WHERE qid BETWEEN 901 AND 907;
DROP FUNCTION xb_verify(text);
DROP TABLE xb_src, xb_later, xb_index, xb_qids, xb_gone, xb_moves, xb_gone2, xb_mixed, xb_copies, xb_out;
