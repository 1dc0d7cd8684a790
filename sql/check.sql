--
-- check: festival.check() returns no rows for healthy indices of every
-- shape, and compares the number of entries with the source table.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('ck_dev', io => 'buffered');

-------------------------------------------------------------------------------
-- Healthy indices of different shapes
-------------------------------------------------------------------------------
-- empty (a root leaf without entries), without a source
SELECT festival.create_index('ck_empty', 'rtree', 'ck_dev') > 0 AS created;
-- a single entry
SELECT festival.create_index('ck_one', 'rtree', 'ck_dev') > 0 AS created;
SELECT festival.insert('ck_one', 1, 'POLYGON((0 0, 1 0, 1 1, 0 0))') AS inserted;
-- a root leaf with 60 entries (M = 101)
SELECT festival.create_index('ck_leaf', 'rtree', 'ck_dev') > 0 AS created;
SELECT count(*) FILTER (WHERE festival.insert('ck_leaf', id, geom)) AS inserted
FROM fx_src WHERE id % 42 = 0;
-- two levels: 1221 points in pages of 4096 bytes
SELECT festival.create_index('ck_two', 'rtree', 'ck_dev', '{"split": "linear"}', 'fx_pts') > 0 AS created;
SELECT festival.build('ck_two') AS built;
-- deep: M = 4, m = 2 (1024-byte pages filled to 17 %)
SELECT festival.create_index('ck_deep', 'rtree', 'ck_dev',
	'{"page_size": 1024, "max_fill": 17, "min_fill": 50}', 'fx_src') > 0 AS created;
SELECT festival.build('ck_deep') AS built;
-- wide: M = 1637 (64 KiB pages), two leaves under the root
SELECT festival.create_index('ck_wide', 'rtree', 'ck_dev', '{"page_size": 65536}', 'fx_src') > 0 AS created;
SELECT festival.build('ck_wide') AS built;

SELECT name, festival.stats(name)->>'entries' AS entries,
	   festival.stats(name)->>'height' AS height,
	   (SELECT count(*) FROM festival.check(name)) AS check_rows
FROM unnest(ARRAY['ck_empty', 'ck_one', 'ck_leaf', 'ck_two', 'ck_deep', 'ck_wide']) WITH ORDINALITY t(name, n)
ORDER BY n;

-- the deep tree after deleting four objects in five (many underfull nodes
-- eliminated and their pages freed): still healthy
SELECT count(*) FILTER (WHERE festival.delete('ck_deep', id, geom)) AS deleted
FROM (SELECT id, geom FROM fx_src WHERE id % 5 <> 0 ORDER BY (id * 13) % 2521) s;
SELECT festival.stats('ck_deep')->>'entries' AS entries,
	   festival.stats('ck_deep')->>'height' AS height,
	   (festival.stats('ck_deep')->>'free_pages')::int > 100 AS many_free_pages;
-- (its source fx_src still has all 2524 rows: that is the only finding)
SELECT severity, page, message FROM festival.check('ck_deep');
-- and after deleting everything: an empty root leaf, every page free
SELECT count(*) FILTER (WHERE festival.delete('ck_deep', id, geom)) AS deleted
FROM fx_src WHERE id % 5 = 0;
SELECT festival.stats('ck_deep')->>'entries' AS entries,
	   festival.stats('ck_deep')->>'height' AS height,
	   (festival.stats('ck_deep')->>'free_pages')::int + 3 = (festival.stats('ck_deep')->>'pages')::int
		   AS all_but_root_free;
SELECT severity, page, message FROM festival.check('ck_deep');
-- build makes it whole again
SELECT festival.build('ck_deep') AS built;
SELECT count(*) AS check_rows FROM festival.check('ck_deep');

-------------------------------------------------------------------------------
-- The source table and the entry count
-------------------------------------------------------------------------------
CREATE TABLE ck_src (id int PRIMARY KEY, geom geometry);
INSERT INTO ck_src SELECT id, geom FROM fx_src WHERE id % 3 = 0;
-- rows without a geometry are neither indexed nor counted
INSERT INTO ck_src SELECT 100000 + i, NULL FROM generate_series(1, 5) i;
SELECT festival.create_index('ck_idx', 'rtree', 'ck_dev', '{"page_size": 2048}', 'ck_src') > 0 AS created;
SELECT festival.build('ck_idx') AS built, count(*) AS source_rows, count(geom) AS with_geometry
FROM ck_src;
SELECT * FROM festival.check('ck_idx');

-- a source row deleted without deleting its entry: one error row
DELETE FROM ck_src WHERE id = 300;
SELECT severity, page, message FROM festival.check('ck_idx');
-- putting the row back fixes it
INSERT INTO ck_src SELECT id, geom FROM fx_src WHERE id = 300;
SELECT * FROM festival.check('ck_idx');

-- deleting row and entry together keeps them in step
SELECT festival.delete('ck_idx', id, geom) AS deleted FROM ck_src WHERE id = 300;
DELETE FROM ck_src WHERE id = 300;
SELECT * FROM festival.check('ck_idx');

-- a source row added without inserting it: the index is one entry short
INSERT INTO ck_src SELECT id, geom FROM fx_src WHERE id = 301;
SELECT severity, page, message FROM festival.check('ck_idx');
-- a NULL geometry changing to a real one counts as well
UPDATE ck_src SET geom = 'POINT(3 3)' WHERE id = 100001;
SELECT severity, page, message FROM festival.check('ck_idx');
-- a rebuild fixes everything
SELECT festival.build('ck_idx') AS built;
SELECT * FROM festival.check('ck_idx');

-- an entry the source never had, with the same count: check compares
-- counts, so it sees nothing (a query with refinement leaves the stray id
-- out and says so)
SELECT festival.update('ck_idx', 301, geom, 999999, geom) AS updated FROM ck_src WHERE id = 301;
SELECT count(*) AS check_rows FROM festival.check('ck_idx');
SELECT count(*) AS answers
FROM festival.query('ck_idx', (SELECT geom FROM ck_src WHERE id = 301), 'equals');
SELECT festival.update('ck_idx', 999999, geom, 301, geom) AS updated_back FROM ck_src WHERE id = 301;
SELECT count(*) AS answers
FROM festival.query('ck_idx', (SELECT geom FROM ck_src WHERE id = 301), 'equals');
SELECT * FROM festival.check('ck_idx');

-- the answers still equal the brute force
CREATE TEMP TABLE ck_brute AS
	SELECT * FROM fx_brute('ck_src', ARRAY(SELECT qid FROM fx_query WHERE qid < 100));
SELECT sum(brute) AS brute, sum(festival) AS festival, sum(missing) AS missing, sum(extra) AS extra
FROM fx_compare('ck_idx', 'ck_brute', ARRAY(SELECT qid FROM fx_query WHERE qid < 100));

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT festival.drop_index(name)
FROM unnest(ARRAY['ck_empty', 'ck_one', 'ck_leaf', 'ck_two', 'ck_deep', 'ck_wide', 'ck_idx']) name;
SELECT festival.drop_device('ck_dev');
DROP TABLE ck_src, ck_brute;
RESET festival.progress_interval;
RESET client_min_messages;
