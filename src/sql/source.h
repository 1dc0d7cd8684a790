/*-------------------------------------------------------------------------
 *
 * source.h
 *	  The source table of an index: validation and SQL text.
 *
 * An index may name a source table (any relation one can SELECT from) with
 * an integer id column and a geometry column.  build() reads it, query()
 * refines candidates against it, check() compares counts with it.  All of
 * that runs as the calling user, so table privileges apply as usual.
 *
 * IDENTIFICATION
 *	  src/sql/source.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_SOURCE_H
#define FEST_SOURCE_H

#include "sql/handle.h"

#include "utils/portal.h"

extern void source_validate(Oid relid, const char *id_column,
							const char *geom_column);
extern void source_validate_columns(Oid relid, const char *id_column,
									const char *geom_column);
extern bool source_type_is_geometry(Oid type);
extern void source_require(OpenIndex *ix, const char *purpose);
extern char *source_select_sql(OpenIndex *ix, const char *where);
extern char *source_relation(OpenIndex *ix);
extern bool source_extent(Oid relid, const char *geom_column, double *box);
extern char *source_id_expr(OpenIndex *ix);
extern char *source_geom_expr(OpenIndex *ix);
extern const char *source_postgis_schema(OpenIndex *ix);
extern char *source_linear_geom_expr(OpenIndex *ix);
extern int	source_jit_off(void);
extern void source_jit_restore(int nest_level);
/* A source cursor's batches (source_fetch). */
typedef struct SourceFetch
{
	MemoryContext cxt;			/* reset at every fetch */
	long		count;			/* rows of the next fetch */
	int64		last_ns;		/* when the last fetch began */
} SourceFetch;

extern void source_fetch_init(SourceFetch *fetch);
extern uint64 source_fetch(Portal portal, SourceFetch *fetch);

#endif							/* FEST_SOURCE_H */
