--
-- splits: every R-tree split policy ('linear', 'quadratic', 'exponential',
-- 'greene', 'angtan', 'rstar') on mixed data, and the quadratic and R*
-- splits under the flash frameworks FAST and eFIND.
--
-- Part 1: all indices share one source table, sp_src, and receive the
-- same modifications: a build, inserts, deletes, updates, and a close and
-- reopen.  After every phase each index must answer festival.query for
-- every predicate and a selection of query geometries exactly as PostGIS
-- brute force over sp_src (fx_compare), hold as many entries as sp_src
-- has rows, and festival.check() must return no rows.  Small pages
-- (1024 bytes: M = 24, or M = 18 with max_fill 75) make splits frequent.
--
-- Part 2: the exponential split really is the minimum.  On small sets of
-- M + 1 objects, an index receiving them splits its root leaf exactly
-- once; the two root entries then cover the two groups of the split.  Their
-- total area is compared with the minimum that an SQL brute force finds
-- over every partition of the same M + 1 boxes into two groups of at least
-- m, and with the total area of the other splits on the same sets.  The
-- R* split's groups are compared with a model of it in SQL.
--
-- Part 3: refused configurations.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('sp_dev', io => 'buffered');

-------------------------------------------------------------------------------
-- Part 1: differential tests of every split
-------------------------------------------------------------------------------
CREATE TABLE sp_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO sp_src SELECT id, geom FROM fx_src WHERE id % 2 = 0 OR id > 8000;
CREATE TABLE sp_later AS SELECT id, geom FROM fx_src WHERE id % 2 = 1 AND id < 8000;
SELECT (SELECT count(*) FROM sp_src) AS built_objects, (SELECT count(*) FROM sp_later) AS later_objects;

CREATE TABLE sp_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, options jsonb NOT NULL);
INSERT INTO sp_index VALUES
	( 1, 'sp_linear', '{"split": "linear", "page_size": 1024}'),
	( 2, 'sp_quadratic', '{"split": "quadratic", "page_size": 1024}'),
	( 3, 'sp_exponential', '{"split": "exponential", "page_size": 1024, "max_fill": 75}'),
	( 4, 'sp_greene', '{"split": "greene", "page_size": 1024}'),
	( 5, 'sp_angtan', '{"split": "angtan", "page_size": 1024}'),
	( 6, 'sp_rstar', '{"split": "rstar", "page_size": 1024}'),
	-- a low minimum fill leaves the splits the most freedom
	( 7, 'sp_angtan_m20', '{"split": "angtan", "page_size": 1024, "min_fill": 20}'),
	( 8, 'sp_rstar_m30', '{"split": "rstar", "page_size": 1024, "min_fill": 30}'),
	-- under the flash frameworks, with buffers small enough to flush often
	( 9, 'sp_fast_quadratic', '{"framework": "fast", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "flushing_policy": "fast_star"}'),
	(10, 'sp_fast_rstar', '{"framework": "fast", "split": "rstar", "page_size": 1024,
		"buffer_size": 16384, "flushing_policy": "flush_all"}'),
	(11, 'sp_efind_quadratic', '{"framework": "efind", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "flushing_policy": "mhao", "read_buffer_policy": "lru"}'),
	(12, 'sp_efind_rstar', '{"framework": "efind", "split": "rstar", "page_size": 1024,
		"buffer_size": 16384, "flushing_policy": "mh", "temporal_control": "both"}');

SELECT ord, name, festival.create_index(name, 'rtree', 'sp_dev', options, 'sp_src') > 0 AS created
FROM sp_index ORDER BY ord;

-- the stored options hold the split asked for
SELECT i.ord, i.name, c.options->>'split' AS split, (c.options->>'max_fill')::int AS max_fill
FROM sp_index i JOIN festival.index c USING (name) ORDER BY i.ord;

-- after each phase, fixture.verify_indices: one row per index with
-- brute-force answers, festival's answers, those missing and extra, rows of
-- festival.check(), entries in the index against rows of sp_src; all must
-- agree (ok)
CREATE TABLE sp_brute (pred text, qid int, id bigint);

-- Phase 1: build (one insert at a time)
SELECT count(*) AS indices, min(built) AS min_built, max(built) AS max_built
FROM (SELECT festival.build(name) AS built FROM sp_index) s;
SELECT * FROM fixture.verify_indices('build', 'sp_index', 'sp_src', 'sp_brute', ARRAY[2, 8, 12, 21, 29, 36]);

-- Phase 2: insert the rest one at a time, in a mixed order
INSERT INTO sp_src SELECT id, geom FROM sp_later;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.insert(i.name, l.id, l.geom) AS ok
	  FROM sp_later l CROSS JOIN sp_index i
	  ORDER BY (l.id * 7919) % 10007, l.id, i.ord) s;
SELECT * FROM fixture.verify_indices('insert', 'sp_index', 'sp_src', 'sp_brute', ARRAY[2, 8, 12, 21, 29, 36]);

-- every index split leaves and internal nodes
SELECT i.ord, i.name, (festival.stats(i.name)->>'height')::int AS height,
	   (t->>'splits_leaf')::bigint > 0 AS split_leaves,
	   (t->>'splits_internal')::bigint > 0 AS split_internal_nodes
FROM sp_index i CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'totals' AS t) s
ORDER BY i.ord;

-- Phase 3: delete two objects in five (underfull nodes are eliminated and
-- their entries reinserted)
CREATE TABLE sp_gone AS SELECT id, geom FROM sp_src WHERE id % 5 IN (1, 3) AND id < 8000;
DELETE FROM sp_src WHERE id IN (SELECT id FROM sp_gone);
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete(i.name, g.id, g.geom) AS ok
	  FROM sp_gone g CROSS JOIN sp_index i
	  ORDER BY (g.id * 31) % 10007, g.id, i.ord) s;
SELECT * FROM fixture.verify_indices('delete', 'sp_index', 'sp_src', 'sp_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'reinserted_entries')::bigint > 0) AS reinserted_orphans
FROM sp_index;

-- Phase 4: update one object in eight, moved by (3, -2), one in three of
-- them under a new id
CREATE TABLE sp_moved AS
	SELECT id AS old_id, geom AS old_geom,
		   CASE WHEN id % 3 = 0 THEN id + 100000 ELSE id END AS new_id,
		   ST_Translate(geom, 3, -2) AS new_geom
	FROM sp_src WHERE id % 8 = 0;
DELETE FROM sp_src WHERE id IN (SELECT old_id FROM sp_moved);
INSERT INTO sp_src SELECT new_id, new_geom FROM sp_moved;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.update(i.name, m.old_id, m.old_geom, m.new_id, m.new_geom) AS ok
	  FROM sp_moved m CROSS JOIN sp_index i
	  ORDER BY (m.old_id * 13) % 10007, m.old_id, i.ord) s;
SELECT * FROM fixture.verify_indices('update', 'sp_index', 'sp_src', 'sp_brute', ARRAY[2, 8, 12, 21, 29, 36]);

-- Phase 5: close every index (buffers flushed), then query: each reopens
SELECT count(*) FILTER (WHERE closed) AS closed
FROM (SELECT festival.close(name) AS closed FROM sp_index) s;
SELECT * FROM fixture.verify_indices('reopened', 'sp_index', 'sp_src', 'sp_brute', ARRAY[2, 8, 12, 21, 29, 36]);

-------------------------------------------------------------------------------
-- Part 2: the exponential split finds the minimum total area
--
-- 24 sets of M + 1 objects of fx_src (ids <= 8000; each set mixes points,
-- rectangles, lines and polygons), for three node sizes: max_fill 25, 40
-- and 50 of a 1024-byte page (24 entries) give M = 6, 9 and 12 (M + 1 = 7,
-- 10, 13), with min_fill 30 (m = 2, 3, 4).  Each set is built alone into
-- an index of every split: M + 1 inserts, one split of the root leaf.
-------------------------------------------------------------------------------
CREATE TABLE ex_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
CREATE TABLE ex_split (name text PRIMARY KEY);
INSERT INTO ex_split VALUES ('linear'), ('quadratic'), ('exponential'), ('greene'), ('angtan'), ('rstar');
CREATE TABLE ex_size (max_fill int PRIMARY KEY, n int NOT NULL, m int NOT NULL);
INSERT INTO ex_size VALUES (25, 7, 2), (40, 10, 3), (50, 13, 4);

SELECT count(*) AS indices FROM (
	SELECT festival.create_index('ex_' || s.name || '_' || z.max_fill, 'rtree', 'sp_dev',
								 jsonb_build_object('split', s.name, 'page_size', 1024,
													'max_fill', z.max_fill, 'min_fill', 30),
								 'ex_src')
	FROM ex_split s CROSS JOIN ex_size z) c;

-- M and m as the indices derive them
SELECT z.max_fill, z.n AS expected_n, z.m AS expected_m,
	   (festival.stats('ex_quadratic_' || z.max_fill)->'config'->'derived'->>'max_entries')::int + 1 AS n,
	   (festival.stats('ex_quadratic_' || z.max_fill)->'config'->'derived'->>'min_entries')::int AS m
FROM ex_size z ORDER BY z.max_fill;

-- the sets: set k of size n takes every 97th object from an offset, so the
-- objects lie far apart and are of different kinds
CREATE TABLE ex_set (max_fill int, k int, id bigint, geom geometry);
INSERT INTO ex_set
SELECT z.max_fill, k, s.id, s.geom
FROM ex_size z CROSS JOIN generate_series(1, 8) k
CROSS JOIN LATERAL (SELECT id, geom FROM fx_src WHERE id <= 8000 AND id % 97 = (k * 11 + z.n) % 97
					ORDER BY id LIMIT z.n) s;
SELECT max_fill, count(DISTINCT k) AS sets, min(c) AS min_objects, max(c) AS max_objects
FROM (SELECT max_fill, k, count(*) AS c FROM ex_set GROUP BY max_fill, k) s GROUP BY max_fill ORDER BY max_fill;

-- for every set and split: the two groups of the split (from the root's
-- two entries) and the boxes of the set (from the leaves)
CREATE TABLE ex_result (max_fill int, k int, split text, root_entries int, total_area float8,
						overlap float8, objects int);
CREATE TABLE ex_boxes (max_fill int, k int, ref bigint, x1 float8, y1 float8, x2 float8, y2 float8);
CREATE FUNCTION ex_run() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	z record;
	s record;
	idx text;
	root bigint;
BEGIN
	FOR z IN SELECT DISTINCT max_fill, k FROM ex_set ORDER BY 1, 2 LOOP
		TRUNCATE ex_src;
		INSERT INTO ex_src SELECT id, geom FROM ex_set WHERE max_fill = z.max_fill AND k = z.k;
		FOR s IN SELECT name FROM ex_split ORDER BY name LOOP
			idx := 'ex_' || s.name || '_' || z.max_fill;
			PERFORM festival.build(idx);
			root := (festival.stats(idx)->>'root')::bigint;
			INSERT INTO ex_result
			SELECT z.max_fill, z.k, s.name, count(*),
				   sum((n.xmax - n.xmin) * (n.ymax - n.ymin)),
				   -- the area shared by the two groups' MBRs
				   greatest(0, min(n.xmax) - max(n.xmin)) * greatest(0, min(n.ymax) - max(n.ymin)),
				   (SELECT count(*) FROM festival.node(idx, root) r
					CROSS JOIN LATERAL festival.node(idx, r.ref) l)
			FROM festival.node(idx, root) n;
			IF s.name = 'exponential' THEN
				INSERT INTO ex_boxes
				SELECT z.max_fill, z.k, l.ref, l.xmin, l.ymin, l.xmax, l.ymax
				FROM festival.node(idx, root) r CROSS JOIN LATERAL festival.node(idx, r.ref) l;
			END IF;
		END LOOP;
	END LOOP;
END
$$;
SELECT ex_run();

-- every split split exactly once: two root entries over all the objects
SELECT count(*) AS cases,
	   count(*) FILTER (WHERE r.root_entries = 2 AND r.objects = z.n) AS one_split_over_all
FROM ex_result r JOIN ex_size z USING (max_fill);

-- brute force: every partition of a set's boxes into two groups of at
-- least m (mask bit j: box j in the second group), the least total area
CREATE TABLE ex_minimum AS
WITH b AS (SELECT max_fill, k, (row_number() OVER (PARTITION BY max_fill, k ORDER BY ref) - 1)::int AS j,
				  x1, y1, x2, y2
		   FROM ex_boxes),
	 parts AS (SELECT b.max_fill, b.k, mask, (mask >> b.j) & 1 AS g, count(*) AS c,
					  (max(x2) - min(x1)) * (max(y2) - min(y1)) AS area
			   FROM ex_size z
			   JOIN b USING (max_fill)
			   CROSS JOIN generate_series(1, (1 << z.n) - 2) mask
			   WHERE mask & (1 << (z.n - 1)) = 0	-- the groups are interchangeable
			   GROUP BY b.max_fill, b.k, mask, g)
SELECT p.max_fill, p.k, min(total) AS min_area, count(*) AS partitions
FROM (SELECT max_fill, k, mask, sum(area) AS total
	  FROM parts JOIN ex_size z USING (max_fill)
	  GROUP BY max_fill, k, mask
	  HAVING count(*) = 2 AND min(c) >= min(z.m)) p
GROUP BY p.max_fill, p.k;

-- partitions examined per set: 2^(n-1) - 1 minus those leaving a group
-- below m
SELECT max_fill, min(partitions) AS partitions, count(*) AS sets FROM ex_minimum GROUP BY max_fill ORDER BY max_fill;

-- per split and node size: sets where the split reaches the minimum (the
-- exponential split in all of them), sets where it is worse, sets where
-- it would be better (none may exist), and the areas summed over the sets
SELECT r.split, r.max_fill,
	   count(*) FILTER (WHERE abs(r.total_area - e.min_area) <= 1e-9 * greatest(1, e.min_area)) AS minimal,
	   count(*) FILTER (WHERE r.total_area > e.min_area + 1e-9 * greatest(1, e.min_area)) AS larger,
	   count(*) FILTER (WHERE r.total_area < e.min_area - 1e-9 * greatest(1, e.min_area)) AS below_minimum,
	   round(sum(r.total_area)::numeric, 1) AS total_area,
	   round(sum(e.min_area)::numeric, 1) AS minimum_area
FROM ex_result r JOIN ex_minimum e USING (max_fill, k)
GROUP BY r.split, r.max_fill
ORDER BY r.max_fill, r.split;

-- the other splits are not always minimal: on these sets some split lands
-- above the minimum somewhere (else the comparison would prove nothing)
SELECT count(*) FILTER (WHERE r.total_area > e.min_area + 1e-9 * greatest(1, e.min_area)) > 0 AS others_can_be_worse
FROM ex_result r JOIN ex_minimum e USING (max_fill, k) WHERE r.split <> 'exponential';

-- the R* split against a model of it in SQL (section 4.2): for each axis,
-- every distribution of the sorts by lower and by upper value (ties by the
-- other value, then by id: the order of insertion, so of position in the
-- node); the axis of least margin sum (ties: x); on it, the distribution of
-- least overlap, then least area.  The split's groups must have the
-- model's overlap and area.
CREATE TABLE ex_rstar_model AS
WITH s AS (SELECT b.max_fill, b.k, b.x1, b.y1, b.x2, b.y2, a.axis, u.by_upper,
				  row_number() OVER (PARTITION BY b.max_fill, b.k, a.axis, u.by_upper
									 ORDER BY CASE WHEN u.by_upper THEN (CASE a.axis WHEN 0 THEN b.x2 ELSE b.y2 END)
												   ELSE (CASE a.axis WHEN 0 THEN b.x1 ELSE b.y1 END) END,
											  CASE WHEN u.by_upper THEN (CASE a.axis WHEN 0 THEN b.x1 ELSE b.y1 END)
												   ELSE (CASE a.axis WHEN 0 THEN b.x2 ELSE b.y2 END) END,
											  b.ref) AS r
		   FROM ex_boxes b CROSS JOIN (VALUES (0), (1)) a(axis) CROSS JOIN (VALUES (false), (true)) u(by_upper)),
	 d AS (SELECT s.max_fill, s.k, s.axis, s.by_upper, g.size,
				  min(x1) FILTER (WHERE r <= g.size) AS ax1, min(y1) FILTER (WHERE r <= g.size) AS ay1,
				  max(x2) FILTER (WHERE r <= g.size) AS ax2, max(y2) FILTER (WHERE r <= g.size) AS ay2,
				  min(x1) FILTER (WHERE r > g.size) AS bx1, min(y1) FILTER (WHERE r > g.size) AS by1,
				  max(x2) FILTER (WHERE r > g.size) AS bx2, max(y2) FILTER (WHERE r > g.size) AS by2
		   FROM s JOIN ex_size z USING (max_fill)
		   CROSS JOIN LATERAL generate_series(z.m, z.n - z.m) g(size)
		   GROUP BY s.max_fill, s.k, s.axis, s.by_upper, g.size),
	 v AS (SELECT d.*, (ax2 - ax1) + (ay2 - ay1) + (bx2 - bx1) + (by2 - by1) AS margin,
				  greatest(0, least(ax2, bx2) - greatest(ax1, bx1)) * greatest(0, least(ay2, by2) - greatest(ay1, by1)) AS overlap,
				  (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) AS area
		   FROM d),
	 chosen_axis AS (SELECT DISTINCT ON (max_fill, k) max_fill, k, axis
					 FROM (SELECT max_fill, k, axis, sum(margin) AS margin_sum FROM v GROUP BY 1, 2, 3) t
					 ORDER BY max_fill, k, margin_sum, axis)
SELECT DISTINCT ON (v.max_fill, v.k) v.max_fill, v.k, v.overlap, v.area
FROM v JOIN chosen_axis USING (max_fill, k, axis)
ORDER BY v.max_fill, v.k, v.overlap, v.area, v.by_upper, v.size;

SELECT r.max_fill, count(*) AS sets,
	   count(*) FILTER (WHERE abs(r.overlap - m.overlap) <= 1e-9 * greatest(1, m.overlap)
						AND abs(r.total_area - m.area) <= 1e-9 * greatest(1, m.area)) AS as_modelled
FROM ex_result r JOIN ex_rstar_model m USING (max_fill, k)
WHERE r.split = 'rstar'
GROUP BY r.max_fill ORDER BY r.max_fill;

SELECT count(*) AS dropped FROM (
	SELECT festival.drop_index('ex_' || s.name || '_' || z.max_fill) FROM ex_split s CROSS JOIN ex_size z) d;

-------------------------------------------------------------------------------
-- Part 3: refused configurations
-------------------------------------------------------------------------------
\set VERBOSITY default
-- the exhaustive split on nodes too large to search: the default 4096-byte
-- page (M + 1 = 102), a 1024-byte page full (M + 1 = 25), a 65536-byte page
-- even at the smallest max_fill
SELECT festival.create_index('sp_bad', 'rtree', 'sp_dev', '{"split": "exponential"}', 'sp_src');
SELECT festival.create_index('sp_bad', 'rtree', 'sp_dev', '{"split": "exponential", "page_size": 1024}', 'sp_src');
SELECT festival.create_index('sp_bad', 'rtree', 'sp_dev',
							 '{"split": "exponential", "page_size": 65536, "max_fill": 10}', 'sp_src');
-- the largest accepted node: M + 1 = 20 (1024-byte page, max_fill 83, as
-- the hint above says); max_fill 84 gives M + 1 = 21
SELECT festival.create_index('sp_ok', 'rtree', 'sp_dev', '{"split": "exponential", "page_size": 1024, "max_fill": 83}', 'sp_src') > 0 AS created;
SELECT (festival.stats('sp_ok')->'config'->'derived'->>'max_entries')::int + 1 AS split_entries;
SELECT festival.create_index('sp_bad', 'rtree', 'sp_dev', '{"split": "exponential", "page_size": 1024, "max_fill": 84}', 'sp_src');
SELECT festival.drop_index('sp_ok');
-- an unknown split
SELECT festival.create_index('sp_bad', 'rtree', 'sp_dev', '{"split": "cubic"}', 'sp_src');
\set VERBOSITY terse

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM sp_index) s;
SELECT festival.drop_device('sp_dev');
DROP FUNCTION ex_run();
DROP TABLE sp_src, sp_later, sp_index, sp_brute, sp_gone, sp_moved,
	ex_src, ex_split, ex_size, ex_set, ex_result, ex_boxes, ex_minimum, ex_rstar_model;
RESET festival.progress_interval;
RESET client_min_messages;
