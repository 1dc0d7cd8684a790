/*-------------------------------------------------------------------------
 *
 * query_exec.h
 *	  Filter and refinement of spatial selections, shared by
 *	  festival.query() and festival.query_batch().
 *
 * One QueryRun collects the filter's output for one query geometry: ids
 * accepted without refinement and candidates to refine.  query_run_finish()
 * emits the accepted ids, then fetches the remaining candidates'
 * geometries from the source in batches and emits those satisfying the
 * predicate (GEOS, geom/refine.h).  Each id is emitted once.  Rows are
 * (id) for a single query and (query_no, id) for a batch.  Without a
 * tuplestore (out NULL) the answers are kept instead, and
 * query_run_finish_ids() returns them as one sorted bigint[] (the array
 * batches: festival.query_batch_ids).
 *
 * IDENTIFICATION
 *	  src/sql/query_exec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_QUERY_EXEC_H
#define FEST_QUERY_EXEC_H

#include "festival.h"
#include "geom/predicate.h"
#include "sql/geomarg.h"
#include "sql/handle.h"

#include "utils/tuplestore.h"

/* A growable array of ids. */
typedef struct IdList
{
	int64	   *ids;
	int			n;
	int			max;
} IdList;

/* What one query of a selection asks, after its arguments were checked. */
typedef struct QueryAsk
{
	GeomArg		g;
	FestPredicate predicate;
	double		distance;		/* dwithin */
	bool		refine;
} QueryAsk;

typedef struct QueryRun
{
	Tuplestorestate *out;		/* NULL: answers kept in accepted, refined */
	TupleDesc	desc;
	int32		query_no;		/* > 0: the first column of each row */
	const QueryAsk *ask;
	IdList		accepted;		/* answers without refinement */
	IdList		candidates;		/* ids to refine */
	IdList		refined;		/* without out: candidates that passed */
	MemoryContext cxt;			/* of the lists (refinement runs in SPI's) */
	FestStats  *stats;
	HeapTuple	row;			/* with out: the row template, formed once */
	char	   *row_id;			/* where row's id column lies */
} QueryRun;

extern double query_distance_arg(FunctionCallInfo fcinfo, int argno,
								 FestPredicate predicate);
extern void query_run_init(QueryRun *qr, OpenIndex *ix, const QueryAsk *ask,
						   Tuplestorestate *out, TupleDesc desc,
						   int32 query_no, SearchSpec *spec);
extern void query_run_finish(OpenIndex *ix, QueryRun *qr);
extern Datum query_run_finish_ids(OpenIndex *ix, QueryRun *qr);

extern void idlist_add(IdList *list, int64 id);
extern int	cmp_int64(const void *a, const void *b);

#endif							/* FEST_QUERY_EXEC_H */
