--
-- lbgrid: the Log-Bucket Grid File (LB-Grid, Fevgas 2019, §3.4; structure
-- 'lbgrid', points only): GFFM's directory over logical buckets kept as
-- records in append-only log pages.
--
-- Three LB-Grid indices (write-through; range_algorithm p-rq on a libaio
-- device; under the cache clru) and a reference R-tree receive the same
-- modifications in the same order: a build, inserts, deletes emptying
-- whole regions (buckets merge), updates, deletes of nearly everything and
-- reinserts, a flush, a close and reopen, and a new session.  After every
-- phase:
--   - festival.query for every predicate and the point query geometries
--     equals PostGIS brute force over lb_src, and so does 'dwithin' at
--     distances 0, 2.5 and 15;
--   - festival.knn (k = 1, 10, 100, at points with ties) returns the ids
--     and distances of PostGIS's ORDER BY ST_Distance(geom, g), id;
--   - festival.query_batch returns the brute-force answers of each query;
--   - festival.check() returns no rows (it replays every bucket and
--     compares the bucket table with a fresh replay of the log pages),
--     and each index holds one entry per point;
--   - each LB-Grid index holds exactly the R-tree's leaf entries.
--
-- The data, the phases and the checks after each are the helpers
-- fixture.grid_points, grid_queries, grid_phase and grid_verify
-- (sql/fixture_helpers.sql), which sql/gridfile.sql shares.
--
-- Pages of 1024 bytes: 31 log records per page, 28 points per logical
-- bucket, 17 regions per directory page; the extent [0, 0, 300, 300] puts
-- halving lines at x = 150, y = 150, x = 75 and 225, ..., where many
-- points lie.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET festival.log_sync = never;

SELECT festival.create_device('lb_dev', io => 'buffered');
SELECT festival.create_device('lb_aio', io => 'buffered', engine => 'libaio');

-- the data (fixture.grid_points): uniform (fx_pts: a grid with copies), a
-- dense cluster, points on halving lines, 25 copies of one point
-- (duplicate-heavy: almost a bucket); lb_later is inserted after the
-- build, lb_aside keeps what phase 5 deletes
CREATE TABLE lb_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
CREATE TABLE lb_later (id bigint PRIMARY KEY, geom geometry NOT NULL);
CREATE TABLE lb_aside (id bigint PRIMARY KEY, geom geometry NOT NULL);
SELECT fixture.grid_points('lb_src', 'lb_later', 25);

-- query geometries on halving lines (qids 931..937, removed at the end)
SELECT fixture.grid_queries(930, 'lb');

-- same_as: the index whose leaf entries this one's must equal after
-- every phase
CREATE TABLE lb_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, structure text NOT NULL,
					   device text NOT NULL, options jsonb NOT NULL, same_as text);
INSERT INTO lb_index VALUES
	(1, 'lb_none', 'lbgrid', 'lb_dev', '{"page_size": 1024}', 'lb_rtree'),
	(2, 'lb_prq', 'lbgrid', 'lb_aio', '{"page_size": 1024, "range_algorithm": "p-rq"}', 'lb_rtree'),
	(3, 'lb_clru', 'lbgrid', 'lb_aio', '{"page_size": 1024, "cache": "clru", "cache_size": 24576,
		"cache_clru_pages": 3}', 'lb_rtree'),
	(4, 'lb_rtree', 'rtree', 'lb_dev', '{"page_size": 1024}', NULL);
SELECT name, festival.create_index(name, structure, device, options, 'lb_src', 'id', 'geom') > 0 AS created
FROM lb_index ORDER BY ord;
SELECT festival.stats('lb_none')->'config'->'options'->'extent' AS extent,
	   festival.stats('lb_none')->'config'->'derived'->>'bucket_max_entries' AS bucket_max,
	   festival.stats('lb_none')->'config'->'derived'->>'log_records_per_page' AS records_per_page,
	   festival.stats('lb_none')->'config'->'derived'->>'bucket_merge_at_most' AS merge_at_most;

-------------------------------------------------------------------------------
-- Verification after each phase
-------------------------------------------------------------------------------
CREATE TABLE lb_qids AS SELECT array_agg(qid ORDER BY qid) AS qids FROM fx_query WHERE qid >= 100;

CREATE TABLE lb_brute (pred text, qid int, id bigint);

-- every index against brute force over lb_src (fixture.grid_verify: every
-- predicate, dwithin at 0, 2.5 and 15, kNN at grid points and cell centres
-- of fx_pts (ties at equal distances), the centre copies and a point
-- outside the extent, query_batch, check(), entry count, and the leaf
-- entries against the R-tree's; festival.node of an LB-Grid bucket
-- reference, negative, replays the logical bucket)
CREATE FUNCTION lb_verify(phase text) RETURNS SETOF fixture.grid_check
LANGUAGE sql AS $$
	SELECT * FROM fixture.grid_verify(phase, 'lb_index', 'lb_src', 'lb_brute', (SELECT qids FROM lb_qids),
									  'entries', ARRAY[0, 2.5, 15])
$$;

CREATE FUNCTION lb_totals(idx text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT festival.stats(idx)->'totals' $$;
CREATE FUNCTION lb_derived(idx text, key text) RETURNS bigint
LANGUAGE sql AS $$ SELECT (festival.stats(idx)->'config'->'derived'->>key)::bigint $$;

-------------------------------------------------------------------------------
-- Phase 1: build (one point at a time)
-------------------------------------------------------------------------------
SELECT name, festival.build(name) AS built FROM lb_index ORDER BY ord;
SELECT * FROM lb_verify('build');
-- the same bucket regions for every LB-Grid index (one algorithm)
SELECT count(*) FILTER (WHERE lb_derived(name, 'logical_buckets') = lb_derived('lb_none', 'logical_buckets')) AS same_buckets
FROM lb_index WHERE structure = 'lbgrid';

-- Alg. 2: an insert into a bucket that is not full reads no log page (the
-- root and one sub-directory only) and writes the working log page; an
-- insert that fills a bucket beyond its capacity reads it (its log pages,
-- one batch) and splits it
CREATE TABLE lb_before AS SELECT name, lb_totals(name) AS t FROM lb_index;
SELECT festival.insert('lb_none', 8001, 'POINT(1.25 298.75)') AS inserted;
INSERT INTO lb_src VALUES (8001, 'POINT(1.25 298.75)');
SELECT coalesce((lb_totals('lb_none')->'reads_per_level'->>'0')::int, 0)
		 - coalesce((b.t->'reads_per_level'->>'0')::int, 0) AS log_pages_read,
	   (lb_totals('lb_none')->>'nodes_written')::int - (b.t->>'nodes_written')::int AS pages_written
FROM lb_before b WHERE b.name = 'lb_none';
-- fill the bucket of (1, 299) with 40 points: some inserts split it
TRUNCATE lb_before;
INSERT INTO lb_before SELECT name, lb_totals(name) FROM lb_index WHERE name = 'lb_none';
SELECT count(*) FILTER (WHERE festival.insert('lb_none', 8100 + i, ST_MakePoint(1 + i * 0.01, 299 - i * 0.01))) AS inserted
FROM generate_series(1, 40) i;
SELECT (lb_totals('lb_none')->>'splits_leaf')::int - (t->>'splits_leaf')::int AS splits,
	   coalesce((lb_totals('lb_none')->'reads_per_level'->>'0')::int, 0)
		 - coalesce((t->'reads_per_level'->>'0')::int, 0) > 0 AS split_read_log_pages
FROM lb_before;
-- the others get the same points
SELECT i.name, count(*) FILTER (WHERE festival.insert(i.name, 8100 + g, ST_MakePoint(1 + g * 0.01, 299 - g * 0.01))) AS inserted,
	   festival.insert(i.name, 8001, 'POINT(1.25 298.75)') AS first
FROM lb_index i CROSS JOIN generate_series(1, 40) g WHERE i.name <> 'lb_none'
GROUP BY i.ord, i.name ORDER BY i.ord;
INSERT INTO lb_src SELECT 8100 + i, ST_MakePoint(1 + i * 0.01, 299 - i * 0.01) FROM generate_series(1, 40) i;

-- a point search (§3.4.2): one sub-directory and the bucket's log pages,
-- read as one group (the root directory is in memory): under libaio, two
-- read submissions (the point lies on halving lines: it is in one cell,
-- one bucket's)
TRUNCATE lb_before;
INSERT INTO lb_before SELECT name, lb_totals(name) FROM lb_index WHERE name = 'lb_prq';
SELECT count(*) AS found FROM festival.query('lb_prq', 'POINT(150 150)');
SELECT coalesce((lb_totals('lb_prq')->'reads_per_level'->>'0')::int, 0)
		 - coalesce((t->'reads_per_level'->>'0')::int, 0) AS log_pages_read,
	   (lb_totals('lb_prq')->>'pages_read')::int - (t->>'pages_read')::int AS pages_read,
	   (lb_totals('lb_prq')->>'read_submissions')::int - (t->>'read_submissions')::int AS read_submissions
FROM lb_before;

-- RQ against P-RQ: the same answers; P-RQ needs fewer submissions
CREATE TABLE lb_rq AS SELECT name, lb_totals(name) AS t FROM lb_index;
SELECT (SELECT count(*) FROM festival.query('lb_none', ST_MakeEnvelope(20, 20, 280, 180))) AS rq_found,
	   (SELECT count(*) FROM festival.query('lb_prq', ST_MakeEnvelope(20, 20, 280, 180))) AS prq_found;
SELECT ((lb_totals('lb_prq')->>'read_submissions')::int - (p.t->>'read_submissions')::int) * 3
		 < (lb_totals('lb_none')->>'read_submissions')::int - (n.t->>'read_submissions')::int AS prq_fewer_submissions
FROM lb_rq p, lb_rq n WHERE p.name = 'lb_prq' AND n.name = 'lb_none';

-------------------------------------------------------------------------------
-- Phase 2: inserts
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('insert', 'lb_index', 'lb_src', 'lb_later', 'lb_aside');
SELECT * FROM lb_verify('insert');
-- stale log pages are freed (check() reports any log page no bucket's
-- list holds): splits freed some
SELECT (lb_totals('lb_none')->>'nodes_freed')::int > 0 AS stale_pages_freed;

-------------------------------------------------------------------------------
-- Phase 3: deletes: the lower left quarter but the cluster, and every
-- other point: buckets at <= 30 % merge with their buddies
-------------------------------------------------------------------------------
CREATE TABLE lb_merge AS SELECT name, lb_derived(name, 'logical_buckets') AS buckets FROM lb_index WHERE structure = 'lbgrid';
SELECT * FROM fixture.grid_phase('delete', 'lb_index', 'lb_src', 'lb_later', 'lb_aside');
SELECT m.name, lb_derived(m.name, 'logical_buckets') < m.buckets AS merged
FROM lb_merge m JOIN lb_index i USING (name) ORDER BY i.ord;
-- deleting what is not there (absent id, outside the extent, a line):
-- the thesis's delete (Alg. 3, delete_check 'none') appends its record
-- without reading the bucket, so it cannot tell an absent entry from a
-- present one and says true (the record removes nothing, and check()
-- counts the entries again); outside the extent and a line are refused
-- by the lookup
SELECT festival.delete('lb_none', 1, 'POINT(0 0)') AS deleted_again,
	   festival.delete('lb_none', 3, 'POINT(500 500)') AS outside_extent,
	   festival.delete('lb_none', 3, 'LINESTRING(0 0, 1 1)') AS not_a_point;
SELECT * FROM lb_verify('delete');

-------------------------------------------------------------------------------
-- Phase 4: updates (a delete record and an insert record each)
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('update', 'lb_index', 'lb_src', 'lb_later', 'lb_aside');
SELECT * FROM lb_verify('update');

-------------------------------------------------------------------------------
-- Phase 5: delete nearly everything, then insert again
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('delete most', 'lb_index', 'lb_src', 'lb_later', 'lb_aside');
SELECT * FROM lb_verify('delete most');
SELECT lb_derived('lb_none', 'logical_buckets') AS buckets,
	   (SELECT buckets FROM lb_merge WHERE name = 'lb_none') AS buckets_before_deletes;
SELECT * FROM fixture.grid_phase('reinsert', 'lb_index', 'lb_src', 'lb_later', 'lb_aside');
SELECT * FROM lb_verify('reinsert');

-------------------------------------------------------------------------------
-- Phase 6: flush, close and reopen (the bucket table is rebuilt from the
-- log pages), a new session
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('flush', 'lb_index', 'lb_src', 'lb_later', 'lb_aside');
SELECT * FROM lb_verify('flush');
CREATE TABLE lb_shape AS SELECT name, lb_derived(name, 'logical_buckets') AS buckets,
	lb_derived(name, 'log_pages') AS pages FROM lb_index WHERE structure = 'lbgrid';
SELECT * FROM fixture.grid_phase('close', 'lb_index', 'lb_src', 'lb_later', 'lb_aside');
SELECT * FROM lb_verify('reopen');
-- the bucket table rebuilt from the log pages is the one the session had
SELECT s.name, lb_derived(s.name, 'logical_buckets') = s.buckets AND lb_derived(s.name, 'log_pages') = s.pages AS same_table
FROM lb_shape s JOIN lb_index i USING (name) ORDER BY i.ord;
\c
SET client_min_messages = warning;
SET festival.log_sync = never;
SELECT * FROM lb_verify('new session');

-------------------------------------------------------------------------------
-- Replay (§3.4.2): an insert and a delete of one point append two records
-- to the working log page; the bucket's replay drops both, and the point
-- is gone; reinserted, it is found once.  The second delete of point 2
-- finds nothing: the thesis's delete (Alg. 3, lb_replay) appends a third
-- delete record anyway and says true, which the replay passes over, and
-- the entry count is vouched for again by check(); with delete_check
-- 'read' (lb_replay_read) the delete reads the bucket first and says false
-------------------------------------------------------------------------------
SELECT festival.create_index('lb_replay', 'lbgrid', 'lb_dev', '{"extent": [0, 0, 10, 10], "page_size": 1024}') > 0 AS created,
	   festival.create_index('lb_replay_read', 'lbgrid', 'lb_dev',
							 '{"extent": [0, 0, 10, 10], "page_size": 1024, "delete_check": "read"}') > 0 AS created_read;
SELECT n, festival.insert(n, 1, 'POINT(1 1)') AS i1, festival.insert(n, 2, 'POINT(2 2)') AS i2,
	   festival.insert(n, 1, 'POINT(1 1)') AS i1_again,
	   festival.delete(n, 1, 'POINT(1 1)') AS d1,
	   festival.delete(n, 2, 'POINT(2 2)') AS d2,
	   festival.delete(n, 2, 'POINT(2 2)') AS d2_again,
	   festival.stats(n)->>'entries' AS entries
FROM unnest(ARRAY['lb_replay', 'lb_replay_read']) n;
-- one log page (after the sub-directory and the root page): a marker,
-- three inserts, three or two deletes
SELECT n, lb_derived(n, 'log_pages') AS log_pages,
	   (SELECT count(*) FROM festival.node(n,
			(SELECT page FROM generate_series(2, 4) page
			 WHERE (SELECT level FROM festival.node(n, page) LIMIT 1) = 0))) AS records,
	   (SELECT array_agg(id ORDER BY id) FROM festival.query(n, ST_MakeEnvelope(0, 0, 10, 10))) AS found,
	   (SELECT count(*) FROM festival.check(n)) AS check_rows,
	   festival.stats(n)->>'entries' AS entries_after_check
FROM unnest(ARRAY['lb_replay', 'lb_replay_read']) n;
SELECT festival.close('lb_replay');
SELECT (SELECT array_agg(id ORDER BY id) FROM festival.query('lb_replay', ST_MakeEnvelope(0, 0, 10, 10))) AS found_after_reopen,
	   festival.insert('lb_replay', 2, 'POINT(2 2)') AS reinserted,
	   (SELECT array_agg(id ORDER BY id) FROM festival.query('lb_replay', 'POINT(2 2)')) AS found_once,
	   (SELECT count(*) FROM festival.check('lb_replay')) AS check_rows;

-------------------------------------------------------------------------------
-- Dumps: each region is a polygon covering what is below it, and the
-- regions of a directory page tile its region
-------------------------------------------------------------------------------
-- (fixture.grid_regions: no gap, no overlap between the regions of a
-- directory page's children)
SELECT r.* FROM fixture.grid_regions(ARRAY(SELECT name FROM lb_index WHERE structure = 'lbgrid' ORDER BY ord)) r;

-------------------------------------------------------------------------------
-- Refused calls
-------------------------------------------------------------------------------
\set VERBOSITY default
-- FAST and eFIND
SELECT festival.create_index('lb_fast', 'lbgrid', 'lb_dev', '{"framework": "fast", "extent": [0, 0, 1, 1]}');
SELECT festival.create_index('lb_efind', 'lbgrid', 'lb_dev', '{"framework": "efind", "extent": [0, 0, 1, 1]}');
-- no bulk loader
SELECT festival.build('lb_none', 'bulk');
-- a geometry that is not a point
SELECT festival.insert('lb_none', 9001, 'LINESTRING(10 10, 20 20)');
-- NULLs
SELECT festival.insert('lb_none', 9003, NULL);
SELECT festival.insert('lb_none', NULL, 'POINT(1 1)');
-- a point outside the extent
SELECT festival.insert('lb_none', 9002, 'POINT(300.5 10)');
-- no source and no extent; pages too small
SELECT festival.create_index('lb_noext', 'lbgrid', 'lb_dev');
SELECT festival.create_index('lb_tiny', 'lbgrid', 'lb_dev', '{"extent": [0, 0, 1, 1], "page_size": 1024, "max_fill": 10}');
-- more copies of one point than a bucket holds (28): 28 fit, the 29th is
-- refused (the split that would take it cannot separate them), and so is
-- a point of the same grid cell
SELECT festival.create_index('lb_copies', 'lbgrid', 'lb_dev', '{"page_size": 1024, "extent": [0, 0, 10, 10]}') > 0 AS created;
SELECT count(*) FILTER (WHERE festival.insert('lb_copies', i, 'POINT(5 5)')) AS inserted FROM generate_series(1, 28) i;
SELECT festival.insert('lb_copies', 29, 'POINT(5 5)');
SELECT festival.insert('lb_copies', 30, 'POINT(5.000000000001 5)');
\set VERBOSITY terse
SELECT festival.insert('lb_copies', 31, 'POINT(5.00001 5)') AS next_cell,
	   (SELECT count(*) FROM festival.query('lb_copies', 'POINT(5 5)')) AS copies,
	   (SELECT count(*) FROM festival.check('lb_copies')) AS check_rows;
-- the refused calls changed nothing
SELECT count(*) AS check_rows,
	   (SELECT count(*) FROM festival.query('lb_none', ST_MakeEnvelope(0, 0, 300, 300))) AS found,
	   (SELECT count(*) FROM lb_src) AS expected
FROM festival.check('lb_none');

-- an awkward extent (lines that are not binary fractions): every point,
-- corners and edges included, is found at its own location and by a
-- window; deleting all merges everything back into one bucket
-- (fixture.grid_awkward_extent)
SELECT festival.create_index('lb_free', 'lbgrid', 'lb_dev', '{"extent": [-0.3, -1.7, 0.7, 1.1], "page_size": 1024}') > 0 AS created;
SELECT * FROM fixture.grid_awkward_extent('lb_free');

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(festival.drop_index(name)) AS dropped
FROM (SELECT name FROM lb_index UNION ALL VALUES ('lb_replay'), ('lb_replay_read'), ('lb_copies'), ('lb_free')) n;
SELECT festival.drop_device('lb_dev');
SELECT festival.drop_device('lb_aio');
DELETE FROM fx_query WHERE qid BETWEEN 931 AND 937;
DROP FUNCTION lb_verify(text), lb_totals(text), lb_derived(text, text);
DROP TABLE lb_src, lb_later, lb_aside, lb_index, lb_qids,
	lb_before, lb_rq, lb_merge, lb_shape, lb_brute;
