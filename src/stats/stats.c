/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Summing and reporting FestStats.
 *
 * IDENTIFICATION
 *	  src/stats/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "stats/stats.h"

#include "stats/jsonbuild.h"

/* FestStats is a plain array of int64, which lets sums run over it blindly. */
StaticAssertDecl(sizeof(FestStats) % sizeof(int64) == 0,
				 "FestStats must consist of int64 fields only");

void
fest_stats_reset(FestStats *stats)
{
	memset(stats, 0, sizeof(FestStats));
}

void
fest_stats_add(FestStats *into, const FestStats *from)
{
	int64	   *dst = (int64 *) into;
	const int64 *src = (const int64 *) from;
	int			n = sizeof(FestStats) / sizeof(int64);

	for (int i = 0; i < n; i++)
		dst[i] += src[i];
}

/*
 * Add from to into and, unless it is NULL, to also; then zero from.  This
 * ends every operation, and an operation moves few counters (a query
 * writes, splits and logs nothing), so from is scanned eight counters at a
 * time and only groups with a non-zero one are touched: a third of the
 * time of two sums and a reset over all of them, which showed in the cost
 * of a call that finds nothing.
 */
void
fest_stats_drain(FestStats *from, FestStats *into, FestStats *also)
{
	int64	   *src = (int64 *) from;
	int64	   *dst = (int64 *) into;
	int64	   *dst2 = (int64 *) also;
	int			n = sizeof(FestStats) / sizeof(int64);
	int			i;

	Assert(from != into && from != also && (into != also || also == NULL));
	for (i = 0; i + 8 <= n; i += 8)
	{
		/* spelt out: the compiler then tests a group without a loop */
		if ((src[i] | src[i + 1] | src[i + 2] | src[i + 3] |
			 src[i + 4] | src[i + 5] | src[i + 6] | src[i + 7]) == 0)
			continue;
		for (int j = i; j < i + 8; j++)
		{
			dst[j] += src[j];
			if (dst2 != NULL)
				dst2[j] += src[j];
			src[j] = 0;
		}
	}
	for (; i < n; i++)
	{
		dst[i] += src[i];
		if (dst2 != NULL)
			dst2[i] += src[i];
		src[i] = 0;
	}
}

/*
 * Push one level-indexed array as a JSON object {"0": n, "1": n, ...},
 * listing only the levels that saw traffic.
 */
static void
push_levels(JsonbParseState **state, const char *key, const int64 *levels)
{
	jb_key(state, key);
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	for (int level = 0; level < FEST_MAX_LEVELS; level++)
	{
		char		name[16];

		if (levels[level] == 0)
			continue;
		snprintf(name, sizeof(name), "%d", level);
		jb_int(state, name, levels[level]);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/*
 * Append the counters as key/value pairs to an object being built.  Keys
 * ending in _ns are reported in seconds without the suffix.
 */
void
fest_stats_push_jsonb(const FestStats *stats, JsonbParseState **state)
{
#define FEST_STATS_PUSH(name) \
	do { \
		const char *key = #name; \
		size_t		len = strlen(key); \
		if (len > 3 && strcmp(key + len - 3, "_ns") == 0) \
		{ \
			char		seconds[64]; \
			snprintf(seconds, sizeof(seconds), "%.*s_seconds", (int) (len - 3), key); \
			jb_numeric(state, seconds, int64_div_fast_to_numeric(stats->name, 9)); \
		} \
		else \
		{ \
			jb_int(state, key, stats->name); \
		} \
	} while (0);
	FEST_STATS_SCALARS(FEST_STATS_PUSH)
#undef FEST_STATS_PUSH

	push_levels(state, "reads_per_level", stats->reads_per_level);
	push_levels(state, "writes_per_level", stats->writes_per_level);
}

Jsonb *
fest_stats_to_jsonb(const FestStats *stats)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	fest_stats_push_jsonb(stats, &state);
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(result);
}
