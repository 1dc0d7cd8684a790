/*-------------------------------------------------------------------------
 *
 * api_profile.c
 *	  festival.device_simulate(), which runs the device model on a crafted
 *	  access pattern without any index or file (a profile is loaded by
 *	  catalog_load_profile, catalog.c).
 *
 * IDENTIFICATION
 *	  src/sql/api_profile.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/args.h"
#include "sql/catalog.h"

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
