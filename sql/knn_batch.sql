--
-- knn_batch: festival.knn reading nodes in groups (issue 14).
--
-- Every tree structure on every engine (sync, libaio, and io_uring where
-- the kernel allows it; the output does not depend on it), and the R-tree
-- under FAST and eFIND on libaio (their buffers serve some nodes from
-- memory; eFIND's read buffer keeps what recent reads brought), under three
-- settings of the same queries:
--	one			festival.knn_batch = 0: one node at a time (the reference)
--	exact		the default, festival.knn_batch = 64: the nodes behind the
--				head that the search is sure to read join its batch
--	speculative	festival.knn_speculative = 4: besides those, up to 4 nodes
--				at the head that it may not need
-- Checked for every index, query and k (1, 10, 100, 1000):
--	- answers equal PostGIS brute force, ids and distances bit for bit, in
--	  (distance, id) order, in every setting (the data is full of ties:
--	  grid points, copies, lines and boxes at equal distances);
--	- exact reads the very nodes of one (nodes_visited, pages_read equal
--	  query by query; LB-Grid: the same buckets, whose shared log pages a
--	  group reads once), speculative at least those;
--	- submissions: under sync one per page in every setting; under the
--	  batched engines exact issues fewer than one over the k = 1000
--	  queries (where the bound lets leaves join: k above a leaf's
--	  capacity), never more on any query, and speculative at most exact's.
-- The grid file answers point queries over points with its own ring
-- search, so its rows exercise the generic search with the rectangle and
-- line queries; LB-Grid's leaves are logical buckets without a capacity
-- bound, so exact groups only nodes at equal keys there.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET festival.log_sync = never;

-------------------------------------------------------------------------------
-- Devices
-------------------------------------------------------------------------------
CREATE TABLE kb_device (device text PRIMARY KEY, engine text NOT NULL);
SELECT festival.create_device('kb_sync', io => 'buffered', engine => 'sync');
SELECT festival.create_device('kb_libaio', io => 'buffered', engine => 'libaio');
INSERT INTO kb_device VALUES ('kb_sync', 'sync'), ('kb_libaio', 'libaio');
DO $$
BEGIN
	PERFORM festival.create_device('kb_uring', io => 'buffered', engine => 'io_uring');
	INSERT INTO kb_device VALUES ('kb_uring', 'io_uring');
EXCEPTION WHEN feature_not_supported THEN
	NULL;						-- io_uring disabled by the kernel: skipped
END
$$;

-------------------------------------------------------------------------------
-- Data.  kb_pts: a 50 x 50 grid of step 2 (many neighbours at equal
-- distances) plus copies of every 97th point.  kb_mix: two thirds of
-- those points, 800 short segments and 300 small boxes.
-------------------------------------------------------------------------------
CREATE TABLE kb_pts (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO kb_pts SELECT i, ST_MakePoint((i % 50) * 2, (i / 50) * 2) FROM generate_series(0, 2499) i;
INSERT INTO kb_pts SELECT 10000 + id, geom FROM kb_pts WHERE id % 97 = 0;
CREATE TABLE kb_mix (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO kb_mix SELECT id, geom FROM kb_pts WHERE id % 3 <> 0;
INSERT INTO kb_mix SELECT 20000 + i, ST_MakeLine(ST_MakePoint((i % 40) * 2.5, (i / 40) * 5),
												 ST_MakePoint((i % 40) * 2.5 + 1.5, (i / 40) * 5 + 0.5))
FROM generate_series(0, 799) i;
INSERT INTO kb_mix SELECT 30000 + i, ST_MakeEnvelope((i % 20) * 5 + 1, (i / 20) * 7 + 1,
													 (i % 20) * 5 + 2, (i / 20) * 7 + 3)
FROM generate_series(0, 299) i;

CREATE TABLE kb_query (qid int PRIMARY KEY, g geometry NOT NULL);
INSERT INTO kb_query VALUES
	(1, 'POINT(50 50)'),				-- a grid point: four neighbours at 2
	(2, 'POINT(51 51)'),				-- four grid points at the same distance
	(3, 'POINT(13.3 77.7)'),
	(4, 'POINT(-30 120)'),				-- outside everything
	(5, ST_MakeEnvelope(20, 20, 23, 25)),
	(6, 'LINESTRING(0 5, 90 41)');

-------------------------------------------------------------------------------
-- Indices: every structure on every device
-------------------------------------------------------------------------------
CREATE TABLE kb_structure (structure text, tag text, src text, options jsonb,
						   only_engine text);
INSERT INTO kb_structure VALUES
	('rtree', 'rtree_mix', 'kb_mix', '{"split": "quadratic"}', NULL),
	('rtree', 'rtree_pts', 'kb_pts', '{"split": "linear"}', NULL),
	('rtree', 'rtree_mix_fast', 'kb_mix', '{"framework": "fast", "buffer_size": 16384}', 'libaio'),
	('rtree', 'rtree_pts_efind', 'kb_pts', '{"framework": "efind", "buffer_size": 16384}', 'libaio'),
	('rstartree', 'rstar_mix', 'kb_mix', '{}', NULL),
	('hilbert', 'hilbert_mix', 'kb_mix', '{}', NULL),
	('xbrtree', 'xbr_pts', 'kb_pts', '{}', NULL),
	('gridfile', 'grid_pts', 'kb_pts', '{}', NULL),
	('lbgrid', 'lbgrid_pts', 'kb_pts', '{}', NULL);
CREATE TABLE kb_index AS
	SELECT s.tag || '_' || d.engine AS name, s.tag, s.src, d.device, d.engine,
		   s.options || '{"page_size": 1024}' AS options, s.structure
	FROM kb_structure s JOIN kb_device d ON d.engine = coalesce(s.only_engine, d.engine);
SELECT count(*) = 7 * (SELECT count(*) FROM kb_device) + 2 AS every_pair,
	   bool_and(festival.create_index(name, structure, device, options, src) > 0) AS created,
	   bool_and(festival.build(name) IS NOT NULL) AS built,
	   bool_and((festival.stats(name)->>'height')::int > 2) AS three_levels_or_more
FROM kb_index;

-------------------------------------------------------------------------------
-- The brute force
-------------------------------------------------------------------------------
CREATE TABLE kb_brute AS
	SELECT src, q.qid, k, row_number() OVER (PARTITION BY src, q.qid, k ORDER BY d, id) AS n, id, d
	FROM kb_query q CROSS JOIN unnest(ARRAY[1, 10, 100, 1000]) k
	CROSS JOIN (VALUES ('kb_pts'), ('kb_mix')) s(src)
	CROSS JOIN LATERAL (
		SELECT b.id, b.d FROM (
			SELECT id, ST_Distance(geom, q.g) AS d FROM kb_pts WHERE src = 'kb_pts'
			UNION ALL
			SELECT id, ST_Distance(geom, q.g) FROM kb_mix WHERE src = 'kb_mix') b
		ORDER BY 2, 1 LIMIT k) x;

-------------------------------------------------------------------------------
-- kb_run(setting): every index, query and k under one setting; the answer
-- and the counters the query added to festival.stats' totals.
-------------------------------------------------------------------------------
CREATE TABLE kb_result (setting text, name text, qid int, k int, ids bigint[], ds float8[],
						nodes bigint, pages bigint, submissions bigint);
CREATE FUNCTION kb_run(setting text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	i record;
	q record;
	k int;
	t0 jsonb;
	t1 jsonb;
	a bigint[];
	b float8[];
BEGIN
	PERFORM set_config('festival.knn_batch', CASE setting WHEN 'one' THEN '0' ELSE '64' END, true);
	PERFORM set_config('festival.knn_speculative', CASE setting WHEN 'speculative' THEN '4' ELSE '0' END, true);
	FOR i IN SELECT * FROM kb_index ORDER BY name LOOP
		FOR q IN SELECT * FROM kb_query ORDER BY qid LOOP
			FOREACH k IN ARRAY ARRAY[1, 10, 100, 1000] LOOP
				t0 := festival.stats(i.name)->'totals';
				SELECT array_agg(f.id ORDER BY f.n), array_agg(f.distance ORDER BY f.n) INTO a, b
				FROM festival.knn(i.name, q.g, k) WITH ORDINALITY f(id, distance, n);
				t1 := festival.stats(i.name)->'totals';
				INSERT INTO kb_result VALUES (setting, i.name, q.qid, k, a, b,
					(t1->>'nodes_visited')::bigint - (t0->>'nodes_visited')::bigint,
					(t1->>'pages_read')::bigint - (t0->>'pages_read')::bigint,
					(t1->>'read_submissions')::bigint - (t0->>'read_submissions')::bigint);
			END LOOP;
		END LOOP;
	END LOOP;
END
$$;
-- without a setting, festival.knn_batch is 64 and speculation off (0)
SELECT current_setting('festival.knn_batch') AS knn_batch,
	   current_setting('festival.knn_speculative') AS knn_speculative;
SELECT kb_run('one');
SELECT kb_run('exact');
SELECT kb_run('speculative');

-- answers against the brute force: no wrong case in any setting (cases
-- and wrong per engine)
SELECT r.setting, i.tag, count(*) / count(DISTINCT i.engine) AS cases,
	   count(*) FILTER (WHERE r.ids IS DISTINCT FROM
						   (SELECT array_agg(b.id ORDER BY b.n) FROM kb_brute b
							WHERE b.src = i.src AND b.qid = r.qid AND b.k = r.k)
						OR r.ds IS DISTINCT FROM
						   (SELECT array_agg(b.d ORDER BY b.n) FROM kb_brute b
							WHERE b.src = i.src AND b.qid = r.qid AND b.k = r.k)) / count(DISTINCT i.engine) AS wrong
FROM kb_result r JOIN kb_index i USING (name)
GROUP BY r.setting, i.tag ORDER BY i.tag, r.setting;

-- reads and submissions by structure, every engine agreeing: how each
-- setting's node reads compare, query by query, with one node at a time
-- (the signs found: '=' equal, '<' fewer, '>' more).  Structures whose leaves are pages read
-- the very same nodes under exact.  LB-Grid's counters count log pages:
-- buckets read in one group share their common log pages, read once, so
-- it reads the same buckets but fewer pages; its point queries are its
-- ring search, which the settings do not change ('=').  Under eFIND, speculation's
-- extra reads change what its read buffer holds for later queries, so a
-- later query may need more submissions than under exact.
CREATE FUNCTION kb_cmp(a bigint, b bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN a = b THEN '=' WHEN a < b THEN '<' ELSE '>' END $$;
SELECT i.tag,
	   string_agg(DISTINCT kb_cmp(e.nodes, o.nodes), '') AS exact_nodes,
	   bool_and(e.nodes = e.pages AND o.nodes = o.pages) AS nodes_are_pages,
	   string_agg(DISTINCT kb_cmp(s.nodes, o.nodes), '') AS speculative_nodes,
	   bool_and(o.submissions = o.pages AND e.submissions = e.pages AND s.submissions = s.pages)
		   FILTER (WHERE i.engine = 'sync') AS sync_one_per_page,
	   string_agg(DISTINCT kb_cmp(e.submissions, o.submissions), '') FILTER (WHERE i.engine <> 'sync') AS exact_submissions,
	   bool_and(s.submissions <= e.submissions) FILTER (WHERE i.engine <> 'sync') AS speculative_at_most_exact
FROM kb_index i
JOIN kb_result o ON o.name = i.name AND o.setting = 'one'
JOIN kb_result e ON e.name = i.name AND e.setting = 'exact' AND e.qid = o.qid AND e.k = o.k
JOIN kb_result s ON s.name = i.name AND s.setting = 'speculative' AND s.qid = o.qid AND s.k = o.k
GROUP BY i.tag ORDER BY i.tag;

-- submissions summed over the queries of each k under the batched engines
-- (generic queries only: the grid files' point queries, GFFM's and
-- LB-Grid's, are their ring search): exact issues fewer than one node at a time where nodes share
-- the head's key (the rectangle and the line lie on several nodes) and,
-- for k = 1000, also where the capacity bound lets leaves join
SELECT i.tag, o.k,
	   bool_and(e_sum < o_sum) AS exact_fewer,
	   bool_and(s_sum < o_sum) AS speculative_fewer
FROM kb_index i
CROSS JOIN LATERAL (
	SELECT o.k, sum(o.submissions) AS o_sum, sum(e.submissions) AS e_sum, sum(s.submissions) AS s_sum
	FROM kb_result o
	JOIN kb_result e ON e.name = o.name AND e.setting = 'exact' AND e.qid = o.qid AND e.k = o.k
	JOIN kb_result s ON s.name = o.name AND s.setting = 'speculative' AND s.qid = o.qid AND s.k = o.k
	WHERE o.name = i.name AND o.setting = 'one'
	  AND (i.structure NOT IN ('gridfile', 'lbgrid') OR o.qid >= 5)
	GROUP BY o.k) o
WHERE i.engine <> 'sync'
GROUP BY i.tag, o.k ORDER BY i.tag, o.k;

-- the point queries alone, k = 1000 (no equal keys to speak of): exact
-- groups leaves the bound proves needed
SELECT i.tag, sum(e.submissions) < sum(o.submissions) AS exact_fewer
FROM kb_index i
JOIN kb_result o ON o.name = i.name AND o.setting = 'one'
JOIN kb_result e ON e.name = i.name AND e.setting = 'exact' AND e.qid = o.qid AND e.k = o.k
WHERE i.engine = 'libaio' AND o.k = 1000 AND o.qid <= 4 AND i.structure NOT IN ('gridfile', 'lbgrid')
GROUP BY i.tag ORDER BY i.tag;

-- bad settings are refused by PostgreSQL
SET festival.knn_batch = -1;
SET festival.knn_batch = 100000;
RESET festival.knn_batch;
SET festival.knn_speculative = -1;
SET festival.knn_speculative = 257;

SELECT sum((SELECT count(*) FROM festival.check(name))) AS problems FROM kb_index;
SELECT count(*) AS dropped FROM kb_index WHERE festival.drop_index(name) IS NOT NULL;
SELECT festival.drop_device(device) FROM kb_device ORDER BY device;
