--
-- window_levels: the window search a level at a time (festival.window_search
-- = level, index/level_search.c) against the depth-first search, for the
-- R-tree, R*-tree, Hilbert R-tree and xBR+-tree, without and with page
-- caches, under FAST and eFIND with changes in their buffers.
--
-- Each configuration is built twice, the same way (twins: the same tree,
-- the same buffers); one twin answers every window depth-first, the other a
-- level at a time, each in a run of its own from a freshly opened index.
-- Then:
--	- both answer exactly what PostGIS's brute force answers (window_wrong);
--	- nodes_visited, entries_examined and reads_per_level are equal (a
--	  level whose pages were dropped or read twice changes them), and so is
--	  pages_read where no cache or read buffer evicts during the runs; with
--	  an evicting cache every node still reaches the cache once (hits +
--	  misses equal);
--	- the level search used fewer read submissions, and on the memory
--	  device with libaio exactly the count computed from the tree itself:
--	  1 for the root plus ceil(k / queue depth) for each level below it,
--	  where k is the number of that level's nodes whose parent entry meets
--	  the window (fixture.nodes walked in SQL);
--	- a hand count on a small tree; a profiled device batches by its channels,
--	  two devices by the smaller depth; festival.check() finds nothing;
--	- a read that fails (EIO) inside a batch raises a clean error; the next
--	  searches answer right and festival.check() finds nothing (also under
--	  FAST and eFIND, whose buffered changes come back from their logs);
--	  a damaged leaf read in a batch is data_corrupted, never an answer.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-- 3000 points spread without repeats, and 200 more inserted after the build
CREATE TABLE wl_src (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO wl_src SELECT i, fixture.scatter_point(i) FROM generate_series(1, 3000) AS i;

-- windows: small, large, thin, outside the data, and the whole area
CREATE TABLE wl_win (wid int PRIMARY KEY, x1 float8, y1 float8, x2 float8, y2 float8,
					 g geometry);
INSERT INTO wl_win (wid, x1, y1, x2, y2)
SELECT k, (k * 61) % 900, (k * 37) % 900, (k * 61) % 900 + 5 + (k % 7) * 20,
	   (k * 37) % 900 + 5 + (k % 5) * 30
FROM generate_series(1, 30) AS k;
INSERT INTO wl_win (wid, x1, y1, x2, y2) VALUES
	(100, 0, 400, 1000, 401), (101, 5000, 5000, 5100, 5100), (102, -10, -10, 2000, 2000),
	(103, 250, 0, 251, 1000);
UPDATE wl_win SET g = ST_MakeEnvelope(x1, y1, x2, y2);

SELECT festival.create_device('wl_mem', kind => 'memory', engine => 'libaio');
SELECT festival.create_device('wl_buf', io => 'buffered', engine => 'libaio');

-- evicts: what may evict during the runs (none, the page cache, eFIND's
-- read buffer); cold: closed before its run, so that its cache starts empty
CREATE TABLE wl_index (ord int PRIMARY KEY, name text, structure text, device text,
					   options jsonb, evicts text, cold boolean);
INSERT INTO wl_index VALUES
	(1, 'wl_rtree', 'rtree', 'wl_mem', '{"page_size": 1024, "split": "quadratic"}', 'none', false),
	(2, 'wl_rstar', 'rstartree', 'wl_mem', '{"page_size": 1024}', 'none', false),
	(3, 'wl_hilbert', 'hilbert', 'wl_mem', '{"page_size": 1024}', 'none', false),
	(4, 'wl_xbr', 'xbrtree', 'wl_mem', '{"page_size": 1024, "extent": [-10, -10, 2000, 2000]}', 'none', false),
	-- a cache that holds the whole index, and ones that evict
	(5, 'wl_rtree_lru', 'rtree', 'wl_buf', '{"page_size": 1024, "cache": "lru", "cache_size": "1MB"}', 'none', true),
	(6, 'wl_rstar_2q', 'rstartree', 'wl_buf', '{"page_size": 1024, "cache": "2q", "cache_size": "16kB"}', 'cache', true),
	(7, 'wl_hilbert_clru', 'hilbert', 'wl_buf', '{"page_size": 1024, "cache": "clru", "cache_size": "32kB",
		"cache_clru_pages": 2}', 'cache', true),
	-- FAST and eFIND with changes buffered (the 200 inserts below)
	(8, 'wl_fast', 'rtree', 'wl_mem', '{"page_size": 1024, "framework": "fast", "buffer_size": "64kB"}', 'none', false),
	(9, 'wl_efind', 'rstartree', 'wl_mem', '{"page_size": 1024, "framework": "efind", "buffer_size": "64kB",
		"read_buffer_policy": "lru", "read_buffer_percent": 20}', 'read buffer', false),
	(10, 'wl_xbr_efind', 'xbrtree', 'wl_mem', '{"page_size": 1024, "extent": [-10, -10, 2000, 2000],
		"framework": "efind", "buffer_size": "64kB", "read_buffer_policy": "lru",
		"read_buffer_percent": 50}', 'read buffer', false);

-- the twins: _d answers depth-first, _l a level at a time
CREATE TABLE wl_twin (ord int, name text, mode text);
INSERT INTO wl_twin SELECT ord, name || '_d', 'depth-first' FROM wl_index;
INSERT INTO wl_twin SELECT ord, name || '_l', 'level' FROM wl_index;

SELECT t.name, festival.create_index(t.name, i.structure, i.device, i.options, 'wl_src') > 0 AS created,
	   festival.build(t.name) AS built
FROM wl_twin t JOIN wl_index i USING (ord) ORDER BY t.ord, t.mode;
INSERT INTO wl_src SELECT i, fixture.scatter_point(i) FROM generate_series(3001, 3200) AS i;
SELECT t.name, count(*) FILTER (WHERE festival.insert(t.name, s.id, s.geom)) AS inserted
FROM wl_twin t CROSS JOIN wl_src s WHERE s.id > 3000 GROUP BY t.ord, t.name ORDER BY t.ord, t.name;

-- each twin's windows in a run of its own, in its mode; the index is
-- opened (its meta read) before the run, so a run holds the searches only
CREATE TABLE wl_run (name text PRIMARY KEY, run_id bigint, wrong bigint);
CREATE FUNCTION wl_measure(idx text, mode text, cold boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	r bigint;
	w bigint;
BEGIN
	PERFORM set_config('festival.window_search', mode, true);
	IF cold THEN
		PERFORM festival.close(idx);
	END IF;
	PERFORM festival.stats(idx);
	PERFORM festival.begin_run('wl ' || idx);
	w := fixture.window_wrong(idx, 'wl_win', 'wl_src');
	r := festival.end_run();
	INSERT INTO wl_run VALUES (idx, r, w);
END
$$;
SELECT wl_measure(t.name, t.mode, i.cold) FROM wl_twin t JOIN wl_index i USING (ord)
ORDER BY t.ord, t.mode;

-- depth-first against level, twin against twin
CREATE VIEW wl_pairs AS
SELECT i.ord, i.name, i.evicts, d.wrong AS wrong_d, l.wrong AS wrong_l,
	   rd.metrics AS md, rl.metrics AS ml, rd.reads_per_level AS pd, rl.reads_per_level AS pl,
	   rd.pages_read AS pages_d, rl.pages_read AS pages_l,
	   rd.read_submissions AS subs_d, rl.read_submissions AS subs_l
FROM wl_index i
JOIN wl_run d ON d.name = i.name || '_d' JOIN festival.run rd ON rd.run_id = d.run_id
JOIN wl_run l ON l.name = i.name || '_l' JOIN festival.run rl ON rl.run_id = l.run_id;

SELECT name, wrong_d, wrong_l,
	   (md->>'nodes_visited') = (ml->>'nodes_visited') AS visited_equal,
	   (md->>'entries_examined') = (ml->>'entries_examined') AS examined_equal,
	   CASE WHEN evicts = 'read buffer' THEN NULL ELSE pd = pl END AS per_level_equal,
	   CASE WHEN evicts = 'none' THEN pages_d = pages_l END AS pages_read_equal,
	   (md->>'cache_hits')::bigint + (md->>'cache_misses')::bigint =
	   (ml->>'cache_hits')::bigint + (ml->>'cache_misses')::bigint AS cache_accesses_equal,
	   subs_l < subs_d AS fewer_submissions,
	   (md->>'nodes_visited')::bigint > 0 AND pages_d > 0 AS did_read
FROM wl_pairs ORDER BY ord;
-- where a cache or the read buffer evicts, the order of accesses decides
-- which of them hit: the pages read, depth-first and level
SELECT name, evicts, pages_d, pages_l FROM wl_pairs WHERE evicts <> 'none' ORDER BY ord;

-- the submissions of the level search on the memory device without a
-- cache or buffer, from the tree itself: for each window, the nodes of each
-- level whose parent entry meets it (every node is read then, none served
-- from memory), ceil(k / queue depth) submissions for k of them, and one
-- for the root
CREATE FUNCTION wl_walk(idx text) RETURNS TABLE (wid int, level int, k bigint)
LANGUAGE sql AS $$
	WITH RECURSIVE w AS (SELECT * FROM wl_win),
	t(wid, page, level) AS (
		SELECT w.wid, (festival.stats(idx)->>'root')::bigint, (festival.stats(idx)->>'height')::int - 1
		FROM w
		UNION ALL
		SELECT t.wid, n.ref, n.level - 1
		FROM t JOIN w ON w.wid = t.wid
		CROSS JOIN LATERAL festival.node(idx, t.page) n
		WHERE n.level > 0 AND n.xmin <= w.x2 AND n.xmax >= w.x1 AND n.ymin <= w.y2 AND n.ymax >= w.y1)
	SELECT wid, level, count(*) FROM t GROUP BY wid, level
$$;
CREATE FUNCTION wl_expected_submissions(idx text, depth int) RETURNS bigint
LANGUAGE sql AS $$
	SELECT sum(CASE WHEN level = (festival.stats(idx)->>'height')::int - 1 THEN 1
					ELSE ceil(k::numeric / depth) END)::bigint
	FROM wl_walk(idx)
$$;
SELECT p.name, p.subs_l = wl_expected_submissions(p.name || '_l', 32) AS as_computed,
	   p.subs_d = p.pages_d AS depth_first_one_per_page
FROM wl_pairs p WHERE p.ord IN (1, 2, 3, 4) ORDER BY p.ord;

-- the queue depth bounds a batch: at depth 1 the level search submits
-- one page at a time, at depth 4 as computed
SET festival.window_search = 'level';
CREATE FUNCTION wl_subs_at(idx text, depth int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	r bigint;
BEGIN
	PERFORM set_config('festival.queue_depth', depth::text, true);
	PERFORM festival.stats(idx);
	PERFORM festival.begin_run('wl depth ' || depth);
	PERFORM fixture.window_wrong(idx, 'wl_win', 'wl_src');
	r := festival.end_run();
	RETURN (SELECT read_submissions FROM festival.run WHERE run_id = r);
END
$$;
SELECT wl_subs_at('wl_rtree_l', 1) = (SELECT pages_l FROM wl_pairs WHERE ord = 1) AS depth1_one_per_page,
	   wl_subs_at('wl_rtree_l', 4) = wl_expected_submissions('wl_rtree_l', 4) AS depth4_as_computed;

-- a small tree by hand: 40 points on one line, R-tree with 1 kB pages
-- (leaves of 24 entries: two leaves under a root), queue depth 1 and 2.
-- The window holding everything reads the root (1 submission) and both
-- leaves: 2 submissions at depth 1, 1 at depth 2; a window meeting only
-- the first leaf's points reads it alone: 1 + 1 at either depth.
CREATE TABLE wl_small (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO wl_small SELECT i, ST_MakePoint(i, 0) FROM generate_series(1, 40) AS i;
SELECT festival.create_index('wl_hand', 'rtree', 'wl_mem', '{"page_size": 1024}', 'wl_small') > 0 AS created,
	   festival.build('wl_hand', 'str') AS built;
SELECT level, count(*) FILTER (WHERE pos = 0) AS nodes, count(*) AS entries
FROM fixture.nodes('wl_hand') GROUP BY level ORDER BY level;
CREATE FUNCTION wl_hand(w geometry, depth int) RETURNS TABLE (answers bigint, submissions bigint)
LANGUAGE plpgsql AS $$
DECLARE
	r bigint;
BEGIN
	PERFORM set_config('festival.queue_depth', depth::text, true);
	PERFORM festival.stats('wl_hand');
	PERFORM festival.begin_run('wl hand');
	SELECT count(*) INTO answers FROM festival.query('wl_hand', w);
	r := festival.end_run();
	submissions := (SELECT read_submissions FROM festival.run WHERE run_id = r);
	RETURN NEXT;
END
$$;
SELECT d AS depth, h.* FROM generate_series(1, 2) d, wl_hand(ST_MakeEnvelope(0, -1, 50, 1), d) h;
SELECT d AS depth, h.* FROM generate_series(1, 2) d, wl_hand(ST_MakeEnvelope(0, -1, 3.5, 1), d) h;
RESET festival.queue_depth;

-- a device with a profile batches by the profile's channels
SELECT festival.create_device('wl_sim', kind => 'memory', engine => 'libaio', profile => 'ssd_kingston_v300');
SELECT festival.create_index('wl_sim_r', 'rtree', 'wl_sim', '{"page_size": 1024}', 'wl_src') > 0 AS created,
	   festival.build('wl_sim_r') AS built;
SELECT channels FROM festival.device_profile WHERE name = 'ssd_kingston_v300';
SELECT fixture.window_wrong('wl_sim_r', 'wl_win', 'wl_src') AS wrong,
	   wl_subs_at('wl_sim_r', 32) = wl_expected_submissions('wl_sim_r', 8) AS by_channels;

-- two devices: the smaller of their depths (the fast device's profile has
-- 2 channels, the slow one 8); every page on the fast tier (all_fast), so
-- each batch is one submission there
SELECT festival.create_device('wl_slow', io => 'buffered', engine => 'libaio', profile => 'ssd_kingston_v300');
SELECT festival.create_device('wl_optane', io => 'buffered', engine => 'libaio', profile => 'optane_memory_32gb');
SELECT channels FROM festival.device_profile WHERE name = 'optane_memory_32gb';
SELECT festival.create_index('wl_tiered', 'rtree', 'wl_slow', '{"page_size": 1024, "fast_device": "wl_optane",
	"placement": "all_fast"}', 'wl_src') > 0 AS created, festival.build('wl_tiered') AS built;
SELECT fixture.window_wrong('wl_tiered', 'wl_win', 'wl_src') AS wrong,
	   wl_subs_at('wl_tiered', 32) = wl_expected_submissions('wl_tiered', 2) AS by_smaller_channels;
RESET festival.window_search;

-- the settings' bounds
SET festival.queue_depth = 0;
SET festival.queue_depth = 257;
SET festival.window_search = 'breadth';

-- a read fault in the middle of a batch: the root and 2 pages of the first
-- batch below it (first_batch pages, at most 32) reach the device, the 3rd
-- fails (FAST and eFIND may serve the root from their buffers: then the 4th)
SET festival.window_search = 'level';
SELECT name,
	   (SELECT w.k FROM wl_walk(name) w
		WHERE w.wid = 102 AND w.level = (festival.stats(name)->>'height')::int - 2) AS first_batch,
	   festival.inject_fault(name, 'read', 3, 'EIO')::text = '' AS armed,
	   fixture.sqlstate_of(format($q$SELECT count(*) FROM festival.query(%L, ST_MakeEnvelope(-10, -10, 2000, 2000))$q$, name))
		 AS failed_query,
	   fixture.window_wrong(name, 'wl_win', 'wl_src') AS wrong_after,
	   (SELECT count(*) FROM festival.check(name)) AS problems_after,
	   (festival.stats(name)->>'entries')::bigint = (SELECT count(*) FROM wl_src) AS entries_exact
FROM unnest(ARRAY['wl_rtree_l', 'wl_fast_l', 'wl_efind_l']) AS name;

-- a damaged leaf in a batch (a byte flipped on the device, the cache empty
-- after a close): data_corrupted, no answer; the page restored, the index
-- answers right and check() finds nothing
CREATE TABLE wl_saved AS
WITH RECURSIVE t(page, level) AS (
	SELECT (festival.stats('wl_rtree_lru_l')->>'root')::bigint,
		   (festival.stats('wl_rtree_lru_l')->>'height')::int - 1
	UNION ALL
	SELECT (SELECT n.ref FROM festival.node('wl_rtree_lru_l', t.page) n WHERE n."position" = 0), t.level - 1
	FROM t WHERE t.level > 0)
SELECT fixture.index_file('wl_rtree_lru_l') AS path, t.page,
	   fixture.read_page(fixture.index_file('wl_rtree_lru_l'), 1024, t.page) AS image
FROM t WHERE t.level = 0;
SELECT festival.close('wl_rtree_lru_l');
SELECT fixture.write_at(path, page * 1024 + 100, set_byte('\x00'::bytea, 0, get_byte(image, 100) # 255))
FROM wl_saved;
SELECT fixture.sqlstate_of($q$SELECT count(*) FROM festival.query('wl_rtree_lru_l', ST_MakeEnvelope(-10, -10, 2000, 2000))$q$)
	AS damaged_leaf;
SELECT fixture.write_at(path, page * 1024, image) FROM wl_saved;
SELECT festival.close('wl_rtree_lru_l');
SELECT fixture.window_wrong('wl_rtree_lru_l', 'wl_win', 'wl_src') AS wrong_after,
	   (SELECT count(*) FROM festival.check('wl_rtree_lru_l')) AS problems_after;
RESET festival.window_search;

-- every index is whole
SELECT t.name, count(c.*) AS problems
FROM wl_twin t LEFT JOIN LATERAL festival.check(t.name) c ON true
GROUP BY t.ord, t.name ORDER BY t.ord, t.name;

SELECT bool_and(festival.drop_index(name)) AS dropped FROM wl_twin;
SELECT festival.drop_index('wl_hand'), festival.drop_index('wl_sim_r'), festival.drop_index('wl_tiered');
SELECT festival.drop_device('wl_mem'), festival.drop_device('wl_buf'), festival.drop_device('wl_sim'),
	festival.drop_device('wl_slow'), festival.drop_device('wl_optane');
DROP TABLE wl_src, wl_win, wl_index, wl_twin, wl_run, wl_small, wl_saved CASCADE;
DROP FUNCTION wl_measure(text, text, boolean), wl_walk(text), wl_expected_submissions(text, int),
	wl_subs_at(text, int), wl_hand(geometry, int);
