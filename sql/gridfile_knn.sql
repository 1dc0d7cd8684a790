--
-- gridfile_knn: the grid files' ring kNN (Fevgas 2019, §3.5.2, Alg. 7)
-- with each knn_prefetch mode (none, data, all) against PostGIS brute force,
-- and the submissions each mode issues, for GFFM (gridfile) and LB-Grid
-- (lbgrid, whose buckets the ring search reads through its readBucket).
--
-- Six indices of the same points, one per structure and mode, on a libaio
-- device (a group read is one submission).  GFFM: pages of 1024 bytes (41
-- points per bucket, 17 regions per directory page: 3 levels).  LB-Grid:
-- pages of 2048 bytes (60 records per logical bucket, so that the 30 copies
-- below fit one; 36 regions per directory page), its buckets' records
-- spread over shared log pages by the inserts.  The points: a 50 x 50 grid of
-- integer coordinates (many ties at equal distances), a dense cluster and
-- 30 copies of one point.  After the build, after inserts and deletes
-- (merges), and in a new session: festival.knn for k = 1, 10, 100, 3000
-- (more than the index holds) at grid points, cell centres, the copies, a
-- point outside the extent and on halving lines returns exactly
-- ORDER BY ST_Distance(geom, g), id LIMIT k; check() is clean.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET festival.log_sync = never;

SELECT festival.create_device('gk_aio', io => 'buffered', engine => 'libaio');

CREATE TABLE gk_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO gk_src SELECT i, ST_MakePoint(i % 50, i / 50) FROM generate_series(0, 2499) i;
INSERT INTO gk_src
SELECT 3000 + i, ST_MakePoint(20 + (i * 37 % 100) / 25.0, 20 + (i * 53 % 100) / 25.0)
FROM generate_series(0, 99) i;
INSERT INTO gk_src SELECT 4000 + i, 'POINT(12.5 12.5)' FROM generate_series(0, 29) i;

CREATE TABLE gk_index (ord int PRIMARY KEY, name text NOT NULL, prefetch text NOT NULL,
					   structure text NOT NULL, page_size int NOT NULL);
INSERT INTO gk_index VALUES (1, 'gk_none', 'none', 'gridfile', 1024),
	(2, 'gk_data', 'data', 'gridfile', 1024), (3, 'gk_all', 'all', 'gridfile', 1024),
	(4, 'gk_lb_none', 'none', 'lbgrid', 2048), (5, 'gk_lb_data', 'data', 'lbgrid', 2048),
	(6, 'gk_lb_all', 'all', 'lbgrid', 2048);
SELECT name, festival.create_index(name, structure, 'gk_aio',
		jsonb_build_object('page_size', page_size, 'knn_prefetch', prefetch,
						   'extent', jsonb_build_array(0, 0, 50, 50)),
		'gk_src', 'id', 'geom') > 0 AS created
FROM gk_index ORDER BY ord;
-- the option is validated like every choice, for both structures
SELECT festival.create_index('gk_bad', 'gridfile', 'gk_aio', '{"knn_prefetch": "some"}', 'gk_src', 'id', 'geom');
SELECT festival.create_index('gk_bad', 'lbgrid', 'gk_aio', '{"knn_prefetch": "some"}', 'gk_src', 'id', 'geom');

CREATE TABLE gk_query (qno int, g geometry);
INSERT INTO gk_query VALUES
	(1, 'POINT(10 10)'),		-- a grid point: ties at 1, sqrt(2), 2, ...
	(2, 'POINT(24.5 24.5)'),	-- a cell centre: four at equal distance
	(3, 'POINT(12.5 12.5)'),	-- the 30 copies
	(4, 'POINT(-7 60)'),		-- outside the extent
	(5, 'POINT(25 12.5)'),		-- on a halving line
	(6, 'POINT(21 21)'),		-- in the cluster
	(7, 'POINT(49 0)');			-- a corner


CREATE FUNCTION gk_verify(phase text)
RETURNS TABLE (phase_ text, index text, knn_wrong bigint, check_rows bigint, height int)
LANGUAGE sql AS $$
	SELECT phase, i.name, fixture.knn_wrong(i.name, 'gk_src', ARRAY(SELECT g FROM gk_query ORDER BY qno), ARRAY[1, 10, 100, 3000]), (SELECT count(*) FROM festival.check(i.name)),
		   (festival.stats(i.name)->>'height')::int
	FROM gk_index i ORDER BY i.ord
$$;

-- an empty index: no neighbours, in every mode
SELECT name, (SELECT count(*) FROM festival.knn(name, 'POINT(1 1)', 10)) AS empty_knn FROM gk_index ORDER BY ord;

SELECT name, festival.build(name) AS built FROM gk_index ORDER BY ord;
SELECT * FROM gk_verify('build');

-- a non-point query takes the generic search (distances need the source)
SELECT count(*) AS line_knn FROM festival.knn('gk_data', 'LINESTRING(0 0, 50 50)', 7);

-------------------------------------------------------------------------------
-- Submissions per query (festival.stats totals, read_submissions and
-- pages_read), the same query in each mode over the same pages.
--
-- k = 1 at a stored point: every mode reads the sub-directory of the
-- point's cell (the root directory is in memory; ring 0 at the root holds
-- one cell) and its bucket (ring 0 there holds one cell: a group of one);
-- the point itself, at distance 0, fills the heap, and the gap to every
-- ring's border is above 0, so no ring 1 is entered: exactly 2 pages in 2
-- submissions in every mode (LB-Grid: 2 submissions too, the bucket's log
-- pages being one batch).
--
-- k = 100 and 1000: 'none' reads page by page (submissions = pages); 'data'
-- reads each ring's buckets in groups, so it issues fewer submissions, and
-- may read more pages (a bucket pruned after its group was formed);
-- 'all' groups sub-directories too, so it issues at most as many
-- submissions as 'data'.
-------------------------------------------------------------------------------
CREATE TABLE gk_before (name text, t jsonb);
CREATE FUNCTION gk_io(k int, g geometry)
RETURNS TABLE (name text, k_ int, found bigint, pages_read int, read_submissions int)
LANGUAGE plpgsql AS $$
BEGIN
	TRUNCATE gk_before;
	INSERT INTO gk_before SELECT i.name, festival.stats(i.name)->'totals' FROM gk_index i;
	RETURN QUERY
	SELECT i.name, k, (SELECT count(*) FROM festival.knn(i.name, g, k)),
		   (festival.stats(i.name)->'totals'->>'pages_read')::int - (b.t->>'pages_read')::int,
		   (festival.stats(i.name)->'totals'->>'read_submissions')::int - (b.t->>'read_submissions')::int
	FROM gk_index i JOIN gk_before b USING (name) ORDER BY i.ord;
END
$$;
SELECT * FROM gk_io(1, 'POINT(10 10)');
CREATE TABLE gk_io_runs AS
SELECT * FROM gk_io(100, 'POINT(30 30)') UNION ALL SELECT * FROM gk_io(1000, 'POINT(30 30)');
SELECT * FROM gk_io_runs ORDER BY k_, name;
-- the directions the thesis's Table 3.5 reports (fewer operations with prefetch)
SELECT k_,
	   max(read_submissions) FILTER (WHERE name = 'gk_data') < max(read_submissions) FILTER (WHERE name = 'gk_none') AS data_fewer,
	   max(read_submissions) FILTER (WHERE name = 'gk_all') <= max(read_submissions) FILTER (WHERE name = 'gk_data') AS all_not_more,
	   max(pages_read) FILTER (WHERE name = 'gk_none') = max(read_submissions) FILTER (WHERE name = 'gk_none') AS none_one_per_page,
	   max(pages_read) FILTER (WHERE name = 'gk_data') >= max(pages_read) FILTER (WHERE name = 'gk_none') AS data_pages_at_least
FROM gk_io_runs GROUP BY k_ ORDER BY k_;
-- LB-Grid: 'none' reads a bucket's log pages as one batch when its cell is
-- entered (one submission per bucket, more pages than submissions: its
-- list spans several log pages); 'data' reads the log pages of a ring's
-- buckets as one batch, a page shared by several of them once, so fewer
-- submissions, and here fewer pages too ('all' as for GFFM)
SELECT k_,
	   max(read_submissions) FILTER (WHERE name = 'gk_lb_data') < max(read_submissions) FILTER (WHERE name = 'gk_lb_none') AS data_fewer,
	   max(read_submissions) FILTER (WHERE name = 'gk_lb_all') <= max(read_submissions) FILTER (WHERE name = 'gk_lb_data') AS all_not_more,
	   max(pages_read) FILTER (WHERE name = 'gk_lb_none') > max(read_submissions) FILTER (WHERE name = 'gk_lb_none') AS none_lists_span_pages,
	   max(pages_read) FILTER (WHERE name = 'gk_lb_data') < max(pages_read) FILTER (WHERE name = 'gk_lb_none') AS data_shared_pages_once
FROM gk_io_runs GROUP BY k_ ORDER BY k_;

-------------------------------------------------------------------------------
-- Inserts and deletes (buckets merge), then a new session
-------------------------------------------------------------------------------
CREATE TABLE gk_later (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO gk_later SELECT 5000 + i, ST_MakePoint((i * 7919 % 501) / 10.0, (i * 104729 % 501) / 10.0)
FROM generate_series(0, 199) i;
INSERT INTO gk_src SELECT * FROM gk_later;
SELECT name, (SELECT count(*) FROM gk_later l WHERE festival.insert(name, l.id, l.geom)) AS inserted
FROM gk_index ORDER BY ord;
CREATE TABLE gk_gone AS SELECT id, geom FROM gk_src WHERE ST_X(geom) < 25 AND ST_Y(geom) < 25 AND id < 3000;
DELETE FROM gk_src WHERE id IN (SELECT id FROM gk_gone);
CREATE TABLE gk_lb_buckets AS
SELECT name, (festival.stats(name)->'config'->'derived'->>'logical_buckets')::int AS before
FROM gk_index WHERE structure = 'lbgrid';
SELECT name, (SELECT count(*) FROM gk_gone d WHERE festival.delete(name, d.id, d.geom)) AS deleted
FROM gk_index ORDER BY ord;
-- LB-Grid's buckets merged (the ring search then meets merged regions)
SELECT name, (festival.stats(name)->'config'->'derived'->>'logical_buckets')::int < before AS merged
FROM gk_lb_buckets ORDER BY name;
SELECT * FROM gk_verify('modified');
-- a second entry of an id already indexed (festival.insert keeps it): like
-- the generic search, the id comes back once, at its smaller distance;
-- brute force over the source plus those entries, each id at its minimum.
-- Id 9999 has two entries about POINT(25.01 30): the farther one inside
-- the query's own bucket (right of the halving line x = 25, entered in
-- ring 0), the nearer one just left of the line (ring 1), so the heap
-- must lower the distance of an id it already holds.
CREATE TABLE gk_dup (id bigint, geom geometry);
INSERT INTO gk_dup VALUES (1200, 'POINT(30.2 30.1)'), (1300, 'POINT(9.9 10)'),
	(9999, 'POINT(27.5 30)'), (9999, 'POINT(24.99 30)');
SELECT name, (SELECT count(*) FROM gk_dup d WHERE festival.insert(name, d.id, d.geom)) AS duplicates
FROM gk_index ORDER BY ord;
CREATE FUNCTION gk_dup_wrong(idx text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	wrong bigint := 0;
	n bigint;
	q geometry;
	k int;
BEGIN
	FOREACH q IN ARRAY ARRAY['POINT(30 30)'::geometry, 'POINT(10 10)', 'POINT(20 31)', 'POINT(25.01 30)'] LOOP
		FOREACH k IN ARRAY ARRAY[1, 5, 50, 3000] LOOP
			WITH f AS (SELECT row_number() OVER () AS r, id, round(distance::numeric, 9) AS d
					   FROM festival.knn(idx, q, k)),
				 u AS (SELECT id, min(ST_Distance(geom, q)) AS d
					   FROM (SELECT id, geom FROM gk_src UNION ALL SELECT id, geom FROM gk_dup) a GROUP BY id),
				 b AS (SELECT row_number() OVER (ORDER BY d, id) AS r, id, round(d::numeric, 9) AS d
					   FROM u ORDER BY d, id LIMIT k)
			SELECT count(*) INTO n FROM f FULL JOIN b USING (r)
			WHERE f.id IS DISTINCT FROM b.id OR f.d IS DISTINCT FROM b.d;
			wrong := wrong + n;
		END LOOP;
	END LOOP;
	RETURN wrong;
END
$$;
SELECT name, gk_dup_wrong(name) AS knn_wrong,
	   (SELECT count(*) FROM festival.knn(name, 'POINT(30.2 30.1)', 3) WHERE id = 1200) AS once,
	   (SELECT round(distance::numeric, 9) FROM festival.knn(name, 'POINT(25.01 30)', 50) WHERE id = 9999) AS nearer
FROM gk_index ORDER BY ord;
SELECT name, (SELECT count(*) FROM gk_dup d WHERE festival.delete(name, d.id, d.geom)) AS removed
FROM gk_index ORDER BY ord;
DROP FUNCTION gk_dup_wrong(text);
DROP TABLE gk_dup;

SELECT festival.flush(name) FROM gk_index ORDER BY ord;
\c
SET client_min_messages = warning;
SELECT * FROM gk_verify('new session');

SELECT festival.drop_index(name) FROM gk_index ORDER BY ord;
SELECT festival.drop_device('gk_aio');
DROP FUNCTION gk_verify(text), gk_io(int, geometry);
DROP TABLE gk_src, gk_index, gk_query, gk_before, gk_io_runs, gk_later, gk_gone, gk_lb_buckets;
