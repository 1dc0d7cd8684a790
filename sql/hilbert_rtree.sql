--
-- hilbert_rtree: the Hilbert R-tree (structure 'hilbert', Kamel & Faloutsos
-- 1994) with 1, 2 and 3 cooperating siblings, under the frameworks none,
-- FAST and eFIND, built one insert at a time and by Hilbert-sorted packing
-- (build method 'hilbert').
--
-- All indices share one source table, hr_src (points, lines, polygons,
-- collections, copies, curves: fx_src), and receive the same modifications
-- in the same order: a build, inserts, deletes (enough to make nodes
-- underflow, borrow and merge), updates, a close and reopen and a new
-- session (\c).  After every phase the answers of festival.query for every
-- predicate and a selection of query geometries must equal PostGIS brute
-- force over hr_src, festival.check() (which verifies the MBRs, the fill,
-- the Hilbert values of the leaf entries, the LHVs and the Hilbert order
-- inside nodes and across siblings) must return no rows, and the ids in
-- the leaves must be exactly those of hr_src.
--
-- Then the extent: taken from the source when not given, given
-- explicitly, objects outside it (clamped onto its border) still answered
-- right, and the errors for bad extents, a missing extent and a build
-- method the structure does not offer.
--
-- Pages of 1024 bytes: M = 20, m = 8 in leaves, M = 15, m = 6 above.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('hr_dev', io => 'buffered');

-- a quarter of fx_src is built, an eighth inserted afterwards
CREATE TABLE hr_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO hr_src SELECT id, geom FROM fx_src WHERE id % 4 = 1 OR id > 8000;
CREATE TABLE hr_later AS SELECT id, geom FROM fx_src WHERE id % 8 = 2 AND id < 8000;
SELECT (SELECT count(*) FROM hr_src) AS built_objects, (SELECT count(*) FROM hr_later) AS later_objects;

-------------------------------------------------------------------------------
-- The configurations
-------------------------------------------------------------------------------
CREATE TABLE hr_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, method text NOT NULL,
					   options jsonb NOT NULL);
INSERT INTO hr_index VALUES
	( 1, 'hr_none_s1', 'insert', '{"page_size": 1024, "siblings": 1}'),
	( 2, 'hr_none_s2', 'insert', '{"page_size": 1024}'),
	( 3, 'hr_none_s3', 'insert', '{"page_size": 1024, "siblings": 3}'),
	( 4, 'hr_fast_s1', 'insert', '{"page_size": 1024, "siblings": 1, "framework": "fast",
		"buffer_size": 16384, "flushing_unit": 3}'),
	( 5, 'hr_fast_s2', 'insert', '{"page_size": 1024, "framework": "fast",
		"buffer_size": 16384, "flushing_policy": "flush_all"}'),
	( 6, 'hr_fast_s3', 'insert', '{"page_size": 1024, "siblings": 3, "framework": "fast",
		"buffer_size": 12288, "log_size": 8192}'),
	( 7, 'hr_efind_s1', 'insert', '{"page_size": 1024, "siblings": 1, "framework": "efind",
		"buffer_size": 16384, "flushing_unit": 2, "flushing_policy": "mhao"}'),
	( 8, 'hr_efind_s2', 'insert', '{"page_size": 1024, "framework": "efind",
		"buffer_size": 16384, "read_buffer_policy": "lru", "read_buffer_percent": 30}'),
	( 9, 'hr_efind_s3', 'insert', '{"page_size": 1024, "siblings": 3, "framework": "efind",
		"buffer_size": 12288, "log_size": 6000, "flushing_policy": "mha"}'),
	-- Hilbert-sorted packing
	(10, 'hr_pack_none', 'hilbert', '{"page_size": 1024, "siblings": 1}'),
	(11, 'hr_pack_fast', 'hilbert', '{"page_size": 1024, "framework": "fast", "buffer_size": 16384}'),
	(12, 'hr_pack_efind', 'hilbert', '{"page_size": 1024, "siblings": 3, "framework": "efind",
		"buffer_size": 16384}'),
	-- tiny nodes (M = 5, m = 3 in leaves; M = 4, m = 2 above): deep trees,
	-- splits and merges at every level; and the default page size
	(13, 'hr_deep_s1', 'insert', '{"page_size": 1024, "max_fill": 27, "min_fill": 50, "siblings": 1}'),
	(14, 'hr_deep_efind', 'insert', '{"page_size": 1024, "max_fill": 27, "min_fill": 50, "siblings": 3,
		"framework": "efind", "buffer_size": 16384}'),
	(15, 'hr_default', 'hilbert', '{}');

SELECT ord, name, festival.create_index(name, 'hilbert', 'hr_dev', options, 'hr_src') > 0 AS created
FROM hr_index ORDER BY ord;

-- the stored options hold what was asked, and the source's extent
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE i.options <@ c.options) AS options_kept,
	   count(*) FILTER (WHERE c.options->'extent' = '[-20, -20, 420, 420]') AS source_extent
FROM hr_index i JOIN festival.index c USING (name);
SELECT (SELECT ST_Extent(geom) FROM hr_src) AS source_extent;

-- capacities derived from the page size, fill and siblings
SELECT name, festival.stats(name)->'config'->'derived' AS derived
FROM hr_index WHERE ord IN (2, 13, 15) ORDER BY ord;

-- the ids in the leaves of an index
CREATE FUNCTION hr_ids(idx text) RETURNS TABLE (id bigint)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level = 0
$$;

-- one row per phase: the brute force's answers and the indices that agree
-- with it in every way (answers, check, leaf ids), then a row for each
-- index that does not (none)
CREATE TABLE hr_brute (pred text, qid int, id bigint);
CREATE FUNCTION hr_verify(phase text)
RETURNS TABLE (what text, name text, answers numeric, missing numeric, extra numeric,
			   check_rows bigint, other_ids bigint, error text)
LANGUAGE plpgsql AS $$
DECLARE
	qids int[] := ARRAY[2, 8, 12, 21, 29, 33];
	i record;
	agreeing int := 0;
	brute numeric;
BEGIN
	TRUNCATE hr_brute;
	INSERT INTO hr_brute SELECT * FROM fx_brute('hr_src', qids);
	brute := (SELECT count(*) FROM hr_brute);
	what := phase || ': brute force';
	answers := brute;
	RETURN NEXT;
	answers := NULL;
	FOR i IN SELECT * FROM hr_index ORDER BY ord LOOP
		name := i.name;
		error := NULL;
		BEGIN
			SELECT sum(c.festival), sum(c.missing), sum(c.extra) INTO answers, missing, extra
			FROM fx_compare(i.name, 'hr_brute', qids) c;
			check_rows := (SELECT count(*) FROM festival.check(i.name));
			WITH e AS MATERIALIZED (SELECT * FROM hr_ids(i.name))
			SELECT (SELECT count(*) FROM (TABLE e EXCEPT ALL SELECT id FROM hr_src) d)
				   + (SELECT count(*) FROM (SELECT id FROM hr_src EXCEPT ALL TABLE e) d)
			INTO other_ids;
		EXCEPTION WHEN OTHERS THEN
			error := SQLERRM;
		END;
		IF error IS NULL AND answers = brute AND missing = 0 AND extra = 0
		   AND check_rows = 0 AND other_ids = 0 THEN
			agreeing := agreeing + 1;
		ELSE
			what := phase || ': WRONG';
			RETURN NEXT;
		END IF;
	END LOOP;
	what := phase || ': indices agreeing';
	name := NULL;
	answers := agreeing;
	missing := NULL;
	extra := NULL;
	check_rows := NULL;
	other_ids := NULL;
	error := NULL;
	RETURN NEXT;
END
$$;

-------------------------------------------------------------------------------
-- Phase 1: build, one insert at a time or by Hilbert-sorted packing
-------------------------------------------------------------------------------
SELECT method, count(*) AS indices, min(built) AS min_built, max(built) AS max_built
FROM (SELECT method, festival.build(name, method) AS built FROM hr_index) s
GROUP BY method ORDER BY method;
SELECT * FROM hr_verify('build');
-- packed leaves are full: 1269 entries in 63 leaves of M = 20 and one of 9
-- (at least m = 8, so it is kept as it is)
CREATE FUNCTION hr_leaves(idx text) RETURNS TABLE (page bigint, entries bigint)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT t.page, count(*) FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n
	WHERE n.level = 0 GROUP BY t.page
$$;
SELECT name, festival.stats(name)->>'height' AS height, count(*) AS leaves,
	   count(*) FILTER (WHERE l.entries = 20) AS full_leaves, min(l.entries) AS fewest, sum(l.entries) AS entries
FROM hr_index i CROSS JOIN LATERAL hr_leaves(i.name) l
WHERE i.method = 'hilbert' AND i.name <> 'hr_default' GROUP BY i.ord, i.name ORDER BY i.ord;

-------------------------------------------------------------------------------
-- Phase 2: insert the rest, one at a time, in a mixed order
-------------------------------------------------------------------------------
INSERT INTO hr_src SELECT id, geom FROM hr_later;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.insert(i.name, l.id, l.geom) AS ok
	  FROM hr_later l CROSS JOIN hr_index i
	  ORDER BY (l.id * 7919) % 10007, l.id, i.ord) s;
SELECT * FROM hr_verify('insert');

-------------------------------------------------------------------------------
-- Phase 3: delete three objects in five: nodes underflow, borrow from
-- their siblings and merge
-------------------------------------------------------------------------------
CREATE TABLE hr_gone AS SELECT id, geom FROM hr_src WHERE id % 5 IN (0, 1, 3) AND id < 8000;
DELETE FROM hr_src WHERE id IN (SELECT id FROM hr_gone);
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete(i.name, g.id, g.geom) AS ok
	  FROM hr_gone g CROSS JOIN hr_index i
	  ORDER BY (g.id * 31) % 10007, g.id, i.ord) s;
-- deleting again finds nothing
SELECT count(*) FILTER (WHERE festival.delete(i.name, g.id, g.geom)) AS deleted_twice
FROM hr_gone g CROSS JOIN hr_index i WHERE g.id % 7 = 0;
SELECT * FROM hr_verify('delete');
-- every index freed pages (merges of s + 1 nodes into s, a shorter tree)
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'nodes_freed')::bigint > 0) AS freed_pages,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'splits_leaf')::bigint > 0) AS split_leaves
FROM hr_index;
-- the small write buffers of FAST and eFIND flushed when full, and eFIND
-- merged buffered entries with stored nodes
SELECT options->>'framework' AS framework, count(*) AS indices,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'flushes')::bigint > 2) AS flushed_when_full,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'merges')::bigint > 0) AS merged
FROM hr_index WHERE options ? 'framework' GROUP BY 1 ORDER BY 1;

-------------------------------------------------------------------------------
-- Phase 4: update one object in three: moved by (3, -2), one in two of them
-- under a new id; then the deleted ones come back
-------------------------------------------------------------------------------
CREATE TABLE hr_moved AS
	SELECT id AS old_id, geom AS old_geom,
		   CASE WHEN id % 2 = 0 THEN id + 100000 ELSE id END AS new_id,
		   ST_Translate(geom, 3, -2) AS new_geom
	FROM hr_src WHERE id % 3 = 0;
DELETE FROM hr_src WHERE id IN (SELECT old_id FROM hr_moved);
INSERT INTO hr_src SELECT new_id, new_geom FROM hr_moved;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.update(i.name, m.old_id, m.old_geom, m.new_id, m.new_geom) AS ok
	  FROM hr_moved m CROSS JOIN hr_index i
	  ORDER BY (m.old_id * 13) % 10007, m.old_id, i.ord) s;
INSERT INTO hr_src SELECT id, geom FROM hr_gone WHERE id % 2 = 0;
SELECT count(*) FILTER (WHERE festival.insert(i.name, g.id, g.geom)) AS reinserted
FROM hr_gone g CROSS JOIN hr_index i WHERE g.id % 2 = 0;
SELECT * FROM hr_verify('update');

-------------------------------------------------------------------------------
-- Phase 5: close and reopen in the same session, then a new session (the
-- buffered changes are flushed by the exit hook of the old one)
-------------------------------------------------------------------------------
SELECT count(*) FILTER (WHERE closed) AS closed
FROM (SELECT festival.close(name) AS closed FROM hr_index) s;
SELECT * FROM hr_verify('reopened');
SELECT count(*) FILTER (WHERE festival.delete(i.name, s.id, s.geom)) AS deleted
FROM hr_src s CROSS JOIN hr_index i WHERE s.id % 11 = 0;
DELETE FROM hr_src WHERE id % 11 = 0;

\c
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE festival.stats(name)->>'clean_on_disk' = 'true') AS clean,
	   count(*) FILTER (WHERE (festival.stats(name)->>'entries')::bigint = (SELECT count(*) FROM hr_src)) AS entries_exact
FROM hr_index;
SELECT * FROM hr_verify('new session');

-- a rebuild by packing of an index built by insertion, and the reverse
SELECT festival.build('hr_none_s2', 'hilbert') AS packed, festival.build('hr_pack_none') AS inserted;
SELECT * FROM hr_verify('rebuilt');

-------------------------------------------------------------------------------
-- The extent
-------------------------------------------------------------------------------
-- given explicitly: a small part of the space; most objects lie outside it
-- and are clamped onto its border, answers stay right
CREATE TABLE hr_one (ord int PRIMARY KEY, name text NOT NULL UNIQUE, method text NOT NULL,
					 options jsonb NOT NULL);
INSERT INTO hr_one VALUES
	(1, 'hr_small_extent', 'insert', '{"page_size": 1024, "extent": [100, 100, 150, 130]}'),
	(2, 'hr_small_packed', 'hilbert', '{"page_size": 1024, "extent": [100, 100, 150, 130],
		"framework": "efind", "buffer_size": 16384}'),
	(3, 'hr_far_extent', 'insert', '{"page_size": 1024, "extent": [5000, 5000, 6000, 7000],
		"framework": "fast", "buffer_size": 16384}');
SELECT name, festival.create_index(name, 'hilbert', 'hr_dev', options, 'hr_src') > 0 AS created,
	   festival.build(name, method) AS built
FROM hr_one o ORDER BY ord;
SELECT name, c.options->'extent' AS extent FROM hr_one JOIN festival.index c USING (name) ORDER BY ord;
TRUNCATE hr_index;
INSERT INTO hr_index SELECT * FROM hr_one;
SELECT * FROM hr_verify('small extent');
SELECT count(*) FILTER (WHERE festival.delete(i.name, s.id, s.geom)) AS deleted
FROM hr_src s CROSS JOIN hr_index i WHERE s.id % 3 = 1;
DELETE FROM hr_src WHERE id % 3 = 1;
SELECT * FROM hr_verify('small extent, deleted');

-- without a source: the extent must be given
SELECT festival.create_index('hr_nosrc', 'hilbert', 'hr_dev', '{"extent": [0, 0, 10, 10]}') > 0 AS created;
SELECT count(*) FILTER (WHERE festival.insert('hr_nosrc', id, ST_MakePoint(id % 13, id / 13))) AS inserted
FROM generate_series(1, 200) id;
SELECT count(*) AS found, min(id), max(id)
FROM festival.query('hr_nosrc', ST_MakeEnvelope(2, 2, 4, 4), 'intersects') q(id);
SELECT count(*) AS brute FROM generate_series(1, 200) id
WHERE ST_Intersects(ST_MakePoint(id % 13, id / 13), ST_MakeEnvelope(2, 2, 4, 4));
SELECT count(*) AS check_rows FROM festival.check('hr_nosrc');

-- one object inserted again and again with the same MBR: runs of equal
-- keys (h, id) fill whole nodes; siblings with equal LHVs stay in order
-- and every copy can be deleted
SELECT festival.create_index('hr_copies', 'hilbert', 'hr_dev',
	'{"extent": [0, 0, 10, 10], "page_size": 1024, "siblings": 1, "framework": "efind", "buffer_size": 16384}') > 0 AS created;
SELECT count(*) FILTER (WHERE festival.insert(name, 7, 'POINT(5 5)')) AS copies_inserted
FROM generate_series(1, 100), (VALUES ('hr_copies'), ('hr_nosrc')) v(name);
SELECT count(*) FILTER (WHERE festival.insert('hr_copies', id % 5, ST_MakePoint(id % 13, id / 13))) AS inserted
FROM generate_series(1, 300) id;
SELECT count(*) FILTER (WHERE festival.insert(name, 7, 'POINT(5 5)')) AS copies_inserted
FROM generate_series(1, 100), (VALUES ('hr_copies'), ('hr_nosrc')) v(name);
SELECT name, festival.stats(name)->>'height' AS height,
	   (SELECT count(*) FROM hr_ids(name) WHERE id = 7) AS copies,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM (VALUES ('hr_copies'), ('hr_nosrc')) v(name);
SELECT count(*) FILTER (WHERE festival.delete(name, 7, 'POINT(5 5)')) AS copies_deleted
FROM generate_series(1, 150), (VALUES ('hr_copies'), ('hr_nosrc')) v(name);
SELECT name, (SELECT count(*) FROM hr_ids(name) WHERE id = 7) AS copies,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows,
	   (SELECT count(*) FROM festival.query(name, 'POINT(5 5)', 'intersects')) AS ids_at_5_5
FROM (VALUES ('hr_copies'), ('hr_nosrc')) v(name);

-- errors
\set VERBOSITY default
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": null}');
CREATE TABLE hr_empty (id bigint, geom geometry);
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{}', 'hr_empty');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [10, 0, 5, 5]}');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [0, 0, 0, 5]}');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [0, 0, 5]}');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": "world"}');
-- finite corners, but a width beyond double precision (every cell would be NaN)
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [-1e308, -1e308, 1e308, 1e308]}');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [0, 0, 0, 0]}');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [0, 0, 5, 5], "siblings": 0}');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [0, 0, 5, 5], "min_fill": 60}');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [0, 0, 5, 5], "page_size": 1024, "max_fill": 10}');
SELECT festival.create_index('hr_bad', 'hilbert', 'hr_dev', '{"extent": [0, 0, 5, 5], "split": "linear"}');
-- STR packing would break the Hilbert order: not offered
SELECT festival.build('hr_small_extent', 'str');
SELECT count(*) AS bad_indices FROM festival.index WHERE name = 'hr_bad';

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(*) AS dropped
FROM (SELECT festival.drop_index(name) FROM festival.index WHERE name LIKE 'hr\_%') s;
SELECT festival.drop_device('hr_dev');
DROP FUNCTION hr_verify(text), hr_ids(text), hr_leaves(text);
DROP TABLE hr_src, hr_later, hr_index, hr_one, hr_brute, hr_gone, hr_moved, hr_empty;
RESET festival.progress_interval;
RESET client_min_messages;
