/*-------------------------------------------------------------------------
 *
 * spill_sort.c
 *	  The external sort of the bounded bulk loads (spill_sort.h).
 *
 * A heap tuplesort over a template descriptor of int8 and float8 columns:
 * rows are put through a virtual slot and read back through a minimal one.
 * The loads rely on the sort being total on what they compare, which they
 * make sure of by their choice of keys (their last keys are the object
 * itself, or the rows equal in the keys are re-ordered after the sort);
 * this module adds nothing to the order but ascending keys with NULLs
 * impossible (every value is put non-null).
 *
 * IDENTIFICATION
 *	  src/index/spill_sort.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/spill_sort.h"

#include "access/tupdesc.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "miscadmin.h"

struct SpillSort
{
	TupleDesc	desc;
	Tuplesortstate *sort;
	TupleTableSlot *in;			/* virtual: what is put */
	TupleTableSlot *out;		/* minimal: what is read back */
	int			sortopt;
	int64		n;				/* rows put */
};

/*
 * Each sort is given half of maintenance_work_mem: every bounded load has
 * at most two sorts alive at once (or one and an array it keeps within the
 * other half: an STR slice, the parents of a packed level), and while the
 * caller (api_index.c) moves its gathered objects into the first sort they
 * take less than the other half.  What grows with the input besides goes
 * to temporary files (spill_file_*).  64 kB is tuplesort's own floor.
 *
 * A sort read while another one fills is made TUPLESORT_RANDOMACCESS even
 * when it is read once (xbrtree_bulk.c, gridfile_bulk.c): performing it
 * then merges to one tape, read through one block, where an on-the-fly
 * final merge would hold a buffer per run, large and long-lived, among
 * which the filling sort's memory, freed and taken again run after run,
 * fragments glibc's heap (the xBR+-tree's load of 50M points in 64 MB:
 * 79 MB of RssAnon so, 58 MB with random access).
 */
SpillSort *
spill_sort_begin(int ncols, const Oid *types, int nkeys, int sortopt)
{
	SpillSort  *ss = palloc0(sizeof(SpillSort));
	AttrNumber *cols = palloc(nkeys * sizeof(AttrNumber));
	Oid		   *ops = palloc(nkeys * sizeof(Oid));
	Oid		   *collations = palloc(nkeys * sizeof(Oid));
	bool	   *nulls_first = palloc(nkeys * sizeof(bool));
	int			work_mem_kb = Max(64, maintenance_work_mem / 2);

	Assert(ncols > 0 && nkeys > 0 && nkeys <= ncols);
	ss->desc = CreateTemplateTupleDesc(ncols);
	for (int i = 0; i < ncols; i++)
	{
		/* pass-by-value types only: a row is its Datums, nothing to copy */
		Assert(types[i] == INT8OID || types[i] == FLOAT8OID);
		TupleDescInitEntry(ss->desc, (AttrNumber) (i + 1), NULL, types[i], -1, 0);
	}
	for (int i = 0; i < nkeys; i++)
	{
		cols[i] = (AttrNumber) (i + 1);
		ops[i] = types[i] == INT8OID ? Int8LessOperator : Float8LessOperator;
		collations[i] = InvalidOid;
		nulls_first[i] = false;
	}
	/* tuplesort copies the keys into its own SortSupport array */
	ss->sort = tuplesort_begin_heap(ss->desc, nkeys, cols, ops, collations,
									nulls_first, work_mem_kb,
									NULL, sortopt);
	ss->in = MakeSingleTupleTableSlot(ss->desc, &TTSOpsVirtual);
	ss->out = MakeSingleTupleTableSlot(ss->desc, &TTSOpsMinimalTuple);
	ss->sortopt = sortopt;
	pfree(cols);
	pfree(ops);
	pfree(collations);
	pfree(nulls_first);
	return ss;
}

/* Put one row of the descriptor's ncols values, none of them null. */
void
spill_sort_put(SpillSort *ss, const Datum *values)
{
	int			ncols = ss->desc->natts;

	ExecClearTuple(ss->in);
	memcpy(ss->in->tts_values, values, ncols * sizeof(Datum));
	memset(ss->in->tts_isnull, 0, ncols * sizeof(bool));
	ExecStoreVirtualTuple(ss->in);
	tuplesort_puttupleslot(ss->sort, ss->in);
	ss->n++;
}

void
spill_sort_perform(SpillSort *ss)
{
	tuplesort_performsort(ss->sort);
}

/* The next row of a performed sort (all columns), or NULL at its end. */
const Datum *
spill_sort_next(SpillSort *ss)
{
	if (!tuplesort_gettupleslot(ss->sort, true, false, ss->out, NULL))
		return NULL;
	slot_getallattrs(ss->out);
	return ss->out->tts_values;
}

/*
 * The next row, when the caller reads no more than it put: an early end
 * is a broken sort, not data, hence elog.  `what` names the rows in the
 * message ("points", "rectangles").
 */
const Datum *
spill_sort_get(SpillSort *ss, const char *what)
{
	const Datum *v = spill_sort_next(ss);

	if (v == NULL)
		elog(ERROR, "external sort of a bulk load returned fewer than " INT64_FORMAT " %s",
			 ss->n, what);
	return v;
}

/* Back to the first row, for a second pass over the sorted stream. */
void
spill_sort_rescan(SpillSort *ss)
{
	Assert(ss->sortopt & TUPLESORT_RANDOMACCESS);
	tuplesort_rescan(ss->sort);
}

int64
spill_sort_count(const SpillSort *ss)
{
	return ss->n;
}

void
spill_sort_end(SpillSort *ss)
{
	tuplesort_end(ss->sort);
	ExecDropSingleTupleTableSlot(ss->in);
	ExecDropSingleTupleTableSlot(ss->out);
	FreeTupleDesc(ss->desc);
	pfree(ss);
}

/*
 * Points by (address, x, y, id), every column a key: the order of the
 * in-memory loads' comparators (gridfile_bulk.c, xbrtree_bulk.c), total
 * once the id decides.  Random access: the grid file reads the sorted
 * points twice, and both loads read them while another sort fills (see
 * spill_sort_begin).
 */
enum
{
	SP_KEY, SP_X, SP_Y, SP_ID, SP_NCOLS
};

static const Oid sp_types[SP_NCOLS] = {
	[SP_KEY] = INT8OID,[SP_X] = FLOAT8OID,[SP_Y] = FLOAT8OID,[SP_ID] = INT8OID
};

SpillSort *
spill_points_begin(void)
{
	return spill_sort_begin(SP_NCOLS, sp_types, SP_NCOLS, TUPLESORT_RANDOMACCESS);
}

void
spill_points_put(SpillSort *ss, uint64 key, double x, double y, int64 id)
{
	Datum		v[SP_NCOLS];

	Assert(ss->desc->natts == SP_NCOLS);
	v[SP_KEY] = Int64GetDatum(sort_key_u64(key));
	v[SP_X] = Float8GetDatum(x);
	v[SP_Y] = Float8GetDatum(y);
	v[SP_ID] = Int64GetDatum(id);
	spill_sort_put(ss, v);
}

/* The next point (the caller reads no more than were put); returns its key. */
uint64
spill_points_get(SpillSort *ss, double *x, double *y, int64 *id)
{
	const Datum *v = spill_sort_get(ss, "points");

	Assert(ss->desc->natts == SP_NCOLS);
	*x = DatumGetFloat8(v[SP_X]);
	*y = DatumGetFloat8(v[SP_Y]);
	*id = DatumGetInt64(v[SP_ID]);
	return sort_key_to_u64(DatumGetInt64(v[SP_KEY]));
}

void
spill_file_read(BufFile *file, void *data, size_t size)
{
	if (BufFileRead(file, data, size) != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of a bulk load: %m")));
}

void
spill_file_rewind(BufFile *file)
{
	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind a temporary file of a bulk load: %m")));
}
