/*-------------------------------------------------------------------------
 *
 * handle_lock.c
 *	  One session at a time per index: its advisory lock.
 *
 * A session-level advisory lock (the error names the holder, found in
 * pg_locks) taken by polling up to festival.open_timeout; the index file's
 * flock (device/file.c) keeps other processes and clusters out as well.
 *
 * IDENTIFICATION
 *	  src/sql/handle_lock.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle_internal.h"

#include "miscadmin.h"
#include "utils/timestamp.h"

/* The fourth advisory-lock field festival uses, distinct from SQL's 1 and 2. */
#define FEST_ADVISORY_FIELD4 0x4653

static void
set_locktag(LOCKTAG *tag, int64 index_id)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId,
						 (uint32) ((uint64) index_id >> 32),
						 (uint32) index_id,
						 FEST_ADVISORY_FIELD4);
}

static void
lock_conflict(const LOCKTAG *tag, const char *name)
{
	char	   *holder = catalog_lock_holder(tag);

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_IN_USE),
			 errmsg("index \"%s\" is open in another session", name),
			 holder ? errdetail("It is held by %s.", holder) : 0,
			 errhint("Call festival.close('%s') in that session, or wait for it to end; festival.open_timeout (now %d ms) says how long opening waits.",
					 name, fest_open_timeout_ms)));
}

/*
 * Take the index's advisory lock, waiting up to festival.open_timeout for
 * another holder to let go: a session that has just ended is still
 * flushing and closing its indices for a few milliseconds, and a reader
 * gives its handle back at the end of its transaction (ix_release_readers).
 * Polling rather than a blocking LockAcquire keeps the wait bounded
 * without touching lock_timeout, and cancellable.
 */
static void
acquire_index_lock(const LOCKTAG *tag, const char *name, bool session_lock)
{
	TimestampTz started = GetCurrentTimestamp();

	while (LockAcquire(tag, ExclusiveLock, session_lock, true) == LOCKACQUIRE_NOT_AVAIL)
	{
		if (!device_wait_for_holder(started))
			lock_conflict(tag, name);
	}
}

/* Take the session-level lock of an open handle. */
void
handle_lock(OpenIndex *ix)
{
	set_locktag(&ix->locktag, ix->cat.index_id);
	acquire_index_lock(&ix->locktag, ix->name, true);
	ix->lock_held = true;
}

/*
 * Lock an index that this session has not opened, until the end of the
 * transaction (drop_index uses it so no other session can open the index
 * before the drop commits).
 */
void
ix_lock_until_commit(int64 index_id, const char *name, LOCKTAG *tag)
{
	set_locktag(tag, index_id);
	acquire_index_lock(tag, name, false);
}
