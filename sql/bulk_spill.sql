--
-- bulk_spill: the bulk loads in memory bounded by maintenance_work_mem
-- (rtree_bulk.c's STR and Hilbert packing, rtree_spill_*; the Hilbert
-- R-tree's, hilbert_rtree_bulk.c, hilbert_spill_*; the grid file's,
-- gridfile_bulk.c, gf_spill_*) build the tree of the in-memory load, page
-- for page.
--
-- The same source is loaded twice into each of an R-tree and an R*-tree:
-- with maintenance_work_mem = 1GB everything fits and the in-memory loader
-- runs; with 1MB (PostgreSQL's minimum) the objects go through its
-- external sort after the first 11915 (the DEBUG1 line says so), and the
-- parents of a level read from it go to a temporary file.  The leaves of
-- bs_wide's 400000 points are so many that their level (with room for its
-- parents: with min_fill 5, m = 2, half as many) does not fit in 1MB: it
-- is sorted externally again.
-- The source is full of ties: points repeated under other ids, boxes of
-- different sizes around one centre, columns and rows of equal x and y,
-- so every key of the comparator (centre x, centre y, id) decides.  Both
-- trees must be the same node by node (page numbers included), check()
-- clean, and answer windows as PostGIS brute force does.
-- Hilbert packing (R-tree 'hilbert') goes through a temporary file and
-- then an external sort; the Hilbert R-tree's sort keys are (h, id) only,
-- so a second source, bs_dup, repeats each id on three boxes of one
-- centre (equal h and id: the in-memory order ends on the entry's bytes)
-- and, with min_fill 5, the parents of its leaves go to a temporary file.
-- The grid file and the xBR+-tree (points only) load the points of
-- bs_src, each twice, and bs_skew, crowded in a corner of their extent.
-- STR's external sort keys the centres by spill_sort.h's sort_key_f8,
-- whose negative and zero cases bs_src (centres >= 0) never reaches:
-- bs_neg has negative centres over many slices, and a run of centres
-- x = -0 and +0 (equal for float8: y decides) longer than a slice.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET jit = off;

SELECT festival.create_device('bs_dev', io => 'buffered');

CREATE TABLE bs_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
-- a 200 x 200 grid of points, each point twice (ids i and i + 100000)
INSERT INTO bs_src
SELECT i + k * 100000, ST_MakePoint((i % 200) * 0.5, (i / 200) * 0.5)
FROM generate_series(0, 39999) i, generate_series(0, 1) k;
-- boxes of three sizes around the centres of a coarser grid (equal
-- centres, different corners), ids in descending order of size
INSERT INTO bs_src
SELECT 200000 + i * 3 + s,
	   ST_MakeEnvelope((i % 50) * 2 - (3 - s), (i / 50) * 2 - (3 - s),
					   (i % 50) * 2 + (3 - s), (i / 50) * 2 + (3 - s))
FROM generate_series(0, 2499) i, generate_series(0, 2) s;
-- thin vertical and horizontal boxes: equal x centres with different y
INSERT INTO bs_src
SELECT 300000 + i, CASE WHEN i % 2 = 0
	THEN ST_MakeEnvelope(50, i * 0.01, 50, i * 0.01 + 7)
	ELSE ST_MakeEnvelope(i * 0.01, 50, i * 0.01 + 7, 50) END
FROM generate_series(0, 12499) i;
SELECT count(*) AS objects FROM bs_src;
CREATE TABLE bs_pts AS SELECT * FROM bs_src WHERE id < 200000;
-- points crowded in one corner of their extent, whose other corner holds
-- one point: many regions and quadrants have an empty first half
CREATE TABLE bs_skew AS
SELECT i AS id, ST_MakePoint(60 + (i % 125) * 0.32, 60 + (i / 125) * 0.32) AS geom
FROM generate_series(0, 14999) i
UNION ALL SELECT 15000, ST_MakePoint(0, 0);
-- 6000 points at x = -0 or +0 (alternating), then 9000 at x = -1 .. -90,
-- y negative and positive
CREATE TABLE bs_neg AS
SELECT i AS id,
	   ST_MakePoint(CASE WHEN i >= 6000 THEN -1 - (i % 90)
					WHEN i % 2 = 0 THEN '-0'::float8 ELSE 0 END,
					(i % 600 - 300) * 0.1) AS geom
FROM generate_series(0, 14999) i;
SELECT count(*) FILTER (WHERE ST_X(geom)::text = '-0') AS minus_zero,
	   count(*) FILTER (WHERE ST_X(geom)::text = '0') AS plus_zero,
	   count(*) FILTER (WHERE ST_X(geom) < 0) AS negative
FROM bs_neg;
-- 5000 ids, each on three boxes around one centre, no primary key
CREATE TABLE bs_dup (id bigint NOT NULL, geom geometry NOT NULL);
INSERT INTO bs_dup
SELECT i, ST_MakeEnvelope((i % 70) * 3 - s, (i / 70) * 3 - s, (i % 70) * 3 + s, (i / 70) * 3 + s)
FROM generate_series(0, 4999) i, generate_series(0, 2) s;
SELECT festival.generate_points('bs_wide', 400000, 'uniform', 7,
							   ST_MakeBox2D(ST_MakePoint(0, 0), ST_MakePoint(100, 100))) AS wide;
-- the brute-force side uses PostGIS's own indices
CREATE INDEX ON bs_src USING gist (geom);
CREATE INDEX ON bs_wide USING gist (geom);
ANALYZE bs_src, bs_wide;

CREATE TABLE bs_index (name text PRIMARY KEY, structure text NOT NULL, options jsonb NOT NULL,
					   method text NOT NULL, src text NOT NULL);
INSERT INTO bs_index
SELECT name || kind, structure, options::jsonb, method, src
FROM (VALUES
	('bs_rtree', 'rtree', '{"page_size": 1024}', 'str', 'bs_src'),
	('bs_rstar', 'rstartree', '{"page_size": 1024}', 'str', 'bs_src'),
	('bs_m2', 'rtree', '{"page_size": 1024, "min_fill": 5}', 'str', 'bs_src'),
	('bs_neg', 'rtree', '{"page_size": 1024}', 'str', 'bs_neg'),
	('bs_wide', 'rtree', '{"page_size": 1024, "min_fill": 5}', 'str', 'bs_wide'),
	('bs_hpack', 'rtree', '{"page_size": 1024, "min_fill": 5}', 'hilbert', 'bs_src'),
	('bs_hpack_dup', 'rtree', '{"page_size": 1024, "min_fill": 5}', 'hilbert', 'bs_dup'),
	('bs_hrt', 'hilbert', '{"page_size": 1024, "max_fill": 30}', 'hilbert', 'bs_src'),
	('bs_hrt_dup', 'hilbert', '{"page_size": 1024, "min_fill": 5}', 'hilbert', 'bs_dup'),
	('bs_grid', 'gridfile', '{"page_size": 1024}', 'bulk', 'bs_pts'),
	('bs_xbr', 'xbrtree', '{"page_size": 1024}', 'bulk', 'bs_pts'),
	('bs_grid_skew', 'gridfile', '{"page_size": 1024}', 'bulk', 'bs_skew'),
	('bs_xbr_skew', 'xbrtree', '{"page_size": 1024}', 'bulk', 'bs_skew')
	) v(name, structure, options, method, src)
CROSS JOIN (VALUES ('_mem'), ('_ext')) k(kind);
SELECT name, festival.create_index(name, structure, 'bs_dev', options, src) > 0 AS created
FROM bs_index ORDER BY name;
-- both sources as one, for the brute force
CREATE VIEW bs_all AS
SELECT 'bs_src' AS src, id, geom FROM bs_src UNION ALL SELECT 'bs_dup', id, geom FROM bs_dup
UNION ALL SELECT 'bs_pts', id, geom FROM bs_pts UNION ALL SELECT 'bs_skew', id, geom FROM bs_skew
UNION ALL SELECT 'bs_neg', id, geom FROM bs_neg
UNION ALL SELECT 'bs_wide', id, geom FROM bs_wide;

-- every node reachable from the root, with its page: (page, level,
-- position, ref, box); two identical trees give identical rows
CREATE FUNCTION bs_tree(idx text)
RETURNS TABLE (page bigint, level int, pos int, ref bigint, x1 float8, y1 float8, x2 float8, y2 float8)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT t.page, n.level, n."position", n.ref, n.xmin, n.ymin, n.xmax, n.ymax
	FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n
$$;

SET maintenance_work_mem = '1GB';
SELECT name, festival.build(name, method) AS built
FROM bs_index WHERE name LIKE '%_mem' ORDER BY name;
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
SELECT festival.build('bs_rtree_ext', 'str') AS rtree_ext;
SELECT festival.build('bs_rstar_ext', 'str') AS rstar_ext;
SELECT festival.build('bs_m2_ext', 'str') AS m2_ext;
SELECT festival.build('bs_neg_ext', 'str') AS neg_ext;
SELECT festival.build('bs_wide_ext', 'str') AS wide_ext;
SELECT festival.build('bs_hpack_ext', 'hilbert') AS hpack_ext;
SELECT festival.build('bs_hpack_dup_ext', 'hilbert') AS hpack_dup_ext;
SELECT festival.build('bs_hrt_ext', 'hilbert') AS hrt_ext;
SELECT festival.build('bs_hrt_dup_ext', 'hilbert') AS hrt_dup_ext;
SELECT festival.build('bs_grid_ext', 'bulk') AS grid_ext;
SELECT festival.build('bs_xbr_ext', 'bulk') AS xbr_ext;
SELECT festival.build('bs_grid_skew_ext', 'bulk') AS grid_skew_ext;
SELECT festival.build('bs_xbr_skew_ext', 'bulk') AS xbr_skew_ext;
SET client_min_messages = warning;
RESET maintenance_work_mem;

-- the pairs: same height and node count, no row of one tree missing from
-- the other, check() clean on both
SELECT m.name AS in_memory, e.name AS external,
	   festival.stats(m.name)->>'height' = festival.stats(e.name)->>'height' AS same_height,
	   (SELECT count(*) FROM bs_tree(m.name)) AS entries,
	   (SELECT count(*) FROM bs_tree(m.name) WHERE level > 0) AS inner_entries,
	   (SELECT count(*) FROM (SELECT * FROM bs_tree(m.name) EXCEPT ALL SELECT * FROM bs_tree(e.name)) d) AS only_in_memory,
	   (SELECT count(*) FROM (SELECT * FROM bs_tree(e.name) EXCEPT ALL SELECT * FROM bs_tree(m.name)) d) AS only_external,
	   (SELECT count(*) FROM festival.check(m.name)) + (SELECT count(*) FROM festival.check(e.name)) AS check_rows
FROM bs_index m JOIN bs_index e ON e.name = replace(m.name, '_mem', '_ext')
WHERE m.name LIKE '%_mem' ORDER BY m.name;

-- windows against PostGIS brute force, on the external builds
CREATE TABLE bs_window AS
SELECT w, ST_MakeEnvelope((w % 9) * 11.0, (w / 9) * 11.0, (w % 9) * 11.0 + 7.5, (w / 9) * 11.0 + 12.5) AS g
FROM generate_series(0, 80, 4) w;
SELECT i.name,
	   sum((SELECT count(*) FROM (
			(SELECT id FROM festival.query(i.name, b.g, 'intersects') q(id)
			 EXCEPT ALL SELECT id FROM bs_all s WHERE s.src = i.src AND ST_Intersects(s.geom, b.g))
			UNION ALL
			(SELECT id FROM bs_all s WHERE s.src = i.src AND ST_Intersects(s.geom, b.g)
			 EXCEPT ALL SELECT id FROM festival.query(i.name, b.g, 'intersects') q(id))) d)) AS wrong,
	   sum((SELECT count(*) FROM bs_all s WHERE s.src = i.src AND ST_Intersects(s.geom, b.g))) AS brute
FROM bs_index i CROSS JOIN bs_window b
WHERE i.name LIKE '%_ext' GROUP BY i.name ORDER BY i.name;

-- the grid file and the xBR+-tree refuse more points in one grid cell
-- than a bucket or leaf holds before they write anything, in bounded
-- memory as in memory
CREATE TABLE bs_same AS
SELECT i AS id, ST_MakePoint(CASE WHEN i < 13000 THEN 7 ELSE i % 100 END, 7) AS geom
FROM generate_series(0, 13999) i;
SELECT festival.create_index('bs_same_' || s, s, 'bs_dev', '{"page_size": 1024}', 'bs_same') > 0 AS created
FROM unnest(ARRAY['gridfile', 'xbrtree']) s;
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
SELECT festival.build('bs_same_gridfile', 'bulk');
SELECT festival.build('bs_same_xbrtree', 'bulk');
SET client_min_messages = warning;
RESET maintenance_work_mem;
SELECT festival.build('bs_same_gridfile', 'bulk');
SELECT festival.build('bs_same_xbrtree', 'bulk');
SELECT festival.drop_index('bs_same_' || s) FROM unnest(ARRAY['gridfile', 'xbrtree']) s;
DROP TABLE bs_same;

SELECT festival.drop_index(name) FROM bs_index ORDER BY name;
SELECT festival.drop_device('bs_dev');
DROP VIEW bs_all;
DROP TABLE bs_src, bs_dup, bs_pts, bs_skew, bs_neg, bs_wide, bs_index, bs_window;
DROP FUNCTION bs_tree(text);
