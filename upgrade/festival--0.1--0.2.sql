/* festival--0.1--0.2.sql: update script from festival 0.1 to 0.2 */

\echo Use "ALTER EXTENSION festival UPDATE TO '0.2'" to load this file. \quit

-- Every object festival 0.2 adds or changes, in the order of
-- festival--0.2.sql; test/shell/extension_upgrade.sh checks that a database
-- updated by this script has exactly the catalog of a fresh 0.2.

-------------------------------------------------------------------------------
-- A device may read through a mapping of its files (engine 'mmap').
-------------------------------------------------------------------------------
ALTER TABLE @extschema@.device DROP CONSTRAINT device_engine_valid;
ALTER TABLE @extschema@.device ADD CONSTRAINT device_engine_valid
	CHECK (engine IN ('sync', 'libaio', 'io_uring', 'mmap'));

-------------------------------------------------------------------------------
-- festival.run.model_elapsed_seconds is NULL when an operation of the run was
-- not CPU-timed.  A generated column's expression cannot be altered: the
-- column is added anew, and replay_of after it, so the columns keep the
-- order of a fresh install (replay_of's values are kept).
-------------------------------------------------------------------------------
ALTER TABLE @extschema@.run ADD COLUMN replay_of_kept bigint;
UPDATE @extschema@.run SET replay_of_kept = replay_of WHERE replay_of IS NOT NULL;
ALTER TABLE @extschema@.run DROP COLUMN model_elapsed_seconds, DROP COLUMN replay_of;
ALTER TABLE @extschema@.run
	-- NULL when an operation of the run was not CPU-timed (track_cpu_time off)
	ADD COLUMN model_elapsed_seconds float8 GENERATED ALWAYS AS
		(CASE WHEN coalesce((metrics->>'cpu_untimed_operations')::bigint, 0) = 0
			  THEN coalesce((metrics->>'index_cpu_seconds')::float8, 0) + device_seconds END) STORED,
	ADD COLUMN replay_of bigint;
UPDATE @extschema@.run SET replay_of = replay_of_kept WHERE replay_of_kept IS NOT NULL;
ALTER TABLE @extschema@.run DROP COLUMN replay_of_kept;
COMMENT ON COLUMN @extschema@.run.model_elapsed_seconds IS
	'modelled elapsed time of the index work: index CPU seconds (metrics index_cpu_seconds) + virtual device seconds; NULL when an operation of the run ran with festival.track_cpu_time off (metrics cpu_untimed_operations > 0: its CPU time is unknown); what the papers'' elapsed times are compared with';
COMMENT ON COLUMN @extschema@.run.replay_of IS 'for a run made by festival.replay(): the run whose I/O trace it re-costed';

-------------------------------------------------------------------------------
-- Functions that returned void return what they did.  A result type cannot
-- be changed in place: each is dropped and created again (ALTER EXTENSION
-- keeps it a member).
-------------------------------------------------------------------------------
DROP FUNCTION @extschema@.create_device(text, text, text, text, text, text);
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

DROP FUNCTION @extschema@.drop_device(text);
CREATE FUNCTION @extschema@.drop_device(name text)
RETURNS text
AS 'MODULE_PATHNAME', 'festival_drop_device'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.drop_device(text) IS
	'forget a device that holds no index (its directory is kept); returns the device''s name';

DROP FUNCTION @extschema@.flush(text);
CREATE FUNCTION @extschema@.flush(index text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'festival_flush'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.flush(text) IS
	'write everything the index holds in memory, sync, and mark the file clean; returns the pages written';

DROP FUNCTION @extschema@.drop_index(text);
CREATE FUNCTION @extschema@.drop_index(index text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'festival_drop_index'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.drop_index(text) IS
	'remove an index: its catalog row now, its file when the transaction commits; true if its files are removed, false if they are left in place (another database owns them) or it has none (memory device)';

-------------------------------------------------------------------------------
-- Dumps mark the FOR-tree's overflow nodes.
-------------------------------------------------------------------------------
ALTER TABLE @extschema@.index_node ADD COLUMN overflow boolean;
COMMENT ON COLUMN @extschema@.index_node.overflow IS
	'the node is an overflow node (the FOR-tree''s O-nodes, Jin et al. 2015); NULL for structures without overflow nodes';

-------------------------------------------------------------------------------
-- festival.compare names a configuration by key=value tokens (runs_named)
-- and takes the median over its repetitions.
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
CREATE OR REPLACE FUNCTION @extschema@.compare(baseline text, candidate text)
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

-- the array batches (issue 26): one row per query, its answers as arrays
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
