--
-- check: festival.check() returns no rows for healthy indices of every
-- shape, and compares the (id, MBR) entries with the source table.
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
-- (its source fx_src still has all 2524 rows: the count and the first
-- missing rows are the only findings)
SELECT severity, page, message FROM festival.check('ck_deep')
WHERE message NOT LIKE 'row % of source table public.fx_src (MBR POINT(%)) is not in the index';
SELECT count(*) AS missing_listed FROM festival.check('ck_deep')
WHERE message LIKE 'row % of source table public.fx_src (MBR POINT(%)) is not in the index';
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

-- an entry the source never had, with the same count: check compares the
-- (id, MBR) sets, so it names both the stray entry and the missing row (and
-- a query with refinement leaves the stray id out)
SELECT festival.update('ck_idx', 301, geom, 999999, geom) AS updated FROM ck_src WHERE id = 301;
SELECT severity, page, message FROM festival.check('ck_idx');
SELECT count(*) AS answers
FROM festival.query('ck_idx', (SELECT geom FROM ck_src WHERE id = 301), 'equals');
SELECT festival.update('ck_idx', 999999, geom, 301, geom) AS updated_back FROM ck_src WHERE id = 301;
SELECT count(*) AS answers
FROM festival.query('ck_idx', (SELECT geom FROM ck_src WHERE id = 301), 'equals');
SELECT * FROM festival.check('ck_idx');

-- a row moved behind the index's back (UPDATE without festival.update):
-- counts agree, the MBRs do not; festival.update reconciles it
UPDATE ck_src SET geom = 'POINT(5000 5000)' WHERE id = 303;
SELECT severity, page, message FROM festival.check('ck_idx');
SELECT festival.update('ck_idx', 303, g.geom, 303, 'POINT(5000 5000)') AS reconciled
FROM fx_src g WHERE g.id = 303;
SELECT * FROM festival.check('ck_idx');
UPDATE ck_src SET geom = g.geom FROM fx_src g WHERE g.id = 303 AND ck_src.id = 303;
SELECT festival.update('ck_idx', 303, 'POINT(5000 5000)', 303, g.geom) AS moved_back
FROM fx_src g WHERE g.id = 303;

-- more differences than are listed: the first 20, then one row counts the
-- rest (ids 3..63 of ck_src deleted: 21 rows, 1 beyond the list)
CREATE TEMP TABLE ck_saved AS SELECT * FROM ck_src WHERE id BETWEEN 3 AND 63;
DELETE FROM ck_src WHERE id BETWEEN 3 AND 63;
SELECT count(*) AS rows, count(*) FILTER (WHERE message LIKE 'entry % is in the index but not in source table %') AS listed,
	   string_agg(message, '') FILTER (WHERE message LIKE '%not listed%') AS rest,
	   string_agg(message, '') FILTER (WHERE message LIKE 'the index holds%') AS count_row
FROM festival.check('ck_idx');
INSERT INTO ck_src SELECT * FROM ck_saved;
SELECT * FROM festival.check('ck_idx');

-- every structure, and FAST's buffered changes: one moved row, one error
CREATE TABLE ck_psrc AS SELECT id, geom FROM fx_src WHERE id % 3 = 0 AND GeometryType(geom) = 'POINT';
CREATE TEMP TABLE ck_kinds (name text, structure text, options jsonb);
INSERT INTO ck_kinds VALUES
	('ck_k_rstar', 'rstartree', '{}'), ('ck_k_hilbert', 'hilbert', '{}'),
	('ck_k_xbr', 'xbrtree', '{}'), ('ck_k_grid', 'gridfile', '{}'),
	('ck_k_lbgrid', 'lbgrid', '{}'), ('ck_k_fast', 'rtree', '{"framework": "fast"}'),
	('ck_k_for', 'rtree', '{"framework": "fortree"}');
SELECT bool_and(festival.create_index(name, structure, 'ck_dev', options || '{"page_size": 1024}', 'ck_psrc') > 0
				AND festival.build(name) = (SELECT count(*) FROM ck_psrc)) AS built
FROM ck_kinds;
-- a change made through festival (in FAST's buffer, not yet on its pages)
-- agrees with the source; a change made behind its back does not
SELECT bool_and(festival.update(k.name, 309, g.geom, 309, 'POINT(11 12)')) AS updated
FROM ck_kinds k, fx_src g WHERE g.id = 309;
UPDATE ck_psrc SET geom = 'POINT(11 12)' WHERE id = 309;
UPDATE ck_psrc SET geom = 'POINT(77 77.5)' WHERE id = 306;
SELECT k.name, c.severity, c.message
FROM ck_kinds k CROSS JOIN LATERAL festival.check(k.name) c ORDER BY k.name, c.message;
UPDATE ck_psrc SET geom = g.geom FROM fx_src g WHERE g.id IN (306, 309) AND ck_psrc.id = g.id;
SELECT bool_and(festival.update(k.name, 309, 'POINT(11 12)', 309, g.geom)) AS updated_back
FROM ck_kinds k, fx_src g WHERE g.id = 309;
SELECT k.name, count(c.*) AS check_rows
FROM ck_kinds k LEFT JOIN LATERAL festival.check(k.name) c ON true GROUP BY k.name ORDER BY k.name;
SELECT festival.drop_index(name) FROM ck_kinds;
DROP TABLE ck_psrc;

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
