/*-------------------------------------------------------------------------
 *
 * api_check.c
 *	  festival.check(): every invariant of an index, as rows.
 *
 * No rows means healthy.  The structure checks its tree (for the R-tree:
 * levels, fill, MBR containment and tightness, page checksums), the file
 * checks follow (free list, leaked pages, entry count), and, with a source
 * table, the index's (id, MBR) entries are compared with the source's rows
 * that have a geometry (check_source.c): each entry missing, extra or with
 * another MBR is a row.
 *
 * An index opened after an unclean shutdown stays "suspect" (it is never
 * marked clean again) until it is rebuilt or a check finds no error.
 *
 * IDENTIFICATION
 *	  src/sql/api_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/check_source.h"
#include "sql/progress.h"
#include "tier/tier.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(festival_check);

/* A problem tier_check() found, as an error row. */
static void
tier_problem(void *arg, int64 page, const char *message)
{
	check_error((CheckReport *) arg, page, "%s", message);
}

Datum
festival_check(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OpenIndex  *ix;
	CheckReport *report;
	MemoryContext old;
	ListCell   *lc;
	uint64		file_pages;
	bool		tree_sound;

	InitMaterializedSRF(fcinfo, 0);
	ix = ix_begin_op(name, IX_READ);

	old = MemoryContextSwitchTo(ix->op.cxt);
	file_pages = ix->ns->ops->pages_available(ix->ns);
	report = check_report_create(ix->meta.page_count, file_pages);
	report->progress = ix_progress_begin(ix, "check");
	progress_phase(report->progress, "walking the structure", "pages",
				   (int64) ix->meta.page_count);
	ix->structure->check(&ix->sidx, report);
	progress_phase(report->progress, "checking the file", "pages", -1);
	check_index_file(ix->ns, report);
	/* the walk reached every entry, and only the count disagreed (if that) */
	tree_sound = report->nerrors == (report->count_mismatch ? 1 : 0);
	check_source(ix, report, tree_sound);
	if (ix->tier != NULL)
		tier_check(ix->tier, ix->meta.page_count, tier_problem, report);
	/*
	 * A write that failed while overwriting pages can leave a tree that is
	 * whole but lost an entry moved between siblings (and kept one never
	 * acknowledged): nothing above can see that, so only a build clears it.
	 */
	if (ix->meta.flags & FEST_META_DAMAGED)
		check_error(report, -1,
					"a write failed while overwriting pages of the index: entries may be lost; rebuild it with festival.build('%s')",
					ix->name);

	foreach(lc, report->rows)
	{
		CheckRow   *row = (CheckRow *) lfirst(lc);
		Datum		values[3];
		bool		nulls[3] = {false, row->page < 0, false};

		values[0] = CStringGetTextDatum(row->severity);
		values[1] = Int64GetDatum(row->page);
		values[2] = CStringGetTextDatum(row->message);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	/* a verified index is trusted again, with its counted entries */
	if (report->nerrors == 0 && ix->ns->suspect)
	{
		ix->ns->suspect = false;
		ix->meta.entry_count = report->leaf_entries;
		ix->meta.flags |= FEST_META_ENTRIES_VALID;
	}
	else if (tree_sound && !ix->ns->suspect && (ix->meta.flags & FEST_META_DAMAGED) == 0 &&
			 (report->count_mismatch || (ix->meta.flags & FEST_META_ENTRIES_VALID) == 0))
	{
		/*
		 * The tree is the truth about how many entries there are: a count
		 * nobody vouches for (a crash made it unknown) or one that disagrees
		 * with an otherwise sound tree (reported above, this once) becomes
		 * the walk's, written at the next flush or close.  Not for a damaged
		 * index, whose count before the failure is what shows lost entries.
		 */
		ix->meta.entry_count = report->leaf_entries;
		ix->meta.flags |= FEST_META_ENTRIES_VALID;
		ix->ns->meta_dirty = true;
	}
	MemoryContextSwitchTo(old);

	ix_end_op(ix);
	return (Datum) 0;
}
