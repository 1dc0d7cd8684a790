/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Reading and writing festival's catalog tables through SPI.
 *
 * The tables (festival.device, festival.index, festival.run) are readable
 * by everyone and writable only by the extension's owner.  Functions that
 * change them on a user's behalf switch to the owner for the statement
 * alone (catalog_begin_privileged), after they have done their own
 * permission checks; an ERROR in between restores the user at abort.
 *
 * Every function here connects to SPI itself and returns data allocated in
 * the caller's memory context.
 *
 * IDENTIFICATION
 *	  src/sql/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/catalog.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

static void
spi_connect(void)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

static void
spi_exec(const char *sql, int nargs, Oid *types, Datum *values,
		 const char *nulls, bool read_only, int expected)
{
	int			rc = SPI_execute_with_args(sql, nargs, types, values, nulls,
										   read_only, 0);

	if (rc != expected)
		elog(ERROR, "SPI statement failed (%s): %s", SPI_result_code_string(rc), sql);
}

/* Text of column col of row row, copied into cxt; NULL for SQL NULL. */
static char *
get_row_text(uint64 row, int col, MemoryContext cxt)
{
	char	   *value = SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col);

	return value ? MemoryContextStrdup(cxt, value) : NULL;
}

/* Text of column col of row 0. */
static char *
get_text(int col, MemoryContext cxt)
{
	return get_row_text(0, col, cxt);
}

static Datum
get_datum(int col, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, isnull);
}

/* The role that owns the extension; must be called inside SPI. */
static Oid
extension_owner(void)
{
	bool		isnull;
	Datum		d;

	spi_exec("SELECT extowner FROM pg_catalog.pg_extension WHERE extname = 'festival'",
			 0, NULL, NULL, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "extension \"festival\" is not installed");
	d = get_datum(1, &isnull);
	return DatumGetObjectId(d);
}

/*
 * Run the next catalog statement as the extension's owner.  Must be called
 * inside SPI; pair with catalog_end_privileged.
 */
void
catalog_begin_privileged(Oid *saved_user, int *saved_context)
{
	Oid			owner = extension_owner();

	GetUserIdAndSecContext(saved_user, saved_context);
	SetUserIdAndSecContext(owner, *saved_context | SECURITY_LOCAL_USERID_CHANGE);
}

void
catalog_end_privileged(Oid saved_user, int saved_context)
{
	SetUserIdAndSecContext(saved_user, saved_context);
}

/* A device from columns first_col.. of result row row. */
static void
device_from_result_row(DeviceSpec *spec, uint64 row, int first_col, MemoryContext cxt)
{
	spec->name = get_row_text(row, first_col, cxt);
	spec->directory = get_row_text(row, first_col + 1, cxt);
	spec->kind = device_parse_choice("kind", get_row_text(row, first_col + 2, cxt),
									 device_kind_names);
	spec->io_mode = device_parse_choice("io", get_row_text(row, first_col + 3, cxt),
										device_io_names);
	spec->engine = device_parse_choice("engine", get_row_text(row, first_col + 4, cxt),
									   device_engine_names);
	spec->profile = get_row_text(row, first_col + 5, cxt);
}

static void
device_from_row(DeviceSpec *spec, int first_col, MemoryContext cxt)
{
	device_from_result_row(spec, 0, first_col, cxt);
}

IndexCatalog *
catalog_load_index(const char *name, bool missing_ok)
{
	MemoryContext cxt = CurrentMemoryContext;
	IndexCatalog *cat = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	spi_connect();
	spi_exec("SELECT i.index_id, i.structure, i.owner::oid, i.options, i.source::oid, "
			 "       i.id_column::text, i.geom_column::text, i.file_name, "
			 "       d.name, d.directory, d.kind, d.io, d.engine, d.profile "
			 "FROM festival.index i JOIN festival.device d ON d.name = i.device "
			 "WHERE i.name = $1",
			 1, types, values, NULL, true, SPI_OK_SELECT);

	if (SPI_processed == 1)
	{
		bool		isnull;
		Jsonb	   *options;

		cat = MemoryContextAllocZero(cxt, sizeof(IndexCatalog));
		cat->index_id = DatumGetInt64(get_datum(1, &isnull));
		cat->name = MemoryContextStrdup(cxt, name);
		cat->structure = get_text(2, cxt);
		cat->owner = DatumGetObjectId(get_datum(3, &isnull));
		options = DatumGetJsonbP(get_datum(4, &isnull));
		cat->options = MemoryContextAlloc(cxt, VARSIZE(options));
		memcpy(cat->options, options, VARSIZE(options));
		cat->source = DatumGetObjectId(get_datum(5, &isnull));
		if (isnull)
			cat->source = InvalidOid;
		cat->id_column = get_text(6, cxt);
		cat->geom_column = get_text(7, cxt);
		cat->file_name = get_text(8, cxt);
		device_from_row(&cat->device, 9, cxt);
	}
	SPI_finish();

	if (cat == NULL && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("index \"%s\" does not exist", name),
				 errhint("festival.index lists the indices of this database; festival.create_index() makes one.")));
	return cat;
}

bool
catalog_index_exists(const char *name)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		exists;

	spi_connect();
	spi_exec("SELECT 1 FROM festival.index WHERE name = $1",
			 1, types, values, NULL, true, SPI_OK_SELECT);
	exists = SPI_processed > 0;
	SPI_finish();
	return exists;
}

DeviceSpec *
catalog_load_device(const char *name)
{
	MemoryContext cxt = CurrentMemoryContext;
	DeviceSpec *spec = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	spi_connect();
	spi_exec("SELECT name, directory, kind, io, engine, profile "
			 "FROM festival.device WHERE name = $1",
			 1, types, values, NULL, true, SPI_OK_SELECT);
	if (SPI_processed == 1)
	{
		spec = MemoryContextAllocZero(cxt, sizeof(DeviceSpec));
		device_from_row(spec, 1, cxt);
	}
	SPI_finish();

	if (spec == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("device \"%s\" does not exist", name),
				 errhint("festival.device lists the devices; a superuser creates them with festival.create_device().")));
	return spec;
}

int64
catalog_insert_index(const IndexCatalog *cat)
{
	Oid			types[9] = {TEXTOID, TEXTOID, OIDOID, TEXTOID, JSONBOID, OIDOID,
	TEXTOID, TEXTOID, TEXTOID};
	Datum		values[9];
	char		nulls[9] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	Oid			saved_user;
	int			saved_context;
	bool		isnull;
	int64		index_id;

	values[0] = CStringGetTextDatum(cat->name);
	values[1] = CStringGetTextDatum(cat->structure);
	values[2] = ObjectIdGetDatum(cat->owner);
	values[3] = CStringGetTextDatum(cat->device.name);
	values[4] = JsonbPGetDatum(cat->options);
	values[5] = ObjectIdGetDatum(cat->source);
	if (!OidIsValid(cat->source))
		nulls[5] = 'n';
	values[6] = CStringGetTextDatum(cat->id_column);
	values[7] = CStringGetTextDatum(cat->geom_column);
	values[8] = CStringGetTextDatum(cat->file_name);

	spi_connect();
	catalog_begin_privileged(&saved_user, &saved_context);
	spi_exec("INSERT INTO festival.index "
			 "(name, structure, owner, device, options, source, id_column, geom_column, file_name) "
			 "VALUES ($1, $2, $3::regrole, $4, $5, $6::regclass, $7, $8, $9) "
			 "RETURNING index_id",
			 9, types, values, nulls, false, SPI_OK_INSERT_RETURNING);
	catalog_end_privileged(saved_user, saved_context);
	index_id = DatumGetInt64(get_datum(1, &isnull));
	SPI_finish();
	return index_id;
}

void
catalog_delete_index(int64 index_id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(index_id)};
	Oid			saved_user;
	int			saved_context;

	spi_connect();
	catalog_begin_privileged(&saved_user, &saved_context);
	spi_exec("DELETE FROM festival.index WHERE index_id = $1",
			 1, types, values, NULL, false, SPI_OK_DELETE);
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();
}

/* Point index index_id at another file (festival.adopt_index). */
void
catalog_set_index_file(int64 index_id, const char *file_name)
{
	Oid			types[2] = {INT8OID, TEXTOID};
	Datum		values[2] = {Int64GetDatum(index_id), CStringGetTextDatum(file_name)};
	Oid			saved_user;
	int			saved_context;

	spi_connect();
	catalog_begin_privileged(&saved_user, &saved_context);
	spi_exec("UPDATE festival.index SET file_name = $2 WHERE index_id = $1",
			 2, types, values, NULL, false, SPI_OK_UPDATE);
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();
}

/* Does a row of festival.index name file_name (on any device)? */
bool
catalog_file_name_in_use(const char *file_name)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(file_name)};
	bool		in_use;

	spi_connect();
	spi_exec("SELECT 1 FROM festival.index WHERE file_name = $1",
			 1, types, values, NULL, true, SPI_OK_SELECT);
	in_use = SPI_processed > 0;
	SPI_finish();
	return in_use;
}

/* Every device of festival.device, by name, as a List of DeviceSpec. */
List *
catalog_list_devices(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	List	   *devices = NIL;

	spi_connect();
	spi_exec("SELECT name, directory, kind, io, engine, profile "
			 "FROM festival.device ORDER BY name",
			 0, NULL, NULL, NULL, true, SPI_OK_SELECT);
	for (uint64 row = 0; row < SPI_processed; row++)
	{
		DeviceSpec *spec = MemoryContextAllocZero(cxt, sizeof(DeviceSpec));

		device_from_result_row(spec, row, 1, cxt);
		devices = lappend(devices, spec);
	}
	SPI_finish();
	return devices;
}

/*
 * This database's identity (festival.database_identity): its OID and
 * random identifier.  A row made for another OID is the template's, copied
 * by CREATE DATABASE ... TEMPLATE: it is replaced by a fresh identifier
 * (under a lock, so concurrent first uses agree), as part of the caller's
 * transaction.  The row is made by CREATE EXTENSION, which a restore
 * runs, and is not dumped, so a restored database never has its source's.
 */
uint64
catalog_database_uid(void)
{
	const char *select = "SELECT database_oid, database_uid FROM festival.database_identity";
	uint64		uid = 0;
	bool		isnull;

	spi_connect();
	/*
	 * festival--0.1.sql changed in place while 0.1 was being written (before
	 * it was released and frozen in upgrade/): a
	 * database whose extension was created before index files had owners
	 * lacks the table.  Say so, rather than "relation does not exist".
	 */
	spi_exec("SELECT to_regclass('festival.database_identity') IS NULL", 0, NULL, NULL, NULL,
			 true, SPI_OK_SELECT);
	if (DatumGetBool(get_datum(1, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("festival's catalog in this database predates index file ownership: festival.database_identity is missing"),
				 errdetail("The extension was created by an earlier build of festival 0.1, whose SQL script had no such table."),
				 errhint("Create the extension anew (DROP EXTENSION festival CASCADE; CREATE EXTENSION festival CASCADE), which forgets the catalog and the runs but leaves the index files, or use another database.")));
	for (int attempt = 0; attempt < 2 && uid == 0; attempt++)
	{
		spi_exec(select, 0, NULL, NULL, NULL, false, SPI_OK_SELECT);
		if (SPI_processed == 1 &&
			DatumGetObjectId(get_datum(1, &isnull)) == MyDatabaseId)
			uid = (uint64) DatumGetInt64(get_datum(2, &isnull));
		else if (attempt == 0)
		{
			Oid			saved_user;
			int			saved_context;

			catalog_begin_privileged(&saved_user, &saved_context);
			spi_exec("LOCK TABLE festival.database_identity IN SHARE ROW EXCLUSIVE MODE",
					 0, NULL, NULL, NULL, false, SPI_OK_UTILITY);
			spi_exec(select, 0, NULL, NULL, NULL, false, SPI_OK_SELECT);
			if (SPI_processed != 1 ||
				DatumGetObjectId(get_datum(1, &isnull)) != MyDatabaseId)
			{
				Oid			types[2] = {OIDOID, INT8OID};
				Datum		values[2];
				uint64		fresh = 0;

				while (fresh == 0)
					if (!pg_strong_random(&fresh, sizeof(fresh)))
						ereport(ERROR,
								(errcode(ERRCODE_INTERNAL_ERROR),
								 errmsg("could not generate a random identifier for this database")));
				values[0] = ObjectIdGetDatum(MyDatabaseId);
				values[1] = Int64GetDatum((int64) fresh);
				elog(DEBUG1, "festival: this database has no identity of its own yet (a TEMPLATE copy); making one");
				spi_exec("DELETE FROM festival.database_identity",
						 0, NULL, NULL, NULL, false, SPI_OK_DELETE);
				spi_exec("INSERT INTO festival.database_identity (database_oid, database_uid) VALUES ($1, $2)",
						 2, types, values, NULL, false, SPI_OK_INSERT);
			}
			catalog_end_privileged(saved_user, saved_context);
		}
	}
	SPI_finish();
	if (uid == 0)
		elog(ERROR, "festival.database_identity has no identity for this database");
	return uid;
}

void
catalog_insert_device(const DeviceSpec *spec)
{
	Oid			types[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	Oid			saved_user;
	int			saved_context;

	values[0] = CStringGetTextDatum(spec->name);
	values[1] = CStringGetTextDatum(spec->directory);
	values[2] = CStringGetTextDatum(device_kind_names[spec->kind]);
	values[3] = CStringGetTextDatum(device_io_names[spec->io_mode]);
	values[4] = CStringGetTextDatum(device_engine_names[spec->engine]);
	if (spec->profile)
		values[5] = CStringGetTextDatum(spec->profile);
	else
		nulls[5] = 'n';
	/* recorded before the switch to the owner */
	values[6] = CStringGetTextDatum(GetUserNameFromId(GetUserId(), false));

	spi_connect();
	spi_exec("SELECT 1 FROM festival.device WHERE name = $1",
			 1, types, values, NULL, true, SPI_OK_SELECT);
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("device \"%s\" already exists", spec->name),
				 errhint("Choose another name, or drop it first with festival.drop_device().")));
	catalog_begin_privileged(&saved_user, &saved_context);
	spi_exec("INSERT INTO festival.device (name, directory, kind, io, engine, profile, created_by) "
			 "VALUES ($1, $2, $3, $4, $5, $6, $7)",
			 7, types, values, nulls, false, SPI_OK_INSERT);
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();
}

int
catalog_device_index_count(const char *name)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		isnull;
	int			count;

	spi_connect();
	spi_exec("SELECT count(*)::int4 FROM festival.index WHERE device = $1 OR options->>'fast_device' = $1",
			 1, types, values, NULL, true, SPI_OK_SELECT);
	count = DatumGetInt32(get_datum(1, &isnull));
	SPI_finish();
	return count;
}

void
catalog_delete_device(const char *name)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	Oid			saved_user;
	int			saved_context;

	spi_connect();
	catalog_begin_privileged(&saved_user, &saved_context);
	spi_exec("DELETE FROM festival.device WHERE name = $1",
			 1, types, values, NULL, false, SPI_OK_DELETE);
	catalog_end_privileged(saved_user, saved_context);
	SPI_finish();
}

/* The schema PostGIS is installed in, quoted for SQL text. */
char *
catalog_postgis_schema(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *schema = NULL;

	spi_connect();
	spi_exec("SELECT n.nspname FROM pg_catalog.pg_extension e "
			 "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
			 "WHERE e.extname = 'postgis'",
			 0, NULL, NULL, NULL, true, SPI_OK_SELECT);
	if (SPI_processed == 1)
		schema = MemoryContextStrdup(cxt, quote_identifier(get_text(1, cxt)));
	SPI_finish();
	if (schema == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"postgis\" is not installed"),
				 errhint("Run CREATE EXTENSION postgis.")));
	return schema;
}

/*
 * Describe the session holding a festival advisory lock, for error
 * messages; NULL if it cannot be found (it may have just ended).
 */
char *
catalog_lock_holder(const LOCKTAG *tag)
{
	MemoryContext cxt = CurrentMemoryContext;
	Oid			types[4] = {OIDOID, OIDOID, OIDOID, INT2OID};
	Datum		values[4];
	char	   *holder = NULL;
	Oid			saved_user;
	int			saved_context;

	values[0] = ObjectIdGetDatum(tag->locktag_field1);
	values[1] = ObjectIdGetDatum(tag->locktag_field2);
	values[2] = ObjectIdGetDatum(tag->locktag_field3);
	values[3] = Int16GetDatum((int16) tag->locktag_field4);

	spi_connect();

	/*
	 * As the extension's owner: pg_stat_activity hides another role's
	 * connection time and application from an unprivileged user, and the
	 * error is of no use without them.  A holder with no activity row is
	 * a backend that is exiting.
	 */
	catalog_begin_privileged(&saved_user, &saved_context);
	spi_exec("SELECT CASE WHEN a.pid IS NULL "
			 "  THEN format('process %s (a session that is ending)', l.pid) "
			 "  ELSE format('process %s (user %s, application \"%s\", connected since %s)', "
			 "       l.pid, coalesce(a.usename::text, '?'), "
			 "       coalesce(a.application_name, ''), "
			 "       coalesce(to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ'), '?')) END "
			 "FROM pg_catalog.pg_locks l "
			 "LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid "
			 "WHERE l.locktype = 'advisory' AND l.database = $1 "
			 "  AND l.classid = $2 AND l.objid = $3 AND l.objsubid = $4 "
			 "  AND l.granted AND l.pid <> pg_catalog.pg_backend_pid() "
			 "LIMIT 1",
			 4, types, values, NULL, true, SPI_OK_SELECT);
	catalog_end_privileged(saved_user, saved_context);
	if (SPI_processed == 1)
		holder = get_text(1, cxt);
	SPI_finish();
	return holder;
}

/* ------------------------------------------------------------ device profiles */

/* Positions in profile_columns (SPI numbers columns from 1). */
typedef enum ProfileColumn
{
	PROFILE_COL_KIND = 1,
	PROFILE_COL_READ_LATENCY,
	PROFILE_COL_WRITE_LATENCY,
	PROFILE_COL_SEQ_READ,
	PROFILE_COL_SEQ_WRITE,
	PROFILE_COL_RAND_READ_IOPS,
	PROFILE_COL_RAND_WRITE_IOPS,
	PROFILE_COL_CHANNELS,
	PROFILE_COL_INTERFERENCE,
	PROFILE_COL_FLASH_PAGE_BYTES,
	PROFILE_COL_PAGES_PER_BLOCK,
	PROFILE_COL_ERASE_LATENCY,
	PROFILE_COL_OVERPROVISION,
	PROFILE_COL_RPM,
	PROFILE_COL_TRACK_KB,
	PROFILE_COL_AVG_SEEK,
	PROFILE_COL_MODEL_VERSION,
	PROFILE_COL_CACHE_MB,
	PROFILE_COL_CACHE_HIT,
	PROFILE_COL_CACHE_WRITE_BACK,
	PROFILE_COL_INTERFACE,
	PROFILE_COL_CAPACITY,
	PROFILE_COL_MIN_SEEK,
	PROFILE_COL_READAHEAD,
} ProfileColumn;

static const char *const profile_columns =
	"kind, read_latency_us, write_latency_us, seq_read_mbps, seq_write_mbps, "
	"rand_read_iops_qd32, rand_write_iops_qd32, channels, interference_us, "
	"coalesce(flash_page_bytes, 0), coalesce(pages_per_block, 0), "
	"coalesce(erase_latency_us, 0), coalesce(overprovision_percent, 0), "
	"coalesce(rpm, 0), coalesce(track_kb, 0), coalesce(avg_seek_ms, 0), "
	"model_version, cache_mb, cache_hit_us, cache_write_back::int, "
	"coalesce(interface_mbps, 0), coalesce(capacity_gb, 0), coalesce(min_seek_ms, 0), readahead_kb";

static double
column_double(int col)
{
	char	   *value = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col);

	return value ? strtod(value, NULL) : 0;
}

static char *
profile_names(void)
{
	char	   *names;

	if (SPI_execute("SELECT string_agg(name, ', ' ORDER BY name) FROM festival.device_profile",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list device profiles");
	names = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	return names ? names : "(none)";
}

/*
 * The named profile, allocated in the caller's context; an unknown name is
 * an error whose hint lists the profiles.
 */
DeviceProfile *
catalog_load_profile(const char *name)
{
	MemoryContext cxt = CurrentMemoryContext;
	DeviceProfile *p;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	char	   *sql = psprintf("SELECT %s FROM festival.device_profile WHERE name = $1",
							   profile_columns);
	MemoryContext old;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, 1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read festival.device_profile");
	if (SPI_processed == 0)
	{
		char	   *names = profile_names();

		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("device profile \"%s\" does not exist", name),
				 errhint("Known profiles: %s.  Add one with INSERT INTO festival.device_profile.",
						 names)));
	}

	old = MemoryContextSwitchTo(cxt);
	p = palloc0(sizeof(DeviceProfile));
	p->name = pstrdup(name);
	p->kind = device_parse_choice("profile kind",
								  SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, PROFILE_COL_KIND),
								  profile_kind_names);
	p->read_latency_us = column_double(PROFILE_COL_READ_LATENCY);
	p->write_latency_us = column_double(PROFILE_COL_WRITE_LATENCY);
	p->seq_read_mbps = column_double(PROFILE_COL_SEQ_READ);
	p->seq_write_mbps = column_double(PROFILE_COL_SEQ_WRITE);
	p->rand_read_iops_qd32 = column_double(PROFILE_COL_RAND_READ_IOPS);
	p->rand_write_iops_qd32 = column_double(PROFILE_COL_RAND_WRITE_IOPS);
	p->channels = (int) column_double(PROFILE_COL_CHANNELS);
	p->interference_us = column_double(PROFILE_COL_INTERFERENCE);
	p->flash_page_bytes = (int) column_double(PROFILE_COL_FLASH_PAGE_BYTES);
	p->pages_per_block = (int) column_double(PROFILE_COL_PAGES_PER_BLOCK);
	p->erase_latency_us = column_double(PROFILE_COL_ERASE_LATENCY);
	p->overprovision_percent = column_double(PROFILE_COL_OVERPROVISION);
	p->rpm = column_double(PROFILE_COL_RPM);
	p->track_kb = (int) column_double(PROFILE_COL_TRACK_KB);
	p->avg_seek_ms = column_double(PROFILE_COL_AVG_SEEK);
	p->model_version = (int) column_double(PROFILE_COL_MODEL_VERSION);
	p->cache_mb = column_double(PROFILE_COL_CACHE_MB);
	p->cache_hit_us = column_double(PROFILE_COL_CACHE_HIT);
	p->cache_write_back = column_double(PROFILE_COL_CACHE_WRITE_BACK) != 0;
	p->interface_mbps = column_double(PROFILE_COL_INTERFACE);
	p->capacity_gb = column_double(PROFILE_COL_CAPACITY);
	p->min_seek_ms = column_double(PROFILE_COL_MIN_SEEK);
	p->readahead_kb = column_double(PROFILE_COL_READAHEAD);
	MemoryContextSwitchTo(old);
	SPI_finish();
	return p;
}
