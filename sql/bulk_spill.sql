--
-- bulk_spill: the STR load in memory bounded by maintenance_work_mem
-- (rtree_pack.c, rtree_spill_*) builds the tree of the in-memory load,
-- page for page.
--
-- The same source is loaded twice into each of an R-tree and an R*-tree:
-- with maintenance_work_mem = 1GB everything fits and the in-memory loader
-- runs; with 1MB (PostgreSQL's minimum) the objects go through its
-- external sort after the first 11915 (the DEBUG1 line says so), and with
-- min_fill 5 (m = 2, room for n / 2 parents) the parents of the leaves go
-- through a second sort too.
-- The source is full of ties: points repeated under other ids, boxes of
-- different sizes around one centre, columns and rows of equal x and y,
-- so every key of the comparator (centre x, centre y, id) decides.  Both
-- trees must be the same node by node (page numbers included), check()
-- clean, and answer windows as PostGIS brute force does.
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
-- the brute-force side uses PostGIS's own index
CREATE INDEX ON bs_src USING gist (geom);
ANALYZE bs_src;

CREATE TABLE bs_index (name text PRIMARY KEY, structure text NOT NULL, options jsonb NOT NULL);
INSERT INTO bs_index VALUES
	('bs_rtree_mem', 'rtree', '{"page_size": 1024}'),
	('bs_rtree_ext', 'rtree', '{"page_size": 1024}'),
	('bs_rstar_mem', 'rstartree', '{"page_size": 1024}'),
	('bs_rstar_ext', 'rstartree', '{"page_size": 1024}'),
	('bs_m2_mem', 'rtree', '{"page_size": 1024, "min_fill": 5}'),
	('bs_m2_ext', 'rtree', '{"page_size": 1024, "min_fill": 5}');
SELECT name, festival.create_index(name, structure, 'bs_dev', options, 'bs_src') > 0 AS created
FROM bs_index ORDER BY name;

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
SELECT festival.build('bs_rtree_mem', 'str') AS rtree_mem,
	   festival.build('bs_rstar_mem', 'str') AS rstar_mem,
	   festival.build('bs_m2_mem', 'str') AS m2_mem;
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
SELECT festival.build('bs_rtree_ext', 'str') AS rtree_ext;
SELECT festival.build('bs_rstar_ext', 'str') AS rstar_ext;
SELECT festival.build('bs_m2_ext', 'str') AS m2_ext;
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
			 EXCEPT ALL SELECT id FROM bs_src s WHERE ST_Intersects(s.geom, b.g))
			UNION ALL
			(SELECT id FROM bs_src s WHERE ST_Intersects(s.geom, b.g)
			 EXCEPT ALL SELECT id FROM festival.query(i.name, b.g, 'intersects') q(id))) d)) AS wrong,
	   sum((SELECT count(*) FROM bs_src s WHERE ST_Intersects(s.geom, b.g))) AS brute
FROM bs_index i CROSS JOIN bs_window b
WHERE i.name LIKE '%_ext' GROUP BY i.name ORDER BY i.name;

SELECT festival.drop_index(name) FROM bs_index ORDER BY name;
SELECT festival.drop_device('bs_dev');
DROP TABLE bs_src, bs_index, bs_window;
DROP FUNCTION bs_tree(text);
