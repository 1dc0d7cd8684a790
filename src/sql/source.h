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

extern Portal source_open_cursor(const char *sql);

/*
 * The rows (id, geometry) of a source query, one at a time: a cursor read
 * by source_fetch.  A row's EWKB stays valid until the next call.  A NULL
 * id is an ERROR with the caller's message and hint.  SPI must be
 * connected around it.
 */
typedef struct SourceScan
{
	Portal		portal;
	SourceFetch fetch;
	uint64		nrows;			/* rows of the current batch (SPI_tuptable) */
	uint64		next;			/* row of the current batch to hand out */
	const char *null_id_message;
	const char *null_id_hint;
	int			guc_level;		/* synchronize_seqscans off until the end */
} SourceScan;

/* The NULL-id error of build() and check() reading an index's source. */
#define SOURCE_NULL_ID_HINT "Every indexed row needs an id."
extern char *source_null_id_message(OpenIndex *ix);

extern void source_scan_begin(SourceScan *scan, const char *sql,
							  const char *null_id_message, const char *null_id_hint);
extern bool source_scan_next(SourceScan *scan, int64 *id, bytea **ewkb);
extern void source_scan_end(SourceScan *scan);

#endif							/* FEST_SOURCE_H */
