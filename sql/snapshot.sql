--
-- snapshot: festival.snapshot() and festival.dump() against an independent
-- computation in SQL and PostGIS.
--
-- R-trees with linear and quadratic splits under every framework (none,
-- FAST, eFIND) receive the same modifications: a build, inserts and
-- deletes.  After each phase every index is snapshot and dumped, and the
-- figures of the C code are compared with figures computed here:
--   * the tree is walked again from the root with festival.node() in a
--     recursive query (not the snapshot's walk): nodes and entries per
--     level, each node's MBR as the extent of its entries, every dumped
--     node's level and parent;
--   * coverage = Σ ST_Area of those extents, fill = entries over nodes ×
--     (page_size − 32) / 40 (40-byte R-tree entries, 32-byte page header);
--   * overlap = Σ over pairs of nodes of a level (each pair once) of
--     ST_Area(ST_Intersection(...)) of the dumped MBRs, by a self-join;
--   * dead space = Σ over nodes of ST_Area(node extent) −
--     ST_Area(ST_Union(entry rectangles));
--   * objects = the rows of the source table.
-- Floating-point figures must agree to 1e-9 (relative).  Then the errors:
-- unknown index, unknown snapshot, a snapshot of another index, of an
-- earlier index of the same name, of a tree that changed since.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('sn_dev', io => 'buffered');

-- half of fx_src (every kind of geometry, copies, points on edges, the odd
-- ones) is built; the other half is inserted later
CREATE TABLE sn_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO sn_src SELECT id, geom FROM fx_src WHERE id % 2 = 0 OR id > 8000;
CREATE TABLE sn_later AS SELECT id, geom FROM fx_src WHERE id % 2 = 1 AND id < 8000;

CREATE TABLE sn_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, options jsonb NOT NULL);
INSERT INTO sn_index VALUES
	(1, 'sn_none_lin', '{"split": "linear", "page_size": 1024}'),
	(2, 'sn_none_quad', '{"split": "quadratic", "page_size": 1024}'),
	(3, 'sn_fast_lin', '{"framework": "fast", "split": "linear", "page_size": 1024,
		"buffer_size": 16384}'),
	(4, 'sn_fast_quad', '{"framework": "fast", "split": "quadratic", "page_size": 2048,
		"buffer_size": 16384}'),
	(5, 'sn_efind_lin', '{"framework": "efind", "split": "linear", "page_size": 1024,
		"buffer_size": 16384}'),
	(6, 'sn_efind_quad', '{"framework": "efind", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "read_buffer_policy": "lru"}');
SELECT ord, name, festival.create_index(name, 'rtree', 'sn_dev', options, 'sn_src') > 0 AS created
FROM sn_index ORDER BY ord;

-- a |relative| difference of at most 1e-9
CREATE FUNCTION sn_close(a float8, b float8) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT abs(a - b) <= 1e-9 * greatest(1.0, abs(a), abs(b))
$$;

-- every entry of every node reachable from the root, walked in SQL
CREATE FUNCTION sn_walk(idx text)
RETURNS TABLE (page bigint, level int, parent bigint, ref bigint,
			   x1 float8, y1 float8, x2 float8, y2 float8)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page, parent) AS (
		SELECT (festival.stats(idx)->>'root')::bigint, NULL::bigint
		UNION ALL
		SELECT n.ref, t.page FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n
		WHERE n.level > 0)
	SELECT t.page, n.level, t.parent, n.ref, n.xmin, n.ymin, n.xmax, n.ymax
	FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n
$$;

-- snapshot and dump idx, then compare with the independent figures: one
-- row per index, every *_ok column must be true
CREATE FUNCTION sn_compare(idx text)
RETURNS TABLE (name text, height int, nodes bigint, objects bigint, levels_ok boolean,
			   objects_ok boolean, nodes_ok boolean, coverage_ok boolean, fill_ok boolean,
			   overlap_ok boolean, dead_space_ok boolean, totals_ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
	snap bigint;
	dumped bigint;
	page_capacity int;
	s festival.index_snapshot;
BEGIN
	snap := festival.snapshot(idx);
	dumped := festival.dump(idx, snap);
	IF dumped <> snap THEN
		RAISE EXCEPTION 'dump returned snapshot % instead of %', dumped, snap;
	END IF;
	SELECT * INTO s FROM festival.index_snapshot WHERE snapshot_id = snap;
	page_capacity := ((s.config->'options'->>'page_size')::int - 32) / 40;

	CREATE TEMP TABLE sn_entry AS SELECT * FROM sn_walk(idx);
	CREATE TEMP TABLE sn_node AS
		SELECT e.page, min(e.level) AS level, min(e.parent) AS parent, count(*) AS entries,
			   min(e.x1) AS x1, min(e.y1) AS y1, max(e.x2) AS x2, max(e.y2) AS y2
		FROM sn_entry e GROUP BY e.page;

	name := idx;
	height := s.height;
	nodes := s.nodes;
	objects := s.objects;

	-- nodes, entries, coverage and fill per level
	WITH mine AS (
		SELECT n.level, count(*) AS nodes, sum(n.entries) AS entries,
			   sum(ST_Area(ST_MakeEnvelope(n.x1, n.y1, n.x2, n.y2))) AS coverage
		FROM sn_node n GROUP BY n.level)
	SELECT count(*) = s.height AND
		   bool_and(m.nodes = l.nodes AND m.entries = l.entries),
		   bool_and(sn_close(m.coverage, l.coverage)),
		   bool_and(sn_close(m.entries::float8 / (m.nodes * page_capacity), l.fill) AND l.capacity = page_capacity)
	INTO levels_ok, coverage_ok, fill_ok
	FROM festival.index_snapshot_level l JOIN mine m USING (level)
	WHERE l.snapshot_id = snap;

	objects_ok := s.objects = (SELECT count(*) FROM sn_src)
		AND s.objects = (SELECT count(*) FROM sn_entry e WHERE e.level = 0);

	-- the dump holds exactly the nodes walked, with their level, parent,
	-- entry count and extent
	nodes_ok := (SELECT count(*) FROM festival.index_node d WHERE d.snapshot_id = snap) = s.nodes
		AND (SELECT count(*) FROM sn_node) = s.nodes
		AND NOT EXISTS (
			SELECT FROM sn_node n
			LEFT JOIN festival.index_node d ON d.snapshot_id = snap AND d.page = n.page
			WHERE d.page IS NULL OR d.level <> n.level OR d.parent IS DISTINCT FROM n.parent
			   OR d.entries <> n.entries OR d.region IS NOT NULL
			   OR ST_SRID(d.mbr) <> 0
			   OR ST_XMin(d.mbr) <> n.x1 OR ST_YMin(d.mbr) <> n.y1
			   OR ST_XMax(d.mbr) <> n.x2 OR ST_YMax(d.mbr) <> n.y2
			   OR NOT ST_IsValid(d.mbr));

	-- overlap: every pair of nodes of a level once, PostGIS intersections
	WITH pairs AS (
		SELECT a.level, sum(ST_Area(ST_Intersection(a.mbr, b.mbr))) AS overlap
		FROM festival.index_node a
		JOIN festival.index_node b ON b.snapshot_id = a.snapshot_id AND b.level = a.level
									 AND b.page > a.page AND a.mbr && b.mbr
		WHERE a.snapshot_id = snap GROUP BY a.level)
	SELECT bool_and(sn_close(coalesce(p.overlap, 0), l.overlap))
	INTO overlap_ok
	FROM festival.index_snapshot_level l LEFT JOIN pairs p USING (level)
	WHERE l.snapshot_id = snap;

	-- dead space: node extent minus the union of its entries' rectangles
	-- (points and segments have no area and add nothing to the union)
	WITH per_node AS (
		SELECT n.level,
			   (n.x2 - n.x1) * (n.y2 - n.y1)
			   - coalesce((SELECT ST_Area(ST_Union(ST_MakeEnvelope(e.x1, e.y1, e.x2, e.y2)))
						   FROM sn_entry e
						   WHERE e.page = n.page AND e.x1 < e.x2 AND e.y1 < e.y2), 0) AS dead
		FROM sn_node n),
	per_level AS (SELECT p.level, sum(p.dead) AS dead FROM per_node p GROUP BY p.level)
	SELECT bool_and(sn_close(p.dead, l.dead_space))
	INTO dead_space_ok
	FROM festival.index_snapshot_level l JOIN per_level p USING (level)
	WHERE l.snapshot_id = snap;

	-- the totals are the sums of the levels
	SELECT s.entries = sum(l.entries) AND s.nodes = sum(l.nodes)
		   AND sn_close(s.coverage, sum(l.coverage)) AND sn_close(s.overlap, sum(l.overlap))
		   AND sn_close(s.dead_space, sum(l.dead_space))
		   AND sn_close(s.fill, sum(l.entries)::float8 / sum(l.nodes * l.capacity))
		   AND sn_close(s.dead_space_ratio, s.dead_space / s.coverage)
	INTO totals_ok
	FROM festival.index_snapshot_level l WHERE l.snapshot_id = snap;

	DROP TABLE sn_entry, sn_node;
	RETURN NEXT;
END
$$;

-------------------------------------------------------------------------------
-- Phase 1: a build
-------------------------------------------------------------------------------
SELECT i.name, festival.build(i.name) AS built FROM sn_index i ORDER BY ord;
SELECT c.* FROM sn_index i CROSS JOIN LATERAL sn_compare(i.name) c ORDER BY i.ord;

-------------------------------------------------------------------------------
-- Phase 2: inserts, then deletes (underfull nodes are eliminated)
-------------------------------------------------------------------------------
INSERT INTO sn_src SELECT * FROM sn_later;
SELECT i.name, count(*) FILTER (WHERE festival.insert(i.name, l.id, l.geom)) AS inserted
FROM sn_index i CROSS JOIN sn_later l GROUP BY i.ord, i.name ORDER BY i.ord;
SELECT c.* FROM sn_index i CROSS JOIN LATERAL sn_compare(i.name) c ORDER BY i.ord;

CREATE TABLE sn_gone AS SELECT * FROM sn_src WHERE id % 5 IN (1, 2) OR id BETWEEN 1 AND 300;
DELETE FROM sn_src WHERE id IN (SELECT id FROM sn_gone);
SELECT i.name, count(*) FILTER (WHERE festival.delete(i.name, g.id, g.geom)) AS deleted
FROM sn_index i CROSS JOIN sn_gone g GROUP BY i.ord, i.name ORDER BY i.ord;
SELECT c.* FROM sn_index i CROSS JOIN LATERAL sn_compare(i.name) c ORDER BY i.ord;
SELECT i.name, count(c.*) AS check_rows
FROM sn_index i LEFT JOIN LATERAL festival.check(i.name) c ON true GROUP BY i.ord, i.name ORDER BY i.ord;

-- the same tree measures the same: FAST holds exactly the tree of the
-- write-through store (eFIND returns entries in identity order, so its
-- splits see them in another order and build other trees)
SELECT a.index_name, b.index_name AS same_tree_as,
	   a.fingerprint = b.fingerprint AS same_fingerprint,
	   a.nodes_per_level = b.nodes_per_level AND a.coverage = b.coverage
	   AND a.overlap = b.overlap AND a.dead_space = b.dead_space AS same_figures
FROM festival.index_snapshot a JOIN festival.index_snapshot b ON b.index_name = 'sn_none_lin'
WHERE a.index_name = 'sn_fast_lin'
  AND a.snapshot_id = (SELECT max(snapshot_id) FROM festival.index_snapshot WHERE index_name = a.index_name)
  AND b.snapshot_id = (SELECT max(snapshot_id) FROM festival.index_snapshot WHERE index_name = b.index_name);
-- and a different tree has a different fingerprint
SELECT count(DISTINCT fingerprint) AS fingerprints, count(DISTINCT index_name) AS indices
FROM festival.index_snapshot
WHERE snapshot_id IN (SELECT max(snapshot_id) FROM festival.index_snapshot GROUP BY index_name)
  AND index_name <> 'sn_fast_lin';

-------------------------------------------------------------------------------
-- Dumps: replaced when repeated, valid across a close, NULL takes a new
-- snapshot, empty trees
-------------------------------------------------------------------------------
CREATE TABLE sn_snap AS
	SELECT name, (SELECT max(snapshot_id) FROM festival.index_snapshot WHERE index_name = name) AS snap
	FROM sn_index;

-- a buffering store flushed by close() still holds the tree its last
-- snapshot measured: dumping that snapshot again replaces its rows
SELECT festival.close(name) FROM sn_index WHERE name = 'sn_efind_lin';
SELECT festival.dump(s.name, s.snap) = s.snap AS redumped,
	   (SELECT count(*) FROM festival.index_node n WHERE n.snapshot_id = s.snap)
	   = (SELECT nodes FROM festival.index_snapshot WHERE snapshot_id = s.snap) AS same_rows
FROM sn_snap s WHERE s.name = 'sn_efind_lin';

-- NULL: a new snapshot, returned, with its dump
SELECT festival.dump('sn_none_quad', NULL) AS new_snap \gset
SELECT :new_snap > s.snap AS new_snapshot,
	   n.fingerprint = o.fingerprint AS same_tree,
	   (SELECT count(*) FROM festival.index_node WHERE snapshot_id = :new_snap) = n.nodes AS dumped
FROM sn_snap s
JOIN festival.index_snapshot o ON o.snapshot_id = s.snap
JOIN festival.index_snapshot n ON n.snapshot_id = :new_snap
WHERE s.name = 'sn_none_quad';

-- an empty tree: one empty root leaf without an MBR
SELECT festival.create_index('sn_empty', 'rtree', 'sn_dev', '{"page_size": 1024}') > 0 AS created;
SELECT festival.dump('sn_empty') AS sn_empty_snap \gset
SELECT height, nodes, entries, objects, fill, coverage, overlap, dead_space, dead_space_ratio,
	   nodes_per_level, entries_per_level, capacity_per_level
FROM festival.index_snapshot WHERE snapshot_id = :sn_empty_snap;
SELECT level, parent, entries, mbr IS NULL AS no_mbr, region IS NULL AS no_region
FROM festival.index_node WHERE snapshot_id = :sn_empty_snap;

-- degenerate MBRs are valid geometries: a point, a segment, a rectangle
-- (SRID of the index)
SELECT festival.insert('sn_empty', 1, 'SRID=3857;POINT(1 2)');
SELECT festival.dump('sn_empty') > 0 AS dumped;
SELECT ST_AsEWKT(mbr) FROM festival.index_node
WHERE snapshot_id = (SELECT max(snapshot_id) FROM festival.index_snapshot);
SELECT festival.insert('sn_empty', 2, 'SRID=3857;POINT(1 5)');
SELECT festival.dump('sn_empty') > 0 AS dumped;
SELECT ST_AsEWKT(mbr) FROM festival.index_node
WHERE snapshot_id = (SELECT max(snapshot_id) FROM festival.index_snapshot);
SELECT festival.insert('sn_empty', 3, 'SRID=3857;LINESTRING(0 3, 4 3)');
SELECT festival.dump('sn_empty') > 0 AS dumped;
SELECT ST_AsEWKT(mbr), srid, ST_IsValid(mbr) FROM festival.index_node
JOIN festival.index_snapshot USING (snapshot_id)
WHERE snapshot_id = (SELECT max(snapshot_id) FROM festival.index_snapshot);

-------------------------------------------------------------------------------
-- Errors
-------------------------------------------------------------------------------
-- the error of a statement: SQLSTATE, message, detail and hint, with
-- snapshot numbers (which depend on the tests run before) as N
CREATE FUNCTION sn_error(stmt text) RETURNS TABLE (state text, message text, detail text, hint text)
LANGUAGE plpgsql AS $$
DECLARE
	st text; msg text; det text; hin text;
BEGIN
	EXECUTE stmt;
	RAISE EXCEPTION 'no error from: %', stmt;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
							det = PG_EXCEPTION_DETAIL, hin = PG_EXCEPTION_HINT;
	IF msg LIKE 'no error from:%' THEN
		RAISE;
	END IF;
	state := st;
	message := regexp_replace(msg, 'snapshot [0-9]+', 'snapshot N');
	detail := nullif(det, '');
	hint := nullif(hin, '');
	RETURN NEXT;
END
$$;

\x on
SELECT * FROM sn_error($$SELECT festival.snapshot('sn_nope')$$);
SELECT * FROM sn_error($$SELECT festival.dump('sn_nope')$$);
SELECT * FROM sn_error($$SELECT festival.snapshot(NULL)$$);
SELECT * FROM sn_error($$SELECT festival.dump(NULL, 1)$$);
SELECT * FROM sn_error($$SELECT festival.dump('sn_none_lin', 999999999)$$);
-- a snapshot of another index
SELECT * FROM sn_error(format('SELECT festival.dump(%L, %s)', 'sn_none_lin',
							  (SELECT snap FROM sn_snap WHERE name = 'sn_none_quad')));
-- the tree changed since the snapshot
SELECT festival.insert('sn_none_lin', 99999, 'POINT(5 5)');
SELECT * FROM sn_error(format('SELECT festival.dump(%L, %s)', 'sn_none_lin',
							  (SELECT snap FROM sn_snap WHERE name = 'sn_none_lin')));
-- an earlier index of the same name
SELECT festival.snapshot('sn_empty') AS sn_empty_snap \gset
SELECT festival.drop_index('sn_empty');
SELECT festival.create_index('sn_empty', 'rtree', 'sn_dev', '{"page_size": 1024}') > 0 AS created;
SELECT * FROM sn_error(format('SELECT festival.dump(%L, %s)', 'sn_empty', :sn_empty_snap));
\x off

-- nothing was written by the refused dumps
SELECT count(*) AS rows_of_refused_dumps FROM festival.index_node
WHERE snapshot_id IN (999999999, :sn_empty_snap);

-- the tables are extension configuration tables: pg_dump keeps their rows
SELECT c.relname
FROM pg_extension e CROSS JOIN LATERAL unnest(e.extconfig) AS t(oid)
JOIN pg_class c ON c.oid = t.oid
WHERE e.extname = 'festival' AND c.relname LIKE 'index\_%' ORDER BY 1;

SELECT festival.drop_index(name) FROM sn_index ORDER BY ord;
SELECT festival.drop_index('sn_empty');
SELECT festival.drop_device('sn_dev');
DROP FUNCTION sn_compare(text), sn_walk(text), sn_close(float8, float8), sn_error(text);
DROP TABLE sn_src, sn_later, sn_gone, sn_index, sn_snap;
