--
-- predicates: festival.query for every predicate against PostGIS brute force.
--
-- For each predicate P and query geometry g the brute force is
--	SELECT id FROM src WHERE ST_P(geom, g)
-- (fx_brute in the fixture).  With refine => true festival must return
-- exactly that multiset (missing = extra = 0); with refine => false it
-- returns the MBR filter's candidates, a superset (missing = 0).
--
-- Indices over the mixed table fx_src, with both splits and three page sizes,
-- and over the points-only table fx_pts, where point and rectangle queries
-- are answered from coordinates without refinement (src/geom/predicate.h).
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('pred_dev', io => 'buffered');

-- the query geometries (qid < 100 for fx_src, >= 100 for fx_pts)
SELECT qid, label, GeometryType(g) AS type FROM fx_query ORDER BY qid;

-------------------------------------------------------------------------------
-- Mixed geometries
-------------------------------------------------------------------------------
SELECT festival.create_index('pr_quad4k', 'rtree', 'pred_dev', '{}', 'fx_src') > 0 AS created;
SELECT festival.create_index('pr_lin1k', 'rtree', 'pred_dev',
	'{"split": "linear", "page_size": 1024}', 'fx_src') > 0 AS created;
SELECT festival.create_index('pr_quad1k', 'rtree', 'pred_dev',
	'{"split": "quadratic", "page_size": 1024, "min_fill": 30}', 'fx_src') > 0 AS created;
SELECT festival.create_index('pr_lin8k', 'rtree', 'pred_dev',
	'{"split": "linear", "page_size": 8192, "max_fill": 50}', 'fx_src') > 0 AS created;

-- every row of fx_src is indexed (2524); the trees have internal levels
SELECT name, festival.build(name) AS built,
	   (festival.stats(name)->>'height')::int > 1 AS has_internal_levels,
	   (festival.stats(name)->'totals'->>'splits_leaf')::int > 0 AS leaves_split,
	   festival.stats(name)->'all_points' AS all_points
FROM unnest(ARRAY['pr_quad4k', 'pr_lin1k', 'pr_quad1k', 'pr_lin8k']) name;

CREATE TEMP TABLE pr_brute AS
	SELECT * FROM fx_brute('fx_src', ARRAY(SELECT qid FROM fx_query WHERE qid < 100));

-- festival's answers with and without refinement, compared case by case
CREATE TEMP TABLE pr_cmp AS
	SELECT i.name, r.refine, t.*
	FROM unnest(ARRAY['pr_quad4k', 'pr_lin1k', 'pr_quad1k', 'pr_lin8k']) i(name)
	CROSS JOIN (VALUES (true), (false)) r(refine)
	CROSS JOIN LATERAL fx_compare(i.name, 'pr_brute',
								  ARRAY(SELECT qid FROM fx_query WHERE qid < 100), r.refine) t;

-- Every case for pr_quad4k.  brute = festival, missing = extra = 0 with
-- refinement; the filter (refine => false) misses nothing (filter_missing =
-- 0) and for disjoint returns every entry.
SELECT t.pred, t.qid, t.brute, t.festival, t.missing, t.extra,
	   f.festival AS filter, f.missing AS filter_missing
FROM pr_cmp t
JOIN pr_cmp f ON f.name = t.name AND f.pred = t.pred AND f.qid = t.qid AND NOT f.refine
JOIN fx_predicate p ON p.pred = t.pred
WHERE t.name = 'pr_quad4k' AND t.refine
ORDER BY p.ord, t.qid;

-- The other trees, summed per predicate: the same answers (no case with a
-- mismatch), and the same filter candidates (the filter depends on the
-- entries' MBRs only, not on the tree).
SELECT t.name, t.pred, count(*) AS cases,
	   count(*) FILTER (WHERE t.brute > 0) AS nonempty_cases,
	   sum(t.brute) AS brute, sum(t.festival) AS festival,
	   count(*) FILTER (WHERE t.missing + t.extra > 0) AS cases_with_mismatch,
	   sum(f.festival) AS filter, sum(f.missing) AS filter_missing
FROM pr_cmp t
JOIN pr_cmp f ON f.name = t.name AND f.pred = t.pred AND f.qid = t.qid AND NOT f.refine
JOIN fx_predicate p ON p.pred = t.pred
WHERE t.name <> 'pr_quad4k' AND t.refine
GROUP BY t.name, p.ord, t.pred
ORDER BY t.name, p.ord;

-- predicate names are case-insensitive; refinement is exact (the diamond
-- qid 15 has the MBR of a rectangle but is not one)
SELECT count(*) AS answers FROM festival.query('pr_quad4k',
	(SELECT g FROM fx_query WHERE qid = 15), 'INTERSECTS');
SELECT count(*) AS brute FROM fx_src
WHERE ST_Intersects(geom, (SELECT g FROM fx_query WHERE qid = 15));

-- unknown predicates are refused
\set VERBOSITY terse
SELECT * FROM festival.query('pr_quad4k', 'POINT(1 1)', 'crosses');
\set VERBOSITY default

-------------------------------------------------------------------------------
-- Points only: point and rectangle queries skip refinement, so the
-- boundary rules come from predicate_eval_point.  Queries 101, 106, 107,
-- 108, 109 and 116 have edges passing exactly through indexed points: such
-- points touch the rectangle and are covered by it, but are not within it.
-------------------------------------------------------------------------------
SELECT festival.create_index('pp_lin1k', 'rtree', 'pred_dev',
	'{"split": "linear", "page_size": 1024}', 'fx_pts') > 0 AS created;
SELECT festival.create_index('pp_quad2k', 'rtree', 'pred_dev',
	'{"split": "quadratic", "page_size": 2048}', 'fx_pts') > 0 AS created;
SELECT name, festival.build(name) AS built,
	   (festival.stats(name)->>'height')::int > 1 AS has_internal_levels,
	   festival.stats(name)->'all_points' AS all_points
FROM unnest(ARRAY['pp_lin1k', 'pp_quad2k']) name;

CREATE TEMP TABLE pp_brute AS
	SELECT * FROM fx_brute('fx_pts', ARRAY(SELECT qid FROM fx_query WHERE qid >= 100));

-- boundary cases by hand: rectangle 101 is (20 30, 80 90); its edges hold
-- 26 grid points (plus copies), all touching, covered, not within
SELECT count(*) FILTER (WHERE ST_Touches(geom, g)) AS touches,
	   count(*) FILTER (WHERE ST_CoveredBy(geom, g)) AS coveredby,
	   count(*) FILTER (WHERE ST_Within(geom, g)) AS within,
	   count(*) FILTER (WHERE ST_Touches(geom, g) AND ST_Within(geom, g)) AS both
FROM fx_pts, (SELECT g FROM fx_query WHERE qid = 101) q;
SELECT (SELECT count(*) FROM festival.query('pp_lin1k', g, 'touches')) AS touches,
	   (SELECT count(*) FROM festival.query('pp_lin1k', g, 'coveredby')) AS coveredby,
	   (SELECT count(*) FROM festival.query('pp_lin1k', g, 'within')) AS within
FROM fx_query WHERE qid = 101;

CREATE TEMP TABLE pp_cmp AS
	SELECT i.name, r.refine, t.*
	FROM unnest(ARRAY['pp_lin1k', 'pp_quad2k']) i(name)
	CROSS JOIN (VALUES (true), (false)) r(refine)
	CROSS JOIN LATERAL fx_compare(i.name, 'pp_brute',
								  ARRAY(SELECT qid FROM fx_query WHERE qid >= 100), r.refine) t;

-- every case for pp_lin1k, with refinement and filter only
SELECT t.pred, t.qid, t.brute, t.festival, t.missing, t.extra,
	   f.festival AS filter, f.missing AS filter_missing
FROM pp_cmp t
JOIN pp_cmp f ON f.name = t.name AND f.pred = t.pred AND f.qid = t.qid AND NOT f.refine
JOIN fx_predicate p ON p.pred = t.pred
WHERE t.name = 'pp_lin1k' AND t.refine
ORDER BY p.ord, t.qid;

-- pp_quad2k, summed per predicate: no case with a mismatch
SELECT t.pred, count(*) AS cases, count(*) FILTER (WHERE t.brute > 0) AS nonempty_cases,
	   sum(t.brute) AS brute, sum(t.festival) AS festival,
	   count(*) FILTER (WHERE t.missing + t.extra > 0) AS cases_with_mismatch,
	   sum(f.missing) AS filter_missing
FROM pp_cmp t
JOIN pp_cmp f ON f.name = t.name AND f.pred = t.pred AND f.qid = t.qid AND NOT f.refine
JOIN fx_predicate p ON p.pred = t.pred
WHERE t.name = 'pp_quad2k' AND t.refine
GROUP BY p.ord, t.pred
ORDER BY p.ord;

-- the exact shortcut did the work: most candidates were accepted without
-- refinement
SELECT (festival.stats('pp_lin1k')->'totals'->>'filter_exact')::bigint > 0 AS exact_used,
	   (festival.stats('pp_lin1k')->'totals'->>'refined')::bigint > 0 AS refined_too;

-------------------------------------------------------------------------------
-- More candidates than one refinement batch (4096 ids per fetch)
-------------------------------------------------------------------------------
CREATE TABLE pr_big (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO pr_big
SELECT i, CASE WHEN i % 2 = 0 THEN ST_MakePoint(i % 100, i / 100)
			   ELSE ST_MakeEnvelope(i % 100, i / 100, i % 100 + 0.5, i / 100 + 0.5) END
FROM generate_series(1, 10000) i;
SELECT festival.create_index('pr_big', 'rtree', 'pred_dev', '{"page_size": 8192}', 'pr_big') > 0 AS created;
SELECT festival.build('pr_big') AS built;
-- 6440 candidates for intersects: refined in two batches
SELECT p.pred,
	   (SELECT count(*) FROM pr_big WHERE fx_pred(p.pred, geom, g)) AS brute,
	   (SELECT count(*) FROM festival.query('pr_big', g, p.pred)) AS festival,
	   (SELECT count(*) FROM festival.query('pr_big', g, p.pred, false)) AS filter,
	   (SELECT count(*) FROM (SELECT id FROM pr_big WHERE fx_pred(p.pred, geom, g)
							  EXCEPT ALL
							  SELECT id FROM festival.query('pr_big', g, p.pred)) d) AS missing,
	   (SELECT count(*) FROM (SELECT id FROM festival.query('pr_big', g, p.pred)
							  EXCEPT ALL
							  SELECT id FROM pr_big WHERE fx_pred(p.pred, geom, g)) d) AS extra
FROM fx_predicate p, (SELECT ST_MakeEnvelope(10.25, 10.25, 90.25, 90.25) AS g) q
WHERE p.pred IN ('intersects', 'within', 'touches', 'disjoint')
ORDER BY p.ord;

-------------------------------------------------------------------------------
-- The same id and geometry twice in an index.  festival.insert keeps
-- duplicates; a query with refinement still answers like the brute force
-- over the source, where each id is one row: every id at most once.
-------------------------------------------------------------------------------
SELECT name, count(*) FILTER (WHERE festival.insert(name, id, geom)) AS inserted_again
FROM unnest(ARRAY['pr_quad4k', 'pr_lin1k']) name
CROSS JOIN fx_src
WHERE id IN (1, 1001, 1305, 2002, 3001, 4210, 5001, 7001)
GROUP BY name ORDER BY name;
SELECT name, count(*) FILTER (WHERE festival.insert(name, id, geom)) AS inserted_again
FROM unnest(ARRAY['pp_lin1k', 'pp_quad2k']) name
CROSS JOIN fx_pts
WHERE id IN (1, 45, 500, 2001, 3001)
GROUP BY name ORDER BY name;

-- missing and extra must stay 0 for every predicate
CREATE TEMP TABLE dup_cmp AS
	SELECT i.name, t.*
	FROM unnest(ARRAY['pr_quad4k', 'pr_lin1k']) i(name)
	CROSS JOIN LATERAL fx_compare(i.name, 'pr_brute',
								  ARRAY(SELECT qid FROM fx_query WHERE qid < 100)) t
	UNION ALL
	SELECT i.name, t.*
	FROM unnest(ARRAY['pp_lin1k', 'pp_quad2k']) i(name)
	CROSS JOIN LATERAL fx_compare(i.name, 'pp_brute',
								  ARRAY(SELECT qid FROM fx_query WHERE qid >= 100)) t;
SELECT t.name, t.pred, sum(t.brute) AS brute, sum(t.festival) AS festival,
	   sum(t.missing) AS missing, sum(t.extra) AS extra
FROM dup_cmp t JOIN fx_predicate p ON p.pred = t.pred
GROUP BY t.name, p.ord, t.pred
ORDER BY t.name, p.ord;

-- for example: fx_pts objects 1 and 2001 answered from coordinates, and
-- fx_src objects 1 and 1001 accepted by the disjoint filter, once each
SELECT id, count(*) AS answers
FROM festival.query('pp_lin1k', ST_MakeEnvelope(-1, -1, 1, 1))
GROUP BY id ORDER BY id;
SELECT id, count(*) AS answers
FROM festival.query('pr_quad4k', ST_MakeEnvelope(1000, 1000, 1010, 1010), 'disjoint')
WHERE id IN (1, 2, 1001, 1002)
GROUP BY id ORDER BY id;

-- the filter's candidates are ids too, each once
SELECT id, count(*) AS candidates
FROM festival.query('pr_quad4k', ST_MakeEnvelope(-1, -1, 1, 1), 'intersects', false)
WHERE id = 1 GROUP BY id;

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT festival.drop_index(name)
FROM unnest(ARRAY['pr_quad4k', 'pr_lin1k', 'pr_quad1k', 'pr_lin8k', 'pp_lin1k', 'pp_quad2k', 'pr_big']) name;
SELECT festival.drop_device('pred_dev');
DROP TABLE pr_brute, pp_brute, pr_cmp, pp_cmp, dup_cmp, pr_big;
RESET festival.progress_interval;
RESET client_min_messages;
