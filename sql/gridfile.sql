--
-- gridfile: the grid file for flash (GFFM; structure 'gridfile', points
-- only) under every framework (none, FAST, eFIND) and under a page cache.
--
-- All four indices receive the same modifications in the same order: a
-- build, inserts, deletes emptying whole regions (so that buckets and
-- directory pages merge with their buddies), updates, deletes of nearly
-- everything and reinserts, a flush, a close and reopen, and a new
-- session.  After every phase:
--   - festival.query for every predicate and the point query geometries
--     (fx_query qid >= 100, and the region-border queries added below)
--     equals PostGIS brute force over gf_src, and so does 'dwithin' at
--     distances 0, 2.5 and 15;
--   - festival.knn (k = 1, 10, 100, at points with ties) returns the ids
--     and distances of PostGIS's ORDER BY ST_Distance(geom, g), id;
--   - festival.query_batch returns the brute-force answers of each query;
--   - festival.check() returns no rows, and each index holds one entry
--     per point;
--   - the indices under FAST and eFIND and under the cache equal the
--     write-through one node by node (eFIND returns merged nodes in the
--     structure's entry order: (x, y, id) in buckets, region order above).
--
-- The data, the phases and the checks after each are the helpers
-- fixture.grid_points, grid_queries, grid_phase and grid_verify
-- (sql/fixture_helpers.sql), which sql/lbgrid.sql shares.
--
-- Pages of 1024 bytes (41 points per bucket, 17 regions per directory
-- page) make indices of 3 levels (buckets, sub-directories, a root
-- page); the extent [0, 0, 300, 300] puts halving lines at x = 150,
-- y = 150, x = 75 and 225, y = 75 and 225, ..., where many points lie.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET festival.log_sync = never;

SELECT festival.create_device('gf_dev', io => 'buffered');
-- a batching engine, for the cache clru and P-RQ (one submission per batch)
SELECT festival.create_device('gf_aio', io => 'buffered', engine => 'libaio');

-- the data (fixture.grid_points): fx_pts (a grid with copies and off-grid
-- points: uniform), a dense cluster, points on halving lines, and 35
-- copies of one point (duplicate-heavy: almost a bucket's worth); gf_later
-- is inserted one at a time after the build, gf_aside keeps what phase 5
-- deletes
CREATE TABLE gf_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
CREATE TABLE gf_later (id bigint PRIMARY KEY, geom geometry NOT NULL);
CREATE TABLE gf_aside (id bigint PRIMARY KEY, geom geometry NOT NULL);
SELECT fixture.grid_points('gf_src', 'gf_later', 35);
SELECT (SELECT count(*) FROM gf_src) AS built_points, (SELECT count(*) FROM gf_later) AS later_points;

-- query geometries on halving lines (qids 921..927, removed at the end)
SELECT fixture.grid_queries(920, 'gf');

-- same_as: the index whose nodes this one's must equal after every phase
CREATE TABLE gf_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, method text NOT NULL,
					   options jsonb NOT NULL, same_as text);
INSERT INTO gf_index VALUES
	(1, 'gf_none', 'insert', '{"page_size": 1024}', NULL),
	(2, 'gf_fast', 'insert', '{"page_size": 1024, "framework": "fast", "buffer_size": 16384,
		"flushing_unit": 4, "flushing_policy": "fast_star"}', 'gf_none'),
	(3, 'gf_efind', 'insert', '{"page_size": 1024, "framework": "efind", "buffer_size": 16384,
		"flushing_unit": 4, "flushing_policy": "mhao", "read_buffer_policy": "lru",
		"read_buffer_percent": 20, "temporal_control": "both"}', 'gf_none'),
	(4, 'gf_cache', 'insert', '{"page_size": 1024, "cache": "s2q", "cache_size": 20480}', 'gf_none'),
	-- bulk loaded (its pages differ from the inserted ones': compared with
	-- none)
	(5, 'gf_bulk_efind', 'bulk', '{"page_size": 1024, "framework": "efind", "buffer_size": 16384,
		"flushing_unit": 3}', NULL),
	-- the thesis's hot/cold buffer: 24 pages, cold lists of 3, 18 hot
	-- pages (13 directory, 5 data)
	(6, 'gf_clru', 'insert', '{"page_size": 1024, "cache": "clru", "cache_size": 24576,
		"cache_clru_pages": 3, "cache_directory_percent": 75}', 'gf_none'),
	-- window queries by the thesis's batched P-RQ (Alg. 6)
	(7, 'gf_prq', 'insert', '{"page_size": 1024, "range_algorithm": "p-rq"}', 'gf_none');

-- the extent is taken from the source
SELECT name, festival.create_index(name, 'gridfile', CASE WHEN name IN ('gf_clru', 'gf_prq') THEN 'gf_aio' ELSE 'gf_dev' END,
								   options, 'gf_src', 'id', 'geom') > 0 AS created
FROM gf_index ORDER BY ord;
SELECT festival.stats('gf_none')->'config'->'options'->'extent' AS extent,
	   festival.stats('gf_none')->'config'->'derived' AS derived;

-------------------------------------------------------------------------------
-- Verification after each phase
-------------------------------------------------------------------------------
CREATE TABLE gf_qids AS SELECT array_agg(qid ORDER BY qid) AS qids FROM fx_query WHERE qid >= 100;

-- kNN query points: grid points and cell centres of fx_pts (ties at equal
-- distances), the centre copies, a point outside the extent
CREATE TABLE gf_knn_query (g geometry);
INSERT INTO gf_knn_query VALUES ('POINT(45 45)'), ('POINT(150 150)'), ('POINT(70 30)'),
	('POINT(-10 310)'), ('POINT(225 75)');

CREATE TABLE gf_brute (pred text, qid int, id bigint);

-- every index against brute force over gf_src (fixture.grid_verify: every
-- predicate, dwithin at 0, 2.5 and 15, kNN at the gf_knn_query points,
-- query_batch, check(), entry count, and node by node against gf_none)
CREATE FUNCTION gf_verify(phase text) RETURNS SETOF fixture.grid_check
LANGUAGE sql AS $$
	SELECT * FROM fixture.grid_verify(phase, 'gf_index', 'gf_src', 'gf_brute', (SELECT qids FROM gf_qids),
									  'nodes', ARRAY[0, 2.5, 15], ARRAY(SELECT g FROM gf_knn_query))
$$;

-------------------------------------------------------------------------------
-- Phase 1: build (one point at a time, and bulk loaded)
-------------------------------------------------------------------------------
SELECT name, festival.build(name, method) AS built FROM gf_index ORDER BY ord;
-- the loader's regions are those insertion reaches here: buddy splits of
-- overflowing regions only (same buckets, same points)
SELECT count(*) AS different_buckets
FROM ((SELECT level, ref, x1, y1, x2, y2 FROM fixture.nodes('gf_bulk_efind') WHERE level <= 1
	   EXCEPT ALL SELECT level, ref, x1, y1, x2, y2 FROM fixture.nodes('gf_none') WHERE level <= 1)
	  UNION ALL
	  (SELECT level, ref, x1, y1, x2, y2 FROM fixture.nodes('gf_none') WHERE level <= 1
	   EXCEPT ALL SELECT level, ref, x1, y1, x2, y2 FROM fixture.nodes('gf_bulk_efind') WHERE level <= 1)) d;
SELECT * FROM gf_verify('build');

-- the thesis's count (Fevgas 2019, §3.3: a point search costs one
-- sub-directory and one bucket read, the root directory being in RAM):
-- one node per level below the root, for a point inside a bucket's region
-- (the root directory in memory was made by the build); under the cache,
-- a repeated search reads no page at all
CREATE FUNCTION gf_reads(idx text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT festival.stats(idx)->'totals' $$;
CREATE TABLE gf_before AS SELECT name, gf_reads(name) AS t FROM gf_index;
SELECT count(*) AS found FROM festival.query('gf_none', 'POINT(40 40)');
SELECT (gf_reads('gf_none')->>'nodes_visited')::int - (b.t->>'nodes_visited')::int AS nodes_read,
	   (SELECT jsonb_object_agg(k, (gf_reads('gf_none')->'reads_per_level'->>k)::int
								   - coalesce((b.t->'reads_per_level'->>k)::int, 0))
		FROM jsonb_object_keys(gf_reads('gf_none')->'reads_per_level') k) AS reads_per_level,
	   (festival.stats('gf_none')->>'height')::int AS height
FROM gf_before b WHERE b.name = 'gf_none';
SELECT count(*) AS found FROM festival.query('gf_cache', 'POINT(40 40)');
TRUNCATE gf_before;
INSERT INTO gf_before SELECT name, gf_reads(name) FROM gf_index;
SELECT count(*) AS found FROM festival.query('gf_cache', 'POINT(40 40)');
SELECT (gf_reads('gf_cache')->>'nodes_visited')::int - (b.t->>'nodes_visited')::int AS nodes_read,
	   (gf_reads('gf_cache')->>'pages_read')::int - (b.t->>'pages_read')::int AS device_reads
FROM gf_before b WHERE b.name = 'gf_cache';

-- under clru, dirty pages reach the device in batches (a full cold list
-- of 3 pages, and the sync at the end of the build): under libaio, a
-- batch is one submission
SELECT (t->>'cache_writebacks')::int > 2 * (t->>'write_submissions')::int AS batched,
	   (t->>'cache_writebacks')::int <= (t->>'pages_written')::int AS counted
FROM gf_before WHERE name = 'gf_clru';

-- RQ against P-RQ (Fevgas 2019, §3.5.1): the same window reads the same
-- pages of the same index; RQ (sync engine) one submission per page, P-RQ
-- (libaio, the thesis's read buffers) one for the sub-directories, then
-- one for the buckets of each
TRUNCATE gf_before;
INSERT INTO gf_before SELECT name, gf_reads(name) FROM gf_index;
SELECT (SELECT count(*) FROM festival.query('gf_none', ST_MakeEnvelope(20, 20, 280, 180))) AS rq_found,
	   (SELECT count(*) FROM festival.query('gf_prq', ST_MakeEnvelope(20, 20, 280, 180))) AS prq_found;
SELECT b.name, (gf_reads(b.name)->>'pages_read')::int - (b.t->>'pages_read')::int AS pages_read,
	   (gf_reads(b.name)->>'read_submissions')::int - (b.t->>'read_submissions')::int AS read_submissions
FROM gf_before b JOIN gf_index i USING (name) WHERE b.name IN ('gf_none', 'gf_prq') ORDER BY i.ord;

-- the group point query (Fevgas 2019, §3.5.3, Alg. 8) is festival.query_batch
-- over points: the sub-directories of all the points in one group, then
-- their buckets in one (the thesis's Table 3.6: two submissions a group),
-- where separate point queries read a sub-directory and a bucket for each
-- point (libaio, 20 grid points of fx_pts in different buckets)
CREATE TABLE gf_group AS
SELECT array_agg(ST_MakePoint(10 * (i % 31), 10 * ((i * 7) % 31)) ORDER BY i) AS pts FROM generate_series(0, 19) i;
TRUNCATE gf_before;
INSERT INTO gf_before SELECT name, gf_reads(name) FROM gf_index WHERE name = 'gf_prq';
SELECT count(*) AS group_found,
	   (SELECT count(*) FROM gf_src s CROSS JOIN unnest((SELECT pts FROM gf_group)) p
		WHERE ST_Intersects(s.geom, p)) AS brute_force
FROM festival.query_batch('gf_prq', (SELECT pts FROM gf_group));
SELECT (gf_reads('gf_prq')->>'pages_read')::int - (t->>'pages_read')::int AS group_pages_read,
	   (gf_reads('gf_prq')->>'read_submissions')::int - (t->>'read_submissions')::int AS group_submissions
FROM gf_before;
TRUNCATE gf_before;
INSERT INTO gf_before SELECT name, gf_reads(name) FROM gf_index WHERE name = 'gf_prq';
SELECT sum((SELECT count(*) FROM festival.query('gf_prq', p))) AS separate_found
FROM unnest((SELECT pts FROM gf_group)) p;
SELECT (gf_reads('gf_prq')->>'pages_read')::int - (t->>'pages_read')::int AS separate_pages_read,
	   (gf_reads('gf_prq')->>'read_submissions')::int - (t->>'read_submissions')::int AS separate_submissions
FROM gf_before;

-------------------------------------------------------------------------------
-- Phase 2: inserts (one at a time, the same order for every index)
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('insert', 'gf_index', 'gf_src', 'gf_later', 'gf_aside');
SELECT * FROM gf_verify('insert');

-------------------------------------------------------------------------------
-- Phase 3: deletes: everything in the lower left quarter [0, 150)^2 but
-- the cluster, and every other point elsewhere: buckets merge
-------------------------------------------------------------------------------
CREATE TABLE gf_splits AS SELECT name, (gf_reads(name)->>'nodes_freed')::int AS freed FROM gf_index;
SELECT * FROM fixture.grid_phase('delete', 'gf_index', 'gf_src', 'gf_later', 'gf_aside');
-- merges freed pages
SELECT s.name, (gf_reads(s.name)->>'nodes_freed')::int - s.freed > 10 AS merged
FROM gf_splits s JOIN gf_index i USING (name) ORDER BY i.ord;
-- deleting what is not there
SELECT festival.delete('gf_none', 1, 'POINT(0 0)') AS deleted_again,
	   festival.delete('gf_none', 3, 'POINT(500 500)') AS outside_extent;
SELECT * FROM gf_verify('delete');

-------------------------------------------------------------------------------
-- Phase 4: updates: points move across regions, some onto halving lines
-- and into the emptied quarter
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('update', 'gf_index', 'gf_src', 'gf_later', 'gf_aside');
SELECT * FROM gf_verify('update');

-------------------------------------------------------------------------------
-- Phase 5: delete nearly everything (the index shrinks to few levels),
-- then insert again into the emptied space
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('delete most', 'gf_index', 'gf_src', 'gf_later', 'gf_aside');
SELECT * FROM gf_verify('delete most');
SELECT * FROM fixture.grid_phase('reinsert', 'gf_index', 'gf_src', 'gf_later', 'gf_aside');
SELECT * FROM gf_verify('reinsert');

-------------------------------------------------------------------------------
-- Phase 6: flush, close and reopen, then a new session
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('flush', 'gf_index', 'gf_src', 'gf_later', 'gf_aside');
SELECT * FROM gf_verify('flush');
SELECT * FROM fixture.grid_phase('close', 'gf_index', 'gf_src', 'gf_later', 'gf_aside');
SELECT * FROM gf_verify('reopen');
\c
SET client_min_messages = warning;
SET festival.log_sync = never;
SELECT * FROM gf_verify('new session');

-------------------------------------------------------------------------------
-- Dumps: each region is a polygon covering the nodes below it, and the
-- regions of a directory page tile its own region
-------------------------------------------------------------------------------
-- (fixture.grid_regions: the regions of the children of each directory
-- page have, one by one and as their union, the area of the page's own:
-- no gap, no overlap)
SELECT r.* FROM fixture.grid_regions(ARRAY(SELECT name FROM gf_index ORDER BY ord)) r;

-------------------------------------------------------------------------------
-- Refused calls
-------------------------------------------------------------------------------
\set VERBOSITY default
-- a geometry that is not a point, inserted and built
SELECT festival.insert('gf_none', 9001, 'LINESTRING(10 10, 20 20)');
CREATE TABLE gf_mixed (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO gf_mixed VALUES (1, 'POINT(1 1)'), (2, 'POLYGON((0 0, 5 0, 5 5, 0 0))');
SELECT festival.create_index('gf_mixed_idx', 'gridfile', 'gf_dev', '{}', 'gf_mixed', 'id', 'geom') > 0 AS created;
SELECT festival.build('gf_mixed_idx');
-- the same through the bulk loader, and a method it does not have
SELECT festival.build('gf_mixed_idx', 'bulk');
SELECT festival.build('gf_mixed_idx', 'str');
-- NULLs
SELECT festival.insert('gf_none', 9003, NULL);
SELECT festival.insert('gf_none', NULL, 'POINT(1 1)');
-- a point outside the extent, inserted and built
SELECT festival.insert('gf_none', 9002, 'POINT(300.5 10)');
CREATE TABLE gf_out (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO gf_out VALUES (1, 'POINT(1 1)'), (2, 'POINT(150 50)');
SELECT festival.create_index('gf_small', 'gridfile', 'gf_dev', '{"extent": [0, 0, 100, 100]}',
							 'gf_out', 'id', 'geom') > 0 AS created;
SELECT festival.build('gf_small');
SELECT festival.build('gf_small', 'bulk');
-- no source and no extent; pages too small
SELECT festival.create_index('gf_noext', 'gridfile', 'gf_dev');
SELECT festival.create_index('gf_tiny', 'gridfile', 'gf_dev', '{"extent": [0, 0, 1, 1], "page_size": 1024, "max_fill": 10}');
-- more copies of one point than a bucket holds (41), and of one grid cell
CREATE TABLE gf_copies AS SELECT i::bigint AS id, 'POINT(5 5)'::geometry AS geom FROM generate_series(1, 60) i;
SELECT festival.create_index('gf_copies_idx', 'gridfile', 'gf_dev', '{"page_size": 1024, "extent": [0, 0, 10, 10]}',
							 'gf_copies', 'id', 'geom') > 0 AS created;
SELECT festival.build('gf_copies_idx');
SELECT festival.build('gf_copies_idx', 'bulk');
\set VERBOSITY terse
-- the one-at-a-time build failed part-way (the bulk loader refused before
-- writing anything): the index refuses queries until a build finishes
SELECT (festival.stats('gf_copies_idx')->>'height')::int AS height,
	   (SELECT count(*) FROM festival.query('gf_copies_idx', 'POINT(5 5)')) AS copies,
	   (SELECT count(*) FROM festival.check('gf_copies_idx') WHERE message NOT LIKE '%source table%') AS check_rows;
-- the same without a source, one copy at a time
SELECT festival.drop_index('gf_copies_idx');
SELECT festival.create_index('gf_copies_idx', 'gridfile', 'gf_dev', '{"page_size": 1024, "extent": [0, 0, 10, 10]}') > 0 AS created;
-- 41 copies fit, the 42nd is refused, and so is a point of the same
-- cell (1e-12 away on a 10-unit extent: 2^31 cells per axis)
SELECT count(*) FILTER (WHERE festival.insert('gf_copies_idx', id, geom)) AS inserted
FROM gf_copies WHERE id <= 41;
SELECT festival.insert('gf_copies_idx', 42, 'POINT(5 5)');
SELECT festival.insert('gf_copies_idx', 43, 'POINT(5.000000000001 5)');
-- a point of the next cell is taken
SELECT festival.insert('gf_copies_idx', 44, 'POINT(5.00001 5)') AS next_cell,
	   (festival.stats('gf_copies_idx')->>'height')::int AS height,
	   (SELECT count(*) FROM festival.query('gf_copies_idx', 'POINT(5 5)')) AS copies,
	   (SELECT count(*) FROM festival.check('gf_copies_idx')) AS check_rows;
-- tiny pages (9 points per bucket, 4 regions per directory page): two
-- points 1e-5 apart in a full bucket need some 40 halvings, whose regions
-- overflow the sub-directory and the root pages so much that one insertion
-- adds several levels of root pages
SELECT festival.create_index('gf_deep', 'gridfile', 'gf_dev', '{"page_size": 1024, "max_fill": 24, "extent": [0, 0, 10, 10]}') > 0 AS created;
SELECT count(*) FILTER (WHERE festival.insert('gf_deep', i, 'POINT(5 5)')) AS inserted FROM generate_series(1, 9) i;
SELECT festival.insert('gf_deep', 100, 'POINT(5.00001 5)') AS inserted,
	   (festival.stats('gf_deep')->>'height')::int AS height,
	   (SELECT count(*) FROM festival.check('gf_deep')) AS check_rows,
	   (SELECT count(*) FROM festival.query('gf_deep', ST_MakeEnvelope(0, 0, 10, 10))) AS found;
SELECT count(*) FILTER (WHERE festival.insert('gf_deep', 200 + i, ST_MakePoint(5 + i * 1e-6, 5 + i * 1e-6))) AS inserted
FROM generate_series(1, 30) i;
SELECT (festival.stats('gf_deep')->>'height')::int AS height,
	   (SELECT count(*) FROM festival.check('gf_deep')) AS check_rows,
	   (SELECT count(*) FROM festival.query('gf_deep', ST_MakeEnvelope(5, 5, 5.00002, 5.00002))) AS found;
SELECT count(*) FILTER (WHERE festival.delete('gf_deep', i, 'POINT(5 5)')) AS deleted FROM generate_series(1, 9) i;
SELECT count(*) FILTER (WHERE festival.delete('gf_deep', 200 + i, ST_MakePoint(5 + i * 1e-6, 5 + i * 1e-6))) AS deleted
FROM generate_series(1, 30) i;
-- one point left: merges freed pages, but the height stays (a level of
-- root pages goes only when the top root page holds one region; a page
-- whose region is one cut finer on its buddy's side cannot merge), and the
-- index is correct
SELECT (festival.stats('gf_deep')->>'height')::int AS height,
	   (festival.stats('gf_deep')->>'free_pages')::int > 10 AS freed,
	   (SELECT count(*) FROM festival.check('gf_deep')) AS check_rows,
	   (SELECT array_agg(id) FROM festival.query('gf_deep', ST_MakeEnvelope(0, 0, 10, 10))) AS left_over;

-- the refused calls changed nothing
SELECT count(*) AS check_rows, (SELECT count(*) FROM festival.query('gf_none', ST_MakeEnvelope(0, 0, 300, 300))) AS found,
	   (SELECT count(*) FROM gf_src) AS expected
FROM festival.check('gf_none');

-- an index without source, with an awkward extent (lines that are not
-- exact binary fractions): every point, the extent's corners and edges
-- included, is found by a query of its own location and by a window;
-- deleting them all merges everything back into one root bucket
-- (fixture.grid_awkward_extent)
SELECT festival.create_index('gf_free', 'gridfile', 'gf_dev', '{"extent": [-0.3, -1.7, 0.7, 1.1], "page_size": 1024}') > 0 AS created;
SELECT * FROM fixture.grid_awkward_extent('gf_free');

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(festival.drop_index(name)) AS dropped
FROM (SELECT name FROM gf_index
	  UNION ALL VALUES ('gf_mixed_idx'), ('gf_small'), ('gf_copies_idx'), ('gf_free'), ('gf_deep')) n;
SELECT festival.drop_device('gf_dev');
SELECT festival.drop_device('gf_aio');
DELETE FROM fx_query WHERE qid BETWEEN 921 AND 927;
DROP FUNCTION gf_verify(text), gf_reads(text);
DROP TABLE gf_src, gf_later, gf_aside, gf_index, gf_qids, gf_mixed, gf_copies, gf_out,
	gf_knn_query, gf_before, gf_splits, gf_brute, gf_group;
