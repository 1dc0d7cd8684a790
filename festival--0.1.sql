/* festival--0.1.sql: install script of festival 0.1 */

\echo Use "CREATE EXTENSION festival CASCADE" to load this file. \quit

/*
 * Role whose members may manage devices besides superusers.  Roles are
 * cluster-wide, so it is created only if no database created it before.
 */
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'festival_admin') THEN
		CREATE ROLE festival_admin NOLOGIN;
	END IF;
END
$$;

-------------------------------------------------------------------------------
-- Catalog tables.  Readable by everyone; written only through festival's
-- functions, which check permissions first.
-------------------------------------------------------------------------------

CREATE TABLE @extschema@.device (
	name		text PRIMARY KEY
				CONSTRAINT device_name_valid CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,62}$'),
	directory	text NOT NULL,
	kind		text NOT NULL CONSTRAINT device_kind_valid CHECK (kind IN ('file', 'memory')),
	io			text NOT NULL CONSTRAINT device_io_valid CHECK (io IN ('direct', 'buffered')),
	engine		text NOT NULL CONSTRAINT device_engine_valid CHECK (engine IN ('sync', 'libaio', 'io_uring')),
	profile		text,
	created_at	timestamptz NOT NULL DEFAULT now(),
	created_by	name NOT NULL DEFAULT current_user
);
COMMENT ON TABLE @extschema@.device IS
	'Storage devices: a directory inside festival.data_directory, an I/O mode, an engine and an optional device profile';

CREATE TABLE @extschema@.index (
	index_id	bigserial PRIMARY KEY,
	name		text NOT NULL UNIQUE
				CONSTRAINT index_name_valid CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,62}$'),
	structure	text NOT NULL,
	owner		regrole NOT NULL,
	device		text NOT NULL REFERENCES @extschema@.device (name),
	options		jsonb NOT NULL,
	source		regclass,
	id_column	name NOT NULL,
	geom_column	name NOT NULL,
	file_name	text NOT NULL,
	created_at	timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE @extschema@.index IS
	'Indices of this database, each with its complete configuration (options with every default filled in)';

CREATE TABLE @extschema@.run (
	run_id			bigint PRIMARY KEY,
	label			text NOT NULL,
	started_at		timestamptz NOT NULL,
	ended_at		timestamptz NOT NULL,
	wall_seconds	float8 NOT NULL CONSTRAINT run_wall_nonnegative CHECK (wall_seconds >= 0),
	cpu_seconds		float8 NOT NULL,
	io_seconds		float8 NOT NULL,
	index_seconds	float8 NOT NULL,
	refine_seconds	float8 NOT NULL,
	pages_read		bigint NOT NULL,
	pages_written	bigint NOT NULL,
	nodes_visited	bigint NOT NULL,
	splits			bigint NOT NULL,
	metrics			jsonb NOT NULL,
	config			jsonb NOT NULL
);
CREATE SEQUENCE @extschema@.run_run_id_seq OWNED BY @extschema@.run.run_id;
ALTER TABLE @extschema@.run ALTER COLUMN run_id SET DEFAULT nextval('@extschema@.run_run_id_seq');
COMMENT ON TABLE @extschema@.run IS
	'One row per festival.begin_run()/end_run(): times, I/O and work counters, and the configuration of every index used';
COMMENT ON COLUMN @extschema@.run.cpu_seconds IS 'CPU time of the whole backend during the run (SQL overhead included)';
COMMENT ON COLUMN @extschema@.run.index_seconds IS 'wall time inside festival index operations, refinement excluded';
COMMENT ON COLUMN @extschema@.run.metrics IS 'every counter of the run (see festival.stats()), times in seconds';
COMMENT ON COLUMN @extschema@.run.config IS 'per index used: structure, device, complete options, derived parameters, source';

-- Results survive pg_dump.
SELECT pg_catalog.pg_extension_config_dump('@extschema@.device', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.index', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.index_index_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.run', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.run_run_id_seq', '');

REVOKE ALL ON @extschema@.device, @extschema@.index, @extschema@.run FROM PUBLIC;
GRANT SELECT ON @extschema@.device, @extschema@.index, @extschema@.run TO PUBLIC;
GRANT USAGE ON SCHEMA @extschema@ TO PUBLIC;

-------------------------------------------------------------------------------
-- Devices
-------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.create_device(
	name text,
	directory text DEFAULT NULL,
	kind text DEFAULT 'file',
	io text DEFAULT 'direct',
	engine text DEFAULT 'sync',
	profile text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'festival_create_device'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.create_device(text, text, text, text, text, text) IS
	'create a device: a directory (default: the device name) inside festival.data_directory; superusers and festival_admin only';

CREATE FUNCTION @extschema@.drop_device(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'festival_drop_device'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.drop_device(text) IS
	'forget a device that holds no index (its directory is kept)';

-------------------------------------------------------------------------------
-- Index lifetime
-------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.create_index(
	name text,
	structure text,
	device text,
	options jsonb DEFAULT '{}',
	source regclass DEFAULT NULL,
	id_column name DEFAULT 'id',
	geom_column name DEFAULT 'geom')
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_create_index'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.create_index(text, text, text, jsonb, regclass, name, name) IS
	'create an empty index file on a device; options are validated and completed with defaults';

CREATE FUNCTION @extschema@.build(index text, method text DEFAULT 'insert')
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_build'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.build(text, text) IS
	'empty the index and insert every row of its source one at a time; returns the rows inserted';

CREATE FUNCTION @extschema@.flush(index text)
RETURNS void
AS 'MODULE_PATHNAME', 'festival_flush'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.flush(text) IS
	'write everything the index holds in memory, sync, and mark the file clean';

CREATE FUNCTION @extschema@.close(index text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'festival_close'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.close(text) IS
	'flush and release an index opened in this session; false if it was not open';

CREATE FUNCTION @extschema@.drop_index(index text)
RETURNS void
AS 'MODULE_PATHNAME', 'festival_drop_index'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.drop_index(text) IS
	'remove an index: its catalog row now, its file when the transaction commits';

-------------------------------------------------------------------------------
-- Modifications and queries
-------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.insert(index text, id bigint, geom geometry, if_absent boolean DEFAULT false)
RETURNS boolean
AS 'MODULE_PATHNAME', 'festival_insert'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.insert(text, bigint, geometry, boolean) IS
	'insert the MBR of geom with id; with if_absent, do nothing and return false when that entry exists';

CREATE FUNCTION @extschema@.delete(index text, id bigint, geom geometry)
RETURNS boolean
AS 'MODULE_PATHNAME', 'festival_delete'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.delete(text, bigint, geometry) IS
	'delete the entry with this id and the MBR of geom; false when absent';

CREATE FUNCTION @extschema@.update(index text, old_id bigint, old_geom geometry,
								   new_id bigint, new_geom geometry)
RETURNS boolean
AS 'MODULE_PATHNAME', 'festival_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.update(text, bigint, geometry, bigint, geometry) IS
	'replace an entry (delete then insert, one modification); false, and nothing inserted, when the old entry is absent';

CREATE FUNCTION @extschema@.query(index text, g geometry, predicate text DEFAULT 'intersects',
								  refine boolean DEFAULT true, distance float8 DEFAULT NULL)
RETURNS TABLE (id bigint)
AS 'MODULE_PATHNAME', 'festival_query'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;
COMMENT ON FUNCTION @extschema@.query(text, geometry, text, boolean, float8) IS
	'ids of indexed objects o with ST_<predicate>(o, g) (ST_DWithin(o, g, distance) for ''dwithin''); refine => false returns the MBR filter''s candidates';

CREATE FUNCTION @extschema@.knn(index text, g geometry, k int)
RETURNS TABLE (id bigint, distance float8)
AS 'MODULE_PATHNAME', 'festival_knn'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 10;
COMMENT ON FUNCTION @extschema@.knn(text, geometry, int) IS
	'the k indexed objects nearest to g by ST_Distance, ordered by distance then id (best-first search)';

CREATE FUNCTION @extschema@.query_batch(index text, gs geometry[], predicate text DEFAULT 'intersects',
										distance float8 DEFAULT NULL)
RETURNS TABLE (query_no int, id bigint)
AS 'MODULE_PATHNAME', 'festival_query_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1000;
COMMENT ON FUNCTION @extschema@.query_batch(text, geometry[], text, float8) IS
	'festival.query for every geometry of gs (query_no = 1-based position) in one traversal that reads each node once';

-------------------------------------------------------------------------------
-- Verification and measurement
-------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.check(index text)
RETURNS TABLE (severity text, page bigint, message text)
AS 'MODULE_PATHNAME', 'festival_check'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.check(text) IS
	'verify every invariant of an index; no rows means healthy';

CREATE FUNCTION @extschema@.stats(index text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'festival_stats'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.stats(text) IS
	'state and counters of an index in this session (since it was opened)';

CREATE FUNCTION @extschema@.buffer(index text)
RETURNS TABLE (page bigint, status text, level int, modifications bigint,
			   last_modified bigint, bytes bigint)
AS 'MODULE_PATHNAME', 'festival_buffer'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.buffer(text) IS
	'the write buffer of a FAST or eFIND index: status, level, modifications, logical time of the last one, bytes';

CREATE FUNCTION @extschema@.node(index text, page bigint)
RETURNS TABLE (page bigint, level int, "position" int, ref bigint,
			   xmin float8, ymin float8, xmax float8, ymax float8)
AS 'MODULE_PATHNAME', 'festival_node'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.node(text, bigint) IS
	'the entries of a node as its node store returns it (buffered changes merged in); ref is an object id in leaves, a child page above';

CREATE FUNCTION @extschema@.flush_unit(index text)
RETURNS TABLE (page bigint)
AS 'MODULE_PATHNAME', 'festival_flush_unit'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.flush_unit(text) IS
	'write the flushing unit the policy chooses next, as when the buffer is full; returns its pages';

CREATE FUNCTION @extschema@.cache_simulate(policy text, capacity bigint, pages bigint[],
										   levels int[] DEFAULT NULL, a1in_percent bigint DEFAULT 25,
										   ghosts bigint DEFAULT NULL)
RETURNS TABLE (step int, page bigint, hit boolean, admitted boolean, evicted bigint[])
AS 'MODULE_PATHNAME', 'festival_cache_simulate'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.cache_simulate(text, bigint, bigint[], int[], bigint, bigint) IS
	'replay a reference string of pages through a replacement policy (lru, hlru, s2q, 2q) with room for capacity pages';

CREATE FUNCTION @extschema@.begin_run(label text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_begin_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.begin_run(text) IS
	'start measuring a run in this session; returns its run_id';

CREATE FUNCTION @extschema@.end_run()
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_end_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.end_run() IS
	'stop the run and store its row in festival.run; returns its run_id';

