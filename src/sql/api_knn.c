/*-------------------------------------------------------------------------
 *
 * api_knn.c
 *	  festival.knn(): the k nearest indexed objects to a geometry.
 *
 * The search is index/knn.c's best-first search.  Objects whose MBR
 * distance is only a lower bound are measured here, in batches: their
 * distance to g is computed by PostGIS's ST_Distance through SPI, over the
 * same linearised shapes festival indexes and refines (arcs through
 * ST_CurveToLine), and handed back to the search.
 *
 * Why ST_Distance and not GEOS: the answer is specified as
 *	SELECT id, ST_Distance(geom, g) FROM source ORDER BY 2, id LIMIT k
 * and PostGIS computes distances with its own code (liblwgeom), not with
 * GEOS.  The two differ in the last bits for segments, which would change
 * the order of near-ties and the reported values.  Through SPI the values
 * are PostGIS's own, and the fetch by id the refinement needs anyway does
 * the measuring in the same statement.  Points against a point query need
 * no measuring: the MBR distance is computed as PostGIS computes point
 * distances (geom/mbr.h), bit for bit.
 *
 * Nodes are read in groups as festival.knn_batch and
 * festival.knn_speculative say (knn.c's header).
 *
 * Order: by distance, then id; with ties at the k-th distance the
 * smallest ids are returned.  k larger than the index returns everything.
 *
 * IDENTIFICATION
 *	  src/sql/api_knn.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/geomarg.h"
#include "sql/query_exec.h"
#include "sql/source.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "index/knn.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(festival_knn);
PG_FUNCTION_INFO_V1(festival_knn_batch_ids);

/* Candidates measured per statement, at least and at most. */
#define KNN_REFINE_MIN	64
#define KNN_REFINE_MAX	4096

/* The measuring statement, prepared on first need. */
typedef struct KnnMeasure
{
	OpenIndex  *ix;
	MemoryContext cxt;			/* where the search allocates */
	SPIPlanPtr	plan;
	bytea	   *query_ewkb;
	int64		missing;		/* candidates not found in the source */
} KnnMeasure;

static void
measure_open(KnnMeasure *m, OpenIndex *ix, bytea *query_ewkb)
{
	char	   *p;
	char	   *sql;
	Oid			argtypes[2] = {INT8ARRAYOID, BYTEAOID};

	source_require(ix, "measure distances against");
	p = pstrdup(source_postgis_schema(ix));
	sql = psprintf("SELECT %s::int8, %s.st_distance(%s, %s.st_geomfromewkb($2)) FROM %s WHERE %s = ANY($1)",
				   source_id_expr(ix), p, source_linear_geom_expr(ix), p,
				   source_relation(ix), source_id_expr(ix));
	memset(m, 0, sizeof(*m));
	m->ix = ix;
	m->cxt = CurrentMemoryContext;
	m->query_ewkb = query_ewkb;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	m->plan = SPI_prepare(sql, 2, argtypes);
	if (m->plan == NULL)
		elog(ERROR, "could not prepare the distance query: %s",
			 SPI_result_code_string(SPI_result));
	MemoryContextSwitchTo(m->cxt);
}

/* Measure n candidates and hand each found one back to the search. */
static void
measure_batch(KnnMeasure *m, KnnSearch *search, const int64 *ids, int n)
{
	FestStats  *stats = &m->ix->op.stats;
	int64		start = fest_now_ns();
	int64		start_cpu = m->ix->op.track_cpu ? fest_cpu_ns() : 0;
	int64	   *sorted = palloc(n * sizeof(int64));
	bool	   *found = palloc0(n * sizeof(bool));
	Datum		args[2];
	int			jit_level;

	CHECK_FOR_INTERRUPTS();
	memcpy(sorted, ids, n * sizeof(int64));
	qsort(sorted, n, sizeof(int64), cmp_int64);
	args[0] = flat_array_datum(sorted, n, INT8OID);
	args[1] = PointerGetDatum(m->query_ewkb);

	jit_level = source_jit_off();
	if (SPI_execute_plan(m->plan, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "distance query failed");
	source_jit_restore(jit_level);
	MemoryContextSwitchTo(m->cxt);
	stats->refine_fetch_ns += fest_now_ns() - start;
	stats->candidates += n;

	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[r];
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull));
		Datum		dist = SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull);
		int64	   *pos = bsearch(&id, sorted, n, sizeof(int64), cmp_int64);

		if (pos != NULL)
			found[pos - sorted] = true;
		if (isnull)
			continue;			/* NULL geometry: no distance, no neighbour */
		stats->refined++;
		knn_push_exact(search, id, DatumGetFloat8(dist));
	}
	SPI_freetuptable(SPI_tuptable);
	MemoryContextSwitchTo(m->cxt);

	for (int i = 0; i < n; i++)
		if (!found[i])
			m->missing++;
	pfree(DatumGetPointer(args[0]));
	pfree(sorted);
	pfree(found);
	stats->refine_ns += fest_now_ns() - start;
	if (m->ix->op.track_cpu)
		stats->refine_cpu_ns += fest_cpu_ns() - start_cpu;
}

static void
measure_close(KnnMeasure *m)
{
	SPI_finish();
	MemoryContextSwitchTo(m->cxt);
	if (m->missing > 0)
		ereport(WARNING,
				(errmsg(INT64_FORMAT " indexed objects of index \"%s\" are missing from its source table",
						m->missing, m->ix->name),
				 errdetail("Their distance cannot be measured and they are left out of the answer."),
				 errhint("Keep the source and the index in step; festival.check('%s') compares them.",
						 m->ix->name)));
}

/* Where knn_answer hands its neighbours, in order. */
typedef void (*KnnEmit) (void *arg, int64 id, double distance);

/*
 * The k nearest neighbours of g, in order of distance then id, handed to
 * emit.  measure is opened on the first candidate that needs measuring
 * (*measuring) and left open for the caller's next query (a batch
 * prepares the measuring statement once); the caller closes it.
 */
static void
knn_answer(OpenIndex *ix, const GeomArg *g, int32 k, KnnMeasure *measure,
		   bool *measuring, KnnEmit emit, void *arg)
{
	KnnSearch  *search = NULL;
	bool		exact = g->info.is_point && (ix->meta.flags & FEST_META_ALL_POINTS) != 0;
	int32		returned = 0;

	if (exact && ix->structure->knn != NULL)
	{
		/* the structure's own search (StructureOps.knn): distances from the index */
		int64	   *ids;
		double	   *distances;
		int			n = ix->structure->knn(&ix->sidx, g->info.box.xmin, g->info.box.ymin,
										   k, &ids, &distances);

		Assert(n <= k);
		for (int i = 0; i < n; i++)
			emit(arg, ids[i], distances[i]);
		ix->op.stats.filter_exact += n;
		ix->op.stats.results += n;
		returned = k;			/* skips the generic search below */
	}
	else
	{
		KnnReading	reading = {fest_knn_batch, fest_knn_speculative};

		search = knn_begin(&ix->sidx, &g->info.box, exact, k, &reading);
	}
	if (*measuring)
		measure->query_ewkb = g->ewkb;
	while (returned < k)
	{
		int64		id;
		double		distance;
		const int64 *ids;
		int			n;
		KnnStep		step;

		step = knn_next(search,
						Min(Max(k - returned, KNN_REFINE_MIN), KNN_REFINE_MAX),
						&id, &distance, &ids, &n);
		if (step == KNN_DONE)
			break;
		if (step == KNN_REFINE)
		{
			if (!*measuring)
			{
				measure_open(measure, ix, g->ewkb);
				*measuring = true;
			}
			measure_batch(measure, search, ids, n);
		}
		else
		{
			emit(arg, id, distance);
			if (exact)
				ix->op.stats.filter_exact++;
			ix->op.stats.results++;
			returned++;
		}
	}
	ix->op.stats.queries++;
	ix->op.stats.knn_queries++;
}

/* festival.knn's rows: one (id, distance) each. */
typedef struct KnnRows
{
	Tuplestorestate *out;
	TupleDesc	desc;
} KnnRows;

static void
knn_emit_row(void *arg, int64 id, double distance)
{
	KnnRows    *rows = (KnnRows *) arg;
	Datum		values[2] = {Int64GetDatum(id), Float8GetDatum(distance)};
	bool		nulls[2] = {false, false};

	tuplestore_putvalues(rows->out, rows->desc, values, nulls);
}

/* The k argument of knn and knn_batch_ids: given and positive. */
static int32
knn_k_arg(FunctionCallInfo fcinfo, int argno)
{
	int32		k;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("k must not be NULL"),
				 errhint("Give the number of neighbours to return, at least 1.")));
	k = PG_GETARG_INT32(argno);
	if (k <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must be positive, not %d", k),
				 errhint("Ask for at least one neighbour, for example k => 10.")));
	return k;
}

/*
 * festival.knn(index, g, k) RETURNS TABLE (id bigint, distance float8)
 */
Datum
festival_knn(PG_FUNCTION_ARGS)
{
	char		name_buf[FEST_NAME_MAXLEN + 1];
	char	   *name = ix_name_arg(fcinfo, 0, name_buf);
	GeomArg		g;
	int32		k;
	OpenIndex  *ix;
	KnnMeasure	measure;
	bool		measuring = false;
	KnnRows		rows;
	MemoryContext old;
	static const Oid result_types[2] = {INT8OID, FLOAT8OID};

	geomarg_get(fcinfo, 1, "query geometry", &g);
	k = knn_k_arg(fcinfo, 2);
	rows.desc = fest_init_materialized(fcinfo, 2, result_types);
	rows.out = ((ReturnSetInfo *) fcinfo->resultinfo)->setResult;

	ix = ix_begin_op(name, IX_READ);
	ix_require_built(ix);
	geomarg_check_srid(ix, &g.info, "query geometry", false);

	old = MemoryContextSwitchTo(ix->op.cxt);
	knn_answer(ix, &g, k, &measure, &measuring, knn_emit_row, &rows);
	if (measuring)
		measure_close(&measure);
	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	return (Datum) 0;
}

/* knn_batch_ids's neighbours of one query, gathered for its arrays. */
typedef struct KnnLists
{
	int64	   *ids;
	double	   *distances;
	int			n;
	int			max;
} KnnLists;

static void
knn_emit_list(void *arg, int64 id, double distance)
{
	KnnLists   *lists = (KnnLists *) arg;

	if (lists->n == lists->max)
	{
		lists->max *= 2;
		lists->ids = repalloc_huge(lists->ids, lists->max * sizeof(int64));
		lists->distances = repalloc_huge(lists->distances, lists->max * sizeof(double));
	}
	lists->ids[lists->n] = id;
	lists->distances[lists->n++] = distance;
}

/*
 * festival.knn_batch_ids(index, gs, k)
 *	 RETURNS TABLE (query_no int, ids bigint[], distances float8[])
 *
 * festival.knn for every geometry of gs in one call: the index is opened
 * once and the measuring statement prepared once; each query is its own
 * best-first search (knn_answer), in a memory context reset between
 * queries, so a batch holds one query's search at a time.
 */
Datum
festival_knn_batch_ids(PG_FUNCTION_ARGS)
{
	char		name_buf[FEST_NAME_MAXLEN + 1];
	char	   *name = ix_name_arg(fcinfo, 0, name_buf);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GeomArg    *gs;
	int			count;
	int32		k;
	OpenIndex  *ix;
	KnnMeasure	measure;
	bool		measuring = false;
	MemoryContext old;
	MemoryContext per_query;
	TupleDesc	desc;
	static const Oid result_types[3] = {INT4OID, INT8ARRAYOID, FLOAT8ARRAYOID};

	gs = geomarg_array(fcinfo, 1, "festival.knn", &count);
	k = knn_k_arg(fcinfo, 2);
	desc = fest_init_materialized(fcinfo, 3, result_types);

	ix = ix_begin_op(name, IX_READ);
	ix_require_built(ix);
	for (int i = 0; i < count; i++)
		geomarg_check_srid(ix, &gs[i].info,
						   psprintf("query geometry %d of the array", i + 1), false);

	per_query = AllocSetContextCreate(ix->op.cxt, "festival knn_batch_ids query",
									  ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(per_query);
	for (int i = 0; i < count; i++)
	{
		KnnLists	lists;
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		CHECK_FOR_INTERRUPTS();
		lists.n = 0;
		lists.max = Min(k, 1024);
		lists.ids = palloc(lists.max * sizeof(int64));
		lists.distances = palloc(lists.max * sizeof(double));
		knn_answer(ix, &gs[i], k, &measure, &measuring, knn_emit_list, &lists);

		values[0] = Int32GetDatum(i + 1);
		values[1] = flat_array_datum(lists.ids, lists.n, INT8OID);
		values[2] = flat_array_datum(lists.distances, lists.n, FLOAT8OID);
		tuplestore_putvalues(rsinfo->setResult, desc, values, nulls);
		/* the measuring statement's own memory is SPI's, kept across resets */
		MemoryContextReset(per_query);
	}
	if (measuring)
		measure_close(&measure);
	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	return (Datum) 0;
}
