/*-------------------------------------------------------------------------
 *
 * check_source.c
 *	  festival.check()'s comparison of an index with its source table.
 *
 * An index is right only if it holds exactly one entry (id, MBR) per source
 * row with a geometry, the MBR that row's geometry has now.  A source
 * changed behind the index's back (an UPDATE without festival.update, a
 * DELETE without festival.delete) leaves the counts equal and the index
 * wrong, so check() compares the two sets, not their sizes: every entry of
 * the index (a search over the whole plane) and every row of the source
 * (its MBR computed exactly as build() computes it) go into a tuplesort
 * each, bounded by work_mem, and the two sorted streams are merged.  A
 * count that differs is one error row; then each difference (an entry the
 * source lacks, a row the index lacks, an id with another MBR) is one, the
 * first CHECK_SOURCE_MAX_LISTED of them, and one more row counts the rest.
 * When one side is empty, the count row alone says it.
 *
 * The comparison needs a sound tree (the search must reach every entry):
 * when the structure's own walk found errors, only the counts are compared.
 *
 * IDENTIFICATION
 *	  src/sql/check_source.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/check_source.h"

#include "sql/geomarg.h"
#include "sql/source.h"

#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"

#include <float.h>
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "access/tupdesc.h"

/* Differences listed one per row; the rest are counted in one more row. */
#define CHECK_SOURCE_MAX_LISTED 20

/* One sorted stream of (id, xmin, ymin, xmax, ymax). */
typedef struct EntrySort
{
	Tuplesortstate *sort;
	TupleTableSlot *slot;
	uint64		count;			/* tuples put */
	Progress   *progress;		/* counts the tuples put, or NULL */
} EntrySort;

static TupleDesc
entry_desc(void)
{
	TupleDesc	desc = CreateTemplateTupleDesc(5);

	TupleDescInitEntry(desc, 1, "id", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "xmin", FLOAT8OID, -1, 0);
	TupleDescInitEntry(desc, 3, "ymin", FLOAT8OID, -1, 0);
	TupleDescInitEntry(desc, 4, "xmax", FLOAT8OID, -1, 0);
	TupleDescInitEntry(desc, 5, "ymax", FLOAT8OID, -1, 0);
	return desc;
}

static void
entry_sort_begin(EntrySort *es, TupleDesc desc)
{
	AttrNumber	attnums[5] = {1, 2, 3, 4, 5};
	Oid			ops[5] = {Int8LessOperator, Float8LessOperator, Float8LessOperator,
		Float8LessOperator, Float8LessOperator};
	Oid			collations[5] = {InvalidOid, InvalidOid, InvalidOid, InvalidOid, InvalidOid};
	bool		nulls_first[5] = {false, false, false, false, false};

	es->sort = tuplesort_begin_heap(desc, 5, attnums, ops, collations, nulls_first,
									work_mem, NULL, TUPLESORT_NONE);
	es->slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	es->count = 0;
}

static void
entry_sort_put(EntrySort *es, int64 id, const Mbr *box)
{
	TupleTableSlot *slot = es->slot;

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(id);
	slot->tts_values[1] = Float8GetDatum(box->xmin);
	slot->tts_values[2] = Float8GetDatum(box->ymin);
	slot->tts_values[3] = Float8GetDatum(box->xmax);
	slot->tts_values[4] = Float8GetDatum(box->ymax);
	memset(slot->tts_isnull, 0, 5 * sizeof(bool));
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(es->sort, slot);
	es->count++;
}

/* The next (id, box) of a performed sort; false at its end. */
static bool
entry_sort_next(EntrySort *es, int64 *id, Mbr *box)
{
	TupleTableSlot *slot = es->slot;

	if (!tuplesort_gettupleslot(es->sort, true, false, slot, NULL))
		return false;
	slot_getallattrs(slot);
	*id = DatumGetInt64(slot->tts_values[0]);
	box->xmin = DatumGetFloat8(slot->tts_values[1]);
	box->ymin = DatumGetFloat8(slot->tts_values[2]);
	box->xmax = DatumGetFloat8(slot->tts_values[3]);
	box->ymax = DatumGetFloat8(slot->tts_values[4]);
	return true;
}

static void
entry_sort_end(EntrySort *es)
{
	ExecDropSingleTupleTableSlot(es->slot);
	tuplesort_end(es->sort);
}

/* SearchSpec.emit of the whole-plane search: every leaf entry. */
static void
collect_entry(void *arg, int64 id, const Mbr *box, FilterVerdict verdict)
{
	EntrySort  *es = (EntrySort *) arg;

	entry_sort_put(es, id, box);
	progress_step(es->progress, 1);
}

/*
 * Every entry of the index.  The window is the whole plane in finite
 * coordinates (a grid's scales and a curve's cells are computed from the
 * query's corners, so no infinity), and intersects with a rectangle
 * decides every entry from its MBR: nothing is refined.
 */
static void
collect_index(OpenIndex *ix, EntrySort *es)
{
	SearchSpec	spec = {0};

	spec.predicate = PRED_INTERSECTS;
	spec.query.xmin = spec.query.ymin = -DBL_MAX / 4;
	spec.query.xmax = spec.query.ymax = DBL_MAX / 4;
	spec.shape = QUERY_RECTANGLE;
	spec.exact_points = false;
	spec.emit = collect_entry;
	spec.arg = es;
	if (ix->structure->search != NULL)
		ix->structure->search(&ix->sidx, &spec);
	else
		tree_search(&ix->sidx, &spec);
}

/* Every source row with a geometry, with the MBR build() would index. */
static void
collect_source(OpenIndex *ix, EntrySort *es)
{
	char	   *sql = source_select_sql(ix, psprintf("%s IS NOT NULL",
													 quote_identifier(ix->cat.geom_column)));
	SourceScan	scan;
	int64		id;
	bytea	   *ewkb;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	source_scan_begin(&scan, sql, source_null_id_message(ix), SOURCE_NULL_ID_HINT);
	while (source_scan_next(&scan, &id, &ewkb))
	{
		WkbInfo		info;

		geomarg_check_wkb((const uint8 *) VARDATA_ANY(ewkb), VARSIZE_ANY_EXHDR(ewkb),
						  "geometry of a source row", &info);
		entry_sort_put(es, id, &info.box);
		progress_step(es->progress, 1);
	}
	source_scan_end(&scan);
	SPI_finish();
}

static int
entry_cmp(int64 a_id, const Mbr *a, int64 b_id, const Mbr *b)
{
	if (a_id != b_id)
		return a_id < b_id ? -1 : 1;
	if (a->xmin != b->xmin)
		return a->xmin < b->xmin ? -1 : 1;
	if (a->ymin != b->ymin)
		return a->ymin < b->ymin ? -1 : 1;
	if (a->xmax != b->xmax)
		return a->xmax < b->xmax ? -1 : 1;
	if (a->ymax != b->ymax)
		return a->ymax < b->ymax ? -1 : 1;
	return 0;
}

/* An MBR in the shortest text that reads back exactly; a point as one. */
static char *
box_text(const Mbr *b)
{
	if (b->xmin == b->xmax && b->ymin == b->ymax)
		return psprintf("POINT(%s %s)", float8out_internal(b->xmin),
						float8out_internal(b->ymin));
	return psprintf("BOX(%s %s,%s %s)", float8out_internal(b->xmin),
					float8out_internal(b->ymin), float8out_internal(b->xmax),
					float8out_internal(b->ymax));
}

/* One difference: listed while there are few, counted beyond. */
static void difference(CheckReport *report, uint64 *ndifferences,
					   const char *fmt,...) pg_attribute_printf(3, 4);

static void
difference(CheckReport *report, uint64 *ndifferences, const char *fmt,...)
{
	va_list		args;
	StringInfoData buf;

	if ((*ndifferences)++ >= CHECK_SOURCE_MAX_LISTED)
		return;
	initStringInfo(&buf);
	for (;;)
	{
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&buf, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	check_error(report, -1, "%s", buf.data);
}

/* Merge the two sorted streams, one error row per difference. */
static void
report_differences(OpenIndex *ix, EntrySort *index_side, EntrySort *source_side,
				   CheckReport *report)
{
	const char *rel = source_relation(ix);
	int64		iid = 0,
				sid = 0;
	Mbr			ibox,
				sbox;
	bool		have_i = entry_sort_next(index_side, &iid, &ibox);
	bool		have_s = entry_sort_next(source_side, &sid, &sbox);
	uint64		ndifferences = 0;

	if (index_side->count != source_side->count)
		check_error(report, -1,
					"the index holds " UINT64_FORMAT " entries but source table %s has " UINT64_FORMAT " rows with a geometry",
					index_side->count, rel, source_side->count);
	/* an empty side: the count says it all (a memory device's lost pages) */
	if (index_side->count == 0 || source_side->count == 0)
		return;

	while (have_i || have_s)
	{
		int			c = !have_s ? -1 : !have_i ? 1 : entry_cmp(iid, &ibox, sid, &sbox);

		CHECK_FOR_INTERRUPTS();
		progress_step(ix->sidx.progress, 1);
		if (c == 0)
		{
			have_i = entry_sort_next(index_side, &iid, &ibox);
			have_s = entry_sort_next(source_side, &sid, &sbox);
		}
		else if (have_i && have_s && iid == sid)
		{
			/* the same id, another MBR: the row moved behind the index's back */
			difference(report, &ndifferences,
					   "entry " INT64_FORMAT " has MBR %s in the index but %s in source table %s",
						iid, box_text(&ibox), box_text(&sbox), rel);
			have_i = entry_sort_next(index_side, &iid, &ibox);
			have_s = entry_sort_next(source_side, &sid, &sbox);
		}
		else if (c < 0)
		{
			difference(report, &ndifferences,
					   "entry " INT64_FORMAT " with MBR %s is in the index but not in source table %s",
						iid, box_text(&ibox), rel);
			have_i = entry_sort_next(index_side, &iid, &ibox);
		}
		else
		{
			difference(report, &ndifferences,
					   "row " INT64_FORMAT " of source table %s (MBR %s) is not in the index",
						sid, rel, box_text(&sbox));
			have_s = entry_sort_next(source_side, &sid, &sbox);
		}
	}
	if (ndifferences > CHECK_SOURCE_MAX_LISTED)
		check_error(report, -1,
					UINT64_FORMAT " more %s with source table %s %s not listed; festival.build('%s') rebuilds the index from it",
					ndifferences - CHECK_SOURCE_MAX_LISTED,
					ndifferences - CHECK_SOURCE_MAX_LISTED == 1 ? "difference" : "differences",
					rel, ndifferences - CHECK_SOURCE_MAX_LISTED == 1 ? "is" : "are", ix->name);
}

/* Compare only the entry count with the rows that have a geometry. */
static void
compare_counts(OpenIndex *ix, CheckReport *report)
{
	char	   *sql;
	bool		isnull;
	int64		rows;

	sql = psprintf("SELECT count(*) FROM %s WHERE %s IS NOT NULL",
				   source_relation(ix), quote_identifier(ix->cat.geom_column));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count the rows of the source table");
	rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
									   SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();

	if ((uint64) rows != report->leaf_entries)
		check_error(report, -1,
					"the index holds " UINT64_FORMAT " entries but source table %s has " INT64_FORMAT " rows with a geometry",
					report->leaf_entries, source_relation(ix), rows);
}

void
check_source(OpenIndex *ix, CheckReport *report, bool tree_sound)
{
	TupleDesc	desc;
	EntrySort	index_side;
	EntrySort	source_side;

	if (!OidIsValid(ix->cat.source))
		return;
	source_require(ix, "compare with");
	if (!tree_sound || (ix->meta.flags & FEST_META_BUILDING))
	{
		compare_counts(ix, report);
		return;
	}

	desc = entry_desc();
	entry_sort_begin(&index_side, desc);
	entry_sort_begin(&source_side, desc);
	index_side.progress = source_side.progress = ix->sidx.progress;
	progress_phase(ix->sidx.progress, "reading the index's entries", "entries",
				   (int64) report->leaf_entries);
	collect_index(ix, &index_side);
	progress_phase(ix->sidx.progress, "reading the source", "rows", -1);
	collect_source(ix, &source_side);
	progress_phase(ix->sidx.progress, "sorting", "entries", -1);
	tuplesort_performsort(index_side.sort);
	tuplesort_performsort(source_side.sort);
	progress_phase(ix->sidx.progress, "comparing with the source", "entries",
				   (int64) index_side.count);
	report_differences(ix, &index_side, &source_side, report);
	entry_sort_end(&index_side);
	entry_sort_end(&source_side);
}
