--
-- dwithin: festival.query(index, g, 'dwithin', distance => d) against
-- PostGIS brute force,
--	SELECT id FROM src WHERE ST_DWithin(geom, g, d)
-- with geometries that have arcs linearised as festival indexes and
-- refines them (dw_lin).  Distances include 0 and distances at which
-- objects lie exactly (grid neighbours at 10, diagonal ones at sqrt(200),
-- 3-4-5 neighbours at 50).
--
-- Configurations: the list dw_config below (add rows to test another
-- structure).
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('dw_dev', io => 'buffered');

CREATE TABLE dw_config (name text PRIMARY KEY, structure text NOT NULL, options jsonb NOT NULL,
						src regclass NOT NULL);
INSERT INTO dw_config VALUES
	('dw_mix_quad', 'rtree', '{"split": "quadratic", "page_size": 1024}', 'fx_src'),
	('dw_mix_lin_fast', 'rtree', '{"split": "linear", "page_size": 1024, "framework": "fast",
		"buffer_size": 16384}', 'fx_src'),
	('dw_mix_quad_efind', 'rtree', '{"split": "quadratic", "page_size": 2048,
		"framework": "efind", "buffer_size": 16384}', 'fx_src'),
	('dw_pts_lin', 'rtree', '{"split": "linear", "page_size": 1024}', 'fx_pts'),
	('dw_pts_quad_fast', 'rtree', '{"split": "quadratic", "page_size": 1024,
		"framework": "fast", "buffer_size": 16384}', 'fx_pts'),
	('dw_pts_lin_efind', 'rtree', '{"split": "linear", "page_size": 2048,
		"framework": "efind", "buffer_size": 16384}', 'fx_pts');

SELECT name, festival.create_index(name, structure, 'dw_dev', options, src) > 0 AS created,
	   festival.build(name) AS built,
	   (festival.stats(name)->>'height')::int > 1 AS has_internal_levels
FROM dw_config ORDER BY name;

CREATE TABLE dw_distance (d float8 PRIMARY KEY);
INSERT INTO dw_distance VALUES (0), (2.5), (10), (sqrt(200::float8)), (50);

-- objects exactly at the distance exist (grid points around grid points)
SELECT d, count(*) AS exactly_at_d
FROM dw_distance, fx_pts, fx_query q
WHERE q.qid = 103 AND ST_Distance(geom, q.g) = d
GROUP BY d ORDER BY d;

CREATE TABLE dw_brute AS
	SELECT q.qid, t.d, s.id
	FROM fx_query q CROSS JOIN dw_distance t
	JOIN fx_src s ON ST_DWithin(fixture.lin(s.geom), fixture.lin(q.g), t.d)
	WHERE q.qid < 100
	UNION ALL
	SELECT q.qid, t.d, s.id
	FROM fx_query q CROSS JOIN dw_distance t
	JOIN fx_pts s ON ST_DWithin(s.geom, q.g, t.d)
	WHERE q.qid >= 100;

-------------------------------------------------------------------------------
-- dw_compare(idx, src, refine): every query of fx_query for the source and
-- every distance; one row per index: cases, brute-force answers, festival's,
-- missing (brute force EXCEPT ALL festival) and extra (the reverse).  With
-- refinement missing = extra = 0; without, missing = 0 (a superset).
-------------------------------------------------------------------------------
CREATE FUNCTION dw_compare(idx text, src regclass, refine boolean)
RETURNS TABLE (cases bigint, brute bigint, festival bigint, missing bigint, extra bigint)
LANGUAGE sql AS $$
	WITH c AS (SELECT q.qid, q.g, t.d FROM fx_query q CROSS JOIN dw_distance t
			   WHERE (q.qid < 100) = (src = 'fx_src'::regclass)),
		 f AS (SELECT c.qid, c.d, r.id FROM c
			   CROSS JOIN LATERAL festival.query(idx, c.g, 'dwithin', refine, c.d) r),
		 b AS (SELECT b.* FROM dw_brute b JOIN c USING (qid, d))
	SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM b), (SELECT count(*) FROM f),
		   (SELECT count(*) FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM f) m),
		   (SELECT count(*) FROM (SELECT * FROM f EXCEPT ALL SELECT * FROM b) e)
$$;

SELECT c.name, r.refine, t.*
FROM dw_config c CROSS JOIN (VALUES (true), (false)) r(refine)
CROSS JOIN LATERAL dw_compare(c.name, c.src, r.refine) t
ORDER BY c.name, r.refine DESC;

-- per distance for one mixed index: every distance has answers
SELECT t.d, count(b.id) AS brute,
	   (SELECT count(*) FROM fx_query q CROSS JOIN LATERAL
			festival.query('dw_mix_quad', q.g, 'dwithin', distance => t.d) WHERE q.qid < 100) AS festival
FROM dw_distance t LEFT JOIN dw_brute b ON b.d = t.d AND b.qid < 100
GROUP BY t.d ORDER BY t.d;

-- distance 0 is intersects
SELECT count(*) AS cases_differing
FROM fx_query q
WHERE q.qid < 100
  AND ARRAY(SELECT id FROM festival.query('dw_mix_quad', q.g, 'dwithin', distance => 0) ORDER BY 1)
	  <> ARRAY(SELECT id FROM festival.query('dw_mix_quad', q.g, 'intersects') ORDER BY 1);

-- points against a point query are decided from coordinates: no refinement
SELECT festival.close('dw_pts_lin') AS closed;
SELECT count(*) FROM festival.query('dw_pts_lin', 'POINT(40 40)', 'dwithin', distance => 10);
SELECT count(*) FROM fx_pts WHERE ST_DWithin(geom, 'POINT(40 40)', 10);
SELECT festival.stats('dw_pts_lin')->'totals'->'filter_exact' AS filter_exact,
	   festival.stats('dw_pts_lin')->'totals'->'refined' AS refined;

-------------------------------------------------------------------------------
-- Errors
-------------------------------------------------------------------------------
SELECT * FROM festival.query('dw_mix_quad', 'POINT(0 0)', 'dwithin');
SELECT * FROM festival.query('dw_mix_quad', 'POINT(0 0)', 'dwithin', distance => NULL);
SELECT * FROM festival.query('dw_mix_quad', 'POINT(0 0)', 'dwithin', distance => -1);
SELECT * FROM festival.query('dw_mix_quad', 'POINT(0 0)', 'intersects', distance => 1);
\set VERBOSITY terse
SELECT * FROM festival.query('dw_mix_quad', 'POINT(0 0)', 'dwithin', distance => 'NaN');
SELECT * FROM festival.query('dw_mix_quad', 'POINT(0 0)', 'dwithin', distance => 'Infinity');
SELECT * FROM festival.query('dw_mix_quad', 'POINT(0 0)', distance => 1);
\set VERBOSITY default
-- existing calls without a distance still work
SELECT count(*) FROM festival.query('dw_mix_quad', 'POINT(50 50)');
SELECT count(*) FROM festival.query('dw_mix_quad', 'POINT(50 50)', 'touches', false);

SELECT festival.drop_index(name) FROM dw_config ORDER BY name;
SELECT festival.drop_device('dw_dev');
DROP TABLE dw_config, dw_distance, dw_brute;
DROP FUNCTION dw_compare(text, regclass, boolean);
RESET client_min_messages;
