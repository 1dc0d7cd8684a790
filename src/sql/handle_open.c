/*-------------------------------------------------------------------------
 *
 * handle_open.c
 *	  Opening and creating an index: the catalog, the options, the file, the store.
 *
 * An open reads the catalog row, takes the lock, parses the options, opens
 * the page I/O chain (handle_chain.c) and the meta page, makes the node
 * store, and decides what an unclean file means (settle_unclean_open).  A
 * creation writes the meta pages and the empty tree instead.
 *
 * IDENTIFICATION
 *	  src/sql/handle_open.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle_internal.h"
#include "sql/ownership.h"
#include "sql/xact.h"

#include "nodestore/framework.h"
#include "log/log.h"
#include "tier/tier.h"

#include "commands/dbcommands.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

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
	return opts->framework_memory + cache_memory_bytes(&opts->cache) +
		tier_buffer_memory_bytes(&opts->tier, opts->page_size);
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
				 errhint("Give smaller buffer_size, cache_size or write_buffer_pages options, or ask a superuser to raise festival.max_index_memory.")));
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
	ix->sidx.stats = &ix->op.stats;
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
	NodeStoreArgs args = {
		.io = ix->io,
		.meta = &ix->meta,
		.node_ops = ix->structure->node_ops,
		.index_name = ix->name,
		.stats = &ix->op.stats,
		.config = ix->config,
		.log_path = fw->uses_log || device_has(&ix->cat.device, DEVICE_CAP_PERSISTENT)
		? log_path_for(ix->path) : NULL,
		.create = create
	};

	OPTIONS_ASSERT_FILLED(&ix->opts);
	ix->ns = fw->create(&args);
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
	ownership_self(&ix->meta.owner);

	/* one paired write: both slots valid from the start */
	fest_meta_write(ix->io, &ix->meta);

	open_store(ix, true);
	pending_unlink_on_abort(log_path_for(ix->path));

	ix->open_complete = true;
	handle_start_op(ix, true);
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
	ix->io = handle_open_chain(ix, page_size, true);
	init_new_index(ix, page_size);
	ix_end_op(ix);
}

/*
 * What an open decides about an index whose file is not marked clean
 * (its last writer did not finish): a store with a log has replayed it,
 * and nothing acknowledged is lost; a reload after an ERROR knows whether
 * the failed operation left the file consistent or damaged; a structure
 * that keeps its own log may restore itself (StructureOps.recover);
 * otherwise the index opens suspect, with a warning, until check() finds
 * it sound or build() rewrites it.
 */
static void
settle_unclean_open(OpenIndex *ix, const ReloadInfo *reload)
{
	if (ix->ns->has_log)
	{
		/* the store replayed its log: nothing acknowledged is lost */
		if (ix->ns->recovered > 0 && reload == NULL)
			ereport(NOTICE,
					(errmsg("index \"%s\" was not closed cleanly; its log restored " UINT64_FORMAT " modifications",
							ix->name, ix->ns->recovered)));
		return;
	}
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
				 errmsg("index \"%s\" may be damaged: an operation failed while overwriting its pages", ix->name),
				 errdetail("Until a build rewrites it, the index refuses changes."),
				 errhint("Run festival.check('%s'); festival.build('%s') rebuilds it.",
						 ix->name, ix->name)));
	}
	else if (structure_recovers(ix))
	{
		/* the structure restored itself from pages it never overwrites */
		ereport(NOTICE,
				(errmsg("index \"%s\" was not closed cleanly; its structure restored it from its log pages (" UINT64_FORMAT " entries)",
						ix->name, ix->meta.entry_count)));
	}
	else
	{
		bool		buffering = ix->opts.framework->uses_log;

		ix->meta.flags &= ~FEST_META_ENTRIES_VALID;
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" was not closed cleanly", ix->name),
				 buffering
				 ? errdetail("Its framework buffers changes in memory and its log is disabled (log_size 0): changes made since its last flush are lost, and pages written since then may be incomplete.")
				 : errdetail("The session that last changed it ended without festival.close() or festival.flush(); pages written since then may be incomplete."),
				 errhint("Run festival.check('%s') to verify it; festival.build('%s') rebuilds it from its source.",
						 ix->name, ix->name)));
	}
}

/*
 * Open an index of this database that this session has not opened yet (or
 * must reload after an ERROR, described by reload).
 */
OpenIndex *
handle_open_index(const char *name, const ReloadInfo *reload, DeviceState *kept)
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
	ix->io = handle_open_chain(ix, page_size, false);
	fest_meta_read(ix->io, name, &ix->meta);
	/* before anything is written: another database's file is refused */
	if (device_has(&ix->cat.device, DEVICE_CAP_FILE))
		ownership_settle_open(name, ix->path, ix->cat.file_name, &ix->meta, ix->io);
	fest_meta_warn_damaged(&ix->meta, name);
	if (strcmp(ix->meta.structure, ix->cat.structure) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("file of index \"%s\" holds a \"%s\" index, but the catalog says \"%s\"",
						name, ix->meta.structure, ix->cat.structure),
				 errhint("The file belongs to another index; drop this one with festival.drop_index('%s') and create it again.", name)));

	open_store(ix, false);

	if ((ix->meta.flags & FEST_META_CLEAN) == 0)
		settle_unclean_open(ix, reload);

	ix->open_complete = true;
	MemoryContextSwitchTo(old);
	return ix;
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
			tier_map_path(ix->path), tier_weights_path(ix->path)};
		FestFileOwner self;
		FileOwnerInfo info;

		/*
		 * Unless its recorded owner is another cluster's database (one
		 * sharing the device directory) or a live database of another OID:
		 * those files are not this database's to remove.
		 */
		ownership_self(&self);
		ownership_inspect(ix->path, ix->cat.file_name, &info);
		if (info.readable && fest_owner_is_set(&info.owner) &&
			!fest_owner_same_database(&info.owner, &self) &&
			(info.owner.system_id != self.system_id ||
			 (info.owner.database_oid != self.database_oid &&
			  get_database_name(info.owner.database_oid) != NULL)))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_FILE),
					 errmsg("index file \"%s\" already exists and belongs to %s",
							ix->path, ownership_describe(&info, &self)),
					 errhint("Choose another index name or device.")));

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
	ix->io = handle_open_chain(ix, page_size, true);
	if (device_has(&ix->cat.device, DEVICE_CAP_FILE))
		pending_unlink_on_abort(ix->path);

	init_new_index(ix, page_size);

	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	return ix;
}
