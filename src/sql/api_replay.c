/*-------------------------------------------------------------------------
 *
 * api_replay.c
 *	  festival.replay(run_id, profile): re-cost the recorded I/O trace of a
 *	  run on another device profile, without running the workload again.
 *
 * The trace (festival.io_trace) holds every page the run's devices
 * transferred, in order, with the submission that carried it.  Each index
 * of the run gets a fresh simulated drive of the profile (device/sim.c)
 * with the index's page size; consecutive trace rows of one index, one
 * direction and one submission number form one submission, exactly as the
 * device model saw it live (the tracing PageIO and the model's decorator
 * see the same arrays; docs/devices.md says where this is not exact).
 * The result is stored as a new festival.run row whose replay_of names the
 * source: the device columns and counters are re-costed, everything else
 * (CPU, pages, wall time) is the source's, so model_elapsed_seconds is the
 * same index work on the other drive.
 *
 * Replaying on the profile a run was recorded on gives exactly its device
 * time when the run's drives started fresh (the index was created in the
 * run, or every page it wrote was on a drive that had nothing to collect):
 * the model is a function of the submissions alone.
 *
 * IDENTIFICATION
 *	  src/sql/api_replay.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/catalog.h"
#include "sql/run.h"

#include "device/sim.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(festival_replay);

/* One index's simulated drive during a replay. */
typedef struct ReplayDrive
{
	char	   *index_name;
	SimDevice  *dev;
} ReplayDrive;

/* Columns of the trace query (SPI numbers them from 1). */
enum
{
	TRACE_COL_INDEX = 1,
	TRACE_COL_PAGE,
	TRACE_COL_WRITE,
	TRACE_COL_SUBMISSION,
	TRACE_COL_PAGE_SIZE
};

static SimDevice *
drive_for(List **drives, const char *index_name, const DeviceProfile *profile,
		  int64 page_size)
{
	ListCell   *lc;
	ReplayDrive *d;

	foreach(lc, *drives)
	{
		d = lfirst(lc);
		if (strcmp(d->index_name, index_name) == 0)
			return d->dev;
	}
	if (page_size < FEST_MIN_PAGE_SIZE || page_size > FEST_MAX_PAGE_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("run has no valid page size for index \"%s\"", index_name),
				 errhint("Only runs stored by festival.end_run() can be replayed: their config holds every index's options.")));
	d = palloc(sizeof(ReplayDrive));
	d->index_name = pstrdup(index_name);
	d->dev = sim_device_create(profile, (uint32) page_size);
	*drives = lappend(*drives, d);
	return d->dev;
}

/*
 * No festival.run row the caller may see for run_id: it is this session's
 * run in progress, or one whose trace rows are there but not its row
 * (another session's run in progress, or a session that ended without
 * end_run), or it does not exist for the caller.  A row row security
 * hides (looked for as the extension's owner) keeps the run nonexistent
 * for the caller, whatever trace rows of it the caller may read.
 */
static void
refuse_missing_run(int64 run_id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(run_id)};
	int64		current = run_current_id();
	bool		hidden;
	Oid			saved_user;
	int			saved_context;

	if (current != 0 && run_id == current)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run %lld is in progress", (long long) run_id),
				 errdetail("A run is stored, and can be replayed, once festival.end_run() ends it."),
				 errhint("Call festival.end_run() first.")));
	catalog_begin_privileged(&saved_user, &saved_context);
	if (SPI_execute_with_args("SELECT 1 FROM festival.run WHERE run_id = $1",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read festival.run");
	hidden = SPI_processed > 0;
	catalog_end_privileged(saved_user, saved_context);
	if (!hidden &&
		SPI_execute_with_args("SELECT 1 FROM festival.io_trace WHERE run_id = $1 LIMIT 1",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read festival.io_trace");
	if (!hidden && SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run %lld is in progress in another session, or was never ended", (long long) run_id),
				 errdetail("Its I/O trace has rows, but festival.end_run() has not stored the run."),
				 errhint("Replay it once the session that began it calls festival.end_run().")));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("run %lld does not exist", (long long) run_id),
			 errdetail("A run is visible only to those who may read every index it used, and is stored when festival.end_run() ends it."),
			 errhint("SELECT run_id, label FROM festival.run WHERE traced lists the runs that can be replayed.")));
}

Datum
festival_replay(PG_FUNCTION_ARGS)
{
	int64		run_id = fest_int64_arg(fcinfo, 0, "run_id");
	char	   *profile_name = fest_text_arg(fcinfo, 1, "profile");
	DeviceProfile *profile;
	Oid			types[2] = {INT8OID, TEXTOID};
	Datum		values[2];
	FestStats	stats;
	List	   *drives = NIL;
	PageId	   *pages = NULL;
	int			npages = 0;
	int			cap = 0;
	char	   *cur_index = NULL;
	bool		cur_write = false;
	int64		cur_sub = -1;
	int64		cur_page_size = 0;
	uint64		nrows;
	Jsonb	   *metrics;
	int64		new_id;
	Oid			saved_user;
	int			saved_context;
	bool		isnull;

	/* an unknown profile: the loader's error names the known ones */
	profile = catalog_load_profile(profile_name);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	values[0] = Int64GetDatum(run_id);
	if (SPI_execute_with_args("SELECT traced FROM festival.run WHERE run_id = $1",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read festival.run");
	if (SPI_processed == 0)
		refuse_missing_run(run_id);
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run %lld has no I/O trace", (long long) run_id),
				 errhint("Record the run with festival.begin_run(label, trace => true) to replay it.")));

	/*
	 * The trace in order, with each index's page size from the run's
	 * config (end_run stores every index's complete options there).  A
	 * config changed by hand may hold anything there: what is not a whole
	 * number of at most seven digits reads as 0, which drive_for refuses
	 * with its own message instead of a cast error of this query.
	 */
	if (SPI_execute_with_args("SELECT t.index_name, t.page, t.access = 'write', t.submission, "
							  "CASE WHEN jsonb_typeof(r.config->t.index_name->'options'->'page_size') = 'number' "
							  " AND r.config->t.index_name->'options'->>'page_size' ~ '^[0-9]{1,7}$' "
							  " THEN (r.config->t.index_name->'options'->>'page_size')::bigint ELSE 0 END "
							  "FROM festival.io_trace t JOIN festival.run r USING (run_id) "
							  "WHERE t.run_id = $1 ORDER BY t.seq",
							  1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read festival.io_trace");
	nrows = SPI_processed;

	fest_stats_reset(&stats);
	for (uint64 i = 0; i <= nrows; i++)
	{
		char	   *index_name = NULL;
		int64		page = 0;
		bool		write = false;
		int64		sub = 0;
		int64		page_size = 0;
		HeapTuple	tup;
		TupleDesc	desc = SPI_tuptable->tupdesc;

		if (i < nrows)
		{
			tup = SPI_tuptable->vals[i];
			index_name = SPI_getvalue(tup, desc, TRACE_COL_INDEX);
			page = DatumGetInt64(SPI_getbinval(tup, desc, TRACE_COL_PAGE, &isnull));
			write = DatumGetBool(SPI_getbinval(tup, desc, TRACE_COL_WRITE, &isnull));
			sub = DatumGetInt64(SPI_getbinval(tup, desc, TRACE_COL_SUBMISSION, &isnull));
			page_size = DatumGetInt64(SPI_getbinval(tup, desc, TRACE_COL_PAGE_SIZE, &isnull));
		}
		/* the submission in progress ends: cost it */
		if (npages > 0 &&
			(i == nrows || sub != cur_sub || write != cur_write ||
			 strcmp(index_name, cur_index) != 0))
		{
			SimDevice  *dev = drive_for(&drives, cur_index, profile, cur_page_size);

			sim_submit(dev, pages, npages, cur_write, &stats);
			npages = 0;
		}
		if (i == nrows)
			break;
		/*
		 * A page the index file cannot have (io_trace changed by hand):
		 * refused here, where the message can name the trace, rather than
		 * wrapping around in the drive model's byte offsets.
		 */
		if (page < 0 || (page_size > 0 && page > PG_INT64_MAX / page_size))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("I/O trace of run %lld holds page %lld of index \"%s\", which no index file has",
							(long long) run_id, (long long) page, index_name),
					 errhint("The trace was changed after festival.end_run() stored it; record the run again.")));
		if (npages == cap)
		{
			cap = Max(64, cap * 2);
			pages = pages ? repalloc(pages, cap * sizeof(PageId))
				: palloc(cap * sizeof(PageId));
		}
		pages[npages++] = (PageId) page;
		cur_index = index_name;
		cur_write = write;
		cur_sub = sub;
		cur_page_size = page_size;
	}

	/*
	 * The new run: the source's row with the device columns re-costed.
	 * metrics gets the re-costed counters and a "replay" object.
	 */
	{
		metrics = fest_stats_to_jsonb(&stats);
	}

	catalog_begin_privileged(&saved_user, &saved_context);
	{
		Oid			itypes[3] = {INT8OID, TEXTOID, JSONBOID};
		Datum		ivalues[3] = {Int64GetDatum(run_id), CStringGetTextDatum(profile_name),
		JsonbPGetDatum(metrics)};

		/*
		 * Only the device counters of $3 replace the source's; the others
		 * (pages, CPU) stay as measured.
		 */
		if (SPI_execute_with_args("INSERT INTO festival.run (label, started_at, ended_at, "
								  "wall_seconds, cpu_seconds, io_seconds, index_seconds, refine_seconds, "
								  "pages_read, pages_written, nodes_visited, splits, metrics, config, "
								  "device, profile, traced, device_seconds, read_submissions, "
								  "write_submissions, erases, write_amplification, "
								  "reads_per_level, writes_per_level, replay_of) "
								  "SELECT label || ' replay=' || $2, now(), now(), "
								  "wall_seconds, cpu_seconds, io_seconds, index_seconds, refine_seconds, "
								  "pages_read, pages_written, nodes_visited, splits, "
								  "metrics || jsonb_build_object("
								  "  'device_seconds', $3->'device_seconds', "
								  "  'device_erases', $3->'device_erases', "
								  "  'ftl_host_writes', $3->'ftl_host_writes', "
								  "  'ftl_flash_writes', $3->'ftl_flash_writes', "
								  "  'ftl_gc_runs', $3->'ftl_gc_runs', "
								  "  'replay', jsonb_build_object('source_run', run_id, 'profile', $2)), "
								  "config, device, $2, false, "
								  "($3->>'device_seconds')::float8, read_submissions, write_submissions, "
								  "($3->>'device_erases')::bigint, "
								  "CASE WHEN ($3->>'ftl_host_writes')::float8 > 0 "
								  " THEN ($3->>'ftl_flash_writes')::float8 / ($3->>'ftl_host_writes')::float8 END, "
								  "reads_per_level, writes_per_level, run_id "
								  "FROM festival.run WHERE run_id = $1 RETURNING run_id",
								  3, itypes, ivalues, NULL, false, 0) != SPI_OK_INSERT_RETURNING ||
			SPI_processed != 1)
			elog(ERROR, "could not store the replay of run %lld", (long long) run_id);
		new_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();
	PG_RETURN_INT64(new_id);
}
