/*-------------------------------------------------------------------------
 *
 * api_batch.c
 *	  festival.query_batch(): many spatial selections, one traversal.
 *
 * The filter step of every query runs in one traversal of the index
 * (index/batch_search.c, or the structure's own batch search:
 * StructureOps.search_batch) that reads each node once for all the queries
 * whose filter reaches it; refinement then runs query by query
 * (query_exec.c).  Row (query_no, id) means id is an answer of the
 * query_no-th geometry of the array (1-based), so the answer equals the
 * union over query_no of festival.query(index, gs[query_no], predicate).
 *
 * IDENTIFICATION
 *	  src/sql/api_batch.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/geomarg.h"
#include "sql/query_exec.h"

#include "funcapi.h"
#include "index/batch_search.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(festival_query_batch);

/* Read the array of query geometries; NULL arrays and elements are errors. */
static QueryAsk *
read_query_array(FunctionCallInfo fcinfo, int argno, int *count)
{
	ArrayType  *array;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	QueryAsk   *asks;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("array of query geometries must not be NULL"),
				 errhint("Pass an array of geometries, such as ARRAY['POINT(0 0)'::geometry].")));
	array = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("array of query geometries must have one dimension, not %d",
						ARR_NDIM(array)),
				 errhint("Pass a one-dimensional array of geometries.")));
	if (ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("array of query geometries is empty"),
				 errhint("Pass at least one geometry, for example ARRAY[g1, g2], or use festival.query for one.")));

	get_typlenbyvalalign(ARR_ELEMTYPE(array), &typlen, &typbyval, &typalign);
	deconstruct_array(array, ARR_ELEMTYPE(array), typlen, typbyval, typalign,
					  &elems, &nulls, &n);
	asks = palloc0(n * sizeof(QueryAsk));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("query geometry %d of the array is NULL", i + 1),
					 errhint("Leave NULLs out, for example with array_remove(gs, NULL).")));
		geomarg_from_datum(fcinfo, argno, elems[i],
						   psprintf("query geometry %d of the array", i + 1),
						   &asks[i].g);
	}
	*count = n;
	return asks;
}

/*
 * festival.query_batch(index, gs, predicate, distance)
 *	 RETURNS TABLE (query_no int, id bigint)
 */
Datum
festival_query_batch(PG_FUNCTION_ARGS)
{
	char		name_buf[FEST_NAME_MAXLEN + 1];
	char	   *name = ix_name_arg(fcinfo, 0, name_buf);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FestPredicate predicate = predicate_parse(fest_text_arg(fcinfo, 2, "predicate"));
	double		distance = query_distance_arg(fcinfo, 3, predicate);
	QueryAsk   *asks;
	int			n;
	OpenIndex  *ix;
	SearchSpec *specs;
	QueryRun   *runs;
	MemoryContext old;

	asks = read_query_array(fcinfo, 1, &n);
	for (int i = 0; i < n; i++)
	{
		asks[i].predicate = predicate;
		asks[i].distance = distance;
		asks[i].refine = true;
	}
	InitMaterializedSRF(fcinfo, 0);

	ix = ix_begin_op(name, IX_READ);
	ix_require_built(ix);
	for (int i = 0; i < n; i++)
		geomarg_check_srid(ix, &asks[i].g.info,
						   psprintf("query geometry %d of the array", i + 1), false);

	old = MemoryContextSwitchTo(ix->op.cxt);
	specs = palloc(n * sizeof(SearchSpec));
	runs = palloc(n * sizeof(QueryRun));
	for (int i = 0; i < n; i++)
		query_run_init(&runs[i], ix, &asks[i], rsinfo->setResult,
					   rsinfo->setDesc, i + 1, &specs[i]);
	if (ix->structure->search_batch != NULL && !fest_generic_query_batch)
		ix->structure->search_batch(&ix->sidx, specs, n);
	else
		tree_search_batch(&ix->sidx, specs, n);
	for (int i = 0; i < n; i++)
		query_run_finish(ix, &runs[i]);
	MemoryContextSwitchTo(old);

	ix->op.stats.queries += n;
	ix->op.stats.batch_queries++;
	ix_end_op(ix);
	return (Datum) 0;
}
