--
-- cache_frames: the write-through store and the lru-family page cache
-- (buffer/cache.c).  A node read that hits the cache is decoded straight
-- from the cache's frame, lent until the store's next call on it
-- (PageIOOps.read_borrow; festival.stats()->'buffers'->'lent_reads' counts
-- them); a cache that does not lend (clru) and no cache at all read into
-- the store's buffer.  Each index has a twin without a cache built from the
-- same rows: the trees, the counters of the work done and the answers must
-- be the same, and festival.check() must find nothing.
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

-- windows whose answer differs from the brute force
CREATE FUNCTION cf_wrong(idx text) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM cf_win w
	WHERE ARRAY(SELECT q.id FROM festival.query(idx, w.g) q ORDER BY 1)
		  IS DISTINCT FROM
		  ARRAY(SELECT s.id FROM cf_src s WHERE ST_Intersects(s.geom, w.g) ORDER BY 1)
$$;

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
	(8, 'cf_star_hlru', 'cf_star_none', 'rstartree', '{"page_size": 1024, "cache": "hlru", "cache_size": "12kB"}');

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
SELECT i.name, cf_wrong(i.name) AS wrong, cf_work(i.name) = cf_work(i.twin) AS same_work
FROM cf_index i ORDER BY i.ord;

-- check() reads every node (through the frames too) and finds nothing
SELECT i.name, c.* FROM cf_index i CROSS JOIN LATERAL festival.check(i.name) c;

SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM cf_index) s;
SELECT festival.drop_device('cf_dev');
