--
-- root_kept: the write-through store keeps the root decoded for the window
-- search (nodestore/writethrough.c, wt_read_root), and the search stops at the
-- root when the window misses the union of the root's entries
-- (index/traverse.c).  Every query still reads the root through the page
-- I/O chain: the counters are those of a plain read (a cache hit, or a page
-- read from the device), and a change of the root (an insert, a split, a
-- delete, a rebuild, a reload after a failed write, damage on the device)
-- is seen by the next query.  Answers are compared with PostGIS's brute
-- force after every phase; festival.stats()->'buffers'->'root_decodes'
-- says how often the root was decoded.  Index files are opened with
-- O_NOATIME (phase 7).
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-- 3000 points on a grid of 10 x 10 cells, spaced 10 apart
CREATE TABLE rk_src (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO rk_src SELECT i, ST_MakePoint((i % 60) * 10, (i / 60) * 10)
FROM generate_series(1, 3000) AS i;

-- windows: inside the data, around it, outside it (empty), around the far
-- points inserted below, and the whole plane
CREATE TABLE rk_win (wid int PRIMARY KEY, g geometry);
INSERT INTO rk_win
SELECT i, ST_MakeEnvelope((i * 37) % 600, (i * 53) % 500, (i * 37) % 600 + 25, (i * 53) % 500 + 15)
FROM generate_series(1, 30) AS i;
INSERT INTO rk_win
SELECT 100 + i, ST_MakeEnvelope(2000 + i * 50, 100, 2010 + i * 50, 110) FROM generate_series(1, 10) AS i;
INSERT INTO rk_win VALUES
	(200, ST_MakeEnvelope(4990, 4990, 5020, 5020)),
	(201, ST_MakeEnvelope(-3010, -3010, -2990, -2990)),
	(202, ST_MakeEnvelope(-100, 300, 700, 320)),
	(203, ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6));

CREATE TABLE rk_index (ord int, name text, structure text, options jsonb);
INSERT INTO rk_index VALUES
	(1, 'rk_plain', 'rtree', '{"page_size": 1024, "split": "quadratic"}'),
	(2, 'rk_lru', 'rtree', '{"page_size": 1024, "cache": "lru", "cache_size": "1MB"}'),
	(3, 'rk_star_2q', 'rstartree', '{"page_size": 1024, "cache": "2q", "cache_size": "64kB"}'),
	(4, 'rk_xbr', 'xbrtree', '{"page_size": 1024, "extent": [-10000, -10000, 10000, 10000]}'),
	(5, 'rk_fast', 'rtree', '{"page_size": 1024, "framework": "fast", "buffer_size": "8kB"}');

SELECT festival.create_device('rk_dev', io => 'buffered');
SELECT name, festival.create_index(name, structure, 'rk_dev', options, 'rk_src') > 0 AS created,
	   festival.build(name) AS built
FROM rk_index ORDER BY ord;

-- every index against the brute force, with height and root decodes (NULL:
-- the store keeps no root, as FAST and eFIND)
CREATE FUNCTION rk_verify() RETURNS TABLE (name text, wrong bigint, height int, root_decodes bigint)
LANGUAGE sql AS $$
	SELECT i.name, fixture.window_wrong(i.name, 'rk_win', 'rk_src'), (festival.stats(i.name)->>'height')::int,
		   (festival.stats(i.name)->'buffers'->>'root_decodes')::bigint
	FROM rk_index i ORDER BY i.ord
$$;

-- n calls on an empty window, and what they cost in counters and decodes
CREATE FUNCTION rk_empty(idx text, n int)
RETURNS TABLE (answers bigint, nodes_visited bigint, pages_read bigint, cache_hits bigint,
			   cache_misses bigint, entries_examined_per_call numeric, new_decodes bigint)
LANGUAGE plpgsql AS $$
DECLARE
	before jsonb := festival.stats(idx);
	after jsonb;
	found bigint;
BEGIN
	SELECT count(*) INTO found
	FROM generate_series(1, n) AS k, festival.query(idx, ST_MakeEnvelope(9000 + k, 9000, 9001 + k, 9001)) q;
	after := festival.stats(idx);
	RETURN QUERY SELECT found,
		(after->'totals'->>'nodes_visited')::bigint - (before->'totals'->>'nodes_visited')::bigint,
		(after->'totals'->>'pages_read')::bigint - (before->'totals'->>'pages_read')::bigint,
		(after->'totals'->>'cache_hits')::bigint - (before->'totals'->>'cache_hits')::bigint,
		(after->'totals'->>'cache_misses')::bigint - (before->'totals'->>'cache_misses')::bigint,
		((after->'totals'->>'entries_examined')::bigint - (before->'totals'->>'entries_examined')::bigint)::numeric / n,
		(after->'buffers'->>'root_decodes')::bigint - (before->'buffers'->>'root_decodes')::bigint;
END
$$;

-- the number of entries of an index's root
CREATE FUNCTION rk_root_entries(idx text) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM festival.node(idx, (festival.stats(idx)->>'root')::bigint)
$$;

-------------------------------------------------------------------------------
-- Phase 1: built; the root is decoded once for any number of queries, and
-- each query reads it as before: one node visited, from the cache (a hit)
-- or from the device (a page read), all its entries examined
-------------------------------------------------------------------------------
SELECT * FROM rk_verify();
SELECT i.name, e.*, e.entries_examined_per_call = rk_root_entries(i.name) AS root_entries_examined
FROM rk_index i CROSS JOIN LATERAL rk_empty(i.name, 200) e ORDER BY i.ord;

-------------------------------------------------------------------------------
-- Phase 2: a far point enlarges the root's rectangles: the window around
-- it, outside the old union of the root's entries, finds it
-------------------------------------------------------------------------------
INSERT INTO rk_src VALUES (5001, ST_MakePoint(5000, 5000)), (5002, ST_MakePoint(-3000, -3000));
SELECT i.name, festival.insert(i.name, s.id, s.geom) AS inserted
FROM rk_index i CROSS JOIN rk_src s WHERE s.id > 5000 ORDER BY i.ord, s.id;
SELECT * FROM rk_verify();
SELECT name, (SELECT array_agg(id ORDER BY id) FROM festival.query(name, g)) AS far_answers
FROM rk_index CROSS JOIN rk_win WHERE wid IN (200, 201) ORDER BY ord, wid;

-------------------------------------------------------------------------------
-- Phase 3: inserts until the roots split, then deletes
-------------------------------------------------------------------------------
CREATE TABLE rk_height AS SELECT name, (festival.stats(name)->>'height')::int AS h FROM rk_index;
INSERT INTO rk_src SELECT 10000 + i, ST_MakePoint(700 + (i % 80) * 7, (i / 80) * 7)
FROM generate_series(1, 3000) AS i;
SELECT i.name, count(*) FILTER (WHERE festival.insert(i.name, s.id, s.geom)) AS inserted
FROM rk_index i CROSS JOIN rk_src s WHERE s.id > 10000 GROUP BY i.name, i.ord ORDER BY i.ord;
SELECT h.name, (festival.stats(h.name)->>'height')::int > h.h AS root_split
FROM rk_height h JOIN rk_index USING (name) ORDER BY ord;
SELECT * FROM rk_verify();
SELECT i.name, count(*) FILTER (WHERE festival.delete(i.name, s.id, s.geom)) AS deleted
FROM rk_index i CROSS JOIN rk_src s WHERE s.id = 5001 OR s.id % 3 = 0 GROUP BY i.name, i.ord ORDER BY i.ord;
DELETE FROM rk_src WHERE id = 5001 OR id % 3 = 0;
SELECT * FROM rk_verify();

-------------------------------------------------------------------------------
-- Phase 4: a rebuild starts the kept root over
-------------------------------------------------------------------------------
SELECT name, festival.build(name) AS built FROM rk_index ORDER BY ord;
SELECT * FROM rk_verify();

-------------------------------------------------------------------------------
-- Phase 5: a write that fails (EIO) interrupts an insert; the next query
-- reloads the index from its file and decodes the root afresh.  The write
-- goes to the device at once only without a cache (rk_plain).
-------------------------------------------------------------------------------
SELECT festival.inject_fault('rk_plain', 'write', 0, 'EIO');
SELECT fixture.sqlstate_of($$SELECT festival.insert('rk_plain', 7001, ST_MakePoint(6000, 6000))$$) AS failed_insert;
SELECT * FROM rk_verify() WHERE name = 'rk_plain';
SELECT festival.clear_fault('rk_plain');

-------------------------------------------------------------------------------
-- Phase 6: damage on the device is caught by the next query, though the
-- root is kept decoded (without a cache every query reads the root from
-- the device); the page restored, queries work again without a new decode
-------------------------------------------------------------------------------
CREATE TABLE rk_saved AS
SELECT fixture.index_file('rk_plain') AS path, (festival.stats('rk_plain')->>'root')::bigint AS root,
	   fixture.read_page(fixture.index_file('rk_plain'), 1024, (festival.stats('rk_plain')->>'root')::bigint) AS page;
SELECT fixture.write_at(path, root * 1024 + 100,
						set_byte('\x00'::bytea, 0, get_byte(page, 100) # 255)) FROM rk_saved;
SELECT fixture.sqlstate_of($$SELECT count(*) FROM festival.query('rk_plain', ST_MakeEnvelope(9000, 9000, 9001, 9001))$$) AS damaged_root;
SELECT fixture.write_at(path, root * 1024, page) FROM rk_saved;
SELECT * FROM rk_empty('rk_plain', 10);
SELECT * FROM rk_verify() WHERE name = 'rk_plain';

-------------------------------------------------------------------------------
-- Phase 7: index files are read without access-time updates (O_NOATIME):
-- queries without a cache read the file, and its access time stays
-------------------------------------------------------------------------------
SELECT fixture.sh(format('touch -a -d ''2001-02-03 12:00'' %s', path)) FROM rk_saved;
SELECT answers, pages_read FROM rk_empty('rk_plain', 5);
SELECT (pg_stat_file(path)).access < '2002-01-01' AS access_time_kept FROM rk_saved;

-------------------------------------------------------------------------------
-- Phase 8: the name and window of the call before are no shortcut for
-- another name (a prefix, a longer one, an invalid one) or SRID
-------------------------------------------------------------------------------
SELECT (SELECT count(*) FROM festival.query('rk_plain', ST_MakeEnvelope(0, 0, 25, 25))) AS answers,
	   (SELECT count(*) FROM rk_src WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 25, 25))) AS brute_force;
SELECT n, fixture.sqlstate_of(format('SELECT count(*) FROM festival.query(%L, ST_MakeEnvelope(0, 0, 25, 25))', n)) AS sqlstate
FROM unnest(ARRAY['rk_plai', 'rk_plainx', 'rk_plain!', '']) AS n;
SELECT fixture.sqlstate_of($$SELECT count(*) FROM festival.query('rk_plain', ST_MakeEnvelope(0, 0, 25, 25, 4326))$$) AS other_srid;

-------------------------------------------------------------------------------
-- Phase 9: a root of more than 64 entries, all of them on the search's
-- stack at once (which then outgrows its first 64 places)
-------------------------------------------------------------------------------
CREATE TABLE rk_many AS
SELECT i::bigint AS id, ST_MakePoint((i % 100) * 3, (i / 100) * 3) AS geom FROM generate_series(1, 6000) AS i;
SELECT festival.create_index('rk_wide', 'rtree', 'rk_dev', '{"page_size": 4096}', 'rk_many') > 0 AS created,
	   festival.build('rk_wide') AS built;
SELECT festival.stats('rk_wide')->>'height' AS height, rk_root_entries('rk_wide') > 64 AS wide_root;
SELECT ARRAY(SELECT id FROM festival.query('rk_wide', ST_MakeEnvelope(-1, -1, 1000, 1000)) ORDER BY 1)
	   = ARRAY(SELECT id FROM rk_many ORDER BY 1) AS all_found,
	   (SELECT count(*) FROM festival.query('rk_wide', ST_MakeEnvelope(2000, 0, 2001, 1))) AS outside;
SELECT count(*) AS check_rows FROM fixture.check_of('rk_wide');
SELECT festival.drop_index('rk_wide');
DROP TABLE rk_many;

SELECT name, count(*) AS check_rows FROM rk_index CROSS JOIN LATERAL fixture.check_of(name)
GROUP BY name, ord ORDER BY ord;
SELECT festival.drop_index(name) FROM rk_index ORDER BY ord;
SELECT festival.drop_device('rk_dev');
DROP TABLE rk_src, rk_win, rk_index, rk_height, rk_saved;
DROP FUNCTION rk_verify(), rk_empty(text, int), rk_root_entries(text);
