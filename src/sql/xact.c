/*-------------------------------------------------------------------------
 *
 * xact.c
 *	  Transaction and session callbacks.
 *
 * - On a (sub)transaction abort, operations that began inside it and were
 *   interrupted by the ERROR are marked failed (ix_mark_failed); nothing
 *   else is touched, since an outer operation may still be running on
 *   another index.
 * - File removals follow the transaction that asked for them: the file of
 *   an index created in a transaction that aborts is removed, the file of
 *   a dropped index only when the drop commits.  Entries move to the
 *   parent when a subtransaction commits.
 * - At the end of a top-level transaction, indices the session only read
 *   are released (ix_release_readers).
 * - At the end of the session every open index is flushed and marked
 *   clean, so an index survives its session without an explicit close.
 *
 * IDENTIFICATION
 *	  src/sql/xact.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/xact.h"
#include "sql/progress.h"

#include "access/xact.h"
#include "storage/ipc.h"
#include "utils/memutils.h"

typedef struct PendingUnlink
{
	char	   *path;
	bool		at_commit;		/* true: drop (remove if committed);
								 * false: create (remove if aborted) */
	int			nest_level;
} PendingUnlink;

/* File removals waiting for the end of their (sub)transaction. */
static List *pending_unlinks = NIL;

/* Mark the operations of aborted (sub)transactions at or below level. */
static void
mark_failed_operations(int level)
{
	List	   *all = ix_all_open();
	ListCell   *lc;

	foreach(lc, all)
	{
		OpenIndex  *ix = (OpenIndex *) lfirst(lc);

		if (ix->op.busy && ix->op.nest_level >= level)
			ix_mark_failed(ix);
	}
	list_free(all);
}

static void
add_pending(const char *path, bool at_commit)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	PendingUnlink *p = palloc(sizeof(PendingUnlink));

	p->path = pstrdup(path);
	p->at_commit = at_commit;
	p->nest_level = GetCurrentTransactionNestLevel();
	pending_unlinks = lappend(pending_unlinks, p);
	MemoryContextSwitchTo(old);
}

void
pending_unlink_on_abort(const char *path)
{
	add_pending(path, false);
}

void
pending_unlink_on_commit(const char *path)
{
	add_pending(path, true);
}

/* Is the file due to be removed when this transaction commits? */
bool
pending_unlink_scheduled(const char *path)
{
	ListCell   *lc;

	foreach(lc, pending_unlinks)
	{
		PendingUnlink *p = (PendingUnlink *) lfirst(lc);

		if (p->at_commit && strcmp(p->path, path) == 0)
			return true;
	}
	return false;
}

/* Release any handle on a file about to be removed. */
static void
discard_handles_on(const char *path)
{
	List	   *all = ix_all_open();
	ListCell   *lc;

	foreach(lc, all)
	{
		OpenIndex  *ix = (OpenIndex *) lfirst(lc);

		if (ix->path != NULL && strcmp(ix->path, path) == 0)
			ix_discard(ix);
	}
	list_free(all);
}

/*
 * Settle pending removals of (sub)transactions at or below nest_level.
 * committed says how they ended; on a subtransaction commit the entries
 * move to the parent instead.
 */
static void
settle_pending(int nest_level, bool committed, bool subtransaction)
{
	ListCell   *lc;

	foreach(lc, pending_unlinks)
	{
		PendingUnlink *p = (PendingUnlink *) lfirst(lc);

		if (p->nest_level < nest_level)
			continue;
		if (subtransaction && committed)
		{
			p->nest_level = nest_level - 1;
			continue;
		}
		if (p->at_commit == committed)
		{
			discard_handles_on(p->path);
			device_file_unlink(p->path);
		}
		pending_unlinks = foreach_delete_current(pending_unlinks, lc);
		pfree(p->path);
		pfree(p);
	}
}

static void
fest_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			mark_failed_operations(1);
			progress_slot_clear();
			settle_pending(1, false, false);
			ix_release_readers();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			settle_pending(1, true, false);
			ix_release_readers();
			break;
		default:
			break;
	}
}

static void
fest_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();

	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			mark_failed_operations(level);
			progress_slot_clear();
			settle_pending(level, false, true);
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			settle_pending(level, true, true);
			break;
		default:
			break;
	}
}

/* Flush (or settle) an index at session end, logging any error. */
static void
release_quietly(OpenIndex *ix)
{
	PG_TRY();
	{
		if (ix->needs_reload)
			ix_settle_failed(ix);
		else if (!ix->op.busy && ix->ns != NULL)
			ix_flush(ix);		/* a tiered index also saves its weights */
	}
	PG_CATCH();
	{
		EmitErrorReport();
		FlushErrorState();
	}
	PG_END_TRY();
}

/*
 * At session end, write and mark clean every index that is not in the
 * middle of an operation.
 *
 * proc_exit is in progress here, so elog turns an ERROR into FATAL, which
 * does not return to release_quietly's catch: it logs the error and calls
 * proc_exit again, which goes on with the before_shmem_exit callbacks still
 * registered.  So before each index's flush this function registers itself
 * once more (the slot it runs from is free again, so the list does not
 * grow) and takes that registration back when the flush returns.  If the
 * flush fails, the nested proc_exit runs it again, and it flushes the
 * indices after the failed one; exit_flush_tried keeps the failed one from
 * being tried twice.  Every index whose own flush works is written and
 * marked clean, whatever another index's flush does: with a write-back
 * cache and no redo log, acknowledged changes would otherwise be lost at a
 * normal exit.  An index whose flush failed stays marked unclean on disk
 * (FAST and eFIND replay their redo log at the next open; the
 * write-through store without a cache wrote every acknowledged change at
 * its commit).  test/shell/unclean_shutdown.sh makes an exit flush fail
 * and checks both indices in the next session.
 */
static void
fest_session_exit(int code, Datum arg)
{
	List	   *all = ix_all_open();
	ListCell   *lc;

	foreach(lc, all)
	{
		OpenIndex  *ix = (OpenIndex *) lfirst(lc);

		if (ix->exit_flush_tried)
			continue;			/* its flush failed: leave it as it is */
		ix->exit_flush_tried = true;
		before_shmem_exit(fest_session_exit, (Datum) 0);
		release_quietly(ix);
		cancel_before_shmem_exit(fest_session_exit, (Datum) 0);
		ix_discard(ix);
	}
}

void
handle_register_callbacks(void)
{
	RegisterXactCallback(fest_xact_callback, NULL);
	RegisterSubXactCallback(fest_subxact_callback, NULL);
	before_shmem_exit(fest_session_exit, (Datum) 0);
}
