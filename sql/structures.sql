--
-- structures: every structure, split and build method under every node
-- store (write-through, FAST, eFIND), fed the same modifications.
--
-- Two sources: st_mixed (all kinds of geometry, from fx_src) and st_points
-- (points only, from fx_pts, for the points-only xBR+-tree and grid file,
-- and to exercise exact point filtering everywhere).  Every index of a
-- source receives the
-- same changes in the same order: a build (one at a time or bulk loaded),
-- inserts, deletes, updates, a flush, a close and reopen with more changes,
-- and a new session.  After every phase, for every index:
--   - festival.query answers equal PostGIS brute force for every predicate
--     and a selection of query geometries;
--   - festival.check() returns no rows;
--   - the leaf entries (festival.node, walked from the root) are exactly
--     those of the reference index of its source (the write-through R-tree
--     built one at a time), whatever the shape of the tree;
--   - festival.knn (k = 1, 10, 100) returns the ids and distances of
--     PostGIS's ORDER BY ST_Distance(geom, g), id LIMIT k, and
--     festival.query_batch the brute-force answers of every query of the
--     batch.
--
-- Pages of 1024 bytes keep M small (24 R-tree entries) so that trees have
-- three or four levels and every split, reinsertion and merge happens.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('st_dev', io => 'buffered');

CREATE TABLE st_mixed (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO st_mixed SELECT id, geom FROM fx_src WHERE id % 4 <> 1 OR id > 8000;
CREATE TABLE st_mixed_later AS SELECT id, geom FROM fx_src WHERE id % 4 = 1 AND id < 8000;
CREATE TABLE st_points (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO st_points SELECT id, geom FROM fx_pts WHERE id % 4 <> 1;
CREATE TABLE st_points_later AS SELECT id, geom FROM fx_pts WHERE id % 4 = 1;
SELECT (SELECT count(*) FROM st_mixed) AS mixed_built, (SELECT count(*) FROM st_mixed_later) AS mixed_later,
	   (SELECT count(*) FROM st_points) AS points_built, (SELECT count(*) FROM st_points_later) AS points_later;

-------------------------------------------------------------------------------
-- The configurations.  ord 1 and 101 are the references of their sources.
-------------------------------------------------------------------------------
CREATE TABLE st_index (
	ord		int PRIMARY KEY,
	name	text NOT NULL UNIQUE,
	source	text NOT NULL,
	structure text NOT NULL,
	method	text NOT NULL,
	options	jsonb NOT NULL
);
INSERT INTO st_index VALUES
	(  1, 'st_m_rtree_ref', 'st_mixed', 'rtree', 'insert', '{"split": "quadratic"}'),
	(  2, 'st_m_rtree_lin_str', 'st_mixed', 'rtree', 'str', '{"split": "linear"}'),
	(  3, 'st_m_rtree_quad_hil', 'st_mixed', 'rtree', 'hilbert', '{"split": "quadratic"}'),
	(  4, 'st_m_rtree_fast_str', 'st_mixed', 'rtree', 'str',
		'{"split": "quadratic", "framework": "fast", "buffer_size": 16384, "flushing_unit": 3}'),
	(  5, 'st_m_rtree_efind_hil', 'st_mixed', 'rtree', 'hilbert',
		'{"split": "linear", "framework": "efind", "buffer_size": 16384, "flushing_unit": 3}'),
	(  6, 'st_m_rtree_efind_str_min', 'st_mixed', 'rtree', 'str',
		'{"split": "quadratic", "framework": "efind", "buffer_size": 8192, "min_fill": 50, "max_fill": 60}'),
	-- the R*-tree, inserted and loaded
	(  7, 'st_m_rstar', 'st_mixed', 'rstartree', 'insert', '{"reinsert": "far", "reinsert_percent": 20}'),
	(  8, 'st_m_rstar_efind', 'st_mixed', 'rstartree', 'insert',
		'{"framework": "efind", "buffer_size": 16384, "flushing_unit": 3}'),
	(  9, 'st_m_rstar_fast_str', 'st_mixed', 'rstartree', 'str',
		'{"framework": "fast", "buffer_size": 16384, "flushing_unit": 3}'),
	-- R-tree splits beyond Guttman's under the buffered stores
	( 10, 'st_m_greene_fast', 'st_mixed', 'rtree', 'insert', '{"split": "greene", "framework": "fast", "buffer_size": 16384}'),
	( 11, 'st_m_angtan_efind', 'st_mixed', 'rtree', 'insert', '{"split": "angtan", "framework": "efind", "buffer_size": 16384}'),
	( 12, 'st_m_exp_none', 'st_mixed', 'rtree', 'insert', '{"split": "exponential", "max_fill": 75}'),
	-- the Hilbert R-tree, inserted and packed
	( 13, 'st_m_hilbert', 'st_mixed', 'hilbert', 'insert', '{"siblings": 2}'),
	( 14, 'st_m_hilbert_efind_s3', 'st_mixed', 'hilbert', 'insert',
		'{"siblings": 3, "framework": "efind", "buffer_size": 16384, "flushing_unit": 3}'),
	( 15, 'st_m_hilbert_fast_packed', 'st_mixed', 'hilbert', 'hilbert',
		'{"siblings": 1, "framework": "fast", "buffer_size": 16384}'),
	(101, 'st_p_rtree_ref', 'st_points', 'rtree', 'insert', '{"split": "quadratic"}'),
	(102, 'st_p_rtree_str', 'st_points', 'rtree', 'str', '{"split": "linear"}'),
	(103, 'st_p_rtree_fast_hil', 'st_points', 'rtree', 'hilbert',
		'{"split": "quadratic", "framework": "fast", "buffer_size": 16384}'),
	(104, 'st_p_rtree_efind_str', 'st_points', 'rtree', 'str',
		'{"split": "linear", "framework": "efind", "buffer_size": 16384}'),
	(105, 'st_p_rstar_hil', 'st_points', 'rstartree', 'hilbert', '{"reinsert": "close"}'),
	(106, 'st_p_rtree_rstar_efind', 'st_points', 'rtree', 'insert', '{"split": "rstar", "framework": "efind", "buffer_size": 16384}'),
	(107, 'st_p_hilbert_packed', 'st_points', 'hilbert', 'hilbert', '{}'),
	(108, 'st_p_hilbert_fast', 'st_points', 'hilbert', 'insert', '{"framework": "fast", "buffer_size": 16384}'),
	-- the xBR+-tree (points only), inserted and bulk loaded; its extent
	-- leaves room for the points the updates move out of the source's
	(109, 'st_p_xbr', 'st_points', 'xbrtree', 'insert', '{"extent": [-100, -100, 500, 500]}'),
	(110, 'st_p_xbr_efind_bulk', 'st_points', 'xbrtree', 'bulk',
		'{"framework": "efind", "buffer_size": 16384, "flushing_unit": 3, "extent": [-100, -100, 500, 500]}'),
	(111, 'st_p_xbr_fast', 'st_points', 'xbrtree', 'insert',
		'{"framework": "fast", "buffer_size": 16384, "extent": [-50, -50, 450, 350]}'),
	-- the grid file (GFFM, points only) under every node store, inserted and
	-- bulk loaded
	(112, 'st_p_grid', 'st_points', 'gridfile', 'insert', '{"extent": [-100, -100, 500, 500]}'),
	(113, 'st_p_grid_fast', 'st_points', 'gridfile', 'insert',
		'{"framework": "fast", "buffer_size": 16384, "flushing_unit": 3, "extent": [-50, -50, 450, 350]}'),
	(114, 'st_p_grid_efind_bulk', 'st_points', 'gridfile', 'bulk',
		'{"framework": "efind", "buffer_size": 16384, "flushing_unit": 3, "merge_fill": 50,
		  "extent": [-100, -100, 500, 500]}'),
	-- LB-Grid (points only; framework none), page at a time and by P-RQ
	-- under the cache clru
	(115, 'st_p_lbgrid', 'st_points', 'lbgrid', 'insert', '{"extent": [-100, -100, 500, 500]}'),
	(116, 'st_p_lbgrid_prq_clru', 'st_points', 'lbgrid', 'insert',
		'{"range_algorithm": "p-rq", "cache": "clru", "cache_size": 24576, "cache_clru_pages": 3,
		  "extent": [-50, -50, 450, 350]}');
UPDATE st_index SET options = options || '{"page_size": 1024}';

SELECT ord, name, festival.create_index(name, structure, 'st_dev', options, source::regclass) > 0 AS created
FROM st_index ORDER BY ord;

CREATE TABLE st_brute (source text, pred text, qid int, id bigint);

-- kNN query points, away from the curved objects (whose distances PostGIS
-- measures on the arcs, festival on their linearisation)
CREATE TABLE st_knn_query (source text, g geometry);
INSERT INTO st_knn_query VALUES
	('st_mixed', 'POINT(253.5 253.5)'), ('st_mixed', 'POINT(300 20)'), ('st_mixed', 'POINT(20 250)'),
	('st_points', 'POINT(45 45)'), ('st_points', 'POINT(150 150)'), ('st_points', 'POINT(-10 310)');

CREATE TABLE st_reference (source text, id bigint, x1 float8, y1 float8, x2 float8, y2 float8);

CREATE FUNCTION st_compare_all()
RETURNS TABLE (ord int, name text, answers numeric, missing numeric, extra numeric, check_rows bigint,
			   other_entries bigint, knn_wrong bigint, batch_wrong bigint, error text)
LANGUAGE plpgsql AS $$
DECLARE
	i record;
	qids int[];
BEGIN
	TRUNCATE st_brute, st_reference;
	INSERT INTO st_brute SELECT 'st_mixed', * FROM fx_brute('st_mixed', ARRAY[2, 8, 12, 21, 29, 36]);
	INSERT INTO st_brute SELECT 'st_points', * FROM fx_brute('st_points', ARRAY[101, 103, 104, 108, 110, 113]);
	INSERT INTO st_reference SELECT 'st_mixed', * FROM fixture.entries('st_m_rtree_ref');
	INSERT INTO st_reference SELECT 'st_points', * FROM fixture.entries('st_p_rtree_ref');
	FOR i IN SELECT * FROM st_index ORDER BY st_index.ord LOOP
		ord := i.ord;
		name := i.name;
		error := NULL;
		qids := CASE i.source WHEN 'st_mixed' THEN ARRAY[2, 8, 12, 21, 29, 36]
							  ELSE ARRAY[101, 103, 104, 108, 110, 113] END;
		BEGIN
			CREATE TEMP TABLE st_brute_one AS SELECT pred, qid, id FROM st_brute WHERE source = i.source;
			SELECT sum(c.festival), sum(c.missing), sum(c.extra) INTO answers, missing, extra
			FROM fx_compare(i.name, 'st_brute_one', qids) c;
			check_rows := (SELECT count(*) FROM festival.check(i.name));
			WITH e AS MATERIALIZED (SELECT * FROM fixture.entries(i.name)),
				 r AS MATERIALIZED (SELECT id, x1, y1, x2, y2 FROM st_reference WHERE source = i.source)
			SELECT (SELECT count(*) FROM (TABLE e EXCEPT ALL TABLE r) d)
				   + (SELECT count(*) FROM (TABLE r EXCEPT ALL TABLE e) d)
			INTO other_entries;
			knn_wrong := fixture.knn_wrong(i.name, i.source::regclass,
										   ARRAY(SELECT g FROM st_knn_query q WHERE q.source = i.source));
			batch_wrong := fixture.batch_wrong(i.name, 'st_brute_one', qids);
			DROP TABLE st_brute_one;
		EXCEPTION WHEN OTHERS THEN
			answers := NULL;
			missing := NULL;
			extra := NULL;
			check_rows := NULL;
			other_entries := NULL;
			knn_wrong := NULL;
			batch_wrong := NULL;
			error := SQLERRM;
		END;
		RETURN NEXT;
	END LOOP;
END
$$;

-- per phase: the number of indices agreeing with brute force and with the
-- reference entries, and a line for each index that does not (none)
CREATE FUNCTION st_verify(phase text)
RETURNS TABLE (what text, name text, answers numeric, missing numeric, extra numeric, check_rows bigint,
			   other_entries bigint, knn_wrong bigint, batch_wrong bigint, error text)
LANGUAGE plpgsql AS $$
BEGIN
	CREATE TEMP TABLE st_result AS SELECT * FROM st_compare_all();
	RETURN QUERY
		SELECT phase || ': brute-force answers', NULL::text, (SELECT count(*)::numeric FROM st_brute),
			   NULL::numeric, NULL::numeric, NULL::bigint, (SELECT count(*) FROM st_reference), NULL::bigint,
			   NULL::bigint, NULL::text
		UNION ALL
		SELECT phase || ': indices agreeing', NULL, count(*)::numeric, NULL, NULL, NULL, NULL, NULL, NULL, NULL
		FROM st_result r JOIN st_index x USING (ord)
		WHERE r.answers = (SELECT count(*) FROM st_brute b WHERE b.source = x.source)
			  AND r.missing = 0 AND r.extra = 0 AND r.check_rows = 0 AND r.other_entries = 0
			  AND r.knn_wrong = 0 AND r.batch_wrong = 0
		UNION ALL
		SELECT phase || ': WRONG', r.name, r.answers, r.missing, r.extra, r.check_rows, r.other_entries,
			   r.knn_wrong, r.batch_wrong, r.error
		FROM st_result r JOIN st_index x USING (ord)
		WHERE r.error IS NOT NULL
			  OR NOT (r.answers = (SELECT count(*) FROM st_brute b WHERE b.source = x.source)
					  AND r.missing = 0 AND r.extra = 0 AND r.check_rows = 0 AND r.other_entries = 0
					  AND r.knn_wrong = 0 AND r.batch_wrong = 0);
	DROP TABLE st_result;
END
$$;

-- apply one change to every index of a source
CREATE FUNCTION st_each(src text) RETURNS SETOF text
LANGUAGE sql AS $$ SELECT name FROM st_index WHERE source = src ORDER BY ord $$;

-------------------------------------------------------------------------------
-- Phase 1: build, one at a time or bulk loaded
-------------------------------------------------------------------------------
SELECT method, count(*) AS indices, min(built) AS min_built, max(built) AS max_built
FROM (SELECT method, festival.build(name, method) AS built FROM st_index ORDER BY ord) s
GROUP BY method ORDER BY method;
-- bulk-loaded trees are packed: fewer nodes than the reference built one at a time
SELECT x.name, (festival.stats(x.name)->>'height')::int AS height,
	   (festival.stats(x.name)->>'pages')::bigint
		   < (festival.stats(CASE x.source WHEN 'st_mixed' THEN 'st_m_rtree_ref' ELSE 'st_p_rtree_ref' END)->>'pages')::bigint
		   AS fewer_pages_than_reference
FROM st_index x WHERE x.method <> 'insert' AND NOT x.options ? 'max_fill' ORDER BY x.ord;
SELECT * FROM st_verify('build');

-------------------------------------------------------------------------------
-- Phase 2: inserts into the built or loaded trees
-------------------------------------------------------------------------------
INSERT INTO st_mixed SELECT * FROM st_mixed_later;
INSERT INTO st_points SELECT * FROM st_points_later;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.insert(n, l.id, l.geom) AS ok
	  FROM (SELECT 'st_mixed' AS src, * FROM st_mixed_later
			UNION ALL SELECT 'st_points', * FROM st_points_later) l
	  CROSS JOIN LATERAL st_each(l.src) n
	  ORDER BY (l.id * 7919) % 10007, l.id, n) s;
SELECT * FROM st_verify('insert');

-------------------------------------------------------------------------------
-- Phase 3: delete two objects in five
-------------------------------------------------------------------------------
CREATE TABLE st_gone AS
	SELECT 'st_mixed' AS src, id, geom FROM st_mixed WHERE id % 5 IN (1, 3) AND id < 8000
	UNION ALL SELECT 'st_points', id, geom FROM st_points WHERE id % 5 IN (1, 3);
DELETE FROM st_mixed WHERE id IN (SELECT id FROM st_gone WHERE src = 'st_mixed');
DELETE FROM st_points WHERE id IN (SELECT id FROM st_gone WHERE src = 'st_points');
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete(n, g.id, g.geom) AS ok
	  FROM st_gone g CROSS JOIN LATERAL st_each(g.src) n
	  ORDER BY (g.id * 31) % 10007, g.id, n) s;
SELECT * FROM st_verify('delete');

-------------------------------------------------------------------------------
-- Phase 4: move one object in six by (3, -2), a third of them under a new id
-------------------------------------------------------------------------------
CREATE TABLE st_moved AS
	SELECT src, id AS old_id, geom AS old_geom,
		   CASE WHEN id % 3 = 0 THEN id + 100000 ELSE id END AS new_id,
		   ST_Translate(geom, 3, -2) AS new_geom
	FROM (SELECT 'st_mixed' AS src, * FROM st_mixed UNION ALL SELECT 'st_points', * FROM st_points) s
	WHERE id % 6 = 0;
DELETE FROM st_mixed WHERE id IN (SELECT old_id FROM st_moved WHERE src = 'st_mixed');
INSERT INTO st_mixed SELECT new_id, new_geom FROM st_moved WHERE src = 'st_mixed';
DELETE FROM st_points WHERE id IN (SELECT old_id FROM st_moved WHERE src = 'st_points');
INSERT INTO st_points SELECT new_id, new_geom FROM st_moved WHERE src = 'st_points';
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.update(n, m.old_id, m.old_geom, m.new_id, m.new_geom) AS ok
	  FROM st_moved m CROSS JOIN LATERAL st_each(m.src) n
	  ORDER BY (m.old_id * 13) % 10007, m.old_id, n) s;
SELECT * FROM st_verify('update');

-------------------------------------------------------------------------------
-- Phase 5: flush, close, more changes, reopen
-------------------------------------------------------------------------------
SELECT count(*) AS flushed FROM (SELECT festival.flush(name) FROM st_index) s;
SELECT count(*) FILTER (WHERE closed) AS closed FROM (SELECT festival.close(name) AS closed FROM st_index) s;
CREATE TABLE st_last AS
	SELECT 'st_mixed' AS src, 200000 + n AS id, ST_MakeEnvelope(n * 3, 400 - n, n * 3 + 5, 405 - n) AS geom
	FROM generate_series(1, 60) n
	UNION ALL
	SELECT 'st_points', 200000 + n, ST_MakePoint(n * 4.5, 300 - n * 2.5) FROM generate_series(1, 60) n;
INSERT INTO st_mixed SELECT id, geom FROM st_last WHERE src = 'st_mixed';
INSERT INTO st_points SELECT id, geom FROM st_last WHERE src = 'st_points';
SELECT count(*) FILTER (WHERE festival.insert(n, l.id, l.geom)) AS inserted
FROM st_last l CROSS JOIN LATERAL st_each(l.src) n;
SELECT * FROM st_verify('reopened');

-------------------------------------------------------------------------------
-- Phase 6: a new session (the exit hook flushes what is buffered)
-------------------------------------------------------------------------------
\c
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE festival.stats(name)->>'clean_on_disk' = 'true') AS clean,
	   count(*) FILTER (WHERE (festival.stats(name)->>'entries')::bigint
						= CASE source WHEN 'st_mixed' THEN (SELECT count(*) FROM st_mixed)
									  ELSE (SELECT count(*) FROM st_points) END) AS entries_exact
FROM st_index;
SELECT * FROM st_verify('new session');

-------------------------------------------------------------------------------
-- Dumps of every structure: each node's MBR lies in its parent's, and the
-- xBR+-tree's quadrant regions and the grid file's regions cover the nodes
-- below them
-------------------------------------------------------------------------------
CREATE TEMP TABLE st_dumped AS SELECT name, festival.dump(name, NULL) AS snapshot_id FROM st_index;
SELECT x.structure, count(DISTINCT d.name) AS indices, count(*) AS nodes,
	   count(*) FILTER (WHERE p.page IS NOT NULL AND NOT ST_Covers(p.mbr, n.mbr)) AS outside_parent,
	   count(*) FILTER (WHERE n.region IS NOT NULL) AS with_region,
	   count(*) FILTER (WHERE n.region IS NOT NULL AND NOT ST_Covers(n.region, n.mbr)) AS outside_region
FROM st_dumped d JOIN st_index x USING (name)
JOIN festival.index_node n USING (snapshot_id)
LEFT JOIN festival.index_node p ON p.snapshot_id = n.snapshot_id AND p.page = n.parent
GROUP BY x.structure ORDER BY x.structure;

-------------------------------------------------------------------------------
-- Build methods: a loader must belong to the structure; an empty source
-- loads an empty tree; a source of one row loads a root leaf.
-------------------------------------------------------------------------------
\set VERBOSITY terse
SELECT festival.build('st_m_rtree_ref', 'bulk');
\set VERBOSITY default
CREATE TABLE st_tiny (id bigint PRIMARY KEY, geom geometry NOT NULL);
SELECT festival.create_index('st_tiny_str', 'rtree', 'st_dev', '{"page_size": 1024}', 'st_tiny') > 0 AS created;
SELECT festival.build('st_tiny_str', 'str') AS loaded_empty,
	   festival.stats('st_tiny_str')->>'height' AS height,
	   (SELECT count(*) FROM festival.check('st_tiny_str')) AS check_rows;
INSERT INTO st_tiny VALUES (1, 'POINT(1 2)');
SELECT festival.build('st_tiny_str', 'str') AS loaded_one,
	   festival.stats('st_tiny_str')->>'height' AS height,
	   (SELECT count(*) FROM festival.check('st_tiny_str')) AS check_rows,
	   (SELECT array_agg(id) FROM festival.query('st_tiny_str', 'POINT(1 2)')) AS found;
-- 25 rows, one more than a 1024-byte page holds (M = 24): two leaves
INSERT INTO st_tiny SELECT i, ST_MakePoint(i, i) FROM generate_series(2, 25) i;
SELECT festival.build('st_tiny_str', 'hilbert') AS loaded,
	   festival.stats('st_tiny_str')->>'height' AS height,
	   (SELECT count(*) FROM festival.check('st_tiny_str')) AS check_rows,
	   (SELECT count(*) FROM festival.query('st_tiny_str', ST_MakeEnvelope(0, 0, 30, 30))) AS found;

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM st_index) s;
DELETE FROM festival.index_snapshot WHERE snapshot_id IN (SELECT snapshot_id FROM st_dumped);
SELECT festival.drop_index('st_tiny_str');
SELECT festival.drop_device('st_dev');
DROP FUNCTION st_verify(text), st_compare_all(), st_each(text);
DROP TABLE st_knn_query, st_mixed, st_mixed_later, st_points, st_points_later, st_index, st_brute, st_reference,
	st_gone, st_moved, st_last, st_tiny;
RESET festival.progress_interval;
RESET client_min_messages;
