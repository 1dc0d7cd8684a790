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
