/*-------------------------------------------------------------------------
 *
 * api_insert_many.c
 *	  festival.insert_many(): the rows of a table or of a query, inserted
 *	  as one modification.
 *
 * The rows come as festival.build reads its source: through SPI, as the
 * calling user (table privileges and row security apply), planned with
 * jit = off (source.c), the geometry linearised and handed over as EWKB,
 * rows whose geometry is NULL skipped.  A table names its id and geometry
 * columns (id_column, geom_column); a query's first column is the id, its
 * second the geometry.  Every row is checked as festival.insert checks its
 * argument before anything changes.
 *
 * Methods: 'insert' (every structure) inserts the rows one at a time with
 * the structure's insertion algorithm; a structure may offer bulk
 * insertions of its own (StructureOps.insert_methods: the xBR+-tree's
 * 'bulk' and 'bulk_ssd', Fevgas 2019 §3.6).  Whatever the method, the
 * whole batch is one modification, committed once at the end
 * (docs/durability.md): an ERROR anywhere, a cancel included, leaves the
 * index as it was; a crash leaves it as it was or with every row of the
 * batch (the write-through store writes the batch's pages at that one
 * commit, its journal and FAST's and eFIND's logs hold it as one group);
 * and the call returns only once the batch is as durable as one
 * festival.insert would be.  The node store holds every page the batch
 * changes until that commit, so a batch costs memory in proportion to the
 * pages it changes.
 *
 * IDENTIFICATION
 *	  src/sql/api_insert_many.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/geomarg.h"
#include "sql/source.h"
#include "sql/progress.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(festival_insert_many);

/*
 * The rows to insert: "SELECT id, geom FROM table" or the user's query,
 * whose first two columns must be an integer id and a geometry.  Opened
 * once to look at its columns (nothing is fetched), and checked.
 */
static char *
rows_query(OpenIndex *ix, Oid relid, const char *query, const char *id_column,
		   const char *geom_column)
{
	char	   *inner;
	Portal		portal;
	TupleDesc	desc;
	Oid			id_type;
	Oid			geom_type;
	const char *p = source_postgis_schema(ix);

	if (OidIsValid(relid))
	{
		source_validate_columns(relid, id_column, geom_column);
		inner = psprintf("SELECT %s, %s FROM %s", quote_identifier(id_column),
						 quote_identifier(geom_column),
						 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
													get_rel_name(relid)));
	}
	else
		inner = pstrdup(query);

	portal = source_open_cursor(inner);
	desc = portal->tupDesc;
	if (desc == NULL || desc->natts < 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the query of festival.insert_many returns %d column%s, not an id and a geometry",
						desc == NULL ? 0 : desc->natts,
						desc != NULL && desc->natts == 1 ? "" : "s"),
				 errhint("Write the query as SELECT id, geom FROM ...")));
	id_type = TupleDescAttr(desc, 0)->atttypid;
	geom_type = TupleDescAttr(desc, 1)->atttypid;
	if (id_type != INT2OID && id_type != INT4OID && id_type != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the first column of the rows of festival.insert_many has type %s, not an integer id",
						format_type_be(id_type)),
				 errhint("Object ids must be smallint, integer or bigint.")));
	if (!source_type_is_geometry(geom_type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the second column of the rows of festival.insert_many has type %s, not geometry",
						format_type_be(geom_type)),
				 errhint("Write the query as SELECT id, geom FROM ..., the geometry second.")));
	SPI_cursor_close(portal);

	return psprintf("SELECT q.i::int8, %s.st_asewkb(CASE WHEN %s.st_hasarc(q.g) THEN %s.st_curvetoline(q.g) ELSE q.g END) "
					"FROM (%s) AS q(i, g) WHERE q.g IS NOT NULL",
					p, p, p, inner);
}

/*
 * festival.insert_many(index, source, query, id_column, geom_column, method)
 *	 RETURNS bigint: the rows inserted.
 */
Datum
festival_insert_many(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	Oid			relid = PG_ARGISNULL(1) ? InvalidOid : PG_GETARG_OID(1);
	char	   *query = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));
	char	   *id_column = fest_sqlname_arg(fcinfo, 3, "id_column");
	char	   *geom_column = fest_sqlname_arg(fcinfo, 4, "geom_column");
	char	   *method_name = fest_text_arg(fcinfo, 5, "insert_many method");
	const BuildMethod *method;
	OpenIndex  *ix;
	char	   *sql;
	int64		rows = 0;
	BulkSpill  *spill = NULL;
	MemoryContext row_cxt;
	MemoryContext old;
	Progress   *progress;
	SourceScan	scan;
	int64		id;
	bytea	   *ewkb;

	if (OidIsValid(relid) == (query != NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("festival.insert_many takes either a source table or a query"),
				 errhint("Give source => 'table'::regclass, or query => 'SELECT id, geom FROM ...'.")));

	ix = ix_begin_op(name, IX_MODIFY);
	ix_require_writable(ix);
	method = structure_method_lookup(ix->structure, ix->structure->insert_methods,
									 method_name, "insert_many", "row");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	sql = rows_query(ix, relid, query, id_column, geom_column);
	progress = ix_progress_begin(ix, "insert_many");
	progress_phase(progress, method == NULL ? "inserting rows" : "reading the rows",
				   "rows", -1);

	/* the rows' checks and a row's insertion in a context reset per row */
	row_cxt = AllocSetContextCreate(ix->op.cxt, "festival.insert_many row",
									ALLOCSET_DEFAULT_SIZES);
	if (method != NULL)
	{
		old = MemoryContextSwitchTo(ix->op.cxt);
		spill = ix->structure->bulk_insert_begin(&ix->sidx, method->name);
		MemoryContextSwitchTo(old);
	}

	source_scan_begin(&scan, sql, "a row of festival.insert_many has a NULL id and a geometry",
					  "Every inserted row needs an id; leave such rows out.");
	while (source_scan_next(&scan, &id, &ewkb))
	{
		WkbInfo		info;
		char	   *what;

		old = MemoryContextSwitchTo(row_cxt);
		what = psprintf("geometry of the row with id " INT64_FORMAT, id);
		geomarg_check_wkb((const uint8 *) VARDATA_ANY(ewkb), VARSIZE_ANY_EXHDR(ewkb),
						  what, &info);
		geomarg_admit(ix, &info, what);
		if (spill == NULL)
		{
			ix->structure->insert(&ix->sidx, id, &info.box);
			MemoryContextSwitchTo(old);
		}
		else
		{
			BulkItem	item;

			item.box = info.box;
			item.id = id;
			MemoryContextSwitchTo(ix->op.cxt);
			ix->structure->bulk_insert_put(spill, &item);
			MemoryContextSwitchTo(old);
		}
		MemoryContextReset(row_cxt);
		rows++;
		progress_step(progress, 1);
	}
	source_scan_end(&scan);
	SPI_finish();

	old = MemoryContextSwitchTo(ix->op.cxt);
	if (spill != NULL)
		ix->structure->bulk_insert_finish(&ix->sidx, spill);
	/* the batch: one modification */
	ix->meta.entry_count += rows;
	ix_commit(ix);
	MemoryContextSwitchTo(old);
	ix->op.stats.inserts += rows;
	ix_end_op(ix);
	PG_RETURN_INT64(rows);
}
