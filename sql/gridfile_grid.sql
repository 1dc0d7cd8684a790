--
-- gridfile_grid: the two-level grid file of Hinrichs as the grid files'
-- structure (Fevgas 2019, §3.1), and the thesis's group reads counted
-- against hand computations (Alg. 6, 7, 8 and Tables 3.4-3.6; LB-Grid's
-- Alg. 3).
--
-- The data: a 64 x 64 lattice of points (i + 0.5, j + 0.5) over the extent
-- [0, 0, 64, 64], 1 kB pages: a bucket holds 41 points, a directory page
-- 17 regions.  By hand (the buddy halving, x first):
--   - buckets: 4096 points halve 7 times (x four times, y three) to 128
--     buckets of 32 points, each 4 wide and 8 high;
--   - sub-directories: 128 buckets halve 3 times (x twice, y once) to 8
--     sub-directories of 16 buckets, each 16 wide and 32 high, its grid
--     array 4 x 4 cells (one bucket each);
--   - the root directory: the 8 sub-directories, root scales x 0, 16, 32,
--     48, 64 and y 0, 32, 64: a 4 x 2 root grid array, one root page;
-- the same whatever the insertion order (a region splits exactly when it
-- holds more than a page), and the same from the bulk loader.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-- a batching engine: a group read is one submission
SELECT festival.create_device('gg_aio', io => 'buffered', engine => 'libaio');

CREATE TABLE gg_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO gg_src SELECT 64 * j + i, ST_MakePoint(i + 0.5, j + 0.5)
FROM generate_series(0, 63) i, generate_series(0, 63) j;

CREATE TABLE gg_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, structure text NOT NULL,
					   method text NOT NULL, options jsonb NOT NULL);
INSERT INTO gg_index VALUES
	(1, 'gg_rq', 'gridfile', 'insert', '{"page_size": 1024, "extent": [0, 0, 64, 64]}'),
	(2, 'gg_prq', 'gridfile', 'bulk', '{"page_size": 1024, "extent": [0, 0, 64, 64], "range_algorithm": "p-rq",
		"knn_prefetch": "data"}'),
	-- the read buffers of 2 directory pages (DPB) and 5 data pages (LBB)
	(3, 'gg_small', 'gridfile', 'bulk', '{"page_size": 1024, "extent": [0, 0, 64, 64], "range_algorithm": "p-rq",
		"knn_prefetch": "data", "directory_read_buffer": 2048, "data_read_buffer": 5120}');
SELECT name, festival.create_index(name, structure, 'gg_aio', options, 'gg_src', 'id', 'geom') > 0 AS created
FROM gg_index ORDER BY ord;
SELECT name, festival.build(name, method) AS built FROM gg_index ORDER BY ord;

-- the shape computed above, and the read buffers in pages (the thesis's
-- 10.5 MB and 3.5 MB in 1 kB pages without a cache, or the options)
SELECT name, (festival.stats(name)->>'height')::int AS height,
	   d->>'root_sub_directories' AS subdirs, d->>'root_grid_columns' AS columns,
	   d->>'root_grid_rows' AS rows, d->>'root_pages' AS root_pages,
	   d->>'directory_read_buffer_pages' AS dpb, d->>'data_read_buffer_pages' AS lbb,
	   (SELECT count(*) FROM fixture.nodes(name) WHERE level = 1) AS buckets,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM gg_index, LATERAL (SELECT festival.stats(name)->'config'->'derived' AS d) x ORDER BY ord;
-- insertion and the bulk loader make the same regions at every level
SELECT count(*) AS different_regions
FROM ((SELECT level, ref IS NULL, x1, y1, x2, y2 FROM fixture.nodes('gg_rq')
	   EXCEPT ALL SELECT level, ref IS NULL, x1, y1, x2, y2 FROM fixture.nodes('gg_prq'))
	  UNION ALL
	  (SELECT level, ref IS NULL, x1, y1, x2, y2 FROM fixture.nodes('gg_prq')
	   EXCEPT ALL SELECT level, ref IS NULL, x1, y1, x2, y2 FROM fixture.nodes('gg_rq'))) d;
-- a sub-directory's grid array: 16 buckets of 4 x 8, its scales x 0, 4,
-- 8, 12, 16 and y 0, 8, 16, 24, 32
SELECT count(*) AS buckets, count(DISTINCT x1) AS columns, count(DISTINCT y1) AS rows,
	   min(x2 - x1) AS width, min(y2 - y1) AS height
FROM fixture.nodes('gg_rq') n
WHERE level = 1 AND x2 <= 16 AND y2 <= 32;

CREATE FUNCTION gg_reads(idx text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT festival.stats(idx)->'totals' $$;
CREATE TABLE gg_before (name text PRIMARY KEY, t jsonb);
CREATE FUNCTION gg_mark() RETURNS void
LANGUAGE sql AS $$
	DELETE FROM gg_before;
	INSERT INTO gg_before SELECT name, gg_reads(name) FROM gg_index;
$$;
-- pages read and read submissions since gg_mark(), per index
CREATE FUNCTION gg_io() RETURNS TABLE (name text, pages_read int, read_submissions int, nodes_read int)
LANGUAGE sql AS $$
	SELECT b.name, (gg_reads(b.name)->>'pages_read')::int - (b.t->>'pages_read')::int,
		   (gg_reads(b.name)->>'read_submissions')::int - (b.t->>'read_submissions')::int,
		   (gg_reads(b.name)->>'nodes_visited')::int - (b.t->>'nodes_visited')::int
	FROM gg_before b JOIN gg_index i USING (name) ORDER BY i.ord
$$;

-------------------------------------------------------------------------------
-- A point search (§3.1): the root scales in memory, one sub-directory, one
-- bucket: 2 pages, 2 submissions; an insert reads the same two
-------------------------------------------------------------------------------
SELECT festival.close(name) FROM gg_index ORDER BY ord;
-- the first use after an open reads the root page to make the copy
SELECT gg_mark();
SELECT name, (SELECT count(*) FROM festival.query(name, 'POINT(10.5 10.5)')) AS found FROM gg_index ORDER BY ord;
SELECT * FROM gg_io();
SELECT gg_mark();
SELECT count(*) AS found FROM festival.query('gg_rq', 'POINT(10.5 10.5)');
SELECT * FROM gg_io() WHERE name = 'gg_rq';
SELECT gg_mark();
SELECT festival.insert('gg_rq', 100000, 'POINT(10.25 10.25)') AS inserted,
	   festival.delete('gg_rq', 100000, 'POINT(10.25 10.25)') AS deleted;
SELECT * FROM gg_io() WHERE name = 'gg_rq';

-------------------------------------------------------------------------------
-- Window queries (Alg. 6, Table 3.4).  The window [0.2, 0.2, 40.1, 20.3]
-- meets 3 sub-directories (x 0-16, 16-32, 32-48; y 0-32) and in them
-- 4 x 3 + 4 x 3 + 3 x 3 = 33 buckets (columns up to x 44, rows up to y 24):
--   RQ, page at a time: 3 + 33 = 36 pages in 36 submissions;
--   P-RQ, the thesis's buffers: one group of the 3 sub-directories, then
--     one group of buckets in each: 1 + 3 = 4 submissions;
--   P-RQ with DPB 2 and LBB 5: ceil(3 / 2) = 2 groups of sub-directories,
--     then next-fit groups of 5 buckets in each, ceil(12 / 5) + ceil(12 /
--     5) + ceil(9 / 5) = 3 + 3 + 2: 2 + 8 = 10 submissions;
-- every one 36 pages, and the answers are brute force's (33 x 32 points
-- would be 1056; the window holds 40 x 20 = 800 of them).
-------------------------------------------------------------------------------
SELECT gg_mark();
SELECT name, (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(0.2, 0.2, 40.1, 20.3))) AS found,
	   (SELECT count(*) FROM gg_src WHERE ST_Intersects(geom, ST_MakeEnvelope(0.2, 0.2, 40.1, 20.3))) AS brute_force
FROM gg_index ORDER BY ord;
SELECT * FROM gg_io();

-------------------------------------------------------------------------------
-- Group point queries (Alg. 8, Table 3.6): 10 points in 10 buckets, 4 of
-- sub-directory A (x 0-16), 3 of B (16-32), 3 of C (32-48), in that order:
--   separate point queries: 10 x 2 = 20 pages in 20 submissions;
--   the thesis's buffers: one group of the 3 sub-directories, one of the
--     10 buckets across them: 2 submissions (Table 3.6: two per group),
--     3 + 10 = 13 pages;
--   DPB 2 and LBB 5: sub-directories A and B (1), their 7 buckets in next-
--     fit groups of 5 (2), then C (1) and its 3 buckets (1): 5 submissions,
--     13 pages.
-------------------------------------------------------------------------------
CREATE TABLE gg_group AS
SELECT ARRAY['POINT(1.5 1.5)', 'POINT(5.5 1.5)', 'POINT(9.5 9.5)', 'POINT(13.5 25.5)',
			 'POINT(17.5 1.5)', 'POINT(21.5 9.5)', 'POINT(29.5 30.5)',
			 'POINT(33.5 1.5)', 'POINT(37.5 17.5)', 'POINT(45.5 31.5)']::geometry[] AS pts;
SELECT gg_mark();
SELECT sum((SELECT count(*) FROM festival.query('gg_rq', p))) AS separate_found
FROM unnest((SELECT pts FROM gg_group)) p;
SELECT name, (SELECT count(*) FROM festival.query_batch(name, (SELECT pts FROM gg_group))) AS group_found
FROM gg_index WHERE name <> 'gg_rq' ORDER BY ord;
SELECT * FROM gg_io();

-------------------------------------------------------------------------------
-- kNN (Alg. 7, Table 3.5): k = 40 at the stored point (6.5, 12.5), in the
-- bucket x 4-8, y 8-16 (ring 0) of sub-directory A (ring 0 at the root).
-- By hand: the lattice points within distance r of it number 1, 5, 9, 13,
-- 21, 25, 29, 37, 45 for r^2 = 0, 1, 2, 4, 5, 8, 9, 10, 13: the 40th
-- neighbour is at sqrt(13).  Ring 0's 32 points leave the heap short of
-- 40, so all 8 buckets of ring 1 are queued; nearest first they are the
-- right (1.5 away), left (2.5), upper (3.5), upper right (3.81), upper
-- left (4.30), lower (4.5), lower right (4.74) and lower left (5.15)
-- ones.  The right one fills the heap with the k-th at sqrt(13) (the 5
-- nearer points left of x = 4 are in the left one), so the left and upper
-- ones are entered and the other 5 pruned; the rings then stop (the gap
-- to ring 1's border, 12 - 6.5 = 5.5, is above sqrt(13)), and so do the
-- root's (16 - 6.5 = 9.5).
--   knn_prefetch none: sub-directory, bucket, then 3 buckets one by one:
--     5 pages in 5 submissions;
--   data, the thesis's buffers: ring 1's 8 buckets in one group: 1 + 1 +
--     1 = 3 submissions, 1 + 1 + 8 = 10 pages (5 read for nothing);
--   data, LBB 5: the 5 nearest in one group, the others pruned before a
--     second group forms: 3 submissions, 7 pages.
-------------------------------------------------------------------------------
SELECT gg_mark();
SELECT name, (SELECT array_agg(id ORDER BY id) FROM festival.knn(name, 'POINT(6.5 12.5)', 40))
			 = (SELECT array_agg(id ORDER BY id)
				FROM (SELECT id FROM gg_src ORDER BY ST_Distance(geom, 'POINT(6.5 12.5)'), id LIMIT 40) s) AS knn_right
FROM gg_index ORDER BY ord;
SELECT * FROM gg_io();

-------------------------------------------------------------------------------
-- Splits and merges update the scales and grid arrays.  Two buckets of
-- sub-directory A (x 0-16, y 0-32) each get 10 more points and split (42
-- points: halved at y = 4 and y = 12): A holds 18 regions, more than 17,
-- and splits at y = 16 (its own region's first halving on y), which the
-- root scales gain: a 4 x 3 root grid array of 9 sub-directories.  Deleting
-- every point of A merges its buckets back, then its two halves (each
-- left with one region), and the root y-line 16, no longer used, goes:
-- 4 x 2 again.  check() (which verifies every page's scales and grid
-- array) is clean throughout, and the answers are brute force's.
-------------------------------------------------------------------------------
CREATE TABLE gg_more AS
SELECT 200000 + k AS id, ST_MakePoint(0.25 + (k % 5) * 0.5, 0.25 + (k / 5) * 0.5) AS geom FROM generate_series(0, 9) k
UNION ALL
SELECT 200100 + k, ST_MakePoint(8.25 + (k % 5) * 0.5, 8.25 + (k / 5) * 0.5) FROM generate_series(0, 9) k;
SELECT name, count(*) FILTER (WHERE festival.insert(name, m.id, m.geom)) AS inserted
FROM gg_index, gg_more m GROUP BY ord, name ORDER BY ord;
INSERT INTO gg_src SELECT * FROM gg_more;
SELECT name, d->>'root_sub_directories' AS subdirs, d->>'root_grid_columns' AS columns,
	   d->>'root_grid_rows' AS rows,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows,
	   fixture.extent_wrong(name, 'gg_src', ST_MakeEnvelope(0, 0, 64, 64)) AS wrong
FROM gg_index, LATERAL (SELECT festival.stats(name)->'config'->'derived' AS d) x ORDER BY ord;
SELECT name, count(*) FILTER (WHERE festival.delete(name, s.id, s.geom)) AS deleted
FROM gg_index, gg_src s WHERE ST_Intersects(s.geom, ST_MakeEnvelope(0, 0, 15.9, 31.9))
GROUP BY ord, name ORDER BY ord;
DELETE FROM gg_src WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 15.9, 31.9));
SELECT name, d->>'root_sub_directories' AS subdirs, d->>'root_grid_columns' AS columns,
	   d->>'root_grid_rows' AS rows,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows,
	   fixture.extent_wrong(name, 'gg_src', ST_MakeEnvelope(0, 0, 64, 64)) AS wrong
FROM gg_index, LATERAL (SELECT festival.stats(name)->'config'->'derived' AS d) x ORDER BY ord;
-- the emptied sub-directory is one page with one empty bucket
SELECT count(*) AS regions, min(x2 - x1) AS width, min(y2 - y1) AS height
FROM fixture.nodes('gg_rq') n
WHERE level = 1 AND x2 <= 16 AND y2 <= 32;

-------------------------------------------------------------------------------
-- The root directory in memory cannot go stale.  Two empty indices take
-- region A's 512 lattice points and the 20 others one at a time, in the
-- same order (so the same pages).  On gg_twin, the insert that splits the
-- one sub-directory is found; on gg_fault it fails at its first page write
-- (ENOSPC, a page that extends the file: the file is left as it was),
-- after the split was made in memory.  The handle is reloaded and the root
-- directory made again from the file; the point is inserted again, the
-- rest follow, and the answers are brute force's, check() is clean, and
-- the root directory is gg_twin's.
-------------------------------------------------------------------------------
CREATE TABLE gg_back AS
SELECT 64 * j + i AS id, ST_MakePoint(i + 0.5, j + 0.5) AS geom
FROM generate_series(0, 15) i, generate_series(0, 31) j
UNION ALL SELECT * FROM gg_more;
CREATE TABLE gg_fault_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
SELECT festival.create_index('gg_twin', 'gridfile', 'gg_aio', '{"page_size": 1024, "extent": [0, 0, 64, 64]}') > 0 AS created,
	   festival.create_index('gg_fault', 'gridfile', 'gg_aio', '{"page_size": 1024, "extent": [0, 0, 64, 64]}',
							 'gg_fault_src', 'id', 'geom') > 0 AS created_fault;
-- the insert that splits the sub-directory, in id order
CREATE TABLE gg_split_at (id bigint);
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT * FROM gg_back ORDER BY id LOOP
		PERFORM festival.insert('gg_twin', r.id, r.geom);
		IF festival.stats('gg_twin')->'config'->'derived'->>'root_sub_directories' <> '1' THEN
			INSERT INTO gg_split_at VALUES (r.id);
			EXIT;
		END IF;
	END LOOP;
END $$;
SELECT count(*) FILTER (WHERE festival.insert('gg_twin', b.id, b.geom)) AS twin_rest
FROM gg_back b WHERE b.id > (SELECT id FROM gg_split_at);
SELECT count(*) FILTER (WHERE festival.insert('gg_fault', b.id, b.geom)) AS inserted_before
FROM gg_back b WHERE b.id < (SELECT id FROM gg_split_at);
SELECT festival.inject_fault('gg_fault', 'write', 0, 'ENOSPC') IS NULL AS armed;
SELECT fixture.sqlstate_of(format('SELECT festival.insert(%L, %s, %L)', 'gg_fault', b.id, b.geom)) AS split_insert
FROM gg_back b WHERE b.id = (SELECT id FROM gg_split_at);
SELECT count(*) FILTER (WHERE festival.insert('gg_fault', b.id, b.geom)) AS inserted_after
FROM gg_back b WHERE b.id >= (SELECT id FROM gg_split_at);
INSERT INTO gg_fault_src SELECT * FROM gg_back;
SELECT n, d->>'root_sub_directories' AS subdirs, d->>'root_grid_columns' AS columns,
	   d->>'root_grid_rows' AS rows,
	   (SELECT count(*) FROM festival.check(n)) AS check_rows,
	   fixture.extent_wrong(n, 'gg_fault_src', ST_MakeEnvelope(0, 0, 64, 64)) AS wrong
FROM unnest(ARRAY['gg_twin', 'gg_fault']) n, LATERAL (SELECT festival.stats(n)->'config'->'derived' AS d) x;
SELECT count(*) AS different_regions
FROM ((SELECT level, x1, y1, x2, y2 FROM fixture.nodes('gg_twin') EXCEPT ALL SELECT level, x1, y1, x2, y2 FROM fixture.nodes('gg_fault'))
	  UNION ALL
	  (SELECT level, x1, y1, x2, y2 FROM fixture.nodes('gg_fault') EXCEPT ALL SELECT level, x1, y1, x2, y2 FROM fixture.nodes('gg_twin'))) d;

-------------------------------------------------------------------------------
-- LB-Grid (§3.4) by hand: 1 kB pages hold 31 records, a bucket 28 points.
-- 28 points inserted one by one: a marker and 28 records in the first log
-- page P1.  The 29th: the bucket is full, so it is read (P1) and halved at
-- x = 32 (15 points left, 14 right), its two markers and 29 records (31,
-- P1 cannot take them) compacted into a new page P2, P1 freed.  One more
-- point into the left bucket goes to a new working page P3.  So the left
-- bucket's list is P2, P3 and the right one's P2; the working page P3 is
-- in memory, so reading the left bucket reads P2 only.
--   a window over both buckets: RQ reads the sub-directory, then each
--     bucket's P2 on its own: 3 pages, 3 submissions; P-RQ: the
--     sub-directory, then one group of both buckets, P2 once: 2 pages, 2
--     submissions;
--   a delete (Alg. 3) reads no log page: the sub-directory only, and
--     appends its record to P3 (with delete_check 'read' the bucket is
--     read first: P2 too);
--   the delete that leaves the left bucket at 8 points (30 % of 28) merges
--     it with the right one (22 points fit one bucket): both are read as
--     one group, P2 once.
-------------------------------------------------------------------------------
CREATE TABLE gg_lb_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, options jsonb NOT NULL);
INSERT INTO gg_lb_index VALUES
	(1, 'gg_lb_rq', '{"page_size": 1024, "extent": [0, 0, 64, 64]}'),
	(2, 'gg_lb_prq', '{"page_size": 1024, "extent": [0, 0, 64, 64], "range_algorithm": "p-rq"}'),
	(3, 'gg_lb_read', '{"page_size": 1024, "extent": [0, 0, 64, 64], "delete_check": "read"}');
SELECT name, festival.create_index(name, 'lbgrid', 'gg_aio', options) > 0 AS created FROM gg_lb_index ORDER BY ord;
CREATE TABLE gg_lb_pts AS
SELECT k AS id, ST_MakePoint(CASE WHEN k < 15 THEN 2 * k + 0.5 ELSE 32 + 2 * (k - 15) + 0.5 END, 10.5) AS geom
FROM generate_series(0, 28) k
UNION ALL SELECT 29, 'POINT(1.25 20.5)'::geometry;
SELECT name, count(*) FILTER (WHERE festival.insert(name, p.id, p.geom)) AS inserted
FROM gg_lb_index, (SELECT * FROM gg_lb_pts ORDER BY id) p GROUP BY ord, name ORDER BY ord;
SELECT name, festival.stats(name)->'config'->'derived'->>'logical_buckets' AS buckets,
	   festival.stats(name)->'config'->'derived'->>'log_pages' AS log_pages,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM gg_lb_index ORDER BY ord;
CREATE FUNCTION gg_lb_io(idx text, before jsonb) RETURNS TABLE (log_pages_read int, pages_read int, read_submissions int)
LANGUAGE sql AS $$
	SELECT coalesce((gg_reads(idx)->'reads_per_level'->>'0')::int, 0) - coalesce((before->'reads_per_level'->>'0')::int, 0),
		   (gg_reads(idx)->>'pages_read')::int - (before->>'pages_read')::int,
		   (gg_reads(idx)->>'read_submissions')::int - (before->>'read_submissions')::int
$$;
CREATE TABLE gg_lb_before AS SELECT name, gg_reads(name) AS t FROM gg_lb_index;
SELECT name, (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(0, 0, 64, 64))) AS found
FROM gg_lb_index WHERE name IN ('gg_lb_rq', 'gg_lb_prq') ORDER BY ord;
SELECT i.name, io.*
FROM gg_lb_index i JOIN gg_lb_before b USING (name), LATERAL gg_lb_io(i.name, b.t) io
WHERE i.name IN ('gg_lb_rq', 'gg_lb_prq') ORDER BY i.ord;
-- Alg. 3: a delete reads the sub-directory only (delete_check 'read': and
-- the bucket), and writes one page, the working page
DELETE FROM gg_lb_before;
INSERT INTO gg_lb_before SELECT name, gg_reads(name) FROM gg_lb_index;
SELECT name, festival.delete(name, 20, 'POINT(42.5 10.5)') AS deleted FROM gg_lb_index ORDER BY ord;
SELECT i.name, io.*,
	   (gg_reads(i.name)->>'nodes_written')::int - (b.t->>'nodes_written')::int AS nodes_written
FROM gg_lb_index i JOIN gg_lb_before b USING (name), LATERAL gg_lb_io(i.name, b.t) io ORDER BY i.ord;
-- 8 deletes leave the left bucket with 8 points: the last one merges the
-- two buckets, reading both as one group (P2; P3 is in memory)
SELECT name, count(*) FILTER (WHERE festival.delete(name, p.id, p.geom)) AS deleted
FROM gg_lb_index, (SELECT * FROM gg_lb_pts WHERE id BETWEEN 0 AND 6 ORDER BY id) p
GROUP BY ord, name ORDER BY ord;
DELETE FROM gg_lb_before;
INSERT INTO gg_lb_before SELECT name, gg_reads(name) FROM gg_lb_index;
SELECT name, festival.delete(name, 7, 'POINT(14.5 10.5)') AS deleted,
	   festival.stats(name)->'config'->'derived'->>'logical_buckets' AS buckets
FROM gg_lb_index ORDER BY ord;
SELECT i.name, io.*
FROM gg_lb_index i JOIN gg_lb_before b USING (name), LATERAL gg_lb_io(i.name, b.t) io ORDER BY i.ord;
SELECT name, (SELECT count(*) FROM festival.check(name)) AS check_rows,
	   (SELECT array_agg(id ORDER BY id) FROM festival.query(name, ST_MakeEnvelope(0, 0, 64, 64))) AS left_over,
	   festival.stats(name)->>'entries' AS entries
FROM gg_lb_index ORDER BY ord;

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(festival.drop_index(name)) AS dropped
FROM (SELECT name FROM gg_index UNION ALL SELECT name FROM gg_lb_index
	  UNION ALL VALUES ('gg_twin'), ('gg_fault')) n;
SELECT festival.drop_device('gg_aio');
DROP FUNCTION gg_io(), gg_mark(), gg_lb_io(text, jsonb), gg_reads(text);
DROP TABLE gg_src, gg_index, gg_before, gg_group, gg_more, gg_back, gg_fault_src, gg_split_at,
	gg_lb_index, gg_lb_pts, gg_lb_before;
