--
-- engines: the batched I/O engines libaio and io_uring, and mmap (reads
-- copied out of a mapping of the file), against sync.
--
-- The same workload runs on one index per engine and framework (none, FAST
-- and eFIND with small buffers, so that units flush all the time), on
-- devices with O_DIRECT and, for the batched engines, buffered I/O: a
-- build, inserts, deletes, window queries, a query_batch and kNN.  After
-- it, for every index:
--	- the answers of festival.query for every predicate equal PostGIS brute
--	  force (fx_compare), and so do query_batch's and knn's;
--	- festival.check() finds nothing;
--	- the tree is the one the sync engine built with the same framework,
--	  node for node (every page's entries), since an engine only moves
--	  pages;
--	- pages_read and pages_written equal the sync index's (same work), the
--	  sync and mmap engines used one submission per page, and the batched
--	  engines fewer submissions than pages, for reads and for writes.
-- mmap needs buffered I/O: a device with io => 'direct' is refused.
-- io_uring may be disabled by the kernel (kernel.io_uring_disabled, a
-- seccomp filter): creating a device with it then fails with
-- feature_not_supported, the test says so and runs the rest without it
-- (expected/engines_1.out).
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-- an unknown engine, and mmap over O_DIRECT
SELECT festival.create_device('en_bad', engine => 'posix_aio');
SELECT festival.create_device('en_bad', io => 'direct', engine => 'mmap');

CREATE TABLE en_device (device text PRIMARY KEY, engine text NOT NULL, io text NOT NULL);
CREATE TABLE en_skipped (what text, message text, hint text);

SELECT festival.create_device('en_sync', engine => 'sync');
SELECT festival.create_device('en_libaio', engine => 'libaio');
SELECT festival.create_device('en_libaio_buf', io => 'buffered', engine => 'libaio');
SELECT festival.create_device('en_mmap_buf', io => 'buffered', engine => 'mmap');
INSERT INTO en_device VALUES
	('en_sync', 'sync', 'direct'), ('en_libaio', 'libaio', 'direct'),
	('en_libaio_buf', 'libaio', 'buffered'), ('en_mmap_buf', 'mmap', 'buffered');

-- io_uring where the kernel allows it
DO $$
DECLARE
	msg text;
	hint text;
BEGIN
	PERFORM festival.create_device('en_uring', engine => 'io_uring');
	PERFORM festival.create_device('en_uring_buf', io => 'buffered', engine => 'io_uring');
	INSERT INTO en_device VALUES ('en_uring', 'io_uring', 'direct'),
								 ('en_uring_buf', 'io_uring', 'buffered');
EXCEPTION WHEN feature_not_supported THEN
	GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
	INSERT INTO en_skipped VALUES ('io_uring unavailable: its devices are skipped', msg, hint);
END
$$;
SELECT * FROM en_skipped;
SELECT device, engine, io FROM en_device ORDER BY device;

-- the source: a quarter of fx_src and the odd ones are built, another
-- quarter inserted afterwards, then an eighth of everything deleted
CREATE TABLE en_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO en_src SELECT id, geom FROM fx_src WHERE id % 4 = 0 OR id > 8000;
CREATE TABLE en_later AS SELECT id, geom FROM fx_src WHERE id % 4 = 2 AND id < 8000;

CREATE TABLE en_framework (framework text PRIMARY KEY, options jsonb NOT NULL);
INSERT INTO en_framework VALUES
	('none', '{"split": "quadratic", "page_size": 1024}'),
	('fast', '{"framework": "fast", "split": "quadratic", "page_size": 1024,
			   "buffer_size": 8192, "flushing_unit": 4, "flushing_policy": "fast"}'),
	('efind', '{"framework": "efind", "split": "quadratic", "page_size": 1024,
				"buffer_size": 8192, "flushing_unit": 4, "flushing_policy": "mh",
				"read_buffer_policy": "lru", "read_buffer_percent": 25}');

CREATE TABLE en_index AS
	SELECT d.device || '_' || f.framework AS name, d.device, d.engine, d.io, f.framework, f.options
	FROM en_device d CROSS JOIN en_framework f;

SELECT count(*) AS created
FROM en_index WHERE festival.create_index(name, 'rtree', device, options, 'en_src') > 0;
SELECT count(*) FILTER (WHERE festival.build(name) = (SELECT count(*) FROM en_src)) AS built
FROM en_index;
INSERT INTO en_src SELECT * FROM en_later;
SELECT count(*) FILTER (WHERE festival.insert(i.name, l.id, l.geom)) AS inserts
FROM en_index i CROSS JOIN (SELECT * FROM en_later ORDER BY id) l;
CREATE TABLE en_gone AS SELECT id, geom FROM en_src WHERE id % 8 IN (2, 4) AND id < 8000 AND id % 3 = 0;
DELETE FROM en_src WHERE id IN (SELECT id FROM en_gone);
SELECT count(*) FILTER (WHERE festival.delete(i.name, g.id, g.geom)) AS deletes
FROM en_index i CROSS JOIN (SELECT * FROM en_gone ORDER BY id) g;

-------------------------------------------------------------------------------
-- Answers against brute force
-------------------------------------------------------------------------------
CREATE TABLE en_brute AS SELECT * FROM fx_brute('en_src', ARRAY[2, 8, 12, 21, 29, 36]);

-- festival.query, every predicate: per index, answers, missing, extra
CREATE TABLE en_query AS
	SELECT i.name, sum(c.brute) AS brute, sum(c.festival) AS answers,
		   sum(c.missing) AS missing, sum(c.extra) AS extra
	FROM en_index i CROSS JOIN LATERAL fx_compare(i.name, 'en_brute', ARRAY[2, 8, 12, 21, 29, 36]) c
	GROUP BY i.name;
SELECT count(*) AS indices, min(brute) AS brute, min(answers) AS min_answers,
	   max(answers) AS max_answers, sum(missing) AS missing, sum(extra) AS extra
FROM en_query;

-- festival.query_batch: all the queries of fx_query below 100 at once
CREATE TABLE en_batch AS
	SELECT i.name, p.pred, q.qids[r.query_no] AS qid, r.id
	FROM en_index i CROSS JOIN fx_predicate p
	CROSS JOIN (SELECT array_agg(qid ORDER BY qid) AS qids, array_agg(g ORDER BY qid) AS gs
				FROM fx_query WHERE qid < 100) q
	CROSS JOIN LATERAL festival.query_batch(i.name, q.gs, p.pred) r;
CREATE TABLE en_batch_brute AS
	SELECT * FROM fx_brute('en_src', ARRAY(SELECT qid FROM fx_query WHERE qid < 100));
SELECT i.name,
	   (SELECT count(*) FROM en_batch b WHERE b.name = i.name) AS answers,
	   (SELECT count(*) FROM (SELECT pred, qid, id FROM en_batch_brute
							  EXCEPT ALL SELECT pred, qid, id FROM en_batch b WHERE b.name = i.name) d) AS missing,
	   (SELECT count(*) FROM (SELECT pred, qid, id FROM en_batch b WHERE b.name = i.name
							  EXCEPT ALL SELECT pred, qid, id FROM en_batch_brute) d) AS extra
FROM en_index i ORDER BY i.name;
SELECT count(*) AS brute_answers FROM en_batch_brute;

-- festival.knn against ST_Distance (curves linearized as festival does)
CREATE TABLE en_knn_query AS
	SELECT qid, g, k FROM fx_query, unnest(ARRAY[1, 10, 100]) k WHERE qid IN (2, 8, 21);
CREATE TABLE en_knn_brute AS
	SELECT c.qid, c.k, b.n, b.id, b.d FROM en_knn_query c CROSS JOIN LATERAL
		(SELECT row_number() OVER (ORDER BY d, id) AS n, id, d
		 FROM (SELECT s.id, ST_Distance(fixture.lin(s.geom), fixture.lin(c.g)) AS d
			   FROM en_src s ORDER BY 2, 1 LIMIT c.k) x) b;
SELECT i.name,
	   (SELECT count(*) FROM en_knn_brute b
		FULL JOIN (SELECT c.qid, c.k, f.n, f.id, f.distance AS d
				   FROM en_knn_query c CROSS JOIN LATERAL
						festival.knn(i.name, c.g, c.k) WITH ORDINALITY f(id, distance, n)) f
		USING (qid, k, n)
		WHERE b.id IS DISTINCT FROM f.id OR b.d IS DISTINCT FROM f.d) AS knn_wrong
FROM en_index i ORDER BY i.name;
SELECT count(*) AS knn_brute_rows FROM en_knn_brute;

-------------------------------------------------------------------------------
-- Pages and submissions (totals since the indices were
-- opened, before the comparison of trees reads the sync indices again)
-------------------------------------------------------------------------------
CREATE TABLE en_counter AS
	SELECT i.name, i.engine, i.framework,
		   (t->>'pages_read')::bigint AS pages_read,
		   (t->>'read_submissions')::bigint AS read_submissions,
		   (t->>'pages_written')::bigint AS pages_written,
		   (t->>'write_submissions')::bigint AS write_submissions,
		   (t->>'flushes')::bigint AS flushes
	FROM en_index i CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'totals' AS t) s;
SELECT c.name,
	   c.pages_read = s.pages_read AS same_pages_read,
	   c.pages_written = s.pages_written AS same_pages_written,
	   CASE WHEN c.engine IN ('sync', 'mmap')
			THEN c.read_submissions = c.pages_read AND c.write_submissions = c.pages_written
			ELSE c.read_submissions < c.pages_read AND c.write_submissions < c.pages_written
	   END AS submissions_as_expected,
	   c.framework = 'none' OR c.flushes > 10 AS units_flushed
FROM en_counter c JOIN en_counter s ON s.engine = 'sync' AND s.framework = c.framework
ORDER BY c.name;

-------------------------------------------------------------------------------
-- The same trees: every page's entries equal those of the sync index with
-- the same framework, and festival.check() is clean
-------------------------------------------------------------------------------
CREATE FUNCTION en_nodes(idx text)
RETURNS TABLE (page bigint, level int, ref bigint, x1 float8, y1 float8, x2 float8, y2 float8)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page) AS (
		SELECT (festival.stats(idx)->>'root')::bigint
		UNION ALL
		SELECT n.ref FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0)
	SELECT t.page, n.level, n.ref, n.xmin, n.ymin, n.xmax, n.ymax
	FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n
$$;
SELECT i.name,
	   (SELECT count(*) FROM en_nodes(i.name) WHERE level = 0) AS leaf_entries,
	   (SELECT count(*) FROM (SELECT * FROM en_nodes(i.name)
							  EXCEPT ALL SELECT * FROM en_nodes('en_sync_' || i.framework)) d)
	   + (SELECT count(*) FROM (SELECT * FROM en_nodes('en_sync_' || i.framework)
								EXCEPT ALL SELECT * FROM en_nodes(i.name)) d) AS other_entries,
	   (SELECT count(*) FROM festival.check(i.name)) AS check_rows
FROM en_index i ORDER BY i.name;
SELECT count(*) AS objects FROM en_src;

-- clean up
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM en_index) d;
SELECT count(*) AS devices_dropped FROM (SELECT festival.drop_device(device) FROM en_device) d;
