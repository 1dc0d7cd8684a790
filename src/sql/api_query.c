/*-------------------------------------------------------------------------
 *
 * api_query.c
 *	  festival.query(): spatial selection with filter and refinement.
 *
 * The filter and the refinement are in query_exec.c.  The answer equals
 * PostGIS's brute force over the source,
 *	SELECT id FROM source WHERE ST_<predicate>(geom, g)
 * (ST_DWithin(geom, g, distance) for dwithin), as long as the index holds
 * the source's rows.
 *
 * IDENTIFICATION
 *	  src/sql/api_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/geomarg.h"
#include "sql/query_exec.h"

#include "funcapi.h"

PG_FUNCTION_INFO_V1(festival_query);

/*
 * festival.query(index, g, predicate, refine, distance) RETURNS TABLE (id bigint)
 */
Datum
festival_query(PG_FUNCTION_ARGS)
{
	char		name_buf[FEST_NAME_MAXLEN + 1];
	char	   *name = ix_name_arg(fcinfo, 0, name_buf);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	QueryAsk	ask;
	OpenIndex  *ix;
	SearchSpec	spec;
	QueryRun	qr;
	MemoryContext old;
	TupleDesc	desc;

	ask.predicate = predicate_parse(fest_text_arg(fcinfo, 2, "predicate"));
	ask.refine = fest_bool_arg(fcinfo, 3, "refine");
	ask.distance = query_distance_arg(fcinfo, 4, ask.predicate);
	geomarg_get(fcinfo, 1, "query geometry", &ask.g);
	desc = fest_init_int8_set(fcinfo, "id");

	ix = ix_begin_op(name, IX_READ);
	ix_require_built(ix);
	geomarg_check_srid(ix, &ask.g.info, "query geometry", false);

	old = MemoryContextSwitchTo(ix->op.cxt);
	query_run_init(&qr, ix, &ask, rsinfo->setResult, desc, 0, &spec);
	if (ix->structure->search != NULL)
		ix->structure->search(&ix->sidx, &spec);
	else
		tree_search(&ix->sidx, &spec);
	query_run_finish(ix, &qr);
	MemoryContextSwitchTo(old);

	ix->op.stats.queries++;
	ix_end_op(ix);
	return (Datum) 0;
}
