/*-------------------------------------------------------------------------
 *
 * api_query.c
 *	  festival.query(): spatial selection with filter and refinement.
 *
 * The filter step asks the structure for the entries whose MBRs may
 * satisfy the predicate (geom/predicate.h).  The refinement step fetches
 * the candidates' geometries from the source table by id and evaluates the
 * predicate exactly with GEOS (geom/refine.h).  Refinement is skipped only
 * where the filter is already exact: every indexed object is a point and
 * the query is a point or an axis-aligned rectangle.  With refine => false
 * the filter's candidates are returned as they are.
 *
 * The answer equals PostGIS's brute force over the source,
 *	SELECT id FROM source WHERE ST_<predicate>(geom, g),
 * as long as the index holds the source's rows.
 *
 * IDENTIFICATION
 *	  src/sql/api_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/geomarg.h"
#include "sql/source.h"

#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "geom/refine.h"
#include "lib/qunique.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(festival_query);

/* Candidates fetched from the source per statement during refinement. */
#define REFINE_BATCH 4096

/* A growable array of ids. */
typedef struct IdList
{
	int64	   *ids;
	int			n;
	int			max;
} IdList;

typedef struct QueryCollector
{
	Tuplestorestate *out;
	TupleDesc	desc;
	bool		refine;
	IdList		accepted;		/* answers without refinement */
	IdList		candidates;		/* ids to refine */
	FestStats  *stats;
} QueryCollector;

static void
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

static void
emit_id(QueryCollector *qc, int64 id)
{
	Datum		values[1] = {Int64GetDatum(id)};
	bool		nulls[1] = {false};

	tuplestore_putvalues(qc->out, qc->desc, values, nulls);
	qc->stats->results++;
}

/* Filter callback: an answer, or an id for refinement. */
static void
collect(void *arg, int64 id, const Mbr *box, FilterVerdict verdict)
{
	QueryCollector *qc = (QueryCollector *) arg;

	qc->stats->candidates++;
	if (verdict == FILTER_ACCEPT || !qc->refine)
	{
		if (verdict == FILTER_ACCEPT)
			qc->stats->filter_exact++;
		idlist_add(&qc->accepted, id);
	}
	else
		idlist_add(&qc->candidates, id);
}

static int
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
		qsort(list->ids, list->n, sizeof(int64), cmp_int64);
		list->n = (int) qunique(list->ids, list->n, sizeof(int64), cmp_int64);
	}
}

/*
 * Answers are ids, each once: an object indexed twice (the same id and
 * MBR inserted twice) is one row of the source and one answer.  Accepted
 * ids are emitted; candidates already accepted need no refinement.
 */
static void
emit_accepted(QueryCollector *qc)
{
	int			kept = 0;
	int			a = 0;

	idlist_sort_unique(&qc->accepted);
	for (int i = 0; i < qc->accepted.n; i++)
		emit_id(qc, qc->accepted.ids[i]);

	idlist_sort_unique(&qc->candidates);
	for (int i = 0; i < qc->candidates.n; i++)
	{
		int64		id = qc->candidates.ids[i];

		while (a < qc->accepted.n && qc->accepted.ids[a] < id)
			a++;
		if (a < qc->accepted.n && qc->accepted.ids[a] == id)
			continue;
		qc->candidates.ids[kept++] = id;
	}
	qc->candidates.n = kept;
}

/*
 * Refinement: fetch the candidates' geometries from the source in batches
 * and keep those satisfying the predicate.  Ids missing from the source
 * cannot be answers (brute force over the source would not return them);
 * they are counted and reported once.
 */
static void
refine_candidates(OpenIndex *ix, QueryCollector *qc, const GeomArg *g,
				  FestPredicate predicate)
{
	FestStats  *stats = &ix->op_stats;
	int64		start = fest_now_ns();
	int64		start_cpu = fest_cpu_ns();
	Refiner    *refiner;
	char	   *sql;
	SPIPlanPtr	plan;
	Oid			argtypes[1] = {INT8ARRAYOID};
	int			n;
	int64		missing = 0;
	bool	   *found;

	source_require(ix, "refine candidates against");

	n = qc->candidates.n;		/* sorted and unique (emit_accepted) */
	found = palloc0(n * sizeof(bool));

	refiner = refiner_create((const uint8 *) VARDATA_ANY(g->ewkb),
							 VARSIZE_ANY_EXHDR(g->ewkb), predicate);
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
		Datum	   *ids = palloc(count * sizeof(Datum));
		ArrayType  *array;
		Datum		args[1];
		int64		fetch_start;

		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < count; i++)
			ids[i] = Int64GetDatum(qc->candidates.ids[first + i]);
		array = construct_array(ids, count, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE);
		args[0] = PointerGetDatum(array);

		fetch_start = fest_now_ns();
		if (SPI_execute_plan(plan, args, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "refinement query failed");
		stats->refine_fetch_ns += fest_now_ns() - fetch_start;

		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tuple = SPI_tuptable->vals[r];
			bool		isnull;
			int64		id = DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull));
			Datum		geom = SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull);
			int64	   *pos = bsearch(&id, qc->candidates.ids + first, count,
									  sizeof(int64), cmp_int64);
			bytea	   *wkb;

			if (pos != NULL)
				found[pos - qc->candidates.ids] = true;
			if (isnull)
				continue;		/* NULL geometry: no predicate holds */
			wkb = DatumGetByteaPP(geom);
			stats->refined++;
			if (refiner_test(refiner, (const uint8 *) VARDATA_ANY(wkb),
							 VARSIZE_ANY_EXHDR(wkb), id))
				emit_id(qc, id);
		}
		SPI_freetuptable(SPI_tuptable);
		pfree(array);
		pfree(ids);
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
	stats->refine_cpu_ns += fest_cpu_ns() - start_cpu;
}

/*
 * festival.query(index, g, predicate, refine) RETURNS TABLE (id bigint)
 */
Datum
festival_query(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	FestPredicate predicate = predicate_parse(fest_text_arg(fcinfo, 2, "predicate"));
	bool		refine = fest_bool_arg(fcinfo, 3, "refine");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GeomArg		g;
	OpenIndex  *ix;
	SearchSpec	spec;
	QueryCollector qc;
	MemoryContext old;

	geomarg_get(fcinfo, 1, "query geometry", &g);
	fest_init_int8_set(fcinfo, "id");

	ix = ix_begin_op(name, IX_READ);
	geomarg_check_srid(ix, &g.info, "query geometry", false);

	memset(&qc, 0, sizeof(qc));
	qc.out = rsinfo->setResult;
	qc.desc = rsinfo->setDesc;
	qc.refine = refine;
	qc.stats = &ix->op_stats;

	memset(&spec, 0, sizeof(spec));
	spec.predicate = predicate;
	spec.query = g.info.box;
	spec.shape = g.info.is_point ? QUERY_POINT
		: g.info.is_rectangle ? QUERY_RECTANGLE : QUERY_GENERAL;
	spec.exact_points = refine && spec.shape != QUERY_GENERAL &&
		(ix->meta.flags & FEST_META_ALL_POINTS) != 0;
	spec.emit = collect;
	spec.arg = &qc;

	old = MemoryContextSwitchTo(ix->op_cxt);
	ix->structure->search(&ix->sidx, &spec);
	emit_accepted(&qc);
	if (qc.candidates.n > 0)
		refine_candidates(ix, &qc, &g, predicate);
	MemoryContextSwitchTo(old);

	ix->op_stats.queries++;
	ix_end_op(ix);
	return (Datum) 0;
}
