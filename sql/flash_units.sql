--
-- flash_units: the decisions of FAST and eFIND one step at a time, through
-- the inspection functions festival.buffer(), festival.node(),
-- festival.flush_unit() and festival.cache_simulate().
--
-- Every index here has tiny nodes: 1024-byte pages filled to 17 % hold
-- M = 4 entries, m = 2.  Points on the diagonal (i, i) inserted in the
-- order i = 1, 2, ... always split the last leaf, so the trees are known
-- in advance:
--   10 points: root 4 (level 1) over the leaves 2 {1,2,3}, 3 {4,5,6} and
--              5 {7,8,9,10}
--   30 points: root 9 (level 2) over 4 {2,3}, 8 {5,6}, 12 {7,10} and
--              15 {11,13,14,16}; leaves 2 {1,2,3}, 3 {4,5,6}, 5 {7,8,9},
--              6 {10,11,12}, 7 {13,14,15}, 10 {16,17,18}, 11 {19,20,21},
--              13 {22,23,24}, 14 {25,26,27}, 16 {28,29,30}
-- Each test builds such a tree, flushes it and closes the index, so that
-- it starts with an empty buffer, a logical clock at 0 (every modification
-- taken into the buffer advances it by one: last_modified) and, for FAST,
-- no flushing units yet.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('fu_dev', io => 'buffered');

-- fu_tree(name, options, n): an index of n diagonal points with M = 4,
-- written out and closed.  options are added to the tiny-node options.
CREATE FUNCTION pg_temp.fu_tree(name text, options jsonb, n int) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM festival.create_index(name, 'rtree', 'fu_dev',
		'{"page_size": 1024, "max_fill": 17, "min_fill": 50, "split": "quadratic"}'::jsonb || options);
	PERFORM festival.insert(name, i, ST_MakePoint(i, i)) FROM generate_series(1, n) i;
	PERFORM festival.flush(name);
	RETURN festival.close(name);
END
$$;

-- fu_buffer(name): the write buffer, page by page
CREATE FUNCTION pg_temp.fu_buffer(name text)
RETURNS TABLE (page bigint, status text, level int, modifications bigint, last_modified bigint, bytes bigint)
LANGUAGE sql AS $$
	SELECT page, status, level, modifications, last_modified, bytes
	FROM festival.buffer(name) ORDER BY page
$$;

-- fu_tree_nodes(name): every node reachable from the root, as
-- festival.node returns it (entries in the order returned)
CREATE FUNCTION pg_temp.fu_tree_nodes(name text)
RETURNS TABLE (page bigint, level int, refs bigint[], boxes text)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(name)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(name, t.page) n WHERE n.level > 0)
	SELECT n.page, n.level, array_agg(n.ref ORDER BY n.position),
		   string_agg(format('%s,%s %s,%s', n.xmin, n.ymin, n.xmax, n.ymax), ' | ' ORDER BY n.position)
	FROM t CROSS JOIN LATERAL festival.node(name, t.page) n
	GROUP BY n.page, n.level
	ORDER BY n.level DESC, n.page
$$;

-- fu_entries(name): every entry of every node reachable from the root
CREATE FUNCTION pg_temp.fu_entries(name text)
RETURNS TABLE (page bigint, level int, pos int, ref bigint, x1 float8, y1 float8, x2 float8, y2 float8)
LANGUAGE sql AS $$
	SELECT n.page, n.level, n.position, n.ref, n.xmin, n.ymin, n.xmax, n.ymax
	FROM pg_temp.fu_tree_nodes(name) t CROSS JOIN LATERAL festival.node(name, t.page) n
$$;

-- fu_flushes(name, k): k successive calls of festival.flush_unit, each
-- with the pages it wrote (sorted), and what stays buffered
CREATE FUNCTION pg_temp.fu_flushes(name text, k int)
RETURNS TABLE (call int, pages bigint[], still_buffered bigint[])
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. k LOOP
		call := i;
		SELECT array_agg(u.page ORDER BY u.page) INTO pages FROM festival.flush_unit(name) u;
		SELECT array_agg(b.page ORDER BY b.page) INTO still_buffered FROM festival.buffer(name) b;
		RETURN NEXT;
	END LOOP;
END
$$;

-- fu_counter(name, key): a counter of festival.stats(name)->'totals'
CREATE FUNCTION pg_temp.fu_counter(name text, key text) RETURNS bigint
LANGUAGE sql AS $$ SELECT (festival.stats(name)->'totals'->>key)::bigint $$;

-- fu_sqlstate(statement): the SQLSTATE of the error it raises, NULL if none
CREATE FUNCTION pg_temp.fu_sqlstate(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	state text;
BEGIN
	EXECUTE stmt;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE;
	RETURN state;
END
$$;

-- eFIND without a read buffer and without temporal control, with a write
-- buffer so large that it never flushes by itself
\set efind_plain '{"framework": "efind", "buffer_size": 1048576, "read_buffer_policy": "none", "read_buffer_percent": 0, "temporal_control": "none"}'

-------------------------------------------------------------------------------
-- 1. eFIND: what the write buffer holds and how a node is merged
-------------------------------------------------------------------------------
SELECT pg_temp.fu_tree('fu_merge', :'efind_plain', 10) AS closed;
SELECT * FROM pg_temp.fu_tree_nodes('fu_merge');

-- MOD pages.  Every entry added, removed or changed counts one
-- modification; the tree of a page keeps one element per entry (its
-- latest version or a removal mark); a page costs 48 bytes and 48 per
-- element (the entry, 40, and 8).
--   leaf 2: id 11 added inside its box (the root is left alone)
SELECT festival.insert('fu_merge', 11, 'POINT(2.5 1.5)') AS inserted;
--   leaf 5: 9 removed (its box stays), a second entry of id 7 added, 10
--   removed (the box shrinks: the root's entry for 5 changes), 12 added
--   at (11, 11) (the box grows: the same entry of the root changes again)
SELECT festival.delete('fu_merge', 9, 'POINT(9 9)') AS deleted,
	   festival.insert('fu_merge', 7, 'POINT(7.5 8)') AS inserted,
	   festival.delete('fu_merge', 10, 'POINT(10 10)') AS deleted,
	   festival.insert('fu_merge', 12, 'POINT(11 11)') AS inserted;
-- leaf 2: 1 modification (1 element); leaf 5: 4 (4 elements: 9 and 10
-- removed, 7 (7.5, 8) and 12 added); root 4: 2 (1 element: its entry for 5)
SELECT * FROM pg_temp.fu_buffer('fu_merge');

-- festival.node merges the stored node with the buffered elements, in the
-- order of the entries' refs (the second entry of 7 after the first),
-- removed entries left out
SELECT * FROM pg_temp.fu_tree_nodes('fu_merge');
-- every read of a MOD page is a merge: reading the four nodes once each
-- merges the root and leaves 2 and 5, not leaf 3
SELECT pg_temp.fu_counter('fu_merge', 'merges') AS merges_before \gset
SELECT count(*) AS entries FROM unnest(ARRAY[4, 2, 3, 5]) p CROSS JOIN LATERAL festival.node('fu_merge', p) n;
SELECT pg_temp.fu_counter('fu_merge', 'merges') - :merges_before AS merges;

-- NEW and DEL pages.
--   13 at (2, 2.5) overflows leaf 2: the split rewrites page 2 (DEL + NEW:
--   1 + 1 modifications, then one per entry it keeps: 1 and 11) and
--   creates page 6 (NEW: 1 + its entries 2, 3, 13); the root's entry for
--   2 changes and one for 6 is added (2 more).
SELECT festival.insert('fu_merge', 13, 'POINT(2 2.5)') AS inserted;
--   5 leaves leaf 3 (1 modification); then 6 leaves it and leaf 3, with a
--   single entry, is eliminated: page 3 is freed (DEL, 1 more) and its
--   entry 4 is reinserted into leaf 6 (1 more there); the root loses its
--   entry for 3 and its entry for 6 grows (2 more).
SELECT festival.delete('fu_merge', 5, 'POINT(5 5)') AS deleted,
	   festival.delete('fu_merge', 6, 'POINT(6 6)') AS deleted;
-- page 2: 1 + 2 + 2 = 5; page 3: 2 (DEL, no elements); root 4: 2 + 2 + 2 = 6
-- (4 elements: entries 2, 3, 5, 6); leaf 5 unchanged: 4; page 6: 4 + 1 = 5
SELECT * FROM pg_temp.fu_buffer('fu_merge');
SELECT * FROM pg_temp.fu_tree_nodes('fu_merge');
CREATE TEMP TABLE fu_merged AS SELECT * FROM pg_temp.fu_entries('fu_merge');
-- every node in the order of its refs
SELECT count(*) AS entries,
	   bool_and(ordered) AS in_ref_order
FROM (SELECT ref >= coalesce(lag(ref) OVER (PARTITION BY page ORDER BY pos), ref) AS ordered
	  FROM fu_merged) s;
-- a freed page is not a node, but the index is healthy: it must not be
-- reported as corrupted (SQLSTATE XX001)
SELECT pg_temp.fu_sqlstate('SELECT * FROM festival.node(''fu_merge'', 3)') IS DISTINCT FROM 'XX001'
	AS freed_page_not_corrupt;
SELECT * FROM festival.check('fu_merge');

-- festival.flush writes every buffered page: nothing stays buffered, and
-- every node reads back exactly as it was merged; page 3 is on the free list
SELECT festival.flush('fu_merge');
SELECT count(*) AS buffered FROM festival.buffer('fu_merge');
SELECT festival.stats('fu_merge')->>'free_pages' AS free_pages;
CREATE TEMP TABLE fu_flushed AS SELECT * FROM pg_temp.fu_entries('fu_merge');
SELECT (SELECT count(*) FROM fu_merged) AS before_flush, (SELECT count(*) FROM fu_flushed) AS after_flush,
	   (SELECT count(*) FROM (TABLE fu_merged EXCEPT ALL TABLE fu_flushed) d) AS lost,
	   (SELECT count(*) FROM (TABLE fu_flushed EXCEPT ALL TABLE fu_merged) d) AS gained;
-- and once more from disk alone, in a new handle
SELECT festival.close('fu_merge') AS closed;
SELECT (SELECT count(*) FROM (SELECT * FROM pg_temp.fu_entries('fu_merge') EXCEPT ALL TABLE fu_merged) d)
	   + (SELECT count(*) FROM (TABLE fu_merged EXCEPT ALL SELECT * FROM pg_temp.fu_entries('fu_merge')) d)
	   AS differ_after_reopen;
SELECT * FROM festival.check('fu_merge');

-- An internal node freed without having been buffered keeps its level
-- (the level weighs its modifications under mh, mha and mhao).  In the
-- 30-point tree, 2 leaves leaf 2 (its box stays, nothing else changes);
-- then 1 leaves it: leaf 2 {3} is eliminated (DEL, 2 modifications), and
-- so is its parent 4 (level 1), left with the single entry for leaf 3 and
-- freed without being written first (DEL, 1); the root 9 loses its entry
-- for 4.  Object 3 is reinserted into leaf 5 (1), whose entry in node 8
-- grows (1) as does the root's entry for 8 (1); the subtree of leaf 3 is
-- reinserted into node 8 (1).
SELECT pg_temp.fu_tree('fu_levels', :'efind_plain', 30) AS closed;
SELECT festival.delete('fu_levels', 2, 'POINT(2 2)') AS deleted;
SELECT * FROM pg_temp.fu_buffer('fu_levels');
SELECT festival.delete('fu_levels', 1, 'POINT(1 1)') AS deleted;
SELECT * FROM pg_temp.fu_buffer('fu_levels');
SELECT page, status, level FROM festival.buffer('fu_levels') WHERE page IN (2, 4) ORDER BY page;
SELECT * FROM festival.check('fu_levels');

-- A write-through index (framework 'none') buffers nothing: festival.buffer
-- and festival.flush_unit return no rows
SELECT festival.create_index('fu_direct', 'rtree', 'fu_dev', '{"page_size": 1024, "max_fill": 17}') > 0 AS created;
SELECT count(festival.insert('fu_direct', i, ST_MakePoint(i, i))) AS inserted FROM generate_series(1, 10) i;
SELECT (SELECT count(*) FROM festival.buffer('fu_direct')) AS buffered,
	   (SELECT count(*) FROM festival.flush_unit('fu_direct')) AS flushed;

-------------------------------------------------------------------------------
-- 2. eFIND: which flushing unit festival.flush_unit writes
-------------------------------------------------------------------------------
-- The same modifications on four indices of 10 points, with flushing
-- units of one page:
--   13 added to leaf 3 and removed again: leaf 3 (level 0) gets 2
--   modifications at times 1 and 3, the root 4 (level 1) 2 at times 2 and
--   4 (its entry for 3 grows, then shrinks back);
--   leaf 2 gets 11, loses 2 and gets 12, its box unchanged: 3
--   modifications at times 5 to 7.
CREATE FUNCTION pg_temp.fu_policy_ops(name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM festival.insert(name, 13, 'POINT(6.5 6.5)');
	PERFORM festival.delete(name, 13, 'POINT(6.5 6.5)');
	PERFORM festival.insert(name, 11, 'POINT(1.5 1.5)');
	PERFORM festival.delete(name, 2, 'POINT(2 2)');
	PERFORM festival.insert(name, 12, 'POINT(2.5 2.5)');
END
$$;
SELECT pg_temp.fu_tree(name, :'efind_plain'::jsonb || options, 10) AS closed
FROM (VALUES
	('fu_m', '{"flushing_policy": "m", "flushing_unit": 1, "timestamp_percent": 100}'::jsonb),
	('fu_mh', '{"flushing_policy": "mh", "flushing_unit": 1, "timestamp_percent": 100}'),
	('fu_m_ts34', '{"flushing_policy": "m", "flushing_unit": 1, "timestamp_percent": 34}'),
	('fu_m_ts1', '{"flushing_policy": "m", "flushing_unit": 1, "timestamp_percent": 1}')) v(name, options);
SELECT pg_temp.fu_policy_ops(name) FROM unnest(ARRAY['fu_m', 'fu_mh', 'fu_m_ts34', 'fu_m_ts1']) name;
SELECT * FROM pg_temp.fu_buffer('fu_m');
-- (the four buffers are the same)
SELECT name, (SELECT count(*) FROM (SELECT * FROM pg_temp.fu_buffer(name) EXCEPT SELECT * FROM pg_temp.fu_buffer('fu_m')) d) AS differ
FROM unnest(ARRAY['fu_mh', 'fu_m_ts34', 'fu_m_ts1']) name;

-- m scores a unit by its modifications: leaf 2 (3) first, then leaf 3 and
-- the root (2 each: the unit first in page order wins a tie)
SELECT * FROM pg_temp.fu_flushes('fu_m', 4);
-- mh by modifications x (height + 1): the root (2 x 2 = 4), leaf 2 (3),
-- leaf 3 (2)
SELECT * FROM pg_temp.fu_flushes('fu_mh', 4);
-- timestamp_percent 34: only the oldest ceil(3 x 34 %) = 2 buffered pages
-- are candidates, leaf 3 (time 3) and the root (time 4): leaf 3 wins the
-- tie and leaf 2 (time 7) waits although it has the most modifications;
-- then ceil(2 x 34 %) = 1 candidate, the oldest: the root; then leaf 2
SELECT * FROM pg_temp.fu_flushes('fu_m_ts34', 3);
-- timestamp_percent 1: a single candidate, the oldest page every time
SELECT * FROM pg_temp.fu_flushes('fu_m_ts1', 3);
SELECT name, pg_temp.fu_counter(name, 'flushes') AS flushes,
	   pg_temp.fu_counter(name, 'flushed_pages') AS flushed_pages
FROM unnest(ARRAY['fu_m', 'fu_mh', 'fu_m_ts34', 'fu_m_ts1']) name;
SELECT name, (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM unnest(ARRAY['fu_m', 'fu_mh', 'fu_m_ts34', 'fu_m_ts1']) name;

-- Units of flushing_unit pages are cut from the candidates sorted by page
-- id: pages that are consecutive among the buffered ones, whatever lies
-- between them.  In the 30-point tree, the middle point of a leaf is
-- removed and put back k times: 2k modifications, boxes unchanged, no
-- other page touched.
CREATE FUNCTION pg_temp.fu_churn(name text, point int, rounds int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	FOR r IN 1 .. rounds LOOP
		PERFORM festival.delete(name, point, ST_MakePoint(point, point));
		PERFORM festival.insert(name, point, ST_MakePoint(point, point));
	END LOOP;
END
$$;
SELECT pg_temp.fu_tree('fu_units', :'efind_plain'::jsonb ||
	'{"flushing_policy": "m", "flushing_unit": 2, "timestamp_percent": 100}', 30) AS closed;
-- leaves 2 (point 2), 3 (5), 5 (8), 7 (14), 10 (17) and 11 (20)
SELECT pg_temp.fu_churn('fu_units', p, r)
FROM (VALUES (2, 1), (5, 1), (8, 3), (14, 2), (17, 2), (20, 1)) v(p, r);
SELECT * FROM pg_temp.fu_buffer('fu_units');
-- units [2, 3] = 4, [5, 7] = 6 + 4 = 10, [10, 11] = 4 + 2 = 6: [5, 7];
-- then [2, 3] = 4, [10, 11] = 6: [10, 11]; then [2, 3]
SELECT * FROM pg_temp.fu_flushes('fu_units', 4);
SELECT * FROM festival.check('fu_units');

-- mha and mhao weigh mh by the unit's share of the modified area (the MBR
-- of the entries in a page's tree, removed ones included, summed over the
-- unit, over the same sum for every buffered page) and mhao also by its
-- share of the modified overlap (the areas where two of those entries
-- overlap).  On the 10-point tree, with units of one page:
--   leaf 2: 2 removed and put back three times: 6 modifications, one
--   element, a point: area 0
--   leaf 3: 5 removed, squares (4.5, 4.5)-(5.5, 5.5) and (4.6, 4.6)-(5.4,
--   5.4) added: 3 modifications, area 1, overlap 0.8 x 0.8 = 0.64
--   leaf 5: 8 and 9 removed, squares (7.2, 7.2)-(8, 8) and (9, 9)-(9.9,
--   9.9) added: 4 modifications, area 2.7 x 2.7 = 7.29, overlap 0
-- m (and mh, all leaves): 6, 3, 4: leaf 2, then leaf 5, then leaf 3
-- mha: total area 8.29: 6 x 0 = 0, 3 x 1 / 8.29 = 0.36, 4 x 7.29 / 8.29 =
--   3.52: leaf 5; then (total 1) 0 and 3: leaf 3; then leaf 2
-- mhao: total overlap 0.64: 0, 0.36 x 1, 3.52 x 0: leaf 3; then (no
--   overlap left: a share of 1) 0 and 4 x 7.29 / 7.29: leaf 5; then leaf 2
CREATE FUNCTION pg_temp.fu_area_ops(name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.fu_churn(name, 2, 3);
	PERFORM festival.delete(name, 5, 'POINT(5 5)');
	PERFORM festival.insert(name, 23, ST_MakeEnvelope(4.5, 4.5, 5.5, 5.5));
	PERFORM festival.insert(name, 24, ST_MakeEnvelope(4.6, 4.6, 5.4, 5.4));
	PERFORM festival.delete(name, 8, 'POINT(8 8)');
	PERFORM festival.insert(name, 21, ST_MakeEnvelope(7.2, 7.2, 8, 8));
	PERFORM festival.delete(name, 9, 'POINT(9 9)');
	PERFORM festival.insert(name, 22, ST_MakeEnvelope(9, 9, 9.9, 9.9));
END
$$;
SELECT pg_temp.fu_tree(name, :'efind_plain'::jsonb || jsonb_build_object('flushing_policy', policy,
	'flushing_unit', 1, 'timestamp_percent', 100), 10) AS closed
FROM (VALUES ('fu_area_m', 'm'), ('fu_area_mh', 'mh'), ('fu_area_mha', 'mha'), ('fu_area_mhao', 'mhao')) v(name, policy);
SELECT pg_temp.fu_area_ops(name) FROM unnest(ARRAY['fu_area_m', 'fu_area_mh', 'fu_area_mha', 'fu_area_mhao']) name;
SELECT * FROM pg_temp.fu_buffer('fu_area_mha');
SELECT name, array_agg(f.pages[1] ORDER BY f.call) AS flushed_in_turn
FROM unnest(ARRAY['fu_area_m', 'fu_area_mh', 'fu_area_mha', 'fu_area_mhao']) WITH ORDINALITY v(name, n)
CROSS JOIN LATERAL pg_temp.fu_flushes(name, 3) f
GROUP BY v.n, name ORDER BY v.n;
SELECT name, (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM unnest(ARRAY['fu_area_m', 'fu_area_mh', 'fu_area_mha', 'fu_area_mhao']) name;

-------------------------------------------------------------------------------
-- 3. FAST: static flushing units and their policies
-------------------------------------------------------------------------------
-- FAST records changes by position: "entry i is now e" and "the node now
-- has n entries", one modification each.  Units of 2 pages are formed in
-- the order pages first enter the buffer.  The modifications of
-- fu_policy_ops, then 11 leaves leaf 2 again:
--   leaf 3 [4,5,6] + 13 at position 3 (1), then truncated to 3 entries (1):
--   2 modifications, times 1 and 3; unit 0 = [3, 4]
--   root 4: its entry at position 1 changes twice: 2, times 2 and 4
--   leaf 2 [1,2,3]: 11 at position 3 (1); 2 removed, the last entry moved
--   into its place: [1,11,3] (position 1 set, truncated to 3: 2); 12 at
--   position 3 (1); 11 removed: [1,12,3] (2): 6 modifications, times 5 to
--   8; unit 1 = [2]
CREATE FUNCTION pg_temp.fu_fast_ops(name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.fu_policy_ops(name);
	PERFORM festival.delete(name, 11, 'POINT(1.5 1.5)');
END
$$;
SELECT pg_temp.fu_tree(name, '{"framework": "fast", "buffer_size": 1048576, "flushing_unit": 2}'::jsonb || options, 10) AS closed
FROM (VALUES
	('fu_flush_all', '{"flushing_policy": "flush_all"}'::jsonb),
	('fu_fast', '{"flushing_policy": "fast"}'),
	('fu_fast_star', '{"flushing_policy": "fast_star"}')) v(name, options);
SELECT pg_temp.fu_fast_ops(name) FROM unnest(ARRAY['fu_flush_all', 'fu_fast', 'fu_fast_star']) name;
SELECT * FROM pg_temp.fu_buffer('fu_fast');
SELECT name, festival.stats(name)->'buffers'->>'flushing_units' AS units
FROM unnest(ARRAY['fu_flush_all', 'fu_fast', 'fu_fast_star']) name;

-- flush_all: every unit holding modifications, in one flush
SELECT * FROM pg_temp.fu_flushes('fu_flush_all', 2);
-- fast: the unit with the most modifications: [2] (6) before [3, 4] (4)
SELECT * FROM pg_temp.fu_flushes('fu_fast', 3);
-- fast_star: modifications x (clock - last modification + 1), the clock
-- at 8: [3, 4] 4 x (8 - 4 + 1) = 20 before [2] 6 x 1 = 6
SELECT * FROM pg_temp.fu_flushes('fu_fast_star', 3);
SELECT name, pg_temp.fu_counter(name, 'flushes') AS flushes,
	   pg_temp.fu_counter(name, 'flushed_pages') AS flushed_pages,
	   pg_temp.fu_counter(name, 'unnecessary_flushed_pages') AS unnecessary
FROM unnest(ARRAY['fu_flush_all', 'fu_fast', 'fu_fast_star']) name;

-- A unit keeps its pages after a flush: leaf 3 changes again alone (5
-- removed and put back, its box unchanged), and flushing its unit writes
-- the unmodified root 4 as well, an unnecessary write
SELECT pg_temp.fu_churn('fu_fast', 5, 1);
SELECT * FROM pg_temp.fu_buffer('fu_fast');
SELECT * FROM pg_temp.fu_flushes('fu_fast', 1);
SELECT pg_temp.fu_counter('fu_fast', 'flushed_pages') AS flushed_pages,
	   pg_temp.fu_counter('fu_fast', 'unnecessary_flushed_pages') AS unnecessary;
SELECT name, (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM unnest(ARRAY['fu_flush_all', 'fu_fast', 'fu_fast_star']) name;

-- Units belong to the pages of one tree.  festival.build empties the
-- index and starts a new tree from page 2 on, so the units of the old tree
-- must be forgotten: a flush may only write pages of the new tree.  500
-- points in 4096-byte pages (M = 101) make a tree of 12 pages, grouped in
-- units of 4; the source then keeps one point, and the index is built
-- again (a root leaf, page 2); 99 points are inserted one at a time into
-- the root leaf, one change each (48 bytes: the entry and 8, besides 48
-- for the page), so the buffer of 4096 bytes is full after the 85th and
-- its unit, page 2 alone, is flushed.
CREATE TABLE fu_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO fu_src SELECT i, ST_MakePoint(i, i) FROM generate_series(1, 500) i;
SELECT festival.create_index('fu_rebuild', 'rtree', 'fu_dev',
	'{"framework": "fast", "buffer_size": 4096, "flushing_unit": 4}', 'fu_src') > 0 AS created;
SELECT festival.build('fu_rebuild') AS built;
SELECT festival.stats('fu_rebuild')->>'pages' AS pages, festival.stats('fu_rebuild')->>'height' AS height;
DELETE FROM fu_src WHERE id > 1;
SELECT festival.build('fu_rebuild') AS built;
SELECT festival.stats('fu_rebuild')->>'pages' AS pages,
	   pg_temp.fu_counter('fu_rebuild', 'flushes') AS flushes_before \gset
SELECT :'pages' AS pages;
INSERT INTO fu_src SELECT i, ST_MakePoint(i, i) FROM generate_series(2, 100) i;
SELECT count(*) FILTER (WHERE festival.insert('fu_rebuild', id, geom)) AS inserted
FROM (SELECT id, geom FROM fu_src WHERE id > 1 ORDER BY id) s;
SELECT festival.stats('fu_rebuild')->>'entries' AS entries,
	   pg_temp.fu_counter('fu_rebuild', 'flushes') > :flushes_before AS flushed_when_full;
SELECT * FROM festival.check('fu_rebuild');

-- random: reproducible.  In a 30-point tree, units of one page, the
-- middle points of leaves 2, 3, 5, 6, 7 and 10 are removed and put back
-- (in that order: six units); then flush_unit is called until the buffer
-- is empty.  Each call draws a unit holding modifications by reservoir
-- sampling over the units in order (the k-th candidate replaces the
-- choice when pg_prng_uint64_range(1, k) = 1) with PostgreSQL's PRNG
-- seeded with random_seed: the sequences below were computed with an
-- independent implementation of xoroshiro128** and that sampling.  Two
-- indices with the same seed write the same sequence; other seeds give
-- other sequences.
CREATE FUNCTION pg_temp.fu_random_run(name text, seed int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	seq text := '';
	u bigint[];
BEGIN
	PERFORM pg_temp.fu_tree(name, jsonb_build_object('framework', 'fast', 'buffer_size', 1048576,
		'flushing_unit', 1, 'flushing_policy', 'random', 'random_seed', seed), 30);
	PERFORM pg_temp.fu_churn(name, p, 1) FROM unnest(ARRAY[2, 5, 8, 11, 14, 17]) p;
	LOOP
		SELECT array_agg(page ORDER BY page) INTO u FROM festival.flush_unit(name);
		EXIT WHEN u IS NULL;
		seq := seq || u::text;
	END LOOP;
	RETURN seq;
END
$$;
SELECT seed, pg_temp.fu_random_run('fu_rand_a' || seed, seed) AS first_index,
	   pg_temp.fu_random_run('fu_rand_b' || seed, seed) AS second_index
FROM unnest(ARRAY[0, 1, 2, 3]) seed;

-------------------------------------------------------------------------------
-- 4. eFIND: temporal control of writes
-------------------------------------------------------------------------------
-- With temporal_control 'write' (or 'both') the pages written are
-- remembered, the last write_tc_size of them.  The candidates of the next
-- flush are narrowed to those at most write_tc_min_distance pages from a
-- remembered page (sequential) if they fill a unit, else to those at least
-- write_tc_stride pages from all of them (strides) if they fill a unit,
-- else to both kinds together if they fill a unit, else left alone
-- (unfiltered); tc_sequential, tc_stride, tc_both and tc_unfiltered count
-- those decisions.
--
-- A 60-point tree: its leaves include 2 (points 1..3), 5 (7..9), 6
-- (10..12), 7 (13..15), 10 (16..18), 17 (31..33), 25 (43..45), 27
-- (46..48), 28 (49..51) and 32 (55..57).  Their middle points are removed
-- and put back: modifications 2: 2, 5: 10, 6: 4, 7: 4, 10: 2, 17: 8,
-- 25: 2, 27: 2, 28: 4, 32: 2.  Units of 2 pages, policy m, every page a
-- candidate, min distance 2, stride 5.
SELECT pg_temp.fu_tree(name, :'efind_plain'::jsonb || jsonb_build_object('temporal_control', tc,
	'flushing_policy', 'm', 'flushing_unit', 2, 'timestamp_percent', 100,
	'write_tc_min_distance', 2, 'write_tc_stride', 5, 'write_tc_size', size), 60) AS closed
FROM (VALUES ('fu_tc_none', 'none', 50), ('fu_tc_write', 'write', 50), ('fu_tc_both', 'both', 50),
			 ('fu_tc_q2', 'write', 2)) v(name, tc, size);
SELECT pg_temp.fu_churn(name, p, r)
FROM unnest(ARRAY['fu_tc_none', 'fu_tc_write', 'fu_tc_both', 'fu_tc_q2']) name,
	 (VALUES (2, 1), (8, 5), (11, 2), (14, 2), (17, 1), (32, 4), (44, 1), (47, 1), (50, 2), (56, 1)) v(p, r);
SELECT * FROM pg_temp.fu_buffer('fu_tc_write');
SELECT name, (SELECT count(*) FROM (SELECT * FROM pg_temp.fu_buffer(name) EXCEPT SELECT * FROM pg_temp.fu_buffer('fu_tc_write')) d) AS differ
FROM unnest(ARRAY['fu_tc_none', 'fu_tc_both', 'fu_tc_q2']) name;

-- without temporal control, units cut from all ten pages:
--   [2,5] 12, [6,7] 8, [10,17] 10, [25,27] 4, [28,32] 6: [2,5]
--   [6,7] 8, [10,17] 10, [25,27] 4, [28,32] 6: [10,17]
--   [6,7] 8, [25,27] 4, [28,32] 6: [6,7]; then [28,32]; then [25,27]
SELECT * FROM pg_temp.fu_flushes('fu_tc_none', 5);
-- with it:
--   nothing written yet: [2,5] as above
--   written 2, 5: 6 and 7 are within 2 pages (sequential) and fill a
--   unit: [6,7], although [10,17] has more modifications
--   written 2, 5, 6, 7: no page within 2; 17, 25, 27, 28 and 32 are 5 or
--   more away (10 is 3 away: neither): units [17,25] 10, [27,28] 6, [32]
--   2: [17,25]
--   written 2, 5, 6, 7, 17, 25: 27 is sequential (2 from 25), 32 a
--   stride (7 from 25), 10 and 28 neither: one of each, a unit together:
--   [27,32]
--   written ... 27, 32: 28 is sequential, 10 neither: no unit: unfiltered,
--   [10,28]
SELECT * FROM pg_temp.fu_flushes('fu_tc_write', 5);
-- 'both' controls writes in the same way
SELECT * FROM pg_temp.fu_flushes('fu_tc_both', 5);
-- remembering only the last 2 pages written:
--   [2,5], then [6,7] as above
--   remembered 6, 7: strides 17 ... 32: [17,25]
--   remembered 17, 25: 27 is sequential, 10 and 32 strides (7 away): the
--   strides fill a unit: [10,32]
--   remembered 10, 32: 27 a stride (5 from 32), 28 neither: unfiltered,
--   [27,28]
SELECT * FROM pg_temp.fu_flushes('fu_tc_q2', 5);
SELECT name, pg_temp.fu_counter(name, 'tc_sequential') AS sequential,
	   pg_temp.fu_counter(name, 'tc_stride') AS stride,
	   pg_temp.fu_counter(name, 'tc_both') AS both,
	   pg_temp.fu_counter(name, 'tc_unfiltered') AS unfiltered,
	   festival.stats(name)->'buffers'->>'write_queue_pages' AS remembered
FROM unnest(ARRAY['fu_tc_none', 'fu_tc_write', 'fu_tc_both', 'fu_tc_q2']) name;
SELECT name, (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM unnest(ARRAY['fu_tc_none', 'fu_tc_write', 'fu_tc_both', 'fu_tc_q2']) name;

-------------------------------------------------------------------------------
-- 5. eFIND: the read buffer and the temporal control of reads
-------------------------------------------------------------------------------
-- The read buffer caches stored versions of nodes read from the device
-- (read_buffer_hits / read_buffer_misses count its lookups); with
-- temporal control of reads the read queue remembers the pages read from
-- the device, and a flush that writes a page of the read queue which the
-- read buffer does not hold caches the written version
-- (read_buffer_precached); a page it holds gets the written version.
--
-- fu_read(name): one query for POINT(17 17) (in the 30-point tree it
-- reads the root 9, node 12 and leaf 10), then the counters, the device's
-- pages read since the index was opened (2 for its meta page) and the
-- pages the read buffer holds
CREATE FUNCTION pg_temp.fu_read(name text)
RETURNS TABLE (answers bigint, hits bigint, misses bigint, precached bigint, pages_read bigint, held text)
LANGUAGE plpgsql AS $$
BEGIN
	answers := (SELECT count(*) FROM festival.query(name, 'POINT(17 17)', 'intersects', false));
	hits := pg_temp.fu_counter(name, 'read_buffer_hits');
	misses := pg_temp.fu_counter(name, 'read_buffer_misses');
	precached := pg_temp.fu_counter(name, 'read_buffer_precached');
	pages_read := pg_temp.fu_counter(name, 'pages_read');
	held := festival.stats(name)->'buffers'->>'read_buffer_pages';
	RETURN NEXT;
END
$$;
SELECT pg_temp.fu_tree(name, jsonb_build_object('framework', 'efind', 'buffer_size', 1048576,
	'read_buffer_policy', policy, 'read_buffer_percent', 20, 'temporal_control', 'read',
	'flushing_unit', 1), 30) AS closed
FROM (VALUES ('fu_rb_lru', 'lru'), ('fu_rb_s2q', 's2q')) v(name, policy);

-- lru admits every page read: 3 misses, then 3 hits per query
SELECT * FROM pg_temp.fu_read('fu_rb_lru');
SELECT * FROM pg_temp.fu_read('fu_rb_lru');
SELECT * FROM pg_temp.fu_read('fu_rb_lru');
-- s2q admits a page on its second miss: the first query only remembers
-- the three pages, the second misses again and admits them, the third hits
SELECT * FROM pg_temp.fu_read('fu_rb_s2q');
SELECT * FROM pg_temp.fu_read('fu_rb_s2q');
SELECT * FROM pg_temp.fu_read('fu_rb_s2q');

-- A cached page that a flush writes gets the written version: 31 is added
-- to leaf 10 (inside its box: 9, 12 and 10 hit), the unit is written (its
-- stored version, merged with the change, hits too: 10 hits, nothing
-- pre-cached, no device read), and leaf 10 is then read from the read
-- buffer (a hit, no device read) with 31 in it
SELECT festival.insert('fu_rb_lru', 31, 'POINT(17.5 17.2)') AS inserted;
SELECT * FROM pg_temp.fu_flushes('fu_rb_lru', 1);
SELECT pg_temp.fu_counter('fu_rb_lru', 'read_buffer_hits') AS hits,
	   pg_temp.fu_counter('fu_rb_lru', 'pages_read') AS pages_read,
	   pg_temp.fu_counter('fu_rb_lru', 'read_buffer_precached') AS precached;
SELECT array_agg(ref ORDER BY position) AS leaf_10 FROM festival.node('fu_rb_lru', 10);
SELECT pg_temp.fu_counter('fu_rb_lru', 'read_buffer_hits') AS hits,
	   pg_temp.fu_counter('fu_rb_lru', 'pages_read') AS pages_read;

-- Pre-caching, with s2q and a read buffer of 409 bytes (10 % of 4096),
-- room for two or three nodes (a node costs 64 bytes + 40 per entry: the
-- root 9 224, nodes 12 and 4 144 each, leaves of 3 entries 184, of 4
-- entries 224).  s2q's A1 is the read queue (IS section 6.3), 10 page ids
-- pushed at every read from the device: a page read while the queue holds
-- it is admitted.  A flush's read of a stored version is no read request:
-- it may hit, but a miss neither enters the queue nor admits the page.
--   two queries for POINT(17 17): 9, 12 and 10 miss twice; the second
--   time they are admitted, 10 evicting 9 (224 + 144 + 184 > 409): held
--   12 and 10 (328 bytes); 6 misses
--   31 added to leaf 10 (inside its box): 9, 12 and 10 miss in turn, each
--   admitted and evicting the least recently used: held 12 and 10 again;
--   leaf 10 is buffered; 9 misses
--   POINT(2 2): 9 is admitted, evicting 12 (held 10 and 9); 4 and 2 are
--   first reads, only queued (pushing 9 and 12 out of the queue); then 9
--   hits, 4 and 2 are admitted, evicting 10 and 9: held 4 and 2 (328
--   bytes); 14 misses, 1 hit
--   writing leaf 10 reads its stored version: a miss, not admitted; the
--   written version (4 entries, 224 bytes) is then cached because 10 is
--   in the read queue, evicting 4: held 2 and 10 (408 bytes), 1 page
--   pre-cached; 15 misses
--   the query for POINT(17 17): 9 misses and is admitted, evicting 2 and
--   10 (224 + 224 + 224 > 409); 12 and 10 miss and are admitted, 10
--   evicting 9: 18 misses, 1 hit
SELECT pg_temp.fu_tree('fu_pre', '{"framework": "efind", "buffer_size": 4096,
	"read_buffer_policy": "s2q", "read_buffer_percent": 10, "temporal_control": "read",
	"flushing_unit": 1}', 30) AS closed;
SELECT * FROM pg_temp.fu_read('fu_pre');
SELECT * FROM pg_temp.fu_read('fu_pre');
SELECT festival.insert('fu_pre', 31, 'POINT(17.5 17.2)') AS inserted;
SELECT count(*) AS answers FROM festival.query('fu_pre', 'POINT(2 2)', 'intersects', false);
SELECT count(*) AS answers FROM festival.query('fu_pre', 'POINT(2 2)', 'intersects', false);
SELECT pg_temp.fu_counter('fu_pre', 'read_buffer_hits') AS hits,
	   pg_temp.fu_counter('fu_pre', 'read_buffer_misses') AS misses,
	   festival.stats('fu_pre')->'buffers'->>'read_buffer_bytes' AS held_bytes;
SELECT * FROM pg_temp.fu_flushes('fu_pre', 1);
SELECT pg_temp.fu_counter('fu_pre', 'read_buffer_hits') AS hits,
	   pg_temp.fu_counter('fu_pre', 'read_buffer_misses') AS misses,
	   pg_temp.fu_counter('fu_pre', 'read_buffer_precached') AS precached,
	   festival.stats('fu_pre')->'buffers'->>'read_buffer_bytes' AS held_bytes,
	   festival.stats('fu_pre')->'buffers'->>'read_queue_pages' AS read_queue;
SELECT * FROM pg_temp.fu_read('fu_pre');
-- hlru: a page may only evict pages at its level or below, and a page
-- that cannot make room is not admitted (cache/replacement.h), so it
-- evicts nothing.  A read buffer of 700 bytes (10 % of 7000); leaf 10
-- holds 4 entries (31 added), so it costs 224 bytes.
--   POINT(14 14): the root 9 (level 2, 224), 12 (level 1, 144) and leaf 7
--   (184) are admitted: 552 bytes
--   POINT(2 2): 9 hits; 4 (level 1, 144) is admitted (696); leaf 2 evicts
--   leaf 7, the only page at level 0: 696 bytes, 4 pages
--   POINT(17 17): 9 and 12 hit; leaf 10 (224) would need 220 bytes more
--   than the 4 bytes free, and only leaf 2 (184) is at its level: it
--   cannot make room, so it is not admitted and leaf 2 stays
--   POINT(2 2) again: 9, 4 and 2 hit
SELECT pg_temp.fu_tree('fu_hlru', '{"framework": "efind", "buffer_size": 7000,
	"read_buffer_policy": "hlru", "read_buffer_percent": 10, "temporal_control": "none"}', 30) AS closed;
SELECT festival.insert('fu_hlru', 31, 'POINT(17.5 17.2)') AS inserted;
SELECT festival.flush('fu_hlru'), festival.close('fu_hlru') AS closed;
CREATE FUNCTION pg_temp.fu_hlru_read(g geometry)
RETURNS TABLE (answers bigint, hits bigint, misses bigint, held text, held_bytes text)
LANGUAGE plpgsql AS $$
BEGIN
	answers := (SELECT count(*) FROM festival.query('fu_hlru', g, 'intersects', false));
	hits := pg_temp.fu_counter('fu_hlru', 'read_buffer_hits');
	misses := pg_temp.fu_counter('fu_hlru', 'read_buffer_misses');
	held := festival.stats('fu_hlru')->'buffers'->>'read_buffer_pages';
	held_bytes := festival.stats('fu_hlru')->'buffers'->>'read_buffer_bytes';
	RETURN NEXT;
END
$$;
SELECT * FROM pg_temp.fu_hlru_read('POINT(14 14)');
SELECT * FROM pg_temp.fu_hlru_read('POINT(2 2)');
SELECT * FROM pg_temp.fu_hlru_read('POINT(17 17)');
SELECT * FROM pg_temp.fu_hlru_read('POINT(2 2)');
SELECT name, (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM unnest(ARRAY['fu_rb_lru', 'fu_rb_s2q', 'fu_pre', 'fu_hlru']) name;

-------------------------------------------------------------------------------
-- 6. Replacement policies, on reference strings of pages (each page costs
-- one unit of capacity), worked out by hand from cache/replacement.h
-------------------------------------------------------------------------------
-- lru, room for 3:
--   1 2 3   misses, admitted                      [3 2 1] (most recent first)
--   1       hit                                   [1 3 2]
--   4       miss, evicts 2                        [4 1 3]
--   2       miss, evicts 3                        [2 4 1]
--   5       miss, evicts 1                        [5 2 4]
--   1       miss, evicts 4                        [1 5 2]
--   2       hit                                   [2 1 5]
--   3       miss, evicts 5                        [3 2 1]
SELECT * FROM festival.cache_simulate('lru', 3, ARRAY[1, 2, 3, 1, 4, 2, 5, 1, 2, 3]);

-- hlru, room for 3, with levels: a page evicts the least recently used
-- page at its level or below, or is not admitted
--   10(1) 1(0) 2(0)  admitted                     [2 1 10]
--   3(0)   evicts 1 (10 is above level 0)         [3 2 10]
--   11(1)  evicts 10 (level 1, least recent)      [11 3 2]
--   12(2)  evicts 2                               [12 11 3]
--   4(0)   evicts 3                               [4 12 11]
--   5(0)   evicts 4                               [5 12 11]
--   11(1)  hit                                    [11 5 12]
--   13(1)  evicts 5 (12 is above level 1)         [13 11 12]
--   6(0)   every page is above level 0: not admitted, nothing evicted
--   12(2)  hit
SELECT * FROM festival.cache_simulate('hlru', 3, ARRAY[10, 1, 2, 3, 11, 12, 4, 5, 11, 13, 6, 12],
									  ARRAY[1, 0, 0, 0, 1, 2, 0, 0, 1, 1, 0, 2]);
-- without levels (all 0) hlru is lru
SELECT count(*) AS steps, count(*) FILTER (WHERE h.hit = l.hit AND h.admitted = l.admitted
											AND h.evicted = l.evicted) AS same_as_lru
FROM festival.cache_simulate('hlru', 3, ARRAY[1, 2, 3, 1, 4, 2, 5, 1, 2, 3]) h
JOIN festival.cache_simulate('lru', 3, ARRAY[1, 2, 3, 1, 4, 2, 5, 1, 2, 3]) l USING (step);

-- s2q, room for 2, 2 page ids remembered (A1):
--   1      first miss: remembered only            A1 [1]
--   2      first miss: remembered                 A1 [2 1]
--   1      second miss: admitted                  Am [1], A1 [2]
--   3      first miss                             A1 [3 2]
--   1      hit
--   2      second miss: admitted                  Am [2 1], A1 [3]
--   4      first miss                             A1 [4 3]
--   2      hit                                    Am [2 1]
--   3      second miss: admitted, evicts 1        Am [3 2], A1 [4]
--   5 6    first misses: 4 is forgotten           A1 [6 5]
--   4      a first miss again                     A1 [4 6]
SELECT * FROM festival.cache_simulate('s2q', 2, ARRAY[1, 2, 1, 3, 1, 2, 4, 2, 3, 5, 6, 4], ghosts => 2);

-- 2q, room for 4 of which A1in has 50 % (2 pages), 2 page ids in A1out.
-- As in Johnson and Shasha's 2Q, a page is reclaimed only when the cache
-- is full: from A1in while A1in, the newcomer counted, is over its share,
-- from Am otherwise (replacement.c); one page in, at most one page out
--   1 2 3  admitted to A1in (free room)            A1in [3 2 1]
--   1      hit in A1in (its FIFO order unchanged)
--   4      admitted to A1in; the cache is full     A1in [4 3 2 1]
--   5      A1in over its share: 1 to A1out         A1in [5 4 3 2], A1out [1]
--   1      in A1out: admitted to Am, A1in still    Am [1], A1in [5 4 3],
--          over its share: 2 to A1out              A1out [2]
--   2      in A1out: admitted to Am, 3 to A1out    Am [2 1], A1in [5 4],
--                                                  A1out [3]
--   6      A1in with 6 over its share: 4 to A1out  A1in [6 5], A1out [4 3]
--          (Am keeps 2 and 1)
--   2      hit
--   5      hit in A1in
--   7      A1in [7 6], 5 to A1out                  A1out [5 4]
SELECT * FROM festival.cache_simulate('2q', 4, ARRAY[1, 2, 3, 1, 4, 5, 1, 2, 6, 2, 5, 7],
									  a1in_percent => 50, ghosts => 2);

-- A scan through a cache of 2 pages, after pages 1 and 2 were used three
-- times each: 1 2 1 2 1 2 3 4 5 1 2
--   lru: hits at steps 3 to 6; the scan 3 4 5 evicts 1 and 2, which miss
--   again at the end: 4 hits
--   s2q (2 ids remembered): 1 and 2 are admitted at their second miss
--   (steps 3, 4), hit at 5 and 6; 3, 4, 5 are first misses, only
--   remembered; 1 and 2 hit at the end: 4 hits, 2 admissions, no eviction
--   2q (A1in 1 page, 2 ids in A1out): 1 and 2 use the free room, both
--   in A1in, where their hits (3 to 6) count as one correlated use and
--   promote nothing; 3, 4, 5 and then the forgotten 1 and 2 are first-time
--   pages that each push A1in's oldest page out: 2q does what lru does
SELECT policy, array_agg(s.step ORDER BY s.step) FILTER (WHERE s.hit) AS hits,
	   array_agg(s.step ORDER BY s.step) FILTER (WHERE s.admitted) AS admitted,
	   array_agg(s.step::text || ':' || s.evicted::text ORDER BY s.step) FILTER (WHERE s.evicted <> '{}') AS evictions
FROM unnest(ARRAY['lru', 's2q', '2q']) WITH ORDINALITY p(policy, n)
CROSS JOIN LATERAL festival.cache_simulate(policy, 2, ARRAY[1, 2, 1, 2, 1, 2, 3, 4, 5, 1, 2],
										   a1in_percent => 50, ghosts => 2) s
GROUP BY p.n, policy ORDER BY p.n;

-- Where 2q resists a scan: cache of 2 (A1in 1 page, 2 ids in A1out),
-- 1 2 3 1 4 5 6 1
--   lru: every access misses; 4, 5 and 6 push 1 out before it returns
--   2q: 3 pushes 1 to A1out (A1in [3 2]); 1 comes back to Am (step 4),
--   pushing 2 out; 4, 5 and 6 only cycle through A1in; 1 hits at step 8
SELECT policy, array_agg(s.step ORDER BY s.step) FILTER (WHERE s.hit) AS hits
FROM unnest(ARRAY['lru', '2q']) WITH ORDINALITY p(policy, n)
CROSS JOIN LATERAL festival.cache_simulate(policy, 2, ARRAY[1, 2, 3, 1, 4, 5, 6, 1],
										   a1in_percent => 50, ghosts => 2) s
GROUP BY p.n, policy ORDER BY p.n;

-- Whatever the policy, a page of one unit displaces at most one page.
-- Room for 4 (2q: A1in 1 page), 4 ids remembered; pages 1 to 4 twice,
-- then 10, 11, 12, then 1, 2, 3:
--   lru, hlru: 10, 11, 12, 1, 2, 3 each evict one page
--   s2q: 1 to 4 are admitted at their second miss and fill the cache; 10,
--   11, 12 are only remembered; 1, 2, 3 hit: no eviction
--   2q: 1 to 4 pass through A1in to A1out (one out for each in), come back
--   to Am (1, 2, 3) or hit in A1in (4); then 10, 11 and 12 each push
--   A1in's page out (4, 10, 11) and Am keeps 1, 2, 3, which hit
SELECT policy, max(cardinality(s.evicted)) AS most_evicted_at_once,
	   count(*) FILTER (WHERE s.hit) AS hits
FROM unnest(ARRAY['lru', 'hlru', 's2q', '2q']) WITH ORDINALITY p(policy, n)
CROSS JOIN LATERAL festival.cache_simulate(policy, 4, ARRAY[1, 2, 3, 4, 1, 2, 3, 4, 10, 11, 12, 1, 2, 3],
										   a1in_percent => 25, ghosts => 4) s
GROUP BY p.n, policy ORDER BY p.n;

-- clru, the hot/cold buffer of Fevgas 2019 (§3.2, Alg. 4-5): room for 8,
-- two cold lists of 2 (clru_pages), the 4 hot pages split 50 % directory,
-- 50 % data; every page here is a data page (level 0): hot H holds 2,
-- cold C 2.  W is a write (the page is dirty, *), R a read.  evicted:
-- pages that leave the cache; written: the batch written at that step
--   W1 W2        H [2* 1*]
--   R3           H full: victim 1* is dirty: to C          H [3 2*] C [1*]
--   W4           victim 2* to C, which is now full         H [4* 3] C [2* 1*]
--   R5           victim 3 is clean: dropped, evicted 3     H [5 4*]
--   R6           victim 4* dirty, C full and its LRU page 1* dirty: the
--                whole C written in one batch {1,2}, then its (now
--                clean) LRU page 1 dropped                 H [6 5] C [4* 2]
--   R2           hit in C: back to H (clean), victim 5 dropped
--                                                          H [2 6] C [4*]
--   W6           hit in H, now dirty                       H [6* 2]
--   R7           victim 2 dropped                          H [7 6*]
--   R8           victim 6* to C (room)                     H [8 7] C [6* 4*]
--   R9           victim 7 dropped                          H [9 8]
--   W8           hit                                       H [8* 9]
--   R10          victim 9 dropped                          H [10 8*]
--   R11          victim 8*, C full, LRU 4* dirty: batch {4,6}, 4 dropped
--                                                          H [11 10] C [8* 6]
--   R12, R13     victims 10, 11 dropped                    H [13 12]
--   W13          hit                                       H [13* 12]
--   R14          victim 12 dropped                         H [14 13*]
--   R15          victim 13*, C full but its LRU page 6 is clean: no
--                batch, 6 dropped                          H [15 14] C [13* 8*]
SELECT * FROM festival.cache_simulate('clru', 8,
	ARRAY[1, 2, 3, 4, 5, 6, 2, 6, 7, 8, 9, 8, 10, 11, 12, 13, 13, 14, 15],
	writes => ARRAY[true, true, false, true, false, false, false, true, false, false, false, true,
					false, false, false, false, true, false, false],
	clru_pages => 2, directory_percent => 50);

-- The partitions: room for 8, cold lists of 1, 6 hot pages of which 75 %
-- (4) for directory pages (level >= 1) and 2 for data pages.  Data pages
-- evict data pages only, directory pages directory pages only:
--   R100 R101 (level 1), R1 R2 (level 0), R3: evicts 1, not 100
--   R102 R103: the directory hot list is full [103 102 101 100]
--   R104: evicts 100; R4: evicts 2; R101: hit
SELECT * FROM festival.cache_simulate('clru', 8, ARRAY[100, 101, 1, 2, 3, 102, 103, 104, 4, 101],
	ARRAY[1, 1, 0, 0, 0, 1, 1, 1, 0, 1], clru_pages => 1);

-- refused: writes with another policy, no clru_pages, no hot page left
\set VERBOSITY terse
SELECT * FROM festival.cache_simulate('lru', 2, ARRAY[1], writes => ARRAY[true]);
SELECT * FROM festival.cache_simulate('clru', 8, ARRAY[1]);
SELECT * FROM festival.cache_simulate('clru', 4, ARRAY[1], clru_pages => 2);
SELECT * FROM festival.cache_simulate('clru', 4, ARRAY[1, 2], writes => ARRAY[true], clru_pages => 1);
-- and as an index option: 4 pages, cold lists of 2, no hot page left
SELECT festival.create_index('fu_clru_bad', 'rtree', 'fu_dev',
	'{"page_size": 1024, "cache": "clru", "cache_size": 4096, "cache_clru_pages": 2}');
-- the clru options belong to cache clru only
SELECT festival.create_index('fu_clru_bad', 'rtree', 'fu_dev', '{"cache": "lru", "cache_clru_pages": 2}');
\set VERBOSITY default

-- clru under an R-tree of 30 points (M = 4): 8 pages, cold lists of 1,
-- 4 hot directory pages and 2 hot data pages, built, closed and reopened;
-- every point is found, and after deletes and another close the rest
SELECT pg_temp.fu_tree('fu_clru', '{"cache": "clru", "cache_size": 8192, "cache_clru_pages": 1}', 30) AS built;
SELECT count(*) AS found, (SELECT count(*) FROM festival.check('fu_clru')) AS check_rows
FROM generate_series(1, 30) i CROSS JOIN LATERAL festival.query('fu_clru', ST_MakePoint(i, i)) q WHERE q.id = i;
SELECT count(*) FILTER (WHERE festival.delete('fu_clru', i, ST_MakePoint(i, i))) AS deleted
FROM generate_series(1, 30, 3) i;
SELECT festival.close('fu_clru') AS closed;
SELECT count(*) AS left_after_deletes, (SELECT count(*) FROM festival.check('fu_clru')) AS check_rows
FROM festival.query('fu_clru', ST_MakeEnvelope(0, 0, 31, 31));

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(festival.drop_index(name)) AS dropped
FROM (SELECT name FROM festival.index WHERE device = 'fu_dev' ORDER BY name) s;
SELECT festival.drop_device('fu_dev');
DROP TABLE fu_src;
RESET festival.progress_interval;
RESET client_min_messages;
