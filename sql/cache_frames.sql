--
-- cache_frames: the write-through store and the lru-family page cache
-- (cache/cache.c).  A node read that hits the cache is decoded straight
-- from the cache's frame, lent until the store's next call on it
-- (PageIOOps.read_borrow; festival.stats()->'buffers'->'lent_reads' counts
-- them); a cache that does not lend (clru) and no cache at all read into
-- the store's buffer.  Each index has a twin without a cache built from the
-- same rows: the trees, the counters of the work done and the answers must
-- be the same, and festival.check() must find nothing.
--
-- The store also hands its pages to such a cache unsealed
-- ('unsealed_writes'): the cache seals each when it leaves for the device
-- (eviction, flush, a page it does not admit: s2q's first misses).  It
-- gives the cache the buffers of its page images instead of a copy
-- ('given_images'), and takes the frames' old buffers back for its next
-- pages.  After a flush the file is byte for byte its twin's, and read
-- back alone every page is sealed.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-- 4000 points, scattered over 1000 x 1000
CREATE TABLE cf_src (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO cf_src SELECT i, ST_MakePoint((i * 7919) % 1000, (i * 104729) % 997)
FROM generate_series(1, 4000) AS i;

CREATE TABLE cf_win (wid int PRIMARY KEY, g geometry);
INSERT INTO cf_win
SELECT i, ST_MakeEnvelope((i * 37) % 1000, (i * 53) % 1000, (i * 37) % 1000 + 40, (i * 53) % 1000 + 30)
FROM generate_series(1, 25) AS i;
INSERT INTO cf_win VALUES (100, ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6)),
	(101, ST_MakeEnvelope(5000, 5000, 5010, 5010));

-- twin: the index without a cache built the same way
CREATE TABLE cf_index (ord int, name text, twin text, structure text, options jsonb);
INSERT INTO cf_index VALUES
	(1, 'cf_none', 'cf_none', 'rtree', '{"page_size": 1024, "split": "quadratic"}'),
	(2, 'cf_lru', 'cf_none', 'rtree', '{"page_size": 1024, "split": "quadratic", "cache": "lru", "cache_size": "1MB"}'),
	(3, 'cf_lru_evicting', 'cf_none', 'rtree', '{"page_size": 1024, "split": "quadratic", "cache": "lru", "cache_size": "8kB"}'),
	(4, 'cf_2q', 'cf_none', 'rtree', '{"page_size": 1024, "split": "quadratic", "cache": "2q", "cache_size": "16kB"}'),
	(5, 'cf_clru', 'cf_none', 'rtree', '{"page_size": 1024, "split": "quadratic", "cache": "clru", "cache_size": "64kB", "cache_clru_pages": 8}'),
	(6, 'cf_star_none', 'cf_star_none', 'rstartree', '{"page_size": 1024}'),
	(7, 'cf_star_lru', 'cf_star_none', 'rstartree', '{"page_size": 1024, "cache": "lru", "cache_size": "1MB"}'),
	(8, 'cf_star_hlru', 'cf_star_none', 'rstartree', '{"page_size": 1024, "cache": "hlru", "cache_size": "12kB"}'),
	(9, 'cf_s2q', 'cf_none', 'rtree', '{"page_size": 1024, "split": "quadratic", "cache": "s2q", "cache_size": "16kB"}');

SELECT festival.create_device('cf_dev', io => 'buffered');
SELECT name, festival.create_index(name, structure, 'cf_dev', options, 'cf_src') > 0 AS created,
	   festival.build(name, 'insert') AS built
FROM cf_index ORDER BY ord;

-- the work done, which a cache must not change
CREATE FUNCTION cf_work(idx text) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('root', s->'root', 'height', s->'height', 'pages', s->'pages',
		'nodes_visited', s->'totals'->'nodes_visited',
		'nodes_written', s->'totals'->'nodes_written',
		'entries_examined', s->'totals'->'entries_examined',
		'reads_per_level', s->'totals'->'reads_per_level',
		'writes_per_level', s->'totals'->'writes_per_level')
	FROM festival.stats(idx) AS s
$$;

-- after the build: same work as the twin, reads lent only by lru-family caches
SELECT i.name, cf_work(i.name) = cf_work(i.twin) AS same_work,
	   (festival.stats(i.name)->'buffers'->>'lent_reads')::bigint > 0 AS lent,
	   (festival.stats(i.name)->'totals'->>'cache_hits')::bigint > 0 AS hits
FROM cf_index i ORDER BY i.ord;

-- lent reads are cache hits of node pages: never more than the hits
SELECT i.name
FROM cf_index i
WHERE (festival.stats(i.name)->'buffers'->>'lent_reads')::bigint >
	  (festival.stats(i.name)->'totals'->>'cache_hits')::bigint;

-- the windows, through the cache's frames, against the brute force
SELECT i.name, fixture.window_wrong(i.name, 'cf_win', 'cf_src') AS wrong,
	   cf_work(i.name) = cf_work(i.twin) AS same_work
FROM cf_index i ORDER BY i.ord;

-- check() reads every node (through the frames too) and finds nothing
SELECT i.name, c.* FROM cf_index i CROSS JOIN LATERAL festival.check(i.name) c;

-- pages the store handed to the cache unsealed, and those whose buffer the
-- cache took as a frame's image: only lru-family caches take them
SELECT i.name, (festival.stats(i.name)->'buffers'->>'unsealed_writes')::bigint > 0 AS unsealed,
	   (festival.stats(i.name)->'buffers'->>'given_images')::bigint > 0 AS given
FROM cf_index i ORDER BY i.ord;

-- the index file's node pages (after its two meta pages), as bytes
CREATE FUNCTION cf_pages(idx text) RETURNS text LANGUAGE sql AS $$
	SELECT md5(pg_read_binary_file(f, 2048, (pg_stat_file(f)).size - 2048))
	FROM (SELECT festival.stats(idx)->>'file' AS f) s
$$;

-- after a flush every file holds what its twin without a cache holds, byte
-- for byte: the pages sealed as they left the cache carry the checksums the
-- store sealed itself before
SELECT count(*) AS flushed FROM (SELECT festival.flush(name) FROM cf_index) s;
SELECT i.name, cf_pages(i.name) = cf_pages(i.twin) AS same_bytes,
	   festival.stats(i.name)->>'clean_on_disk' AS clean
FROM cf_index i ORDER BY i.ord;

-- more rows one at a time, with windows in between (the kept root is read
-- from the cache, unsealed after each insert), charged as FESTIval charges
-- them (write_through_per_access: a node this insert wrote is read again
-- through the cache, and written as often as the insert wrote it), then
-- deletes
SET festival.write_through_per_access = on;
CREATE TABLE cf_more (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO cf_more SELECT 10000 + i, ST_MakePoint((i * 613) % 1200, (i * 331) % 1100)
FROM generate_series(1, 300) AS i;
SELECT i.name, count(*) FILTER (WHERE festival.insert(i.name, m.id, m.geom)) AS inserted,
	   sum((SELECT count(*) FROM festival.query(i.name, ST_Expand(m.geom, 30)))) AS found
FROM cf_index i CROSS JOIN LATERAL (SELECT * FROM cf_more ORDER BY id) m
GROUP BY i.name, i.ord ORDER BY i.ord;
RESET festival.write_through_per_access;
INSERT INTO cf_src SELECT * FROM cf_more;
SELECT i.name, count(*) FILTER (WHERE festival.delete(i.name, s.id, s.geom)) AS deleted
FROM cf_index i CROSS JOIN LATERAL (SELECT * FROM cf_src WHERE id % 7 = 0 ORDER BY id) s
GROUP BY i.name, i.ord ORDER BY i.ord;
DELETE FROM cf_src WHERE id % 7 = 0;
SELECT i.name, fixture.window_wrong(i.name, 'cf_win', 'cf_src') AS wrong,
	   cf_work(i.name) = cf_work(i.twin) AS same_work,
	   (festival.stats(i.name)->'buffers'->>'root_decodes')::bigint =
	   (festival.stats(i.twin)->'buffers'->>'root_decodes')::bigint AS same_root_decodes
FROM cf_index i ORDER BY i.ord;
SELECT i.name, c.* FROM cf_index i CROSS JOIN LATERAL festival.check(i.name) c;

-- flushed and closed, each index is read back from its file alone: every
-- page there is sealed (check() verifies each checksum) and the same bytes
-- as its twin's
SELECT count(*) AS flushed FROM (SELECT festival.flush(name) FROM cf_index) s;
SELECT count(*) AS closed FROM (SELECT festival.close(name) FROM cf_index) s;
SELECT i.name, cf_pages(i.name) = cf_pages(i.twin) AS same_bytes
FROM cf_index i ORDER BY i.ord;
SELECT i.name, c.* FROM cf_index i CROSS JOIN LATERAL festival.check(i.name) c;
SELECT i.name, fixture.window_wrong(i.name, 'cf_win', 'cf_src') AS wrong FROM cf_index i ORDER BY i.ord;

-- A cache of n pages takes n pages of memory and a few percent, not twice
-- that: its frames come from a pool of aligned chunks (device/pagepool.c),
-- where one allocation per frame took page_size + FEST_IO_ALIGN bytes.
-- Built and closed first, so only the reads of one query fill the cache
-- (a build's pending images also come from the lru cache's pool).
CREATE TABLE cf_big AS
SELECT i AS id, ST_MakePoint((i * 7919) % 100003, (i * 104729) % 99991) AS geom
FROM generate_series(1::bigint, 60000) AS i;
SELECT count(*) AS closed FROM (SELECT festival.close(name) FROM cf_index) s;
CREATE TABLE cf_mem (name text, cache text);
INSERT INTO cf_mem VALUES ('cf_mem_lru', '{"cache": "lru"}');
SELECT m.name, festival.create_index(m.name, 'rtree', 'cf_dev',
	   m.cache::jsonb || '{"page_size": 4096, "split": "quadratic", "cache_size": "1MB"}',
	   'cf_big') > 0 AS created,
	   festival.build(m.name) AS built, festival.close(m.name) AS closed
FROM cf_mem m ORDER BY m.name;
SELECT m.name, (festival.stats(m.name)->>'pages')::int > 600 AS larger_than_cache,
	   (SELECT count(*) FROM festival.query(m.name, ST_MakeEnvelope(-1, -1, 200000, 200000))) AS found
FROM cf_mem m ORDER BY m.name;
SELECT name, count(*) AS caches,
	   sum(total_bytes) BETWEEN 1048576 AND 1.25 * 1048576 AS about_cache_size
FROM pg_backend_memory_contexts
WHERE name = 'festival page cache'
GROUP BY name ORDER BY name;
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM cf_mem) s;

-- Without a cache, the store's page images come from a pool of its own
-- (nodestore/writethrough.c, images_cxt): a build's batch of images is reused by the
-- next batch, and given back at the flush that ends the build.  One
-- insert then holds one chunk of 32 pages of 4 kB (128 kB), not one
-- allocation per page; a flush gives it back.
SELECT festival.create_index('cf_mem_none', 'rtree', 'cf_dev',
	   '{"page_size": 4096, "split": "quadratic"}', 'cf_big') > 0 AS created,
	   festival.build('cf_mem_none', 'insert') AS built;
SELECT count(*) AS stores, sum(total_bytes) <= 8192 AS given_back_after_build
FROM pg_backend_memory_contexts WHERE name = 'festival write-through store images';
INSERT INTO cf_big VALUES (60001, ST_MakePoint(5, 5));
SELECT festival.insert('cf_mem_none', 60001, ST_MakePoint(5, 5)) AS inserted;
SELECT sum(total_bytes) BETWEEN 128 * 1024 AND 148 * 1024 AS one_chunk
FROM pg_backend_memory_contexts WHERE name = 'festival write-through store images';
SELECT festival.flush('cf_mem_none') AS flushed;
SELECT sum(total_bytes) <= 8192 AS given_back_after_flush
FROM pg_backend_memory_contexts WHERE name = 'festival write-through store images';
SELECT fixture.window_wrong('cf_mem_none', 'cf_win', 'cf_big') AS wrong;
SELECT count(*) AS check_rows FROM festival.check('cf_mem_none');
SELECT festival.drop_index('cf_mem_none');

SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM cf_index) s;
SELECT festival.drop_device('cf_dev');
