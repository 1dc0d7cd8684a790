--
-- fast_ordered: FAST (and the FOR-tree's buffer, which keeps FAST's
-- changes) over structures whose nodes are ordered: the xBR+-tree keeps its
-- leaf entries in (x, y, id) order and its internal entries in address
-- order, the Hilbert R-tree its entries in Hilbert order, so inserting one
-- entry moves every later one place (memmove).  FAST records such a change
-- as one INSERT item (and a removal as one DELETE item) plus the positions
-- that changed otherwise, instead of "entry i is now e" for every moved
-- position (nodestore/fast.c; the defect of docs/experiments.md, "Why the
-- eFIND xBR+-tree claims fail").  The R-tree (a node is a set: it appends
-- and fills a hole with the last entry) is the control: its items are the
-- positional ones, as before.
--
-- 1. Every structure is built one insert at a time, then takes 300
--    inserts and 250 deletes one at a time, under the write-through store
--    and under FAST with a 16 kB buffer (flushes all the time): the answers
--    equal PostGIS brute force, festival.check() is clean, and after
--    festival.close() every node page of the FAST file is byte for byte the
--    page of the write-through file (the same tree, page for page).
-- 2. The number of items, by hand: a leaf that is not full takes one item
--    per insert (its parent's MBR does not change: the points copy points
--    of the leaf) and one per delete, whatever its size; festival.buffer()
--    shows them.
-- Replay of the log's INSERT and DELETE items after a kill -9:
-- test/shell/crash_fast_ordered.sh.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET festival.log_sync = never;
SET jit = off;

SELECT festival.create_device('fo_dev', io => 'buffered');

-- 3000 scattered points (fixture.scatter_point), 300 later ones
CREATE TABLE fo_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO fo_src SELECT i, fixture.scatter_point(i) FROM generate_series(1, 3000) i;
CREATE TABLE fo_later (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO fo_later SELECT i, fixture.scatter_point(i) FROM generate_series(3001, 3300) i;
CREATE TABLE fo_win AS SELECT * FROM fixture.scatter_windows();

-------------------------------------------------------------------------------
-- 1. FAST builds the write-through store's tree, page for page
-------------------------------------------------------------------------------
CREATE TABLE fo_index (ord int PRIMARY KEY, name text NOT NULL, structure text NOT NULL,
					   plain text NOT NULL, options jsonb NOT NULL);
INSERT INTO fo_index VALUES
	(1, 'fo_xbr_none', 'xbrtree', 'fo_xbr_none', '{"page_size": 1024}'),
	(2, 'fo_xbr_fast', 'xbrtree', 'fo_xbr_none', '{"page_size": 1024, "framework": "fast",
		"buffer_size": 16384, "flushing_unit": 4, "flushing_policy": "fast_star"}'),
	(3, 'fo_xbr_fortree', 'xbrtree', 'fo_xbr_none', '{"page_size": 1024, "framework": "fortree",
		"buffer_size": 16384, "flushing_unit": 4}'),
	(4, 'fo_hil_none', 'hilbert', 'fo_hil_none', '{"page_size": 1024}'),
	(5, 'fo_hil_fast', 'hilbert', 'fo_hil_none', '{"page_size": 1024, "framework": "fast",
		"buffer_size": 16384, "flushing_unit": 4, "flushing_policy": "fast"}'),
	(6, 'fo_rt_none', 'rtree', 'fo_rt_none', '{"page_size": 1024}'),
	(7, 'fo_rt_fast', 'rtree', 'fo_rt_none', '{"page_size": 1024, "framework": "fast",
		"buffer_size": 16384, "flushing_unit": 4, "flushing_policy": "fast_star"}');
SELECT name, festival.create_index(name, structure, 'fo_dev', options, 'fo_src') > 0 AS created
FROM fo_index ORDER BY ord;
SELECT name, festival.build(name) AS built FROM fo_index ORDER BY ord;

-- 300 inserts and 250 deletes, one at a time (the source table follows)
SELECT i.name, count(*) FILTER (WHERE festival.insert(i.name, l.id, l.geom)) AS inserted
FROM fo_index i CROSS JOIN fo_later l GROUP BY i.ord, i.name ORDER BY i.ord;
INSERT INTO fo_src SELECT * FROM fo_later;
SELECT i.name, count(*) FILTER (WHERE festival.delete(i.name, s.id, s.geom)) AS deleted
FROM fo_index i CROSS JOIN (SELECT * FROM fo_src WHERE id % 13 = 5 ORDER BY id) s
GROUP BY i.ord, i.name ORDER BY i.ord;
DELETE FROM fo_src WHERE id % 13 = 5;

SELECT i.name, fixture.window_wrong(i.name, 'fo_win', 'fo_src') AS windows_wrong,
	   (SELECT count(*) FROM festival.check(i.name)) AS check_rows,
	   (SELECT count(*) FROM fixture.nodes(i.name) WHERE level = 0) AS leaf_entries
FROM fo_index i ORDER BY i.ord;

-- what the buffers did (the FAST rows fall with the INSERT/DELETE items)
SELECT i.name, (s->'totals'->>'flushes')::bigint AS flushes,
	   (s->'totals'->>'pages_written')::bigint AS pages_written,
	   (s->'totals'->>'unnecessary_flushed_pages')::bigint AS unchanged_rewritten,
	   (s->'totals'->>'log_bytes')::bigint AS log_bytes
FROM fo_index i CROSS JOIN LATERAL festival.stats(i.name) s
WHERE i.name <> i.plain ORDER BY i.ord;

SELECT i.name, festival.close(i.name) AS closed FROM fo_index i ORDER BY i.ord;

-- node pages (2 on: pages 0 and 1 are the meta copies, which name the
-- index) of each buffered file against the write-through file
SELECT i.name, i.plain,
	   (pg_stat_file(fixture.index_file(i.name))).size = (pg_stat_file(fixture.index_file(i.plain))).size
		   AS same_size,
	   (SELECT count(*) FROM generate_series(2, (pg_stat_file(fixture.index_file(i.plain))).size / 1024 - 1) p
		WHERE fixture.read_page(fixture.index_file(i.name), 1024, p)
			  IS DISTINCT FROM fixture.read_page(fixture.index_file(i.plain), 1024, p)) AS pages_differing,
	   (pg_stat_file(fixture.index_file(i.plain))).size / 1024 - 2 AS node_pages
FROM fo_index i WHERE i.name <> i.plain ORDER BY i.ord;

-------------------------------------------------------------------------------
-- 2. One item per insert into a leaf that is not full, one per delete
-------------------------------------------------------------------------------
-- 4 kB pages (leaves of dozens of entries) and a 1 MB buffer: nothing is
-- flushed meanwhile.
-- A leaf with room: the fullest leaf with at least 12 places fewer than
-- the fullest of the tree, and 10 copies of its first point (new ids: in
-- the leaf's order they go among its entries, and the leaf's MBR, so its
-- parent's entry, does not change)
CREATE TABLE fo_leaf (name text PRIMARY KEY, structure text NOT NULL, ids bigint NOT NULL,
					  page bigint, entries bigint, first_x float8, first_y float8);
INSERT INTO fo_leaf (name, structure, ids) VALUES ('fo_xbr_ord', 'xbrtree', 9000), ('fo_hil_ord', 'hilbert', 9100);
CREATE TABLE fo_xbr_ord_src AS SELECT * FROM fo_src;
CREATE TABLE fo_hil_ord_src AS SELECT * FROM fo_src;
SELECT name, festival.create_index(name, structure, 'fo_dev',
	'{"page_size": 4096, "framework": "fast", "buffer_size": 1048576}', name || '_src') > 0 AS created,
	festival.build(name) AS built, festival.flush(name) >= 0 AS flushed
FROM fo_leaf ORDER BY name;
CREATE FUNCTION fo_leaves(idx text) RETURNS TABLE (page bigint, entries bigint, x float8, y float8)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT t.page, count(*), min(n.xmin) FILTER (WHERE n.position = 0), min(n.ymin) FILTER (WHERE n.position = 0)
	FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level = 0 GROUP BY t.page
$$;
UPDATE fo_leaf f SET (page, entries, first_x, first_y) =
	(SELECT a.page, a.entries, a.x, a.y FROM fo_leaves(f.name) a
	 WHERE a.entries <= (SELECT max(entries) FROM fo_leaves(f.name)) - 12
	 ORDER BY a.entries DESC, a.page LIMIT 1);
SELECT name, entries >= 20 AS leaf_of_20_or_more, (SELECT count(*) FROM festival.buffer(name)) AS buffered_pages
FROM fo_leaf ORDER BY name;

-- 10 inserts (the source table follows)
SELECT f.name, count(*) FILTER (WHERE festival.insert(f.name, f.ids + k, ST_MakePoint(f.first_x, f.first_y)))
		   AS inserted
FROM fo_leaf f CROSS JOIN generate_series(1, 10) k GROUP BY f.name ORDER BY f.name;
INSERT INTO fo_xbr_ord_src SELECT ids + k, ST_MakePoint(first_x, first_y) FROM fo_leaf, generate_series(1, 10) k
WHERE name = 'fo_xbr_ord';
INSERT INTO fo_hil_ord_src SELECT ids + k, ST_MakePoint(first_x, first_y) FROM fo_leaf, generate_series(1, 10) k
WHERE name = 'fo_hil_ord';
-- the buffer holds that one leaf, with 10 items: one per insert (by
-- position it would be every entry from the insertion point on, once per
-- insert: at least 10, here more, as the copies go among the entries)
SELECT f.name, b.page = f.page AS the_leaf, b.status, b.level, b.modifications
FROM fo_leaf f CROSS JOIN LATERAL festival.buffer(f.name) b ORDER BY f.name, b.page;
-- and its node is the leaf with the 10 copies
SELECT f.name, count(*) - f.entries AS entries_gained,
	   count(*) FILTER (WHERE n.ref > f.ids) AS copies
FROM fo_leaf f CROSS JOIN LATERAL festival.node(f.name, f.page) n GROUP BY f.name, f.entries, f.ids ORDER BY f.name;
-- 5 of them deleted: 5 DELETE items more
SELECT f.name, count(*) FILTER (WHERE festival.delete(f.name, f.ids + k, ST_MakePoint(f.first_x, f.first_y)))
		   AS deleted
FROM fo_leaf f CROSS JOIN generate_series(2, 10, 2) k GROUP BY f.name ORDER BY f.name;
DELETE FROM fo_xbr_ord_src WHERE id IN (9002, 9004, 9006, 9008, 9010);
DELETE FROM fo_hil_ord_src WHERE id IN (9102, 9104, 9106, 9108, 9110);
SELECT f.name, b.page = f.page AS the_leaf, b.modifications
FROM fo_leaf f CROSS JOIN LATERAL festival.buffer(f.name) b ORDER BY f.name, b.page;
SELECT f.name, count(*) - f.entries AS entries_gained,
	   array_agg(n.ref - f.ids ORDER BY n.ref) FILTER (WHERE n.ref > f.ids) AS copies
FROM fo_leaf f CROSS JOIN LATERAL festival.node(f.name, f.page) n GROUP BY f.name, f.entries, f.ids ORDER BY f.name;
-- written and read back, the leaf is what the items made of it
SELECT name, festival.flush(name) > 0 AS flushed, festival.close(name) AS closed FROM fo_leaf ORDER BY name;
SELECT f.name, count(*) - f.entries AS entries_gained,
	   array_agg(n.ref - f.ids ORDER BY n.ref) FILTER (WHERE n.ref > f.ids) AS copies,
	   (SELECT count(*) FROM festival.check(f.name)) AS check_rows,
	   fixture.window_wrong(f.name, 'fo_win', (f.name || '_src')::regclass) AS windows_wrong
FROM fo_leaf f CROSS JOIN LATERAL festival.node(f.name, f.page) n GROUP BY f.name, f.entries, f.ids ORDER BY f.name;

SELECT festival.drop_index(name) FROM fo_leaf ORDER BY name;
SELECT festival.drop_index(name) FROM fo_index ORDER BY ord;
DROP FUNCTION fo_leaves(text);
DROP TABLE fo_index, fo_leaf, fo_src, fo_later, fo_win, fo_xbr_ord_src, fo_hil_ord_src;
SELECT festival.drop_device('fo_dev');
