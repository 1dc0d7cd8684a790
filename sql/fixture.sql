--
-- fixture: tables and functions shared by the festival regression suites.
--
-- Every later file of the suite reads these tables and calls these
-- functions; each one creates and drops its own devices and indices, so
-- that any suite runs alone after this one (make installcheck
-- REGRESS="fixture knn").  All data is generated with
-- generate_series arithmetic (no random()), in SRID 0.
--
SET client_min_messages = warning;

-- the helper functions in schema fixture (lin, nodes, entries, knn_wrong, window_wrong,
-- extent_wrong, batch_wrong, verify_indices, and the pgTAP files' error_matches and page
-- forging), from their one source; not echoed, so that this output does not
-- repeat them
\set ECHO none
\i sql/fixture_helpers.sql
\set ECHO all

-------------------------------------------------------------------------------
-- fx_pred(pred, a, b): ST_<pred>(a, b), the brute-force side of every
-- comparison.  Argument order as in festival.query: a is the indexed object,
-- b the query geometry.
-------------------------------------------------------------------------------
CREATE FUNCTION fx_pred(pred text, a geometry, b geometry) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE pred
		WHEN 'intersects' THEN ST_Intersects(a, b)
		WHEN 'contains' THEN ST_Contains(a, b)
		WHEN 'within' THEN ST_Within(a, b)
		WHEN 'covers' THEN ST_Covers(a, b)
		WHEN 'coveredby' THEN ST_CoveredBy(a, b)
		WHEN 'equals' THEN ST_Equals(a, b)
		WHEN 'touches' THEN ST_Touches(a, b)
		WHEN 'overlaps' THEN ST_Overlaps(a, b)
		WHEN 'disjoint' THEN ST_Disjoint(a, b)
	END
$$;

CREATE TABLE fx_predicate (pred text PRIMARY KEY, ord int NOT NULL);
INSERT INTO fx_predicate VALUES
	('intersects', 1), ('contains', 2), ('within', 3), ('covers', 4),
	('coveredby', 5), ('equals', 6), ('touches', 7), ('overlaps', 8),
	('disjoint', 9);

-------------------------------------------------------------------------------
-- fx_brute(src, qids): brute force with PostGIS, one row (pred, qid, id) per
-- answer of SELECT id FROM src WHERE ST_<pred>(geom, g) for every predicate
-- and every query geometry g of fx_query whose qid is in qids.  The query
-- geometry is the outer side (OFFSET 0 keeps the subquery from being
-- flattened), so PostGIS sees one g repeated, as in the brute-force query.
-- (PostGIS prepares whichever argument repeats; with the indexed objects
-- repeated instead, GEOS 3.11's prepared-line test misses the point of
-- query 21 that lies on line 2047, and brute force would be wrong.)
-------------------------------------------------------------------------------
CREATE FUNCTION fx_brute(src regclass, qids int[])
RETURNS TABLE (pred text, qid int, id bigint)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT p.pred, q.qid, b.id
		 FROM fx_predicate p CROSS JOIN fx_query q
		 CROSS JOIN LATERAL (SELECT s.id::bigint AS id FROM %s s
							 WHERE fx_pred(p.pred, s.geom, q.g) OFFSET 0) b
		 WHERE q.qid = ANY ($1)', src)
	USING qids;
END
$$;

-------------------------------------------------------------------------------
-- fx_compare(idx, brute_table, qids, refine): festival.query(idx, g, pred,
-- refine) for every predicate and query qid in qids, against the brute-force
-- rows stored in brute_table (made from fx_brute).  One row per case:
--   brute     brute-force answers
--   festival  festival's answers
--   missing   brute force EXCEPT ALL festival (answers festival lost)
--   extra     festival EXCEPT ALL brute force (answers festival invented)
-- With refine => true missing and extra must be 0; with refine => false
-- only missing must be 0 (the filter returns a superset).
-------------------------------------------------------------------------------
CREATE FUNCTION fx_compare(idx text, brute_table regclass, qids int[], refine boolean DEFAULT true)
RETURNS TABLE (pred text, qid int, brute bigint, festival bigint, missing bigint, extra bigint)
LANGUAGE plpgsql AS $$
BEGIN
	CREATE TEMP TABLE fx_answer AS
		SELECT p.pred, q.qid, r.id
		FROM fx_predicate p CROSS JOIN fx_query q
		CROSS JOIN LATERAL festival.query(idx, q.g, p.pred, refine) r
		WHERE q.qid = ANY (qids);
	RETURN QUERY EXECUTE format(
		'WITH cases AS (SELECT p.pred, p.ord, q.qid FROM fx_predicate p CROSS JOIN fx_query q
						WHERE q.qid = ANY ($1)),
			  b AS (SELECT pred, qid, count(*) AS n FROM %1$s GROUP BY pred, qid),
			  f AS (SELECT pred, qid, count(*) AS n FROM fx_answer GROUP BY pred, qid),
			  m AS (SELECT pred, qid, count(*) AS n
					FROM (SELECT pred, qid, id FROM %1$s WHERE qid = ANY ($1)
						  EXCEPT ALL
						  SELECT pred, qid, id FROM fx_answer) d
					GROUP BY pred, qid),
			  e AS (SELECT pred, qid, count(*) AS n
					FROM (SELECT pred, qid, id FROM fx_answer
						  EXCEPT ALL
						  SELECT pred, qid, id FROM %1$s WHERE qid = ANY ($1)) d
					GROUP BY pred, qid)
		 SELECT c.pred, c.qid, coalesce(b.n, 0), coalesce(f.n, 0),
				coalesce(m.n, 0), coalesce(e.n, 0)
		 FROM cases c
		 LEFT JOIN b USING (pred, qid) LEFT JOIN f USING (pred, qid)
		 LEFT JOIN m USING (pred, qid) LEFT JOIN e USING (pred, qid)
		 ORDER BY c.ord, c.qid', brute_table)
	USING qids;
	DROP TABLE fx_answer;
END
$$;

-------------------------------------------------------------------------------
-- fx_src: mixed geometries.  Groups by id range:
--      1..  900  points on a 10-unit grid, x, y in 0..290
--   1001.. 1200  axis-aligned rectangles whose corners are grid points
--   1301.. 1400  a 10 x 10 tiling of 7-unit cells at (250, 250): neighbours
--                touch along edges and at corners
--   2001.. 2300  lines of 2 and 3 vertices, some along grid lines
--   3001.. 3100  squares with a square hole
--   3201.. 3300  triangles
--   4001.. 4100  multipoints
--   4101.. 4200  multilinestrings
--   4201.. 4300  multipolygons (the second part with a hole)
--   5001.. 5050  geometry collections (point, line, polygon)
--   6001.. 6060  exact copies, under new ids, of ids 1..20, 1001..1020 and
--                3001..3020
--   7001.. 7400  points exactly on the edges and corners of the tiling
--                cells and of the rectangles
--   8001.. 8014  odd ones: a polygon covering everything, 3-D and measured
--                geometries, arcs and other curves, a triangle, a TIN and a
--                nested collection
-------------------------------------------------------------------------------
CREATE TABLE fx_src (
	id		bigint PRIMARY KEY,
	kind	text NOT NULL,
	geom	geometry NOT NULL
);

INSERT INTO fx_src
SELECT 1 + i, 'point', ST_MakePoint(10 * (i % 30), 10 * (i / 30))
FROM generate_series(0, 899) i;

INSERT INTO fx_src
SELECT 1001 + i, 'rectangle',
	   ST_MakeEnvelope(10 * (i % 20), 10 * (i / 20),
					   10 * (i % 20) + 10 * (1 + i % 3), 10 * (i / 20) + 10 * (1 + i % 2))
FROM generate_series(0, 199) i;

INSERT INTO fx_src
SELECT 1301 + i, 'cell',
	   ST_MakeEnvelope(250 + 7 * (i % 10), 250 + 7 * (i / 10),
					   257 + 7 * (i % 10), 257 + 7 * (i / 10))
FROM generate_series(0, 99) i;

INSERT INTO fx_src
SELECT 2001 + i, 'line',
	   CASE i % 3
		   -- along a horizontal grid line, through grid points
		   WHEN 0 THEN ST_MakeLine(ST_MakePoint(10 * (i % 25), 10 * (i % 29)),
								   ST_MakePoint(10 * (i % 25) + 30, 10 * (i % 29)))
		   -- a diagonal segment
		   WHEN 1 THEN ST_MakeLine(ST_MakePoint(3 + i % 270, 7 + (i * 7) % 280),
								   ST_MakePoint(15 + i % 270, 19 + (i * 7) % 280))
		   -- a bent line of three vertices
		   ELSE ST_MakeLine(ARRAY[ST_MakePoint(i % 300, (i * 13) % 300),
								  ST_MakePoint(i % 300 + 8, (i * 13) % 300 + 2),
								  ST_MakePoint(i % 300 + 4, (i * 13) % 300 + 11)])
	   END
FROM generate_series(0, 299) i;

INSERT INTO fx_src
SELECT 3001 + i, 'holed polygon',
	   ST_MakePolygon(ST_ExteriorRing(ST_MakeEnvelope(cx - 6, cy - 6, cx + 6, cy + 6)),
					  ARRAY[ST_ExteriorRing(ST_MakeEnvelope(cx - 2, cy - 2, cx + 2, cy + 2))])
FROM (SELECT i, 206 + 16 * (i % 10) AS cx, 6 + 16 * (i / 10) AS cy
	  FROM generate_series(0, 99) i) s;

INSERT INTO fx_src
SELECT 3201 + i, 'triangle',
	   ST_MakePolygon(ST_MakeLine(ARRAY[ST_MakePoint(x, y), ST_MakePoint(x + 9, y),
										ST_MakePoint(x + 4, y + 7), ST_MakePoint(x, y)]))
FROM (SELECT i, 5 + (i * 37) % 380 AS x, 180 + (i * 11) % 60 AS y
	  FROM generate_series(0, 99) i) s;

INSERT INTO fx_src
SELECT 4001 + i, 'multipoint',
	   ST_Collect(ARRAY[ST_MakePoint(5 + i * 3, 300 + i % 7),
						ST_MakePoint(5 + i * 3 + 2, 305 + i % 5),
						ST_MakePoint(10 * (i % 30), 10 * (i % 17))])
FROM generate_series(0, 99) i;

INSERT INTO fx_src
SELECT 4101 + i, 'multilinestring',
	   ST_Collect(ST_MakeLine(ST_MakePoint(i * 3, 320), ST_MakePoint(i * 3 + 5, 330)),
				  ST_MakeLine(ST_MakePoint(i * 3, 340), ST_MakePoint(i * 3, 350 + i % 9)))
FROM generate_series(0, 99) i;

INSERT INTO fx_src
SELECT 4201 + i, 'multipolygon',
	   ST_Collect(ST_MakeEnvelope(x, 360, x + 4, 364),
				  ST_MakePolygon(ST_ExteriorRing(ST_MakeEnvelope(x, 370, x + 10, 380)),
								 ARRAY[ST_ExteriorRing(ST_MakeEnvelope(x + 3, 373, x + 7, 377))]))
FROM (SELECT i, 4 * i AS x FROM generate_series(0, 99) i) s;

INSERT INTO fx_src
SELECT 5001 + i, 'collection',
	   ST_Collect(ARRAY[ST_MakePoint(x, y),
						ST_MakeLine(ST_MakePoint(x + 1, y), ST_MakePoint(x + 6, y + 5)),
						ST_MakeEnvelope(x + 2, y - 6, x + 5, y - 2)])
FROM (SELECT i, 8 * i AS x, 395 - (i % 5) AS y FROM generate_series(0, 49) i) s;

INSERT INTO fx_src
SELECT 6000 + row_number() OVER (ORDER BY id), 'copy of ' || kind, geom
FROM fx_src
WHERE id BETWEEN 1 AND 20 OR id BETWEEN 1001 AND 1020 OR id BETWEEN 3001 AND 3020;

INSERT INTO fx_src
SELECT 7001 + 4 * i + k, 'point on cell edge',
	   CASE k
		   WHEN 0 THEN ST_MakePoint(x + 3.5, y)		-- bottom edge
		   WHEN 1 THEN ST_MakePoint(x + 7, y + 3.5)	-- right edge
		   WHEN 2 THEN ST_MakePoint(x, y)				-- corner
		   ELSE ST_MakePoint(x + 2, y + 7)			-- top edge
	   END
FROM (SELECT i, 250 + 7 * (i % 10) AS x, 250 + 7 * (i / 10) AS y
	  FROM generate_series(0, 49) i) s,
	 generate_series(0, 3) k;

INSERT INTO fx_src
SELECT 7201 + i, 'point on rectangle edge',
	   ST_MakePoint(10 * (i % 20) + 5, 10 * (i / 20))
FROM generate_series(0, 199) i;

INSERT INTO fx_src VALUES
	(8001, 'everything', 'POLYGON((-20 -20, 420 -20, 420 420, -20 420, -20 -20))'),
	(8002, 'point z', 'POINT Z (120 120 5)'),
	(8003, 'line z', 'LINESTRING Z (100 100 1, 140 130 2)'),
	(8004, 'polygon z', 'POLYGON Z ((150 150 0, 160 150 0, 160 160 3, 150 150 0))'),
	(8005, 'arc', 'CIRCULARSTRING(60 60, 70 70, 80 60)'),
	(8006, 'curve polygon', 'CURVEPOLYGON(CIRCULARSTRING(90 60, 100 70, 110 60, 100 50, 90 60))'),
	(8007, 'triangle type', 'TRIANGLE((130 110, 140 110, 135 118, 130 110))'),
	(8008, 'tin', 'TIN(((150 120, 160 120, 155 128, 150 120)), ((160 120, 165 128, 155 128, 160 120)))'),
	(8009, 'compound curve', 'COMPOUNDCURVE(CIRCULARSTRING(120 140, 125 145, 130 140), (130 140, 140 140))'),
	(8010, 'multicurve', 'MULTICURVE((140 150, 150 150), CIRCULARSTRING(150 150, 155 155, 160 150))'),
	(8011, 'multisurface', 'MULTISURFACE(CURVEPOLYGON(CIRCULARSTRING(170 160, 175 165, 180 160, 175 155, 170 160)), ((180 170, 190 170, 190 180, 180 170)))'),
	(8012, 'nested collection', 'GEOMETRYCOLLECTION(POINT(110 110), GEOMETRYCOLLECTION(LINESTRING(100 100, 120 120), POLYGON((100 120, 110 120, 110 130, 100 120))))'),
	(8013, 'point m', 'POINT M (150 150 7)'),
	(8014, 'polygon zm', 'POLYGON ZM ((60 150 1 2, 70 150 1 2, 70 160 1 2, 60 150 1 2))');

-------------------------------------------------------------------------------
-- fx_pts: points only.  A grid of 31 x 31 points every 10 units (0..300),
-- 60 extra points at the same places as grid points under other ids, and
-- 200 points off the grid (x + 5, y + 5), at 30 places.
-------------------------------------------------------------------------------
CREATE TABLE fx_pts (
	id		bigint PRIMARY KEY,
	geom	geometry NOT NULL
);
INSERT INTO fx_pts
SELECT 1 + i, ST_MakePoint(10 * (i % 31), 10 * (i / 31))
FROM generate_series(0, 960) i;
INSERT INTO fx_pts
SELECT 2001 + i, ST_MakePoint(10 * ((i * 7) % 31), 10 * ((i * 3) % 31))
FROM generate_series(0, 59) i;
INSERT INTO fx_pts
SELECT 3001 + i, ST_MakePoint(5 + 10 * ((i * 11) % 30), 5 + 10 * ((i * 17) % 30))
FROM generate_series(0, 199) i;

-------------------------------------------------------------------------------
-- fx_query: query geometries for fx_src (qid < 100) and for fx_pts
-- (qid >= 100).
-------------------------------------------------------------------------------
CREATE TABLE fx_query (
	qid		int PRIMARY KEY,
	label	text NOT NULL,
	g		geometry NOT NULL
);
INSERT INTO fx_query VALUES
	(1, 'small rectangle off the grid', ST_MakeEnvelope(12, 12, 38, 27)),
	(2, 'rectangle with edges on grid lines', ST_MakeEnvelope(20, 20, 60, 50)),
	(3, 'rectangle equal to rectangle 1001', ST_MakeEnvelope(0, 0, 10, 10)),
	(4, 'rectangle around everything', ST_MakeEnvelope(-30, -30, 430, 430)),
	(5, 'rectangle far away', ST_MakeEnvelope(1000, 1000, 1010, 1010)),
	(6, 'grid point', 'POINT(50 50)'),
	(7, 'point inside a cell', 'POINT(253.5 253.5)'),
	(8, 'point at a corner of four cells', 'POINT(257 257)'),
	(9, 'horizontal line between grid lines', 'LINESTRING(0 5, 200 5)'),
	(10, 'line along a grid line', 'LINESTRING(0 30, 190 30)'),
	(11, 'diagonal line', 'LINESTRING(0 0, 300 300)'),
	(12, 'polygon with a hole', 'POLYGON((100 0, 200 0, 200 100, 100 100, 100 0), (130 30, 170 30, 170 70, 130 70, 130 30))'),
	(13, 'multipolygon', 'MULTIPOLYGON(((0 100, 40 100, 40 140, 0 140, 0 100)), ((260 260, 300 260, 300 300, 260 300, 260 260)))'),
	(14, 'triangle', 'POLYGON((10 10, 90 10, 50 80, 10 10))'),
	(15, 'diamond (a rotated square)', 'POLYGON((150 100, 200 150, 150 200, 100 150, 150 100))'),
	(16, 'equal to holed polygon 3001', (SELECT geom FROM fx_src WHERE id = 3001)),
	(17, 'equal to line 2002', (SELECT geom FROM fx_src WHERE id = 2002)),
	(18, 'equal to multipolygon 4210', (SELECT geom FROM fx_src WHERE id = 4210)),
	(19, 'rectangle touching the tiling from the left', ST_MakeEnvelope(243, 250, 250, 320)),
	(20, 'union of four cells', ST_MakeEnvelope(250, 250, 264, 264)),
	(21, 'geometry collection', 'GEOMETRYCOLLECTION(POINT(50 50), LINESTRING(100 100, 150 120), POLYGON((250 250, 271 250, 271 271, 250 271, 250 250)))'),
	(22, 'multipoint', 'MULTIPOINT(10 10, 20 20, 255 255)'),
	(23, 'point in the hole of polygon 3001', 'POINT(206 6)'),
	(24, 'tiny rectangle inside rectangles', ST_MakeEnvelope(1, 1, 2, 2)),
	(25, 'segment of a cell edge', 'LINESTRING(250 250, 257 250)'),
	(26, 'cell 1301 itself', ST_MakeEnvelope(250, 250, 257, 257)),
	(27, 'point on the outer ring of polygon 3001', 'POINT(200 6)'),
	(28, 'multilinestring', 'MULTILINESTRING((0 320, 30 330), (60 340, 60 360))'),
	(29, 'polygon overlapping many shapes', 'POLYGON((5 5, 95 15, 85 95, 15 85, 5 5))'),
	(30, 'clockwise rectangle from its top right', 'POLYGON((180 90, 180 60, 120 60, 120 90, 180 90))'),
	(31, 'rectangle around the collections', ST_MakeEnvelope(0, 380, 400, 400)),
	(32, 'grid point with a copy', 'POINT(0 0)'),
	(33, 'line inside the big polygon only', 'LINESTRING(-10 -10, -15 -5)'),
	(34, 'rectangle equal to the cell block', ST_MakeEnvelope(250, 250, 320, 320)),
	(35, 'arc as query', 'CIRCULARSTRING(50 60, 70 80, 90 60)'),
	(36, 'rectangle around the odd types', ST_MakeEnvelope(100, 100, 200, 200)),
	(37, 'line across the TIN', 'LINESTRING(150 119, 166 129)'),
	(38, 'point on the compound curve', 'POINT(135 140)'),
	-- points-only queries (fx_pts)
	(101, 'rectangle with edges through grid points', ST_MakeEnvelope(20, 30, 80, 90)),
	(102, 'rectangle off the grid', ST_MakeEnvelope(21, 31, 79, 89)),
	(103, 'grid point', 'POINT(40 40)'),
	(104, 'off-grid point', 'POINT(45 45)'),
	(105, 'point not in the data', 'POINT(41 40)'),
	(106, 'rectangle one grid cell wide', ST_MakeEnvelope(100, 100, 110, 110)),
	(107, 'clockwise rectangle from its top right', 'POLYGON((300 300, 300 200, 200 200, 200 300, 300 300))'),
	(108, 'rectangle covering all points', ST_MakeEnvelope(0, 0, 300, 300)),
	(109, 'thin rectangle along a grid line', ST_MakeEnvelope(0, 49.5, 300, 50)),
	(110, 'triangle', 'POLYGON((0 0, 100 0, 0 100, 0 0))'),
	(111, 'line along a grid line', 'LINESTRING(0 70, 150 70)'),
	(112, 'multipoint', 'MULTIPOINT(40 40, 45 45, 41 40)'),
	(113, 'diamond', 'POLYGON((150 100, 200 150, 150 200, 100 150, 150 100))'),
	(114, 'rectangle with a hole', 'POLYGON((100 0, 200 0, 200 100, 100 100, 100 0), (120 20, 180 20, 180 80, 120 80, 120 20))'),
	(115, 'rectangle far away', ST_MakeEnvelope(1000, 1000, 1010, 1010)),
	(116, 'rectangle with one edge through points', ST_MakeEnvelope(-5, 125, 35, 140)),
	(117, 'point with a copy', (SELECT geom FROM fx_pts WHERE id = 2001));

-- what the suite works with
SELECT kind, count(*) AS objects, min(id) AS first_id, max(id) AS last_id
FROM fx_src GROUP BY kind ORDER BY min(id);
SELECT count(*) AS objects, count(DISTINCT geom) AS locations FROM fx_pts;
SELECT count(*) FILTER (WHERE qid < 100) AS src_queries,
	   count(*) FILTER (WHERE qid >= 100) AS point_queries
FROM fx_query;

RESET client_min_messages;
