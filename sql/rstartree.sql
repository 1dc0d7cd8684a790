--
-- rstartree: the R*-tree (structure 'rstartree', Beckmann et al. 1990) on
-- mixed data, with close and far forced reinsertion, 20, 30 and 40 percent
-- reinserted, a small max_neighbors, other fills, and under the flash
-- frameworks FAST and eFIND.
--
-- All indices share one source table, rs_src, and receive the same
-- modifications: a build, inserts, deletes (whose orphans go back in
-- through the R* insertion), updates, and a close and reopen.  After every
-- phase each index must answer festival.query for every predicate and a
-- selection of query geometries exactly as PostGIS brute force over rs_src
-- (fx_compare), hold as many entries as rs_src has rows, and
-- festival.check() (the R-tree's invariants: levels, fill between m and M,
-- exact MBRs) must return no rows.  Then: forced reinsertions happened,
-- the derived parameters, and refused options.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('rs_dev', io => 'buffered');

-------------------------------------------------------------------------------
-- Differential tests
-------------------------------------------------------------------------------
CREATE TABLE rs_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO rs_src SELECT id, geom FROM fx_src WHERE id % 2 = 0 OR id > 8000;
CREATE TABLE rs_later AS SELECT id, geom FROM fx_src WHERE id % 2 = 1 AND id < 8000;
SELECT (SELECT count(*) FROM rs_src) AS built_objects, (SELECT count(*) FROM rs_later) AS later_objects;

CREATE TABLE rs_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, options jsonb NOT NULL);
INSERT INTO rs_index VALUES
	( 1, 'rs_default', '{"page_size": 1024}'),
	( 2, 'rs_far', '{"page_size": 1024, "reinsert": "far"}'),
	( 3, 'rs_close_p20', '{"page_size": 1024, "reinsert": "close", "reinsert_percent": 20}'),
	( 4, 'rs_close_p40', '{"page_size": 1024, "reinsert_percent": 40}'),
	( 5, 'rs_far_p20', '{"page_size": 1024, "reinsert": "far", "reinsert_percent": 20}'),
	( 6, 'rs_far_p40', '{"page_size": 1024, "reinsert": "far", "reinsert_percent": 40}'),
	-- the overlap test over only 4 of the 24 entries above the leaves
	( 7, 'rs_neighbors4', '{"page_size": 1024, "max_neighbors": 4}'),
	( 8, 'rs_fill', '{"page_size": 1024, "min_fill": 30, "max_fill": 80}'),
	-- under the flash frameworks, with buffers small enough to flush often
	( 9, 'rs_fast', '{"framework": "fast", "page_size": 1024, "buffer_size": 16384,
		"flushing_policy": "fast_star"}'),
	(10, 'rs_fast_far_p20', '{"framework": "fast", "page_size": 1024, "buffer_size": 16384,
		"flushing_policy": "flush_all", "reinsert": "far", "reinsert_percent": 20}'),
	(11, 'rs_efind', '{"framework": "efind", "page_size": 1024, "buffer_size": 16384,
		"flushing_policy": "mhao", "read_buffer_policy": "lru"}'),
	(12, 'rs_efind_far_p40', '{"framework": "efind", "page_size": 1024, "buffer_size": 16384,
		"flushing_policy": "mh", "temporal_control": "both", "reinsert": "far", "reinsert_percent": 40}');

SELECT ord, name, festival.create_index(name, 'rstartree', 'rs_dev', options, 'rs_src') > 0 AS created
FROM rs_index ORDER BY ord;

-- the stored options, defaults filled in, and what setup derives from them:
-- M and m, and p = reinsert_percent of M (floor)
SELECT i.ord, i.name, c.options->>'reinsert' AS reinsert, (c.options->>'reinsert_percent')::int AS percent,
	   (c.options->>'max_neighbors')::int AS max_neighbors, (c.options->>'min_fill')::int AS min_fill,
	   (c.options->>'max_fill')::int AS max_fill,
	   (d->>'max_entries')::int AS m_max, (d->>'min_entries')::int AS m_min,
	   (d->>'reinsert_entries')::int AS p,
	   (d->>'reinsert_entries')::int = floor((d->>'max_entries')::int * (c.options->>'reinsert_percent')::int / 100.0) AS p_as_documented
FROM rs_index i JOIN festival.index c USING (name)
CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'config'->'derived' AS d) s
ORDER BY i.ord;

-- after each phase, fixture.verify_indices: one row per index with
-- brute-force answers, festival's answers, those missing and extra, rows of
-- festival.check(), entries in the index against rows of rs_src; all must
-- agree (ok)
CREATE TABLE rs_brute (pred text, qid int, id bigint);

-- a digest of a tree, page for page: every node's page, level, and each
-- entry's position, reference and box (see "Unchanged choices" below)
CREATE FUNCTION rs_digest(idx text)
RETURNS text
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT md5(string_agg(format('%s/%s/%s/%s/%s %s %s %s', t.page, n.level, n.position, n.ref,
								 n.xmin, n.ymin, n.xmax, n.ymax), ';' ORDER BY t.page, n.position))
	FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n
$$;

-- Phase 1: build (one insert at a time)
SELECT count(*) AS indices, min(built) AS min_built, max(built) AS max_built
FROM (SELECT festival.build(name) AS built FROM rs_index) s;
SELECT * FROM fixture.verify_indices('build', 'rs_index', 'rs_src', 'rs_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT ord, name, rs_digest(name) AS built_tree FROM rs_index ORDER BY ord;

-- Phase 2: insert the rest one at a time, in a mixed order
INSERT INTO rs_src SELECT id, geom FROM rs_later;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.insert(i.name, l.id, l.geom) AS ok
	  FROM rs_later l CROSS JOIN rs_index i
	  ORDER BY (l.id * 7919) % 10007, l.id, i.ord) s;
SELECT * FROM fixture.verify_indices('insert', 'rs_index', 'rs_src', 'rs_brute', ARRAY[2, 8, 12, 21, 29, 36]);

-- every index treated overflows by forced reinsertion (p entries at a
-- time) as well as by splits
SELECT i.ord, i.name, (festival.stats(i.name)->>'height')::int AS height,
	   (t->>'forced_reinsertions')::bigint > 0 AS reinserted,
	   (t->>'forced_reinsertions')::bigint % (festival.stats(i.name)->'config'->'derived'->>'reinsert_entries')::int = 0 AS by_p,
	   (t->>'splits_leaf')::bigint > 0 AS split_leaves,
	   (t->>'splits_internal')::bigint > 0 AS split_internal_nodes
FROM rs_index i CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'totals' AS t) s
ORDER BY i.ord;

-- Phase 3: delete two objects in five (underfull nodes are eliminated and
-- their entries reinserted)
CREATE TABLE rs_gone AS SELECT id, geom FROM rs_src WHERE id % 5 IN (1, 3) AND id < 8000;
DELETE FROM rs_src WHERE id IN (SELECT id FROM rs_gone);
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete(i.name, g.id, g.geom) AS ok
	  FROM rs_gone g CROSS JOIN rs_index i
	  ORDER BY (g.id * 31) % 10007, g.id, i.ord) s;
SELECT * FROM fixture.verify_indices('delete', 'rs_index', 'rs_src', 'rs_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'reinserted_entries')::bigint > 0) AS reinserted_orphans
FROM rs_index;

-- Phase 4: update one object in eight, moved by (3, -2), one in three of
-- them under a new id
CREATE TABLE rs_moved AS
	SELECT id AS old_id, geom AS old_geom,
		   CASE WHEN id % 3 = 0 THEN id + 100000 ELSE id END AS new_id,
		   ST_Translate(geom, 3, -2) AS new_geom
	FROM rs_src WHERE id % 8 = 0;
DELETE FROM rs_src WHERE id IN (SELECT old_id FROM rs_moved);
INSERT INTO rs_src SELECT new_id, new_geom FROM rs_moved;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.update(i.name, m.old_id, m.old_geom, m.new_id, m.new_geom) AS ok
	  FROM rs_moved m CROSS JOIN rs_index i
	  ORDER BY (m.old_id * 13) % 10007, m.old_id, i.ord) s;
SELECT * FROM fixture.verify_indices('update', 'rs_index', 'rs_src', 'rs_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT ord, name, rs_digest(name) AS updated_tree FROM rs_index ORDER BY ord;

-- Phase 5: close every index (buffers flushed), then query: each reopens
SELECT count(*) FILTER (WHERE closed) AS closed
FROM (SELECT festival.close(name) AS closed FROM rs_index) s;
SELECT * FROM fixture.verify_indices('reopened', 'rs_index', 'rs_src', 'rs_brute', ARRAY[2, 8, 12, 21, 29, 36]);

-------------------------------------------------------------------------------
-- Determinism: two indices with the same options built from the same
-- objects hold every entry on the same page; close and far reinsertion
-- build different trees from them
-------------------------------------------------------------------------------
SELECT festival.create_index('rs_twin', 'rstartree', 'rs_dev', '{"page_size": 1024}', 'rs_src') > 0 AS created;
SELECT festival.build('rs_twin') = (SELECT count(*) FROM rs_src) AS built;
CREATE FUNCTION rs_leaves(idx text)
RETURNS TABLE (page bigint, id bigint)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT t.page, n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level = 0
$$;
SELECT festival.create_index('rs_twin2', 'rstartree', 'rs_dev', '{"page_size": 1024}', 'rs_src') > 0 AS created;
SELECT festival.build('rs_twin2') = (SELECT count(*) FROM rs_src) AS built;
SELECT (SELECT count(*) FROM (SELECT * FROM rs_leaves('rs_twin') EXCEPT SELECT * FROM rs_leaves('rs_twin2')) d) AS differing,
	   (SELECT count(*) FROM rs_leaves('rs_twin')) AS entries;
SELECT festival.create_index('rs_twin_far', 'rstartree', 'rs_dev', '{"page_size": 1024, "reinsert": "far"}', 'rs_src') > 0 AS created;
SELECT festival.build('rs_twin_far') = (SELECT count(*) FROM rs_src) AS built;
SELECT (SELECT count(*) FROM (SELECT * FROM rs_leaves('rs_twin') EXCEPT SELECT * FROM rs_leaves('rs_twin_far')) d) > 0 AS trees_differ;
SELECT count(*) AS check_rows FROM (
	SELECT * FROM festival.check('rs_twin') UNION ALL SELECT * FROM festival.check('rs_twin2')
	UNION ALL SELECT * FROM festival.check('rs_twin_far')) c;
SELECT festival.drop_index('rs_twin'), festival.drop_index('rs_twin2'), festival.drop_index('rs_twin_far');

-------------------------------------------------------------------------------
-- Unchanged choices: ChooseSubtree is computed faster than the paper states
-- it (an entry containing the new box wins at once, the max_neighbors
-- candidates are selected without sorting the node, overlap sums stop
-- early), and must still choose exactly what the plain algorithm chooses.
-- Assert-enabled builds compare every call with the plain algorithm
-- (rstar_choose_subtree_reference); here, as after phases 1 and 4 above,
-- the trees are compared page for page (rs_digest) with the digests the
-- plain algorithm built before the fast one existed (recorded in the
-- expected output).
-- 4 kB pages hold 101 entries, so only 32 (8) of them are candidates;
-- lattice points make leaves without area (entries of zero enlargement
-- ahead of a containing one); two rectangles too large for a finite area
-- take the path that falls back to the plain algorithm.
-------------------------------------------------------------------------------
CREATE TABLE rs_big (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO rs_big
SELECT i, ST_MakePoint((i * 7919) % 10007 + (i % 7) / 8.0, (i * 104729) % 10009)
FROM generate_series(0, 5999) i;
INSERT INTO rs_big
SELECT i, ST_MakePoint((i % 60) * 150, (i / 60) * 3) FROM generate_series(6000, 8999) i;
INSERT INTO rs_big
SELECT i, ST_MakeEnvelope(x, y, x + 1 + i % 13, y + 1 + i % 7)
FROM (SELECT i, (i * 3571) % 9973 AS x, (i * 6007) % 9931 AS y FROM generate_series(9000, 10999) i) s;
CREATE TABLE rs_big_later (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO rs_big_later
SELECT i, ST_MakePoint((i * 7919) % 10007 + 0.5, (i * 104729) % 10009 + 0.25)
FROM generate_series(11000, 12499) i;
INSERT INTO rs_big_later VALUES
	(20000, ST_MakeEnvelope(-1e300, -1e300, 1e300, 1e300)),
	(20001, ST_MakeEnvelope(0, 0, 1e300, 10)),
	(20002, ST_MakePoint(5000, 5000));
CREATE TABLE rs_big_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, options jsonb NOT NULL);
INSERT INTO rs_big_index VALUES
	(1, 'rs_big_4k', '{}'),
	(2, 'rs_big_n8', '{"page_size": 2048, "max_neighbors": 8, "reinsert": "far", "reinsert_percent": 40}');
SELECT ord, name, festival.create_index(name, 'rstartree', 'rs_dev', options, 'rs_big') > 0 AS created,
	   festival.build(name) = (SELECT count(*) FROM rs_big) AS built,
	   rs_digest(name) AS built_tree
FROM rs_big_index ORDER BY ord;
INSERT INTO rs_big SELECT * FROM rs_big_later;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.insert(i.name, l.id, l.geom) AS ok
	  FROM rs_big_later l CROSS JOIN rs_big_index i ORDER BY l.id, i.ord) s;
CREATE TABLE rs_big_gone AS SELECT * FROM rs_big WHERE id % 4 = 1 AND id < 11000;
DELETE FROM rs_big WHERE id IN (SELECT id FROM rs_big_gone);
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete(i.name, g.id, g.geom) AS ok
	  FROM rs_big_gone g CROSS JOIN rs_big_index i ORDER BY (g.id * 31) % 10007, g.id, i.ord) s;
SELECT ord, name, rs_digest(name) AS modified_tree,
	   (festival.stats(name)->>'entries')::bigint = (SELECT count(*) FROM rs_big) AS entries_exact,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM rs_big_index ORDER BY ord;
-- The node pages in the file, read raw after splits, reinsertions and
-- deletes: the bytes after a node's entries are zero (ns_serialize zeroes
-- only the header and that tail, not the whole page first), so equal trees
-- are equal files.  Counted: node pages, and those with a non-zero tail.
SELECT i.ord, count(*) > 0 AS node_pages,
	   count(*) FILTER (WHERE ltrim(substr(pg, 33 + fixture.get_le(pg, 20, 4)::int
										  * (s.st->'config'->'derived'->>'entry_bytes')::int),
									'\x00'::bytea) <> ''::bytea) AS dirty_tails
FROM rs_big_index i
	 CROSS JOIN LATERAL (SELECT festival.flush(i.name), festival.stats(i.name) AS st) s
	 CROSS JOIN LATERAL generate_series(2, (s.st->>'pages')::bigint - 1) p
	 CROSS JOIN LATERAL fixture.read_page(s.st->>'file',
										  (s.st->'config'->'options'->>'page_size')::int, p) pg
WHERE get_byte(pg, 7) = 2
GROUP BY i.ord ORDER BY i.ord;
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM rs_big_index) s;
DROP TABLE rs_big, rs_big_later, rs_big_gone, rs_big_index;

-------------------------------------------------------------------------------
-- Refused options
-------------------------------------------------------------------------------
\set VERBOSITY default
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"reinsert": "middle"}', 'rs_src');
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"reinsert_percent": 0}', 'rs_src');
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"reinsert_percent": 60}', 'rs_src');
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"reinsert_percent": 25.5}', 'rs_src');
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"max_neighbors": 0}', 'rs_src');
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"max_neighbors": "all"}', 'rs_src');
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"min_fill": 60}', 'rs_src');
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"page_size": 1024, "max_fill": 10}', 'rs_src');
-- the R*-tree always splits with the R* split
SELECT festival.create_index('rs_bad', 'rstartree', 'rs_dev', '{"split": "quadratic"}', 'rs_src');
\set VERBOSITY terse

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM rs_index) s;
SELECT festival.drop_device('rs_dev');
DROP FUNCTION rs_leaves(text), rs_digest(text);
DROP TABLE rs_src, rs_later, rs_index, rs_brute, rs_gone, rs_moved;
RESET festival.progress_interval;
RESET client_min_messages;
