/*-------------------------------------------------------------------------
 *
 * handle.c
 *	  Opening, locking, operating on and discarding indices.
 *
 * The registry of open indices is the one piece of per-backend state
 * outside an index or a run; it maps names to OpenIndex handles, each with
 * its own memory context.  Transaction callbacks discard the handles of
 * operations an ERROR interrupted and carry out file removals that depend
 * on the outcome of the transaction (create_index's file goes away if its
 * transaction aborts, drop_index's file only if its transaction commits).
 *
 * IDENTIFICATION
 *	  src/sql/handle.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port.h"
#include "storage/ipc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* The fourth advisory-lock field festival uses, distinct from SQL's 1 and 2. */
#define FEST_ADVISORY_FIELD4 0x4653

char	   *fest_data_directory_setting = NULL;
int			fest_progress_interval = 10;

typedef struct OpenIndexEntry
{
	char		name[NAMEDATALEN];
	OpenIndex  *ix;
} OpenIndexEntry;

typedef struct PendingUnlink
{
	char	   *path;
	bool		at_commit;		/* true: drop (remove if committed);
								 * false: create (remove if aborted) */
	int			nest_level;
} PendingUnlink;

/* Open indices of this session, by name. */
static HTAB *open_indices = NULL;

/*
 * Names of indices discarded after an ERROR that struck outside a page
 * write-out: their files are consistent although their meta pages say
 * "not clean", so reopening them must not warn.
 */
static List *consistent_after_discard = NIL;

/* File removals waiting for the end of their (sub)transaction. */
static List *pending_unlinks = NIL;

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

/*
 * Index and device names become file and directory names, so they are
 * restricted to identifier-like spellings.
 */
void
fest_validate_name(const char *what, const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len > FEST_NAME_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("%s name must have 1 to %d characters", what, FEST_NAME_MAXLEN)));
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) name[i];

		if (!(isalpha(c) || c == '_' || (i > 0 && isdigit(c))) || c >= 128)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("invalid %s name \"%s\"", what, name),
					 errhint("Use ASCII letters, digits and underscores, starting with a letter or underscore.")));
	}
}

OpenIndex *
index_lookup_open(const char *name)
{
	OpenIndexEntry *entry;

	if (open_indices == NULL)
		return NULL;
	entry = hash_search(open_indices, name, HASH_FIND, NULL);
	return entry ? entry->ix : NULL;
}

/* A new handle in its own context, registered and marked busy. */
static OpenIndex *
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
	ix->op_cxt = AllocSetContextCreate(cxt, "festival index operation",
									   ALLOCSET_DEFAULT_SIZES);
	strlcpy(ix->name, name, sizeof(ix->name));
	ix->busy = true;			/* an ERROR while opening discards it */
	ix->opened_at = GetCurrentTimestamp();

	entry = hash_search(registry(), name, HASH_ENTER, &found);
	Assert(!found);
	entry->ix = ix;
	return ix;
}

/*
 * Drop a handle: close its file, release its lock, free its memory.
 * Never raises an error, so it can run during transaction abort.
 */
static void
handle_discard(OpenIndex *ix, bool consistent)
{
	if (consistent && (ix->meta.flags & FEST_META_CLEAN) == 0 && ix->ns != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		consistent_after_discard = lappend(consistent_after_discard,
										   pstrdup(ix->name));
		MemoryContextSwitchTo(old);
	}

	if (ix->ns != NULL)
		ix->ns->ops->close(ix->ns);
	else if (ix->io != NULL)
		ix->io->ops->close(ix->io);
	if (ix->lock_held)
		LockRelease(&ix->locktag, ExclusiveLock, true);
	hash_search(open_indices, ix->name, HASH_REMOVE, NULL);
	MemoryContextDelete(ix->cxt);
}

static bool
take_consistent_mark(const char *name)
{
	ListCell   *lc;

	foreach(lc, consistent_after_discard)
	{
		char	   *marked = (char *) lfirst(lc);

		if (strcmp(marked, name) == 0)
		{
			consistent_after_discard = foreach_delete_current(consistent_after_discard, lc);
			pfree(marked);
			return true;
		}
	}
	return false;
}

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
			 errhint("Call festival.close('%s') in that session, or wait for it to end.",
					 name)));
}

/* Take the session-level lock of an open handle. */
static void
handle_lock(OpenIndex *ix)
{
	set_locktag(&ix->locktag, ix->cat.index_id);
	if (LockAcquire(&ix->locktag, ExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		lock_conflict(&ix->locktag, ix->name);
	ix->lock_held = true;
}

/*
 * Lock an index that this session has not opened, until the end of the
 * transaction (drop_index uses it so no other session can open the index
 * before the drop commits).
 */
void
index_acquire_lock_only(int64 index_id, const char *name, LOCKTAG *tag)
{
	set_locktag(tag, index_id);
	if (LockAcquire(tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		lock_conflict(tag, name);
}

void
index_release_lock(LOCKTAG *tag)
{
	LockRelease(tag, ExclusiveLock, false);
}

static void
copy_catalog(IndexCatalog *dst, const IndexCatalog *src)
{
	*dst = *src;
	dst->name = pstrdup(src->name);
	dst->structure = pstrdup(src->structure);
	dst->options = palloc(VARSIZE(src->options));
	memcpy(dst->options, src->options, VARSIZE(src->options));
	dst->id_column = src->id_column ? pstrdup(src->id_column) : NULL;
	dst->geom_column = src->geom_column ? pstrdup(src->geom_column) : NULL;
	dst->file_name = pstrdup(src->file_name);
	dst->device.name = pstrdup(src->device.name);
	dst->device.directory = pstrdup(src->device.directory);
	dst->device.profile = src->device.profile ? pstrdup(src->device.profile) : NULL;
}

/* Parse the configuration and set up the structure (in ix->cxt). */
static void
handle_configure(OpenIndex *ix, const StructureOps *structure)
{
	const OptionSpec *groups[8];

	ix->structure = structure;
	structure_option_groups(structure, groups, lengthof(groups));
	ix->config = options_parse(ix->cat.options, groups, structure->name);
	ix->sidx.state = structure->setup(ix->config,
									  (uint32) config_int(ix->config, "page_size"));
	ix->sidx.config = ix->config;
	ix->sidx.name = ix->name;
	ix->sidx.stats = &ix->op_stats;
}

static char *
handle_file_path(OpenIndex *ix, bool create)
{
	char	   *data_dir = device_data_directory(fest_data_directory_setting, create);
	char	   *dir = device_resolve_directory(data_dir, ix->cat.device.directory, create);

	return device_file_path(dir, ix->cat.file_name);
}

/* Open an index of this database that this session has not opened yet. */
static OpenIndex *
index_open(const char *name)
{
	IndexCatalog *cat = catalog_load_index(name, false);
	OpenIndex  *ix = handle_create(name);
	MemoryContext old = MemoryContextSwitchTo(ix->cxt);
	uint32		page_size;

	copy_catalog(&ix->cat, cat);
	handle_lock(ix);
	handle_configure(ix, structure_lookup(ix->cat.structure));
	page_size = (uint32) config_int(ix->config, "page_size");

	ix->path = handle_file_path(ix, false);
	if (!device_file_exists(ix->path))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("file \"%s\" of index \"%s\" is missing", ix->path, name),
				 errhint("Drop the index with festival.drop_index('%s') and create it again.",
						 name)));
	ix->io = device_file_open(&ix->cat.device, ix->path, page_size, false,
							  &ix->op_stats);
	fest_meta_read(ix->io, name, &ix->meta);
	if (strcmp(ix->meta.structure, ix->cat.structure) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("file of index \"%s\" holds a \"%s\" index, but the catalog says \"%s\"",
						name, ix->meta.structure, ix->cat.structure)));

	ix->ns = direct_store_create(ix->io, &ix->meta, ix->structure->node_ops,
								 ix->name, &ix->op_stats);
	ix->sidx.ns = ix->ns;

	if ((ix->meta.flags & FEST_META_CLEAN) == 0)
	{
		if (take_consistent_mark(name))
			ix->ns->suspect = false;
		else
		{
			ix->meta.flags &= ~FEST_META_ENTRIES_VALID;
			ereport(WARNING,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("index \"%s\" was not closed cleanly", name),
					 errdetail("The session that last changed it ended without festival.close() or festival.flush(); pages written since then may be incomplete."),
					 errhint("Run festival.check('%s') to verify it; festival.build('%s') rebuilds it from its source.",
							 name, name)));
		}
	}

	MemoryContextSwitchTo(old);
	return ix;
}

void
index_check_owner(OpenIndex *ix)
{
	if (!superuser() && !has_privs_of_role(GetUserId(), ix->cat.owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of index \"%s\" to change it", ix->name)));
}

/*
 * Start an operation on the named index, opening it if needed.  Modifying
 * operations require ownership.
 */
OpenIndex *
index_begin_op(const char *name, bool modifying)
{
	OpenIndex  *ix = index_lookup_open(name);

	if (ix != NULL && ix->busy)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("index \"%s\" is already in use by an operation of this session",
						name),
				 errhint("Operations on one index cannot be nested (for example from a trigger of its source table).")));
	if (ix == NULL)
		ix = index_open(name);
	else
		ix->busy = true;
	if (modifying)
		index_check_owner(ix);

	fest_stats_reset(&ix->op_stats);
	ix->op_start_ns = fest_now_ns();
	ix->op_start_cpu_ns = fest_cpu_ns();
	return ix;
}

/* Make the modification made so far durable as the node store defines. */
void
index_commit(OpenIndex *ix)
{
	ix->committing = true;
	ns_commit(ix->ns);
	ix->committing = false;
}

/* Finish an operation: account its figures and free its memory. */
void
index_end_op(OpenIndex *ix)
{
	FestStats  *op = &ix->op_stats;

	op->index_ns += (fest_now_ns() - ix->op_start_ns) - op->refine_ns;
	op->index_cpu_ns += (fest_cpu_ns() - ix->op_start_cpu_ns) - op->refine_cpu_ns;
	fest_stats_add(&ix->totals, op);
	run_account(ix, op);
	MemoryContextReset(ix->op_cxt);
	ix->busy = false;
}

/*
 * Create the file of a new index (catalog row already inserted), write its
 * meta pages and empty tree, and keep it open.  The file is removed again
 * if the transaction aborts.
 */
OpenIndex *
index_create_file(IndexCatalog *cat, const StructureOps *structure,
				  FestConfig *config)
{
	OpenIndex  *ix = handle_create(cat->name);
	MemoryContext old = MemoryContextSwitchTo(ix->cxt);
	uint32		page_size = (uint32) config_int(config, "page_size");
	char	   *config_text;

	copy_catalog(&ix->cat, cat);
	handle_lock(ix);
	handle_configure(ix, structure);
	ix->path = handle_file_path(ix, true);

	ix->io = device_file_open(&ix->cat.device, ix->path, page_size, true,
							  &ix->op_stats);
	pending_unlink_on_abort(ix->path);

	config_text = JsonbToCString(NULL, &ix->cat.options->root,
								 VARSIZE(ix->cat.options));
	memset(&ix->meta, 0, sizeof(FestMeta));
	if (!pg_strong_random(&ix->meta.index_uid, sizeof(ix->meta.index_uid)))
		ix->meta.index_uid = (uint64) GetCurrentTimestamp();
	strlcpy(ix->meta.structure, structure->name, sizeof(ix->meta.structure));
	ix->meta.page_size = page_size;
	ix->meta.flags = FEST_META_CLEAN | FEST_META_ALL_POINTS | FEST_META_ENTRIES_VALID;
	ix->meta.page_count = FEST_FIRST_DATA_PAGE;
	ix->meta.created_at = GetCurrentTimestamp();
	ix->meta.config = config_text;

	/* both slots valid from the start */
	fest_meta_write(ix->io, &ix->meta);
	fest_meta_write(ix->io, &ix->meta);

	ix->ns = direct_store_create(ix->io, &ix->meta, structure->node_ops,
								 ix->name, &ix->op_stats);
	ix->sidx.ns = ix->ns;

	fest_stats_reset(&ix->op_stats);
	ix->op_start_ns = fest_now_ns();
	ix->op_start_cpu_ns = fest_cpu_ns();
	structure->init_empty(&ix->sidx);
	index_commit(ix);
	ix->committing = true;
	ns_flush(ix->ns);
	ix->committing = false;

	MemoryContextSwitchTo(old);
	index_end_op(ix);
	return ix;
}

/* Empty the file and start a new tree; build's first step. */
void
index_reset_for_build(OpenIndex *ix)
{
	MemoryContext old = MemoryContextSwitchTo(ix->op_cxt);

	ix->committing = true;
	ix->ns->ops->reset(ix->ns);
	ix->meta.flags |= FEST_META_ALL_POINTS;
	ix->meta.flags &= ~FEST_META_HAS_SRID;
	ix->meta.srid = 0;
	ix->structure->init_empty(&ix->sidx);
	ns_commit(ix->ns);
	ix->committing = false;
	MemoryContextSwitchTo(old);
}

/* Write everything, mark the file clean and forget the handle. */
void
index_close(OpenIndex *ix)
{
	ix->busy = true;
	fest_stats_reset(&ix->op_stats);
	ix->op_start_ns = fest_now_ns();
	ix->op_start_cpu_ns = fest_cpu_ns();
	ix->committing = true;
	ns_flush(ix->ns);
	ix->committing = false;
	index_end_op(ix);
	handle_discard(ix, false);
}

/*
 * Forget an open index without writing anything (drop_index: the file is
 * about to go away).
 */
void
index_forget(OpenIndex *ix)
{
	if (ix->busy)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("index \"%s\" is in use by an operation of this session", ix->name)));
	handle_discard(ix, false);
}

/* Discard every handle an ERROR left busy. */
static void
discard_busy_indices(void)
{
	HASH_SEQ_STATUS status;
	OpenIndexEntry *entry;
	List	   *victims = NIL;
	ListCell   *lc;

	if (open_indices == NULL)
		return;
	hash_seq_init(&status, open_indices);
	while ((entry = hash_seq_search(&status)) != NULL)
		if (entry->ix->busy)
			victims = lappend(victims, entry->ix);
	foreach(lc, victims)
	{
		OpenIndex  *ix = (OpenIndex *) lfirst(lc);

		handle_discard(ix, !ix->committing);
	}
	list_free(victims);
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

/* Close any open handle on this file before it disappears. */
static void
discard_handles_on(const char *path)
{
	HASH_SEQ_STATUS status;
	OpenIndexEntry *entry;
	OpenIndex  *victim = NULL;

	if (open_indices == NULL)
		return;
	hash_seq_init(&status, open_indices);
	while ((entry = hash_seq_search(&status)) != NULL)
		if (entry->ix->path && strcmp(entry->ix->path, path) == 0)
			victim = entry->ix;
	if (victim != NULL)
		handle_discard(victim, false);
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
			discard_busy_indices();
			settle_pending(1, false, false);
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			settle_pending(1, true, false);
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
			discard_busy_indices();
			settle_pending(level, false, true);
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			settle_pending(level, true, true);
			break;
		default:
			break;
	}
}

/* Flush an index, logging instead of raising any error. */
static void
flush_quietly(OpenIndex *ix)
{
	PG_TRY();
	{
		ns_flush(ix->ns);
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
 * middle of an operation, so an index survives its session without an
 * explicit close.  Errors are reported to the log and do not stop the exit.
 */
static void
fest_session_exit(int code, Datum arg)
{
	HASH_SEQ_STATUS status;
	OpenIndexEntry *entry;
	List	   *all = NIL;
	ListCell   *lc;

	if (open_indices == NULL)
		return;
	hash_seq_init(&status, open_indices);
	while ((entry = hash_seq_search(&status)) != NULL)
		all = lappend(all, entry->ix);

	foreach(lc, all)
	{
		OpenIndex  *ix = (OpenIndex *) lfirst(lc);

		if (!ix->busy && ix->ns != NULL)
			flush_quietly(ix);
		handle_discard(ix, false);
	}
}

void
handle_register_callbacks(void)
{
	RegisterXactCallback(fest_xact_callback, NULL);
	RegisterSubXactCallback(fest_subxact_callback, NULL);
	before_shmem_exit(fest_session_exit, (Datum) 0);
}
