--
-- tiers_buffers: H-Grid's per-device write buffers and promotion by flag
-- (Fevgas 2019, PhD thesis, §4.3, Alg. 9-12; src/tier/tier_buffer.c),
-- counted page by page against a hand computation.
--
-- One R-tree whose only node is its root leaf, page 2 (pages 0 and 1 are
-- the meta pair), write-through (framework none), no page cache, placement
-- hot with s = 1.0, write buffers of 2 pages per device.  The detector
-- (Alg. 9) sees every access; for the root (no parent: always eligible),
-- with F = count / max count = 1 at every access of the only page of its
-- level, T the clock after the access and t the clock of the previous one:
--   W = F - (T - t) / T,  CMA = mean of the W so far,  hot when W > s * CMA
--   access 1 (the insert):  W = 1 - 1/1 = 0      CMA = 0     not hot
--   access 2 (query 1):     W = 1 - 1/2 = 0.5    CMA = 0.25  hot: flagged
--   access 3 (query 2):     W = 1 - 1/3 = 0.667  (hot: weight refreshed)
--   access 4, 5 (inserts):  W = 1 - 1/4, 1 - 1/5
--   access 6 (query 3):     W = 1 - 1/6 = 0.833
-- (check() reads nodes too, so it stays out of the counted parts.)
-- The flag (Alg. 9, step 5.3) puts page 2 in the fast write buffer without
-- moving it: query 2 still reads it from the slow tier, and the flush
-- (the buffer's next flush) reads it once more and writes it to the fast
-- tier: one promotion, and the slow copy is released (zeroed) once the
-- map names the fast one.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('tb_slow', io => 'buffered', profile => 'nvme_intel_p3700');
SELECT festival.create_device('tb_fast', io => 'buffered', profile => 'optane_memory_32gb');

SELECT festival.create_index('tb_one', 'rtree', 'tb_slow',
	'{"page_size": 1024, "fast_device": "tb_fast", "placement": "hot", "hot_selectivity": 1.0,
	  "write_buffer_pages": 2}') > 0 AS created;
SELECT festival.insert('tb_one', 1, ST_MakePoint(1, 1));
-- access 1: W = 0, not hot
SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages('tb_one');
SELECT festival.close('tb_one');

-- Part A: promotion by flag, migration at the buffer's flush
SELECT festival.begin_run('tb_promote', trace => true) > 0 AS began;
SELECT array_agg(id) AS q1 FROM festival.query('tb_one', ST_MakeEnvelope(0, 0, 5, 5));
-- access 2: W = 0.5 > 1.0 * 0.25: hot, flagged, still slow
SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages('tb_one') WHERE page = 2;
SELECT array_agg(id) AS q2 FROM festival.query('tb_one', ST_MakeEnvelope(0, 0, 5, 5));
SELECT page, tier, accesses, hot FROM festival.tier_pages('tb_one') WHERE page = 2;
SELECT festival.flush('tb_one');
SELECT page, tier, accesses, hot FROM festival.tier_pages('tb_one') WHERE page = 2;
SELECT festival.end_run() > 0 AS ended;
-- by hand: the open reads the meta pair; query 1 and query 2 read page 2
-- from the slow tier; the flush reads it (the flagged page's image) and
-- writes it to the fast tier.  Nothing else moves.
SELECT t.seq, t.page, t.access, t.level, t.tier
FROM festival.io_trace t JOIN festival.run r USING (run_id) WHERE r.label = 'tb_promote'
ORDER BY t.seq;
-- the counters: 5 slow reads; 1 fast write (the migration); 1 slow write,
-- the release of the old copy (the router zeroes it below tracing, so the
-- trace does not show it); 1 promotion, 1 release
SELECT (m->>'tier_slow_pages_read')::int AS slow_reads, (m->>'tier_fast_pages_read')::int AS fast_reads,
	   (m->>'tier_slow_pages_written')::int AS slow_writes, (m->>'tier_fast_pages_written')::int AS fast_writes,
	   (m->>'tier_promotions')::int AS promotions, (m->>'tier_releases')::int AS releases
FROM festival.run r, LATERAL (SELECT r.metrics m) x WHERE r.label = 'tb_promote';

-- Part B: writes wait in their device's buffer; a read finds them there
-- (Alg. 11: main buffer, flash write buffer, 3DXPoint write buffer, then
-- the device).  Two inserts and a query, then a flush, on the open index.
-- By hand: insert 1 reads page 2 from the fast tier (the only device read)
-- and marks the file unclean (both meta copies, slow buffer, written as
-- one batch sorted by page by the sync that follows); its commit puts
-- page 2 in the fast buffer.  Insert 2 and the query read page 2 from the
-- fast buffer (no transfer); insert 2's commit replaces its image there.
-- The flush writes the fast buffer (page 2 once, for two commits), then
-- the meta pair, clean, through the slow buffer.
SELECT festival.begin_run('tb_buffers', trace => true) > 0 AS began;
SELECT festival.insert('tb_one', 2, ST_MakePoint(2, 2));
SELECT festival.insert('tb_one', 3, ST_MakePoint(3, 3));
-- brute force: the three points
SELECT array_agg(id ORDER BY id) AS q3, array_agg(id ORDER BY id) = ARRAY[1, 2, 3]::bigint[] AS equal_brute_force
FROM festival.query('tb_one', ST_MakeEnvelope(0, 0, 5, 5));
SELECT festival.flush('tb_one');
SELECT festival.end_run() > 0 AS ended;
SELECT t.seq, t.page, t.access, t.level, t.tier
FROM festival.io_trace t JOIN festival.run r USING (run_id) WHERE r.label = 'tb_buffers'
ORDER BY t.seq;
-- access 6: W = 1 - 1/6
SELECT page, tier, weight, accesses, hot FROM festival.tier_pages('tb_one') WHERE page = 2;
SELECT * FROM festival.check('tb_one');

-- Part C: a page arriving at a full buffer makes it write what it holds,
-- and a sync writes both buffers.  The same index with buffers of one
-- page.  By hand: insert 2 reads page 2 from the slow tier (access 2: W =
-- 0.5 > 0.25, hot: flagged in the fast buffer); the unclean mark writes
-- meta copy 1, then copy 0, which finds the one-page slow buffer full and
-- writes copy 1 (where two-page buffers wrote one batch sorted by page, 0
-- then 1: Part B); the sync that follows writes copy 0, then the fast
-- buffer: the flagged page 2 is read and written to the fast tier (its
-- migration).  The commit's write of page 2 then waits in the fast buffer.
SELECT festival.create_index('tb_small', 'rtree', 'tb_slow',
	'{"page_size": 1024, "fast_device": "tb_fast", "placement": "hot", "hot_selectivity": 1.0,
	  "write_buffer_pages": 1}') > 0 AS created;
SELECT festival.insert('tb_small', 1, ST_MakePoint(1, 1));
SELECT festival.flush('tb_small');
SELECT festival.begin_run('tb_full', trace => true) > 0 AS began;
SELECT festival.insert('tb_small', 2, ST_MakePoint(2, 2));
SELECT festival.end_run() > 0 AS ended;
SELECT t.seq, t.page, t.access, t.tier
FROM festival.io_trace t JOIN festival.run r USING (run_id) WHERE r.label = 'tb_full'
ORDER BY t.seq;
SELECT festival.flush('tb_small');
SELECT * FROM festival.check('tb_small');

-- check() while a flag waits: the flagged page is slow and in the fast
-- buffer, which check() requires of every page flagged for promotion;
-- the flush moves it
SELECT festival.create_index('tb_flag', 'rtree', 'tb_slow',
	'{"page_size": 1024, "fast_device": "tb_fast", "placement": "hot", "hot_selectivity": 1.0}') > 0 AS created;
SELECT festival.insert('tb_flag', 1, ST_MakePoint(1, 1));
SELECT festival.close('tb_flag');
SELECT count(*) FROM festival.query('tb_flag', ST_MakeEnvelope(0, 0, 5, 5));
SELECT page, tier, accesses, hot FROM festival.tier_pages('tb_flag') WHERE page = 2;
SELECT * FROM festival.check('tb_flag');
SELECT festival.flush('tb_flag');
SELECT page, tier, accesses, hot FROM festival.tier_pages('tb_flag') WHERE page = 2;
SELECT * FROM festival.check('tb_flag');

-- The variant write_buffers shared_cache (no write buffers; festival's
-- form before them): a promoted page's image is written back into the page
-- cache, or, without one, moved at once.  By hand, on the same one-page
-- index: query 1 flags page 2 (access 2, as above) and, with no cache,
-- reads it and writes it to the fast tier right then; query 2 reads it
-- from the fast tier; the flush moves nothing.
SELECT festival.create_index('tb_shared', 'rtree', 'tb_slow',
	'{"page_size": 1024, "fast_device": "tb_fast", "placement": "hot", "hot_selectivity": 1.0,
	  "write_buffers": "shared_cache"}') > 0 AS created;
SELECT festival.insert('tb_shared', 1, ST_MakePoint(1, 1));
SELECT festival.close('tb_shared');
SELECT festival.begin_run('tb_shared', trace => true) > 0 AS began;
SELECT count(*) FROM festival.query('tb_shared', ST_MakeEnvelope(0, 0, 5, 5));
SELECT count(*) FROM festival.query('tb_shared', ST_MakeEnvelope(0, 0, 5, 5));
SELECT festival.flush('tb_shared');
SELECT festival.end_run() > 0 AS ended;
SELECT t.seq, t.page, t.access, t.level, t.tier
FROM festival.io_trace t JOIN festival.run r USING (run_id) WHERE r.label = 'tb_shared'
ORDER BY t.seq;
SELECT * FROM festival.check('tb_shared');

-- Cooling (option cool_after, beyond the thesis, which leaves it to future
-- work, §4.5): at a flush, a hot page not accessed in the last cool_after
-- accesses of the detector's clock leaves the hot set and is demoted
-- (children before their parents).  A grid file over [0, 100]^2 with 60
-- points at x = 10 and x = 90 (1 kB pages): its resident root, one
-- sub-directory (page 3, level 1) and two buckets, page 2 (x = 10) and
-- page 5 (x = 90); after the build pages 2 and 3 are hot and fast, 5 is
-- not.  A point search reads the sub-directory and one bucket: 2 accesses.
-- One search at x = 10 (pages 3, 2), then three at x = 90 (3, 5 each):
-- page 2's last access is 6 accesses before the flush.  With cool_after 5
-- it cools (6 > 5): one demotion (read from the fast tier, written to the
-- slow one by the router, below tracing) and one release; with cool_after
-- 6 it stays (6 is not more than 6).  Page 3, read at every search, stays.
SELECT festival.create_index(name, 'gridfile', 'tb_slow',
	format('{"page_size": 1024, "extent": [0, 0, 100, 100], "fast_device": "tb_fast",
	         "placement": "hot", "hot_selectivity": 1.0, "cool_after": %s}', idle)::jsonb) > 0 AS created
FROM (VALUES ('tb_cool', 5), ('tb_keep', 6)) v(name, idle) ORDER BY name;
SELECT count(festival.insert(name, i, ST_MakePoint(CASE WHEN i % 2 = 0 THEN 10 ELSE 90 END, i))) AS inserted
FROM unnest(ARRAY['tb_cool', 'tb_keep']) name, generate_series(1, 60) i;
SELECT festival.close(name) FROM unnest(ARRAY['tb_cool', 'tb_keep']) name;
SELECT name, page, tier, level, accesses, hot FROM unnest(ARRAY['tb_cool', 'tb_keep']) name,
	LATERAL festival.tier_pages(name) WHERE level IS NOT NULL AND level < 2 ORDER BY name, page;
SELECT festival.begin_run('tb_cooling') > 0 AS began;
SELECT name, (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(9, 9, 11, 11))) AS left_1,
	   (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(89, 9, 91, 11))) AS right_1,
	   (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(89, 19, 91, 21))) AS right_2,
	   (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(89, 29, 91, 31))) AS right_3
FROM unnest(ARRAY['tb_cool', 'tb_keep']) name ORDER BY name;
SELECT name, page, tier, accesses, hot FROM unnest(ARRAY['tb_cool', 'tb_keep']) name,
	LATERAL festival.tier_pages(name) WHERE level IS NOT NULL AND level < 2 ORDER BY name, page;
SELECT festival.flush(name) FROM unnest(ARRAY['tb_cool', 'tb_keep']) name;
SELECT festival.end_run() > 0 AS ended;
SELECT name, page, tier, accesses, hot FROM unnest(ARRAY['tb_cool', 'tb_keep']) name,
	LATERAL festival.tier_pages(name) WHERE level IS NOT NULL AND level < 2 ORDER BY name, page;
SELECT (r.metrics->>'tier_demotions')::int AS demotions, (r.metrics->>'tier_releases')::int AS releases,
	   (r.metrics->>'tier_promotions')::int AS promotions
FROM festival.run r WHERE r.label = 'tb_cooling';
SELECT name, c.* FROM unnest(ARRAY['tb_cool', 'tb_keep']) name, LATERAL festival.check(name) c;
-- brute force: every point answers
SELECT name, (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(0, 0, 100, 100))) = 60 AS all_answered
FROM unnest(ARRAY['tb_cool', 'tb_keep']) name ORDER BY name;

-- bad input: the options are the detecting placements', at least one page,
-- and no buffer size without write buffers
SELECT festival.create_index('tb_bad', 'rtree', 'tb_slow',
	'{"fast_device": "tb_fast", "placement": "level", "write_buffer_pages": 8}');
SELECT festival.create_index('tb_bad', 'rtree', 'tb_slow',
	'{"fast_device": "tb_fast", "placement": "hot", "write_buffer_pages": 0}');
SELECT festival.create_index('tb_bad', 'rtree', 'tb_slow',
	'{"fast_device": "tb_fast", "placement": "level", "write_buffers": "shared_cache"}');
SELECT festival.create_index('tb_bad', 'rtree', 'tb_slow',
	'{"fast_device": "tb_fast", "placement": "hot", "write_buffers": "shared_cache", "write_buffer_pages": 4}');
SELECT festival.create_index('tb_bad', 'rtree', 'tb_slow',
	'{"fast_device": "tb_fast", "placement": "hot", "write_buffers": "both"}');
SELECT festival.create_index('tb_bad', 'rtree', 'tb_slow',
	'{"fast_device": "tb_fast", "placement": "level", "cool_after": 10}');
SELECT festival.create_index('tb_bad', 'rtree', 'tb_slow',
	'{"fast_device": "tb_fast", "placement": "hot", "cool_after": -1}');

-- festival.max_index_memory counts the two write buffers with the cache:
-- 16 kB of cache + 2 x 100 pages of 1 kB = 221,184 bytes over a 200 kB
-- ceiling; without write buffers (shared_cache) the same index fits
SET festival.max_index_memory = '200kB';
SELECT festival.create_index('tb_mem', 'rtree', 'tb_slow',
	'{"page_size": 1024, "fast_device": "tb_fast", "placement": "hot", "cache": "lru", "cache_size": 16384, "write_buffer_pages": 100}');
SELECT festival.create_index('tb_mem', 'rtree', 'tb_slow',
	'{"page_size": 1024, "fast_device": "tb_fast", "placement": "hot", "cache": "lru", "cache_size": 16384, "write_buffers": "shared_cache"}') > 0 AS created;
RESET festival.max_index_memory;

SELECT festival.drop_index(name) FROM unnest(ARRAY['tb_one', 'tb_small', 'tb_flag', 'tb_shared', 'tb_cool', 'tb_keep', 'tb_mem']) name;
