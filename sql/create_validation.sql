--
-- create_validation: festival.create_index, its options and their
-- defaults, the stored configuration, and the life cycle of a name
-- (create, drop, create again; rolled-back creates and drops).
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('cv_dev');

-- whether a file (festival.index.file_name) exists on cv_dev, whose
-- directory is cv_dev inside festival.data_directory (never prints a path)
CREATE FUNCTION pg_temp.cv_file_exists(file_name text) RETURNS boolean
LANGUAGE sql AS $$
	SELECT (pg_stat_file(
				CASE current_setting('festival.data_directory')
					WHEN '' THEN 'festival'
					ELSE current_setting('festival.data_directory')
				END || '/cv_dev/' || file_name, true)).size IS NOT NULL
$$;

-------------------------------------------------------------------------------
-- Defaults and every option
-------------------------------------------------------------------------------
-- no options and '{}' mean the defaults; NULL is refused (hint: '{}')
SELECT festival.create_index('cv_default', 'rtree', 'cv_dev') > 0 AS created;
SELECT festival.create_index('cv_empty', 'rtree', 'cv_dev', '{}') > 0 AS created;
SELECT festival.create_index('cv_null', 'rtree', 'cv_dev', NULL) > 0 AS created;
-- one option at a time
SELECT festival.create_index('cv_page1k', 'rtree', 'cv_dev', '{"page_size": 1024}') > 0 AS created;
SELECT festival.create_index('cv_page64k', 'rtree', 'cv_dev', '{"page_size": 65536}') > 0 AS created;
SELECT festival.create_index('cv_linear', 'rtree', 'cv_dev', '{"split": "linear"}') > 0 AS created;
SELECT festival.create_index('cv_quadratic', 'rtree', 'cv_dev', '{"split": "quadratic"}') > 0 AS created;
SELECT festival.create_index('cv_min30', 'rtree', 'cv_dev', '{"min_fill": 30}') > 0 AS created;
SELECT festival.create_index('cv_max70', 'rtree', 'cv_dev', '{"max_fill": 70}') > 0 AS created;
-- all of them, and the extremes that still work
SELECT festival.create_index('cv_all', 'rtree', 'cv_dev',
	'{"max_fill": 80, "min_fill": 40, "split": "linear", "page_size": 2048}') > 0 AS created;
SELECT festival.create_index('cv_tiny', 'rtree', 'cv_dev',
	'{"page_size": 1024, "max_fill": 17, "min_fill": 1}') > 0 AS created;
-- with a source table and named columns (fx_src has a unique index on id)
SELECT festival.create_index('cv_source', 'rtree', 'cv_dev', '{"page_size": 8192}',
	'fx_src', id_column => 'id', geom_column => 'geom') > 0 AS created;

-- The stored configuration is complete: every option with its default
-- filled in.  A page holds floor((page_size - 32) / 40) entries, of which
-- M = floor(entries * max_fill / 100) are used, and m = max(2, ceil(M *
-- min_fill / 100)).
SELECT name, structure, device, options, source, id_column, geom_column,
	   owner = current_user::regrole AS mine
FROM festival.index ORDER BY index_id;
SELECT name, festival.stats(name)->'config'->'derived' AS derived
FROM festival.index ORDER BY index_id;

-- festival.stats(index)->'config': structure, framework, device, options,
-- derived parameters and source
SELECT jsonb_pretty(festival.stats('cv_default')->'config');
SELECT jsonb_pretty(festival.stats('cv_source')->'config');
-- the catalog options and the configuration the open index reports agree
SELECT name, options = festival.stats(name)->'config'->'options' AS same
FROM festival.index ORDER BY index_id;

-- a new index is empty, clean, a single leaf
SELECT festival.stats('cv_default')->>'height' AS height,
	   festival.stats('cv_default')->>'entries' AS entries,
	   festival.stats('cv_default')->>'clean_on_disk' AS clean,
	   festival.stats('cv_default')->>'all_points' AS all_points,
	   festival.stats('cv_default')->>'srid' AS srid;
SELECT count(*) AS rows FROM festival.check('cv_default');

-- index ids increase
SELECT bool_and(a.index_id < b.index_id) AS increasing
FROM festival.index a JOIN festival.index b ON b.name = 'cv_source' AND a.name <> 'cv_source';

-------------------------------------------------------------------------------
-- Invalid options (a few; the pgTAP tests cover the rest)
-------------------------------------------------------------------------------
\set VERBOSITY terse
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"fanout": 10}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"page_size": 1000}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"page_size": "4096"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"split": "cubic"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"min_fill": 50.5}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"min_fill": 60}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"page_size": 1024, "max_fill": 10}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '[1, 2]');
SELECT festival.create_index('cv_bad', 'rstar', 'cv_dev');
SELECT festival.create_index('cv_bad', 'rtree', 'no_such_device');
SELECT festival.create_index('cv bad', 'rtree', 'cv_dev');
SELECT festival.create_index('cv_default', 'rtree', 'cv_dev');	-- exists
\set VERBOSITY default
SELECT count(*) AS no_bad_index FROM festival.index WHERE name = 'cv_bad';

-- a source without an index on its id column works, with a NOTICE
CREATE TABLE cv_noindex (id int, geom geometry);
SET client_min_messages = notice;
SELECT festival.create_index('cv_noindex', 'rtree', 'cv_dev', source => 'cv_noindex') > 0 AS created;
SET client_min_messages = warning;

-------------------------------------------------------------------------------
-- Create, drop, create again under the same name
-------------------------------------------------------------------------------
SELECT festival.insert('cv_linear', 1, 'POINT(1 2)') AS inserted;
SELECT index_id AS old_id, file_name AS old_file FROM festival.index WHERE name = 'cv_linear' \gset
SELECT pg_temp.cv_file_exists(:'old_file') AS file_before_drop;
SELECT festival.drop_index('cv_linear');
SELECT count(*) AS catalog_rows, pg_temp.cv_file_exists(:'old_file') AS file_after_drop
FROM festival.index WHERE name = 'cv_linear';
-- the new index has a new id, the new options, and none of the old entries
SELECT festival.create_index('cv_linear', 'rtree', 'cv_dev', '{"split": "quadratic", "page_size": 1024}')
	> :old_id AS new_id;
SELECT options FROM festival.index WHERE name = 'cv_linear';
SELECT festival.stats('cv_linear')->>'entries' AS entries,
	   festival.stats('cv_linear')->'config'->'options'->>'split' AS split;
SELECT count(*) AS found FROM festival.query('cv_linear', 'POINT(1 2)', 'intersects', false);

-------------------------------------------------------------------------------
-- Transactions: the catalog rows are transactional, and the files follow
-------------------------------------------------------------------------------
-- a create that rolls back leaves no catalog row and no file
BEGIN;
SELECT festival.create_index('cv_rollback', 'rtree', 'cv_dev', '{"page_size": 1024}') > 0 AS created;
SELECT festival.insert('cv_rollback', 1, 'POINT(0 0)') AS inserted;
SELECT file_name AS rollback_file FROM festival.index WHERE name = 'cv_rollback' \gset
SELECT count(*) AS inside, pg_temp.cv_file_exists(:'rollback_file') AS file_inside
FROM festival.index WHERE name = 'cv_rollback';
ROLLBACK;
SELECT count(*) AS after_rollback, pg_temp.cv_file_exists(:'rollback_file') AS file_after
FROM festival.index WHERE name = 'cv_rollback';
-- so the same name can be created afterwards, empty, with other options
SELECT festival.create_index('cv_rollback', 'rtree', 'cv_dev', '{"split": "linear"}') > 0 AS created;
SELECT options, pg_temp.cv_file_exists(file_name) AS file
FROM festival.index WHERE name = 'cv_rollback';
SELECT festival.stats('cv_rollback')->>'entries' AS entries;

-- the same with a savepoint: only the inner create disappears
BEGIN;
SELECT festival.create_index('cv_outer', 'rtree', 'cv_dev') > 0 AS created;
SAVEPOINT inner_create;
SELECT festival.create_index('cv_inner', 'rtree', 'cv_dev') > 0 AS created;
SELECT file_name AS inner_file FROM festival.index WHERE name = 'cv_inner' \gset
ROLLBACK TO SAVEPOINT inner_create;
COMMIT;
SELECT name, pg_temp.cv_file_exists(file_name) AS file
FROM festival.index WHERE name IN ('cv_outer', 'cv_inner');
SELECT pg_temp.cv_file_exists(:'inner_file') AS inner_file;
SELECT festival.create_index('cv_inner', 'rtree', 'cv_dev') > 0 AS created;

-- a drop that rolls back keeps the index, its file and its entries; the
-- index was written through, so reopening it finds a consistent file with
-- an exact entry count (no "not closed cleanly" warning)
SELECT festival.insert('cv_outer', 1, 'POINT(5 5)') AS inserted,
	   festival.insert('cv_outer', 2, 'POINT(6 6)') AS inserted;
BEGIN;
SELECT festival.drop_index('cv_outer');
SELECT count(*) AS inside FROM festival.index WHERE name = 'cv_outer';
ROLLBACK;
SELECT count(*) AS after_rollback, pg_temp.cv_file_exists(file_name) AS file
FROM festival.index WHERE name = 'cv_outer'
GROUP BY file_name;
SELECT festival.stats('cv_outer')->>'entries' AS entries;
SELECT count(*) AS check_rows FROM festival.check('cv_outer');
SELECT count(*) AS found FROM festival.query('cv_outer', ST_MakeEnvelope(0, 0, 10, 10), 'intersects', false);

-------------------------------------------------------------------------------
-- Byte sizes with memory units (issue 10): every byte option (page_size,
-- buffer_size, log_size, cache_size) takes a JSON integer or a string with
-- one of PostgreSQL's units (B, kB, MB, GB, TB; base 1024, case matters);
-- the catalog and the meta page store bytes.  A fraction is accepted when
-- it makes a whole number of bytes ('1.5kB' = 1536), refused otherwise.
-------------------------------------------------------------------------------
SELECT festival.create_index('cv_units_fast', 'rtree', 'cv_dev',
	'{"page_size": "2kB", "framework": "fast", "buffer_size": "64kB",
	  "log_size": "1MB", "cache": "lru", "cache_size": "0.5MB"}') > 0 AS created;
SELECT festival.create_index('cv_units_efind', 'rtree', 'cv_dev',
	'{"page_size": "1.5kB", "framework": "efind", "buffer_size": "1 MB",
	  "log_size": "0TB", "cache_size": "8GB"}') > 0 AS created;
SELECT festival.create_index('cv_units_bytes', 'rtree', 'cv_dev',
	'{"page_size": "4096B", "cache_size": "0.0078125TB"}') > 0 AS created;
-- the same values as plain integers give the same configuration
SELECT festival.create_index('cv_units_plain', 'rtree', 'cv_dev',
	'{"page_size": 2048, "framework": "fast", "buffer_size": 65536,
	  "log_size": 1048576, "cache": "lru", "cache_size": 524288}') > 0 AS created;
SELECT name, options->'page_size' AS page_size, options->'buffer_size' AS buffer_size,
	   options->'log_size' AS log_size, options->'cache_size' AS cache_size
FROM festival.index WHERE name LIKE 'cv\_units\_%' ORDER BY name;
SELECT a.options = b.options AS units_equal_plain
FROM festival.index a, festival.index b
WHERE a.name = 'cv_units_fast' AND b.name = 'cv_units_plain';

-- refused: a unit in the wrong case or unknown, no unit, no number, a
-- fraction of a byte, out of range after the unit, an overflowing number;
-- the hint lists the units
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"page_size": "32kb"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"framework": "fast", "buffer_size": "64 KiB"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"framework": "efind", "log_size": "10"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"cache_size": "MB"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"page_size": "0.3kB"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"page_size": "1.25kB"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"page_size": "2MB"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"cache_size": "-1kB"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"cache_size": "9GB"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"framework": "fast", "log_size": "1e400TB"}');
SELECT festival.create_index('cv_bad', 'rtree', 'cv_dev', '{"framework": "fast", "log_size": "1e300TB"}');
SELECT count(*) AS no_bad_index FROM festival.index WHERE name = 'cv_bad';

-- a new session reopens the indices from their stored options: the meta
-- page (page 0 of the file: a 32-byte page header, the 200-byte meta
-- record, then the configuration text) holds the same bytes
\c
SET client_min_messages = warning;
SET festival.progress_interval = 0;
CREATE FUNCTION pg_temp.cv_file_exists(file_name text) RETURNS boolean
LANGUAGE sql AS $$
	SELECT (pg_stat_file(
				CASE current_setting('festival.data_directory')
					WHEN '' THEN 'festival'
					ELSE current_setting('festival.data_directory')
				END || '/cv_dev/' || file_name, true)).size IS NOT NULL
$$;
CREATE FUNCTION pg_temp.cv_meta_config(file_name text, page_size int) RETURNS jsonb
LANGUAGE sql AS $$
	WITH page AS (
		SELECT substring(pg_read_binary_file(
				CASE current_setting('festival.data_directory')
					WHEN '' THEN 'festival'
					ELSE current_setting('festival.data_directory')
				END || '/cv_dev/' || file_name, 0, page_size) FROM 233) AS b)
	SELECT convert_from(substring(b FOR position('\x00'::bytea IN b) - 1), 'UTF8')::jsonb
	FROM page
$$;
SELECT name, festival.insert(name, 1, 'POINT(1 2)') AS inserted
FROM festival.index WHERE name LIKE 'cv\_units\_%' ORDER BY name;
SELECT name, m->'page_size' AS page_size, m->'buffer_size' AS buffer_size,
	   m->'log_size' AS log_size, m->'cache_size' AS cache_size, m = options AS meta_equals_catalog
FROM festival.index, pg_temp.cv_meta_config(file_name, (options->>'page_size')::int) m
WHERE name LIKE 'cv\_units\_%' ORDER BY name;
SELECT name, festival.stats(name)->>'entries' AS entries
FROM festival.index WHERE name LIKE 'cv\_units\_%' ORDER BY name;
SELECT count(*) AS check_rows
FROM festival.index, festival.check(name)
WHERE name LIKE 'cv\_units\_%';

-------------------------------------------------------------------------------
-- Clean up: every file goes with its index
-------------------------------------------------------------------------------
CREATE TEMP TABLE cv_file AS SELECT name, file_name FROM festival.index;
SELECT count(*) AS indices, count(*) FILTER (WHERE pg_temp.cv_file_exists(file_name)) AS files
FROM cv_file;
SELECT name, festival.drop_index(name) AS dropped
FROM unnest(ARRAY(SELECT name FROM festival.index ORDER BY index_id)) name;
SELECT count(*) AS indices_left FROM festival.index;
SELECT count(*) AS files_left FROM cv_file WHERE pg_temp.cv_file_exists(file_name);
SELECT festival.drop_device('cv_dev');
DROP TABLE cv_noindex, cv_file;
RESET festival.progress_interval;
RESET client_min_messages;
