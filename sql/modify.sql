--
-- modify: festival.insert / delete / update on an R-tree of small pages,
-- kept in step with its source table md_src.  After each phase the answers
-- of festival.query for every predicate are compared with PostGIS brute
-- force over md_src, and festival.check() must return no rows.
--
-- page_size 1024 gives M = 24 and m = 12 entries per node, so a few
-- thousand objects make a tree of several levels, and deleting most of them
-- eliminates underfull nodes (CondenseTree) and shortens the tree.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('md_dev', io => 'buffered');

-- the source: every object of fx_src (mixed geometries, copies, points on
-- edges) and 1500 more points and small boxes among them
CREATE TABLE md_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO md_src SELECT id, geom FROM fx_src;
INSERT INTO md_src
SELECT 20001 + i,
	   CASE WHEN i % 2 = 0
			THEN ST_MakePoint((i * 37) % 397 + 0.5, (i * 91) % 389 + 0.25)
			ELSE ST_MakeEnvelope((i * 37) % 397, (i * 91) % 389,
								 (i * 37) % 397 + 1 + i % 4, (i * 91) % 389 + 1 + i % 3)
	   END
FROM generate_series(0, 1499) i;

SELECT festival.create_index('md', 'rtree', 'md_dev',
	'{"page_size": 1024, "split": "quadratic"}', 'md_src') > 0 AS created;

-- Compare festival with the brute force over md_src for every predicate and
-- a selection of query geometries: per predicate the answers of both and
-- the answers only one of them gave (must be 0).
CREATE FUNCTION pg_temp.md_compare()
RETURNS TABLE (pred text, brute numeric, festival numeric, missing numeric, extra numeric)
LANGUAGE plpgsql AS $$
DECLARE
	qids int[] := ARRAY[1, 2, 4, 6, 8, 11, 12, 13, 16, 21, 22, 29, 31, 32];
BEGIN
	DROP TABLE IF EXISTS md_brute;
	CREATE TEMP TABLE md_brute AS SELECT * FROM fx_brute('md_src', qids);
	RETURN QUERY
		SELECT c.pred, sum(c.brute), sum(c.festival), sum(c.missing), sum(c.extra)
		FROM fx_compare('md', 'md_brute', qids) c
		JOIN fx_predicate p ON p.pred = c.pred
		GROUP BY p.ord, c.pred
		ORDER BY p.ord;
END
$$;

-------------------------------------------------------------------------------
-- Phase 1: insert 4024 objects one at a time, in a mixed order
-------------------------------------------------------------------------------
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.insert('md', id, geom) AS ok
	  FROM md_src ORDER BY (id * 7919) % 10007, id) s;

SELECT festival.stats('md')->>'entries' AS entries,
	   festival.stats('md')->>'height' AS height,
	   (festival.stats('md')->'totals'->>'splits_leaf')::int > 100 AS many_leaf_splits,
	   (festival.stats('md')->'totals'->>'splits_internal')::int > 0 AS internal_splits,
	   festival.stats('md')->>'all_points' AS all_points;
SELECT * FROM festival.check('md');
SELECT * FROM pg_temp.md_compare();

-------------------------------------------------------------------------------
-- Phase 2: duplicates and if_absent
-------------------------------------------------------------------------------
-- without if_absent the same id and geometry is added again: two entries
SELECT festival.insert('md', id, geom) AS inserted FROM md_src WHERE id = 1001;
SELECT festival.stats('md')->>'entries' AS entries;
-- answers are ids, each once: the filter's candidates list 1001 once
SELECT count(*) AS candidates_for_1001
FROM festival.query('md', 'POINT(5 5)', 'intersects', false) WHERE id = 1001;
-- refinement answers like the source: 1001 once
SELECT count(*) AS answers_for_1001
FROM festival.query('md', 'POINT(5 5)', 'intersects') WHERE id = 1001;
-- the index now holds one entry more than its source has rows
SELECT severity, page, message FROM festival.check('md');

-- with if_absent an existing (id, MBR) entry is left alone: false
SELECT festival.insert('md', id, geom, if_absent => true) AS inserted
FROM md_src WHERE id IN (1, 1001, 2002, 4210) ORDER BY id;
SELECT festival.stats('md')->>'entries' AS entries;

-- one of the two copies goes; the other stays and still answers
SELECT festival.delete('md', id, geom) AS deleted FROM md_src WHERE id = 1001;
SELECT count(*) AS candidates_for_1001
FROM festival.query('md', 'POINT(5 5)', 'intersects', false) WHERE id = 1001;
SELECT * FROM festival.check('md');

-- a new object with if_absent: true the first time, false the second
INSERT INTO md_src VALUES (30001, 'POLYGON((1 1, 3 1, 2 4, 1 1))');
SELECT festival.insert('md', 30001, 'POLYGON((1 1, 3 1, 2 4, 1 1))', if_absent => true) AS first,
	   festival.insert('md', 30001, 'POLYGON((1 1, 3 1, 2 4, 1 1))', if_absent => true) AS second;
-- if_absent compares id and MBR: the same id with another MBR is absent
SELECT festival.insert('md', 30001, 'POINT(2 2)', if_absent => true) AS other_mbr;
SELECT festival.delete('md', 30001, 'POINT(2 2)') AS deleted;
-- same geometry under different ids are different entries (fx_src has many)
SELECT count(*) AS same_place
FROM festival.query('md', ST_MakeEnvelope(0, 0, 10, 10), 'equals');

SELECT festival.stats('md')->>'entries' AS entries,
	   (SELECT count(*) FROM md_src) AS source_rows;
SELECT * FROM festival.check('md');
SELECT * FROM pg_temp.md_compare();

-------------------------------------------------------------------------------
-- Phase 3: delete
-------------------------------------------------------------------------------
-- absent entries: false, and nothing changes
SELECT festival.delete('md', 999999, geom) AS unknown_id FROM md_src WHERE id = 1;
SELECT festival.delete('md', 1, 'POINT(1 1)') AS other_mbr;
SELECT festival.delete('md', 1, ST_Translate(geom, 0.5, 0)) AS moved FROM md_src WHERE id = 1;
SELECT festival.stats('md')->>'entries' AS entries;

SELECT festival.stats('md')->>'height' AS height_before \gset
SELECT (festival.stats('md')->'totals'->>'nodes_freed')::int AS freed_before,
	   (festival.stats('md')->'totals'->>'reinserted_entries')::int AS reinserted_before \gset

-- delete nine in ten objects, in a mixed order (a few objects that make
-- contains, covers and equals answers are kept)
CREATE TEMP TABLE md_gone AS
	SELECT id, geom FROM md_src
	WHERE id % 10 <> 0 AND id NOT IN (1001, 3001, 4210, 6021, 6041, 8001);
DELETE FROM md_src WHERE id IN (SELECT id FROM md_gone);
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete('md', id, geom) AS ok
	  FROM md_gone ORDER BY (id * 31) % 10007, id) s;
-- deleting them again finds nothing
SELECT count(*) FILTER (WHERE festival.delete('md', id, geom)) AS deleted_again
FROM md_gone WHERE id % 7 = 0;

-- underfull nodes were eliminated, their pages freed and their entries
-- reinserted (CondenseTree)
SELECT festival.stats('md')->>'entries' AS entries,
	   (SELECT count(*) FROM md_src) AS source_rows,
	   :height_before AS height_before,
	   festival.stats('md')->>'height' AS height_after,
	   (festival.stats('md')->'totals'->>'nodes_freed')::int > :freed_before AS nodes_freed,
	   (festival.stats('md')->'totals'->>'reinserted_entries')::int > :reinserted_before AS reinserted,
	   (festival.stats('md')->>'free_pages')::int > 0 AS free_pages;
SELECT * FROM festival.check('md');
SELECT * FROM pg_temp.md_compare();

-------------------------------------------------------------------------------
-- Phase 4: update
-------------------------------------------------------------------------------
-- the old entry must exist: otherwise false, and the new one is not added
SELECT festival.update('md', 999999, 'POINT(1 1)', 888888, 'POINT(2 2)') AS unknown_old;
SELECT festival.update('md', 10, 'POINT(1 1)', 888888, 'POINT(2 2)') AS wrong_old_mbr;
SELECT count(*) AS new_entry
FROM festival.query('md', 'POINT(2 2)', 'intersects', false) WHERE id = 888888;
SELECT festival.stats('md')->>'entries' AS entries;

-- move every other object by (1, 2), and give some of them new ids
CREATE TEMP TABLE md_moved AS
	SELECT id AS old_id, geom AS old_geom,
		   CASE WHEN id % 40 = 0 THEN id + 100000 ELSE id END AS new_id,
		   ST_Translate(geom, 1, 2) AS new_geom
	FROM md_src WHERE id % 20 = 0;
DELETE FROM md_src WHERE id IN (SELECT old_id FROM md_moved);
INSERT INTO md_src SELECT new_id, new_geom FROM md_moved;
SELECT count(*) AS calls,
	   count(*) FILTER (WHERE festival.update('md', old_id, old_geom, new_id, new_geom)) AS returned_true,
	   count(*) FILTER (WHERE new_id <> old_id) AS new_ids
FROM md_moved;
-- the old entries are gone
SELECT count(*) FILTER (WHERE festival.delete('md', old_id, old_geom)) AS old_still_there
FROM md_moved;
SELECT festival.stats('md')->>'entries' AS entries,
	   (SELECT count(*) FROM md_src) AS source_rows;
SELECT * FROM festival.check('md');
SELECT * FROM pg_temp.md_compare();

-------------------------------------------------------------------------------
-- Phase 5: delete all but a few
-------------------------------------------------------------------------------
CREATE TEMP TABLE md_gone2 AS
	SELECT id, geom FROM md_src
	WHERE id % 100 <> 0 AND id NOT IN (1001, 3001, 4210, 6021, 6041, 8001);
DELETE FROM md_src WHERE id IN (SELECT id FROM md_gone2);
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete('md', id, geom) AS ok
	  FROM md_gone2 ORDER BY (id * 31) % 10007, id) s;
-- the tree is lower than after phase 1 (and than after phase 3)
SELECT festival.stats('md')->>'entries' AS entries,
	   (SELECT count(*) FROM md_src) AS source_rows,
	   :height_before AS height_after_phase_1,
	   festival.stats('md')->>'height' AS height;
SELECT * FROM festival.check('md');
SELECT * FROM pg_temp.md_compare();

-------------------------------------------------------------------------------
-- Phase 6: changes are NOT transactional.  Index files live outside
-- PostgreSQL's transactions, like sequences: a ROLLBACK undoes the source
-- table's change but not the index's.
-------------------------------------------------------------------------------
BEGIN;
INSERT INTO md_src VALUES (40001, 'POINT(7 7)');
SELECT festival.insert('md', 40001, 'POINT(7 7)') AS inserted;
ROLLBACK;
-- the source row is gone, the index entry is still there
SELECT count(*) AS source_rows FROM md_src WHERE id = 40001;
SELECT id FROM festival.query('md', 'POINT(7 7)', 'intersects', false);
SELECT festival.stats('md')->>'entries' AS entries;
-- so the index is one entry ahead of its source
SELECT severity, page, message FROM festival.check('md');
-- remove it by hand
SELECT festival.delete('md', 40001, 'POINT(7 7)') AS deleted;
SELECT * FROM festival.check('md');

-- a rolled-back delete stays deleted as well
SELECT id AS kept_id, ST_AsText(geom) AS kept_geom FROM md_src ORDER BY id LIMIT 1 \gset
BEGIN;
SELECT festival.delete('md', :kept_id, :'kept_geom') AS deleted;
ROLLBACK;
SELECT count(*) AS entries_of_kept
FROM festival.query('md', :'kept_geom', 'intersects', false) WHERE id = :kept_id;
SELECT severity, page, message FROM festival.check('md');
SELECT festival.insert('md', :kept_id, :'kept_geom') AS inserted_again;
SELECT * FROM festival.check('md');

-- and an update in a transaction that fails later keeps its effect
BEGIN;
SELECT festival.update('md', :kept_id, :'kept_geom', :kept_id, ST_Translate(:'kept_geom', 1, 1)) AS updated;
\set VERBOSITY terse
SELECT 1 / 0;
\set VERBOSITY default
ROLLBACK;
SELECT count(*) AS moved_entry
FROM festival.query('md', ST_Translate(:'kept_geom', 1, 1), 'equals', false) WHERE id = :kept_id;
SELECT festival.update('md', :kept_id, ST_Translate(:'kept_geom', 1, 1), :kept_id, :'kept_geom') AS moved_back;

SELECT festival.stats('md')->>'entries' AS entries,
	   (SELECT count(*) FROM md_src) AS source_rows;
SELECT * FROM festival.check('md');
SELECT * FROM pg_temp.md_compare();

-------------------------------------------------------------------------------
-- Phase 7: an operation that fails leaves the index as it was.  Every
-- operation is one modification written when it commits; an ERROR before
-- that discards the index's memory and the next use reopens the file.
-------------------------------------------------------------------------------
INSERT INTO md_src VALUES (50001, 'POINT(600 600)'), (50002, 'POINT(601 600)'), (50003, 'POINT(602 601)');
SELECT count(*) FILTER (WHERE festival.insert('md', id, geom)) AS inserted
FROM md_src WHERE id BETWEEN 50001 AND 50003;
SELECT festival.stats('md')->>'entries' AS entries_before \gset
SELECT :'entries_before' AS entries_before, (SELECT count(*) FROM md_src) AS source_rows;

\set VERBOSITY terse
-- the update fails after it removed the old entry (the new geometry has
-- another SRID), the insert and the query fail on the SRID check
SELECT festival.update('md', 50001, 'POINT(600 600)', 50001, 'SRID=4326;POINT(600 600)');
SELECT festival.insert('md', 50004, 'SRID=4326;POINT(603 600)');
SELECT count(*) FROM festival.query('md', 'SRID=4326;POINT(600 600)');
\set VERBOSITY default

-- nothing changed: the old entry is there, the count is exact, and check()
-- finds nothing, before and after closing the index
SELECT id FROM festival.query('md', ST_MakeEnvelope(590, 590, 610, 610), 'intersects', false) ORDER BY id;
SELECT festival.stats('md')->>'entries' AS entries,
	   festival.stats('md')->>'entries' = :'entries_before' AS same_entries;
SELECT * FROM festival.check('md');
SELECT festival.close('md') AS closed;
SELECT festival.stats('md')->>'entries' AS entries;
SELECT * FROM festival.check('md');
SELECT * FROM pg_temp.md_compare();

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT festival.drop_index('md');
SELECT festival.drop_device('md_dev');
DROP TABLE md_src, md_gone, md_gone2, md_moved, md_brute;
RESET festival.progress_interval;
RESET client_min_messages;
