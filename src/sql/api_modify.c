/*-------------------------------------------------------------------------
 *
 * api_modify.c
 *	  festival.insert(), festival.delete(), festival.update().
 *
 * Each call is one logical modification: the write-through store writes
 * its pages when it commits, so an ERROR part-way leaves the index as it
 * was.  Changes are not transactional (see api_index.c).
 *
 * IDENTIFICATION
 *	  src/sql/api_modify.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/geomarg.h"

#include "fmgr.h"

PG_FUNCTION_INFO_V1(festival_insert);
PG_FUNCTION_INFO_V1(festival_delete);
PG_FUNCTION_INFO_V1(festival_update);

/* Add one entry; the caller has checked the geometry. */
static void
add_entry(OpenIndex *ix, int64 id, const GeomArg *g, const char *what)
{
	geomarg_admit(ix, &g->info, what);
	ix->structure->insert(&ix->sidx, id, &g->info.box);
	ix->meta.entry_count++;
}

/* Remove one entry; false if the index has no entry with this id and MBR. */
static bool
remove_entry(OpenIndex *ix, int64 id, const GeomArg *g, const char *what)
{
	geomarg_check_srid(ix, &g->info, what, false);
	if (!ix->structure->remove(&ix->sidx, id, &g->info.box))
		return false;
	ix->meta.entry_count--;
	return true;
}

/*
 * festival.insert(index, id, geom, if_absent): true when the entry was
 * added.  With if_absent, an entry with the same id and MBR already present
 * makes it return false and change nothing (this costs a search first);
 * without, the structure's insertion runs as is and duplicates are kept.
 */
Datum
festival_insert(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	int64		id = fest_int64_arg(fcinfo, 1, "object id");
	bool		if_absent = fest_bool_arg(fcinfo, 3, "if_absent");
	GeomArg		g;
	OpenIndex  *ix;
	MemoryContext old;
	bool		inserted = false;

	geomarg_get(fcinfo, 2, "geometry", &g);
	ix = ix_begin_op(name, IX_MODIFY);
	ix_require_writable(ix);
	old = MemoryContextSwitchTo(ix->op.cxt);
	if (!if_absent || !ix->structure->contains(&ix->sidx, id, &g.info.box))
	{
		add_entry(ix, id, &g, "geometry");
		ix_commit(ix);
		inserted = true;
	}
	ix->op.stats.inserts++;
	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	PG_RETURN_BOOL(inserted);
}

/* festival.delete(index, id, geom): false when no such entry exists. */
Datum
festival_delete(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	int64		id = fest_int64_arg(fcinfo, 1, "object id");
	GeomArg		g;
	OpenIndex  *ix;
	MemoryContext old;
	bool		removed;

	geomarg_get(fcinfo, 2, "geometry", &g);
	ix = ix_begin_op(name, IX_MODIFY);
	ix_require_writable(ix);
	old = MemoryContextSwitchTo(ix->op.cxt);
	removed = remove_entry(ix, id, &g, "geometry");
	if (removed)
		ix_commit(ix);
	ix->op.stats.deletes++;
	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	PG_RETURN_BOOL(removed);
}

/*
 * festival.update(index, old_id, old_geom, new_id, new_geom): delete then
 * insert, as one modification.  False (and nothing inserted) when the old
 * entry does not exist.
 */
Datum
festival_update(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	int64		old_id = fest_int64_arg(fcinfo, 1, "old object id");
	int64		new_id = fest_int64_arg(fcinfo, 3, "new object id");
	GeomArg		old_g;
	GeomArg		new_g;
	OpenIndex  *ix;
	MemoryContext old;
	bool		found;

	geomarg_get(fcinfo, 2, "old geometry", &old_g);
	geomarg_get(fcinfo, 4, "new geometry", &new_g);
	ix = ix_begin_op(name, IX_MODIFY);
	ix_require_writable(ix);
	old = MemoryContextSwitchTo(ix->op.cxt);
	/* both geometries are checked before anything changes */
	geomarg_check_srid(ix, &new_g.info, "new geometry", false);
	found = remove_entry(ix, old_id, &old_g, "old geometry");
	if (found)
	{
		add_entry(ix, new_id, &new_g, "new geometry");
		ix_commit(ix);
	}
	ix->op.stats.updates++;
	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	PG_RETURN_BOOL(found);
}
