--
-- knn: festival.knn(index, g, k) against PostGIS brute force.
--
-- The brute force is
--	SELECT id, ST_Distance(geom, g) FROM src ORDER BY 2, id LIMIT k
-- with geometries that have arcs linearised as festival indexes and
-- measures them (kn_lin; ST_Distance measures arcs exactly).  festival
-- must return the same rows in the same order, with the same distances
-- bit for bit (compared with =), for k = 1, 10, 100 and k above the size
-- of the index, on data full of ties: duplicate points, points on a circle
-- around a query point, a segment and a polygon at the same distance.
--
-- Configurations: the list kn_config below.  To test another structure,
-- add rows (name, structure, options, source); everything after the list
-- runs over all of them.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('knn_dev', io => 'buffered');

-------------------------------------------------------------------------------
-- Data.  kn_mix: the fixture's mixed geometries plus ties around (500 500):
-- 12 points at distance exactly 5 (3-4-5 triangles), 3 copies of (500 500)
-- itself, a segment and a square whose nearest parts are at distance 5.
-- kn_pts: the fixture's points (copies included) plus the same tie points.
-------------------------------------------------------------------------------
CREATE TABLE kn_mix (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO kn_mix SELECT id, geom FROM fx_src;
CREATE TABLE kn_ties (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO kn_ties
SELECT 9001 + row_number() OVER (ORDER BY dx, dy), ST_MakePoint(500 + dx, 500 + dy)
FROM (VALUES (5, 0), (-5, 0), (0, 5), (0, -5), (3, 4), (-3, 4), (3, -4), (-3, -4),
			 (4, 3), (-4, 3), (4, -3), (-4, -3)) d(dx, dy);
INSERT INTO kn_ties VALUES
	(9101, 'POINT(500 500)'), (9102, 'POINT(500 500)'), (9103, 'POINT(500 500)');
INSERT INTO kn_mix SELECT * FROM kn_ties;
INSERT INTO kn_mix VALUES
	(9201, 'LINESTRING(490 505, 510 505)'),
	(9202, 'POLYGON((505 490, 515 490, 515 510, 505 510, 505 490))');

CREATE TABLE kn_pts (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO kn_pts SELECT id, geom FROM fx_pts;
INSERT INTO kn_pts SELECT * FROM kn_ties;

-- query geometries: qid < 100 for kn_mix, >= 100 for kn_pts
CREATE TABLE kn_query (qid int PRIMARY KEY, label text NOT NULL, g geometry NOT NULL);
INSERT INTO kn_query VALUES
	(1, 'centre of the ties', 'POINT(500 500)'),
	(2, 'grid point (neighbours at 10 in four directions)', 'POINT(50 50)'),
	(3, 'point inside a cell', 'POINT(253.5 253.5)'),
	(4, 'point far away', 'POINT(-1000 2000)'),
	(5, 'rectangle', ST_MakeEnvelope(12, 12, 38, 27)),
	(6, 'line', 'LINESTRING(0 5, 200 5)'),
	(7, 'polygon with a hole', 'POLYGON((100 0, 200 0, 200 100, 100 100, 100 0), (130 30, 170 30, 170 70, 130 70, 130 30))'),
	(8, 'arc', 'CIRCULARSTRING(50 60, 70 80, 90 60)'),
	(9, 'near the curved objects', 'POINT(75 62)'),
	(101, 'centre of the ties', 'POINT(500 500)'),
	(102, 'grid point with a copy', 'POINT(0 0)'),
	(103, 'off-grid point (four neighbours at the same distance)', 'POINT(45 45)'),
	(104, 'point off everything', 'POINT(41.5 40)'),
	(105, 'rectangle', ST_MakeEnvelope(21, 31, 79, 89)),
	(106, 'line', 'LINESTRING(0 70, 150 75)'),
	(107, 'triangle', 'POLYGON((0 0, 100 0, 0 100, 0 0))');

-- the ties are real: distances equal bit for bit
SELECT count(*) AS at_five, count(DISTINCT ST_Distance(geom, 'POINT(500 500)')) AS distinct_distances
FROM kn_mix WHERE ST_Distance(geom, 'POINT(500 500)') = 5;

-------------------------------------------------------------------------------
-- The configurations
-------------------------------------------------------------------------------
CREATE TABLE kn_config (name text PRIMARY KEY, structure text NOT NULL, options jsonb NOT NULL,
						src regclass NOT NULL);
INSERT INTO kn_config VALUES
	('kn_mix_quad', 'rtree', '{"split": "quadratic", "page_size": 1024}', 'kn_mix'),
	('kn_mix_lin', 'rtree', '{"split": "linear", "page_size": 2048}', 'kn_mix'),
	('kn_mix_lin_fast', 'rtree', '{"split": "linear", "page_size": 1024, "framework": "fast",
		"buffer_size": 16384}', 'kn_mix'),
	('kn_mix_quad_efind', 'rtree', '{"split": "quadratic", "page_size": 1024,
		"framework": "efind", "buffer_size": 16384}', 'kn_mix'),
	('kn_pts_lin', 'rtree', '{"split": "linear", "page_size": 1024}', 'kn_pts'),
	('kn_pts_quad_fast', 'rtree', '{"split": "quadratic", "page_size": 1024,
		"framework": "fast", "buffer_size": 16384}', 'kn_pts'),
	('kn_pts_lin_efind', 'rtree', '{"split": "linear", "page_size": 2048,
		"framework": "efind", "buffer_size": 16384}', 'kn_pts');

SELECT name, festival.create_index(name, structure, 'knn_dev', options, src) > 0 AS created,
	   festival.build(name) AS built,
	   (festival.stats(name)->>'height')::int > 1 AS has_internal_levels,
	   festival.stats(name)->'all_points' AS all_points
FROM kn_config ORDER BY name;

-------------------------------------------------------------------------------
-- kn_compare(idx, src, qids, ks): for every query and k, festival.knn's rows
-- (in the order returned) against the brute force's; one row per index:
--   cases	   (query, k) pairs
--   rows	   brute-force rows
--   festival  festival's rows
--   wrong	   positions where id or distance differ (must be 0)
-------------------------------------------------------------------------------
CREATE FUNCTION kn_compare(idx text, src regclass, qids int[], ks int[])
RETURNS TABLE (cases bigint, brute bigint, festival bigint, wrong bigint)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'WITH c AS (SELECT q.qid, q.g, k FROM kn_query q, unnest($2) k WHERE q.qid = ANY ($1)),
			  b AS (SELECT c.qid, c.k, b.n, b.id, b.d FROM c CROSS JOIN LATERAL
					  (SELECT row_number() OVER (ORDER BY d, id) AS n, id, d
					   FROM (SELECT s.id, ST_Distance(fixture.lin(s.geom), fixture.lin(c.g)) AS d
							 FROM %s s ORDER BY 2, 1 LIMIT c.k) x) b),
			  f AS (SELECT c.qid, c.k, f.n, f.id, f.distance AS d FROM c CROSS JOIN LATERAL
					  festival.knn($3, c.g, c.k) WITH ORDINALITY f(id, distance, n))
		 SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM b), (SELECT count(*) FROM f),
				(SELECT count(*) FROM b FULL JOIN f USING (qid, k, n)
				 WHERE b.id IS DISTINCT FROM f.id OR b.d IS DISTINCT FROM f.d)', src)
	USING qids, ks, idx;
END
$$;

CREATE FUNCTION kn_compare_all(label text)
RETURNS TABLE (step text, name text, cases bigint, brute bigint, festival bigint, wrong bigint)
LANGUAGE sql AS $$
	SELECT label, c.name, r.*
	FROM kn_config c
	CROSS JOIN LATERAL kn_compare(c.name, c.src,
		ARRAY(SELECT qid FROM kn_query WHERE (qid < 100) = (c.src = 'kn_mix'::regclass)),
		ARRAY[1, 10, 100, 5000]) r
	ORDER BY c.name
$$;

SELECT * FROM kn_compare_all('after build');

-- by hand: the centre of the ties, k = 10.  The three copies at distance 0,
-- then the 12 points, the segment and the square at 5 of which the
-- smallest ids win; the same in every index
SELECT id, distance FROM festival.knn('kn_mix_quad', 'POINT(500 500)', 10);
SELECT id, ST_Distance(geom, 'POINT(500 500)') FROM kn_mix ORDER BY 2, 1 LIMIT 10;
SELECT c.name, array_agg(k.id ORDER BY k.id) AS ids
FROM kn_config c CROSS JOIN LATERAL festival.knn(c.name, 'POINT(500 500)', 10) k
GROUP BY c.name ORDER BY c.name;

-- the curved objects: festival measures their linearisation, ST_Distance the
-- arcs themselves; the values differ slightly (here by less than 0.001)
CREATE TABLE kn_curve AS SELECT id, geom FROM fx_src WHERE ST_HasArc(geom);
SELECT festival.create_index('kn_curve_ix', 'rtree', 'knn_dev', '{}', 'kn_curve') > 0 AS created,
	   festival.build('kn_curve_ix') AS built;
SELECT f.id, round(f.distance::numeric, 6) AS festival,
	   round(ST_Distance(s.geom, 'POINT(70 71)')::numeric, 6) AS on_the_arcs,
	   f.distance = ST_Distance(fixture.lin(s.geom), 'POINT(70 71)') AS equals_linearised,
	   abs(f.distance - ST_Distance(s.geom, 'POINT(70 71)')) < 1e-3 AS close_to_arcs
FROM festival.knn('kn_curve_ix', 'POINT(70 71)', 10) WITH ORDINALITY f JOIN kn_curve s USING (id)
ORDER BY f.ordinality;
SELECT festival.drop_index('kn_curve_ix');
DROP TABLE kn_curve;

-- points against a point query need no refinement (filter_exact counts
-- them); other queries on points and every query on mixed data refine
SELECT festival.close('kn_pts_lin') AS closed, festival.close('kn_mix_quad') AS closed;
SELECT count(*) FROM festival.knn('kn_pts_lin', 'POINT(45 45)', 10);
SELECT count(*) FROM festival.knn('kn_mix_quad', 'POINT(45 45)', 10);
SELECT name, festival.stats(name)->'totals'->'knn_queries' AS knn_queries,
	   festival.stats(name)->'totals'->'filter_exact' AS filter_exact,
	   (festival.stats(name)->'totals'->>'refined')::int > 0 AS refined,
	   (festival.stats(name)->'totals'->>'nodes_visited')::int
		 < (festival.stats(name)->>'pages')::int AS visited_fewer_nodes_than_pages
FROM unnest(ARRAY['kn_pts_lin', 'kn_mix_quad']) name;

-------------------------------------------------------------------------------
-- Modifications: inserts (more ties), deletes, updates, then a reopen.  The
-- source changes with the index, as an application keeps them in step.
-------------------------------------------------------------------------------
CREATE FUNCTION kn_insert(tbl regclass, newid bigint, g geometry) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE c record;
BEGIN
	EXECUTE format('INSERT INTO %s VALUES ($1, $2)', tbl) USING newid, g;
	FOR c IN SELECT name FROM kn_config WHERE src = tbl LOOP
		PERFORM festival.insert(c.name, newid, g);
	END LOOP;
END
$$;
CREATE FUNCTION kn_delete(tbl regclass, oldid bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE c record; g geometry;
BEGIN
	EXECUTE format('DELETE FROM %s WHERE id = $1 RETURNING geom', tbl) INTO g USING oldid;
	FOR c IN SELECT name FROM kn_config WHERE src = tbl LOOP
		IF NOT festival.delete(c.name, oldid, g) THEN
			RAISE EXCEPTION 'entry % missing from %', oldid, c.name;
		END IF;
	END LOOP;
END
$$;
CREATE FUNCTION kn_update(tbl regclass, oldid bigint, g geometry) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE c record; old geometry;
BEGIN
	EXECUTE format('SELECT geom FROM %s WHERE id = $1', tbl) INTO old USING oldid;
	EXECUTE format('UPDATE %s SET geom = $2 WHERE id = $1', tbl) USING oldid, g;
	FOR c IN SELECT name FROM kn_config WHERE src = tbl LOOP
		IF NOT festival.update(c.name, oldid, old, oldid, g) THEN
			RAISE EXCEPTION 'entry % missing from %', oldid, c.name;
		END IF;
	END LOOP;
END
$$;

-- inserts: a second ring of ties at distance 10 (6-8-10) and more copies
SELECT count(kn_insert(t.tbl, 9300 + i + 100 * (t.tbl = 'kn_pts'::regclass)::int,
					   ST_MakePoint(500 + dx, 500 + dy)))
FROM unnest(ARRAY['kn_mix', 'kn_pts']::regclass[]) t(tbl),
	 LATERAL (SELECT row_number() OVER () AS i, dx, dy
			  FROM (VALUES (10, 0), (-10, 0), (0, 10), (0, -10), (6, 8), (-6, 8), (6, -8),
						   (-8, -6), (0, 0), (0, 0), (50, 50), (45, 45)) d(dx, dy)) p;
SELECT count(kn_insert('kn_mix', 9500 + i,
					   ST_MakeLine(ST_MakePoint(40 + i, 60), ST_MakePoint(60 + i, 30))))
FROM generate_series(1, 200) i;
-- deletes: copies of the centre, some tie points, grid points, lines
SELECT count(kn_delete('kn_mix', id)) FROM kn_mix
WHERE id IN (9101, 9003, 9007) OR id BETWEEN 2001 AND 2100 OR id BETWEEN 100 AND 300
   OR id BETWEEN 9500 AND 9600;
SELECT count(kn_delete('kn_pts', id)) FROM kn_pts
WHERE id IN (9101, 9003, 9007) OR id BETWEEN 100 AND 400;
-- updates: objects move next to the query points, others away
SELECT count(kn_update('kn_mix', id, ST_Translate(geom, 3, 4))) FROM kn_mix
WHERE id BETWEEN 1001 AND 1100 OR id IN (9001, 9002, 9201);
SELECT count(kn_update('kn_mix', id, ST_MakePoint(500 - 3, 500 - 4))) FROM kn_mix
WHERE id BETWEEN 400 AND 420;
SELECT count(kn_update('kn_pts', id, ST_MakePoint(500 + 4, 500 - 3))) FROM kn_pts
WHERE id BETWEEN 500 AND 520;
SELECT count(kn_update('kn_pts', id, ST_Translate(geom, 0.5, 0))) FROM kn_pts
WHERE id BETWEEN 600 AND 700;

SELECT name, (SELECT count(*) FROM festival.check(name)) AS problems,
	   (festival.stats(name)->>'entries')::bigint AS entries
FROM kn_config ORDER BY name;
SELECT * FROM kn_compare_all('after modifications');

-- reopen: close (flushing FAST and eFIND), then read from the files again
SELECT count(*) FILTER (WHERE festival.close(name)) AS closed FROM kn_config;
SELECT * FROM kn_compare_all('after reopen');

-------------------------------------------------------------------------------
-- Errors
-------------------------------------------------------------------------------
\set VERBOSITY default
SELECT * FROM festival.knn('kn_mix_quad', 'POINT(0 0)', 0);
SELECT * FROM festival.knn('kn_mix_quad', 'POINT(0 0)', -3);
\set VERBOSITY terse
SELECT * FROM festival.knn('kn_mix_quad', 'POINT(0 0)', NULL);
SELECT * FROM festival.knn('kn_mix_quad', NULL, 1);
SELECT * FROM festival.knn('kn_mix_quad', 'POINT EMPTY', 1);
SELECT * FROM festival.knn('kn_mix_quad', 'SRID=4326;POINT(0 0)', 1);
SELECT * FROM festival.knn('kn_nothing', 'POINT(0 0)', 1);
SELECT * FROM festival.knn(NULL, 'POINT(0 0)', 1);
\set VERBOSITY default

-- an empty index has no neighbours
SELECT festival.create_index('kn_empty', 'rtree', 'knn_dev', '{}', 'kn_mix') > 0 AS created;
SELECT count(*) AS neighbours FROM festival.knn('kn_empty', 'POINT(0 0)', 5);

SELECT festival.drop_index(name) FROM kn_config ORDER BY name;
SELECT festival.drop_index('kn_empty');
SELECT festival.drop_device('knn_dev');
DROP TABLE kn_config, kn_query, kn_mix, kn_pts, kn_ties;
DROP FUNCTION kn_compare(text, regclass, int[], int[]), kn_compare_all(text),
	kn_insert(regclass, bigint, geometry), kn_delete(regclass, bigint),
	kn_update(regclass, bigint, geometry);
RESET client_min_messages;
