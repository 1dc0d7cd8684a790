--
-- device: festival.create_device / festival.drop_device and festival.device.
--
-- Device directories live inside festival.data_directory (default:
-- "festival" inside the data directory).  dv_dir(directory) names one for
-- pg_stat_file, so the tests can see directories without printing paths.
--
SET client_min_messages = warning;

CREATE FUNCTION pg_temp.dv_dir(directory text) RETURNS text
LANGUAGE sql AS $$
	SELECT CASE current_setting('festival.data_directory')
			   WHEN '' THEN 'festival'
			   ELSE current_setting('festival.data_directory')
		   END || '/' || directory
$$;

-- defaults: the directory is the device name, a file device with direct
-- I/O and the sync engine, no profile
SELECT festival.create_device('dv_default');
-- an explicit directory, a nested one (parents are created) and buffered I/O
SELECT festival.create_device('dv_explicit', 'explicit_dir');
SELECT festival.create_device('dv_nested', 'dv_nested_a/b');
SELECT festival.create_device('dv_buffered', io => 'buffered');
SELECT festival.create_device('dv_direct', 'direct_dir', kind => 'file', io => 'direct',
							  engine => 'sync', profile => NULL);

SELECT name, directory, kind, io, engine, profile,
	   created_by = current_user AS by_me,
	   created_at <= now() AS created_in_past
FROM festival.device ORDER BY name;

-- each directory exists now, and 'a/b' made its parent too
SELECT name, (pg_stat_file(pg_temp.dv_dir(directory), true)).isdir AS directory_exists
FROM festival.device ORDER BY name;
SELECT (pg_stat_file(pg_temp.dv_dir('dv_nested_a'), true)).isdir AS parent_exists;

-- an index works on every device, with direct and buffered I/O alike
SELECT d.name,
	   festival.create_index('dv_ix_' || d.name, 'rtree', d.name) > 0 AS created,
	   festival.insert('dv_ix_' || d.name, 1, 'POINT(1 1)') AS inserted,
	   festival.insert('dv_ix_' || d.name, 2, 'LINESTRING(0 0, 5 5)') AS inserted,
	   (SELECT count(*) FROM festival.query('dv_ix_' || d.name,
											ST_MakeEnvelope(0, 0, 2, 2), 'intersects', false)) AS found,
	   festival.stats('dv_ix_' || d.name)->'config'->'device'->>'io' AS io
FROM festival.device d ORDER BY d.name;
SELECT i.name, i.device, d.io
FROM festival.index i JOIN festival.device d ON d.name = i.device
ORDER BY i.name;

-- a device that holds an index cannot be dropped
\set VERBOSITY terse
SELECT festival.drop_device('dv_default');
\set VERBOSITY default
SELECT festival.drop_index(name) FROM festival.index WHERE name LIKE 'dv\_ix\_%' ORDER BY name;

-- drop_device forgets the device; its directory stays
SELECT festival.drop_device('dv_nested');
SELECT count(*) AS nested_rows FROM festival.device WHERE name = 'dv_nested';
SELECT (pg_stat_file(pg_temp.dv_dir('dv_nested_a/b'), true)).isdir AS directory_kept;

-- a dropped name can be created again, on the same existing directory
SELECT festival.create_device('dv_nested', 'dv_nested_a/b', io => 'buffered');
SELECT name, directory, io FROM festival.device WHERE name = 'dv_nested';

-- the catalog row follows the transaction: a rolled-back create leaves
-- no device behind, so the name is free afterwards
BEGIN;
SELECT festival.create_device('dv_rolled_back');
SELECT count(*) AS inside FROM festival.device WHERE name = 'dv_rolled_back';
ROLLBACK;
SELECT count(*) AS after_rollback FROM festival.device WHERE name = 'dv_rolled_back';
SELECT festival.create_device('dv_rolled_back');
SELECT count(*) AS created_again FROM festival.device WHERE name = 'dv_rolled_back';

-- a few errors (the pgTAP tests cover the rest)
\set VERBOSITY terse
SELECT festival.create_device('dv_default');				-- exists
SELECT festival.create_device('dv_bad', '/tmp');			-- absolute
SELECT festival.create_device('dv_bad', 'a/../b');			-- ".." component
SELECT festival.create_device('dv_bad', 'a b');				-- bad character
SELECT festival.create_device('dv_bad', io => 'weird');		-- unknown io
SELECT festival.create_device('dv_bad', profile => 'no_such');	-- unknown profile
SELECT festival.create_device('dv_bad', engine => 'aio');		-- unknown engine
SELECT festival.create_device('9dv');						-- bad name
SELECT festival.drop_device('dv_unknown');					-- unknown
\set VERBOSITY default
SELECT count(*) AS no_bad_device FROM festival.device WHERE name = 'dv_bad';

-- clean up
SELECT festival.drop_device(name) FROM festival.device WHERE name LIKE 'dv\_%' ORDER BY name;
SELECT count(*) AS devices_left FROM festival.device;
RESET client_min_messages;
