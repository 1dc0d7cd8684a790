/*-------------------------------------------------------------------------
 *
 * api_batch.c
 *	  festival.query_batch() and festival.query_batch_ids(): many spatial
 *	  selections, one traversal.
 *
 * The filter step of every query runs in one traversal of the index
 * (index/batch_search.c, or the structure's own batch search:
 * StructureOps.search_batch) that reads each node once for all the queries
 * whose filter reaches it; refinement then runs query by query
 * (query_exec.c).  Row (query_no, id) means id is an answer of the
 * query_no-th geometry of the array (1-based), so the answer equals the
 * union over query_no of festival.query(index, gs[query_no], predicate).
 * query_batch_ids runs the same search and refinement and returns one row
 * (query_no, ids) per geometry, its answers as a sorted bigint[]: a
 * batch's rows are then as many as its queries, not its answers, so its
 * cost is the search rather than forming and storing a row per answer
 * (docs/operations-and-queries.md, "Cost").
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

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "index/batch_search.h"

PG_FUNCTION_INFO_V1(festival_query_batch);
PG_FUNCTION_INFO_V1(festival_query_batch_ids);

/* The array of query geometries as the queries of one selection each. */
static QueryAsk *
read_query_array(FunctionCallInfo fcinfo, int argno, int *count)
{
	GeomArg    *gs = geomarg_array(fcinfo, argno, "festival.query", count);
	QueryAsk   *asks = palloc0(*count * sizeof(QueryAsk));

	for (int i = 0; i < *count; i++)
		asks[i].g = gs[i];
	return asks;
}

/*
 * The two batches: the filter of every query in one traversal (the
 * structure's search_batch or the generic one), then refinement query by
 * query.  With as_arrays, one row (query_no, ids) per query, its answers
 * as a sorted bigint[]; otherwise rows (query_no, id).
 */
static void
query_batch_run(FunctionCallInfo fcinfo, bool as_arrays)
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
	TupleDesc	desc;

	asks = read_query_array(fcinfo, 1, &n);
	for (int i = 0; i < n; i++)
	{
		asks[i].predicate = predicate;
		asks[i].distance = distance;
		asks[i].refine = true;
	}
	if (as_arrays)
	{
		static const Oid result_types[2] = {INT4OID, INT8ARRAYOID};

		desc = fest_init_materialized(fcinfo, 2, result_types);
	}
	else
	{
		InitMaterializedSRF(fcinfo, 0);
		desc = rsinfo->setDesc;
	}

	ix = ix_begin_op(name, IX_READ);
	ix_require_built(ix);
	for (int i = 0; i < n; i++)
		geomarg_check_srid(ix, &asks[i].g.info,
						   psprintf("query geometry %d of the array", i + 1), false);

	old = MemoryContextSwitchTo(ix->op.cxt);
	specs = palloc(n * sizeof(SearchSpec));
	runs = palloc(n * sizeof(QueryRun));
	for (int i = 0; i < n; i++)
		query_run_init(&runs[i], ix, &asks[i], as_arrays ? NULL : rsinfo->setResult,
					   desc, i + 1, &specs[i]);
	if (ix->structure->search_batch != NULL && !fest_generic_query_batch)
		ix->structure->search_batch(&ix->sidx, specs, n);
	else
		tree_search_batch(&ix->sidx, specs, n);
	for (int i = 0; i < n; i++)
	{
		if (as_arrays)
		{
			Datum		values[2];
			bool		nulls[2] = {false, false};

			values[0] = Int32GetDatum(i + 1);
			values[1] = query_run_finish_ids(ix, &runs[i]);
			tuplestore_putvalues(rsinfo->setResult, desc, values, nulls);
			pfree(DatumGetPointer(values[1]));
		}
		else
			query_run_finish(ix, &runs[i]);
		/* this query's lists are done with: the batch holds one at a time */
		if (runs[i].accepted.ids)
			pfree(runs[i].accepted.ids);
		if (runs[i].candidates.ids)
			pfree(runs[i].candidates.ids);
		if (runs[i].refined.ids)
			pfree(runs[i].refined.ids);
	}
	MemoryContextSwitchTo(old);

	ix->op.stats.queries += n;
	ix->op.stats.batch_queries++;
	ix_end_op(ix);
}

/*
 * festival.query_batch(index, gs, predicate, distance)
 *	 RETURNS TABLE (query_no int, id bigint)
 */
Datum
festival_query_batch(PG_FUNCTION_ARGS)
{
	query_batch_run(fcinfo, false);
	return (Datum) 0;
}

/*
 * festival.query_batch_ids(index, gs, predicate, distance)
 *	 RETURNS TABLE (query_no int, ids bigint[])
 */
Datum
festival_query_batch_ids(PG_FUNCTION_ARGS)
{
	query_batch_run(fcinfo, true);
	return (Datum) 0;
}
