/*-------------------------------------------------------------------------
 *
 * api_index.c
 *	  Index lifetime: create_index, build, flush, close, drop_index.
 *
 * Index files live outside PostgreSQL's transactions, like sequences: a
 * ROLLBACK does not undo inserts into an index.  The catalog rows are
 * transactional, and the file operations follow them: the file of an index
 * created in an aborted transaction is removed, and drop_index removes the
 * file only when its transaction commits.
 *
 * IDENTIFICATION
 *	  src/sql/api_index.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/ownership.h"
#include "sql/xact.h"
#include "sql/args.h"
#include "sql/geomarg.h"
#include "sql/source.h"
#include "sql/progress.h"

#include "log/log.h"
#include "tier/tier.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(festival_create_index);
PG_FUNCTION_INFO_V1(festival_drop_index);
PG_FUNCTION_INFO_V1(festival_build);
PG_FUNCTION_INFO_V1(festival_flush);
PG_FUNCTION_INFO_V1(festival_close);

/*
 * An 'insert' build of a write-through index holds at least this many
 * page images per batch whatever maintenance_work_mem says (its minimum,
 * 1 MB, is 256 pages of 4 kB): a batch that holds a root-to-leaf path
 * and a split's pages.
 */
#define BUILD_MIN_HELD_PAGES 64

/* Does the user's options object give a non-null value for key? */
static bool
user_gives(Jsonb *user, const char *key)
{
	JsonbValue *found = options_user_value(user, key);

	return found != NULL && found->type != jbvNull;
}

/*
 * A structure that covers a fixed space (Hilbert curve, quadtree) takes
 * the source's extent unless the user gives one: the options are
 * completed with it, so the stored configuration says what was used.
 */
static Jsonb *
options_with_source_extent(const StructureOps *structure, Jsonb *user,
						   Oid source, const char *geom_column)
{
	double		box[4];
	Jsonb	   *extent;

	if (!OidIsValid(source))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("structure \"%s\" needs the extent of the space it indexes", structure->name),
				 errdetail("Without a source table there is no data to take it from."),
				 errhint("Give options => '{\"extent\": [xmin, ymin, xmax, ymax]}', or a source table.")));
	if (!source_extent(source, geom_column, box))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("structure \"%s\" needs the extent of the space it indexes", structure->name),
				 errdetail("The source table has no geometry to take it from."),
				 errhint("Give options => '{\"extent\": [xmin, ymin, xmax, ymax]}', or fill the source first.")));
	extent = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(
		psprintf("{\"extent\": [%.17g, %.17g, %.17g, %.17g]}", box[0], box[1], box[2], box[3]))));
	if (user == NULL)
		return extent;
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(user),
											  JsonbPGetDatum(extent)));
}

/*
 * festival.create_index(name, structure, device, options, source,
 *						 id_column, geom_column) RETURNS bigint
 */
Datum
festival_create_index(PG_FUNCTION_ARGS)
{
	IndexCatalog cat;
	const StructureOps *structure;
	FestConfig *config;
	IndexOptions opts;
	void	   *state;
	DeviceSpec *device;
	Jsonb	   *user_options;

	memset(&cat, 0, sizeof(cat));
	cat.name = fest_name_arg(fcinfo, 0, "index");
	structure = structure_lookup(fest_text_arg(fcinfo, 1, "structure"));
	device = catalog_load_device(fest_text_arg(fcinfo, 2, "device name"));
	/* like every other argument, NULL is no default (source is the exception: none) */
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("options must not be NULL"),
				 errhint("Use '{}' for the defaults.")));
	user_options = PG_GETARG_JSONB_P(3);

	if (structure->needs_extent && !user_gives(user_options, "extent"))
	{
		Oid			source = PG_ARGISNULL(4) ? InvalidOid : PG_GETARG_OID(4);
		char	   *geom_column = fest_sqlname_arg(fcinfo, 6, "geom_column");

		if (OidIsValid(source))
			source_validate(source, fest_sqlname_arg(fcinfo, 5, "id_column"), geom_column);
		user_options = options_with_source_extent(structure, user_options, source,
												  geom_column);
	}

	config = index_options_parse(structure, user_options, &opts, &state);
	tier_refuse_unused_options(user_options, &opts.tier);

	if (catalog_index_exists(cat.name))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("index \"%s\" already exists", cat.name),
				 errhint("Choose another name, or drop it first with festival.drop_index('%s').",
						 cat.name)));

	cat.source = PG_ARGISNULL(4) ? InvalidOid : PG_GETARG_OID(4);
	cat.id_column = fest_sqlname_arg(fcinfo, 5, "id_column");
	cat.geom_column = fest_sqlname_arg(fcinfo, 6, "geom_column");
	if (OidIsValid(cat.source))
		source_validate(cat.source, cat.id_column, cat.geom_column);

	cat.structure = (char *) structure->name;
	cat.owner = GetUserId();
	cat.options = options_to_jsonb(config);
	cat.device = *device;
	/* the database's OID keeps databases sharing a device apart */
	cat.file_name = psprintf("db%u_%s.festival", MyDatabaseId, cat.name);
	cat.index_id = catalog_insert_index(&cat);

	(void) ix_create_file(&cat, structure, config);
	PG_RETURN_INT64(cat.index_id);
}

/*
 * The file of an index being dropped, or NULL (with a WARNING) when it
 * cannot be located safely inside festival.data_directory: a drop never
 * removes anything outside it.
 */
static char *
dropped_index_file(const IndexCatalog *cat)
{
	char	   *problem;
	int			code;
	char	   *data_dir = device_data_directory(fest_data_directory_setting, false);
	char	   *dir = device_locate_directory(data_dir, cat->device.directory, false,
											  &problem, &code);

	if (dir == NULL)
	{
		ereport(WARNING,
				(errmsg("file of index \"%s\" will not be removed: device directory \"%s\" %s",
						cat->name, cat->device.directory, problem)));
		return NULL;
	}
	return device_file_path(dir, cat->file_name);
}

/*
 * festival.drop_index(name): remove the catalog row, and the file when the
 * transaction commits.  No other session may have the index open.  Returns
 * whether files are removed: false when another database owns them (left in
 * place) or the index has none (a memory device).
 */
Datum
festival_drop_index(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	IndexCatalog *cat = catalog_load_index(name, false);
	OpenIndex  *ix = ix_lookup_open(name);
	LOCKTAG		tag;
	char	   *path;

	if (!superuser() && !has_privs_of_role(GetUserId(), cat->owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of index \"%s\" to drop it", name),
				 errhint("Ask its owner (festival.index.owner), a member of that role or a superuser.")));
	/* written and released first: the drop may still be rolled back */
	if (ix != NULL)
		ix_close_for_drop(ix);
	ix_lock_until_commit(cat->index_id, name, &tag);

	catalog_delete_index(cat->index_id);
	path = dropped_index_file(cat);
	if (path != NULL && device_has(&cat->device, DEVICE_CAP_FILE))
	{
		FestFileOwner self;
		FileOwnerInfo info;

		/* a row copied from another database leaves the owner's files alone */
		ownership_self(&self);
		ownership_inspect(path, cat->file_name, &info);
		if (ownership_standing(&info, &self) == FILE_OTHERS)
		{
			ereport(NOTICE,
					(errmsg("index \"%s\" is removed from this database; its file \"%s\" belongs to %s and is left in place",
							name, path, ownership_describe(&info, &self))));
			path = NULL;
		}
	}
	if (path != NULL)
	{
		char	   *fast_path = ix_fast_file(cat);

		pending_unlink_on_commit(path);
		pending_unlink_on_commit(log_path_for(path));
		/*
		 * The map and weights beside the file go whether or not this index
		 * is tiered: they may be left over from an earlier index of the
		 * name (DROP EXTENSION does not remove files).
		 */
		pending_unlink_on_commit(tier_map_path(path));
		pending_unlink_on_commit(tier_weights_path(path));
		if (fast_path != NULL)
			pending_unlink_on_commit(fast_path);
	}
	/* whether files go at commit: false for another database's or none */
	PG_RETURN_BOOL(path != NULL && device_has(&cat->device, DEVICE_CAP_FILE));
}

/*
 * festival.flush(index): write everything and mark the file clean; returns
 * the pages written (meta pages included).  It writes the file (and may
 * drop a FAST or eFIND buffer), so it is a change.
 */
Datum
festival_flush(PG_FUNCTION_ARGS)
{
	OpenIndex  *ix = ix_begin_op(fest_name_arg(fcinfo, 0, "index"), IX_MODIFY);
	int64		written;

	ix_flush(ix);
	written = ix->op.stats.pages_written;	/* drained by ix_end_op */
	ix_end_op(ix);
	PG_RETURN_INT64(written);
}

/* festival.close(index): flush and release; a closed index is a no-op. */
Datum
festival_close(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	OpenIndex  *ix = ix_lookup_open(name);

	if (ix == NULL)
	{
		(void) catalog_load_index(name, false); /* unknown names are errors */
		PG_RETURN_BOOL(false);
	}
	ix_close(ix);
	PG_RETURN_BOOL(true);
}

/* Insert one source row during a build; the caller commits. */
static void
build_one(OpenIndex *ix, int64 id, bytea *ewkb)
{
	WkbInfo		info;
	MemoryContext old;
	char	   *what = psprintf("geometry of source row with id " INT64_FORMAT, id);

	geomarg_check_wkb((const uint8 *) VARDATA_ANY(ewkb), VARSIZE_ANY_EXHDR(ewkb),
					  what, &info);
	geomarg_admit(ix, &info, what);

	old = MemoryContextSwitchTo(ix->op.cxt);
	ix->structure->insert(&ix->sidx, id, &info.box);
	ix->meta.entry_count++;
	ix->op.stats.inserts++;
	MemoryContextSwitchTo(old);
	MemoryContextReset(ix->op.cxt);
	pfree(what);
}

/* Commit the rows build_one inserted since the last commit. */
static void
build_commit(OpenIndex *ix)
{
	MemoryContext old = MemoryContextSwitchTo(ix->op.cxt);

	ix_commit(ix);
	MemoryContextSwitchTo(old);
	MemoryContextReset(ix->op.cxt);
}

/*
 * Objects gathered for a bulk load: in memory while the in-memory loader
 * would fit in maintenance_work_mem, then, when the structure has a
 * bounded form of the method, handed to it (spill) one by one.
 */
typedef struct BulkItems
{
	const char *method;
	BulkItem   *items;
	int64		n;
	int64		max;
	BulkSpill  *spill;
	bool		no_spill;		/* the method has no bounded form */
} BulkItems;

/*
 * Would n objects overflow maintenance_work_mem in the in-memory load?  It
 * holds each object twice: the gathered BulkItem and the loader's own
 * entry (BULK_BYTES_PER_OBJECT_DEFAULT, rtree_bulk.c's PackItem, unless
 * the structure says more: the xBR+-tree's loader holds 84).
 */
static bool
bulk_over_budget(const StructureOps *structure, int64 n)
{
	int			per_object = structure->bulk_bytes_per_object > 0 ?
		structure->bulk_bytes_per_object : BULK_BYTES_PER_OBJECT_DEFAULT;

	return n * (int64) (sizeof(BulkItem) + per_object) > (int64) maintenance_work_mem * 1024;
}

/* Check one source row and keep it for the bulk loader. */
static void
bulk_collect(OpenIndex *ix, BulkItems *bulk, int64 id, bytea *ewkb)
{
	WkbInfo		info;
	char	   *what = psprintf("geometry of source row with id " INT64_FORMAT, id);

	geomarg_check_wkb((const uint8 *) VARDATA_ANY(ewkb), VARSIZE_ANY_EXHDR(ewkb),
					  what, &info);
	geomarg_admit(ix, &info, what);
	pfree(what);
	if (bulk->spill == NULL && !bulk->no_spill &&
		ix->structure->bulk_spill_begin != NULL && bulk_over_budget(ix->structure, bulk->n + 1))
	{
		MemoryContext old = MemoryContextSwitchTo(ix->op.cxt);

		bulk->spill = ix->structure->bulk_spill_begin(&ix->sidx, bulk->method);
		if (bulk->spill == NULL)
			bulk->no_spill = true;
		else
		{
			elog(DEBUG1, "bulk load of index \"%s\" continues in an external sort after " INT64_FORMAT " objects",
				 ix->name, bulk->n);
			for (int64 i = 0; i < bulk->n; i++)
				ix->structure->bulk_spill_put(bulk->spill, &bulk->items[i]);
			if (bulk->items != NULL)
				pfree(bulk->items);
			bulk->items = NULL;
			bulk->max = 0;
		}
		MemoryContextSwitchTo(old);
	}
	if (bulk->spill != NULL)
	{
		BulkItem	item;
		MemoryContext old = MemoryContextSwitchTo(ix->op.cxt);

		item.box = info.box;
		item.id = id;
		ix->structure->bulk_spill_put(bulk->spill, &item);
		bulk->n++;
		MemoryContextSwitchTo(old);
		return;
	}
	if (bulk->n == bulk->max)
	{
		MemoryContext old = MemoryContextSwitchTo(ix->op.cxt);

		bulk->max = Max(1024, bulk->max * 2);
		bulk->items = bulk->items
			? repalloc_huge(bulk->items, bulk->max * sizeof(BulkItem))
			: MemoryContextAllocHuge(ix->op.cxt, bulk->max * sizeof(BulkItem));
		MemoryContextSwitchTo(old);
	}
	bulk->items[bulk->n].box = info.box;
	bulk->items[bulk->n].id = id;
	bulk->n++;
}

/*
 * festival.build(index, method): empty the index, then fill it from its
 * source.  'insert' adds every row one at a time with the structure's own
 * insertion algorithm (how the papers build their indices); the other
 * methods gather every row first and hand them to the structure's bulk
 * loader, or, past maintenance_work_mem, to its bounded form when it has
 * one (bulk_collect).  Rows whose geometry is NULL are skipped, as no predicate holds
 * for them.  Returns the rows indexed.
 */
Datum
festival_build(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	char	   *method_name = fest_text_arg(fcinfo, 1, "build method");
	const BuildMethod *method;
	OpenIndex  *ix;
	char	   *sql;
	int64		rows = 0;
	Progress   *progress;
	SourceScan	scan;
	int64		id;
	bytea	   *ewkb;
	BulkItems	bulk = {0};
	int64		commit_rows;
	int64		uncommitted = 0;
	int			held_limit;

	ix = ix_begin_op(name, IX_MODIFY);
	method = structure_method_lookup(ix->structure, ix->structure->build_methods,
									 method_name, "build", "object");
	source_require(ix, "build from");
	sql = source_select_sql(ix, psprintf("%s IS NOT NULL",
										 quote_identifier(ix->cat.geom_column)));

	ix_reset_for_build(ix);
	progress = ix_progress_begin(ix, method == NULL ? "build" : "bulk load");
	progress_phase(progress, method == NULL ? "inserting rows" : "reading the source",
				   "rows", -1);
	if (method != NULL)
		bulk.method = method->name;

	/*
	 * An 'insert' build commits per batch of rows in a write-through store:
	 * a page changed by many rows of the batch is written once, and pages
	 * the batch wrote are read back from memory, as are the clean nodes it
	 * read (the rows of a batch descend through the same inner nodes, which
	 * a row changes only when its rectangle grows: without them every row
	 * read those again, and the reads per row grew with the tree's width,
	 * not only its height).  A batch ends when the page images it holds
	 * reach maintenance_work_mem (as CREATE INDEX, the memory of a build):
	 * a batch of a fixed number of rows covers an ever smaller part of a
	 * growing tree, so its reads and writes per row grew with the tree's
	 * width as well.  The nodes, their order and the bytes of every page
	 * are the same whatever the batches.  The build is marked on disk
	 * until it finishes (FEST_META_BUILDING), so a crash or ERROR part-way
	 * leaves, as before, an index refused as incompletely built, holding
	 * the rows up to its last commit.  A buffering store (FAST, eFIND)
	 * commits every row: its commit decides flushes and log groups, which
	 * the frameworks define per modification.
	 */
	held_limit = (int) Min((int64) maintenance_work_mem * 1024 / ix->ns->page_size, INT_MAX / 4);
	held_limit = Max(held_limit, BUILD_MIN_HELD_PAGES);
	if (ix->ns->buffers)
		commit_rows = 1;
	else if (fest_build_commit_rows > 0)
		commit_rows = fest_build_commit_rows;	/* 1: per row, as the papers */
	else
		commit_rows = 0;		/* by the pages held */
	ix->ns->retain_pages = method == NULL && commit_rows != 1 ? held_limit : 0;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	source_scan_begin(&scan, sql, source_null_id_message(ix), SOURCE_NULL_ID_HINT);
	while (source_scan_next(&scan, &id, &ewkb))
	{
		if (method == NULL)
		{
			build_one(ix, id, ewkb);
			uncommitted++;
			if (commit_rows > 0 ? uncommitted >= commit_rows :
				ix->ns->held_pages >= held_limit)
			{
				build_commit(ix);
				uncommitted = 0;
			}
		}
		else
			bulk_collect(ix, &bulk, id, ewkb);
		rows++;
		progress_step(progress, 1);
	}
	source_scan_end(&scan);
	SPI_finish();
	if (uncommitted > 0)
		build_commit(ix);

	if (method != NULL && bulk.n > 0)
	{
		MemoryContext old = MemoryContextSwitchTo(ix->op.cxt);

		/*
		 * Loaders commit every node they write and change the root last, so
		 * an ERROR part-way leaves a consistent (empty) tree to reload.
		 */
		if (bulk.spill != NULL)
			ix->structure->bulk_spill_load(&ix->sidx, bulk.spill);
		else
			ix->structure->bulk_load(&ix->sidx, bulk.items, bulk.n, method->name);
		ix->meta.entry_count = bulk.n;
		ix->op.stats.inserts += bulk.n;
		ix_commit(ix);
		MemoryContextSwitchTo(old);
	}

	ix_finish_build(ix);
	ix_flush(ix);
	ix->op.stats.builds++;
	ix_end_op(ix);
	PG_RETURN_INT64(rows);
}
