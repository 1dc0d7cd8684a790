--
-- fortree: the FOR-tree (structure 'fortree', Jin et al. 2015) on mixed
-- data, under the write-through store, its own write buffer (framework
-- 'fortree'), FAST, eFIND and a page cache, with tiny nodes (internal
-- overflow nodes and merge-backs at every level), merge-backs at the
-- second access and late ones, and FESTIval's access counting.
--
-- All indices share one source table, fr_src, and receive the same
-- modifications: a build, inserts, deletes (groups emptied, packed and
-- dissolved, their entries inserted again), updates, a close and reopen
-- and a new session (\c).  After every phase each index must answer
-- festival.query for every predicate and a selection of query geometries
-- exactly as PostGIS brute force over fr_src (fixture.verify_indices),
-- festival.knn and festival.query_batch likewise, and festival.check()
-- (levels, fill of pages and groups, one P-node per group, one rectangle
-- per group covering its pages exactly) must return no rows.
--
-- Then the flaw of Carniel et al. 2018 (§2) and its fix: built one point at
-- a time, the tree's height grows as log N (1,000 to 100,000 points), and
-- a small window reads a few pages; with FESTIval's counting one group of
-- leaves takes every point and the same window reads them all.  Then a
-- forged group that check() reports, and refused options.
--
-- Pages of 1024 bytes: M = 24 leaf entries, 20 internal ones (m = 12, 10).
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
-- the logs are synced at flushes only (speed; crash safety is tested by
-- test/shell/crash_fortree.sh)
SET festival.log_sync = never;

SELECT festival.create_device('fr_dev', io => 'buffered');

-------------------------------------------------------------------------------
-- Differential tests
-------------------------------------------------------------------------------
CREATE TABLE fr_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO fr_src SELECT id, geom FROM fx_src WHERE id % 2 = 0 OR id > 8000;
CREATE TABLE fr_later AS SELECT id, geom FROM fx_src WHERE id % 2 = 1 AND id < 8000;
SELECT (SELECT count(*) FROM fr_src) AS built_objects, (SELECT count(*) FROM fr_later) AS later_objects;

CREATE TABLE fr_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, options jsonb NOT NULL);
INSERT INTO fr_index VALUES
	( 1, 'fr_none', '{"page_size": 1024}'),
	-- the paper's FOR-tree: its own write buffer, small enough to flush often
	( 2, 'fr_forb', '{"page_size": 1024, "framework": "fortree", "buffer_size": 16384,
		"flushing_unit": 3}'),
	( 3, 'fr_forb_warm', '{"page_size": 1024, "framework": "fortree", "buffer_size": 12288,
		"ratio_flushing": 100, "log_size": 8192}'),
	( 4, 'fr_fast', '{"page_size": 1024, "framework": "fast", "buffer_size": 16384}'),
	( 5, 'fr_efind', '{"page_size": 1024, "framework": "efind", "buffer_size": 16384,
		"read_buffer_policy": "lru"}'),
	( 6, 'fr_cache', '{"page_size": 1024, "cache": "lru", "cache_size": 16384}'),
	-- tiny nodes (M = 6, m = 3 in leaves; M = 5, m = 3 above): deep trees,
	-- overflow nodes and merge-backs at every level
	-- (with y / x = 2: a group is merged back once it has cost as many
	-- reads as 2, 4, 7... writes; with M < 2.5 y / x, as M = 6 and the
	-- default 8, insertions alone never merge a leaf group back: it gains
	-- O-nodes faster than its threshold is reached)
	( 7, 'fr_tiny', '{"page_size": 1024, "max_fill": 25, "x": 1, "y": 2}'),
	( 8, 'fr_tiny_forb', '{"page_size": 1024, "max_fill": 25, "x": 1, "y": 2,
		"framework": "fortree", "buffer_size": 16384}'),
	-- merged back at the second access (x = y); late (M = 12, y / x = 5:
	-- groups of three O-nodes at 35 accesses)
	( 9, 'fr_eager', '{"page_size": 1024, "x": 1, "y": 1}'),
	(10, 'fr_late', '{"page_size": 1024, "max_fill": 50, "x": 1, "y": 5, "min_fill": 30}'),
	-- FESTIval's counting (leaf groups merge back only when searched)
	(11, 'fr_festival', '{"page_size": 1024, "access_count": "festival"}');

SELECT ord, name, festival.create_index(name, 'fortree', 'fr_dev', options, 'fr_src') > 0 AS created
FROM fr_index ORDER BY ord;

-- what setup derives: M and m per level, and the accesses that merge a
-- group of one, two, three O-nodes back: floor((5k - 1) / 2) * y / x
SELECT i.ord, i.name, (d->>'max_entries')::int AS leaf_max, (d->>'min_entries')::int AS leaf_min,
	   (d->>'max_internal_entries')::int AS int_max, (d->>'min_internal_entries')::int AS int_min,
	   (d->>'merge_accesses_1_onodes')::int AS k1, (d->>'merge_accesses_2_onodes')::int AS k2,
	   (d->>'merge_accesses_3_onodes')::int AS k3
FROM fr_index i CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'config'->'derived' AS d) s
ORDER BY i.ord;
-- the defaults stored with the index
SELECT options AS stored FROM festival.index WHERE name = 'fr_forb';

CREATE TABLE fr_brute (pred text, qid int, id bigint);
-- the source with its curves linearised as festival does, for kNN distances
CREATE TABLE fr_src_lin (id bigint, geom geometry);
CREATE FUNCTION fr_knn_batch(phase text)
RETURNS TABLE (what text, indices bigint, knn_wrong bigint, batch_wrong bigint)
LANGUAGE plpgsql AS $$
BEGIN
	TRUNCATE fr_src_lin;
	INSERT INTO fr_src_lin SELECT id, fixture.lin(geom) FROM fr_src;
	RETURN QUERY
	SELECT phase, count(*),
		   sum(fixture.knn_wrong(name, 'fr_src_lin',
								 ARRAY['POINT(50 50)', 'POINT(253.5 253.5)', 'POINT(-40 410)']::geometry[],
								 ARRAY[1, 10, 100]))::bigint,
		   sum(fixture.batch_wrong(name, 'fr_brute', ARRAY[2, 8, 12, 21, 29, 36]))::bigint
	FROM fr_index;
END
$$;

-- Phase 1: build (one insert at a time)
SELECT count(*) AS indices, min(built) AS min_built, max(built) AS max_built
FROM (SELECT festival.build(name) AS built FROM fr_index) s;
SELECT * FROM fixture.verify_indices('build', 'fr_index', 'fr_src', 'fr_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT * FROM fr_knn_batch('build');

-- Phase 2: insert the rest one at a time, in a mixed order
INSERT INTO fr_src SELECT id, geom FROM fr_later;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.insert(i.name, l.id, l.geom) AS ok
	  FROM fr_later l CROSS JOIN fr_index i
	  ORDER BY (l.id * 7919) % 10007, l.id, i.ord) s;
-- the FOR-tree's buffer chooses its flushing units as documented: the
-- buffered pages in page order cut into runs of flushing_unit pages; a run
-- holding one of the ratio_flushing percent most recently modified pages
-- is not chosen while another can be; of the others, the most
-- modifications; with every run warm, the most modifications of all
-- (computed here from festival.buffer(), then festival.flush_unit writes
-- the unit the policy chooses), three units in a row
CREATE FUNCTION fr_next_unit(idx text, unit int, ratio float8) RETURNS bigint[]
LANGUAGE sql AS $$
	WITH b AS (SELECT page, greatest(modifications, 1) AS mods, last_modified,
					  (row_number() OVER (ORDER BY page) - 1) / unit AS u,
					  row_number() OVER (ORDER BY last_modified DESC)
						  <= floor(count(*) OVER () * ratio / 100) AS warm
			   FROM festival.buffer(idx)),
		 units AS (SELECT u, sum(mods) AS mods, bool_or(warm) AS warm FROM b GROUP BY u),
		 chosen AS (SELECT u FROM units
					ORDER BY NOT warm DESC, mods DESC, u LIMIT 1)
	SELECT array_agg(page ORDER BY page) FROM b WHERE u = (SELECT u FROM chosen)
$$;
CREATE FUNCTION fr_units(idx text, unit int, ratio float8)
RETURNS TABLE (name text, round int, buffered bool, unit_as_documented bool)
LANGUAGE plpgsql AS $$
DECLARE
	expected bigint[];
BEGIN
	FOR r IN 1..3 LOOP
		name := idx;
		round := r;
		buffered := (SELECT count(*) FROM festival.buffer(idx)) > 3 * unit;
		expected := fr_next_unit(idx, unit, ratio);
		unit_as_documented := expected = ARRAY(SELECT page FROM festival.flush_unit(idx) ORDER BY page);
		RETURN NEXT;
	END LOOP;
END
$$;
SELECT * FROM fr_units('fr_forb', 3, 20);
SELECT * FROM fr_units('fr_forb_warm', 5, 100);
SELECT * FROM fixture.verify_indices('insert', 'fr_index', 'fr_src', 'fr_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT * FROM fr_knn_batch('insert');

-- overflow nodes instead of splits, and merge-backs (none with FESTIval's
-- counting: its one leaf group of some 100 pages waits for thousands of
-- searches)
SELECT i.ord, i.name, (festival.stats(i.name)->>'height')::int AS height,
	   (t->>'overflow_nodes')::bigint > 0 AS overflowed,
	   (t->>'merge_backs')::bigint > 0 AS merged_back,
	   (t->>'splits_leaf')::bigint + (t->>'splits_internal')::bigint AS splits
FROM fr_index i CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'totals' AS t) s
ORDER BY i.ord;
-- snapshots count overflow nodes apart (FESTIval's IndexSnapshot did): per
-- level, against the O-node entries (child <> group) read from the file's
-- internal pages here (fr_none writes through: the file is current)
CREATE FUNCTION fr_onodes_in_file(idx text) RETURNS TABLE (level int, onodes bigint, entries bigint)
LANGUAGE sql AS $$
	WITH RECURSIVE t(page, level) AS (
		SELECT (festival.stats(idx)->>'root')::bigint, (festival.stats(idx)->>'height')::int - 1
		UNION ALL
		SELECT n.ref, n.level - 1 FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE n.level > 0),
	e AS (SELECT t.level, n.ref AS child,
				 fixture.get_le(fixture.read_page(fixture.index_file(idx), 1024, t.page), 32 + 48 * n.position + 40, 8) AS grp
		  FROM t CROSS JOIN LATERAL festival.node(idx, t.page) n WHERE t.level > 0)
	SELECT e.level - 1, count(*) FILTER (WHERE e.child <> e.grp),
		   coalesce(sum((SELECT count(*) FROM festival.node(idx, e.child))) FILTER (WHERE e.child <> e.grp), 0)
	FROM e GROUP BY e.level
$$;
CREATE TABLE fr_snap AS SELECT festival.snapshot('fr_none') AS snapshot_id;
SELECT s.overflow_nodes > 0 AS has_onodes,
	   s.overflow_nodes = (SELECT sum(onodes) FROM fr_onodes_in_file('fr_none')) AS total_as_file,
	   (SELECT bool_and(l.overflow_nodes = f.onodes AND l.overflow_entries = f.entries)
		FROM festival.index_snapshot_level l JOIN fr_onodes_in_file('fr_none') f USING (level)
		WHERE l.snapshot_id = s.snapshot_id) AS per_level_as_file,
	   s.nodes = (festival.stats('fr_none')->>'pages')::bigint - 2 AS onodes_among_nodes
FROM festival.index_snapshot s JOIN fr_snap USING (snapshot_id);
-- structures without overflow nodes leave them NULL
SELECT festival.create_index('fr_rtree', 'rtree', 'fr_dev', '{"page_size": 1024}', 'fr_src') > 0 AS created,
	   festival.build('fr_rtree') > 0 AS built;
INSERT INTO fr_snap SELECT festival.snapshot('fr_rtree');
SELECT overflow_nodes IS NULL AS no_count, overflow_nodes_per_level IS NULL AS no_levels
FROM festival.index_snapshot WHERE index_name = 'fr_rtree';
-- dumps mark the O-nodes: exactly the pages the file's internal entries
-- name as O-nodes (child <> group) have overflow true, the others false;
-- structures without overflow nodes leave it NULL
SELECT festival.dump('fr_none', (SELECT min(snapshot_id) FROM fr_snap)) > 0 AS dumped,
	   festival.dump('fr_rtree', (SELECT max(snapshot_id) FROM fr_snap)) > 0 AS dumped_rtree;
WITH RECURSIVE t(page, level) AS (
	SELECT (festival.stats('fr_none')->>'root')::bigint, (festival.stats('fr_none')->>'height')::int - 1
	UNION ALL
	SELECT n.ref, n.level - 1 FROM t CROSS JOIN LATERAL festival.node('fr_none', t.page) n WHERE n.level > 0),
onode AS (SELECT n.ref AS page
		  FROM t CROSS JOIN LATERAL festival.node('fr_none', t.page) n
		  WHERE t.level > 0
			AND n.ref <> fixture.get_le(fixture.read_page(fixture.index_file('fr_none'), 1024, t.page),
										32 + 48 * n.position + 40, 8))
SELECT count(*) FILTER (WHERE d.overflow) > 0 AS marks_some,
	   bool_and(d.overflow = (d.page IN (SELECT page FROM onode))) AS marks_exactly_the_onodes,
	   count(*) FILTER (WHERE d.overflow IS NULL) AS unknown
FROM festival.index_node d WHERE d.snapshot_id = (SELECT min(snapshot_id) FROM fr_snap);
SELECT count(*) > 0 AS nodes, count(overflow) AS marked
FROM festival.index_node WHERE snapshot_id = (SELECT max(snapshot_id) FROM fr_snap);
SELECT festival.drop_index('fr_rtree');

-- Phase 3: delete two objects in five, then most of a corner (groups lose
-- pages, are packed into one page or dissolved)
CREATE TABLE fr_gone AS SELECT id, geom FROM fr_src
	WHERE (id % 5 IN (1, 3) AND id < 8000) OR (id % 7 <> 0 AND ST_XMax(geom) < 120 AND ST_YMax(geom) < 120);
DELETE FROM fr_src WHERE id IN (SELECT id FROM fr_gone);
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete(i.name, g.id, g.geom) AS ok
	  FROM fr_gone g CROSS JOIN fr_index i
	  ORDER BY (g.id * 31) % 10007, g.id, i.ord) s;
-- deleting again finds nothing
SELECT count(*) FILTER (WHERE festival.delete(i.name, g.id, g.geom)) AS deleted_twice
FROM fr_gone g CROSS JOIN fr_index i WHERE g.id % 7 = 0;
SELECT * FROM fixture.verify_indices('delete', 'fr_index', 'fr_src', 'fr_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT * FROM fr_knn_batch('delete');
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'reinserted_entries')::bigint > 0) AS reinserted_orphans,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'nodes_freed')::bigint > 0) AS freed_pages
FROM fr_index;

-- Phase 4: update one object in eight, moved by (3, -2), one in three of
-- them under a new id; then the deleted ones of id % 10 = 1 come back
CREATE TABLE fr_moved AS
	SELECT id AS old_id, geom AS old_geom,
		   CASE WHEN id % 3 = 0 THEN id + 100000 ELSE id END AS new_id,
		   ST_Translate(geom, 3, -2) AS new_geom
	FROM fr_src WHERE id % 8 = 0;
DELETE FROM fr_src WHERE id IN (SELECT old_id FROM fr_moved);
INSERT INTO fr_src SELECT new_id, new_geom FROM fr_moved;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.update(i.name, m.old_id, m.old_geom, m.new_id, m.new_geom) AS ok
	  FROM fr_moved m CROSS JOIN fr_index i
	  ORDER BY (m.old_id * 13) % 10007, m.old_id, i.ord) s;
INSERT INTO fr_src SELECT id, geom FROM fr_gone WHERE id % 10 = 1;
SELECT count(*) FILTER (WHERE festival.insert(i.name, g.id, g.geom)) AS reinserted
FROM fr_gone g CROSS JOIN fr_index i WHERE g.id % 10 = 1;
SELECT * FROM fixture.verify_indices('update', 'fr_index', 'fr_src', 'fr_brute', ARRAY[2, 8, 12, 21, 29, 36]);

-- Phase 5: close every index (buffers flushed), then query: each reopens
-- (the access counters start again; the groups are in the pages)
SELECT count(*) FILTER (WHERE closed) AS closed
FROM (SELECT festival.close(name) AS closed FROM fr_index) s;
SELECT * FROM fixture.verify_indices('reopened', 'fr_index', 'fr_src', 'fr_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT count(*) FILTER (WHERE festival.delete(i.name, s.id, s.geom)) AS deleted
FROM fr_src s CROSS JOIN fr_index i WHERE s.id % 11 = 0;
DELETE FROM fr_src WHERE id % 11 = 0;

\c
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET festival.log_sync = never;
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE festival.stats(name)->>'clean_on_disk' = 'true') AS clean
FROM fr_index;
SELECT * FROM fixture.verify_indices('new session', 'fr_index', 'fr_src', 'fr_brute', ARRAY[2, 8, 12, 21, 29, 36]);
SELECT * FROM fr_knn_batch('new session');

-- a rebuild of every index from the source
SELECT count(*) FILTER (WHERE built = (SELECT count(*) FROM fr_src)) AS rebuilt
FROM (SELECT festival.build(name) AS built FROM fr_index) s;
SELECT * FROM fixture.verify_indices('rebuilt', 'fr_index', 'fr_src', 'fr_brute', ARRAY[2, 8, 12, 21, 29, 36]);

-------------------------------------------------------------------------------
-- The flaw of Carniel et al. 2018 (§2) and its fix
-------------------------------------------------------------------------------
-- Points spread by two primes over [0, 1000]^2, built one at a time into
-- FOR-trees of 1 kB pages counting every access (the default), at 1,000,
-- 10,000 and 100,000 points, beside R-trees of the same pages.  The height
-- grows as log N: by one level or two per tenfold.  A window of 1/10,000
-- of the extent reads the root's path and a few leaves.
CREATE TABLE fr_pts (n int, id bigint, geom geometry);
INSERT INTO fr_pts
SELECT n, i, ST_MakePoint((i::bigint * 7919 % 100003) / 100.0, (i::bigint * 104729 % 99991) / 100.0)
FROM (VALUES (1000), (10000), (100000)) v(n) CROSS JOIN LATERAL generate_series(1, n) i;
CREATE VIEW fr_pts_1000 AS SELECT id, geom FROM fr_pts WHERE n = 1000;
CREATE VIEW fr_pts_10000 AS SELECT id, geom FROM fr_pts WHERE n = 10000;
CREATE VIEW fr_pts_100000 AS SELECT id, geom FROM fr_pts WHERE n = 100000;
CREATE TABLE fr_growth (structure text, access_count text, n int, name text);
INSERT INTO fr_growth
SELECT s, a, n, format('fr_%s_%s', s || coalesce('_' || a, ''), n)
FROM (VALUES ('fortree', 'all'), ('rtree', NULL)) v(s, a), (VALUES (1000), (10000), (100000)) w(n);
-- FESTIval's counting: at 1,000 and 2,000 points (its build reads the
-- whole leaf group at every insert)
CREATE VIEW fr_pts_2000 AS SELECT id, geom FROM fr_pts WHERE n = 10000 AND id <= 2000;
INSERT INTO fr_growth VALUES ('fortree', 'festival', 1000, 'fr_fortree_festival_1000'),
							 ('fortree', 'festival', 2000, 'fr_fortree_festival_2000');
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE festival.create_index(name, structure, 'fr_dev',
		   CASE structure WHEN 'fortree' THEN jsonb_build_object('page_size', 1024, 'access_count', access_count)
		   ELSE '{"page_size": 1024}' END, 'fr_pts_' || n) > 0) AS created
FROM fr_growth;
SELECT count(*) FILTER (WHERE festival.build(name) = n) AS built FROM fr_growth;
-- height, pages, the window's node reads, leaves; and the window's answer
CREATE FUNCTION fr_window_reads(idx text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	before bigint := (festival.stats(idx)->'totals'->>'nodes_visited')::bigint;
BEGIN
	PERFORM count(*) FROM festival.query(idx, ST_MakeEnvelope(500, 500, 510, 510));
	RETURN (festival.stats(idx)->'totals'->>'nodes_visited')::bigint - before;
END
$$;
SELECT structure, access_count, n, (festival.stats(name)->>'height')::int AS height,
	   (festival.stats(name)->>'pages')::int - 2 AS node_pages,
	   fr_window_reads(name) AS window_node_reads,
	   (SELECT count(*) FROM festival.query(name, ST_MakeEnvelope(500, 500, 510, 510)))
		   = (SELECT count(*) FROM fr_pts p
			  WHERE (p.n = g.n OR (g.n = 2000 AND p.n = 10000 AND p.id <= 2000))
				AND ST_Intersects(p.geom, ST_MakeEnvelope(500, 500, 510, 510))) AS right_answer,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM fr_growth g ORDER BY structure, access_count, n;
-- heights against log N: from 1,000 to 100,000 points the FOR-tree grows by
-- at most two levels more than the R-tree (each group holds at least m = 12
-- points and at most M + (its O-nodes) per level, log_12(100) < 2 + 1)
SELECT max(h) FILTER (WHERE n = 100000) - max(h) FILTER (WHERE n = 1000) AS fortree_growth,
	   (SELECT max((festival.stats(name)->>'height')::int) FILTER (WHERE n = 100000)
			   - max((festival.stats(name)->>'height')::int) FILTER (WHERE n = 1000)
		FROM fr_growth WHERE structure = 'rtree') AS rtree_growth,
	   max(h) FILTER (WHERE n = 100000) <= ceil(ln(100000 / 12.0) / ln(10)) + 1 AS within_log_bound
FROM (SELECT n, (festival.stats(name)->>'height')::int AS h FROM fr_growth
	  WHERE structure = 'fortree' AND access_count = 'all') s;
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM fr_growth) s;

-------------------------------------------------------------------------------
-- check() reports a broken group
-------------------------------------------------------------------------------
-- fr_tiny's root holds groups with O-nodes; an O-node's entry is forged to
-- name a group that has no P-node (byte 40 of a 48-byte entry, after the
-- 32-byte page header), with a valid checksum
SELECT festival.close('fr_tiny');
CREATE TABLE fr_forged AS
SELECT page, slot FROM (
	SELECT n.page, n.position AS slot,
		   fixture.get_le(fixture.read_page(fixture.index_file('fr_tiny'), 1024, n.page), 32 + 48 * n.position + 32, 8) AS child,
		   fixture.get_le(fixture.read_page(fixture.index_file('fr_tiny'), 1024, n.page), 32 + 48 * n.position + 40, 8) AS grp
	FROM festival.node('fr_tiny', (festival.stats('fr_tiny')->>'root')::bigint) n) e
WHERE child <> grp ORDER BY page, slot LIMIT 1;
SELECT festival.close('fr_tiny');
SELECT count(*) AS forged_entries FROM fr_forged;
SELECT count(*) AS forged
FROM (SELECT fixture.forge_page(fixture.index_file('fr_tiny'), 1024, page, 32 + 48 * slot + 40, 999999, 8)
	  FROM fr_forged) s;
-- (the orphaned group's pages are leaked: as one range or a page and a
-- range, as the buffer's flushes happened to place them)
SELECT DISTINCT severity,
	   regexp_replace(regexp_replace(message, '[0-9]+', 'N', 'g'),
					  '^pages? N( to N \(N pages\))? (is|are) ', 'page(s) N: ') AS message
FROM festival.check('fr_tiny') ORDER BY 1, 2;
-- answers do not depend on the group field: still right
SELECT (SELECT array_agg(id ORDER BY id) FROM festival.query('fr_tiny', ST_MakeEnvelope(-30, -30, 430, 430)))
	   = (SELECT array_agg(id ORDER BY id) FROM fr_src) AS answers_right;
SELECT festival.build('fr_tiny') = (SELECT count(*) FROM fr_src) AS rebuilt,
	   (SELECT count(*) FROM festival.check('fr_tiny')) AS check_rows;

-------------------------------------------------------------------------------
-- Refused options
-------------------------------------------------------------------------------
\set VERBOSITY default
SELECT festival.create_index('fr_bad', 'fortree', 'fr_dev', '{"min_fill": 60}');
SELECT festival.create_index('fr_bad', 'fortree', 'fr_dev', '{"page_size": 1024, "max_fill": 10}');
SELECT festival.create_index('fr_bad', 'fortree', 'fr_dev', '{"x": 0}');
SELECT festival.create_index('fr_bad', 'fortree', 'fr_dev', '{"access_count": "some"}');
SELECT festival.create_index('fr_bad', 'fortree', 'fr_dev', '{"framework": "fortree", "ratio_flushing": 101}');
SELECT festival.create_index('fr_bad', 'fortree', 'fr_dev', '{"ratio_flushing": 10}');
SELECT festival.build('fr_none', 'str');
SELECT count(*) AS bad_indices FROM festival.index WHERE name = 'fr_bad';
\set VERBOSITY terse

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM festival.index WHERE name LIKE 'fr\_%') s;
SELECT festival.drop_device('fr_dev');
-- snapshots outlive their indices: this suite's go
DELETE FROM festival.index_snapshot WHERE snapshot_id IN (SELECT snapshot_id FROM fr_snap);
