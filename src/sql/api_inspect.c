/*-------------------------------------------------------------------------
 *
 * api_inspect.c
 *	  Looking inside an index and its buffers.
 *
 *	festival.buffer(index)			the write buffer of FAST and eFIND
 *	festival.node(index, page)		a node as its node store returns it
 *									(buffered changes merged in)
 *	festival.flush_unit(index)		write one flushing unit, as the policy
 *									chooses it when the buffer is full
 *	festival.cache_simulate(...)	run a replacement policy, or clru,
 *									over a reference string of pages
 *
 * They show the frameworks' decisions one step at a time, for people
 * studying them and for the tests of those decisions.
 *
 * IDENTIFICATION
 *	  src/sql/api_inspect.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"

#include "cache/clru.h"
#include "cache/replacement.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(festival_buffer);
PG_FUNCTION_INFO_V1(festival_node);
PG_FUNCTION_INFO_V1(festival_flush_unit);
PG_FUNCTION_INFO_V1(festival_cache_simulate);

Datum
festival_buffer(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OpenIndex  *ix;
	List	   *pages;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	ix = ix_begin_op(fest_name_arg(fcinfo, 0, "index"), IX_READ);
	pages = ix->ns->ops->buffered(ix->ns);
	foreach(lc, pages)
	{
		BufferedPageInfo *info = (BufferedPageInfo *) lfirst(lc);
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		values[0] = Int64GetDatum((int64) info->page);
		values[1] = CStringGetTextDatum(info->status);
		values[2] = Int32GetDatum(info->level);
		values[3] = Int64GetDatum(info->modifications);
		values[4] = Int64GetDatum((int64) info->last_modified);
		values[5] = Int64GetDatum(info->bytes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	ix_end_op(ix);
	return (Datum) 0;
}

Datum
festival_node(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	int64		page = fest_int64_arg(fcinfo, 1, "page");
	OpenIndex  *ix;
	TreeNode   *node;
	MemoryContext old;

	InitMaterializedSRF(fcinfo, 0);
	ix = ix_begin_op(name, IX_READ);
	ix_require_layout(ix);
	old = MemoryContextSwitchTo(ix->op.cxt);
	if (page < 0 && ix->structure->read_leaves != NULL)
	{
		/* a leaf that is not a page (LB-Grid's logical bucket, replayed) */
		Assert(ix->structure->leaf_exists != NULL);
		if (!ix->structure->leaf_exists(&ix->sidx, page))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("index \"%s\" has no leaf " INT64_FORMAT, name, page),
					 errdetail("Its leaves are not pages: a negative reference names a leaf of the directory."),
					 errhint("The level-1 nodes list the leaves: festival.node('%s', page) of a node at level 1 gives each one's reference (ref).",
							 name)));
		node = tree_read_node(&ix->sidx, page, 0);
	}
	else
	{
		if (page < FEST_FIRST_DATA_PAGE || (uint64) page >= ix->meta.page_count)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("index \"%s\" has no page " INT64_FORMAT, name, page),
					 errhint("Node pages run from 2 to " UINT64_FORMAT "; festival.stats('%s')->>'root' is the root.",
							 ix->meta.page_count - 1, name)));
		if (ix->ns->ops->read_checked(ix->ns, (PageId) page, &node) != FEST_PAGE_OK)
		{
			PageId		link;

			/* a free page is not damage, but it holds no node */
			if (ix->ns->ops->read_free_link(ix->ns, (PageId) page, &link) == FEST_PAGE_OK)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("page " INT64_FORMAT " of index \"%s\" is free", page, name),
						 errdetail("The page is on the free list and holds no node."),
						 errhint("festival.buffer('%s') and festival.check('%s') show the pages in use.",
								 name, name)));
			node = ns_read(ix->ns, (PageId) page);	/* reports the damage */
		}
	}
	MemoryContextSwitchTo(old);

	for (uint32 i = 0; i < node->nentries; i++)
	{
		const void *entry = NodeEntry(node, i);
		Mbr			box;
		Datum		values[8];
		bool		nulls[8] = {false, false, false, false, false, false, false, false};

		ix->structure->node_ops->entry_mbr(entry, node->level, &box);
		values[0] = Int64GetDatum(page);
		values[1] = Int32GetDatum(node->level);
		values[2] = Int32GetDatum((int32) i);
		values[3] = Int64GetDatum(ix->structure->node_ops->entry_ref(entry, node->level));
		values[4] = Float8GetDatum(box.xmin);
		values[5] = Float8GetDatum(box.ymin);
		values[6] = Float8GetDatum(box.xmax);
		values[7] = Float8GetDatum(box.ymax);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	ix_end_op(ix);
	return (Datum) 0;
}

Datum
festival_flush_unit(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OpenIndex  *ix;
	List	   *pages;
	ListCell   *lc;
	MemoryContext old;
	TupleDesc	desc;

	desc = fest_init_int8_set(fcinfo, "page");
	ix = ix_begin_op(fest_name_arg(fcinfo, 0, "index"), IX_MODIFY);
	old = MemoryContextSwitchTo(ix->op.cxt);
	ix->op.committing = true;
	pages = ix->ns->ops->flush_some(ix->ns);
	ix->op.committing = false;
	MemoryContextSwitchTo(old);
	foreach(lc, pages)
	{
		Datum		values[1] = {Int64GetDatum((int64) *(PageId *) lfirst(lc))};
		bool		nulls[1] = {false};

		tuplestore_putvalues(rsinfo->setResult, desc, values, nulls);
	}
	ix_end_op(ix);
	return (Datum) 0;
}

/* A bigint[] of a List of pointers to int64 (the simulators' page lists). */
static Datum
int64_array(List *values)
{
	int			n = list_length(values);
	int64	   *v = palloc(Max(n, 1) * sizeof(int64));
	int			i = 0;
	ListCell   *lc;

	foreach(lc, values)
		v[i++] = *(int64 *) lfirst(lc);
	return flat_array_datum(v, n, INT8OID);
}

static int
int64_ptr_cmp(const ListCell *a, const ListCell *b)
{
	int64		x = *(int64 *) lfirst(a);
	int64		y = *(int64 *) lfirst(b);

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * cache_simulate for policy clru (cache/clru.c): capacity pages, two cold
 * lists of clru_pages, the hot rest split by directory_percent; writes[i]
 * marks access i a write.  Every miss is admitted; evicted lists the pages
 * that left the cache, written the pages of the batch written at that
 * access (sorted), NULL when none.
 */
static Datum
clru_simulate(FunctionCallInfo fcinfo, int64 capacity, Datum *pages, int npages,
			  Datum *levels, Datum *writes)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		cold,
				percent = fest_int64_arg(fcinfo, 8, "directory_percent");
	int64		hot_directory,
				hot_data;
	MemoryContext cxt;
	MemoryContext old;
	Clru	   *c;

	if (PG_ARGISNULL(7))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("policy clru needs clru_pages"),
				 errhint("Give clru_pages => n, the pages of each cold list.")));
	cold = PG_GETARG_INT64(7);
	clru_split_capacity(capacity, cold, percent, &hot_directory, &hot_data);
	if (cold < 1 || percent < 1 || percent > 99 || hot_directory < 1 || hot_data < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("policy clru needs clru_pages >= 1, directory_percent from 1 to 99 and room for a hot page of each kind"),
				 errhint("capacity - 2 * clru_pages pages are hot; directory_percent of them hold directory pages (level >= 1).")));

	InitMaterializedSRF(fcinfo, 0);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "festival clru simulation",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	c = clru_create(hot_directory, hot_data, cold, cxt);
	for (int i = 0; i < npages; i++)
	{
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};
		int64		page = DatumGetInt64(pages[i]);
		bool		write = writes != NULL && DatumGetBool(writes[i]);
		ClruEffects fx = {NIL, NIL};
		List	   *dropped = NIL;
		List	   *batch = NIL;
		ListCell   *lc;
		bool		hit;

		CHECK_FOR_INTERRUPTS();
		hit = clru_access(c, (PageId) page, write, &fx) != NULL;
		if (!hit)
		{
			int64	   *payload = palloc(sizeof(int64));

			*payload = page;
			clru_insert(c, (PageId) page, levels ? (uint16) DatumGetInt32(levels[i]) : 0,
						write, payload, &fx);
		}
		foreach(lc, fx.dropped)
			dropped = lappend(dropped, lfirst(lc));
		foreach(lc, fx.batch)
			batch = lappend(batch, lfirst(lc));
		list_sort(batch, int64_ptr_cmp);
		values[0] = Int32GetDatum(i + 1);
		values[1] = Int64GetDatum(page);
		values[2] = BoolGetDatum(hit);
		values[3] = BoolGetDatum(!hit);
		values[4] = int64_array(dropped);
		values[5] = batch != NIL ? int64_array(batch) : (Datum) 0;
		nulls[5] = batch == NIL;
		MemoryContextSwitchTo(old);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(cxt);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return (Datum) 0;
}

/*
 * festival.cache_simulate(policy, capacity, pages, levels, a1in_percent,
 * ghosts, writes, clru_pages, directory_percent): every page costs one
 * unit of capacity; a miss offers the page for admission.  One row per
 * access: hit, admitted, evicted pages, and for clru the pages written.
 */
Datum
festival_cache_simulate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *policy_name = fest_text_arg(fcinfo, 0, "policy");
	int64		capacity = fest_int64_arg(fcinfo, 1, "capacity");
	ArrayType  *pages_arr;
	ArrayType  *levels_arr = PG_ARGISNULL(3) ? NULL : PG_GETARG_ARRAYTYPE_P(3);
	int64		a1in_percent = fest_int64_arg(fcinfo, 4, "a1in_percent");
	int64		ghosts = PG_ARGISNULL(5) ? Max(capacity / 2, 1) : PG_GETARG_INT64(5);
	Datum	   *pages;
	bool	   *page_nulls;
	int			npages;
	Datum	   *levels = NULL;
	bool	   *level_nulls = NULL;
	int			nlevels = 0;
	int			policy = -1;
	MemoryContext cxt;
	MemoryContext old;
	Replacement *r;

	ArrayType  *writes_arr = PG_ARGISNULL(6) ? NULL : PG_GETARG_ARRAYTYPE_P(6);
	Datum	   *writes = NULL;
	bool	   *write_nulls = NULL;
	int			nwrites = 0;

	for (int i = 0; replacement_policy_names[i] != NULL; i++)
		if (strcmp(policy_name, replacement_policy_names[i]) == 0)
			policy = i;
	if (policy < 0 && strcmp(policy_name, "clru") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown replacement policy \"%s\"", policy_name),
				 errhint("Accepted policies: 'lru', 'hlru', 's2q', '2q', 'clru'.")));
	if (policy >= 0 && writes_arr != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("writes apply only to policy clru"),
				 errhint("The other policies do not tell clean pages from dirty ones; leave writes NULL.")));
	if (capacity < 1 || capacity > 1000000 || a1in_percent < 1 || a1in_percent > 90 ||
		ghosts < 1 || ghosts > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cache_simulate needs capacity and ghosts from 1 to 1000000 and a1in_percent from 1 to 90"),
				 errhint("Change the out-of-range argument.")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("pages must not be NULL"),
				 errhint("Pass an array of page numbers; festival's functions never read NULL as a default.")));
	pages_arr = PG_GETARG_ARRAYTYPE_P(2);
	deconstruct_array(pages_arr, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE,
					  &pages, &page_nulls, &npages);
	if (levels_arr != NULL)
	{
		deconstruct_array(levels_arr, INT4OID, sizeof(int32), true, TYPALIGN_INT,
						  &levels, &level_nulls, &nlevels);
		if (nlevels != npages)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("levels has %d elements but pages has %d", nlevels, npages),
				 errhint("Give one level per page, or no levels.")));
	}
	if (writes_arr != NULL)
	{
		deconstruct_array(writes_arr, BOOLOID, 1, true, TYPALIGN_CHAR,
						  &writes, &write_nulls, &nwrites);
		if (nwrites != npages)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("writes has %d elements but pages has %d", nwrites, npages),
					 errhint("Give one element per page: true for a write, false for a read; or no writes.")));
	}
	for (int i = 0; i < npages; i++)
	{
		if (page_nulls[i] || (levels != NULL && level_nulls[i]) ||
			(writes != NULL && write_nulls[i]))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("pages, levels and writes must not contain NULL"),
					 errhint("Remove the NULL elements.")));
		/* a page number is a file's page; a level fits a page header */
		if (DatumGetInt64(pages[i]) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("page " INT64_FORMAT " (access %d) is negative", DatumGetInt64(pages[i]), i + 1),
					 errhint("Pages are numbered from 0, as in an index file.")));
		if (levels != NULL &&
			(DatumGetInt32(levels[i]) < 0 || DatumGetInt32(levels[i]) >= FEST_MAX_LEVELS))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("level %d (access %d) is outside 0 to %d", DatumGetInt32(levels[i]), i + 1,
							FEST_MAX_LEVELS - 1),
					 errhint("Leaves are level 0; give each page's level in its tree.")));
	}
	if (policy < 0)
		return clru_simulate(fcinfo, capacity, pages, npages, levels, writes);

	InitMaterializedSRF(fcinfo, 0);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "festival cache simulation",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	r = replacement_create((ReplacementPolicy) policy, capacity, (int) a1in_percent,
						   (int) ghosts, cxt);
	for (int i = 0; i < npages; i++)
	{
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, true};
		int64		page;
		int64	   *payload;
		bool		hit;
		bool		admitted = false;
		List	   *evicted = NIL;

		CHECK_FOR_INTERRUPTS();
		Assert(!page_nulls[i] && DatumGetInt64(pages[i]) >= 0);
		page = DatumGetInt64(pages[i]);
		hit = replacement_lookup(r, (PageId) page) != NULL;
		if (!hit)
		{
			payload = palloc(sizeof(int64));
			*payload = page;
			admitted = replacement_admit(r, (PageId) page, 1,
										 levels ? (uint16) DatumGetInt32(levels[i]) : 0,
										 payload, false, &evicted);
		}
		values[0] = Int32GetDatum(i + 1);
		values[1] = Int64GetDatum(page);
		values[2] = BoolGetDatum(hit);
		values[3] = BoolGetDatum(admitted);
		values[4] = int64_array(evicted);
		values[5] = (Datum) 0;	/* written: clru only */
		MemoryContextSwitchTo(old);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(cxt);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return (Datum) 0;
}
