--
-- xbrtree_ssd: the xBR+-tree's algorithms of Fevgas 2019 §3.6, each beside
-- its HDD original: bulk loading in four phases (build methods
-- 'four_phase' and 'four_phase_ssd'), bulk insertion (festival.insert_many
-- methods 'bulk' and 'bulk_ssd') and batch queries (festival.query_batch,
-- the structure's own level-by-level search; festival.query's point
-- location).
--
-- Every index is checked against PostGIS brute force and festival.check();
-- an original and its SSD version must build the same tree, page for page
-- (xs_digest: every node's page, level, entries), and under FAST and eFIND
-- the tree of the write-through store node by node (fixture.nodes).
--
-- xs_big (30000 points in three clusters and a uniform spread over
-- [0, 300]^2) with maintenance_work_mem = 1MB (PostgreSQL's minimum: a
-- block holds at most 6241 points) is split into many blocks, some
-- sub-files recursively, and its block trees are merged into the disk tree
-- (some taller, some shorter than it); xs_src (fixture.grid_points) answers
-- every predicate, with xs_later inserted into it as one batch.  Pages of
-- 1024 bytes (41 points per leaf, 17 entries per internal node) make trees
-- of 3 and 4 levels.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET festival.log_sync = never;
SET jit = off;

SELECT festival.create_device('xs_dev', io => 'buffered');

-- the grid suites' data (fixture.grid_points): fx_pts, a cluster, points on
-- quadrant borders, 20 copies of POINT(150 150); inserted later as one
-- batch, 300 spread points, 10 copies of a point, and 400 points in a
-- 2 x 2 square (one leaf becomes many, its parent several)
CREATE TABLE xs_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
CREATE TABLE xs_later (id bigint PRIMARY KEY, geom geometry NOT NULL);
SELECT fixture.grid_points('xs_src', 'xs_later', 20);
INSERT INTO xs_later
SELECT 8000 + i, ST_MakePoint(210 + (i % 20) * 0.1, 30 + (i / 20) * 0.1) FROM generate_series(0, 399) i;

CREATE TABLE xs_big (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO xs_big
SELECT i, CASE i % 4
	WHEN 0 THEN ST_MakePoint((i * 7919 % 30011) / 100.0, (i * 104729 % 30013) / 100.0)
	WHEN 1 THEN ST_MakePoint(40 + (i * 31 % 1009) / 100.0, 250 + (i * 17 % 1013) / 100.0)
	WHEN 2 THEN ST_MakePoint(200 + (i * 13 % 4001) / 100.0, 60 + (i * 29 % 4003) / 100.0)
	ELSE ST_MakePoint(150 + (i * 7 % 2003) / 1000.0, 150 + (i * 11 % 2011) / 1000.0) END
FROM generate_series(1::bigint, 30000) i;
SELECT (SELECT count(*) FROM xs_src) AS src_points, (SELECT count(*) FROM xs_later) AS later_points,
	   (SELECT count(*) FROM xs_big) AS big_points;

-- a tree, page for page: every reachable node's page, level and entries
CREATE FUNCTION xs_digest(idx text) RETURNS text
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT md5(string_agg(format('%s/%s/%s/%s/%s %s %s %s', t.page, n.level, n.position, n.ref,
								 n.xmin, n.ymin, n.xmax, n.ymax), ',' ORDER BY t.page, n.position))
	FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n
$$;

-- windows over xs_big: a grid of them, the clusters, the whole extent
CREATE TABLE xs_win (id int PRIMARY KEY, g geometry NOT NULL);
INSERT INTO xs_win
SELECT w, ST_MakeEnvelope((w % 7) * 43.0, (w / 7) * 43.0, (w % 7) * 43.0 + 17.5, (w / 7) * 43.0 + 9.25)
FROM generate_series(0, 48) w;
INSERT INTO xs_win VALUES
	(100, ST_MakeEnvelope(149.9, 149.9, 150.7, 150.6)), (101, ST_MakeEnvelope(40, 250, 45, 255)),
	(102, ST_MakeEnvelope(0, 0, 300.2, 300.2)), (103, ST_MakeEnvelope(150, 150, 300, 300)),
	(104, ST_MakeEnvelope(75, 75, 150, 150));

-- the answers of festival.query over xs_win, as brute force over src
CREATE FUNCTION xs_windows_wrong(idx text, src regclass) RETURNS bigint
LANGUAGE sql AS $$ SELECT fixture.window_wrong(idx, 'xs_win', src) $$;

-------------------------------------------------------------------------------
-- 1. Bulk loading in four phases
-------------------------------------------------------------------------------
CREATE TABLE xs_load (ord int PRIMARY KEY, name text NOT NULL, method text NOT NULL,
					  options jsonb NOT NULL);
INSERT INTO xs_load VALUES
	(1, 'xs_4p', 'four_phase', '{"page_size": 1024}'),
	(2, 'xs_4ps', 'four_phase_ssd', '{"page_size": 1024}'),
	(3, 'xs_4ps_fast', 'four_phase_ssd', '{"page_size": 1024, "framework": "fast", "buffer_size": 16384,
		"flushing_unit": 4, "flushing_policy": "fast_star"}'),
	(4, 'xs_4ps_efind', 'four_phase_ssd', '{"page_size": 1024, "framework": "efind", "buffer_size": 16384,
		"flushing_unit": 4, "flushing_policy": "mhao", "read_buffer_policy": "lru",
		"read_buffer_percent": 20, "temporal_control": "both"}'),
	(5, 'xs_4p_mem', 'four_phase', '{"page_size": 1024}'),
	(6, 'xs_bulk', 'bulk', '{"page_size": 1024}');
SELECT name, festival.create_index(name, 'xbrtree', 'xs_dev', options, 'xs_big') > 0 AS created
FROM xs_load ORDER BY ord;

SET maintenance_work_mem = '1MB';
-- the load says how many blocks and sub-file splits it made
SET client_min_messages = debug1;
SELECT festival.build('xs_4p', 'four_phase') AS four_phase;
SELECT festival.build('xs_4ps', 'four_phase_ssd') AS four_phase_ssd;
SET client_min_messages = warning;
SELECT name, festival.build(name, method) AS built FROM xs_load WHERE ord IN (3, 4, 6) ORDER BY ord;
-- everything in memory: one block per quadrant
RESET maintenance_work_mem;
SELECT festival.build('xs_4p_mem', 'four_phase') AS one_block_per_quadrant;

-- the original and the SSD version build the same tree, page for page;
-- FAST and eFIND the write-through store's, node by node
CREATE TABLE xs_nodes AS SELECT l.name, n.* FROM xs_load l CROSS JOIN LATERAL fixture.nodes(l.name) n;
SELECT l.ord, l.name, l.method, (festival.stats(l.name)->>'height')::int AS height,
	   (SELECT count(*) FROM xs_nodes n WHERE n.name = l.name AND n.level = 0) AS leaf_entries,
	   (SELECT count(*) FROM xs_nodes n WHERE n.name = l.name AND n.level > 0) AS inner_entries,
	   (SELECT count(*) FROM festival.check(l.name)) AS check_rows,
	   xs_windows_wrong(l.name, 'xs_big') AS windows_wrong,
	   xs_digest(l.name) = xs_digest('xs_4p') AS same_pages_as_original,
	   NOT EXISTS ((SELECT level, pos, ref, x1, y1, x2, y2 FROM xs_nodes WHERE name = l.name
					EXCEPT ALL SELECT level, pos, ref, x1, y1, x2, y2 FROM xs_nodes WHERE name = 'xs_4ps')
				   UNION ALL
				   (SELECT level, pos, ref, x1, y1, x2, y2 FROM xs_nodes WHERE name = 'xs_4ps'
					EXCEPT ALL SELECT level, pos, ref, x1, y1, x2, y2 FROM xs_nodes WHERE name = l.name))
		   AS same_nodes_as_ssd
FROM xs_load l ORDER BY l.ord;

-- the original writes every node in a request of its own and commits each
-- merge step (it reads the disk tree back); the SSD version writes the
-- same pages from its write buffer in batches
SELECT l.name, (festival.stats(l.name)->'totals'->>'nodes_written')::bigint > 0 AS wrote,
	   (festival.stats(l.name)->'totals'->>'pages_written')::bigint AS pages_written
FROM xs_load l WHERE l.ord IN (1, 2) ORDER BY l.ord;

-------------------------------------------------------------------------------
-- 2. Bulk insertion: one batch into trees built from xs_src
-------------------------------------------------------------------------------
CREATE TABLE xs_ins (ord int PRIMARY KEY, name text NOT NULL, method text NOT NULL,
					 options jsonb NOT NULL);
INSERT INTO xs_ins VALUES
	(1, 'xs_i_insert', 'insert', '{"page_size": 1024}'),
	(2, 'xs_i_bulk', 'bulk', '{"page_size": 1024}'),
	(3, 'xs_i_ssd', 'bulk_ssd', '{"page_size": 1024}'),
	(4, 'xs_i_ssd_fast', 'bulk_ssd', '{"page_size": 1024, "framework": "fast", "buffer_size": 16384,
		"flushing_unit": 3, "flushing_policy": "fast"}'),
	(5, 'xs_i_ssd_efind', 'bulk_ssd', '{"page_size": 1024, "framework": "efind", "buffer_size": 16384,
		"flushing_unit": 3, "flushing_policy": "mh", "read_buffer_policy": "s2q",
		"read_buffer_percent": 25, "temporal_control": "both"}'),
	(6, 'xs_i_4ps_ssd', 'bulk_ssd', '{"page_size": 1024}'),
	(7, 'xs_i_lru', 'bulk_ssd', '{"page_size": 1024, "cache": "lru", "cache_size": 8192}');
-- the extent is given: xs_later reaches beyond xs_src's
SELECT name, festival.create_index(name, 'xbrtree', 'xs_dev',
								   options || '{"extent": [0, 0, 300, 300]}', 'xs_src') > 0 AS created
FROM xs_ins ORDER BY ord;
SELECT name, festival.build(name, CASE WHEN ord = 6 THEN 'four_phase_ssd' ELSE 'bulk' END) AS built
FROM xs_ins ORDER BY ord;

-- the rows as a table, or as a query
SELECT name, CASE WHEN ord % 2 = 0
			 THEN festival.insert_many(name, 'xs_later', method => method)
			 ELSE festival.insert_many(name, query => 'SELECT id, geom FROM xs_later', method => method)
			 END AS inserted
FROM xs_ins ORDER BY ord;
INSERT INTO xs_src SELECT * FROM xs_later;

CREATE TABLE xs_brute (pred text, qid int, id bigint);
INSERT INTO xs_brute SELECT * FROM fx_brute('xs_src', (SELECT array_agg(qid) FROM fx_query WHERE qid >= 100));

CREATE FUNCTION xs_verify(phase text)
RETURNS TABLE (phase_ text, ord int, name text, answers numeric, missing numeric, extra numeric,
			   check_rows bigint, entries bigint, height int, batch_wrong bigint,
			   same_pages_as_bulk boolean, same_nodes_as_ssd boolean)
LANGUAGE plpgsql AS $$
DECLARE
	q int[] := (SELECT array_agg(qid ORDER BY qid) FROM fx_query WHERE qid >= 100);
BEGIN
	RETURN QUERY
	SELECT phase, i.ord, i.name, c.answers, c.missing, c.extra,
		   (SELECT count(*) FROM festival.check(i.name)),
		   (festival.stats(i.name)->>'entries')::bigint,
		   (festival.stats(i.name)->>'height')::int,
		   fixture.batch_wrong(i.name, 'xs_brute', q),
		   CASE WHEN i.ord = 3 THEN xs_digest(i.name) = xs_digest('xs_i_bulk') END,
		   CASE WHEN i.ord IN (4, 5, 7) THEN
			   NOT EXISTS ((SELECT * FROM fixture.nodes(i.name) EXCEPT ALL SELECT * FROM fixture.nodes('xs_i_ssd'))
						   UNION ALL
						   (SELECT * FROM fixture.nodes('xs_i_ssd') EXCEPT ALL SELECT * FROM fixture.nodes(i.name))) END
	FROM xs_ins i
	CROSS JOIN LATERAL (SELECT sum(f.festival) AS answers, sum(f.missing) AS missing,
							   sum(f.extra) AS extra
						FROM fx_compare(i.name, 'xs_brute', q) f) c
	ORDER BY i.ord;
END
$$;
SELECT * FROM xs_verify('insert_many');

-- after a close and reopen, and in a new session
SELECT count(festival.close(name)) AS closed FROM xs_ins;
SELECT * FROM xs_verify('reopen');
\c
SET client_min_messages = warning;
SET festival.log_sync = never;
SET jit = off;
SELECT * FROM xs_verify('new session');

-- an empty tree takes a whole data set as one batch, and a root leaf a
-- batch it still holds
SELECT festival.create_index(n, 'xbrtree', 'xs_dev', '{"page_size": 1024, "extent": [0, 0, 300.2, 300.2]}') > 0
FROM unnest(ARRAY['xs_empty', 'xs_small']) n;
SELECT festival.insert_many('xs_empty', 'xs_big', method => 'bulk_ssd') AS into_empty,
	   festival.insert_many('xs_small', query => 'SELECT id, geom FROM xs_big WHERE id <= 30',
							method => 'bulk') AS into_leaf;
SELECT n AS name, (festival.stats(n)->>'height')::int AS height,
	   (festival.stats(n)->>'entries')::bigint AS entries,
	   (SELECT count(*) FROM festival.check(n)) AS check_rows
FROM unnest(ARRAY['xs_empty', 'xs_small']) n;
SELECT xs_windows_wrong('xs_empty', 'xs_big') AS empty_then_batch_wrong;
CREATE TEMP VIEW xs_first30 AS SELECT * FROM xs_big WHERE id <= 30;
SELECT xs_windows_wrong('xs_small', 'xs_first30') AS leaf_then_batch_wrong;

-------------------------------------------------------------------------------
-- 3. festival.insert_many: sources and refusals
-------------------------------------------------------------------------------
-- other column names, a view, NULL geometries (skipped), a query with more
-- columns than two (the first two count) and smallint ids
CREATE TABLE xs_odd (oid_ int, pt geometry, note text);
INSERT INTO xs_odd VALUES (1, 'POINT(1 1)', 'a'), (2, NULL, 'no geometry'), (3, 'POINT(2 2)', 'b');
CREATE VIEW xs_odd_view AS SELECT oid_::smallint AS k, pt, note FROM xs_odd;
SELECT festival.create_index('xs_r', 'rtree', 'xs_dev', '{"page_size": 1024}') > 0 AS created;
SELECT festival.insert_many('xs_small', 'xs_odd', id_column => 'oid_', geom_column => 'pt') AS table_rows,
	   festival.insert_many('xs_small', query => 'SELECT k, pt, note FROM xs_odd_view', method => 'bulk_ssd') AS query_rows,
	   festival.insert_many('xs_r', 'xs_odd_view', id_column => 'k', geom_column => 'pt') AS rtree_rows;
SELECT (festival.stats('xs_small')->>'entries')::bigint AS xs_small_entries,
	   (SELECT count(*) FROM festival.query('xs_small', 'POINT(1 1)')) AS copies_of_1_1,
	   (SELECT count(*) FROM festival.check('xs_r')) AS rtree_check_rows;

-- refused before anything changes: the tree stays as it was
CREATE TABLE xs_before AS SELECT xs_digest('xs_i_ssd') AS digest,
	   (festival.stats('xs_i_ssd')->>'entries')::bigint AS entries;
SELECT festival.insert_many('xs_i_ssd');
SELECT festival.insert_many('xs_i_ssd', 'xs_later', query => 'SELECT id, geom FROM xs_later');
SELECT festival.insert_many('xs_i_ssd', query => 'SELECT id FROM xs_later');
SELECT festival.insert_many('xs_i_ssd', query => 'SELECT id::text, geom FROM xs_later');
SELECT festival.insert_many('xs_i_ssd', query => 'SELECT id, ST_AsText(geom) FROM xs_later');
SELECT festival.insert_many('xs_i_ssd', query => 'DELETE FROM xs_later RETURNING id, geom');
SELECT festival.insert_many('xs_i_ssd', 'xs_later', id_column => 'nope');
SELECT festival.insert_many('xs_i_ssd', 'xs_later', method => 'str');
SELECT festival.insert_many('xs_r', 'xs_later', method => 'bulk');
SELECT festival.insert_many('xs_i_ssd', query => 'SELECT NULL::int, ST_MakePoint(1, 1)', method => 'bulk_ssd');
-- the last row is refused, after the others went into the batch
SELECT festival.insert_many('xs_i_ssd', query => 'SELECT id, geom FROM xs_later UNION ALL SELECT 1, ST_MakePoint(400, 1)',
							method => m)
FROM unnest(ARRAY['insert', 'bulk', 'bulk_ssd']) m;
SELECT festival.insert_many('xs_i_ssd', query => 'SELECT id, ST_Buffer(geom, 1) FROM xs_later', method => 'bulk_ssd');
-- more points in one cell than a leaf holds: the partition refuses them
SELECT festival.insert_many('xs_i_ssd', query => 'SELECT i, ST_MakePoint(5, 5) FROM generate_series(1, 50) i',
							method => 'bulk_ssd');
SELECT xs_digest('xs_i_ssd') = digest AS unchanged, (festival.stats('xs_i_ssd')->>'entries')::bigint = entries AS same_entries,
	   (SELECT count(*) FROM festival.check('xs_i_ssd')) AS check_rows
FROM xs_before;
-- the batch is one modification: inside a function, a rollback does not undo it
BEGIN;
SELECT festival.insert_many('xs_small', query => 'SELECT 900000 + i, ST_MakePoint(i, i) FROM generate_series(1, 5) i',
							method => 'bulk_ssd') AS inserted;
ROLLBACK;
SELECT (SELECT count(*) FROM festival.query('xs_small', ST_MakeEnvelope(0.5, 0.5, 5.5, 5.5))) AS kept_after_rollback;

-------------------------------------------------------------------------------
-- 4. Batch queries: point location, windows and distance ranges
-------------------------------------------------------------------------------
-- points of the data (copies among them), points not in it, points outside
-- the extent; windows; distance ranges
CREATE TABLE xs_qpts AS
SELECT row_number() OVER (ORDER BY md5(id::text)) AS n, geom AS g
FROM (SELECT id, geom FROM xs_big ORDER BY md5(id::text) LIMIT 1000) s;
INSERT INTO xs_qpts SELECT 2000 + i, ST_MakePoint(i * 0.37, 300 - i * 0.41) FROM generate_series(1, 100) i;
INSERT INTO xs_qpts VALUES (3001, 'POINT(-5 -5)'), (3002, 'POINT(500 10)'), (3003, 'POINT(150 150)');

CREATE VIEW xs_qwin AS SELECT id AS n, g FROM xs_win;
-- brute force, once: PostGIS over xs_big (with a GiST index) for each set
CREATE INDEX ON xs_big USING gist (geom);
CREATE TABLE xs_expected (kind text, no bigint, id bigint);
INSERT INTO xs_expected
SELECT 'points', q.no, s.id FROM (SELECT row_number() OVER (ORDER BY n) AS no, g FROM xs_qpts) q
JOIN xs_big s ON ST_Intersects(s.geom, q.g);
INSERT INTO xs_expected
SELECT 'zero', q.no, s.id FROM (SELECT row_number() OVER (ORDER BY n) AS no, g FROM xs_qpts) q
JOIN xs_big s ON ST_DWithin(s.geom, q.g, 0);
INSERT INTO xs_expected
SELECT 'ranges', q.no, s.id FROM (SELECT row_number() OVER (ORDER BY n) AS no, g FROM xs_qpts) q
JOIN xs_big s ON ST_DWithin(s.geom, q.g, 0.2);
INSERT INTO xs_expected
SELECT 'windows', q.no, s.id FROM (SELECT row_number() OVER (ORDER BY n) AS no, g FROM xs_qwin) q
JOIN xs_big s ON ST_Intersects(s.geom, q.g);
SELECT kind, count(*) AS brute_answers FROM xs_expected GROUP BY kind ORDER BY kind;

-- festival.query_batch of one kind against xs_expected: rows missing or extra
CREATE FUNCTION xs_batch_wrong(idx text, kind text) RETURNS bigint
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
	gs geometry[] := CASE WHEN kind = 'windows' THEN (SELECT array_agg(g ORDER BY n) FROM xs_qwin)
						  ELSE (SELECT array_agg(g ORDER BY n) FROM xs_qpts) END;
	pred text := CASE WHEN kind IN ('zero', 'ranges') THEN 'dwithin' ELSE 'intersects' END;
	dist float8 := CASE kind WHEN 'zero' THEN 0 WHEN 'ranges' THEN 0.2 END;
BEGIN
	RETURN (WITH f AS (SELECT r.query_no::bigint AS no, r.id FROM festival.query_batch(idx, gs, pred, dist) r),
				 b AS (SELECT e.no, e.id FROM xs_expected e WHERE e.kind = xs_batch_wrong.kind)
			SELECT (SELECT count(*) FROM (TABLE f EXCEPT ALL TABLE b) d)
				   + (SELECT count(*) FROM (TABLE b EXCEPT ALL TABLE f) d));
END
$$;

SELECT name, generic,
	   xs_batch_wrong(name, 'points') AS points_wrong,
	   xs_batch_wrong(name, 'zero') AS dwithin0_wrong,
	   xs_batch_wrong(name, 'windows') AS windows_wrong,
	   xs_batch_wrong(name, 'ranges') AS ranges_wrong
FROM (VALUES ('xs_4ps'), ('xs_4ps_efind')) i(name)
CROSS JOIN (VALUES (false), (true)) g(generic)
CROSS JOIN LATERAL set_config('festival.generic_query_batch', generic::text, false) s
ORDER BY name, generic;
RESET festival.generic_query_batch;

-- batches cut by work_mem: 64kB holds 64 nodes of 1 kB, so 64 queries a
-- batch, and a level of more than 64 nodes is read in several groups
SET work_mem = '64kB';
SELECT xs_batch_wrong('xs_4ps', 'points') AS points_wrong,
	   xs_batch_wrong('xs_4ps', 'windows') AS windows_wrong,
	   xs_batch_wrong('xs_4ps', 'ranges') AS ranges_wrong;
RESET work_mem;

-- point location reads one node per level; the level-by-level batch reads
-- each node a batch needs once, the generic depth-first batch as well, in
-- groups of at most 64 siblings
CREATE FUNCTION xs_nodes_read(idx text, generic boolean, batch boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	before bigint := (festival.stats(idx)->'totals'->>'nodes_visited')::bigint;
BEGIN
	PERFORM set_config('festival.generic_query_batch', generic::text, true);
	IF batch THEN
		PERFORM count(*) FROM festival.query_batch(idx, (SELECT array_agg(g ORDER BY n) FROM xs_qpts WHERE n <= 1000));
	ELSE
		PERFORM count(*) FROM xs_qpts q, LATERAL festival.query(idx, q.g) WHERE q.n <= 1000;
	END IF;
	RETURN (festival.stats(idx)->'totals'->>'nodes_visited')::bigint - before;
END
$$;
SELECT (festival.stats('xs_4ps')->>'height')::int * 1000 AS one_path_each,
	   xs_nodes_read('xs_4ps', false, false) AS located_one_by_one,
	   xs_nodes_read('xs_4ps', false, true) AS level_by_level,
	   xs_nodes_read('xs_4ps', true, true) AS generic_batch,
	   xs_nodes_read('xs_4ps', false, true) <= xs_nodes_read('xs_4ps', true, true) AS own_reads_no_more;

-------------------------------------------------------------------------------
-- 5. The I/O of the originals and of the SSD versions (a libaio device,
--    which submits an array of pages at once)
-------------------------------------------------------------------------------
SELECT festival.create_device('xs_aio', io => 'buffered', engine => 'libaio');
SELECT festival.create_index(n, 'xbrtree', 'xs_aio', '{"page_size": 1024, "extent": [0, 0, 300.2, 300.2]}', 'xs_big') > 0 AS created
FROM unnest(ARRAY['xs_a_4p', 'xs_a_4ps', 'xs_a_bulk', 'xs_a_ssd']) n;
SET maintenance_work_mem = '1MB';
CREATE TABLE xs_io (ord int, name text, what text, run bigint);
INSERT INTO xs_io SELECT 1, 'xs_a_4p', 'build four_phase', festival.begin_run('xs 1');
SELECT festival.build('xs_a_4p', 'four_phase') AS built;
UPDATE xs_io SET run = festival.end_run() WHERE ord = 1;
INSERT INTO xs_io SELECT 2, 'xs_a_4ps', 'build four_phase_ssd', festival.begin_run('xs 2');
SELECT festival.build('xs_a_4ps', 'four_phase_ssd') AS built;
UPDATE xs_io SET run = festival.end_run() WHERE ord = 2;
RESET maintenance_work_mem;
SELECT festival.build(n, 'bulk') AS built FROM unnest(ARRAY['xs_a_bulk', 'xs_a_ssd']) n;
SELECT festival.close(n) FROM unnest(ARRAY['xs_a_bulk', 'xs_a_ssd']) n;
INSERT INTO xs_io SELECT 3, 'xs_a_bulk', 'insert_many bulk', festival.begin_run('xs 3');
SELECT festival.insert_many('xs_a_bulk', 'xs_later', method => 'bulk') AS inserted;
UPDATE xs_io SET run = festival.end_run() WHERE ord = 3;
INSERT INTO xs_io SELECT 4, 'xs_a_ssd', 'insert_many bulk_ssd', festival.begin_run('xs 4');
SELECT festival.insert_many('xs_a_ssd', 'xs_later', method => 'bulk_ssd') AS inserted;
UPDATE xs_io SET run = festival.end_run() WHERE ord = 4;
SELECT festival.close(n) FROM unnest(ARRAY['xs_a_ssd']) n;
INSERT INTO xs_io SELECT 5, 'xs_a_ssd', 'query one at a time', festival.begin_run('xs 5');
SELECT count(*) AS answers FROM xs_qpts q, LATERAL festival.query('xs_a_ssd', q.g);
UPDATE xs_io SET run = festival.end_run() WHERE ord = 5;
SELECT festival.close(n) FROM unnest(ARRAY['xs_a_ssd']) n;
INSERT INTO xs_io SELECT 6, 'xs_a_ssd', 'query_batch', festival.begin_run('xs 6');
SELECT count(*) AS answers FROM festival.query_batch('xs_a_ssd', (SELECT array_agg(g ORDER BY n) FROM xs_qpts));
UPDATE xs_io SET run = festival.end_run() WHERE ord = 6;
-- submissions: one per page for the originals (the two meta pages an open
-- reads go together), far fewer for the SSD versions; the original load
-- writes and reads back the nodes each merge step changes
SELECT i.ord, i.what, r.pages_written, r.write_submissions, r.pages_read, r.read_submissions
FROM xs_io i JOIN festival.run r ON r.run_id = i.run ORDER BY i.ord;
SELECT xs_digest('xs_a_4p') = xs_digest('xs_a_4ps') AS same_load,
	   xs_digest('xs_a_bulk') = xs_digest('xs_a_ssd') AS same_insertion;

SELECT count(festival.drop_index(name)) AS dropped FROM festival.index WHERE name LIKE 'xs_%';
SELECT festival.drop_device('xs_aio');
SELECT festival.drop_device('xs_dev');
DROP FUNCTION xs_nodes_read(text, boolean, boolean), xs_batch_wrong(text, text),
	xs_verify(text), xs_windows_wrong(text, regclass), xs_digest(text);
DROP VIEW xs_qwin, xs_odd_view, xs_first30;
DROP TABLE xs_src, xs_later, xs_big, xs_win, xs_load, xs_nodes, xs_ins, xs_brute, xs_odd, xs_before,
	xs_qpts, xs_expected, xs_io;
