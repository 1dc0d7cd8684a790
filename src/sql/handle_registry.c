/*-------------------------------------------------------------------------
 *
 * handle_registry.c
 *	  The session's open indices: the registry of handles by name.
 *
 * The registry is the one piece of per-backend state outside an index or
 * a run; it maps names to OpenIndex handles, each with its own memory
 * context (handle.h).  A handle leaves it only through ix_discard, which
 * closes its chain and store and releases its lock.
 *
 * IDENTIFICATION
 *	  src/sql/handle_registry.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle_internal.h"
#include "sql/args.h"

#include "trace/tracing.h"

#include "access/xact.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

typedef struct OpenIndexEntry
{
	char		name[NAMEDATALEN];
	OpenIndex  *ix;
} OpenIndexEntry;

/* Open indices of this session, by name. */
static HTAB *open_indices = NULL;

/*
 * The handle ix_lookup_open found last, or NULL: a statement that calls
 * festival on one index per row finds it again without hashing its name.
 * Cleared when that handle is discarded, the only way one leaves
 * open_indices.
 */
static OpenIndex *last_found = NULL;

static HTAB *
registry(void)
{
	if (open_indices == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = NAMEDATALEN;
		ctl.entrysize = sizeof(OpenIndexEntry);
		ctl.hcxt = TopMemoryContext;
		open_indices = hash_create("festival open indices", 16, &ctl,
								   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	return open_indices;
}

OpenIndex *
ix_lookup_open(const char *name)
{
	OpenIndexEntry *entry;

	if (last_found != NULL && strcmp(last_found->name, name) == 0)
	{
		Assert(hash_search(open_indices, name, HASH_FIND, NULL) != NULL);
		return last_found;
	}
	if (open_indices == NULL)
		return NULL;
	entry = hash_search(open_indices, name, HASH_FIND, NULL);
	if (entry == NULL)
		return NULL;
	last_found = entry->ix;
	return entry->ix;
}

/*
 * An index name argument, as fest_name_arg reads it, into buf.  A name
 * equal to the handle found last was checked when that handle was opened,
 * so it is copied without allocating and checking it again: the query of
 * a statement that calls festival once per row.
 */
char *
ix_name_arg(FunctionCallInfo fcinfo, int argno, char *buf)
{
	if (last_found != NULL && !PG_ARGISNULL(argno))
	{
		text	   *t = PG_GETARG_TEXT_PP(argno);
		size_t		len = VARSIZE_ANY_EXHDR(t);

		if (len <= FEST_NAME_MAXLEN && last_found->name[len] == '\0' &&
			memcmp(VARDATA_ANY(t), last_found->name, len) == 0)
		{
			memcpy(buf, last_found->name, len + 1);
			return buf;
		}
	}
	strlcpy(buf, fest_name_arg(fcinfo, argno, "index"), FEST_NAME_MAXLEN + 1);
	return buf;
}

/* A new handle in its own context, registered and marked busy. */
OpenIndex *
handle_create(const char *name)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext,
											  "festival open index",
											  ALLOCSET_DEFAULT_SIZES);
	OpenIndex  *ix = MemoryContextAllocZero(cxt, sizeof(OpenIndex));
	OpenIndexEntry *entry;
	bool		found;

	ix->cxt = cxt;
	MemoryContextSetIdentifier(cxt, MemoryContextStrdup(cxt, name));
	ix->op.cxt = AllocSetContextCreate(cxt, "festival index operation",
									   ALLOCSET_DEFAULT_SIZES);
	strlcpy(ix->name, name, sizeof(ix->name));
	ix->op.busy = true;			/* an ERROR while opening marks it failed */
	ix->op.nest_level = GetCurrentTransactionNestLevel();
	ix->opened_at = GetCurrentTimestamp();

	entry = hash_search(registry(), name, HASH_ENTER, &found);
	Assert(!found);
	entry->ix = ix;
	return ix;
}

/*
 * Drop a handle: close its file, release its lock, free its memory.
 * Never raises an error.
 */
void
ix_discard(OpenIndex *ix)
{
	if (ix->ns != NULL)
		ix->ns->ops->close(ix->ns);
	else if (ix->io != NULL)
		pageio_close(ix->io);
	if (ix->lock_held)
		LockRelease(&ix->locktag, ExclusiveLock, true);
	hash_search(open_indices, ix->name, HASH_REMOVE, NULL);
	if (last_found == ix)
		last_found = NULL;
	MemoryContextDelete(ix->cxt);
}

/*
 * At the end of a top-level transaction, give back the handles of indices
 * this session only read: holding one until the session ends would lock
 * the owner out for as long as a reader stays connected.  Indices a user
 * who may change them has used stay open (repeated operations, benchmark
 * loops and memory devices, whose pages live in the handle, rely on it).
 *
 * Runs in the commit and abort callbacks, so it does no I/O and raises no
 * ERROR: a reader never changed the index, so there is nothing to write,
 * and a read that an ERROR interrupted wrote nothing either (a handle that
 * needs a reload is settled by nobody; its file is as the last writer left
 * it).  ix_discard closes the file and releases the lock.
 */
void
ix_release_readers(void)
{
	List	   *all = ix_all_open();
	ListCell   *lc;

	foreach(lc, all)
	{
		OpenIndex  *ix = (OpenIndex *) lfirst(lc);

		if (!ix->keep_open && !ix->op.busy)
			ix_discard(ix);
	}
	list_free(all);
}

/* Every open handle, for the session-level callbacks. */
List *
ix_all_open(void)
{
	HASH_SEQ_STATUS status;
	OpenIndexEntry *entry;
	List	   *all = NIL;

	if (open_indices == NULL)
		return NIL;
	hash_seq_init(&status, open_indices);
	while ((entry = hash_seq_search(&status)) != NULL)
		all = lappend(all, entry->ix);
	return all;
}

/*
 * Point every open handle's tracing PageIO at trace (NULL: none), so page
 * transfers between operations (a flush at session end) go where they went
 * while the run was looked up; called when a run begins and ends.
 */
void
ix_trace_all(IoTrace *trace)
{
	HASH_SEQ_STATUS status;
	OpenIndexEntry *entry;

	if (open_indices == NULL)
		return;
	hash_seq_init(&status, open_indices);
	while ((entry = hash_seq_search(&status)) != NULL)
		if (entry->ix->tracing != NULL)
			tracing_set_target(entry->ix->tracing, trace);
}
