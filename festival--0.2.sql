/* festival--0.2.sql: install script of festival 0.2 */

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
	engine		text NOT NULL CONSTRAINT device_engine_valid CHECK (engine IN ('sync', 'libaio', 'io_uring', 'mmap')),
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
	config			jsonb NOT NULL,
	device			text,
	profile			text,
	traced			boolean NOT NULL DEFAULT false,
	device_seconds	float8 NOT NULL DEFAULT 0,
	read_submissions bigint NOT NULL DEFAULT 0,
	write_submissions bigint NOT NULL DEFAULT 0,
	erases			bigint NOT NULL DEFAULT 0,
	write_amplification float8,
	reads_per_level	jsonb NOT NULL DEFAULT '{}',
	writes_per_level jsonb NOT NULL DEFAULT '{}',
	-- elapsed time as the papers measure it (docs/measurements.md)
	-- NULL when an operation of the run was not CPU-timed (track_cpu_time off)
	model_elapsed_seconds float8 GENERATED ALWAYS AS
		(CASE WHEN coalesce((metrics->>'cpu_untimed_operations')::bigint, 0) = 0
			  THEN coalesce((metrics->>'index_cpu_seconds')::float8, 0) + device_seconds END) STORED,
	replay_of		bigint
);
CREATE SEQUENCE @extschema@.run_run_id_seq OWNED BY @extschema@.run.run_id;
ALTER TABLE @extschema@.run ALTER COLUMN run_id SET DEFAULT nextval('@extschema@.run_run_id_seq');
COMMENT ON TABLE @extschema@.run IS
	'One row per festival.begin_run()/end_run(): times, I/O and work counters, and the configuration of every index used';
COMMENT ON COLUMN @extschema@.run.cpu_seconds IS 'CPU time of the whole backend during the run (SQL overhead included)';
COMMENT ON COLUMN @extschema@.run.index_seconds IS 'wall time inside festival index operations, refinement excluded';
COMMENT ON COLUMN @extschema@.run.metrics IS 'every counter of the run (see festival.stats()), times in seconds';
COMMENT ON COLUMN @extschema@.run.config IS 'per index used: structure, device, complete options, derived parameters, source';
COMMENT ON COLUMN @extschema@.run.device IS 'devices of the indices used, distinct, in order of first use, comma-separated; NULL when no index was used';
COMMENT ON COLUMN @extschema@.run.profile IS 'device profiles of the indices used, distinct, in order of first use, comma-separated; NULL when none has one';
COMMENT ON COLUMN @extschema@.run.traced IS 'the run recorded its page accesses in festival.io_trace';
COMMENT ON COLUMN @extschema@.run.device_seconds IS 'virtual device time (counter device_seconds); 0 without device profiles';
COMMENT ON COLUMN @extschema@.run.read_submissions IS 'device read calls; a batch counts once';
COMMENT ON COLUMN @extschema@.run.erases IS 'flash block erases of the simulated FTL (counter device_erases)';
COMMENT ON COLUMN @extschema@.run.write_amplification IS 'ftl_flash_writes / ftl_host_writes; NULL when the FTL wrote nothing';
COMMENT ON COLUMN @extschema@.run.model_elapsed_seconds IS
	'modelled elapsed time of the index work: index CPU seconds (metrics index_cpu_seconds) + virtual device seconds; NULL when an operation of the run ran with festival.track_cpu_time off (metrics cpu_untimed_operations > 0: its CPU time is unknown); what the papers'' elapsed times are compared with';
COMMENT ON COLUMN @extschema@.run.replay_of IS 'for a run made by festival.replay(): the run whose I/O trace it re-costed';
COMMENT ON COLUMN @extschema@.run.reads_per_level IS
	'node pages read from the device per node height {"0": leaves, ...} (meta and free pages excluded; buffering stores: stored versions read, buffer hits excluded)';
COMMENT ON COLUMN @extschema@.run.writes_per_level IS
	'node pages written to the device per node height (buffering stores: pages their flushes write, at the height of the version written)';

CREATE TABLE @extschema@.io_trace (
	run_id			bigint NOT NULL,
	seq				bigint NOT NULL,
	index_name		text NOT NULL,
	page			bigint NOT NULL,
	access			text NOT NULL CONSTRAINT io_trace_access_valid CHECK (access IN ('read', 'write')),
	level			int,
	submission		bigint NOT NULL,
	tier			text CONSTRAINT io_trace_tier_valid CHECK (tier IN ('slow', 'fast')),
	PRIMARY KEY (run_id, seq)
);
COMMENT ON TABLE @extschema@.io_trace IS
	'Every page the devices transferred during a run begun with festival.begin_run(label, trace => true), in order (seq from 1)';
COMMENT ON COLUMN @extschema@.io_trace.level IS 'node height from the page header (0 = leaf); NULL for meta and free pages';
COMMENT ON COLUMN @extschema@.io_trace.tier IS 'the tier that transferred the page (docs/tiers.md); NULL for an index on one device';
COMMENT ON COLUMN @extschema@.io_trace.submission IS
	'run-relative number of the device submission that carried the page (the sync engine submits each page alone)';

-- Results survive pg_dump.
SELECT pg_catalog.pg_extension_config_dump('@extschema@.device', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.index', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.index_index_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.run', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.run_run_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.io_trace', '');

-- Which database this is, for the owner recorded in every index file
-- (docs/durability.md, "One database owns an index's files").  One row,
-- made here with a fresh random identifier: deliberately NOT registered
-- with pg_extension_config_dump, so a restore (which runs CREATE
-- EXTENSION) gets a new one; a CREATE DATABASE ... TEMPLATE copy keeps the
-- template's row, whose database_oid then differs from its own OID, and
-- festival replaces it with a new identifier at its first use.
CREATE TABLE @extschema@.database_identity (
	one				boolean PRIMARY KEY DEFAULT true CONSTRAINT database_identity_one_row CHECK (one),
	database_oid	oid NOT NULL,
	database_uid	bigint NOT NULL CONSTRAINT database_identity_uid_set CHECK (database_uid <> 0)
);
COMMENT ON TABLE @extschema@.database_identity IS
	'this database''s identity as recorded in the owner of its index files: its OID and a random identifier that pg_dump and TEMPLATE copies do not carry over';
INSERT INTO @extschema@.database_identity (database_oid, database_uid)
SELECT d.oid, u.uid
FROM pg_catalog.pg_database d,
	 LATERAL (SELECT ('x' || pg_catalog.substr(pg_catalog.md5(pg_catalog.gen_random_uuid()::text), 1, 16))::bit(64)::bigint AS uid) u
WHERE d.datname = pg_catalog.current_database() AND u.uid <> 0;
REVOKE ALL ON @extschema@.database_identity FROM PUBLIC;
GRANT SELECT ON @extschema@.database_identity TO PUBLIC;

REVOKE ALL ON @extschema@.device, @extschema@.index, @extschema@.run, @extschema@.io_trace FROM PUBLIC;
GRANT SELECT ON @extschema@.device, @extschema@.index, @extschema@.run, @extschema@.io_trace TO PUBLIC;
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
RETURNS text
AS 'MODULE_PATHNAME', 'festival_create_device'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.create_device(text, text, text, text, text, text) IS
	'create a device: a directory (default: the device name) inside festival.data_directory; returns the device''s name; superusers and festival_admin only';

CREATE FUNCTION @extschema@.drop_device(name text)
RETURNS text
AS 'MODULE_PATHNAME', 'festival_drop_device'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.drop_device(text) IS
	'forget a device that holds no index (its directory is kept); returns the device''s name';

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
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_flush'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.flush(text) IS
	'write everything the index holds in memory, sync, and mark the file clean; returns the pages written';

CREATE FUNCTION @extschema@.close(index text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'festival_close'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.close(text) IS
	'flush and release an index opened in this session; false if it was not open';

CREATE FUNCTION @extschema@.drop_index(index text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'festival_drop_index'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.drop_index(text) IS
	'remove an index: its catalog row now, its file when the transaction commits; true if its files are removed, false if they are left in place (another database owns them) or it has none (memory device)';

CREATE FUNCTION @extschema@.adopt_index(index text)
RETURNS text
AS 'MODULE_PATHNAME', 'festival_adopt_index'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.adopt_index(text) IS
	'make this database''s own copy of an index whose files another database owns (after pg_dump/restore or CREATE DATABASE ... TEMPLATE): copies its files under a new name owned by this database; returns the new file name';

CREATE FUNCTION @extschema@.orphan_files(
	OUT device text, OUT file_name text, OUT bytes bigint,
	OUT owner_database_oid oid, OUT reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'festival_orphan_files'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.orphan_files() IS
	'superuser: index files in the directories of this database''s devices that no database owns any more (their database was dropped) or that this database owns but its catalog no longer names';
REVOKE ALL ON FUNCTION @extschema@.orphan_files() FROM PUBLIC;

CREATE FUNCTION @extschema@.remove_orphan_file(device text, file_name text)
RETURNS integer
AS 'MODULE_PATHNAME', 'festival_remove_orphan_file'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.remove_orphan_file(text, text) IS
	'superuser: remove a file festival.orphan_files() lists, with its log, tier map and weights, after checking again that it is an orphan; returns the number of files removed';
REVOKE ALL ON FUNCTION @extschema@.remove_orphan_file(text, text) FROM PUBLIC;

-------------------------------------------------------------------------------
-- Modifications and queries
-------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.insert(index text, id bigint, geom geometry, if_absent boolean DEFAULT false)
RETURNS boolean
AS 'MODULE_PATHNAME', 'festival_insert'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.insert(text, bigint, geometry, boolean) IS
	'insert the MBR of geom with id; with if_absent, do nothing and return false when that entry exists';

CREATE FUNCTION @extschema@.insert_many(
	index text,
	source regclass DEFAULT NULL,
	query text DEFAULT NULL,
	id_column name DEFAULT 'id',
	geom_column name DEFAULT 'geom',
	method text DEFAULT 'insert')
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_insert_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.insert_many(text, regclass, text, name, name, text) IS
	'insert the rows of a table (id_column, geom_column) or of a query (id, geometry) as one modification; method ''insert'' or a bulk insertion of the structure (xbrtree: ''bulk'', ''bulk_ssd''); returns the rows inserted';

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

CREATE FUNCTION @extschema@.query_batch_ids(index text, gs geometry[], predicate text DEFAULT 'intersects',
											distance float8 DEFAULT NULL)
RETURNS TABLE (query_no int, ids bigint[])
AS 'MODULE_PATHNAME', 'festival_query_batch_ids'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;
COMMENT ON FUNCTION @extschema@.query_batch_ids(text, geometry[], text, float8) IS
	'festival.query_batch with one row per geometry of gs: its answers as a sorted bigint[] (empty when none)';

CREATE FUNCTION @extschema@.knn_batch_ids(index text, gs geometry[], k int)
RETURNS TABLE (query_no int, ids bigint[], distances float8[])
AS 'MODULE_PATHNAME', 'festival_knn_batch_ids'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;
COMMENT ON FUNCTION @extschema@.knn_batch_ids(text, geometry[], int) IS
	'festival.knn for every geometry of gs in one call: per query_no its neighbours'' ids and distances, ordered by distance then id';

-------------------------------------------------------------------------------
-- Verification and measurement
-------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.check(index text)
RETURNS TABLE (severity text, page bigint, message text)
AS 'MODULE_PATHNAME', 'festival_check'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.check(text) IS
	'verify every invariant of an index; no rows means healthy';

CREATE FUNCTION @extschema@.progress_slots()
RETURNS TABLE (pid int, database oid, index_name text, operation text, phase text,
			   done bigint, total bigint, unit text, started timestamptz)
AS 'MODULE_PATHNAME', 'festival_progress_slots'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.progress_slots() IS
	'the long operations in progress in every session (festival.progress)';

CREATE VIEW @extschema@.progress AS
SELECT p.pid, d.datname AS database, p.index_name, p.operation, p.phase,
	   p.done, p.total, p.unit, p.started, now() - p.started AS elapsed
FROM @extschema@.progress_slots() p
LEFT JOIN pg_catalog.pg_database d ON d.oid = p.database;
COMMENT ON VIEW @extschema@.progress IS
	'builds, bulk loads, insert_many batches and checks in progress in any session, with their phase and count; '
	'always empty unless festival is in shared_preload_libraries (docs/operations-and-queries.md)';
GRANT SELECT ON @extschema@.progress TO PUBLIC;

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

CREATE FUNCTION @extschema@.inject_fault(index text, target text, after bigint, error text)
RETURNS void
AS 'MODULE_PATHNAME', 'festival_inject_fault'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.inject_fault(text, text, bigint, text) IS
	'testing tool (superuser): let after operations of target (write, read, sync, log_write, log_sync; fast:write, fast:read, fast:sync for a tiered index''s fast device) reach the device, then fail the next with error (ENOSPC, EIO, torn, crash); one-shot';
REVOKE ALL ON FUNCTION @extschema@.inject_fault(text, text, bigint, text) FROM PUBLIC;

CREATE FUNCTION @extschema@.clear_fault(index text)
RETURNS void
AS 'MODULE_PATHNAME', 'festival_clear_fault'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.clear_fault(text) IS
	'testing tool (superuser): disarm the fault inject_fault armed';
REVOKE ALL ON FUNCTION @extschema@.clear_fault(text) FROM PUBLIC;

CREATE FUNCTION @extschema@.fault_status(index text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'festival_fault_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fault_status(text) IS
	'testing tool (superuser): whether a fault is armed, how many fired, and the operations of each target seen since the index was opened';
REVOKE ALL ON FUNCTION @extschema@.fault_status(text) FROM PUBLIC;

CREATE FUNCTION @extschema@.cache_simulate(policy text, capacity bigint, pages bigint[],
										   levels int[] DEFAULT NULL, a1in_percent bigint DEFAULT 25,
										   ghosts bigint DEFAULT NULL, writes boolean[] DEFAULT NULL,
										   clru_pages bigint DEFAULT NULL,
										   directory_percent bigint DEFAULT 75)
RETURNS TABLE (step int, page bigint, hit boolean, admitted boolean, evicted bigint[],
			   written bigint[])
AS 'MODULE_PATHNAME', 'festival_cache_simulate'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.cache_simulate(text, bigint, bigint[], int[], bigint, bigint, boolean[], bigint, bigint) IS
	'replay a reference string of pages through a cache policy (lru, hlru, s2q, 2q, clru) with room for capacity pages';

CREATE FUNCTION @extschema@.begin_run(label text, trace boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_begin_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.begin_run(text, boolean) IS
	'start measuring a run in this session; with trace, record every page access in festival.io_trace; returns its run_id';

CREATE FUNCTION @extschema@.end_run()
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_end_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.end_run() IS
	'stop the run and store its row in festival.run; returns its run_id';


-------------------------------------------------------------------------------
-- Structure statistics and node dumps
-------------------------------------------------------------------------------

CREATE TABLE @extschema@.index_snapshot (
	snapshot_id		bigserial PRIMARY KEY,
	index_id		bigint NOT NULL,
	index_name		text NOT NULL,
	structure		text NOT NULL,
	taken_at		timestamptz NOT NULL DEFAULT clock_timestamp(),
	config			jsonb NOT NULL,
	srid			int,
	height			int NOT NULL,
	nodes			bigint NOT NULL,
	entries			bigint NOT NULL,
	objects			bigint NOT NULL,
	fill			float8 NOT NULL,
	coverage		float8 NOT NULL,
	overlap			float8 NOT NULL,
	dead_space		float8 NOT NULL,
	dead_space_ratio float8 GENERATED ALWAYS AS (dead_space / NULLIF(coverage, 0)) STORED,
	fingerprint		bigint NOT NULL,
	nodes_per_level		bigint[] NOT NULL,
	entries_per_level	bigint[] NOT NULL,
	capacity_per_level	int[] NOT NULL,
	fill_per_level		float8[] NOT NULL,
	coverage_per_level	float8[] NOT NULL,
	overlap_per_level	float8[] NOT NULL,
	dead_space_per_level float8[] NOT NULL,
	overflow_nodes		bigint,
	overflow_nodes_per_level	bigint[],
	overflow_entries_per_level	bigint[],
	CONSTRAINT index_snapshot_levels CHECK (
		cardinality(nodes_per_level) = height AND cardinality(entries_per_level) = height AND
		cardinality(capacity_per_level) = height AND cardinality(fill_per_level) = height AND
		cardinality(coverage_per_level) = height AND cardinality(overlap_per_level) = height AND
		cardinality(dead_space_per_level) = height AND
		coalesce(cardinality(overflow_nodes_per_level), height) = height AND
		coalesce(cardinality(overflow_entries_per_level), height) = height)
);
COMMENT ON TABLE @extschema@.index_snapshot IS
	'Structure statistics of an index at one moment (festival.snapshot): per-level arrays hold level 0 (the leaves) at position 1; festival.index_snapshot_level shows them as rows';
COMMENT ON COLUMN @extschema@.index_snapshot.fill IS
	'entries / (nodes x capacity), capacity = entries a page physically holds (page size minus header, over the entry size)';
COMMENT ON COLUMN @extschema@.index_snapshot.coverage IS 'sum of the areas of the node MBRs (all levels)';
COMMENT ON COLUMN @extschema@.index_snapshot.overlap IS
	'sum over unordered pairs of nodes of the same level of the area their MBRs share (all levels)';
COMMENT ON COLUMN @extschema@.index_snapshot.dead_space IS
	'sum over nodes of the node MBR area not covered by any entry MBR (all levels)';
COMMENT ON COLUMN @extschema@.index_snapshot.fingerprint IS
	'hash of every node (page, level, parent, entries): equal fingerprints, same tree';
COMMENT ON COLUMN @extschema@.index_snapshot.overflow_nodes IS
	'nodes that are overflow nodes (the FOR-tree''s O-nodes; counted in nodes too); NULL for structures without them';
COMMENT ON COLUMN @extschema@.index_snapshot.overflow_nodes_per_level IS
	'overflow nodes per level, and overflow_entries_per_level their entries; NULL for structures without them';

CREATE TABLE @extschema@.index_node (
	snapshot_id		bigint NOT NULL REFERENCES @extschema@.index_snapshot ON DELETE CASCADE,
	page			bigint NOT NULL,
	level			int NOT NULL,
	parent			bigint,
	entries			int NOT NULL,
	mbr				geometry,
	region			geometry,
	tier			text CONSTRAINT index_node_tier_valid CHECK (tier IN ('slow', 'fast')),
	overflow		boolean,
	PRIMARY KEY (snapshot_id, page)
);
COMMENT ON TABLE @extschema@.index_node IS
	'Every node of a dumped snapshot (festival.dump), ready for QGIS and scripts/render-dump';
COMMENT ON COLUMN @extschema@.index_node.parent IS 'page of the parent node; NULL for the root';
COMMENT ON COLUMN @extschema@.index_node.tier IS 'the tier holding the node (docs/tiers.md); NULL for an index on one device';
COMMENT ON COLUMN @extschema@.index_node.mbr IS
	'union of the node''s entry rectangles in the index''s SRID: a POLYGON, or a POINT or LINESTRING when it has no area; NULL for an empty root';
COMMENT ON COLUMN @extschema@.index_node.overflow IS
	'the node is an overflow node (the FOR-tree''s O-nodes, Jin et al. 2015); NULL for structures without overflow nodes';
COMMENT ON COLUMN @extschema@.index_node.region IS
	'the region the parent''s entry assigns to the node (xBR+-tree quadrants); NULL for structures without regions and for the root';

CREATE VIEW @extschema@.index_snapshot_level AS
SELECT s.snapshot_id, s.index_name, (l.ord - 1)::int AS level, l.nodes, l.entries, l.capacity,
	   l.fill, l.coverage, l.overlap, l.dead_space,
	   l.dead_space / NULLIF(l.coverage, 0) AS dead_space_ratio,
	   l.overflow_nodes, l.overflow_entries
FROM @extschema@.index_snapshot s
CROSS JOIN LATERAL unnest(s.nodes_per_level, s.entries_per_level, s.capacity_per_level,
						  s.fill_per_level, s.coverage_per_level, s.overlap_per_level,
						  s.dead_space_per_level, s.overflow_nodes_per_level,
						  s.overflow_entries_per_level)
	WITH ORDINALITY AS l(nodes, entries, capacity, fill, coverage, overlap, dead_space,
						 overflow_nodes, overflow_entries, ord);
COMMENT ON VIEW @extschema@.index_snapshot_level IS
	'festival.index_snapshot one row per snapshot and level (0 = leaves)';

SELECT pg_catalog.pg_extension_config_dump('@extschema@.index_snapshot', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.index_snapshot_snapshot_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.index_node', '');

REVOKE ALL ON @extschema@.index_snapshot, @extschema@.index_node,
	@extschema@.index_snapshot_level FROM PUBLIC;
GRANT SELECT ON @extschema@.index_snapshot, @extschema@.index_node,
	@extschema@.index_snapshot_level TO PUBLIC;

-------------------------------------------------------------------------------
-- Who sees result rows tied to an index
-------------------------------------------------------------------------------

/*
 * Snapshots, dumps, traces and runs show what an index holds (leaf MBRs, the
 * extent taken from the source), so a row tied to an index is visible to
 * whoever may read that index: its owner (or a member of the owner's role),
 * a superuser, or a role with SELECT on its source; an index without a
 * source is readable by everyone.  Rows of a dropped index (or of an earlier
 * index of the same name) are visible to superusers only.  Row-level
 * security applies these to SELECT; festival's own functions write the
 * tables as the extension's owner, which owns them and so is not filtered,
 * and pg_dump (a superuser) sees every row.  Security invoker: the checks
 * are the caller's.
 */
CREATE FUNCTION @extschema@.can_read_index_id(index_id bigint)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT coalesce((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user), false)
		OR coalesce((SELECT pg_has_role(i.owner, 'USAGE')
							OR i.source IS NULL
							OR coalesce(has_table_privilege(i.source, 'SELECT'), false)
					 FROM @extschema@.index i WHERE i.index_id = $1), false)
$fn$;
COMMENT ON FUNCTION @extschema@.can_read_index_id(bigint) IS
	'may the current user read the index with this index_id (owner, superuser, SELECT on its source, or no source)? false for a dropped index, except for superusers';

CREATE FUNCTION @extschema@.can_read_index(index text)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT @extschema@.can_read_index_id(
		coalesce((SELECT i.index_id FROM @extschema@.index i WHERE i.name = $1), -1))
$fn$;
COMMENT ON FUNCTION @extschema@.can_read_index(text) IS
	'may the current user read the index of this name (see can_read_index_id)?';

ALTER TABLE @extschema@.index_snapshot ENABLE ROW LEVEL SECURITY;
CREATE POLICY readable_index ON @extschema@.index_snapshot FOR SELECT
	USING (@extschema@.can_read_index_id(index_id));
ALTER TABLE @extschema@.index_node ENABLE ROW LEVEL SECURITY;
CREATE POLICY readable_index ON @extschema@.index_node FOR SELECT
	USING (EXISTS (SELECT FROM @extschema@.index_snapshot s
				   WHERE s.snapshot_id = index_node.snapshot_id));
ALTER TABLE @extschema@.io_trace ENABLE ROW LEVEL SECURITY;
CREATE POLICY readable_index ON @extschema@.io_trace FOR SELECT
	USING (@extschema@.can_read_index(index_name));
-- a run shows the configuration of every index it used
ALTER TABLE @extschema@.run ENABLE ROW LEVEL SECURITY;
CREATE POLICY readable_index ON @extschema@.run FOR SELECT
	USING (NOT EXISTS (SELECT FROM jsonb_object_keys(config) AS k(name)
					   WHERE NOT @extschema@.can_read_index(k.name)));
-- the view reads index_snapshot as its owner: make it apply the caller's policies
ALTER VIEW @extschema@.index_snapshot_level SET (security_invoker = true);

CREATE FUNCTION @extschema@.snapshot(index text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_snapshot'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.snapshot(text) IS
	'measure the tree (height, nodes, entries, fill, coverage, overlap, dead space per level) into festival.index_snapshot; returns the snapshot_id';

CREATE FUNCTION @extschema@.dump(index text, snapshot bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_dump'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.dump(text, bigint) IS
	'store every node of the tree in festival.index_node under the snapshot (NULL: take a new one), replacing an earlier dump of it; returns the snapshot_id';

-------------------------------------------------------------------------------
-- Comparing runs
-------------------------------------------------------------------------------

/*
 * The runs a festival.compare argument names: the runs labelled exactly so,
 * or else, when it is key=value tokens, the runs of the one configuration
 * whose label holds every token (its repetitions: a rep=N token is not part
 * of a configuration), so 'structure=rtree workload=build' names the R-tree's
 * build among the experiment's configurations without repeating the keys
 * they share.  Tokens that match several configurations are an error that
 * lists them (name more keys); none matching, one with similar labels.
 */
CREATE FUNCTION @extschema@.runs_named(selector text)
RETURNS bigint[]
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	ids bigint[];
	wanted text[];
	configs text[];
	similar_labels text;
BEGIN
	SELECT array_agg(r.run_id ORDER BY r.run_id) INTO ids
	FROM @extschema@.run r WHERE r.label = selector;
	IF ids IS NULL AND selector ~ '^\s*[^\s=]+=\S*(\s+[^\s=]+=\S*)*\s*$' THEN
		wanted := regexp_split_to_array(btrim(selector), '\s+');
		SELECT array_agg(DISTINCT regexp_replace(r.label, '(^| )rep=\S+', '', 'g')) INTO configs
		FROM @extschema@.run r WHERE string_to_array(r.label, ' ') @> wanted;
		IF cardinality(configs) > 1 THEN
			RAISE EXCEPTION USING ERRCODE = 'ambiguous_parameter',
				MESSAGE = format('%L names %s configurations', selector, cardinality(configs)),
				HINT = 'Name more of their keys; they are ' || (SELECT string_agg(quote_literal(c), ', ')
					FROM (SELECT c FROM unnest(configs) c ORDER BY c LIMIT 5) t)
					|| CASE WHEN cardinality(configs) > 5 THEN ', ...' ELSE '' END || '.';
		END IF;
		SELECT array_agg(r.run_id ORDER BY r.run_id) INTO ids
		FROM @extschema@.run r WHERE string_to_array(r.label, ' ') @> wanted;
	END IF;
	IF ids IS NULL THEN
		-- labels sharing the most three-letter pieces with the one asked for
		SELECT string_agg(quote_literal(s.label), ', ' ORDER BY s.score DESC, s.label)
		INTO similar_labels
		FROM (SELECT l.label,
					 (SELECT count(*) FROM (
						SELECT substr(lower(selector), i, 3) FROM generate_series(1, greatest(length(selector) - 2, 1)) i
						INTERSECT
						SELECT substr(lower(l.label), j, 3) FROM generate_series(1, greatest(length(l.label) - 2, 1)) j) t) AS score
			  FROM (SELECT DISTINCT r.label FROM @extschema@.run r) l
			  ORDER BY 2 DESC, 1 LIMIT 5) s
		WHERE s.score > 0;
		RAISE EXCEPTION USING ERRCODE = 'undefined_object',
			MESSAGE = format('no run is labelled %L', selector),
			HINT = CASE WHEN similar_labels IS NOT NULL THEN 'Similar labels: ' || similar_labels || '.'
						ELSE 'No similar label; SELECT DISTINCT label FROM festival.run lists them.' END
				   || ' Key=value tokens name the configuration whose label holds them all.';
	END IF;
	RETURN ids;
END
$fn$;
COMMENT ON FUNCTION @extschema@.runs_named(text) IS
	'the run ids festival.compare takes for an argument: the runs with that label, or those of the one configuration (all repetitions) whose label holds every key=value token given';

/*
 * Per metric, the median over the runs each argument names (runs_named: a
 * label, or key=value tokens naming one configuration, every repetition of
 * it) and the performance gain of the candidate over the baseline as Carniel
 * et al. 2016, 2017 use it ("a performance gain is the percentage that shows
 * how much one configuration is more efficient than another"): the share of
 * the baseline's value the candidate saved, (baseline - candidate) / baseline
 * * 100.  Negative gains are losses; NULL when the baseline's value is 0 or
 * NULL.  (A function cannot name an input and a result column alike, hence
 * baseline_value and candidate_value.)
 */
CREATE FUNCTION @extschema@.compare(baseline text, candidate text)
RETURNS TABLE (metric text, baseline_value float8, candidate_value float8, gain_percent float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	base_ids bigint[];
	cand_ids bigint[];
BEGIN
	IF baseline IS NULL OR candidate IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'baseline and candidate labels must not be NULL',
			HINT = 'Give two labels of festival.run, e.g. festival.compare(''my baseline'', ''my candidate''), or key=value tokens naming two configurations.';
	END IF;
	base_ids := @extschema@.runs_named(baseline);
	cand_ids := @extschema@.runs_named(candidate);

	RETURN QUERY
	WITH value AS (
		SELECT r.run_id, m.ord, m.metric, m.value
		FROM @extschema@.run r
		CROSS JOIN LATERAL (VALUES
			(1, 'wall_seconds', r.wall_seconds),
			(2, 'cpu_seconds', r.cpu_seconds),
			(3, 'index_seconds', r.index_seconds),
			(4, 'io_seconds', r.io_seconds),
			(5, 'device_seconds', r.device_seconds),
			(6, 'pages_read', r.pages_read::float8),
			(7, 'pages_written', r.pages_written::float8),
			(8, 'read_submissions', r.read_submissions::float8),
			(9, 'write_submissions', r.write_submissions::float8),
			(10, 'erases', r.erases::float8),
			(11, 'write_amplification', r.write_amplification),
			(12, 'nodes_visited', r.nodes_visited::float8),
			(13, 'splits', r.splits::float8),
			-- NULL for a run without index CPU timing (festival.track_cpu_time off)
			(14, 'model_elapsed_seconds', r.model_elapsed_seconds),
			-- FAST's and eFIND's flushes and log syncs: with festival.log_sync =
			-- operation the syncs can dominate their times (docs/frameworks.md)
			(15, 'flushes', coalesce((r.metrics->>'flushes')::float8, 0)),
			(16, 'log_syncs', coalesce((r.metrics->>'log_syncs')::float8, 0))) AS m(ord, metric, value)
		WHERE r.run_id = ANY (base_ids || cand_ids)
	), median AS (
		SELECT v.ord, v.metric,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY v.value) FILTER (WHERE v.run_id = ANY (base_ids)) AS b,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY v.value) FILTER (WHERE v.run_id = ANY (cand_ids)) AS c
		FROM value v
		GROUP BY v.ord, v.metric
	)
	SELECT m.metric, m.b, m.c,
		   CASE WHEN m.b <> 0 THEN (m.b - m.c) / m.b * 100 END
	FROM median m
	ORDER BY m.ord;
END
$fn$;
COMMENT ON FUNCTION @extschema@.compare(text, text) IS
	'per metric, the medians of the baseline''s and the candidate''s runs (a label, or key=value tokens naming one configuration: all its repetitions) and the gain (baseline - candidate) / baseline * 100';

-------------------------------------------------------------------------------
-- Seeded data and query generators
-------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.generated_points(n bigint, distribution text, seed int,
	xmin float8, ymin float8, xmax float8, ymax float8, stream text DEFAULT 'data')
RETURNS TABLE (id bigint, x float8, y float8)
AS 'MODULE_PATHNAME', 'festival_generated_points'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION @extschema@.generated_points(bigint, text, int, float8, float8, float8, float8, text) IS
	'the coordinates festival.generate_points stores (splitmix64; bit-identical for equal arguments)';

CREATE FUNCTION @extschema@.generated_windows(n bigint, area_percent float8, seed int,
	xmin float8, ymin float8, xmax float8, ymax float8)
RETURNS TABLE (id bigint, xmin float8, ymin float8, xmax float8, ymax float8)
AS 'MODULE_PATHNAME', 'festival_generated_windows'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION @extschema@.generated_windows(bigint, float8, int, float8, float8, float8, float8) IS
	'the square query windows festival.generate_windows stores';

/*
 * Shared by the generators: check the arguments every generator takes and
 * return the quoted table name and PostGIS's schema.  Creating the table is
 * the caller's business, as the caller's own user (SECURITY INVOKER).
 */
CREATE FUNCTION @extschema@.generator_target(table_name text, n bigint, extent box2d,
	OUT qualified text, OUT postgis text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
	IF table_name IS NULL OR n IS NULL OR extent IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'table_name, n, extent and seed must not be NULL',
			HINT = 'Give every argument; extent is a box2d such as ST_MakeBox2D(ST_Point(0, 0), ST_Point(1000, 1000)).';
	END IF;
	IF n <= 0 THEN
		RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
			MESSAGE = format('number of rows to generate must be positive, not %s', n),
			HINT = 'Use n >= 1.';
	END IF;
	-- the bound of the C generators (api_generate.c), checked before the table exists
	IF n > 100000000 THEN
		RAISE EXCEPTION USING ERRCODE = 'program_limit_exceeded',
			MESSAGE = format('cannot generate more than 100000000 rows in one call, not %s', n),
			HINT = 'Generate in several calls (different seeds, or ids offset by the earlier counts).';
	END IF;
	SELECT string_agg(quote_ident(part), '.' ORDER BY ord) INTO qualified
	FROM unnest(parse_ident(table_name)) WITH ORDINALITY AS p(part, ord);
	IF to_regclass(qualified) IS NOT NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'duplicate_table',
			MESSAGE = format('table %s already exists', qualified),
			HINT = 'Generators create their table: drop it first or choose another name.';
	END IF;
	SELECT quote_ident(s.nspname) INTO postgis
	FROM pg_extension e JOIN pg_namespace s ON s.oid = e.extnamespace
	WHERE e.extname = 'postgis';
END
$fn$;
COMMENT ON FUNCTION @extschema@.generator_target(text, bigint, box2d) IS
	'argument checks shared by the generators (internal)';

CREATE FUNCTION @extschema@.generate_points(table_name text, n bigint, distribution text,
	seed int, extent box2d)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
	t record;
	rows bigint;
BEGIN
	t := @extschema@.generator_target(table_name, n, extent);
	IF distribution IS NULL OR seed IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'distribution and seed must not be NULL',
			HINT = 'Use distribution uniform, gaussian_clusters or zipf, and any integer seed.';
	END IF;
	IF distribution NOT IN ('uniform', 'gaussian_clusters', 'zipf') THEN
		RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
			MESSAGE = format('unknown point distribution %L', distribution),
			HINT = 'Use uniform, gaussian_clusters or zipf.';
	END IF;
	EXECUTE format('CREATE TABLE %s (id bigint PRIMARY KEY, geom %s.geometry(Point))',
				   t.qualified, t.postgis);
	EXECUTE format('INSERT INTO %1$s (id, geom) '
				   'SELECT g.id, %2$s.ST_MakePoint(g.x, g.y) '
				   'FROM @extschema@.generated_points($1, $2, $3, %2$s.ST_XMin($4), %2$s.ST_YMin($4), '
				   '%2$s.ST_XMax($4), %2$s.ST_YMax($4)) g',
				   t.qualified, t.postgis)
	USING n, distribution, seed, extent;
	GET DIAGNOSTICS rows = ROW_COUNT;
	RETURN rows;
END
$fn$;
COMMENT ON FUNCTION @extschema@.generate_points(text, bigint, text, int, box2d) IS
	'create table_name (id bigint primary key, geom geometry(Point)) with n seeded points: uniform, gaussian_clusters or zipf';

CREATE FUNCTION @extschema@.generate_windows(table_name text, n int, area_percent float8,
	extent box2d, seed int)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
	t record;
	rows bigint;
BEGIN
	t := @extschema@.generator_target(table_name, n, extent);
	IF area_percent IS NULL OR seed IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'area_percent and seed must not be NULL',
			HINT = 'Carniel et al. 2018 use area_percent 0.001, 0.01 and 0.1, Carniel et al. 2016 and 2017 (JIDM) 0.1, 0.5 and 1, with any integer seed.';
	END IF;
	IF NOT (area_percent > 0 AND area_percent <= 100) THEN
		RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
			MESSAGE = format('area_percent must be in (0, 100], not %s', area_percent),
			HINT = 'Carniel et al. 2018 use 0.001, 0.01 and 0.1, Carniel et al. 2016 and 2017 (JIDM) 0.1, 0.5 and 1 (percent of the extent''s area).';
	END IF;
	-- an error of the C function (a square that does not fit) rolls the CREATE back
	EXECUTE format('CREATE TABLE %s (id bigint PRIMARY KEY, geom %s.geometry(Polygon))',
				   t.qualified, t.postgis);
	EXECUTE format('INSERT INTO %1$s (id, geom) '
				   'SELECT w.id, %2$s.ST_MakeEnvelope(w.xmin, w.ymin, w.xmax, w.ymax) '
				   'FROM @extschema@.generated_windows($1, $2, $3, %2$s.ST_XMin($4), %2$s.ST_YMin($4), '
				   '%2$s.ST_XMax($4), %2$s.ST_YMax($4)) w',
				   t.qualified, t.postgis)
	USING n::bigint, area_percent, seed, extent;
	GET DIAGNOSTICS rows = ROW_COUNT;
	RETURN rows;
END
$fn$;
COMMENT ON FUNCTION @extschema@.generate_windows(text, int, float8, box2d, int) IS
	'create table_name (id bigint primary key, geom geometry(Polygon)) with n seeded square query windows of area_percent of the extent, inside it';

CREATE FUNCTION @extschema@.generate_knn_points(table_name text, n int, extent box2d, seed int)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
	t record;
	rows bigint;
BEGIN
	t := @extschema@.generator_target(table_name, n, extent);
	IF seed IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed', MESSAGE = 'seed must not be NULL',
			HINT = 'Give any integer seed; the same seed gives the same points.';
	END IF;
	EXECUTE format('CREATE TABLE %s (id bigint PRIMARY KEY, geom %s.geometry(Point))',
				   t.qualified, t.postgis);
	EXECUTE format('INSERT INTO %1$s (id, geom) '
				   'SELECT g.id, %2$s.ST_MakePoint(g.x, g.y) '
				   'FROM @extschema@.generated_points($1, ''uniform'', $2, %2$s.ST_XMin($3), %2$s.ST_YMin($3), '
				   '%2$s.ST_XMax($3), %2$s.ST_YMax($3), ''knn'') g',
				   t.qualified, t.postgis)
	USING n::bigint, seed, extent;
	GET DIAGNOSTICS rows = ROW_COUNT;
	RETURN rows;
END
$fn$;
COMMENT ON FUNCTION @extschema@.generate_knn_points(text, int, box2d, int) IS
	'create table_name (id bigint primary key, geom geometry(Point)) with n seeded kNN query points, uniform over the extent (a stream independent of generate_points'' with the same seed)';

-- Device profiles and the device model (virtual device time, FTL)
-------------------------------------------------------------------------------

CREATE TABLE @extschema@.device_profile (
	name			text PRIMARY KEY
					CONSTRAINT device_profile_name_valid CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,62}$'),
	kind			text NOT NULL
					CONSTRAINT device_profile_kind_valid CHECK (kind IN ('hdd', 'ssd', 'nvme', '3dxpoint')),
	description		text NOT NULL DEFAULT '',
	read_latency_us	float8 NOT NULL CONSTRAINT read_latency_positive CHECK (read_latency_us > 0),
	write_latency_us float8 NOT NULL CONSTRAINT write_latency_positive CHECK (write_latency_us > 0),
	seq_read_mbps	float8 NOT NULL CONSTRAINT seq_read_positive CHECK (seq_read_mbps > 0),
	seq_write_mbps	float8 NOT NULL CONSTRAINT seq_write_positive CHECK (seq_write_mbps > 0),
	rand_read_iops_qd32 float8 NOT NULL CONSTRAINT rand_read_iops_positive CHECK (rand_read_iops_qd32 > 0),
	rand_write_iops_qd32 float8 NOT NULL CONSTRAINT rand_write_iops_positive CHECK (rand_write_iops_qd32 > 0),
	channels		int NOT NULL CONSTRAINT channels_valid CHECK (channels BETWEEN 1 AND 1024),
	interference_us	float8 NOT NULL DEFAULT 0 CONSTRAINT interference_nonnegative CHECK (interference_us >= 0),
	flash_page_bytes int CONSTRAINT flash_page_valid
					CHECK (flash_page_bytes BETWEEN 512 AND 65536 AND flash_page_bytes % 512 = 0),
	pages_per_block	int CONSTRAINT pages_per_block_valid CHECK (pages_per_block BETWEEN 4 AND 4096),
	erase_latency_us float8 CONSTRAINT erase_latency_nonnegative CHECK (erase_latency_us >= 0),
	overprovision_percent float8 CONSTRAINT overprovision_valid CHECK (overprovision_percent BETWEEN 0 AND 100),
	rpm				float8 CONSTRAINT rpm_valid CHECK (rpm BETWEEN 1000 AND 30000),
	track_kb		int CONSTRAINT track_valid CHECK (track_kb BETWEEN 0 AND 65536),
	avg_seek_ms		float8 CONSTRAINT seek_nonnegative CHECK (avg_seek_ms >= 0),
	source			text NOT NULL CONSTRAINT source_given CHECK (source <> ''),
	assumed			text NOT NULL DEFAULT '',
	builtin			boolean NOT NULL DEFAULT false,
	-- device model 2 (docs/devices.md, "Model versions"); model 1 ignores these
	model_version	int NOT NULL DEFAULT 1 CONSTRAINT model_version_valid CHECK (model_version IN (1, 2, 3)),
	cache_mb		float8 NOT NULL DEFAULT 0 CONSTRAINT cache_mb_valid CHECK (cache_mb BETWEEN 0 AND 65536),
	cache_hit_us	float8 NOT NULL DEFAULT 0 CONSTRAINT cache_hit_nonnegative CHECK (cache_hit_us >= 0),
	cache_write_back boolean NOT NULL DEFAULT false,
	interface_mbps	float8 CONSTRAINT interface_positive CHECK (interface_mbps > 0),
	capacity_gb		float8 CONSTRAINT capacity_positive CHECK (capacity_gb > 0),
	min_seek_ms		float8 CONSTRAINT min_seek_valid CHECK (min_seek_ms >= 0 AND min_seek_ms <= avg_seek_ms),
	-- device model 3; models 1 and 2 ignore it
	readahead_kb	float8 NOT NULL DEFAULT 0 CONSTRAINT readahead_valid CHECK (readahead_kb BETWEEN 0 AND 65536),
	CONSTRAINT hdd_model2_columns CHECK (kind <> 'hdd' OR model_version < 2 OR
		(capacity_gb IS NOT NULL AND min_seek_ms IS NOT NULL)),
	CONSTRAINT flash_columns CHECK ((kind IN ('ssd', 'nvme')) =
		(flash_page_bytes IS NOT NULL AND pages_per_block IS NOT NULL AND
		 erase_latency_us IS NOT NULL AND overprovision_percent IS NOT NULL)),
	CONSTRAINT hdd_columns CHECK ((kind = 'hdd') =
		(rpm IS NOT NULL AND track_kb IS NOT NULL AND avg_seek_ms IS NOT NULL)),
	CONSTRAINT hdd_one_head CHECK (kind <> 'hdd' OR channels = 1)
);
COMMENT ON TABLE @extschema@.device_profile IS
	'Device profiles for virtual device time (docs/devices.md, "Devices and virtual time"); add your own rows';
COMMENT ON COLUMN @extschema@.device_profile.read_latency_us IS 'random 4 KB read at queue depth 1, microseconds';
COMMENT ON COLUMN @extschema@.device_profile.write_latency_us IS 'random 4 KB write at queue depth 1, microseconds';
COMMENT ON COLUMN @extschema@.device_profile.seq_read_mbps IS 'sequential read bandwidth, 10^6 bytes/s';
COMMENT ON COLUMN @extschema@.device_profile.rand_read_iops_qd32 IS '4 KB random read IOPS at high queue depth (ceiling of a batched round)';
COMMENT ON COLUMN @extschema@.device_profile.channels IS 'requests the device serves at once (internal parallelism)';
COMMENT ON COLUMN @extschema@.device_profile.interference_us IS 'wait of a read of a region written since the previous read';
COMMENT ON COLUMN @extschema@.device_profile.flash_page_bytes IS 'NAND: FTL mapping unit (flash page)';
COMMENT ON COLUMN @extschema@.device_profile.pages_per_block IS 'NAND: flash pages per erase block';
COMMENT ON COLUMN @extschema@.device_profile.overprovision_percent IS 'NAND: spare blocks, percent of the user capacity';
COMMENT ON COLUMN @extschema@.device_profile.track_kb IS 'HDD: jumps within this distance cost half a rotation, not a seek';
COMMENT ON COLUMN @extschema@.device_profile.avg_seek_ms IS 'HDD: data sheet average seek, for reference (included in the latencies)';
COMMENT ON COLUMN @extschema@.device_profile.source IS 'where the values come from';
COMMENT ON COLUMN @extschema@.device_profile.assumed IS 'what was assumed where the sources are silent';
COMMENT ON COLUMN @extschema@.device_profile.model_version IS '1: the index file is the whole drive, no drive cache; 2: drive cache and real capacity; 3: read-ahead, command streams, flash commands without a head (docs/devices.md)';
COMMENT ON COLUMN @extschema@.device_profile.cache_mb IS 'model 2: the drive''s DRAM data cache, 2^20 bytes (0: none)';
COMMENT ON COLUMN @extschema@.device_profile.cache_hit_us IS 'model 2: command overhead of a cache hit, microseconds (plus the transfer over the interface)';
COMMENT ON COLUMN @extschema@.device_profile.cache_write_back IS 'model 2: writes are acknowledged from the cache and written to the medium when evicted';
COMMENT ON COLUMN @extschema@.device_profile.interface_mbps IS 'model 2: host link bandwidth for cache hits, 10^6 bytes/s (NULL: seq_read_mbps)';
COMMENT ON COLUMN @extschema@.device_profile.capacity_gb IS 'model 2: drive capacity, 10^9 bytes (flash: free blocks for the FTL; HDD: seek distances)';
COMMENT ON COLUMN @extschema@.device_profile.min_seek_ms IS 'model 2, HDD: track-to-track seek';
COMMENT ON COLUMN @extschema@.device_profile.readahead_kb IS 'model 3: a read that misses the drive cache also caches this many KB after the page (0: none)';

INSERT INTO @extschema@.device_profile
	(name, kind, description, read_latency_us, write_latency_us, seq_read_mbps, seq_write_mbps,
	 rand_read_iops_qd32, rand_write_iops_qd32, channels, interference_us,
	 flash_page_bytes, pages_per_block, erase_latency_us, overprovision_percent,
	 rpm, track_kb, avg_seek_ms, source, assumed, builtin)
VALUES
('hdd_wd_7200', 'hdd', 'Western Digital 2 TB 7200 rpm HDD (Carniel et al. 2016; Carniel et al. 2017 (JIDM))',
 21115, 8858, 150, 150, 47.36, 112.9, 1, 0,
 NULL, NULL, NULL, NULL, 7200, 1024, 8.9,
 'Carniel et al. 2016 Table 1 (as in Carniel et al. 2017 (JIDM)): 4 KB random transfers measured with Iometer, read 0.185 MB/s, write 0.441 MB/s (MB = 2^20 bytes, as the SSD row shows: 285.156 MB/s = 73000 x 4 KB); latency = 1 / IOPS: read 47.36 IOPS = 21115 us, write 112.9 IOPS = 8858 us. 7200 rpm: Carniel et al. 2017 (JIDM) section 5.1.',
 'Sequential bandwidth 150 MB/s and average seek 8.9 ms: typical 7200 rpm 3.5" data sheet values (not in the papers). Queue depth 32 IOPS = queue depth 1 (one head). Track 1024 KB (typical outer-zone track). No read/write interference.',
 true),
('ssd_kingston_v300', 'ssd', 'Kingston SSDNow V300 480 GB, SATA (Carniel et al. 2016; Carniel et al. 2017 (JIDM))',
 100, 50, 450, 450, 73000, 28000, 8, 200,
 4096, 64, 2000, 7, NULL, NULL, NULL,
 'Carniel et al. 2016 Table 1 (as in Carniel et al. 2017 (JIDM)): 4 KB random transfers measured with Iometer, read 285.156 MB/s = 73000 IOPS, write 109.375 MB/s = 28000 IOPS (taken as the high queue depth figures). Flash page 4 KB and block 256 KB: Carniel et al. 2016 section 4 ("commonly 4KB and 256KB"). 480 GB: Carniel et al. 2017 (JIDM) section 5.1.',
 'Sequential 450/450 MB/s: Kingston data sheet for the 480 GB model. Queue depth 1 latency read 100 us, write 50 us, 8 channels (SandForce SF-2281), erase 2 ms, over-provisioning 7 %, interference 200 us: typical SATA MLC values, not in the papers.',
 true),
('ssd_samsung_850pro', 'ssd', 'Samsung 850 Pro 250 GB, SATA (thesis Table 3.1)',
 100, 27.8, 550, 520, 100000, 90000, 8, 150,
 4096, 64, 2000, 7, NULL, NULL, NULL,
 'Fevgas 2019 (thesis) Table 3.1, manufacturer data sheet: sequential read 550 MB/s, write 520 MB/s; random read 100K IOPS at QD32 and 10K IOPS at QD1 (latency 1/10K = 100 us); random write 90K IOPS at QD32 and 36K at QD1 (27.8 us). Flash page 4 KB, block 256 KB: Carniel et al. 2016 section 4.',
 'Channels 8 (the QD32/QD1 read ratio is 10; MEX controller has 8 channels), erase 2 ms, over-provisioning 7 %, interference 150 us: typical values, not in the sources.',
 true),
('nvme_intel_p3700', 'nvme', 'Intel DC P3700, PCIe 3.0 NVMe (thesis Tables 3.1 and 4.1)',
 120, 30, 2700, 1100, 450000, 75000, 18, 100,
 4096, 64, 2000, 25, NULL, NULL, NULL,
 'Fevgas 2019 (thesis) Table 3.1 and Table 4.1 (Fevgas et al. 2019 (IISA) Table I): sequential read 2700 MB/s, write 1100 MB/s; random read 450K IOPS, write 75K IOPS (100% span); read latency 120 us, write latency 30 us (Table 4.1). Flash page 4 KB, block 256 KB: Carniel et al. 2016 section 4.',
 'Channels 18 (the controller''s channel count), erase 2 ms, over-provisioning 25 % (high-endurance data-centre drive), interference 100 us: typical values, not in the sources.',
 true),
('nvme_samsung_sm951a', 'nvme', 'Samsung SM951A 512 GB, PCIe 3.0 NVMe (thesis Table 3.1)',
 80, 25, 2150, 1550, 300000, 110000, 8, 150,
 4096, 64, 2000, 7, NULL, NULL, NULL,
 'Fevgas 2019 (thesis) Table 3.1: sequential read 2150 MB/s, write 1550 MB/s; random read 300K IOPS (4 KB, QD32), write 110K IOPS (4 KB, QD32); DRAM 512 MB. Flash page 4 KB, block 256 KB: Carniel et al. 2016 section 4.',
 'Queue depth 1 latency read 80 us, write 25 us (the DRAM cache absorbs writes), channels 8, erase 2 ms, over-provisioning 7 %, interference 150 us: typical values, the table is silent.',
 true),
('optane_memory_32gb', '3dxpoint', 'Intel Optane Memory series 32 GB, 3DXPoint (Fevgas et al. 2019 (IISA); Fevgas 2019, Table 4.1)',
 7, 18, 1350, 290, 240000, 65000, 2, 0,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 'Fevgas et al. 2019 (IISA) Table I and Fevgas 2019 Table 4.1: sequential read 1350 MB/s, write 290 MB/s; random read 240K IOPS, write 65K IOPS; read latency 7 us, write latency 18 us. In-place writes, no erase-before-write: Fevgas 2019 ("3DXPoint supports bit addressability and allows in-place writes").',
 'Channels 2 (240K IOPS at high queue depth over 1/7 us = 143K at QD1), no read/write interference: assumptions, the tables are silent.',
 true);

-- Model 1 stays reproducible: every shipped drive also exists as <name>_v1,
-- the profile exactly as it was before model 2 (no drive cache, the index
-- file is the whole drive).
INSERT INTO @extschema@.device_profile
	(name, kind, description, read_latency_us, write_latency_us, seq_read_mbps, seq_write_mbps,
	 rand_read_iops_qd32, rand_write_iops_qd32, channels, interference_us,
	 flash_page_bytes, pages_per_block, erase_latency_us, overprovision_percent,
	 rpm, track_kb, avg_seek_ms, source, assumed, builtin, model_version)
SELECT name || '_v1', kind, description || ', device model 1', read_latency_us, write_latency_us,
	   seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels,
	   interference_us, flash_page_bytes, pages_per_block, erase_latency_us,
	   overprovision_percent, rpm, track_kb, avg_seek_ms, source, assumed, true, 1
FROM @extschema@.device_profile WHERE builtin;

-- Model 2: the drives' caches and capacities (calibrated once per drive
-- against Carniel et al. 2016 and 2017; docs/devices.md, "Model versions").
UPDATE @extschema@.device_profile SET model_version = 2, cache_mb = 64, cache_hit_us = 140,
	cache_write_back = true, interface_mbps = 600, capacity_gb = 2000, min_seek_ms = 1.0,
	source = source || ' Model 2: 64 MB cache, SATA 6 Gb/s (600 MB/s), 2 TB: WD Black 2 TB (WD2003FZEX) data sheet, the 7200 rpm 2 TB WD desktop drive of the papers'' years.',
	assumed = assumed || ' Model 2: which WD model the papers used (they name "2TB Western Digital with 7200RPM" and a support page); cache hit overhead 140 us (calibrated once against Carniel et al. 2016/2017 Fig. 1/2: SSD faster at 4 KB) and track-to-track seek 1.0 ms (typical, no data sheet gives them); the write cache enabled (the drive''s default).'
WHERE name = 'hdd_wd_7200';
UPDATE @extschema@.device_profile SET model_version = 2, cache_mb = 0, interface_mbps = 600, capacity_gb = 480,
	seq_read_mbps = 250, seq_write_mbps = 200,
	source = source || ' Model 2: 480 GB (Carniel et al. 2017 section 5.1); SATA 6 Gb/s; no DRAM data cache: the SandForce SF-2281 controller of the V300 has no external DRAM.',
	assumed = assumed || ' Model 2: sequential 250 / 200 MB/s instead of the data sheet''s 450 / 450: the data sheet''s figures are for compressible data, which the SandForce controller compresses; index pages of floating-point coordinates hardly compress, and SF-2281 drives move incompressible data at roughly half that rate (assumed, calibrated once against Carniel et al. 2016/2017: the SSD loses to the HDD at 16-64 KB pages, "the SSD has a poor performance to retrieve large node sizes").'
WHERE name = 'ssd_kingston_v300';
UPDATE @extschema@.device_profile SET model_version = 2, cache_mb = 0, interface_mbps = 600, capacity_gb = 250,
	source = source || ' Model 2: 250 GB; SATA 6 Gb/s; its 512 MB LPDDR2 holds the FTL mapping table (Samsung data sheet), not user data.',
	assumed = assumed || ' Model 2: no user-data cache (the DRAM serves the mapping table).'
WHERE name = 'ssd_samsung_850pro';
UPDATE @extschema@.device_profile SET model_version = 2, cache_mb = 0, capacity_gb = 400,
	source = source || ' Model 2: PCIe 3.0 x4; its DRAM holds the mapping table; writes are acknowledged from a power-protected buffer, which the 30 us write latency already reflects.',
	assumed = assumed || ' Model 2: capacity 400 GB (the smallest P3700; the sources do not name the size).'
WHERE name = 'nvme_intel_p3700';
UPDATE @extschema@.device_profile SET model_version = 2, cache_mb = 0, capacity_gb = 512,
	source = source || ' Model 2: 512 GB (thesis Table 3.1); its 512 MB DRAM holds the mapping table.',
	assumed = assumed || ' Model 2: no user-data cache (the DRAM serves the mapping table; the write latency reflects write buffering).'
WHERE name = 'nvme_samsung_sm951a';
UPDATE @extschema@.device_profile SET model_version = 2, cache_mb = 0, capacity_gb = 32,
	source = source || ' Model 2: 32 GB; no DRAM (3DXPoint is written in place).',
	assumed = assumed || ' Model 2: none beyond the above.'
WHERE name = 'optane_memory_32gb';

-- Model 2 stays reproducible: the drives model 3 recalibrates also exist as
-- <name>_v2, the profile exactly as model 2 had it.
INSERT INTO @extschema@.device_profile
SELECT (jsonb_populate_record(NULL::@extschema@.device_profile,
		to_jsonb(p) || jsonb_build_object('name', p.name || '_v2',
										  'description', p.description || ', device model 2'))).*
FROM @extschema@.device_profile p WHERE name IN ('hdd_wd_7200', 'ssd_kingston_v300');

-- Model 3: read-ahead, command streams and flash commands without a head
-- (calibrated once per drive against Carniel et al. 2016 and 2017;
-- docs/devices.md, "Model versions").
UPDATE @extschema@.device_profile SET model_version = 3, readahead_kb = 64,
	source = source || ' Model 3: after a read miss the drive reads the following sectors into its cache (read look-ahead of desktop HDDs); consecutive commands served from the cache pay the command overhead once, as FESTIval issued a run of consecutive pages (a FAST flushing unit) as one call (its disk_read / disk_write).',
	assumed = assumed || ' Model 3: read-ahead 64 KB (assumed, calibrated once against Carniel et al. 2017 Figs. 6-8: the SSD''s query gain falls as the windows grow; no data sheet gives the look-ahead length).'
WHERE name = 'hdd_wd_7200';
UPDATE @extschema@.device_profile SET model_version = 3,
	source = source || ' Model 3: flash has no head, so every command pays its access latency whether or not it follows the previous one; a write of less than the 4 KB flash page (Carniel et al. 2016 section 4) reads the flash page first (read-modify-write).',
	assumed = assumed || ' Model 3: no new figures; the flash page read of a read-modify-write costs the 100 us read latency plus 4 KB at 250 MB/s.'
WHERE name = 'ssd_kingston_v300';

ALTER TABLE @extschema@.device
	ADD CONSTRAINT device_profile_known FOREIGN KEY (profile)
	REFERENCES @extschema@.device_profile (name) ON UPDATE CASCADE;

SELECT pg_catalog.pg_extension_config_dump('@extschema@.device_profile', 'WHERE NOT builtin');
REVOKE ALL ON @extschema@.device_profile FROM PUBLIC;
GRANT SELECT, INSERT ON @extschema@.device_profile TO PUBLIC;

CREATE FUNCTION @extschema@.device_simulate(
	profile text,
	ops text[],
	page_size int DEFAULT 4096)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'festival_device_simulate'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.device_simulate(text, text[], int) IS
	'run the device model of a profile on submissions such as ''r 0-15'', ''w 7 9'', ''t 100'' (truncate) on a fresh simulated drive; returns virtual time and FTL counters';

CREATE FUNCTION @extschema@.replay(run_id bigint, profile text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_replay'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.replay(bigint, text) IS
	're-cost the I/O trace of a traced run on a device profile (fresh drives, deterministic) and store it as a run whose replay_of is the source; returns the new run_id';

-------------------------------------------------------------------------------
-- Tiers (docs/tiers.md)
-------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.tier_pages(index text)
RETURNS TABLE (page bigint, tier text, level int, weight float8, accesses bigint, hot bool)
AS 'MODULE_PATHNAME', 'festival_tier_pages'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.tier_pages(text) IS
	'each page of a tiered index: its tier, node level (NULL: not a node), hot-model weight and accesses';

CREATE FUNCTION @extschema@.tier_hot_simulate(pages bigint[], levels bigint[],
	parents bigint[], selectivity float8 DEFAULT 1.5, capacity bigint DEFAULT 0)
RETURNS TABLE (step int, page bigint, weight float8, average float8,
	eligible bool, promoted bool, demoted bigint)
AS 'MODULE_PATHNAME', 'festival_tier_hot_simulate'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.tier_hot_simulate(bigint[], bigint[], bigint[], float8, bigint) IS
	'run the hot-page model (Fevgas 2019, Alg. 9) over an access sequence; parents 0 = root';
