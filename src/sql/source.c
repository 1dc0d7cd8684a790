/*-------------------------------------------------------------------------
 *
 * source.c
 *	  Validating source tables and writing the SQL that reads them.
 *
 * IDENTIFICATION
 *	  src/sql/source.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/source.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

bool
source_type_is_geometry(Oid type)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
	bool		result;

	if (!HeapTupleIsValid(tup))
		return false;
	result = strcmp(NameStr(((Form_pg_type) GETSTRUCT(tup))->typname), "geometry") == 0;
	ReleaseSysCache(tup);
	return result;
}

/*
 * Check that relid can serve as a source: a relation with rows, an integer
 * id column and a geometry column, readable by the current user.  A
 * missing index on the id column only earns a NOTICE: refinement looks
 * candidates up by id and would scan the table each time.
 */
void
source_validate(Oid relid, const char *id_column, const char *geom_column)
{
	char		relkind;
	AttrNumber	id_att;

	source_validate_columns(relid, id_column, geom_column);
	relkind = get_rel_relkind(relid);
	id_att = get_attnum(relid, id_column);
	if (relkind == RELKIND_RELATION || relkind == RELKIND_MATVIEW ||
		relkind == RELKIND_PARTITIONED_TABLE)
	{
		char	   *relname = get_rel_name(relid);
		Oid			types[2] = {OIDOID, INT2OID};
		Datum		values[2] = {ObjectIdGetDatum(relid), Int16GetDatum(id_att)};
		bool		indexed;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (SPI_execute_with_args("SELECT 1 FROM pg_catalog.pg_index "
								  "WHERE indrelid = $1 AND indkey[0] = $2",
								  2, types, values, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not look up indexes of \"%s\"", relname);
		indexed = SPI_processed > 0;
		SPI_finish();
		if (!indexed)
			ereport(NOTICE,
					(errmsg("source table \"%s\" has no index on column \"%s\"",
							relname, id_column),
					 errdetail("Refinement fetches candidates by id and would scan the table for every query."),
					 errhint("CREATE UNIQUE INDEX ON %s (%s);",
							 quote_identifier(relname), quote_identifier(id_column))));
	}
}

/*
 * The checks of source_validate but the index on the id column: a relation
 * one can SELECT from, with an integer id column and a geometry column
 * (also festival.insert_many's table of rows).
 */
void
source_validate_columns(Oid relid, const char *id_column, const char *geom_column)
{
	char	   *relname = get_rel_name(relid);
	char		relkind;
	AttrNumber	id_att;
	AttrNumber	geom_att;
	Oid			id_type;
	Oid			geom_type;

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("source relation with OID %u does not exist", relid),
				 errhint("Name an existing table, view or materialized view.")));
	relkind = get_rel_relkind(relid);
	if (relkind != RELKIND_RELATION && relkind != RELKIND_VIEW &&
		relkind != RELKIND_MATVIEW && relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" cannot be a source: it is not a table, view or materialized view",
						relname),
				 errhint("Create a view over it and use the view as the source.")));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read source table \"%s\"", relname),
				 errhint("Ask for SELECT on \"%s\" from its owner.", relname)));

	id_att = get_attnum(relid, id_column);
	if (id_att == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", id_column, relname),
				 errhint("Name the id column with id_column => '...'.")));
	id_type = get_atttype(relid, id_att);
	if (id_type != INT2OID && id_type != INT4OID && id_type != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("id column \"%s\" of \"%s\" has type %s", id_column, relname,
						format_type_be(id_type)),
				 errhint("Object ids must be smallint, integer or bigint.")));

	geom_att = get_attnum(relid, geom_column);
	if (geom_att == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", geom_column, relname),
				 errhint("Name the geometry column with geom_column => '...'.")));
	geom_type = get_atttype(relid, geom_att);
	if (!source_type_is_geometry(geom_type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of \"%s\" has type %s, not geometry", geom_column,
						relname, format_type_be(geom_type)),
				 errhint("Name a geometry column with geom_column, or a view that casts to geometry.")));
}

void
source_require(OpenIndex *ix, const char *purpose)
{
	if (!OidIsValid(ix->cat.source))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" has no source table to %s", ix->name, purpose),
				 errhint("Create the index with source => 'table'::regclass.")));
	if (get_rel_name(ix->cat.source) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the source table of index \"%s\" no longer exists", ix->name),
				 errhint("Drop the index with festival.drop_index('%s').", ix->name)));
}

char *
source_relation(OpenIndex *ix)
{
	Oid			relid = ix->cat.source;

	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

char *
source_id_expr(OpenIndex *ix)
{
	return psprintf("%s", quote_identifier(ix->cat.id_column));
}

/* PostGIS's schema, quoted, looked up once per open index. */
const char *
source_postgis_schema(OpenIndex *ix)
{
	if (ix->postgis_schema == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(ix->cxt);

		ix->postgis_schema = catalog_postgis_schema();
		MemoryContextSwitchTo(old);
	}
	return ix->postgis_schema;
}

/* The source geometry, arcs linearised as PostGIS does for predicates. */
char *
source_linear_geom_expr(OpenIndex *ix)
{
	const char *g = quote_identifier(ix->cat.geom_column);
	const char *p = source_postgis_schema(ix);

	return psprintf("CASE WHEN %s.st_hasarc(%s) THEN %s.st_curvetoline(%s) ELSE %s END",
					p, g, p, g, g);
}

/* EWKB of the source geometry, arcs linearised as PostGIS does for predicates. */
char *
source_geom_expr(OpenIndex *ix)
{
	return psprintf("%s.st_asewkb(%s)", source_postgis_schema(ix),
					source_linear_geom_expr(ix));
}

/* SELECT id::int8, ewkb FROM source WHERE <where> */
char *
source_select_sql(OpenIndex *ix, const char *where)
{
	return psprintf("SELECT %s::int8, %s FROM %s WHERE %s",
					source_id_expr(ix), source_geom_expr(ix), source_relation(ix),
					where);
}

/*
 * The extent of a source's geometries, for structures whose grid or curve
 * covers a fixed space (structure.h, needs_extent).  A degenerate axis
 * (one point, a vertical line...) is widened to one unit so that the
 * extent is a proper rectangle.  False when the source has no geometry.
 */
bool
source_extent(Oid relid, const char *geom_column, double *box)
{
	char	   *p = catalog_postgis_schema();
	char	   *sql;
	bool		found = false;
	int			jit_level;

	sql = psprintf("SELECT %s.st_xmin(e), %s.st_ymin(e), %s.st_xmax(e), %s.st_ymax(e) "
				   "FROM (SELECT %s.st_extent(%s) AS e FROM %s) AS x WHERE e IS NOT NULL",
				   p, p, p, p, p, quote_identifier(geom_column),
				   quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
											  get_rel_name(relid)));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	jit_level = source_jit_off();
	if (SPI_execute(sql, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not compute the extent of the source table");
	source_jit_restore(jit_level);
	if (SPI_processed == 1)
	{
		for (int c = 0; c < 4; c++)
		{
			bool		isnull;

			box[c] = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc, c + 1, &isnull));
		}
		found = true;
	}
	SPI_finish();
	if (found)
		for (int axis = 0; axis < 2; axis++)
			if (!(box[axis] < box[axis + 2]))
			{
				box[axis] -= 0.5;
				box[axis + 2] += 0.5;
			}
	return found;
}

/*
 * Turn a boolean setting off in a new GUC nest level, which
 * AtEOXact_GUC(true, level) pops (and an ERROR at (sub)transaction abort).
 */
static int
setting_off(const char *name)
{
	int			nest_level = NewGUCNestLevel();

	(void) set_config_option(name, "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nest_level;
}

/*
 * Source queries are planned with jit = off, in a GUC nest level that
 * source_jit_restore() pops (an ERROR in between pops it at (sub)transaction
 * abort).  The planner decides JIT (PlannedStmt.jitFlags), so the setting
 * only has to hold while the query is planned: around SPI_cursor_open or
 * around each SPI_execute_plan, whose custom and generic plans are made there.
 *
 * Why: a source query calls PostGIS on every row, so JIT has nothing to
 * compile that is worth its cost (at jit_above_cost, a build of 300,000 rows
 * spends about a quarter of a second in LLVM before the first row).  And a
 * statement_timeout or cancel that arrives during that compile, in a session
 * where no PostGIS function has run yet, corrupts the heap: PostGIS's SIGINT
 * handler touches a thread-local variable of postgis-3.so, whose first use
 * makes glibc malloc its TLS block inside the signal handler, while the
 * interrupted code is itself inside malloc (LLVM).  It happens without
 * festival too (about 1 in 300 fresh sessions with a timeout in the compile
 * window, none in 700 with jit = off).
 */
int
source_jit_off(void)
{
	return setting_off("jit");
}

void
source_jit_restore(int nest_level)
{
	AtEOXact_GUC(true, nest_level);
}

/*
 * Reading a source cursor in batches sized by time: a batch whose rows
 * (fetched and handled) took under 50 ms doubles the next, up to 10,000
 * rows; one over 200 ms halves it, down to 16.  A slow source (a view
 * computing its geometries) is then read a fraction of a second at a time,
 * so progress counted per row (stats/progress.h) stays close to its time,
 * and a fast one in large fetches.  Each fetch runs in a context reset at
 * the next: SPI_cursor_fetch allocates its receiver in the caller's
 * context (SPI's, which lives until SPI_finish).
 */
void
source_fetch_init(SourceFetch *fetch)
{
	fetch->cxt = AllocSetContextCreate(CurrentMemoryContext, "festival source fetch",
									   ALLOCSET_SMALL_SIZES);
	fetch->count = 256;
	fetch->last_ns = 0;
}

/* The next batch (SPI_processed rows in SPI_tuptable); 0 at the end. */
uint64
source_fetch(Portal portal, SourceFetch *fetch)
{
	MemoryContext old;
	int64		now = fest_now_ns();

	if (fetch->last_ns != 0)
	{
		int64		took = now - fetch->last_ns;

		if (took < 50 * INT64CONST(1000000))
			fetch->count = Min(fetch->count * 2, 10000);
		else if (took > 200 * INT64CONST(1000000))
			fetch->count = Max(fetch->count / 2, 16);
	}
	fetch->last_ns = now;
	MemoryContextReset(fetch->cxt);
	old = MemoryContextSwitchTo(fetch->cxt);
	SPI_cursor_fetch(portal, true, fetch->count);
	MemoryContextSwitchTo(old);
	return SPI_processed;
}

/* A read-only, no-scroll cursor over sql, planned with JIT off. */
Portal
source_open_cursor(const char *sql)
{
	int			jit_level = source_jit_off();
	Portal		portal;

	portal = SPI_cursor_open_with_args(NULL, sql, 0, NULL, NULL, NULL, true,
									   CURSOR_OPT_NO_SCROLL);
	source_jit_restore(jit_level);
	return portal;
}

char *
source_null_id_message(OpenIndex *ix)
{
	return psprintf("source table %s has a row with a NULL id and a geometry",
					source_relation(ix));
}

/*
 * A scan reads its rows in the order the source's plan gives them, and a
 * build inserts them in that order, which decides the tree.  A sequential
 * scan of a table larger than a quarter of shared_buffers would, with
 * synchronize_seqscans on, start where another scan of the table is, or
 * where the last one stopped: after a cancelled or failed scan (a build
 * stopped half-way, a cursor closed early) the next build of the same table
 * inserted the rows rotated, and built a different tree with different
 * counts (docs/operations-and-queries.md, "Insertion order").  The setting is off
 * for the scan, from its first row to source_scan_end (the heap scan
 * begins at the first fetch), in a GUC nest level that an ERROR pops.
 */
void
source_scan_begin(SourceScan *scan, const char *sql,
				  const char *null_id_message, const char *null_id_hint)
{
	scan->guc_level = setting_off("synchronize_seqscans");
	scan->portal = source_open_cursor(sql);
	source_fetch_init(&scan->fetch);
	scan->nrows = scan->next = 0;
	scan->null_id_message = null_id_message;
	scan->null_id_hint = null_id_hint;
}

/* The next row's id and EWKB; false after the last row. */
bool
source_scan_next(SourceScan *scan, int64 *id, bytea **ewkb)
{
	HeapTuple	tuple;
	bool		isnull;
	Datum		id_datum;

	if (scan->next >= scan->nrows)
	{
		if (scan->nrows > 0)
			SPI_freetuptable(SPI_tuptable);
		scan->nrows = source_fetch(scan->portal, &scan->fetch);
		scan->next = 0;
		if (scan->nrows == 0)
			return false;
	}
	CHECK_FOR_INTERRUPTS();
	tuple = SPI_tuptable->vals[scan->next++];
	id_datum = SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg_internal("%s", scan->null_id_message),
				 errhint("%s", scan->null_id_hint)));
	*id = DatumGetInt64(id_datum);
	*ewkb = DatumGetByteaPP(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull));
	return true;
}

void
source_scan_end(SourceScan *scan)
{
	SPI_cursor_close(scan->portal);
	AtEOXact_GUC(true, scan->guc_level);
}
