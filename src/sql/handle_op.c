/*-------------------------------------------------------------------------
 *
 * handle_op.c
 *	  The operations on an open index: begin, commit, flush, end, close.
 *
 * Every SQL operation on an index runs between ix_begin_op and ix_end_op
 * (handle.h); the index is busy meanwhile.  Access is checked at the
 * beginning, the counters go to the index's totals and the run's at the
 * end.
 *
 * IDENTIFICATION
 *	  src/sql/handle_op.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle_internal.h"
#include "sql/progress.h"
#include "sql/run.h"

#include "trace/tracing.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

/*
 * May the current user run this operation?  Changes need ownership.
 * Reading an index with a source table needs the right to read that table,
 * from which every entry is derived; an index without one has no table
 * whose privileges apply and is readable by everyone, like the catalog.
 */
static void
check_access(OpenIndex *ix, IndexAccess access)
{
	if (superuser() || has_privs_of_role(GetUserId(), ix->cat.owner))
	{
		/* see ix_release_readers */
		ix->keep_open = true;
		return;
	}
	if (access == IX_MODIFY)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of index \"%s\" to change it", ix->name),
				 errhint("Ask its owner (festival.index.owner), a member of that role or a superuser.")));
	if (OidIsValid(ix->cat.source) &&
		pg_class_aclcheck(ix->cat.source, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read index \"%s\"", ix->name),
				 errhint("Reading an index requires owning it or being allowed to read its source table \"%s\".",
						 get_rel_name(ix->cat.source))));
}

static void
reject_busy(OpenIndex *ix)
{
	if (ix->op.busy)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("index \"%s\" is already in use by an operation of this session",
						ix->name),
				 errhint("Operations on one index cannot be nested (for example from a function its source view calls).")));
}

/*
 * The window search's batch for this operation (StructIndex.window_batch):
 * 0 depth-first, or the smallest queue depth of the index's devices.
 */
static int
window_batch(const OpenIndex *ix)
{
	int			depth;

	if (fest_window_search != WINDOW_SEARCH_LEVEL || ix->devstate == NULL)
		return 0;
	depth = device_queue_depth(ix->devstate, fest_queue_depth);
	if (ix->fast_devstate != NULL)
		depth = Min(depth, device_queue_depth(ix->fast_devstate, fest_queue_depth));
	return depth;
}

void
handle_start_op(OpenIndex *ix, bool modifying)
{
	ix->op.busy = true;
	ix->sidx.progress = NULL;	/* until ix_progress_begin */
	if (ix->ns != NULL)
		ix->ns->modifying_op = modifying;
	ix->op.nest_level = GetCurrentTransactionNestLevel();
	ix->reload.entry_count = ix->meta.entry_count;
	ix->reload.entries_valid = (ix->meta.flags & FEST_META_ENTRIES_VALID) != 0;
	/* op.stats is zero here, or holds what opening the index read */
	ix->op.time_io_cpu = fest_track_io_cpu;
	ix->sidx.window_batch = window_batch(ix);
	/* the trace target travels down with the counters (never looked up) */
	if (ix->tracing != NULL)
		tracing_set_target(ix->tracing, run_current_trace());
	ix->op.start_ns = fest_now_ns();
	/*
	 * The thread's CPU clock is a system call (no vDSO): read only when
	 * asked, once at each end of the operation (and of its refinement).
	 */
	ix->op.track_cpu = fest_track_cpu_time;
	ix->op.start_cpu_ns = ix->op.track_cpu ? fest_cpu_ns() : 0;
	ix->op.start_sync_cpu_ns = ix->op.stats.sync_cpu_ns;
	ix->op.start_modelled_io_cpu_ns = ix->op.stats.modelled_io_cpu_ns;
}

/* Start an operation on the named index, opening it if needed. */
OpenIndex *
ix_begin_op(const char *name, IndexAccess access)
{
	OpenIndex  *ix = ix_lookup_open(name);

	if (ix != NULL)
	{
		reject_busy(ix);
		check_access(ix, access);
		if (ix->needs_reload)
		{
			bool		keep_open = ix->keep_open;

			ix = handle_reload(ix);
			ix->keep_open = keep_open;
		}
	}
	else
	{
		ix = handle_open_index(name, NULL, NULL);
		check_access(ix, access);
	}
	handle_start_op(ix, access == IX_MODIFY);
	return ix;
}

/*
 * Refuse a change to an index that may be damaged: opened after an unclean
 * shutdown without a log to replay, or reloaded after a write that failed
 * while overwriting committed pages.  Either may hold a reference to a
 * page that was never written, and a change would build on it.  check()
 * lifts the refusal when it finds no error; build() rewrites the index.
 */
void
ix_require_writable(OpenIndex *ix)
{
	ix_require_built(ix);
	if (ix->meta.flags & FEST_META_DAMAGED)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" may be damaged and refuses changes", ix->name),
				 errdetail("A write failed while overwriting its pages: entries may be lost."),
				 errhint("Run festival.check('%s'); festival.build('%s') rebuilds it.",
						 ix->name, ix->name)));
	if (ix->ns->suspect)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" may be damaged and refuses changes", ix->name),
				 errdetail("It was not closed cleanly, or an operation failed while writing it."),
				 errhint("Run festival.check('%s'); festival.build('%s') rebuilds it.",
						 ix->name, ix->name)));
}

/*
 * Refuse to read an index whose file holds a layout of its structure this
 * version cannot read (StructureOps.check_layout: an older grid file);
 * build() rewrites it.
 */
void
ix_require_layout(OpenIndex *ix)
{
	if (ix->structure->check_layout != NULL && ix->ns != NULL)
		ix->structure->check_layout(&ix->sidx);
}

/*
 * Refuse to answer from, or change, an index whose build did not finish:
 * it holds only part of its source.
 */
void
ix_require_built(OpenIndex *ix)
{
	ix_require_layout(ix);
	if (ix->meta.flags & FEST_META_BUILDING)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is incompletely built", ix->name),
				 errdetail("A festival.build() of it failed or was interrupted; it holds only part of its source."),
				 errhint("Run festival.build('%s').", ix->name)));
}

/* Make the modification made so far durable as the node store defines. */
void
ix_commit(OpenIndex *ix)
{
	ix->op.committing = true;
	ns_commit(ix->ns);
	ix->op.committing = false;
	/* what a reload after a later ERROR restores */
	ix->reload.entry_count = ix->meta.entry_count;
	ix->reload.entries_valid = (ix->meta.flags & FEST_META_ENTRIES_VALID) != 0;
}

/* Write everything buffered, sync, and mark the file clean. */
void
ix_flush(OpenIndex *ix)
{
	ix->op.committing = true;
	ns_flush(ix->ns);
	ix->op.committing = false;
}

/* Finish an operation: account its figures and free its memory. */
void
ix_end_op(OpenIndex *ix)
{
	FestStats  *op = &ix->op.stats;

	op->index_ns += (fest_now_ns() - ix->op.start_ns) - op->refine_ns;
	if (ix->op.track_cpu)
		op->index_cpu_ns += (fest_cpu_ns() - ix->op.start_cpu_ns) - op->refine_cpu_ns
			- (op->sync_cpu_ns - ix->op.start_sync_cpu_ns)
			- (op->modelled_io_cpu_ns - ix->op.start_modelled_io_cpu_ns);
	else
		op->cpu_untimed_operations++;	/* a run's modelled time is then unknown */
	/* into the index's totals and the run's, and zeroed, in one pass */
	fest_stats_drain(op, &ix->totals, run_account(ix));
	ix->ns->write_pages_singly = false;
	ix->ns->retain_pages = 0;
	if (ix->sidx.progress != NULL)
		ix_progress_end(ix);
	ix->ns->ops->end_op(ix->ns);
	MemoryContextReset(ix->op.cxt);
	ix->op.busy = false;
}

/* Empty the file and start a new tree; build's first step. */
void
ix_reset_for_build(OpenIndex *ix)
{
	MemoryContext old = MemoryContextSwitchTo(ix->op.cxt);

	ix->op.committing = true;
	/*
	 * Emptying the file destroys the committed tree: until the empty tree
	 * is committed, a failure leaves a damaged file (a log replays it).
	 */
	ix->ns->overwriting = !ix->ns->has_log;
	/*
	 * Until build() finishes, the index holds part of its source: set
	 * before the reset, which a journaled write-through store makes
	 * durable together with the empty file (nodestore/writethrough.c).
	 */
	ix->meta.flags |= FEST_META_BUILDING;
	ix->ns->ops->reset(ix->ns);
	ix->meta.flags &= ~FEST_META_DAMAGED;
	ix->meta.flags |= FEST_META_ALL_POINTS;
	ix->meta.flags &= ~FEST_META_HAS_SRID;
	ix->meta.srid = 0;
	ix->structure->init_empty(&ix->sidx);
	ix_commit(ix);
	ix->ns->overwriting = false;
	MemoryContextSwitchTo(old);
}

/*
 * build()'s last step before its flush: the index is complete.  Written
 * here and again by the flush, so that both meta copies say so (a reader
 * falls back to the older copy when the newer one is damaged).
 */
void
ix_finish_build(OpenIndex *ix)
{
	ix->meta.flags &= ~FEST_META_BUILDING;
	ix->ns->meta_dirty = true;
	ix_commit(ix);
}

/*
 * Release an index about to be dropped: written first, since the drop may
 * still be rolled back, but a damaged index must remain droppable, so a
 * failure to write it is only a warning.
 */
void
ix_close_for_drop(OpenIndex *ix)
{
	MemoryContext cxt = CurrentMemoryContext;
	char		name[FEST_NAME_MAXLEN + 1];

	reject_busy(ix);
	strlcpy(name, ix->name, sizeof(name));
	PG_TRY();
	{
		ix_close(ix);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("index \"%s\" could not be written before it is dropped: %s",
						name, edata->message)));
		FreeErrorData(edata);
		/* ix_close failed before releasing the handle */
		ix_discard(ix);
	}
	PG_END_TRY();
}

/*
 * Write everything, mark the file clean and forget the handle.  A handle
 * an ERROR interrupted is settled from disk instead.
 */
void
ix_close(OpenIndex *ix)
{
	reject_busy(ix);
	/* a reader changed nothing and may not write: just let go (as at xact end) */
	if (!ix->keep_open)
	{
		ix_discard(ix);
		return;
	}
	if (ix->needs_reload && (ix->ns == NULL || !ix->ns->has_log))
	{
		ix_settle_failed(ix);
		ix_discard(ix);
		return;
	}
	/*
	 * An index with a log that an ERROR interrupted is reloaded (its log
	 * replayed) and flushed like any other, so that a failure that persists
	 * (a full disk) is this call's error instead of a success that leaves
	 * the work to the next open.
	 */
	if (ix->needs_reload)
		ix = handle_reload(ix);
	handle_start_op(ix, true);
	ix_flush(ix);
	ix_end_op(ix);
	ix_discard(ix);
}
