/*-------------------------------------------------------------------------
 *
 * query_exec.c
 *	  Filter collection and refinement of spatial selections.
 *
 * The filter step asks the structure for the entries whose MBRs may
 * satisfy the predicate (geom/predicate.h).  The refinement step fetches
 * the candidates' geometries from the source table by id and evaluates the
 * predicate exactly with GEOS (geom/refine.h).  Refinement is skipped only
 * where the filter is already exact: every indexed object is a point and
 * the query is a point or an axis-aligned rectangle (for dwithin: a point).
 * With refine => false the filter's candidates are returned as they are.
 *
 * IDENTIFICATION
 *	  src/sql/query_exec.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/query_exec.h"
#include "sql/args.h"

#include "sql/source.h"

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "geom/refine.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

/* Candidates fetched from the source per statement during refinement. */
#define REFINE_BATCH 4096

/*
 * Answer ids are sorted (to emit each once, in increasing order) by an
 * LSD radix sort on 11-bit digits of id - min: ids of one index lie in a
 * range of a few million, two or three passes.  qsort with cmp_int64
 * called through a pointer spent about a third of a window query's CPU on
 * a 1M-point index (issue 26's profile).  Short lists and ids spread over
 * more than 2^33 go to the comparison sort below (PostgreSQL's
 * lib/sort_template.h, the comparison inlined).  Same order, same result.
 */
#define ST_SORT sort_int64
#define ST_ELEMENT_TYPE int64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : (*(a) > *(b) ? 1 : 0))
#define ST_SCOPE static
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

#define RADIX_BITS 11
#define RADIX_BUCKETS (1 << RADIX_BITS)
#define RADIX_MIN_IDS 256
#define RADIX_MAX_PASSES 3

static void
sort_ids(int64 *ids, int n)
{
	int64		min = ids[0];
	int64		max = ids[0];
	uint64		range;
	int			passes = 0;
	int64	   *src = ids;
	int64	   *dst;
	uint32		count[RADIX_BUCKETS];

	if (n < RADIX_MIN_IDS)
	{
		sort_int64(ids, n);
		return;
	}
	for (int i = 1; i < n; i++)
	{
		min = Min(min, ids[i]);
		max = Max(max, ids[i]);
	}
	range = (uint64) max - (uint64) min;
	while (passes <= RADIX_MAX_PASSES &&
		   (passes * RADIX_BITS >= 64 ? 0 : range >> (passes * RADIX_BITS)) != 0)
		passes++;
	if (passes > RADIX_MAX_PASSES)
	{
		sort_int64(ids, n);
		return;
	}
	dst = palloc(n * sizeof(int64));
	for (int p = 0; p < passes; p++)
	{
		int			shift = p * RADIX_BITS;
		uint32		sum = 0;
		int64	   *swap;

		memset(count, 0, sizeof(count));
		for (int i = 0; i < n; i++)
			count[(((uint64) src[i] - (uint64) min) >> shift) & (RADIX_BUCKETS - 1)]++;
		for (int b = 0; b < RADIX_BUCKETS; b++)
		{
			uint32		c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (int i = 0; i < n; i++)
			dst[count[(((uint64) src[i] - (uint64) min) >> shift) & (RADIX_BUCKETS - 1)]++] = src[i];
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != ids)
	{
		memcpy(ids, src, n * sizeof(int64));
		dst = src;
	}
	pfree(dst);
}

void
idlist_add(IdList *list, int64 id)
{
	if (list->n == list->max)
	{
		list->max = Max(256, list->max * 2);
		list->ids = list->ids
			? repalloc_huge(list->ids, list->max * sizeof(int64))
			: palloc(list->max * sizeof(int64));
	}
	list->ids[list->n++] = id;
}

int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

static void
idlist_sort_unique(IdList *list)
{
	if (list->n > 1)
	{
		int64	   *ids = list->ids;
		int			kept = 1;

		sort_ids(ids, list->n);
		/* qunique with the comparison inlined: sorted, so equal ids are adjacent */
		for (int i = 1; i < list->n; i++)
			if (ids[i] != ids[kept - 1])
				ids[kept++] = ids[i];
		list->n = kept;
	}
}

/*
 * The distance argument of a selection: required (finite, >= 0) for
 * dwithin, and refused with any other predicate, where it would mean
 * nothing.
 */
double
query_distance_arg(FunctionCallInfo fcinfo, int argno, FestPredicate predicate)
{
	bool		given = argno < PG_NARGS() && !PG_ARGISNULL(argno);
	double		d;

	if (predicate != PRED_DWITHIN)
	{
		if (given)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a distance applies only to predicate \"dwithin\""),
					 errdetail("The predicate is \"%s\".", predicate_names[predicate]),
					 errhint("Leave distance out, or use predicate => 'dwithin'.")));
		return 0.0;
	}
	if (!given)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("predicate \"dwithin\" needs a distance"),
				 errhint("Pass distance => d with d >= 0, in the units of the index's coordinates.")));
	d = PG_GETARG_FLOAT8(argno);
	if (!(d >= 0.0) || isinf(d))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("distance must be a finite number >= 0, not %g", d),
				 errhint("Pass distance => d with d >= 0, in the units of the index's coordinates.")));
	return d;
}

/*
 * The row template of a run with a tuplestore: ([query_no,] id), formed
 * once, so that each answer is its id written into the template and one
 * copy into the tuplestore, rather than a tuple formed per answer (its
 * size computed, the memory zeroed, each column filled): forming the rows
 * was a third of a 111,000-answer query_batch's CPU (docs/experiments.md,
 * "The row form of query_batch").  The columns are fixed-width and never
 * NULL, so the id lies at the aligned offset heap_fill_tuple gives it.
 */
static void
form_row_template(QueryRun *qr)
{
	TupleDesc	desc = qr->desc;
	Datum		values[2] = {0, 0};
	bool		nulls[2] = {false, false};
	MemoryContext old;
	uint32		off = 0;

	Assert(desc->natts == (qr->query_no > 0 ? 2 : 1));
	if (qr->query_no > 0)
		values[0] = Int32GetDatum(qr->query_no);
	old = MemoryContextSwitchTo(qr->cxt);
	qr->row = heap_form_tuple(desc, values, nulls);
	MemoryContextSwitchTo(old);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		Assert(att->attlen > 0 && att->attbyval);
		off = att_align_nominal(off, att->attalign);
		if (i < desc->natts - 1)
			off += att->attlen;
	}
	Assert(TupleDescAttr(desc, desc->natts - 1)->atttypid == INT8OID);
	qr->row_id = (char *) qr->row->t_data + qr->row->t_data->t_hoff + off;
}

static void
emit_id(QueryRun *qr, int64 id)
{
	if (qr->out == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(qr->cxt);

		idlist_add(&qr->refined, id);
		MemoryContextSwitchTo(old);
		qr->stats->results++;
		return;
	}
	if (qr->row == NULL)
		form_row_template(qr);
	memcpy(qr->row_id, &id, sizeof(int64));
#ifdef USE_ASSERT_CHECKING
	{
		bool		isnull;

		/* the id went where heap_getattr reads it */
		Assert(DatumGetInt64(heap_getattr(qr->row, qr->desc->natts, qr->desc, &isnull)) == id);
	}
#endif
	tuplestore_puttuple(qr->out, qr->row);
	qr->stats->results++;
}

/* Filter callback: an answer, or an id for refinement. */
static void
collect(void *arg, int64 id, const Mbr *box, FilterVerdict verdict)
{
	QueryRun   *qr = (QueryRun *) arg;

	qr->stats->candidates++;
	if (verdict == FILTER_ACCEPT || !qr->ask->refine)
	{
		if (verdict == FILTER_ACCEPT)
			qr->stats->filter_exact++;
		idlist_add(&qr->accepted, id);
	}
	else
		idlist_add(&qr->candidates, id);
}

/*
 * Set up the collection of one query and the SearchSpec that feeds it.
 */
void
query_run_init(QueryRun *qr, OpenIndex *ix, const QueryAsk *ask,
			   Tuplestorestate *out, TupleDesc desc, int32 query_no,
			   SearchSpec *spec)
{
	bool		all_points = (ix->meta.flags & FEST_META_ALL_POINTS) != 0;

	memset(qr, 0, sizeof(*qr));
	qr->out = out;
	qr->desc = desc;
	qr->query_no = query_no;
	qr->ask = ask;
	qr->stats = &ix->op.stats;
	qr->cxt = CurrentMemoryContext;

	memset(spec, 0, sizeof(*spec));
	spec->predicate = ask->predicate;
	spec->query = ask->g.info.box;
	spec->shape = ask->g.info.is_point ? QUERY_POINT
		: ask->g.info.is_rectangle ? QUERY_RECTANGLE : QUERY_GENERAL;
	if (ask->predicate == PRED_DWITHIN)
	{
		/* decided in predicate_filter, which knows the distance */
		spec->distance = ask->distance;
		spec->exact_distance = ask->refine && all_points;
	}
	else
		spec->exact_points = ask->refine && spec->shape != QUERY_GENERAL &&
			all_points;
	spec->emit = collect;
	spec->arg = qr;
}

/*
 * Answers are ids, each once: an object indexed twice (the same id and
 * MBR inserted twice) is one row of the source and one answer.  Accepted
 * ids are emitted; candidates already accepted need no refinement.
 */
static void
emit_accepted(QueryRun *qr)
{
	int			kept = 0;
	int			a = 0;

	idlist_sort_unique(&qr->accepted);
	if (qr->out != NULL)
		for (int i = 0; i < qr->accepted.n; i++)
			emit_id(qr, qr->accepted.ids[i]);
	else
		qr->stats->results += qr->accepted.n;	/* kept for the array */

	idlist_sort_unique(&qr->candidates);
	for (int i = 0; i < qr->candidates.n; i++)
	{
		int64		id = qr->candidates.ids[i];

		while (a < qr->accepted.n && qr->accepted.ids[a] < id)
			a++;
		if (a < qr->accepted.n && qr->accepted.ids[a] == id)
			continue;
		qr->candidates.ids[kept++] = id;
	}
	qr->candidates.n = kept;
}

/*
 * Refinement: fetch the candidates' geometries from the source in batches
 * and keep those satisfying the predicate.  Ids missing from the source
 * cannot be answers (brute force over the source would not return them);
 * they are counted and reported once.
 */
static void
refine_candidates(OpenIndex *ix, QueryRun *qr)
{
	FestStats  *stats = &ix->op.stats;
	int64		start = fest_now_ns();
	int64		start_cpu = ix->op.track_cpu ? fest_cpu_ns() : 0;
	const GeomArg *g = &qr->ask->g;
	Refiner    *refiner;
	char	   *sql;
	SPIPlanPtr	plan;
	Oid			argtypes[1] = {INT8ARRAYOID};
	int			n;
	int64		missing = 0;
	bool	   *found;

	source_require(ix, "refine candidates against");

	n = qr->candidates.n;		/* sorted and unique (emit_accepted) */
	found = palloc0(n * sizeof(bool));

	refiner = refiner_create((const uint8 *) VARDATA_ANY(g->ewkb),
							 VARSIZE_ANY_EXHDR(g->ewkb), qr->ask->predicate);
	if (qr->ask->predicate == PRED_DWITHIN)
		refiner_set_distance(refiner, qr->ask->distance);
	sql = source_select_sql(ix, psprintf("%s = ANY($1)", source_id_expr(ix)));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(sql, 1, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare refinement query: %s",
			 SPI_result_code_string(SPI_result));

	for (int first = 0; first < n; first += REFINE_BATCH)
	{
		int			count = Min(REFINE_BATCH, n - first);
		Datum		args[1];
		int64		fetch_start;
		int			jit_level;

		CHECK_FOR_INTERRUPTS();
		args[0] = flat_array_datum(qr->candidates.ids + first, count, INT8OID);

		fetch_start = fest_now_ns();
		jit_level = source_jit_off();
		if (SPI_execute_plan(plan, args, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "refinement query failed");
		source_jit_restore(jit_level);
		stats->refine_fetch_ns += fest_now_ns() - fetch_start;

		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tuple = SPI_tuptable->vals[r];
			bool		isnull;
			int64		id = DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull));
			Datum		geom = SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull);
			int64	   *pos = bsearch(&id, qr->candidates.ids + first, count,
									  sizeof(int64), cmp_int64);
			bytea	   *wkb;

			if (pos != NULL)
				found[pos - qr->candidates.ids] = true;
			if (isnull)
				continue;		/* NULL geometry: no predicate holds */
			wkb = DatumGetByteaPP(geom);
			stats->refined++;
			if (refiner_test(refiner, (const uint8 *) VARDATA_ANY(wkb),
							 VARSIZE_ANY_EXHDR(wkb), id))
				emit_id(qr, id);
		}
		SPI_freetuptable(SPI_tuptable);
		pfree(DatumGetPointer(args[0]));
	}
	SPI_finish();

	for (int i = 0; i < n; i++)
		if (!found[i])
			missing++;
	if (missing > 0)
		ereport(WARNING,
				(errmsg(INT64_FORMAT " indexed objects of index \"%s\" are missing from its source table",
						missing, ix->name),
				 errdetail("They cannot be refined and are left out of the answer."),
				 errhint("Keep the source and the index in step; festival.check('%s') compares them.",
						 ix->name)));

	stats->refine_ns += fest_now_ns() - start;
	if (ix->op.track_cpu)
		stats->refine_cpu_ns += fest_cpu_ns() - start_cpu;
}

/* After the filter: emit the accepted ids, refine the candidates. */
void
query_run_finish(OpenIndex *ix, QueryRun *qr)
{
	emit_accepted(qr);
	if (qr->candidates.n > 0)
		refine_candidates(ix, qr);
}

/*
 * As query_run_finish, for a run without a tuplestore: the answers as one
 * bigint[], ascending.  Accepted ids are sorted and unique, refined ones
 * unique and none of them accepted (emit_accepted), so a merge of the two
 * sorted lists is the sorted answer.
 */
Datum
query_run_finish_ids(OpenIndex *ix, QueryRun *qr)
{
	IdList	   *acc = &qr->accepted;
	IdList	   *ref = &qr->refined;
	int64	   *merged;
	int			a = 0;
	int			r = 0;
	int			n = 0;
	Datum		result;

	Assert(qr->out == NULL);
	query_run_finish(ix, qr);
	if (ref->n == 0)
		return flat_array_datum(acc->ids, acc->n, INT8OID);
	sort_ids(ref->ids, ref->n);
	if (acc->n == 0)
		return flat_array_datum(ref->ids, ref->n, INT8OID);
	merged = palloc((acc->n + ref->n) * sizeof(int64));
	while (a < acc->n && r < ref->n)
	{
		Assert(acc->ids[a] != ref->ids[r]);
		merged[n++] = acc->ids[a] < ref->ids[r] ? acc->ids[a++] : ref->ids[r++];
	}
	while (a < acc->n)
		merged[n++] = acc->ids[a++];
	while (r < ref->n)
		merged[n++] = ref->ids[r++];
	result = flat_array_datum(merged, n, INT8OID);
	pfree(merged);
	return result;
}
