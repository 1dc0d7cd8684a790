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
 * IDENTIFICATION
 *	  src/sql/run.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/describe.h"

#include <sys/resource.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

typedef struct RunIndexConfig
{
	char	   *name;
	Jsonb	   *config;
} RunIndexConfig;

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

/* Add an operation's figures to the run, if one is active. */
void
run_account(OpenIndex *ix, const FestStats *op)
{
	ListCell   *lc;
	MemoryContext old;
	RunIndexConfig *entry;

	if (current_run == NULL)
		return;
	fest_stats_add(&current_run->stats, op);

	foreach(lc, current_run->indices)
		if (strcmp(((RunIndexConfig *) lfirst(lc))->name, ix->name) == 0)
			return;

	old = MemoryContextSwitchTo(current_run->cxt);
	entry = palloc(sizeof(RunIndexConfig));
	entry->name = pstrdup(ix->name);
	entry->config = ix_config_jsonb(ix);
	current_run->indices = lappend(current_run->indices, entry);
	MemoryContextSwitchTo(old);
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
				 errmsg("run label must not be NULL")));
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
				 errmsg("run label must not be empty")));

	cxt = AllocSetContextCreate(TopMemoryContext, "festival run",
								ALLOCSET_SMALL_SIZES);
	run = MemoryContextAllocZero(cxt, sizeof(RunState));
	run->cxt = cxt;
	run->label = MemoryContextStrdup(cxt, label);

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

Datum
festival_end_run(PG_FUNCTION_ARGS)
{
	RunState   *run = current_run;
	FestStats  *s;
	Oid			types[15] = {INT8OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID,
		FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID,
	INT8OID, INT8OID, INT8OID, INT8OID, JSONBOID, JSONBOID};
	Datum		values[15];
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

	values[0] = Int64GetDatum(run->run_id);
	values[1] = CStringGetTextDatum(run->label);
	values[2] = TimestampTzGetDatum(run->started_at);
	values[3] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[4] = Float8GetDatum(ns_seconds(wall_ns));
	values[5] = Float8GetDatum(ns_seconds(cpu_ns));
	values[6] = Float8GetDatum(ns_seconds(s->io_ns));
	values[7] = Float8GetDatum(ns_seconds(s->index_ns));
	values[8] = Float8GetDatum(ns_seconds(s->refine_ns));
	values[9] = Int64GetDatum(s->pages_read);
	values[10] = Int64GetDatum(s->pages_written);
	values[11] = Int64GetDatum(s->nodes_visited);
	values[12] = Int64GetDatum(s->splits_leaf + s->splits_internal);
	values[13] = JsonbPGetDatum(fest_stats_to_jsonb(s));
	values[14] = JsonbPGetDatum(run_config_jsonb(run));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_begin_privileged(&saved_user, &saved_context);
	if (SPI_execute_with_args("INSERT INTO festival.run (run_id, label, started_at, ended_at, "
							  "wall_seconds, cpu_seconds, io_seconds, index_seconds, refine_seconds, "
							  "pages_read, pages_written, nodes_visited, splits, metrics, config) "
							  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
							  15, types, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store run \"%s\"", run->label);
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();

	run_id = run->run_id;
	current_run = NULL;
	MemoryContextDelete(run->cxt);
	PG_RETURN_INT64(run_id);
}
