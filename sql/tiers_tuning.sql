--
-- tiers_tuning: H-Grid's selectivity s tuned to the workload (option
-- hot_selectivity_tuning auto; beyond the thesis: Fevgas 2019, §4.5, leaves
-- tuning s to future work; docs/tiers.md, src/tier/tier_hot.c), the s the
-- rule chooses checked against a hand computation.
--
-- The rule: every 1000 accesses of the detector's clock (an epoch) s moves
-- one step of 0.25 within [1.0, 2.5]: up when the fast tier has a capacity
-- and promotions demoted hot pages in the epoch, down when there is room
-- (no capacity, or fewer hot pages than floor(3 * capacity / 4)), else it
-- stays.  festival.stats(index)->'hot' shows s, the clock, the hot pages
-- and the epoch's demotions so far.
--
-- The detector (Alg. 9): W = W(parent) + F - (T - t) / T, hot when the
-- parent is hot (or there is none) and W > s * CMA of the level's W.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('tt_slow', io => 'buffered', profile => 'nvme_intel_p3700');
SELECT festival.create_device('tt_fast', io => 'buffered', profile => 'optane_memory_32gb');

-- n window queries of one index, each a separate call
CREATE FUNCTION tt_queries(idx text, n int, win geometry) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM generate_series(1, n) i,
		LATERAL festival.query(idx, ST_Translate(win, 0 * i, 0))
$$;
CREATE FUNCTION tt_hot(idx text) RETURNS jsonb LANGUAGE sql AS $$
	SELECT festival.stats(idx)->'hot'
$$;

-------------------------------------------------------------------------------
-- Part A: no capacity.  An R-tree whose only node is its root leaf (page
-- 2): an insert or a query is one access.  Started at s = 2.5, s falls by
-- 0.25 at the end of every epoch: 2.25 at clock 1000, ..., 1.0 at clock
-- 6000, and stays there (the bound).  The root (no parent, always
-- eligible) has F = 1 and, accessed at every tick, W(T) = 1 - 1/T (W(1) =
-- 0); the CMA after T accesses is 1 - H(T)/T (H the harmonic number), so
-- W / CMA = (1 - 1/T) / (1 - H(T)/T) is above 1 but far below 1.25 for T
-- in the thousands (at T = 6000, H = 9.28: 1.0014).  The page becomes hot
-- only once s = 1.0, at access 6001, the first after the epoch that ended
-- at 6000 (access 6000 itself was tested with s = 1.25).
-------------------------------------------------------------------------------
SELECT festival.create_index('tt_one', 'rtree', 'tt_slow',
	'{"page_size": 1024, "fast_device": "tt_fast", "placement": "hot", "hot_selectivity": 2.5,
	  "hot_selectivity_tuning": "auto"}') > 0 AS created;
SELECT festival.insert('tt_one', 1, ST_MakePoint(1, 1));
SELECT tt_hot('tt_one');
SELECT tt_queries('tt_one', 998, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
SELECT tt_hot('tt_one');
SELECT tt_queries('tt_one', 1, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
-- clock 1000: 2.25
SELECT tt_hot('tt_one');
SELECT tt_queries('tt_one', 4999, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
-- clock 5999: 1.25, still not hot
SELECT tt_hot('tt_one');
SELECT tt_queries('tt_one', 1, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
-- clock 6000: 1.0, not hot yet
SELECT tt_hot('tt_one');
SELECT page, tier, accesses, hot FROM festival.tier_pages('tt_one') WHERE page = 2;
SELECT tt_queries('tt_one', 1, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
-- clock 6001: hot (flagged; it moves at the fast buffer's flush)
SELECT tt_hot('tt_one');
SELECT page, tier, accesses, hot FROM festival.tier_pages('tt_one') WHERE page = 2;
SELECT tt_queries('tt_one', 2000, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
-- clock 8001: the bound holds s at 1.0
SELECT tt_hot('tt_one');
SELECT festival.flush('tt_one');
SELECT page, tier, hot FROM festival.tier_pages('tt_one') WHERE page = 2;
SELECT * FROM festival.check('tt_one');

-- the same accesses with hot_selectivity_tuning fixed (the thesis): s stays
-- 2.5 and the page never becomes hot
SELECT festival.create_index('tt_fixed_one', 'rtree', 'tt_slow',
	'{"page_size": 1024, "fast_device": "tt_fast", "placement": "hot", "hot_selectivity": 2.5,
	  "hot_selectivity_tuning": "fixed"}') > 0 AS created;
SELECT festival.insert('tt_fixed_one', 1, ST_MakePoint(1, 1));
SELECT tt_queries('tt_fixed_one', 8000, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
SELECT tt_hot('tt_fixed_one');
SELECT page, tier, hot FROM festival.tier_pages('tt_fixed_one') WHERE page = 2;

-------------------------------------------------------------------------------
-- Part B: the hysteresis band.  The same one-page tree with fast_capacity
-- 1, started at s = 2.0: floor(3 * 1 / 4) = 0 hot pages is the room
-- threshold, so s never falls; one page can never demote another, so it
-- never rises: 2.0 after three epochs (and the page, W / CMA < 2, is never
-- hot).
-------------------------------------------------------------------------------
SELECT festival.create_index('tt_band', 'rtree', 'tt_slow',
	'{"page_size": 1024, "fast_device": "tt_fast", "placement": "hot", "hot_selectivity": 2.0,
	  "fast_capacity": 1, "hot_selectivity_tuning": "auto"}') > 0 AS created;
SELECT festival.insert('tt_band', 1, ST_MakePoint(1, 1));
SELECT tt_queries('tt_band', 3000, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
SELECT tt_hot('tt_band');
SELECT * FROM festival.check('tt_band');

-------------------------------------------------------------------------------
-- Part C: a full fast tier that thrashes.  A grid file over [0, 100]^2 with
-- 60 points at x = 10 and x = 90 (1 kB pages): its resident root, one
-- sub-directory S (page 3, level 1, the detector's top) and two buckets,
-- A (page 2, x = 10) and page 5; fast_capacity 1; s starts at 1.0.  After
-- the build the weights file is removed, so the detector starts from a
-- clean history (clock 0, the one fast page hot with no accesses: A).  A
-- point search at x = 10 reads S, then A: the accesses alternate S, A.
-- By hand: access 1 (S): W = 1 - 1 = 0, CMA 0, not hot.  Access 2 (A, hot):
-- refreshed.  Access 3 (S): W = 1 - 2/3 = 1/3 > CMA 1/6: promoted; the
-- tier is full, so the least recently used hot page that is no hot page's
-- parent, A, is demoted.  Access 4 (A, its parent S hot): W = 1/3 + 1 -
-- 2/4 = 5/6 > CMA 5/12: promoted, S demoted.  From then on each access
-- promotes the page just demoted and demotes the other (W / CMA stays
-- above 1 on both levels): the epoch that ends at clock 1000 demoted, so
-- auto raises s to 1.25, where both ratios (1 + H/n over about 500
-- accesses per level, about 1.01) are below s: no promotion, no demotion,
-- s stays 1.25 (full, no demotion: the band).  With s fixed at 1.0 every
-- access of an epoch demotes: 500 demotions by clock 1500 and again by
-- 2500.  A third index, auto too, is closed at clock 1500 and reopened:
-- the weights file keeps s, so it goes on as the first (were s lost, it
-- would restart at 1.0 and thrash again); the fixed one, closed then too,
-- still shows its epoch's 500 demotions after the reopen.
-------------------------------------------------------------------------------
SELECT festival.create_index(name, 'gridfile', 'tt_slow',
	format('{"page_size": 1024, "extent": [0, 0, 100, 100], "fast_device": "tt_fast",
	         "placement": "hot", "hot_selectivity": 1.0, "fast_capacity": 1,
	         "hot_selectivity_tuning": "%s"}', tuning)::jsonb) > 0 AS created
FROM (VALUES ('tt_auto', 'auto'), ('tt_fixed', 'fixed'), ('tt_split', 'auto')) v(name, tuning)
ORDER BY name;
CREATE TABLE tt_names AS SELECT unnest(ARRAY['tt_auto', 'tt_fixed', 'tt_split']) AS name;
SELECT count(festival.insert(name, i, ST_MakePoint(CASE WHEN i % 2 = 0 THEN 10 ELSE 90 END, i))) AS inserted
FROM tt_names, generate_series(1, 60) i;
CREATE TABLE tt_paths AS SELECT name, festival.stats(name)->>'file' AS path FROM tt_names;
SELECT count(festival.close(name)) FROM tt_names;
SELECT fixture.sh(format('rm ''%s.tierhot''', path)) FROM tt_paths;
SELECT name, page, tier, level, accesses, hot FROM tt_names, LATERAL festival.tier_pages(name)
WHERE level IS NOT NULL AND level < 2 ORDER BY name, page;
SELECT name, tt_hot(name) FROM tt_names ORDER BY name;
-- two searches: accesses 1-4 as computed above
SELECT name, tt_queries(name, 2, ST_MakeEnvelope(9, 9, 11, 11)) AS answers FROM tt_names ORDER BY name;
SELECT name, page, accesses, hot, round(weight::numeric, 4) AS weight FROM tt_names,
	LATERAL festival.tier_pages(name) WHERE level IS NOT NULL AND level < 2 ORDER BY name, page;
SELECT name, tt_hot(name) FROM tt_names ORDER BY name;
-- to clock 1000, the end of the first epoch
SELECT name, tt_queries(name, 498, ST_MakeEnvelope(9, 9, 11, 11)) AS answers FROM tt_names ORDER BY name;
SELECT name, tt_hot(name) FROM tt_names ORDER BY name;
-- to clock 1500; tt_split and tt_fixed are closed and reopened
SELECT name, tt_queries(name, 250, ST_MakeEnvelope(9, 9, 11, 11)) AS answers FROM tt_names ORDER BY name;
SELECT festival.close('tt_split'), festival.close('tt_fixed');
SELECT name, tt_hot(name) FROM tt_names ORDER BY name;
-- to clock 2500, half-way through the third epoch
SELECT name, tt_queries(name, 500, ST_MakeEnvelope(9, 9, 11, 11)) AS answers FROM tt_names ORDER BY name;
SELECT name, tt_hot(name) FROM tt_names ORDER BY name;
SELECT count(festival.flush(name)) FROM tt_names;
SELECT name, c.* FROM tt_names, LATERAL festival.check(name) c;
-- brute force: every point answers, and the windows at x = 10 and x = 90
SELECT name, array_agg(q.id ORDER BY q.id) = (SELECT array_agg(i::bigint ORDER BY i) FROM generate_series(1, 60) i
											  WHERE i % 2 = 0 AND i BETWEEN 20 AND 40) AS left_equal
FROM tt_names, LATERAL festival.query(name, ST_MakeEnvelope(5, 20, 15, 40)) q GROUP BY name ORDER BY name;
SELECT name, array_agg(q.id ORDER BY q.id) = (SELECT array_agg(i::bigint ORDER BY i) FROM generate_series(1, 60) i
											  WHERE i % 2 = 1) AS right_equal
FROM tt_names, LATERAL festival.query(name, ST_MakeEnvelope(85, 0, 95, 100)) q GROUP BY name ORDER BY name;
SELECT name, (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(0, 0, 100, 100))) = 60 AS all_answered
FROM tt_names ORDER BY name;

-------------------------------------------------------------------------------
-- Part D: s and the epoch's demotions are written with the weights (at a
-- flush or close); a weights write that fails (the fault layer's
-- "tier_write" target, half-way through the temporary file) fails the
-- flush, and the index reloads with the weights of the last flush: the s
-- and clock saved there.  The one-page tree of Part A, from s = 2.5: the
-- flush at clock 1500 saves s = 2.25; 2000 more queries move it to 1.75
-- (epochs ending at 2000 and 3000); the failed flush leaves 2.25 and clock
-- 1500, and the next flush writes again.
-------------------------------------------------------------------------------
SELECT festival.create_index('tt_wf', 'rtree', 'tt_slow',
	'{"page_size": 1024, "fast_device": "tt_fast", "placement": "hot", "hot_selectivity": 2.5,
	  "hot_selectivity_tuning": "auto"}') > 0 AS created;
SELECT festival.insert('tt_wf', 1, ST_MakePoint(1, 1));
SELECT tt_queries('tt_wf', 1499, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
SELECT festival.flush('tt_wf');
SELECT tt_hot('tt_wf');
SELECT tt_queries('tt_wf', 2000, ST_MakeEnvelope(0, 0, 5, 5)) AS answers;
SELECT tt_hot('tt_wf');
SELECT festival.inject_fault('tt_wf', 'tier_write', 0, 'EIO') IS NOT NULL AS armed;
DO $$ BEGIN PERFORM festival.flush('tt_wf'); RAISE WARNING 'flushed';
EXCEPTION WHEN others THEN RAISE WARNING 'flush failed: %', SQLSTATE; END $$;
SELECT tt_hot('tt_wf');
SELECT festival.flush('tt_wf') AS flushed_again;
SELECT festival.close('tt_wf');
SELECT tt_hot('tt_wf');
SELECT array_agg(id) AS answers FROM festival.query('tt_wf', ST_MakeEnvelope(0, 0, 5, 5));
SELECT * FROM festival.check('tt_wf');

-- bad input: the option is the detecting placements', fixed or auto
SELECT festival.create_index('tt_bad', 'rtree', 'tt_slow',
	'{"fast_device": "tt_fast", "placement": "level", "hot_selectivity_tuning": "auto"}');
SELECT festival.create_index('tt_bad', 'rtree', 'tt_slow',
	'{"fast_device": "tt_fast", "placement": "hot", "hot_selectivity_tuning": "sometimes"}');
SELECT festival.create_index('tt_bad', 'rtree', 'tt_slow',
	'{"hot_selectivity_tuning": "auto"}');

SELECT count(festival.drop_index(name)) FROM (SELECT name FROM tt_names
	UNION ALL VALUES ('tt_one'), ('tt_fixed_one'), ('tt_band'), ('tt_wf')) n;
SELECT festival.drop_device('tt_slow'), festival.drop_device('tt_fast');
