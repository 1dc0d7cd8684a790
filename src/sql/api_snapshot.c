/*-------------------------------------------------------------------------
 *
 * api_snapshot.c
 *	  Structure statistics and node dumps.
 *
 *	festival.snapshot(index)			one row of festival.index_snapshot:
 *										height, nodes, entries, fill,
 *										coverage, overlap and dead space,
 *										per level and in total, and the
 *										overflow nodes of a structure
 *										that has them (the FOR-tree's)
 *	festival.dump(index, snapshot)		every node of the tree as a row of
 *										festival.index_node (PostGIS
 *										geometries), for QGIS and
 *										scripts/render-dump
 *
 * Both walk the tree with tree_measure() (index/measure.c), which works for
 * every structure through the traversal contract.  A dump belongs to a
 * snapshot and must show the tree the snapshot measured: the tree's
 * fingerprint is compared with the snapshot's, so a dump of a snapshot
 * taken before the index changed is refused instead of mixing two trees.
 * Dumping a snapshot again replaces its rows (they are the same rows).
 *
 * IDENTIFICATION
 *	  src/sql/api_snapshot.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/describe.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "index/measure.h"
#include "tier/tier.h"
#include "utils/array.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(festival_snapshot);
PG_FUNCTION_INFO_V1(festival_dump);

/* Nodes written by one INSERT of a dump. */
#define DUMP_BATCH_NODES 10000

/*
 * Parameters of the INSERT INTO festival.index_snapshot of snapshot_store,
 * in the order of its column list ($1 is SNAP_PARAM_INDEX_ID + 1, ...).
 */
typedef enum SnapshotParam
{
	SNAP_PARAM_INDEX_ID,
	SNAP_PARAM_INDEX_NAME,
	SNAP_PARAM_STRUCTURE,
	SNAP_PARAM_CONFIG,
	SNAP_PARAM_SRID,
	SNAP_PARAM_HEIGHT,
	SNAP_PARAM_NODES,
	SNAP_PARAM_ENTRIES,
	SNAP_PARAM_OBJECTS,
	SNAP_PARAM_FILL,
	SNAP_PARAM_COVERAGE,
	SNAP_PARAM_OVERLAP,
	SNAP_PARAM_DEAD_SPACE,
	SNAP_PARAM_FINGERPRINT,
	SNAP_PARAM_NODES_PER_LEVEL,
	SNAP_PARAM_ENTRIES_PER_LEVEL,
	SNAP_PARAM_CAPACITY_PER_LEVEL,
	SNAP_PARAM_FILL_PER_LEVEL,
	SNAP_PARAM_COVERAGE_PER_LEVEL,
	SNAP_PARAM_OVERLAP_PER_LEVEL,
	SNAP_PARAM_DEAD_SPACE_PER_LEVEL,
	SNAP_PARAM_OVERFLOW_NODES,
	SNAP_PARAM_OVERFLOW_NODES_PER_LEVEL,
	SNAP_PARAM_OVERFLOW_ENTRIES_PER_LEVEL,
	SNAP_NPARAMS
} SnapshotParam;

/*
 * Parameters of the INSERT INTO festival.index_node of dump_store: the
 * unnested arrays in the order of its u(...) list, then the SRID.
 */
typedef enum NodeParam
{
	NODE_PARAM_SNAPSHOT_ID,
	NODE_PARAM_PAGE,
	NODE_PARAM_LEVEL,
	NODE_PARAM_PARENT,
	NODE_PARAM_ENTRIES,
	NODE_PARAM_BOX,				/* x0, y0, x1, y1: four parameters */
	NODE_PARAM_REGION = NODE_PARAM_BOX + 4, /* rx0 .. ry1: four parameters */
	NODE_PARAM_OVERFLOW = NODE_PARAM_REGION + 4,
	NODE_PARAM_SRID,
	NODE_NPARAMS
} NodeParam;

/* Columns of dump_check_snapshot's SELECT (SPI numbers columns from 1). */
#define SNAP_COL_INDEX_ID		1
#define SNAP_COL_INDEX_NAME		2
#define SNAP_COL_FINGERPRINT	3

/* A boolean[] of n elements, every one NULL when known is false. */
static Datum
bool_array(const bool *v, bool known, int n)
{
	Datum	   *d = palloc(Max(n, 1) * sizeof(Datum));
	bool	   *nulls = palloc(Max(n, 1) * sizeof(bool));
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
	{
		d[i] = BoolGetDatum(v[i]);
		nulls[i] = !known;
	}
	return PointerGetDatum(construct_md_array(d, nulls, 1, dims, lbs, BOOLOID,
											  1, true, TYPALIGN_CHAR));
}

/* A float8[] whose elements may be NULL (nulls may be NULL: none). */
static Datum
float8_array(const double *v, bool *nulls, int n)
{
	Datum	   *d = palloc(Max(n, 1) * sizeof(Datum));
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(v[i]);
	return PointerGetDatum(construct_md_array(d, nulls, 1, dims, lbs, FLOAT8OID,
											  sizeof(float8), FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
}

static void
spi_begin(void)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

/* Store tm as a new row of festival.index_snapshot; returns its id. */
static int64
snapshot_store(OpenIndex *ix, const TreeMeasure *tm)
{
	int			h = (int) tm->height;
	int64	   *nodes = palloc(h * sizeof(int64));
	int64	   *entries = palloc(h * sizeof(int64));
	int32	   *capacity = palloc(h * sizeof(int32));
	double	   *fill = palloc(h * sizeof(double));
	double	   *coverage = palloc(h * sizeof(double));
	double	   *overlap = palloc(h * sizeof(double));
	double	   *dead = palloc(h * sizeof(double));
	int64	   *onodes = palloc(h * sizeof(int64));
	int64	   *oentries = palloc(h * sizeof(int64));
	Oid			types[SNAP_NPARAMS] = {INT8OID, TEXTOID, TEXTOID, JSONBOID, INT4OID, INT4OID,
		INT8OID, INT8OID, INT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, INT8OID,
		INT8ARRAYOID, INT8ARRAYOID, INT4ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID,
	FLOAT8ARRAYOID, FLOAT8ARRAYOID, INT8OID, INT8ARRAYOID, INT8ARRAYOID};
	Datum		values[SNAP_NPARAMS];
	char		nulls[SNAP_NPARAMS];
	Oid			saved_user;
	int			saved_context;
	bool		isnull;
	int64		snapshot_id;

	for (int l = 0; l < h; l++)
	{
		nodes[l] = tm->levels[l].nodes;
		entries[l] = tm->levels[l].entries;
		capacity[l] = (int32) tm->levels[l].capacity;
		fill[l] = tm->levels[l].fill;
		coverage[l] = tm->levels[l].coverage;
		overlap[l] = tm->levels[l].overlap;
		dead[l] = tm->levels[l].dead_space;
		onodes[l] = tm->levels[l].overflow_nodes;
		oentries[l] = tm->levels[l].overflow_entries;
	}
	memset(nulls, ' ', sizeof(nulls));
	values[SNAP_PARAM_INDEX_ID] = Int64GetDatum(ix->cat.index_id);
	values[SNAP_PARAM_INDEX_NAME] = CStringGetTextDatum(ix->name);
	values[SNAP_PARAM_STRUCTURE] = CStringGetTextDatum(ix->cat.structure);
	values[SNAP_PARAM_CONFIG] = JsonbPGetDatum(ix_config_jsonb(ix));
	values[SNAP_PARAM_SRID] = Int32GetDatum(ix->meta.srid);
	if (!(ix->meta.flags & FEST_META_HAS_SRID))
		nulls[SNAP_PARAM_SRID] = 'n';
	values[SNAP_PARAM_HEIGHT] = Int32GetDatum(h);
	values[SNAP_PARAM_NODES] = Int64GetDatum(tm->nodes);
	values[SNAP_PARAM_ENTRIES] = Int64GetDatum(tm->entries);
	values[SNAP_PARAM_OBJECTS] = Int64GetDatum(tm->objects);
	values[SNAP_PARAM_FILL] = Float8GetDatum(tm->fill);
	values[SNAP_PARAM_COVERAGE] = Float8GetDatum(tm->coverage);
	values[SNAP_PARAM_OVERLAP] = Float8GetDatum(tm->overlap);
	values[SNAP_PARAM_DEAD_SPACE] = Float8GetDatum(tm->dead_space);
	values[SNAP_PARAM_FINGERPRINT] = Int64GetDatum((int64) tm->fingerprint);
	values[SNAP_PARAM_NODES_PER_LEVEL] = flat_array_datum(nodes, h, INT8OID);
	values[SNAP_PARAM_ENTRIES_PER_LEVEL] = flat_array_datum(entries, h, INT8OID);
	values[SNAP_PARAM_CAPACITY_PER_LEVEL] = flat_array_datum(capacity, h, INT4OID);
	values[SNAP_PARAM_FILL_PER_LEVEL] = float8_array(fill, NULL, h);
	values[SNAP_PARAM_COVERAGE_PER_LEVEL] = float8_array(coverage, NULL, h);
	values[SNAP_PARAM_OVERLAP_PER_LEVEL] = float8_array(overlap, NULL, h);
	values[SNAP_PARAM_DEAD_SPACE_PER_LEVEL] = float8_array(dead, NULL, h);
	/* structures without overflow nodes leave them NULL */
	values[SNAP_PARAM_OVERFLOW_NODES] = Int64GetDatum(tm->overflow_nodes);
	values[SNAP_PARAM_OVERFLOW_NODES_PER_LEVEL] = flat_array_datum(onodes, h, INT8OID);
	values[SNAP_PARAM_OVERFLOW_ENTRIES_PER_LEVEL] = flat_array_datum(oentries, h, INT8OID);
	if (!tm->has_overflow)
	{
		nulls[SNAP_PARAM_OVERFLOW_NODES] = 'n';
		nulls[SNAP_PARAM_OVERFLOW_NODES_PER_LEVEL] = 'n';
		nulls[SNAP_PARAM_OVERFLOW_ENTRIES_PER_LEVEL] = 'n';
	}

	spi_begin();
	catalog_begin_privileged(&saved_user, &saved_context);
	if (SPI_execute_with_args("INSERT INTO festival.index_snapshot (index_id, index_name, "
							  "structure, config, srid, height, nodes, entries, objects, fill, "
							  "coverage, overlap, dead_space, fingerprint, nodes_per_level, "
							  "entries_per_level, capacity_per_level, fill_per_level, "
							  "coverage_per_level, overlap_per_level, dead_space_per_level, "
							  "overflow_nodes, overflow_nodes_per_level, overflow_entries_per_level) "
							  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
							  "$14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24) RETURNING snapshot_id",
							  SNAP_NPARAMS, types, values, nulls, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not store the snapshot of index \"%s\"", ix->name);
	catalog_end_privileged(saved_user, saved_context);
	snapshot_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
											  SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return snapshot_id;
}

/*
 * festival.snapshot(index): measure the tree and store one row of
 * festival.index_snapshot; returns its snapshot_id.
 */
Datum
festival_snapshot(PG_FUNCTION_ARGS)
{
	OpenIndex  *ix = ix_begin_op(fest_name_arg(fcinfo, 0, "index"), IX_READ);
	MemoryContext old = MemoryContextSwitchTo(ix->op.cxt);
	TreeMeasure *tm = tree_measure(&ix->sidx, ix->structure);
	int64		snapshot_id = snapshot_store(ix, tm);

	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	PG_RETURN_INT64(snapshot_id);
}

/*
 * The snapshot a dump is asked for must exist, be of this index (the same
 * index_id: a dropped and recreated index of the same name is another
 * index) and still describe its tree.
 */
static void
dump_check_snapshot(OpenIndex *ix, int64 snapshot_id, const TreeMeasure *tm)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(snapshot_id)};
	bool		isnull;
	int64		index_id;
	char	   *index_name;
	int64		fingerprint;

	spi_begin();
	if (SPI_execute_with_args("SELECT index_id, index_name, fingerprint "
							  "FROM festival.index_snapshot WHERE snapshot_id = $1",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read snapshot " INT64_FORMAT, snapshot_id);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("snapshot " INT64_FORMAT " does not exist", snapshot_id),
				 errhint("festival.index_snapshot lists the snapshots; festival.dump('%s') takes a new one and dumps it.",
						 ix->name)));
	index_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, SNAP_COL_INDEX_ID, &isnull));
	index_name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, SNAP_COL_INDEX_NAME);
	fingerprint = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, SNAP_COL_FINGERPRINT, &isnull));

	if (index_id != ix->cat.index_id)
	{
		if (strcmp(index_name, ix->name) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("snapshot " INT64_FORMAT " was taken of an earlier index named \"%s\"",
							snapshot_id, index_name),
					 errdetail("That index was dropped; index \"%s\" is another one.", ix->name),
					 errhint("festival.dump('%s') takes a new snapshot and dumps it.", ix->name)));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snapshot " INT64_FORMAT " belongs to index \"%s\", not to \"%s\"",
						snapshot_id, index_name, ix->name),
				 errhint("festival.dump('%s') takes a new snapshot and dumps it.", ix->name)));
	}
	if ((uint64) fingerprint != tm->fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" changed since snapshot " INT64_FORMAT " was taken",
						ix->name, snapshot_id),
				 errdetail("A dump shows the tree its snapshot measured."),
				 errhint("festival.dump('%s') takes a new snapshot and dumps it.", ix->name)));
	SPI_finish();
}

/*
 * PostGIS expression for the rectangle in columns x0, y0, x1, y1 of u:
 * NULL when absent, a POINT or a LINESTRING when it is degenerate (an
 * envelope polygon with no area would be invalid), else a POLYGON as
 * ST_MakeEnvelope builds it.
 */
static char *
box_geometry_sql(const char *postgis, const char *x0, const char *y0,
				 const char *x1, const char *y1)
{
	const char *p = postgis;

	return psprintf("CASE WHEN u.%1$s IS NULL THEN NULL "
					"WHEN u.%1$s = u.%3$s AND u.%2$s = u.%4$s "
					"THEN %5$s.st_setsrid(%5$s.st_makepoint(u.%1$s, u.%2$s), $%6$d) "
					"WHEN u.%1$s = u.%3$s OR u.%2$s = u.%4$s "
					"THEN %5$s.st_setsrid(%5$s.st_makeline(%5$s.st_makepoint(u.%1$s, u.%2$s), "
					"%5$s.st_makepoint(u.%3$s, u.%4$s)), $%6$d) "
					"ELSE %5$s.st_makeenvelope(u.%1$s, u.%2$s, u.%3$s, u.%4$s, $%6$d) END",
					x0, y0, x1, y1, p, NODE_PARAM_SRID + 1);
}

/* The columns of one batch of nodes. */
typedef struct DumpBatch
{
	int64	   *page;
	int32	   *level;
	int64	   *parent;
	int32	   *entries;
	double	   *box[4];
	bool	   *box_null;
	double	   *region[4];
	bool	   *region_null;
	bool	   *overflow;
} DumpBatch;

static void
batch_set(DumpBatch *b, int i, const MeasuredNode *m)
{
	bool		has_box = !mbr_is_empty(&m->mbr);
	bool		has_region = m->has_region && !mbr_is_empty(&m->region);

	b->page[i] = (int64) m->page;
	b->level[i] = m->level;
	b->parent[i] = (int64) m->parent;
	b->entries[i] = (int32) m->nentries;
	b->box[0][i] = has_box ? m->mbr.xmin : 0;
	b->box[1][i] = has_box ? m->mbr.ymin : 0;
	b->box[2][i] = has_box ? m->mbr.xmax : 0;
	b->box[3][i] = has_box ? m->mbr.ymax : 0;
	b->box_null[i] = !has_box;
	b->region[0][i] = has_region ? m->region.xmin : 0;
	b->region[1][i] = has_region ? m->region.ymin : 0;
	b->region[2][i] = has_region ? m->region.xmax : 0;
	b->region[3][i] = has_region ? m->region.ymax : 0;
	b->region_null[i] = !has_region;
	b->overflow[i] = m->overflow;
}

/* Write every node of tm as rows of festival.index_node (replacing any). */
static void
dump_store(OpenIndex *ix, int64 snapshot_id, const TreeMeasure *tm)
{
	char	   *postgis = catalog_postgis_schema();
	Oid			types[NODE_NPARAMS] = {INT8OID, INT8ARRAYOID, INT4ARRAYOID, INT8ARRAYOID, INT4ARRAYOID,
		FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID,
		FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, BOOLARRAYOID, INT4OID};
	Datum		values[NODE_NPARAMS];
	char	   *sql;
	SPIPlanPtr	plan;
	DumpBatch	b;
	int			batch = (int) Min(tm->nnodes, DUMP_BATCH_NODES);
	int32		srid = (ix->meta.flags & FEST_META_HAS_SRID) ? ix->meta.srid : 0;
	Oid			saved_user;
	int			saved_context;
	Oid			del_types[1] = {INT8OID};
	Datum		del_values[1] = {Int64GetDatum(snapshot_id)};

	sql = psprintf("INSERT INTO festival.index_node "
				   "(snapshot_id, page, level, parent, entries, mbr, region, overflow) "
				   "SELECT $1, u.page, u.level, NULLIF(u.parent, 0), u.entries, %s, %s, u.overflow "
				   "FROM unnest($2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
				   "AS u(page, level, parent, entries, x0, y0, x1, y1, rx0, ry0, rx1, ry1, overflow)",
				   box_geometry_sql(postgis, "x0", "y0", "x1", "y1"),
				   box_geometry_sql(postgis, "rx0", "ry0", "rx1", "ry1"));

	b.page = palloc(batch * sizeof(int64));
	b.level = palloc(batch * sizeof(int32));
	b.parent = palloc(batch * sizeof(int64));
	b.entries = palloc(batch * sizeof(int32));
	b.box_null = palloc(batch * sizeof(bool));
	b.region_null = palloc(batch * sizeof(bool));
	b.overflow = palloc(batch * sizeof(bool));
	for (int k = 0; k < 4; k++)
	{
		b.box[k] = palloc(batch * sizeof(double));
		b.region[k] = palloc(batch * sizeof(double));
	}

	spi_begin();
	catalog_begin_privileged(&saved_user, &saved_context);
	if (SPI_execute_with_args("DELETE FROM festival.index_node WHERE snapshot_id = $1",
							  1, del_types, del_values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not remove the earlier dump of snapshot " INT64_FORMAT, snapshot_id);
	plan = SPI_prepare(sql, NODE_NPARAMS, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare the dump statement: %s", SPI_result_code_string(SPI_result));

	for (int64 start = 0; start < tm->nnodes; start += batch)
	{
		int			n = (int) Min(batch, tm->nnodes - start);

		for (int i = 0; i < n; i++)
			batch_set(&b, i, &tm->node_list[start + i]);
		values[NODE_PARAM_SNAPSHOT_ID] = Int64GetDatum(snapshot_id);
		values[NODE_PARAM_PAGE] = flat_array_datum(b.page, n, INT8OID);
		values[NODE_PARAM_LEVEL] = flat_array_datum(b.level, n, INT4OID);
		values[NODE_PARAM_PARENT] = flat_array_datum(b.parent, n, INT8OID);
		values[NODE_PARAM_ENTRIES] = flat_array_datum(b.entries, n, INT4OID);
		for (int k = 0; k < 4; k++)
		{
			values[NODE_PARAM_BOX + k] = float8_array(b.box[k], b.box_null, n);
			values[NODE_PARAM_REGION + k] = float8_array(b.region[k], b.region_null, n);
		}
		/* NULL for structures without overflow nodes */
		values[NODE_PARAM_OVERFLOW] = bool_array(b.overflow, tm->has_overflow, n);
		values[NODE_PARAM_SRID] = Int32GetDatum(srid);
		if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not store the nodes of snapshot " INT64_FORMAT, snapshot_id);
		/* the arrays of this batch (the two scalars are by value) */
		for (int i = NODE_PARAM_PAGE; i < NODE_PARAM_SRID; i++)
			pfree(DatumGetPointer(values[i]));
	}
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();
}

/* A tiered index: record the tier of each dumped node (docs/tiers.md). */
static void
dump_store_tiers(OpenIndex *ix, int64 snapshot_id, const TreeMeasure *tm)
{
	Oid			types[3] = {INT8OID, INT8ARRAYOID, TEXTARRAYOID};
	Datum		values[3];
	int64	   *pages = palloc(Max(tm->nnodes, 1) * sizeof(int64));
	Datum	   *tiers = palloc(Max(tm->nnodes, 1) * sizeof(Datum));
	int			dims[1] = {(int) tm->nnodes};
	int			lbs[1] = {1};
	Oid			saved_user;
	int			saved_context;

	for (int64 i = 0; i < tm->nnodes; i++)
	{
		pages[i] = (int64) tm->node_list[i].page;
		tiers[i] = CStringGetTextDatum(tier_page_tier(ix->tier, tm->node_list[i].page) == TIER_FAST
									   ? "fast" : "slow");
	}
	values[0] = Int64GetDatum(snapshot_id);
	values[1] = flat_array_datum(pages, (int) tm->nnodes, INT8OID);
	values[2] = PointerGetDatum(construct_md_array(tiers, NULL, 1, dims, lbs, TEXTOID,
												   -1, false, TYPALIGN_INT));
	spi_begin();
	catalog_begin_privileged(&saved_user, &saved_context);
	if (SPI_execute_with_args("UPDATE festival.index_node n SET tier = u.tier "
							  "FROM unnest($2, $3) AS u(page, tier) "
							  "WHERE n.snapshot_id = $1 AND n.page = u.page",
							  3, types, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not store the tiers of snapshot " INT64_FORMAT, snapshot_id);
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();
}

/*
 * festival.dump(index, snapshot DEFAULT NULL): store every node of the
 * tree in festival.index_node under the snapshot (a new one when NULL);
 * returns the snapshot_id.
 */
Datum
festival_dump(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	bool		take_new = PG_ARGISNULL(1);
	int64		snapshot_id = take_new ? 0 : PG_GETARG_INT64(1);
	OpenIndex  *ix = ix_begin_op(name, IX_READ);
	MemoryContext old = MemoryContextSwitchTo(ix->op.cxt);
	TreeMeasure *tm = tree_measure(&ix->sidx, ix->structure);

	if (take_new)
		snapshot_id = snapshot_store(ix, tm);
	else
		dump_check_snapshot(ix, snapshot_id, tm);
	dump_store(ix, snapshot_id, tm);
	if (ix->tier != NULL)
		dump_store_tiers(ix, snapshot_id, tm);

	MemoryContextSwitchTo(old);
	ix_end_op(ix);
	PG_RETURN_INT64(snapshot_id);
}
