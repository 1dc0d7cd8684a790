/*-------------------------------------------------------------------------
 *
 * api_profile.c
 *	  Device profiles: loading a row of festival.device_profile, and
 *	  festival.device_simulate(), which runs the device model on a crafted
 *	  access pattern without any index or file.
 *
 * IDENTIFICATION
 *	  src/sql/api_profile.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"

#include "device/sim.h"
#include "stats/jsonbuild.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"

/* How device_simulate operations are written, for hints. */
#define OPS_SYNTAX "Operations are 'r PAGES', 'w PAGES' (PAGES: N or N-M, separated by spaces) or 't N' (truncate)."

PG_FUNCTION_INFO_V1(festival_device_simulate);

/* Most pages one festival.device_simulate() call may touch. */
#define SIMULATE_MAX_PAGES	(64 * 1024 * 1024)

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

/* Parse "N" or "N-M" into a page range. */
static void
parse_range(const char *token, const char *op, PageId *from, PageId *to)
{
	char	   *end;
	unsigned long long a,
				b;

	errno = 0;
	a = strtoull(token, &end, 10);
	b = a;
	if (*end == '-' && end != token)
		b = strtoull(end + 1, &end, 10);
	if (errno != 0 || *end != '\0' || !isdigit((unsigned char) token[0]) || b < a)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid page \"%s\" in operation \"%s\"", token, op),
				 errhint("Write pages as N or N-M with N <= M, for example 'r 0-15' or 'w 7 9 11'.")));
	*from = a;
	*to = b;
}

/*
 * festival.device_simulate(profile, ops, page_size): each element of ops is
 * one submission: 'r' or 'w' followed by pages ("N" or "N-M"), or 't N'
 * (truncate to N pages).  Returns the state of the simulated drive.
 */
Datum
festival_device_simulate(PG_FUNCTION_ARGS)
{
	char	   *profile_name = fest_text_arg(fcinfo, 0, "profile");
	ArrayType  *ops;
	int64		page_size = fest_int64_arg(fcinfo, 2, "page_size");
	DeviceProfile *profile;
	SimDevice  *dev;
	FestStats	stats;
	Datum	   *elems;
	bool	   *nulls;
	int			nops;
	int64		total_pages = 0;
	JsonbParseState *state = NULL;
	JsonbValue *result;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("ops must not be NULL"),
				 errhint("Give an array of operations, e.g. ARRAY['w 0-15', 'r 3']. %s", OPS_SYNTAX)));
	ops = PG_GETARG_ARRAYTYPE_P(1);
	if (page_size < FEST_MIN_PAGE_SIZE || page_size > FEST_MAX_PAGE_SIZE ||
		page_size % FEST_PAGE_SIZE_MULTIPLE != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("page_size must be a multiple of %d between %d and %d",
						FEST_PAGE_SIZE_MULTIPLE, FEST_MIN_PAGE_SIZE, FEST_MAX_PAGE_SIZE),
				 errhint("Use the page size of the index the pattern stands for; 4096 by default.")));

	profile = catalog_load_profile(profile_name);
	dev = sim_device_create(profile, (uint32) page_size);
	fest_stats_reset(&stats);

	deconstruct_array(ops, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nops);
	for (int i = 0; i < nops; i++)
	{
		char	   *op;
		char	   *save = NULL;
		char	   *kind;
		char	   *token;
		PageId	   *pages = NULL;
		int			n = 0;
		int			cap = 0;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("operation %d is NULL", i + 1),
					 errhint("Leave NULLs out of the array. %s", OPS_SYNTAX)));
		op = TextDatumGetCString(elems[i]);
		kind = strtok_r(pstrdup(op), " \t", &save);
		if (kind == NULL ||
			(strcmp(kind, "r") != 0 && strcmp(kind, "w") != 0 && strcmp(kind, "t") != 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid operation \"%s\"", op),
					 errhint("%s", OPS_SYNTAX)));

		while ((token = strtok_r(NULL, " \t", &save)) != NULL)
		{
			PageId		from,
						to;

			parse_range(token, op, &from, &to);
			if (to - from >= (uint64) (SIMULATE_MAX_PAGES - total_pages))
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("device_simulate touches at most %d pages per call",
								SIMULATE_MAX_PAGES),
				 errhint("Split the operations over several calls.")));
			total_pages += to - from + 1;
			for (PageId p = from; p <= to; p++)
			{
				if (n == cap)
				{
					cap = Max(16, cap * 2);
					pages = pages ? repalloc(pages, cap * sizeof(PageId))
						: palloc(cap * sizeof(PageId));
				}
				pages[n++] = p;
			}
		}
		if (n == 0 || (kind[0] == 't' && n != 1))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("operation \"%s\" names %s", op,
							n == 0 ? "no page" : "more than one page count"),
					 errhint("Write for example 'r 0-15', 'w 7 9 11' or 't 100'.")));
		if (kind[0] == 't')
			sim_truncate(dev, pages[0]);
		else
			sim_submit(dev, pages, n, kind[0] == 'w', &stats);
		pfree(pages);
	}

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	sim_push_jsonb(dev, &state);
	jb_int(&state, "device_ns", stats.device_ns);
	jb_int(&state, "device_erases", stats.device_erases);
	jb_int(&state, "ftl_host_writes", stats.ftl_host_writes);
	jb_int(&state, "ftl_flash_writes", stats.ftl_flash_writes);
	jb_int(&state, "ftl_gc_runs", stats.ftl_gc_runs);
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}
