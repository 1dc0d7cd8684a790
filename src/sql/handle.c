/*-------------------------------------------------------------------------
 *
 * handle.c
 *	  Opening, locking, operating on and discarding indices.
 *
 * The registry of open indices is the one piece of per-backend state
 * outside an index or a run; it maps names to OpenIndex handles, each with
 * its own memory context.  The transaction callbacks (xact.c) mark the
 * handles of operations an ERROR interrupted; the next use reloads them.
 *
 * IDENTIFICATION
 *	  src/sql/handle.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/xact.h"
#include "sql/run.h"
#include "sql/args.h"

#include "buffer/cache.h"
#include "buffer/tracing.h"
#include "flash/framework.h"
#include "log/log.h"
#include "tier/tier.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port.h"
#include "storage/ipc.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* The fourth advisory-lock field festival uses, distinct from SQL's 1 and 2. */
#define FEST_ADVISORY_FIELD4 0x4653

char	   *fest_data_directory_setting = NULL;
int			fest_max_index_memory_kb = 1024 * 1024;
int			fest_progress_interval = 10;
bool		fest_track_io_cpu = false;
bool		fest_track_cpu_time = false;
int			fest_build_commit_rows = 0;
int			fest_knn_batch = 64;
bool		fest_generic_query_batch = false;
int			fest_knn_speculative = 0;

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
				 errmsg("%s name must have 1 to %d characters", what, FEST_NAME_MAXLEN),
				 errhint("Names become file names: use 1 to %d ASCII letters, digits and underscores.", FEST_NAME_MAXLEN)));
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) name[i];

		/* ASCII only: no locale's isalpha() (a call per character, per call) */
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (i > 0 && c >= '0' && c <= '9')))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("invalid %s name \"%s\"", what, name),
					 errhint("Use ASCII letters, digits and underscores, starting with a letter or underscore.")));
	}
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
	ix->busy = true;			/* an ERROR while opening marks it failed */
	ix->op_nest_level = GetCurrentTransactionNestLevel();
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
		ix->io->ops->close(ix->io);
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

		if (!ix->keep_open && !ix->busy)
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
static void
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

/*
 * The memory one open index may hold by its options: the framework's
 * buffers (eFIND's read buffer is part of buffer_size) and the page cache.
 * Node copies of one operation and the redo log's file are not counted.
 */
static int64
index_memory_bytes(const IndexOptions *opts)
{
	OPTIONS_ASSERT_FILLED(opts);
	return opts->framework_memory + cache_memory_bytes(&opts->cache);
}

/*
 * The options' limits (1 GiB of buffer, 8 GiB of cache) only bound what a
 * value can be; festival.max_index_memory, which only a superuser sets,
 * says what this server grants one index.  Checked when an index is
 * created and whenever it is opened, since the setting may have changed.
 */
static void
check_memory_ceiling(const char *name, const IndexOptions *opts)
{
	int64		bytes = index_memory_bytes(opts);
	int64		ceiling = (int64) fest_max_index_memory_kb * 1024;

	if (bytes > ceiling)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" needs " INT64_FORMAT " bytes of memory for its buffers and cache, more than festival.max_index_memory allows (" INT64_FORMAT " bytes)",
						name, bytes, ceiling),
				 errhint("Give smaller buffer_size or cache_size options, or ask a superuser to raise festival.max_index_memory.")));
}

/* Parse the configuration and set up the structure (in ix->cxt). */
static void
handle_configure(OpenIndex *ix, const StructureOps *structure)
{
	ix->structure = structure;
	ix->sidx.ops = structure;
	ix->config = index_options_parse(structure, ix->cat.options, &ix->opts,
									 &ix->sidx.state);
	check_memory_ceiling(ix->name, &ix->opts);
	ix->sidx.config = ix->config;
	ix->sidx.name = ix->name;
	ix->sidx.stats = &ix->op_stats;
}

/* The node store of the index's framework, over its open file. */
static void
open_store(OpenIndex *ix, bool create)
{
	const FrameworkDef *fw = ix->opts.framework;
	/*
	 * The write-through store's journal keeps changes across the death of
	 * the process; a memory device's pages do not outlive it anyway, so it
	 * gets none (the store journals only when given a path).
	 */
	const char *log_path = fw->uses_log ||
		device_has(&ix->cat.device, DEVICE_CAP_PERSISTENT)
		? log_path_for(ix->path) : NULL;

	OPTIONS_ASSERT_FILLED(&ix->opts);
	ix->ns = fw->create(ix->io, &ix->meta, ix->structure->node_ops, ix->name,
						&ix->op_stats, ix->config, log_path, create);
	ix->sidx.ns = ix->ns;
}

/*
 * After an unclean shutdown, let a structure that keeps its own log
 * (StructureOps.recover: LB-Grid) restore the index; true when it did, the
 * index then being trusted again.
 */
static bool
structure_recovers(OpenIndex *ix)
{
	if (ix->structure->recover == NULL || ix->ns->has_log)
		return false;
	ix->ns->modifying_op = true;
	if (!ix->structure->recover(&ix->sidx))
		return false;
	ix->ns->suspect = false;
	return true;
}

static char *
handle_file_path(OpenIndex *ix, bool create)
{
	char	   *data_dir = device_data_directory(fest_data_directory_setting, create);
	char	   *dir = device_resolve_directory(data_dir, ix->cat.device.directory, create);

	return device_file_path(dir, ix->cat.file_name);
}

/*
 * The storage state of a newly opened index: a fresh simulated drive if
 * its device has a profile, and no memory pages yet.
 */
static DeviceState *
handle_device_state(OpenIndex *ix)
{
	DeviceProfile *profile = NULL;

	if (ix->cat.device.profile != NULL)
		profile = catalog_load_profile(ix->cat.device.profile);
	return device_state_create(ix->cxt, profile);
}

static void start_op(OpenIndex *ix, bool modifying);

/* The tier map of the index whose file is index_path. */
char *
ix_tier_map_path(const char *index_path)
{
	return psprintf("%s.tiermap", index_path);
}

/* The hot-page weights of the index whose file is index_path. */
char *
ix_tier_weights_path(const char *index_path)
{
	return psprintf("%s.tierhot", index_path);
}

/*
 * The file of an index on its fast device (options.fast_device), or NULL
 * when it has none.  Unknown devices raise the catalog's error.
 */
char *
ix_tier_fast_path(const IndexCatalog *cat, bool create)
{
	JsonbValue	key;
	JsonbValue *v;
	DeviceSpec *fast;
	char	   *data_dir;

	key.type = jbvString;
	key.val.string.val = "fast_device";
	key.val.string.len = strlen("fast_device");
	v = findJsonbValueFromContainer(&cat->options->root, JB_FOBJECT, &key);
	if (v == NULL || v->type != jbvString)
		return NULL;
	fast = catalog_load_device(pnstrdup(v->val.string.val, v->val.string.len));
	data_dir = device_data_directory(fest_data_directory_setting, create);
	return device_file_path(device_resolve_directory(data_dir, fast->directory, create),
							cat->file_name);
}

/*
 * The fast device's chain and the tier router over both (tier/tier.h).
 * Both devices must keep files: the map beside the index file names pages
 * that must outlive the session.
 */
static PageIO *
open_tiers(OpenIndex *ix, const TierOptions *topt, PageIO *slow,
		   uint32 page_size, bool create)
{
	DeviceSpec *fast = catalog_load_device(topt->fast_device);
	DeviceProfile *profile = NULL;
	char	   *fast_path;
	char	   *map_path = ix_tier_map_path(ix->path);
	char	   *weights_path = ix_tier_weights_path(ix->path);
	PageIO	   *fast_io;

	if (strcmp(fast->name, ix->cat.device.name) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fast_device \"%s\" is the index's own device", fast->name),
				 errhint("Name a second device for the fast tier (festival.create_device), or omit fast_device.")));
	if (!device_has(fast, DEVICE_CAP_FILE) || !device_has(&ix->cat.device, DEVICE_CAP_FILE))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a tiered index needs two file devices, but \"%s\" or \"%s\" keeps no files",
						ix->cat.device.name, fast->name),
				 errhint("Create both devices with kind 'file'; a profile (e.g. 'optane_memory_32gb') gives each its speed.")));
	if (fast->profile != NULL)
		profile = catalog_load_profile(fast->profile);
	ix->fast_devstate = device_state_create(ix->cxt, profile);
	fast_path = ix_tier_fast_path(&ix->cat, create);
	if (create)
	{
		/* leftovers of an earlier index of this name (see ix_create_file) */
		device_file_unlink(fast_path);
		device_file_unlink(map_path);
		device_file_unlink(weights_path);
		pending_unlink_on_abort(fast_path);
		pending_unlink_on_abort(map_path);
		pending_unlink_on_abort(weights_path);
	}
	else if (!device_file_exists(fast_path))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("file \"%s\" of index \"%s\" on its fast device is missing",
						fast_path, ix->name),
				 errhint("Drop the index with festival.drop_index('%s') and create it again.",
						 ix->name)));
	fast_io = device_open(fast, ix->fast_devstate, fast_path, page_size, create,
						  &ix->op_stats);
	ix->tier = tier_open(topt, ix->name, slow, fast_io, map_path, weights_path,
						 create);
	return tier_router(ix->tier);
}

/*
 * The page I/O chain of an index, bottom to top: the device, the fault
 * layer and the simulated drive (device_open stacks those over the device,
 * with the index's DeviceState), then tracing, then the cache.  The one
 * place the chain is assembled.  With a fast device, each device gets its
 * own chain, the tier router joins them below tracing and the tier
 * observer sits on the cache (tier/tier.h).
 */
static PageIO *
open_page_chain(OpenIndex *ix, uint32 page_size, bool create)
{
	PageIO	   *device = device_open(&ix->cat.device, ix->devstate, ix->path,
									 page_size, create, &ix->op_stats);
	ix->tier = NULL;
	OPTIONS_ASSERT_FILLED(&ix->opts.tier);
	if (ix->opts.tier.enabled)
		device = open_tiers(ix, &ix->opts.tier, device, page_size, create);
	ix->tracing = tracing_pageio_wrap(device, ix->name, run_current_trace());
	if (ix->tier != NULL)
		tracing_set_tiers(ix->tracing, ix->tier);
	if (ix->tier != NULL)
		return tier_observer_wrap(ix->tier, cache_wrap(ix->tracing, &ix->opts.cache));
	return cache_wrap(ix->tracing, &ix->opts.cache);
}

/*
 * Write the meta pages and the empty tree of a new index on its open
 * storage, as one committed and flushed operation; the caller ends it.
 */
static void
init_new_index(OpenIndex *ix, uint32 page_size)
{
	char	   *config_text = JsonbToCString(NULL, &ix->cat.options->root,
											 VARSIZE(ix->cat.options));

	memset(&ix->meta, 0, sizeof(FestMeta));
	if (!pg_strong_random(&ix->meta.index_uid, sizeof(ix->meta.index_uid)))
		ix->meta.index_uid = (uint64) GetCurrentTimestamp();
	strlcpy(ix->meta.structure, ix->structure->name, sizeof(ix->meta.structure));
	ix->meta.page_size = page_size;
	ix->meta.flags = FEST_META_CLEAN | FEST_META_ALL_POINTS | FEST_META_ENTRIES_VALID;
	ix->meta.page_count = FEST_FIRST_DATA_PAGE;
	ix->meta.created_at = GetCurrentTimestamp();
	ix->meta.config = config_text;

	/* one paired write: both slots valid from the start */
	fest_meta_write(ix->io, &ix->meta);

	open_store(ix, true);
	pending_unlink_on_abort(log_path_for(ix->path));

	ix->open_complete = true;
	start_op(ix, true);
	ix->structure->init_empty(&ix->sidx);
	ix_commit(ix);
	ix_flush(ix);
}

/*
 * A memory device keeps pages only while the index is open in one
 * session.  Opened again (after festival.close() or in another session),
 * the index starts empty, says so, and stays usable: festival.build()
 * refills it.  A log left by a buffering framework describes pages that
 * are gone, so it is removed rather than replayed.
 */
static void
memory_index_lost(OpenIndex *ix, uint32 page_size)
{
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("index \"%s\" is on memory device \"%s\" and its pages are gone; it is empty now",
					ix->name, ix->cat.device.name),
			 errdetail("Pages of a memory device live only while the index is open in the session that wrote them; it was closed or that session ended."),
			 errhint("festival.build('%s') refills it from its source.", ix->name)));
	device_file_unlink(log_path_for(ix->path));
	ix->io = open_page_chain(ix, page_size, true);
	init_new_index(ix, page_size);
	ix_end_op(ix);
}

/* What a reload carries over from a handle an ERROR interrupted. */
typedef struct ReloadInfo
{
	bool		consistent;		/* the failed operation left the file as it was */
	bool		damaged;		/* it failed while overwriting committed pages */
	uint64		entry_count;	/* entries before the failed operation */
	bool		entries_valid;
} ReloadInfo;

/*
 * Open an index of this database that this session has not opened yet (or
 * must reload after an ERROR, described by reload).
 */
static OpenIndex *
index_open(const char *name, const ReloadInfo *reload, DeviceState *kept)
{
	IndexCatalog *cat = catalog_load_index(name, false);
	OpenIndex  *ix = handle_create(name);
	MemoryContext old = MemoryContextSwitchTo(ix->cxt);
	uint32		page_size;

	copy_catalog(&ix->cat, cat);
	handle_lock(ix);
	handle_configure(ix, structure_lookup(ix->cat.structure));
	page_size = (uint32) ix->opts.page_size;

	ix->path = handle_file_path(ix, false);
	if (kept != NULL)
	{
		/* the storage state of the handle this one replaces */
		MemoryContextSetParent(kept->cxt, ix->cxt);
		ix->devstate = kept;
	}
	else
		ix->devstate = handle_device_state(ix);

	if (!device_has(&ix->cat.device, DEVICE_CAP_PERSISTENT) &&
		!device_state_holds_pages(ix->devstate))
	{
		memory_index_lost(ix, page_size);
		MemoryContextSwitchTo(old);
		return ix;
	}
	if (device_has(&ix->cat.device, DEVICE_CAP_FILE) && !device_file_exists(ix->path))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("file \"%s\" of index \"%s\" is missing", ix->path, name),
				 errhint("Drop the index with festival.drop_index('%s') and create it again.",
						 name)));
	ix->io = open_page_chain(ix, page_size, false);
	fest_meta_read(ix->io, name, &ix->meta);
	fest_meta_warn_damaged(&ix->meta, name);
	if (strcmp(ix->meta.structure, ix->cat.structure) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("file of index \"%s\" holds a \"%s\" index, but the catalog says \"%s\"",
						name, ix->meta.structure, ix->cat.structure),
				 errhint("The file belongs to another index; drop this one with festival.drop_index('%s') and create it again.", name)));

	open_store(ix, false);

	if ((ix->meta.flags & FEST_META_CLEAN) == 0 && ix->ns->has_log)
	{
		/* the store replayed its log: nothing acknowledged is lost */
		if (ix->ns->recovered > 0 && reload == NULL)
			ereport(NOTICE,
					(errmsg("index \"%s\" was not closed cleanly; its log restored " UINT64_FORMAT " modifications",
							name, ix->ns->recovered)));
	}
	else if ((ix->meta.flags & FEST_META_CLEAN) == 0)
	{
		if (reload != NULL && reload->consistent)
		{
			/* this session left it so; the file is consistent */
			ix->ns->suspect = false;
			ix->meta.entry_count = reload->entry_count;
			if (reload->entries_valid)
				ix->meta.flags |= FEST_META_ENTRIES_VALID;
			else
				ix->meta.flags &= ~FEST_META_ENTRIES_VALID;
		}
		else if (reload != NULL && reload->damaged)
		{
			/*
			 * The store opened it suspect: it refuses changes until
			 * checked.  The entry count before the failed operation lets
			 * check() see entries a torn split lost (or duplicated).
			 */
			Assert(ix->ns->suspect);
			ix->meta.entry_count = reload->entry_count;
			if (reload->entries_valid)
				ix->meta.flags |= FEST_META_ENTRIES_VALID;
			else
				ix->meta.flags &= ~FEST_META_ENTRIES_VALID;
			/*
			 * Recorded on disk, so that no later session trusts it either:
			 * only build() clears the flag (check() reports it).
			 */
			ix->meta.flags |= FEST_META_DAMAGED;
			fest_meta_write(ix->io, &ix->meta);
			pageio_sync(ix->io);
			ereport(WARNING,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("index \"%s\" may be damaged: an operation failed while overwriting its pages", name),
					 errdetail("Until a build rewrites it, the index refuses changes."),
					 errhint("Run festival.check('%s'); festival.build('%s') rebuilds it.",
							 name, name)));
		}
		else if (structure_recovers(ix))
		{
			/* the structure restored itself from pages it never overwrites */
			ereport(NOTICE,
					(errmsg("index \"%s\" was not closed cleanly; its structure restored it from its log pages (" UINT64_FORMAT " entries)",
							name, ix->meta.entry_count)));
		}
		else
		{
			bool		buffering = ix->opts.framework->uses_log;

			ix->meta.flags &= ~FEST_META_ENTRIES_VALID;
			ereport(WARNING,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("index \"%s\" was not closed cleanly", name),
					 buffering
					 ? errdetail("Its framework buffers changes in memory and its log is disabled (log_size 0): changes made since its last flush are lost, and pages written since then may be incomplete.")
					 : errdetail("The session that last changed it ended without festival.close() or festival.flush(); pages written since then may be incomplete."),
					 errhint("Run festival.check('%s') to verify it; festival.build('%s') rebuilds it from its source.",
							 name, name)));
		}
	}

	ix->open_complete = true;
	MemoryContextSwitchTo(old);
	return ix;
}

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
	if (ix->busy)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("index \"%s\" is already in use by an operation of this session",
						ix->name),
				 errhint("Operations on one index cannot be nested (for example from a function its source view calls).")));
}

/*
 * Reopen a handle an ERROR interrupted: everything in memory is dropped
 * and the index is read again from disk.
 */
static OpenIndex *
reload(OpenIndex *ix)
{
	ReloadInfo	info;
	char		name[FEST_NAME_MAXLEN + 1];
	DeviceState *kept;

	info.consistent = ix->reload_consistent;
	info.damaged = ix->reload_damaged;
	info.entry_count = ix->committed_entry_count;	/* as of the last commit */
	info.entries_valid = ix->committed_entries_valid;
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
	return index_open(name, &info, kept);
}

static void
start_op(OpenIndex *ix, bool modifying)
{
	ix->busy = true;
	if (ix->ns != NULL)
		ix->ns->modifying_op = modifying;
	ix->op_nest_level = GetCurrentTransactionNestLevel();
	ix->committed_entry_count = ix->meta.entry_count;
	ix->committed_entries_valid = (ix->meta.flags & FEST_META_ENTRIES_VALID) != 0;
	/* op_stats is zero here, or holds what opening the index read */
	if (ix->io != NULL)
		ix->io->time_cpu = fest_track_io_cpu;
	/* the trace target travels down with the counters (never looked up) */
	if (ix->tracing != NULL)
		tracing_set_target(ix->tracing, run_current_trace());
	ix->op_start_ns = fest_now_ns();
	/*
	 * The thread's CPU clock is a system call (no vDSO): read only when
	 * asked, once at each end of the operation (and of its refinement).
	 */
	ix->op_track_cpu = fest_track_cpu_time;
	ix->op_start_cpu_ns = ix->op_track_cpu ? fest_cpu_ns() : 0;
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

			ix = reload(ix);
			ix->keep_open = keep_open;
		}
	}
	else
	{
		ix = index_open(name, NULL, NULL);
		check_access(ix, access);
	}
	start_op(ix, access == IX_MODIFY);
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
	 * journal (flash/direct.c).
	 */
	if (ix->ns != NULL && !ix->ns->op_touched && !ix->committing &&
		ix->op_stats.write_errors == 0)
	{
		ix->busy = false;
		ix->ns->ops->end_op(ix->ns);
		MemoryContextReset(ix->op_cxt);
		fest_stats_reset(&ix->op_stats);
		return;
	}
	ix->busy = false;
	ix->needs_reload = true;

	/*
	 * The file is as it was unless the failure came while a commit was
	 * overwriting committed pages (a write-through store writes new pages
	 * first and cuts them off again if that fails: direct_commit), or
	 * something lives only in memory: a buffering store without a log loses
	 * its buffer on the reload (with a log, the reload replays it, whatever
	 * the failed flush had written).
	 */
	ix->reload_damaged = ix->ns != NULL && ix->ns->overwriting && !ix->ns->has_log;
	ix->reload_consistent = ix->ns != NULL && !ix->ns->overwriting && !ix->ns->suspect &&
		!(ix->ns->buffers && !ix->ns->has_log);
	ix->committing = false;
	MemoryContextReset(ix->op_cxt);
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
	if (!ix->reload_consistent || ix->io == NULL || ix->ns == NULL ||
		ix->ns->buffers || ix->ns->has_log)
		return;
	fest_meta_read(ix->io, ix->name, &meta);
	if (meta.flags & FEST_META_CLEAN)
		return;
	pageio_sync(ix->io);
	meta.flags |= FEST_META_CLEAN;
	meta.entry_count = ix->committed_entry_count;
	if (ix->committed_entries_valid)
		meta.flags |= FEST_META_ENTRIES_VALID;
	else
		meta.flags &= ~FEST_META_ENTRIES_VALID;
	fest_meta_write(ix->io, &meta);
	pageio_sync(ix->io);
}

/* Make the modification made so far durable as the node store defines. */
void
ix_commit(OpenIndex *ix)
{
	ix->committing = true;
	ns_commit(ix->ns);
	ix->committing = false;
	/* what a reload after a later ERROR restores */
	ix->committed_entry_count = ix->meta.entry_count;
	ix->committed_entries_valid = (ix->meta.flags & FEST_META_ENTRIES_VALID) != 0;
}

/* Write everything buffered, sync, and mark the file clean. */
void
ix_flush(OpenIndex *ix)
{
	ix->committing = true;
	ns_flush(ix->ns);
	/* a clean store writes nothing, but migrations may be waiting to be made durable */
	if (ix->tier != NULL)
	{
		pageio_sync(ix->io);
		tier_mark_clean(ix->tier);
	}
	ix->committing = false;
}

/* Finish an operation: account its figures and free its memory. */
void
ix_end_op(OpenIndex *ix)
{
	FestStats  *op = &ix->op_stats;

	op->index_ns += (fest_now_ns() - ix->op_start_ns) - op->refine_ns;
	if (ix->op_track_cpu)
		op->index_cpu_ns += (fest_cpu_ns() - ix->op_start_cpu_ns) - op->refine_cpu_ns;
	/* into the index's totals and the run's, and zeroed, in one pass */
	fest_stats_drain(op, &ix->totals, run_account(ix));
	ix->ns->write_pages_singly = false;
	ix->ns->ops->end_op(ix->ns);
	MemoryContextReset(ix->op_cxt);
	ix->busy = false;
}

/*
 * Create the file of a new index (catalog row already inserted), write its
 * meta pages and empty tree, and keep it open.  The file is removed again
 * if the transaction aborts.
 */
OpenIndex *
ix_create_file(IndexCatalog *cat, const StructureOps *structure,
				  FestConfig *config)
{
	OpenIndex  *ix = handle_create(cat->name);
	MemoryContext old = MemoryContextSwitchTo(ix->cxt);
	uint32		page_size;

	copy_catalog(&ix->cat, cat);
	ix->keep_open = true;		/* its creator owns it */
	handle_lock(ix);
	handle_configure(ix, structure);
	page_size = (uint32) ix->opts.page_size;
	ix->path = handle_file_path(ix, true);

	if (pending_unlink_scheduled(ix->path))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("index \"%s\" was dropped in this transaction and its file is removed only at commit",
						cat->name),
				 errhint("Commit the drop before creating an index of the same name, or choose another name.")));

	ix->devstate = handle_device_state(ix);
	if (!device_has(&ix->cat.device, DEVICE_CAP_PERSISTENT))
	{
		ereport(NOTICE,
				(errmsg("index \"%s\" is on memory device \"%s\": its pages live in this session's memory and are lost when the index is closed or the session ends",
						cat->name, ix->cat.device.name)));
		/* a log of an earlier index of this name would describe lost pages */
		device_file_unlink(log_path_for(ix->path));
	}
	if (device_has(&ix->cat.device, DEVICE_CAP_FILE))
	{
		/*
		 * The file name carries this database's OID and the catalog row is
		 * already in place (any concurrent creator of the name waits on its
		 * unique key), so an existing file is a leftover of this database:
		 * an index dropped with DROP EXTENSION or a crashed creation.
		 */
		const char *files[] = {ix->path, log_path_for(ix->path),
			ix_tier_map_path(ix->path), ix_tier_weights_path(ix->path)};

		/* the files beside it too: a map or weights must not outlive their index */
		for (int i = 0; i < lengthof(files); i++)
			if (device_file_exists(files[i]))
			{
				ereport(NOTICE,
						(errmsg("removing leftover file \"%s\" of an earlier index \"%s\"",
								files[i], cat->name)));
				device_file_unlink(files[i]);
			}
	}
	ix->io = open_page_chain(ix, page_size, true);
	if (device_has(&ix->cat.device, DEVICE_CAP_FILE))
		pending_unlink_on_abort(ix->path);

	init_new_index(ix, page_size);

	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	return ix;
}

/* Empty the file and start a new tree; build's first step. */
void
ix_reset_for_build(OpenIndex *ix)
{
	MemoryContext old = MemoryContextSwitchTo(ix->op_cxt);

	ix->committing = true;
	/*
	 * Emptying the file destroys the committed tree: until the empty tree
	 * is committed, a failure leaves a damaged file (a log replays it).
	 */
	ix->ns->overwriting = !ix->ns->has_log;
	/*
	 * Until build() finishes, the index holds part of its source: set
	 * before the reset, which a journaled write-through store makes
	 * durable together with the empty file (flash/direct.c).
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
		ix = reload(ix);
	start_op(ix, true);
	ix_flush(ix);
	ix_end_op(ix);
	ix_discard(ix);
}
