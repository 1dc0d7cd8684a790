--
-- tiers: one index over two devices (docs/tiers.md, src/tier).  FAST and
-- eFIND run without their log here (log_size 0): the log is not part of the
-- tiers and its syncs would cost most of this file's time.
--
-- The same changes go to an index under every placement, over every
-- structure and under frameworks none, FAST and eFIND: answers must equal
-- PostGIS brute force, be identical across placements (as are
-- nodes_visited and the leaf entries), per-tier reads must sum to
-- pages_read and festival.check() (which checks the tier map against both
-- devices) must be clean.  Then the placement rules, the hot model against
-- hand-computed weights, capacity and demotion, and bad input.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('ti_slow', io => 'buffered', profile => 'nvme_intel_p3700');
SELECT festival.create_device('ti_fast', io => 'buffered', profile => 'optane_memory_32gb');
SELECT festival.create_device('ti_mem', kind => 'memory');

-- the changes: the source, then deletes and inserts (ids kept apart)
CREATE TABLE ti_src AS SELECT id, geom FROM fx_pts;
ALTER TABLE ti_src ADD PRIMARY KEY (id);
CREATE TABLE ti_gone AS SELECT id, geom FROM ti_src WHERE id % 7 = 0;
CREATE TABLE ti_new AS
	SELECT 10000 + i AS id, ST_MakePoint(3 + (i * 37) % 290, 4 + (i * 53) % 290) AS geom
	FROM generate_series(1, 120) i;

CREATE TABLE ti_index (name text PRIMARY KEY, structure text, framework text, placement text,
					   options jsonb);
-- (hot_selectivity only for the placements that detect hot pages: the
-- others refuse it; LB-Grid, which refuses FAST and eFIND, under none)
INSERT INTO ti_index
SELECT format('ti_%s_%s_%s', s, f, p), s, f, p,
	   jsonb_build_object('page_size', 1024, 'framework', f, 'fast_device', 'ti_fast', 'placement', p)
	   || CASE WHEN p IN ('hot', 'level_hot', 'random') THEN '{"hot_selectivity": 1.0}'::jsonb ELSE '{}'::jsonb END
	   || CASE WHEN s IN ('xbrtree', 'gridfile', 'lbgrid') THEN '{"extent": [-10, -10, 310, 310]}'::jsonb ELSE '{}'::jsonb END
	   || CASE WHEN f <> 'none' THEN '{"buffer_size": 8192, "log_size": 0}'::jsonb ELSE '{}'::jsonb END
FROM unnest(ARRAY['rtree', 'rstartree', 'hilbert', 'xbrtree', 'gridfile', 'lbgrid']) s,
	 unnest(ARRAY['none', 'fast', 'efind']) f,
	 unnest(ARRAY['single', 'all_fast', 'level', 'hot', 'level_hot', 'random']) p
WHERE f = 'none' OR s IN ('rtree', 'gridfile');
-- and over a page cache: hot pages migrate when the fast write buffer
-- flushes; under write_buffers shared_cache, when the cache writes them back
INSERT INTO ti_index
SELECT format('ti_rtree_none_%s_cache', p), 'rtree', 'none', p,
	   jsonb_build_object('page_size', 1024, 'fast_device', 'ti_fast', 'placement', p,
						  'cache', 'lru', 'cache_size', 16384)
	   || CASE WHEN p IN ('hot', 'random') THEN '{"hot_selectivity": 1.0}'::jsonb ELSE '{}'::jsonb END
FROM unnest(ARRAY['single', 'level', 'hot', 'random']) p;
INSERT INTO ti_index
SELECT format('ti_%s_none_hot_shared%s', s, c), s, 'none', 'hot',
	   jsonb_build_object('page_size', 1024, 'fast_device', 'ti_fast', 'placement', 'hot',
						  'hot_selectivity', 1.0, 'write_buffers', 'shared_cache')
	   || CASE WHEN c = '_cache' THEN '{"cache": "lru", "cache_size": 16384}'::jsonb ELSE '{}'::jsonb END
	   || CASE WHEN s = 'gridfile' THEN '{"extent": [-10, -10, 310, 310]}'::jsonb ELSE '{}'::jsonb END
FROM unnest(ARRAY['rtree', 'gridfile']) s, unnest(ARRAY['', '_cache']) c;

SELECT count(*) AS indices,
	   count(*) FILTER (WHERE festival.create_index(name, structure, 'ti_slow', options, 'ti_src') > 0) AS created
FROM ti_index;

-- build every index, then change the source and feed the same deletes and
-- inserts to every index, query, flush.  The builds batch their commits
-- (festival.build_commit_rows 0, the default); the R*-tree and xBR+-tree
-- pairs under random placement are also built with one commit per row below
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT name FROM ti_index ORDER BY name LOOP
		PERFORM festival.build(r.name);
	END LOOP;
END $$;
DELETE FROM ti_src WHERE id IN (SELECT id FROM ti_gone);
INSERT INTO ti_src SELECT * FROM ti_new;
CREATE TABLE ti_answer (name text, qid int, ids bigint[]);
DO $$
DECLARE
	r record;
	q record;
BEGIN
	FOR r IN SELECT name FROM ti_index ORDER BY name LOOP
		PERFORM festival.delete(r.name, id, geom) FROM ti_gone ORDER BY id;
		PERFORM festival.insert(r.name, id, geom) FROM ti_new ORDER BY id;
		-- the skewed part: one small window, many times
		FOR i IN 1..4 LOOP
			PERFORM festival.query(r.name, ST_MakeEnvelope(20, 30, 80, 90));
		END LOOP;
		FOR q IN SELECT qid, g FROM fx_query WHERE qid >= 100 ORDER BY qid LOOP
			INSERT INTO ti_answer
			SELECT r.name, q.qid, coalesce(array_agg(id ORDER BY id), '{}')
			FROM festival.query(r.name, q.g);
		END LOOP;
		PERFORM festival.flush(r.name);
	END LOOP;
END $$;

-- brute force over the acknowledged rows
CREATE TABLE ti_truth AS
SELECT q.qid, coalesce((SELECT array_agg(id ORDER BY id) FROM
		ti_src t
		WHERE ST_Intersects(t.geom, q.g)), '{}') AS ids
FROM fx_query q WHERE q.qid >= 100;

SELECT count(*) AS answers, count(*) FILTER (WHERE a.ids = t.ids) AS equal_brute_force
FROM ti_answer a JOIN ti_truth t USING (qid);

-- identical across placements: answers, nodes visited, leaf entries
SELECT i.structure, i.framework,
	   count(DISTINCT (s->'totals'->>'nodes_visited')) AS nodes_visited_variants,
	   -- (LB-Grid's deletes, which read no bucket, leave its count unvouched)
	   count(DISTINCT coalesce(s->>'entries', 'not vouched')) AS entries_variants
FROM ti_index i CROSS JOIN LATERAL festival.stats(i.name) s
GROUP BY 1, 2 ORDER BY 1, 2;

-- per-tier reads and device time add up; single never touches the fast tier
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE (t->>'tier_slow_pages_read')::bigint + (t->>'tier_fast_pages_read')::bigint
						= (t->>'pages_read')::bigint) AS reads_sum,
	   count(*) FILTER (WHERE (t->>'tier_slow_pages_written')::bigint + (t->>'tier_fast_pages_written')::bigint
						= (t->>'pages_written')::bigint) AS writes_sum,
	   count(*) FILTER (WHERE abs((t->>'tier_slow_device_seconds')::float8 + (t->>'tier_fast_device_seconds')::float8
						- (t->>'device_seconds')::float8) < 1e-6) AS time_sums,
	   count(*) FILTER (WHERE i.placement = 'single' AND (t->>'tier_fast_pages_read')::bigint = 0
						AND (t->>'tier_fast_pages_written')::bigint = 0) AS single_untouched
FROM ti_index i CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'totals' t) x;

-- every index checks clean (the map against both devices, the rules)
SELECT i.name, c.* FROM ti_index i CROSS JOIN LATERAL festival.check(i.name) c;

-- the placement after the flush, per placement
SELECT i.placement,
	   bool_and(p.fast_nodes = 0) AS none_fast,
	   bool_and(p.slow_pages = 0) AS all_fast,
	   bool_and(p.fast_nodes = p.inner_nodes AND p.fast_leaves = 0) AS exactly_inner_fast,
	   bool_and(p.fast_leaves > 0) AS some_leaves_fast
FROM ti_index i CROSS JOIN LATERAL (
	SELECT count(*) FILTER (WHERE tier = 'fast' AND level IS NOT NULL) AS fast_nodes,
		   count(*) FILTER (WHERE tier = 'slow') AS slow_pages,
		   count(*) FILTER (WHERE level > 0) AS inner_nodes,
		   count(*) FILTER (WHERE tier = 'fast' AND level = 0) AS fast_leaves
	FROM festival.tier_pages(i.name)) p
WHERE i.framework = 'none'
GROUP BY 1 ORDER BY 1;

-- hot promoted what the skewed window hits: a leaf holding (50 60) is fast
SELECT i.structure, i.placement,
	   (SELECT tier FROM festival.tier_pages(i.name) WHERE level = 0 ORDER BY accesses DESC, page LIMIT 1) AS most_read_leaf
FROM ti_index i WHERE i.framework = 'none' AND i.placement IN ('hot', 'level_hot')
ORDER BY 1, 2;

-- random moves as many pages as hot (same detector, random pages)
SELECT h.name,
	   (SELECT count(*) FROM festival.tier_pages(h.name) WHERE tier = 'fast' AND level IS NOT NULL)
	 = (SELECT count(*) FROM festival.tier_pages(r.name) WHERE tier = 'fast' AND level IS NOT NULL) AS same_count,
	   (SELECT count(*) FROM festival.tier_pages(h.name) WHERE tier = 'fast') > 0 AS some_fast
FROM ti_index h JOIN ti_index r ON r.name = replace(h.name, '_hot', '_random')
WHERE h.placement = 'hot' ORDER BY h.name;

-- and with one commit per build row: the same changes to the R*-tree and
-- xBR+-tree pairs (deletes free pages; a freed hot page leaves hot's fast
-- tier, and random then demotes one of its own)
SET festival.build_commit_rows = 1;
CREATE TABLE ti_row_src AS SELECT id, geom FROM fx_pts;
CREATE TABLE ti_row_index AS
SELECT format('ti_row_%s_%s', s, p) AS name, s AS structure, p AS placement,
	   jsonb_build_object('page_size', 1024, 'fast_device', 'ti_fast', 'placement', p, 'hot_selectivity', 1.0)
	   || CASE WHEN s = 'xbrtree' THEN '{"extent": [-10, -10, 310, 310]}'::jsonb ELSE '{}'::jsonb END AS options
FROM unnest(ARRAY['rstartree', 'xbrtree']) s, unnest(ARRAY['hot', 'random']) p;
SELECT count(*) FILTER (WHERE festival.create_index(name, structure, 'ti_slow', options, 'ti_row_src') > 0
						AND festival.build(name) > 0) AS built
FROM ti_row_index;
RESET festival.build_commit_rows;
DELETE FROM ti_row_src WHERE id IN (SELECT id FROM ti_gone);
INSERT INTO ti_row_src SELECT * FROM ti_new;
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT name FROM ti_row_index ORDER BY name LOOP
		PERFORM festival.delete(r.name, id, geom) FROM ti_gone ORDER BY id;
		PERFORM festival.insert(r.name, id, geom) FROM ti_new ORDER BY id;
		FOR i IN 1..4 LOOP
			PERFORM festival.query(r.name, ST_MakeEnvelope(20, 30, 80, 90));
		END LOOP;
		PERFORM festival.flush(r.name);
	END LOOP;
END $$;
SELECT h.name,
	   (SELECT count(*) FROM festival.tier_pages(h.name) WHERE tier = 'fast' AND level IS NOT NULL)
	 = (SELECT count(*) FROM festival.tier_pages(r.name) WHERE tier = 'fast' AND level IS NOT NULL) AS same_count
FROM ti_row_index h JOIN ti_row_index r ON r.name = replace(h.name, '_hot', '_random')
WHERE h.placement = 'hot' ORDER BY h.name;
SELECT i.name, c.* FROM ti_row_index i CROSS JOIN LATERAL festival.check(i.name) c;

-- the totals move into and out of the fast tier
SELECT i.placement, bool_and((s->'totals'->>'tier_promotions')::int > 0) AS promoted
FROM ti_index i CROSS JOIN LATERAL festival.stats(i.name) s
WHERE i.placement IN ('hot', 'level_hot', 'random') GROUP BY 1 ORDER BY 1;

-------------------------------------------------------------------------------
-- Alg. 9 by hand: pages 10, 11 at level 1 (roots), 20, 21 at level 0.
--  1: p10 F=1/1, t=0: W = 1 - 1 = 0; CMA(1) = 0; 0 > 0? no
--  2: p10 F=2/2, t=1, T=2: W = 1 - 1/2 = 0.5; CMA(1) = 0.25: promoted
--  3: p11 F=1/2, t=0: W = 0.5 - 1 = -0.5; CMA(1) = 0; no
--  4: p20 under p11: W = -0.5 + 1 - 1 = -0.5; CMA(0) = -0.5; parent not hot
--  5: p21 under p10: W = 0.5 + 1 - 1 = 0.5; CMA(0) = 0; promoted
-------------------------------------------------------------------------------
SELECT * FROM festival.tier_hot_simulate(ARRAY[10, 10, 11, 20, 21], ARRAY[1, 1, 1, 0, 0],
										 ARRAY[0, 0, 0, 11, 10], 1.0, 0);
-- s = 2.5 is stricter: step 2 (0.5 > 2.5 * 0.25 = 0.625?) is not promoted,
-- so step 5's parent is not hot
SELECT step, promoted, eligible FROM festival.tier_hot_simulate(ARRAY[10, 10, 11, 20, 21],
	ARRAY[1, 1, 1, 0, 0], ARRAY[0, 0, 0, 11, 10], 2.5, 0);
-- capacity 1: the hot set moves from p10 to p12
--  4: p12 F=2/2, t=3, T=4: W = 1 - 1/4 = 0.75 > CMA 0.1875, full: p10,
--     the least recently used hot page, is demoted
SELECT * FROM festival.tier_hot_simulate(ARRAY[10, 10, 12, 12], ARRAY[1, 1, 1, 1],
										 ARRAY[0, 0, 0, 0], 1.0, 1);

-------------------------------------------------------------------------------
-- Capacity and demotion on an index: two hot windows in turn.
-------------------------------------------------------------------------------
SELECT festival.create_index('ti_cap', 'rtree', 'ti_slow',
	'{"page_size": 1024, "fast_device": "ti_fast", "placement": "hot", "hot_selectivity": 1.0,
	  "fast_capacity": 4}', 'ti_src') > 0 AS created;
SELECT festival.build('ti_cap') > 0 AS built;
SELECT count(*) FROM (SELECT festival.query('ti_cap', ST_MakeEnvelope(0, 0, 40, 40)) FROM generate_series(1, 20)) q;
SELECT festival.flush('ti_cap');
CREATE TABLE ti_cap_first AS SELECT page FROM festival.tier_pages('ti_cap') WHERE tier = 'fast';
SELECT count(*) BETWEEN 1 AND 4 AS within_capacity FROM ti_cap_first;
SELECT count(*) FROM (SELECT festival.query('ti_cap', ST_MakeEnvelope(250, 250, 300, 300)) FROM generate_series(1, 40)) q;
SELECT festival.flush('ti_cap');
SELECT count(*) <= 4 AS within_capacity,
	   count(*) FILTER (WHERE page NOT IN (SELECT page FROM ti_cap_first)) > 0 AS hot_set_moved
FROM festival.tier_pages('ti_cap') WHERE tier = 'fast';
SELECT (s->'totals'->>'tier_demotions')::int > 0 AS demoted FROM festival.stats('ti_cap') s;
SELECT * FROM festival.check('ti_cap');

-- a failed migration write: demotions write to the slow device, whose
-- fault layer fails the first write with EIO; the query fails, nothing is
-- lost, and after the fault the index answers as brute force and is clean
SELECT festival.create_index('ti_fault', 'rtree', 'ti_slow',
	'{"page_size": 1024, "fast_device": "ti_fast", "placement": "hot", "hot_selectivity": 1.0,
	  "fast_capacity": 3}', 'ti_src') > 0 AS created;
SELECT festival.build('ti_fault') > 0 AS built;
SELECT count(*) FROM (SELECT festival.query('ti_fault', ST_MakeEnvelope(0, 0, 40, 40)) FROM generate_series(1, 10)) q;
SELECT festival.flush('ti_fault');
SELECT festival.inject_fault('ti_fault', 'write', 0, 'EIO');
DO $$
BEGIN
	PERFORM count(*) FROM (SELECT festival.query('ti_fault', ST_MakeEnvelope(250, 250, 300, 300))
						   FROM generate_series(1, 20)) q;
	RAISE WARNING 'no error';
EXCEPTION WHEN OTHERS THEN
	RAISE WARNING 'the migration write failed: %', SQLSTATE;
END $$;
SELECT festival.clear_fault('ti_fault');
SELECT (SELECT array_agg(id ORDER BY id) FROM festival.query('ti_fault', ST_MakeEnvelope(200, 200, 300, 300)))
	 = (SELECT array_agg(id ORDER BY id) FROM ti_src WHERE ST_Intersects(geom, ST_MakeEnvelope(200, 200, 300, 300)))
	AS equal_brute_force;
SELECT count(*) FROM (SELECT festival.query('ti_fault', ST_MakeEnvelope(250, 250, 300, 300)) FROM generate_series(1, 20)) q;
SELECT festival.flush('ti_fault');
SELECT (s->'totals'->>'tier_demotions')::int > 0 AS demoted_after_fault FROM festival.stats('ti_fault') s;
SELECT * FROM festival.check('ti_fault');

-- a failed promotion: the fast device's fault layer ("fast:write") fails
-- the first migration to the fast tier, which is the fast write buffer's
-- flush (the queries only flag the hot pages; the flush writes them); nothing
-- is lost, and afterwards the index answers as brute force, migrates and is
-- clean
SELECT festival.create_index('ti_ffault', 'rtree', 'ti_slow',
	'{"page_size": 1024, "fast_device": "ti_fast", "placement": "hot", "hot_selectivity": 1.0}',
	'ti_src') > 0 AS created;
SELECT festival.build('ti_ffault') > 0 AS built;
SELECT festival.flush('ti_ffault');
SELECT festival.inject_fault('ti_ffault', 'fast:write', 0, 'EIO');
DO $$
BEGIN
	PERFORM count(*) FROM (SELECT festival.query('ti_ffault', ST_MakeEnvelope(0, 0, 40, 40))
						   FROM generate_series(1, 10)) q;
	RAISE WARNING 'the queries wrote nothing to the fast tier';
	PERFORM festival.flush('ti_ffault');
	RAISE WARNING 'no error';
EXCEPTION WHEN OTHERS THEN
	RAISE WARNING 'the promotion write failed: %', SQLSTATE;
END $$;
SELECT festival.clear_fault('ti_ffault');
SELECT (SELECT array_agg(id ORDER BY id) FROM festival.query('ti_ffault', ST_MakeEnvelope(0, 0, 100, 100)))
	 = (SELECT array_agg(id ORDER BY id) FROM ti_src WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 100, 100)))
	AS equal_brute_force;
SELECT count(*) FROM (SELECT festival.query('ti_ffault', ST_MakeEnvelope(0, 0, 40, 40)) FROM generate_series(1, 10)) q;
SELECT festival.flush('ti_ffault');
SELECT count(*) > 0 AS fast_after_fault FROM festival.tier_pages('ti_ffault') WHERE tier = 'fast';
SELECT * FROM festival.check('ti_ffault');

-- capacity in bytes: 4 kB of 1 kB pages under level keeps 4 pages fast
SELECT festival.create_index('ti_cap_bytes', 'rtree', 'ti_slow',
	'{"page_size": 1024, "fast_device": "ti_fast", "placement": "all_fast", "fast_capacity": "4kB"}',
	'ti_src') > 0 AS created;
SELECT festival.build('ti_cap_bytes') > 0 AS built;
SELECT festival.flush('ti_cap_bytes');
SELECT count(*) AS fast_pages FROM festival.tier_pages('ti_cap_bytes') WHERE tier = 'fast';
SELECT * FROM festival.check('ti_cap_bytes');

-- a traced run: each page transfer with its tier; the trace agrees with
-- the run's per-tier counters, and under level the inner nodes come from
-- the fast tier, the leaves from the slow one
SELECT festival.begin_run('ti_trace', trace => true) > 0 AS began;
SELECT count(*) FROM festival.query('ti_rtree_none_level', ST_MakeEnvelope(0, 0, 300, 300));
SELECT festival.end_run() > 0 AS ended;
SELECT t.tier, t.level > 0 AS inner_node, count(*) > 0 AS transfers
FROM festival.io_trace t JOIN festival.run r USING (run_id) WHERE r.label = 'ti_trace'
GROUP BY 1, 2 ORDER BY 1, 2;
SELECT (SELECT count(*) FROM festival.io_trace t WHERE t.run_id = r.run_id AND t.tier = 'fast' AND t.access = 'read')
	   = (r.metrics->>'tier_fast_pages_read')::bigint AS fast_reads_agree,
	   (SELECT count(*) FROM festival.io_trace t WHERE t.run_id = r.run_id AND t.tier = 'slow' AND t.access = 'read')
	   = (r.metrics->>'tier_slow_pages_read')::bigint AS slow_reads_agree
FROM festival.run r WHERE r.label = 'ti_trace';

-- reopened: the map is read back and verified, answers unchanged
SELECT festival.close('ti_rtree_none_level');
SELECT count(*) FILTER (WHERE tier = 'fast') > 0 AS fast_after_reopen
FROM festival.tier_pages('ti_rtree_none_level');
SELECT * FROM festival.check('ti_rtree_none_level');

-------------------------------------------------------------------------------
-- Durable weights (docs/tiers.md): the same workload, run whole on one
-- index (_a), split by festival.close() on a second (_b) and by a new
-- session on a third (_c), ends with the same pages on the same tiers,
-- the same weights, accesses and hot flags, and the same promotions and
-- demotions.  hot with a capacity (LRU demotion), also over a cache,
-- level_hot with a capacity, random (the generator and the balance
-- continue).  The moves are counted after a flush: a promotion migrates
-- when the fast write buffer flushes, which a close does after the count.
CREATE TABLE ti_dur (name text PRIMARY KEY, structure text, options jsonb);
INSERT INTO ti_dur
SELECT format('ti_dur_%s_%s', c.tag, v), c.structure, c.options
FROM (VALUES
	('hot', 'rtree', '{"placement": "hot", "fast_capacity": 6}'::jsonb),
	('hotcache', 'rtree', '{"placement": "hot", "fast_capacity": 6, "cache": "lru", "cache_size": 8192}'::jsonb),
	('lhot', 'rstartree', '{"placement": "level_hot", "fast_capacity": 12}'::jsonb),
	('random', 'xbrtree', '{"placement": "random", "extent": [-10, -10, 310, 310]}'::jsonb)) c(tag, structure, options),
	unnest(ARRAY['a', 'b', 'c']) v;
UPDATE ti_dur SET options = options || '{"page_size": 1024, "fast_device": "ti_fast", "hot_selectivity": 1.0}';
-- each its own source table, which the inserts below change too
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT name FROM ti_dur LOOP
		EXECUTE format('CREATE TABLE %I AS SELECT id, geom FROM fx_pts', r.name || '_src');
	END LOOP;
END $$;
SELECT count(*) FILTER (WHERE festival.create_index(name, structure, 'ti_slow', options, name || '_src') > 0
						AND festival.build(name) > 0) AS built
FROM ti_dur;
-- the workload's two halves: windows drifting over the space, inserts
CREATE FUNCTION ti_dur_part(ix text, part int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..30 LOOP
		PERFORM festival.query(ix, ST_MakeEnvelope(x, x, x + 40, x + 40))
		FROM (SELECT ((part * 30 + i) * 7) % 250 AS x) w;
		IF i % 5 = 0 THEN
			EXECUTE format('INSERT INTO %I VALUES ($1, $2)', ix || '_src')
				USING 20000 + part * 100 + i, ST_MakePoint((i * 31) % 290, (i * 17 + part * 50) % 290);
			PERFORM festival.insert(ix, 20000 + part * 100 + i, ST_MakePoint((i * 31) % 290, (i * 17 + part * 50) % 290));
		END IF;
	END LOOP;
END $$;
CREATE TABLE ti_dur_moves (name text, promotions bigint, demotions bigint);
CREATE FUNCTION ti_dur_note(ix text) RETURNS void LANGUAGE sql AS $$
	INSERT INTO ti_dur_moves SELECT ix, (t->>'tier_promotions')::bigint, (t->>'tier_demotions')::bigint
	FROM (SELECT festival.stats(ix)->'totals' t) s $$;
-- _a whole (flushed where the others close), _b split by a close
SELECT count(*) FROM (
	SELECT ti_dur_part(name, 1), festival.flush(name), ti_dur_part(name, 2), festival.flush(name), ti_dur_note(name)
	FROM ti_dur WHERE name LIKE '%\_a' ORDER BY name) x;
SELECT count(*) FROM (
	SELECT ti_dur_part(name, 1), festival.flush(name), ti_dur_note(name), festival.close(name)
	FROM ti_dur WHERE name LIKE '%\_b' ORDER BY name) x;
SELECT count(*) FROM (
	SELECT ti_dur_part(name, 2), festival.flush(name), ti_dur_note(name)
	FROM ti_dur WHERE name LIKE '%\_b' ORDER BY name) x;
-- every page alike: tier, level, weight (bit for bit), accesses, hot.
-- _a against _b here, while _a is still open with the weights it keeps in
-- memory (after the new session, _a is reopened as well)
CREATE FUNCTION ti_dur_differing(a text, b text) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM (
		(SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages(a)
		 EXCEPT ALL SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages(b))
		UNION ALL
		(SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages(b)
		 EXCEPT ALL SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages(a))) d $$;
SELECT name, (SELECT count(*) FROM festival.tier_pages(name)) AS pages,
	   (SELECT count(*) FROM festival.tier_pages(name) WHERE accesses > 0) AS with_history,
	   ti_dur_differing(name, replace(name, '_a', '_b')) AS differing_from_b
FROM ti_dur WHERE name LIKE '%\_a' ORDER BY name;
-- _c split by the end of this session (which flushes every open index)
SELECT count(*) FROM (SELECT ti_dur_part(name, 1), festival.flush(name), ti_dur_note(name)
	FROM ti_dur WHERE name LIKE '%\_c' ORDER BY name) x;
\c
SET client_min_messages = warning;
SET festival.progress_interval = 0;
-- the old session may still be flushing the indices it leaves open
SET festival.open_timeout = '120s';
SELECT count(*) FROM (
	SELECT ti_dur_part(name, 2), festival.flush(name), ti_dur_note(name)
	FROM ti_dur WHERE name LIKE '%\_c' ORDER BY name) x;
SELECT name, ti_dur_differing(name, replace(name, '_a', '_c')) AS differing_from_c
FROM ti_dur WHERE name LIKE '%\_a' ORDER BY name;
-- as many moves, and some of them (the halves add up for _b and _c).  Not
-- over a cache: a promoted page moves when the cache writes it back, and
-- a reopen empties the cache, so a page promoted and demoted again before
-- its write-back may move on one index and not on the other
SELECT regexp_replace(name, '_[abc]$', '') AS config,
	   count(DISTINCT (sums.p, sums.d)) AS variants, min(sums.p) > 0 AS promoted
FROM (SELECT name, sum(promotions) AS p, sum(demotions) AS d FROM ti_dur_moves GROUP BY name) sums
WHERE name NOT LIKE 'ti_dur_hotcache%'
GROUP BY 1 ORDER BY 1;
SELECT d.name, c.* FROM ti_dur d CROSS JOIN LATERAL festival.check(d.name) c;

-- A weights write that fails (the fault layer's "tier_write" target, in
-- the middle of the temporary file): the flush fails, nothing acknowledged
-- is lost, the index reloads with the weights of the last flush (the
-- weights file in place is untouched) and the map it was using, checks
-- clean, and the next flush writes the weights again.
CREATE TABLE ti_wf_src AS SELECT id, geom FROM fx_pts;
SELECT festival.create_index('ti_wf', 'rtree', 'ti_slow',
	'{"page_size": 1024, "fast_device": "ti_fast", "placement": "hot", "hot_selectivity": 1.0}', 'ti_wf_src') > 0 AS created;
SELECT festival.build('ti_wf') > 0 AS built;
SELECT count(*) FROM (SELECT festival.query('ti_wf', ST_MakeEnvelope(0, 0, 60, 60)) FROM generate_series(1, 5)) q;
SELECT festival.flush('ti_wf');
CREATE TABLE ti_wf_saved AS SELECT page, weight, accesses FROM festival.tier_pages('ti_wf');
CREATE FUNCTION ti_try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE sql;
	RETURN 'ok';
EXCEPTION WHEN others THEN
	RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '"[^"]*"', '"..."', 'g');
END $$;
SELECT e, ti_try(format($q$SELECT festival.inject_fault('ti_wf', 'tier_write', 0, %L)$q$, e)) AS armed,
	   ti_try($q$SELECT count(*) FROM (SELECT festival.query('ti_wf', ST_MakeEnvelope(100, 100, 160, 160)) FROM generate_series(1, 5)) q$q$) AS queried,
	   ti_try($q$SELECT festival.flush('ti_wf')$q$) AS flushed,
	   (SELECT count(*) FROM (SELECT page, weight, accesses FROM festival.tier_pages('ti_wf')
							  EXCEPT ALL SELECT * FROM ti_wf_saved) d) AS differing_from_last_flush,
	   (SELECT array_agg(id ORDER BY id) FROM festival.query('ti_wf', ST_MakeEnvelope(100, 100, 160, 160)))
	 = (SELECT array_agg(id ORDER BY id) FROM ti_wf_src WHERE ST_Intersects(geom, ST_MakeEnvelope(100, 100, 160, 160))) AS equal_brute_force,
	   (SELECT count(*) FROM festival.check('ti_wf')) AS problems
FROM unnest(ARRAY['ENOSPC', 'EIO']) e;
SELECT ti_try($q$SELECT festival.flush('ti_wf')$q$) AS flushed_again,
	   (festival.fault_status('ti_wf')->>'tier_write')::int > 0 AS weights_written;
SELECT ti_try($q$SELECT festival.close('ti_wf')$q$) AS closed,
	   (SELECT count(*) FROM (SELECT page, weight, accesses FROM festival.tier_pages('ti_wf')
							  EXCEPT ALL SELECT * FROM ti_wf_saved) d) AS differing_after_reopen;
SELECT * FROM festival.check('ti_wf');

-- A map write that fails (the "tier_map_write" target, half-way through the
-- temporary file): the map write that marks it in use before the first
-- page write of a session (after 0: the insert statement fails) and the
-- flush's map write (after 1: the insert is acknowledged, the flush fails).
-- The map in place is the one written before, and the index reloads from
-- it: every acknowledged object answers (each found by its own point),
-- check() is clean, and the next statements write the map again.
CREATE TABLE ti_mf_src AS SELECT id, geom FROM fx_pts WHERE id <= 300;
SELECT festival.create_index('ti_mf', 'rtree', 'ti_slow',
	'{"page_size": 1024, "fast_device": "ti_fast", "placement": "level", "fast_min_level": 1}', 'ti_mf_src') > 0 AS created;
SELECT festival.build('ti_mf') > 0 AS built;
SELECT festival.close('ti_mf');
CREATE TABLE ti_mf_new AS SELECT id + 100000 AS id, geom FROM fx_pts WHERE id > 300;
CREATE FUNCTION ti_mf_step(after int, e text, first_id int) RETURNS TABLE (armed text, inserted text, flushed text) LANGUAGE plpgsql AS $$
BEGIN
	armed := ti_try(format('SELECT festival.inject_fault(%L, %L, %s, %L)', 'ti_mf', 'tier_map_write', after, e));
	-- 50 objects in one statement: acknowledged together, or not at all
	inserted := ti_try(format('SELECT count(festival.insert(%L, id, geom)) FROM ti_mf_new WHERE id BETWEEN %s AND %s',
							  'ti_mf', first_id, first_id + 49));
	IF inserted = 'ok' THEN
		INSERT INTO ti_mf_src SELECT * FROM ti_mf_new WHERE id BETWEEN first_id AND first_id + 49;
	END IF;
	flushed := ti_try($q$SELECT festival.flush('ti_mf')$q$);
	PERFORM festival.clear_fault('ti_mf');
	RETURN NEXT;
END $$;
SELECT s.after, s.e, f.*,
	   (SELECT count(*) FROM festival.query('ti_mf', ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6))) = (SELECT count(*) FROM ti_mf_src) AS all_answer,
	   (SELECT count(*) FROM ti_mf_src s2 WHERE NOT EXISTS (
			SELECT FROM festival.query('ti_mf', s2.geom) q WHERE q.id = s2.id)) AS missing,
	   (SELECT count(*) FROM festival.check('ti_mf')) AS problems
FROM (VALUES (1, 0, 'ENOSPC'), (2, 1, 'EIO'), (3, 1, 'ENOSPC'), (4, 0, 'EIO')) s(step, after, e)
	 CROSS JOIN LATERAL ti_mf_step(s.after, s.e, 100300 + s.step * 50) f
ORDER BY s.step;
SELECT (festival.fault_status('ti_mf')->>'tier_map_write')::int > 0 AS map_written,
	   ti_try($q$SELECT festival.close('ti_mf')$q$) AS closed;
SELECT * FROM festival.check('ti_mf');

-------------------------------------------------------------------------------
-- The files beside the index file: drop_index removes the map, the weights
-- and the fast tier's file; a map or weights left over from an earlier
-- index of the name (DROP EXTENSION leaves every file; copies stand for
-- them here) are removed when the name is used again, tiered or not, and
-- by the drop of an index that is not tiered.
-------------------------------------------------------------------------------
CREATE FUNCTION ti_file_exists(path text) RETURNS boolean LANGUAGE sql AS $$
	SELECT (pg_stat_file(path, true)).size IS NOT NULL
$$;
SELECT festival.create_index('ti_files', 'rtree', 'ti_slow',
	'{"page_size": 1024, "fast_device": "ti_fast", "placement": "hot", "hot_selectivity": 1.0}', 'ti_src') > 0 AS created;
SELECT festival.build('ti_files') > 0 AS built;
SELECT count(*) > 0 AS answered FROM (SELECT festival.query('ti_files', ST_MakeEnvelope(0, 0, 40, 40))
									  FROM generate_series(1, 5)) q;
SELECT festival.close('ti_files');
CREATE TABLE ti_files_paths AS
	SELECT fixture.index_file('ti_files') AS path,
		   fixture.festival_dir() || '/' || (SELECT directory FROM festival.device WHERE name = 'ti_fast')
		   || '/' || (SELECT file_name FROM festival.index WHERE name = 'ti_files') AS fast;
SELECT ti_file_exists(path || '.tiermap') AS map, ti_file_exists(path || '.tierhot') AS weights,
	   ti_file_exists(fast) AS fast_file
FROM ti_files_paths;
SELECT fixture.sh(format('cp ''%1$s.tiermap'' ''%1$s.tiermap.keep'' && cp ''%1$s.tierhot'' ''%1$s.tierhot.keep''', path))
FROM ti_files_paths;
SELECT festival.drop_index('ti_files');
SELECT ti_file_exists(path) AS file, ti_file_exists(path || '.tiermap') AS map,
	   ti_file_exists(path || '.tierhot') AS weights, ti_file_exists(fast) AS fast_file
FROM ti_files_paths;
-- leftovers, then an index of the name without tiers: its creation removes them
SELECT fixture.sh(format('cp ''%1$s.tiermap.keep'' ''%1$s.tiermap'' && cp ''%1$s.tierhot.keep'' ''%1$s.tierhot''', path))
FROM ti_files_paths;
SELECT festival.create_index('ti_files', 'rtree', 'ti_slow', '{"page_size": 1024}', 'ti_src') > 0 AS created;
SELECT ti_file_exists(path || '.tiermap') AS map, ti_file_exists(path || '.tierhot') AS weights
FROM ti_files_paths;
-- leftovers that came after its creation: its drop removes them
SELECT fixture.sh(format('cp ''%1$s.tiermap.keep'' ''%1$s.tiermap'' && cp ''%1$s.tierhot.keep'' ''%1$s.tierhot''', path))
FROM ti_files_paths;
SELECT festival.drop_index('ti_files');
SELECT ti_file_exists(path) AS file, ti_file_exists(path || '.tiermap') AS map,
	   ti_file_exists(path || '.tierhot') AS weights
FROM ti_files_paths;
SELECT fixture.sh(format('rm ''%1$s.tiermap.keep'' ''%1$s.tierhot.keep''', path)) FROM ti_files_paths;

-------------------------------------------------------------------------------
-- Bad input.
-------------------------------------------------------------------------------
\set VERBOSITY default
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "no_such_device", "placement": "level"}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_slow", "placement": "level"}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_fast", "fast_capacity": 0}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_fast", "fast_capacity": "100 parsecs"}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_fast", "fast_capacity": "1kB"}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"placement": "level"}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_fast", "placement": "random", "fast_capacity": 10}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_fast", "placement": "sideways"}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_fast", "hot_selectivity": 3}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_fast", "fast_min_level": 0}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": "ti_mem", "placement": "level"}');
SELECT festival.create_index('ti_bad', 'rtree', 'ti_slow', '{"fast_device": ["ti_fast"]}');
SELECT festival.create_index('ti_plain', 'rtree', 'ti_slow') > 0 AS created;
SELECT * FROM festival.tier_pages('ti_plain');
SELECT festival.inject_fault('ti_plain', 'fast:write', 0, 'EIO');
SELECT festival.inject_fault('ti_plain', 'fast:erase', 0, 'EIO');
SELECT * FROM festival.tier_hot_simulate(ARRAY[1], ARRAY[1, 2], ARRAY[0], 1.0, 0);
SELECT * FROM festival.tier_hot_simulate(ARRAY[1], ARRAY[1], ARRAY[0], 0.5, 0);
-- a device that is some index's fast tier cannot be dropped
SELECT festival.drop_device('ti_fast');
\set VERBOSITY terse
