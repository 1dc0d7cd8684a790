/*-------------------------------------------------------------------------
 *
 * handle_failure.c
 *	  Error recovery: a handle an ERROR interrupted, and its reload.
 *
 * The (sub)transaction-abort callbacks (xact.c) mark the handles of
 * operations an ERROR interrupted (ix_mark_failed) without freeing
 * anything an outer operation may still use; the next use reloads the
 * index from disk (handle_reload), and a close or the session's end
 * settles one that wrote nothing (ix_settle_failed).
 *
 * IDENTIFICATION
 *	  src/sql/handle_failure.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle_internal.h"
#include "sql/run.h"

#include "utils/memutils.h"

/*
 * Reopen a handle an ERROR interrupted: everything in memory is dropped
 * and the index is read again from disk.
 */
OpenIndex *
handle_reload(OpenIndex *ix)
{
	ReloadInfo	info;
	char		name[FEST_NAME_MAXLEN + 1];
	DeviceState *kept;

	info = ix->reload;
	strlcpy(name, ix->name, sizeof(name));
	/*
	 * Memory pages and the simulated drive survive the reload (they are
	 * the device, not the in-memory state of the index); parked in the
	 * transaction's context, they are freed if reopening fails.
	 */
	kept = ix->devstate;
	if (kept != NULL)
		MemoryContextSetParent(kept->cxt, TopTransactionContext);
	ix_discard(ix);
	return handle_open_index(name, &info, kept);
}

/*
 * Called by the abort callbacks for an operation an ERROR interrupted.
 * Frees nothing but per-operation memory: the next use reloads the index.
 */
void
ix_mark_failed(OpenIndex *ix)
{
	/* the interrupted operation's page accesses leave the run's trace */
	run_discard_failed_io();
	/* a handle that never finished opening is in use by nobody */
	if (!ix->open_complete)
	{
		ix_discard(ix);
		return;
	}
	/*
	 * Nothing changed yet (an argument refused, say): keep the handle.
	 * Every change of a node or of the meta data sets op_touched; the
	 * changes of earlier operations (a log-less buffer's, too) are intact.
	 * A flush interrupted while writing (committing) changed the buffer.
	 */
	/*
	 * A device write the operation made failed (write_errors): a layer that
	 * defers writes may have let go of the page it was writing back (a page
	 * cache's eviction during a read), so what the handle holds is no longer
	 * what it acknowledged.  The reload restores it from the device and the
	 * journal (nodestore/writethrough.c).
	 */
	if (ix->ns != NULL && !ix->ns->op_touched && !ix->op.committing &&
		ix->op.stats.write_errors == 0)
	{
		ix->op.busy = false;
		ix->ns->write_pages_singly = false;
		ix->ns->retain_pages = 0;
		ix->ns->ops->end_op(ix->ns);
		MemoryContextReset(ix->op.cxt);
		fest_stats_reset(&ix->op.stats);
		return;
	}
	ix->op.busy = false;
	ix->needs_reload = true;

	/*
	 * The file is as it was unless the failure came while a commit was
	 * overwriting committed pages (a write-through store writes new pages
	 * first and cuts them off again if that fails: wt_commit), or
	 * something lives only in memory: a buffering store without a log loses
	 * its buffer on the reload (with a log, the reload replays it, whatever
	 * the failed flush had written).
	 */
	ix->reload.damaged = ix->ns != NULL && ix->ns->overwriting && !ix->ns->has_log;
	ix->reload.consistent = ix->ns != NULL && !ix->ns->overwriting && !ix->ns->suspect &&
		!(ix->ns->buffers && !ix->ns->has_log);
	ix->op.committing = false;
	MemoryContextReset(ix->op.cxt);
}

/*
 * For a handle that needs a reload and is about to be released (close,
 * end of session): if the failed operation wrote nothing, the file is
 * consistent, so re-read its meta page and mark it clean.
 */
void
ix_settle_failed(OpenIndex *ix)
{
	FestMeta	meta;

	/*
	 * A buffering store's file stays "not clean", and so does one with a log
	 * (a journal too): the log must be replayed.
	 */
	if (!ix->reload.consistent || ix->io == NULL || ix->ns == NULL ||
		ix->ns->buffers || ix->ns->has_log)
		return;
	fest_meta_read(ix->io, ix->name, &meta);
	if (meta.flags & FEST_META_CLEAN)
		return;
	pageio_sync(ix->io);
	meta.flags |= FEST_META_CLEAN;
	meta.entry_count = ix->reload.entry_count;
	if (ix->reload.entries_valid)
		meta.flags |= FEST_META_ENTRIES_VALID;
	else
		meta.flags &= ~FEST_META_ENTRIES_VALID;
	fest_meta_write(ix->io, &meta);
	pageio_sync(ix->io);
}
