/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  Progress of long operations: a NOTICE every festival.progress_interval
 *	  seconds, and a slot per backend in shared memory that the
 *	  festival.progress view reads from any session.
 *
 * The work is counted where it is done (stats/progress.h); this file is
 * the Progress's publisher.  The slots exist only when festival is in
 * shared_preload_libraries: shared memory can be requested only while the
 * postmaster starts.  Without them the view has no rows (docs/
 * operations-and-queries.md says so) and the notices are unchanged.
 *
 * A slot belongs to one backend (MyBackendId), which alone writes it;
 * readers copy it under a change count, as PostgreSQL's own backend
 * status array, so they never wait for a writer and never see half a
 * write.  The slot is emptied when the operation ends, fails (the
 * transaction's abort) or the backend exits.
 *
 * IDENTIFICATION
 *	  src/sql/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/progress.h"

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

typedef struct ProgressSlot
{
	/* odd while its backend writes it */
	volatile uint32 changecount;
	int			pid;			/* 0: no operation */
	Oid			database;
	Oid			role;
	char		index_name[NAMEDATALEN];
	char		operation[16];
	char		phase[PROGRESS_PHASE_LEN];
	char		unit[16];
	int64		done;
	int64		total;
	TimestampTz started;
} ProgressSlot;

/* The slots in shared memory (set at startup; NULL when not preloaded). */
static ProgressSlot *progress_slots = NULL;
static int	progress_nslots = 0;
/* This backend's slot, once it published. */
static ProgressSlot *my_slot = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static Size
progress_shmem_size(void)
{
	return mul_size(MaxBackends, sizeof(ProgressSlot));
}

static void
progress_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(progress_shmem_size());
}

static void
progress_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	progress_slots = ShmemInitStruct("festival progress", progress_shmem_size(), &found);
	if (!found)
		memset(progress_slots, 0, progress_shmem_size());
	progress_nslots = MaxBackends;
	LWLockRelease(AddinShmemInitLock);
}

/* From _PG_init: the slots, when festival is being preloaded. */
void
progress_shmem_register(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = progress_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = progress_shmem_startup;
}

static void
slot_begin_write(ProgressSlot *slot)
{
	slot->changecount++;
	pg_write_barrier();
}

static void
slot_end_write(ProgressSlot *slot)
{
	pg_write_barrier();
	slot->changecount++;
	Assert((slot->changecount & 1) == 0);
}

/* Empty this backend's slot (operation ended or failed, backend exit). */
void
progress_slot_clear(void)
{
	if (my_slot == NULL || my_slot->pid == 0)
		return;
	slot_begin_write(my_slot);
	my_slot->pid = 0;
	slot_end_write(my_slot);
}

static void
progress_exit(int code, Datum arg)
{
	progress_slot_clear();
}

/* This backend's slot, or NULL without shared memory. */
static ProgressSlot *
progress_my_slot(void)
{
	if (my_slot != NULL)
		return my_slot;
	if (progress_slots == NULL || MyBackendId == InvalidBackendId ||
		MyBackendId > progress_nslots)
		return NULL;
	my_slot = &progress_slots[MyBackendId - 1];
	on_shmem_exit(progress_exit, (Datum) 0);
	return my_slot;
}

/* The Progress's publisher: the slot always, a NOTICE when one is due. */
static void
progress_publish(Progress *progress, bool notice_due)
{
	OpenIndex  *ix = (OpenIndex *) progress->arg;
	ProgressSlot *slot = progress_my_slot();

	if (slot != NULL)
	{
		bool		first = slot->pid != MyProcPid;

		slot_begin_write(slot);
		if (first)
		{
			slot->pid = MyProcPid;
			slot->database = MyDatabaseId;
			slot->role = GetUserId();
			strlcpy(slot->index_name, ix->name, sizeof(slot->index_name));
			strlcpy(slot->operation, progress->operation, sizeof(slot->operation));
			slot->started = GetCurrentTimestamp() -
				(fest_now_ns() - progress->start_ns) / 1000;
		}
		strlcpy(slot->phase, progress->phase, sizeof(slot->phase));
		strlcpy(slot->unit, progress->unit, sizeof(slot->unit));
		slot->done = progress->done;
		slot->total = progress->total;
		slot_end_write(slot);
	}
	if (notice_due)
	{
		double		elapsed = (double) (fest_now_ns() - progress->start_ns) / 1e9;
		char		total[40] = "";

		if (progress->total >= 0)
			snprintf(total, sizeof(total), " of " INT64_FORMAT, progress->total);
		ereport(NOTICE,
				(errmsg("%s of index \"%s\": %s, " INT64_FORMAT "%s %s after %.1f s",
						progress->operation, ix->name, progress->phase,
						progress->done, total, progress->unit, elapsed)));
	}
}

/*
 * Start counting a long operation on ix: handed down to the structure as
 * sidx.progress; ended by ix_end_op (or the transaction's abort).
 */
Progress *
ix_progress_begin(OpenIndex *ix, const char *operation)
{
	Progress   *progress = &ix->op.progress;

	progress_init(progress, operation,
				  (int64) fest_progress_interval * INT64CONST(1000000000),
				  progress_publish, ix);
	ix->sidx.progress = progress;
	return progress;
}

void
ix_progress_end(OpenIndex *ix)
{
	ix->sidx.progress = NULL;
	progress_slot_clear();
}

PG_FUNCTION_INFO_V1(festival_progress_slots);

/*
 * festival.progress_slots(): the operations in progress, one row each,
 * those of roles the caller has the privileges of (or every one for
 * pg_read_all_stats), as pg_stat_activity.  No rows without the slots.
 */
Datum
festival_progress_slots(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; progress_slots != NULL && i < progress_nslots; i++)
	{
		volatile ProgressSlot *shared = &progress_slots[i];
		ProgressSlot copy;
		Datum		values[9];
		bool		nulls[9] = {0};

		for (;;)
		{
			uint32		before = shared->changecount;

			pg_read_barrier();
			memcpy(&copy, (const void *) shared, sizeof(copy));
			pg_read_barrier();
			if (before == shared->changecount && (before & 1) == 0)
				break;
			CHECK_FOR_INTERRUPTS();
		}
		if (copy.pid == 0 || (!all && !has_privs_of_role(GetUserId(), copy.role)))
			continue;
		values[0] = Int32GetDatum(copy.pid);
		values[1] = ObjectIdGetDatum(copy.database);
		values[2] = CStringGetTextDatum(copy.index_name);
		values[3] = CStringGetTextDatum(copy.operation);
		values[4] = CStringGetTextDatum(copy.phase);
		values[5] = Int64GetDatum(copy.done);
		values[6] = Int64GetDatum(copy.total);
		nulls[6] = copy.total < 0;
		values[7] = CStringGetTextDatum(copy.unit);
		values[8] = TimestampTzGetDatum(copy.started);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
