/*-------------------------------------------------------------------------
 *
 * run.c
 *	  Runs: festival.begin_run() / festival.end_run().
 *
 * A run measures everything between its begin and its end in this
 * session: wall and process CPU time (so SQL overhead and baseline queries
 * through GiST are measured too), and the sum of the FestStats of every
 * festival operation, with the complete configuration of every index the
 * run touched.  end_run() writes one row of festival.run.
 *
 * Without a run, operations are still counted, per open index
 * (festival.stats()); nothing needs to be started first.
 *
 * The row's device columns (device_seconds, submissions, erases, write
 * amplification, per-level reads and writes) are derived from the run's
 * counters in the INSERT itself, by counter name, so they cannot disagree
 * with metrics; a counter this build does not have counts as 0.
 *
 * With trace => true the run also keeps an I/O trace (trace/iotrace.h):
 * every page the devices of the run's indices transferred.  Its records are
 * written to festival.io_trace in bulk: at end_run, and at the end of an
 * operation once RUN_TRACE_FLUSH_RECORDS are waiting (never in the middle
 * of an operation, whose I/O may happen anywhere, even in callbacks).
 *
 * IDENTIFICATION
 *	  src/sql/run.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/run.h"
#include "sql/describe.h"
#include "trace/iotrace.h"

#include <sys/resource.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

typedef struct RunIndexConfig
{
	char	   *name;
	char	   *device;
	char	   *profile;		/* NULL: the device has none */
	Jsonb	   *config;
} RunIndexConfig;

/* Trace records waiting before an operation's end stores them. */
#define RUN_TRACE_FLUSH_RECORDS		10000
/* Records per INSERT statement (bounds the arrays). */
#define RUN_TRACE_INSERT_CHUNK		8192

/*
 * Parameters of the INSERT INTO festival.io_trace of run_store_trace, in
 * the order of its column list ($1 is TRACE_PARAM_RUN_ID + 1, ...).
 */
typedef enum TraceParam
{
	TRACE_PARAM_RUN_ID,
	TRACE_PARAM_SEQ,
	TRACE_PARAM_INDEX_NAME,
	TRACE_PARAM_PAGE,
	TRACE_PARAM_ACCESS,
	TRACE_PARAM_LEVEL,
	TRACE_PARAM_SUBMISSION,
	TRACE_PARAM_TIER,
	TRACE_NPARAMS
} TraceParam;

/*
 * Parameters of the INSERT INTO festival.run of end_run, in the order of
 * its column list ($1 is RUN_PARAM_RUN_ID + 1, ...; $14 is the metrics
 * the derived columns read).
 */
typedef enum RunParam
{
	RUN_PARAM_RUN_ID,
	RUN_PARAM_LABEL,
	RUN_PARAM_STARTED_AT,
	RUN_PARAM_ENDED_AT,
	RUN_PARAM_WALL,
	RUN_PARAM_CPU,
	RUN_PARAM_IO,
	RUN_PARAM_INDEX,
	RUN_PARAM_REFINE,
	RUN_PARAM_PAGES_READ,
	RUN_PARAM_PAGES_WRITTEN,
	RUN_PARAM_NODES_VISITED,
	RUN_PARAM_SPLITS,
	RUN_PARAM_METRICS,
	RUN_PARAM_CONFIG,
	RUN_PARAM_DEVICE,
	RUN_PARAM_PROFILE,
	RUN_PARAM_TRACED,
	RUN_NPARAMS
} RunParam;

typedef struct RunState
{
	MemoryContext cxt;
	int64		run_id;
	char	   *label;
	TimestampTz started_at;
	int64		start_wall_ns;
	int64		start_cpu_ns;
	FestStats	stats;
	List	   *indices;		/* RunIndexConfig, in order of first use */
	IoTrace    *trace;			/* NULL unless begin_run(trace => true) */
} RunState;

/* The run in progress in this session, if any. */
static RunState *current_run = NULL;

PG_FUNCTION_INFO_V1(festival_begin_run);
PG_FUNCTION_INFO_V1(festival_end_run);

/* User plus system CPU time of this backend, nanoseconds. */
static int64
process_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((int64) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * INT64CONST(1000000000) +
		((int64) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/*
 * The trace of the run in progress, or NULL: what the handles pass down to
 * their tracing PageIO (ix_trace_all when a run begins or ends, and at the
 * start of every operation).
 */
IoTrace *
run_current_trace(void)
{
	return current_run != NULL ? current_run->trace : NULL;
}

/* The id of this session's run in progress, or 0 when there is none. */
int64
run_current_id(void)
{
	return current_run != NULL ? current_run->run_id : 0;
}

/*
 * An operation failed: its page accesses leave the trace as its counters
 * never reach the run.  Called from abort callbacks: raises nothing.
 */
void
run_discard_failed_io(void)
{
	if (current_run != NULL && current_run->trace != NULL)
		iotrace_discard_uncommitted(current_run->trace);
}

/* Build an array of n Datums of one type, with optional NULLs. */
static Datum
make_array(Datum *values, bool *nulls, int n, Oid type)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
	return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs, type,
											  typlen, typbyval, typalign));
}

/*
 * Write the trace's committed records to festival.io_trace, as arrays
 * unnested by one INSERT per chunk, and forget them.
 */
static void
run_store_trace(RunState *run)
{
	IoTrace    *trace = run->trace;
	int			n = trace->committed;
	Oid			types[TRACE_NPARAMS] = {INT8OID, INT8ARRAYOID, TEXTARRAYOID, INT8ARRAYOID,
	TEXTARRAYOID, INT4ARRAYOID, INT8ARRAYOID, TEXTARRAYOID};
	Oid			saved_user;
	int			saved_context;
	Datum	   *names;
	Datum		read_text;
	Datum		write_text;
	Datum		slow_text;
	Datum		fast_text;
	int			nnames = list_length(trace->index_names);
	ListCell   *lc;

	if (n == 0)
		return;
	names = palloc(Max(nnames, 1) * sizeof(Datum));
	foreach(lc, trace->index_names)
		names[foreach_current_index(lc)] = CStringGetTextDatum((char *) lfirst(lc));
	read_text = CStringGetTextDatum("read");
	write_text = CStringGetTextDatum("write");
	slow_text = CStringGetTextDatum("slow");
	fast_text = CStringGetTextDatum("fast");

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_begin_privileged(&saved_user, &saved_context);
	for (int start = 0; start < n; start += RUN_TRACE_INSERT_CHUNK)
	{
		int			m = Min(RUN_TRACE_INSERT_CHUNK, n - start);
		Datum	   *seq = palloc(m * sizeof(Datum));
		Datum	   *index_name = palloc(m * sizeof(Datum));
		Datum	   *page = palloc(m * sizeof(Datum));
		Datum	   *access = palloc(m * sizeof(Datum));
		Datum	   *level = palloc(m * sizeof(Datum));
		bool	   *level_null = palloc(m * sizeof(bool));
		Datum	   *submission = palloc(m * sizeof(Datum));
		Datum	   *tier = palloc(m * sizeof(Datum));
		bool	   *tier_null = palloc(m * sizeof(bool));
		Datum		values[TRACE_NPARAMS];

		for (int i = 0; i < m; i++)
		{
			IoTraceRecord *r = &trace->records[start + i];

			seq[i] = Int64GetDatum(trace->stored + start + i + 1);
			index_name[i] = names[r->index_slot];
			page[i] = Int64GetDatum((int64) r->page);
			access[i] = r->write ? write_text : read_text;
			level[i] = Int32GetDatum(r->level);
			level_null[i] = r->level < 0;
			submission[i] = Int64GetDatum(r->submission);
			tier[i] = r->tier == 1 ? fast_text : slow_text;
			tier_null[i] = r->tier < 0;
		}
		values[TRACE_PARAM_RUN_ID] = Int64GetDatum(run->run_id);
		values[TRACE_PARAM_SEQ] = make_array(seq, NULL, m, INT8OID);
		values[TRACE_PARAM_INDEX_NAME] = make_array(index_name, NULL, m, TEXTOID);
		values[TRACE_PARAM_PAGE] = make_array(page, NULL, m, INT8OID);
		values[TRACE_PARAM_ACCESS] = make_array(access, NULL, m, TEXTOID);
		values[TRACE_PARAM_LEVEL] = make_array(level, level_null, m, INT4OID);
		values[TRACE_PARAM_SUBMISSION] = make_array(submission, NULL, m, INT8OID);
		values[TRACE_PARAM_TIER] = make_array(tier, tier_null, m, TEXTOID);
		if (SPI_execute_with_args("INSERT INTO festival.io_trace "
								  "(run_id, seq, index_name, page, access, level, submission, tier) "
								  "SELECT $1, t.* FROM unnest($2, $3, $4, $5, $6, $7, $8) AS t",
								  TRACE_NPARAMS, types, values, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not store the I/O trace of run \"%s\"", run->label);
		pfree(seq);
		pfree(index_name);
		pfree(page);
		pfree(access);
		pfree(level);
		pfree(level_null);
		pfree(submission);
		pfree(tier);
		pfree(tier_null);
	}
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();

	/* keep what an operation still in progress recorded after the commit */
	memmove(trace->records, trace->records + n,
			(trace->nrecords - n) * sizeof(IoTraceRecord));
	trace->nrecords -= n;
	trace->committed = 0;
	trace->stored += n;
}

/*
 * An operation on ix ends: if a run is active, commit the operation's page
 * accesses to its trace, record ix's configuration in it, and return the
 * run's counters for the caller to add the operation's to (ix_end_op adds
 * them to the index's totals in the same pass); NULL without a run.
 */
FestStats *
run_account(OpenIndex *ix)
{
	ListCell   *lc;
	MemoryContext old;
	RunIndexConfig *entry;

	if (current_run == NULL)
		return NULL;
	if (current_run->trace != NULL)
	{
		iotrace_commit(current_run->trace);
		if (current_run->trace->committed >= RUN_TRACE_FLUSH_RECORDS)
			run_store_trace(current_run);
	}

	foreach(lc, current_run->indices)
		if (strcmp(((RunIndexConfig *) lfirst(lc))->name, ix->name) == 0)
			return &current_run->stats;

	old = MemoryContextSwitchTo(current_run->cxt);
	entry = palloc(sizeof(RunIndexConfig));
	entry->name = pstrdup(ix->name);
	entry->device = pstrdup(ix->cat.device.name);
	entry->profile = ix->cat.device.profile ? pstrdup(ix->cat.device.profile) : NULL;
	entry->config = ix_config_jsonb(ix);
	current_run->indices = lappend(current_run->indices, entry);
	MemoryContextSwitchTo(old);
	return &current_run->stats;
}

Datum
festival_begin_run(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	RunState   *run;
	char	   *label;
	bool		isnull;
	Oid			saved_user;
	int			saved_context;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("run label must not be NULL"),
				 errhint("Give a label that names the run, such as 'exp=test'.")));
	if (current_run != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run \"%s\" is already in progress in this session",
						current_run->label),
				 errhint("Call festival.end_run() first.")));
	label = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (label[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("run label must not be empty"),
				 errhint("Give a label that names the run, such as 'exp=test'.")));
	if (PG_NARGS() > 1 && PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("trace must not be NULL"),
				 errhint("Pass trace => true to record every page access, false (the default) not to.")));

	cxt = AllocSetContextCreate(TopMemoryContext, "festival run",
								ALLOCSET_SMALL_SIZES);
	run = MemoryContextAllocZero(cxt, sizeof(RunState));
	run->cxt = cxt;
	run->label = MemoryContextStrdup(cxt, label);
	if (PG_NARGS() > 1 && PG_GETARG_BOOL(1))
		run->trace = iotrace_create(cxt);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_begin_privileged(&saved_user, &saved_context);
	if (SPI_execute("SELECT nextval('festival.run_run_id_seq')", false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not draw a run id");
	catalog_end_privileged(saved_user, saved_context);
	run->run_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
											  SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();

	run->started_at = GetCurrentTimestamp();
	run->start_wall_ns = fest_now_ns();
	run->start_cpu_ns = process_cpu_ns();
	current_run = run;
	ix_trace_all(run->trace);
	PG_RETURN_INT64(run->run_id);
}

static Jsonb *
run_config_jsonb(RunState *run)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;
	ListCell   *lc;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	foreach(lc, run->indices)
	{
		RunIndexConfig *entry = (RunIndexConfig *) lfirst(lc);
		JsonbValue	k;
		JsonbValue	v;

		k.type = jbvString;
		k.val.string.val = entry->name;
		k.val.string.len = strlen(entry->name);
		pushJsonbValue(&state, WJB_KEY, &k);
		v.type = jbvBinary;
		v.val.binary.data = &entry->config->root;
		v.val.binary.len = VARSIZE(entry->config) - VARHDRSZ;
		pushJsonbValue(&state, WJB_VALUE, &v);
	}
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(result);
}

static double
ns_seconds(int64 ns)
{
	return (double) ns / 1e9;
}

/*
 * The distinct non-NULL values of one field of the run's indices, in order
 * of first use, joined by commas; NULL when there are none.
 */
static Datum
run_index_list(RunState *run, bool profiles, bool *isnull)
{
	StringInfoData buf;
	List	   *seen = NIL;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, run->indices)
	{
		RunIndexConfig *entry = (RunIndexConfig *) lfirst(lc);
		char	   *value = profiles ? entry->profile : entry->device;
		ListCell   *lc2;
		bool		dup = false;

		if (value == NULL)
			continue;
		foreach(lc2, seen)
			if (strcmp((char *) lfirst(lc2), value) == 0)
				dup = true;
		if (dup)
			continue;
		seen = lappend(seen, value);
		if (buf.len > 0)
			appendStringInfoChar(&buf, ',');
		appendStringInfoString(&buf, value);
	}
	*isnull = (seen == NIL);
	list_free(seen);
	return CStringGetTextDatum(buf.data);
}

Datum
festival_end_run(PG_FUNCTION_ARGS)
{
	RunState   *run = current_run;
	FestStats  *s;
	Oid			types[RUN_NPARAMS] = {INT8OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID,
		FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID,
		INT8OID, INT8OID, INT8OID, INT8OID, JSONBOID, JSONBOID,
	TEXTOID, TEXTOID, BOOLOID};
	Datum		values[RUN_NPARAMS];
	char		nulls[RUN_NPARAMS];
	bool		isnull;
	Oid			saved_user;
	int			saved_context;
	int64		wall_ns;
	int64		cpu_ns;
	int64		run_id;

	if (run == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no run is in progress in this session"),
				 errhint("Start one with festival.begin_run(label).")));

	wall_ns = fest_now_ns() - run->start_wall_ns;
	cpu_ns = process_cpu_ns() - run->start_cpu_ns;
	s = &run->stats;

	memset(nulls, ' ', sizeof(nulls));
	values[RUN_PARAM_RUN_ID] = Int64GetDatum(run->run_id);
	values[RUN_PARAM_LABEL] = CStringGetTextDatum(run->label);
	values[RUN_PARAM_STARTED_AT] = TimestampTzGetDatum(run->started_at);
	values[RUN_PARAM_ENDED_AT] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[RUN_PARAM_WALL] = Float8GetDatum(ns_seconds(wall_ns));
	values[RUN_PARAM_CPU] = Float8GetDatum(ns_seconds(cpu_ns));
	values[RUN_PARAM_IO] = Float8GetDatum(ns_seconds(s->io_ns));
	values[RUN_PARAM_INDEX] = Float8GetDatum(ns_seconds(s->index_ns));
	values[RUN_PARAM_REFINE] = Float8GetDatum(ns_seconds(s->refine_ns));
	values[RUN_PARAM_PAGES_READ] = Int64GetDatum(s->pages_read);
	values[RUN_PARAM_PAGES_WRITTEN] = Int64GetDatum(s->pages_written);
	values[RUN_PARAM_NODES_VISITED] = Int64GetDatum(s->nodes_visited);
	values[RUN_PARAM_SPLITS] = Int64GetDatum(s->splits_leaf + s->splits_internal);
	values[RUN_PARAM_METRICS] = JsonbPGetDatum(fest_stats_to_jsonb(s));
	values[RUN_PARAM_CONFIG] = JsonbPGetDatum(run_config_jsonb(run));
	values[RUN_PARAM_DEVICE] = run_index_list(run, false, &isnull);
	nulls[RUN_PARAM_DEVICE] = isnull ? 'n' : ' ';
	values[RUN_PARAM_PROFILE] = run_index_list(run, true, &isnull);
	nulls[RUN_PARAM_PROFILE] = isnull ? 'n' : ' ';
	values[RUN_PARAM_TRACED] = BoolGetDatum(run->trace != NULL);

	/* records of an operation that never ended are not the run's */
	if (run->trace != NULL)
	{
		iotrace_discard_uncommitted(run->trace);
		run_store_trace(run);
	}

	/*
	 * Derived columns come from the counters by name (metrics, $14), so a
	 * counter missing from this build counts as 0 (or NULL for the ratio).
	 */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_begin_privileged(&saved_user, &saved_context);
	if (SPI_execute_with_args("INSERT INTO festival.run (run_id, label, started_at, ended_at, "
							  "wall_seconds, cpu_seconds, io_seconds, index_seconds, refine_seconds, "
							  "pages_read, pages_written, nodes_visited, splits, metrics, config, "
							  "device, profile, traced, device_seconds, read_submissions, "
							  "write_submissions, erases, write_amplification, "
							  "reads_per_level, writes_per_level) "
							  "SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, "
							  "$16, $17, $18, "
							  "coalesce(($14->>'device_seconds')::float8, 0), "
							  "coalesce(($14->>'read_submissions')::bigint, 0), "
							  "coalesce(($14->>'write_submissions')::bigint, 0), "
							  "coalesce(($14->>'device_erases')::bigint, 0), "
							  "CASE WHEN coalesce(($14->>'ftl_flash_writes')::float8, 0) > 0 "
							  " AND coalesce(($14->>'ftl_host_writes')::float8, 0) > 0 "
							  " THEN ($14->>'ftl_flash_writes')::float8 / ($14->>'ftl_host_writes')::float8 END, "
							  "coalesce($14->'reads_per_level', '{}'), "
							  "coalesce($14->'writes_per_level', '{}')",
							  RUN_NPARAMS, types, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store run \"%s\"", run->label);
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();

	run_id = run->run_id;
	current_run = NULL;
	/* no tracing PageIO may keep a pointer into the run's memory */
	ix_trace_all(NULL);
	MemoryContextDelete(run->cxt);
	PG_RETURN_INT64(run_id);
}
