/*-------------------------------------------------------------------------
 *
 * tier_options.c
 *	  The tier options of an index (docs/tiers.md): their table, the checks
 *	  of their combinations the table cannot make, and, at creation, the
 *	  refusal of an option the placement never reads.
 *
 * IDENTIFICATION
 *	  src/tier/tier_options.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier.h"

#include "utils/guc.h"

static const char *const placement_names[] = {
	"single", "all_fast", "level", "hot", "level_hot", "random", NULL
};

static const char *const write_buffers_names[] = {
	"per_device", "shared_cache", NULL
};

static const char *const tuning_names[] = {
	"fixed", "auto", NULL
};

const OptionSpec tier_options[] = {
	{
		.name = "fast_device", .type = OPT_STRING,
		.description = "the device of the fast tier (festival.create_device); null: one device",
		.offset = offsetof(TierOptions, fast_device)
	},
	{
		.name = "placement", .type = OPT_CHOICE, .default_choice = "single",
		.choices = placement_names,
		.description = "which pages live on the fast device: single (none), all_fast, level (sHR-tree), hot (H-Grid), level_hot (H-Grid special), random",
		.offset = offsetof(TierOptions, placement)
	},
	{
		.name = "fast_min_level", .type = OPT_INT, .default_number = 1,
		.min = 1, .max = FEST_MAX_LEVELS - 1,
		.description = "level and level_hot: nodes at this level or above are fast (1: every non-leaf node)",
		.offset = offsetof(TierOptions, min_level)
	},
	{
		.name = "hot_selectivity", .type = OPT_REAL, .default_number = 1.5,
		.min = 1.0, .max = 2.5,
		.description = "hot, level_hot, random: a page is hot when its weight exceeds this times the moving average (Alg. 9's s)",
		.offset = offsetof(TierOptions, selectivity)
	},
	{
		.name = "fast_capacity", .type = OPT_STRING,
		.description = "pages the fast tier may hold: a page count or a size such as '4MB'; null: unlimited",
		.offset = offsetof(TierOptions, fast_capacity)
	},
	{
		.name = "placement_seed", .type = OPT_INT, .default_number = 1,
		.min = 0, .max = PG_INT32_MAX,
		.description = "random: the seed of the pages drawn",
		.offset = offsetof(TierOptions, seed)
	},
	{NULL}
};

/*
 * The detecting placements' buffering, cooling and tuning: one table per option,
 * each in a configuration only when the user names it (its default is
 * filled either way), so that the configurations of tiered indices made
 * before them stay as they were and still fit a small page's meta page.
 */
static const OptionSpec tier_buffer_pages_option[] = {
	{
		.name = "write_buffer_pages", .type = OPT_INT, .default_number = 128,
		.min = 1, .max = 65536,
		.description = "hot, level_hot, random: pages each device's write buffer holds before it is written as one batch (Fevgas 2019, §4.3)",
		.offset = offsetof(TierOptions, write_buffer_pages)
	},
	{NULL}
};

static const OptionSpec tier_cooling_option[] = {
	{
		.name = "cool_after", .type = OPT_INT, .default_number = 0,
		.min = 0, .max = PG_INT32_MAX,
		.description = "hot, level_hot, random: a hot page not accessed in this many accesses of the detector's clock is demoted at the next flush; 0: never (the seeds' setting)",
		.offset = offsetof(TierOptions, cool_after)
	},
	{NULL}
};

static const OptionSpec tier_buffering_option[] = {
	{
		.name = "write_buffers", .type = OPT_CHOICE, .default_choice = "per_device",
		.choices = write_buffers_names,
		.description = "hot, level_hot, random: per_device (a write buffer per device, promotion at the fast buffer's flush, Fevgas 2019 §4.3) or shared_cache (no write buffers: a promoted page moves at the page cache's write-back)",
		.offset = offsetof(TierOptions, write_buffers)
	},
	{NULL}
};

static const OptionSpec tier_tuning_option[] = {
	{
		.name = "hot_selectivity_tuning", .type = OPT_CHOICE, .default_choice = "fixed",
		.choices = tuning_names,
		.description = "hot, level_hot, random: fixed (s stays hot_selectivity, the thesis) or auto (s starts at hot_selectivity and moves by the fast tier's room every 1000 accesses of the detector's clock, within 1.0 to 2.5)",
		.offset = offsetof(TierOptions, tuning)
	},
	{NULL}
};

/* every tier option table but tier_options, NULL-terminated */
const OptionSpec *const tier_buffer_options[] = {
	tier_buffer_pages_option, tier_cooling_option, tier_buffering_option,
	tier_tuning_option, NULL
};

static bool
any_given(Jsonb *user, const OptionSpec *table)
{
	for (const OptionSpec *s = table; s->name != NULL; s++)
		if (options_user_value(user, s->name) != NULL)
			return true;
	return false;
}

/* Does the user's option object name any tier option? */
bool
tier_options_given(Jsonb *user)
{
	if (any_given(user, tier_options))
		return true;
	for (int i = 0; tier_buffer_options[i] != NULL; i++)
		if (any_given(user, tier_buffer_options[i]))
			return true;
	return false;
}

/*
 * The tier option tables that apply to the user's options (those of
 * tier_buffer_options only when their option is given); returns how many
 * were put in tables.
 */
int
tier_option_tables(Jsonb *user, const OptionSpec **tables)
{
	int			n = 0;

	if (!tier_options_given(user))
		return 0;
	tables[n++] = tier_options;
	for (int i = 0; tier_buffer_options[i] != NULL; i++)
		if (any_given(user, tier_buffer_options[i]))
			tables[n++] = tier_buffer_options[i];
	return n;
}

static void
bad_combination(const char *message, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s", message),
			 errhint("%s", hint)));
}

/* The fast tier's capacity in pages: "1000" or a size with a unit. */
static int64
parse_capacity(const char *text, uint32 page_size)
{
	char	   *end;
	int64		pages;
	int			bytes;
	const char *hint = NULL;

	errno = 0;
	pages = strtoll(text, &end, 10);
	if (errno == 0 && *end == '\0' && end != text)
	{
		if (pages <= 0)
			bad_combination("fast_capacity must be at least one page",
							"Omit fast_capacity (or give null) for an unlimited fast tier.");
		return pages;
	}
	if (!parse_int(text, &bytes, GUC_UNIT_BYTE, &hint) || bytes <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value \"%s\" for option \"fast_capacity\"", text),
				 errhint("Give a page count such as 1000 or a size such as '4MB' (at least one page); null is unlimited.")));
	if ((uint32) bytes < page_size)
		bad_combination("fast_capacity is smaller than one page",
						"Give at least the page size, or omit fast_capacity for an unlimited fast tier.");
	return bytes / page_size;
}

/*
 * Read the tier options of a configuration into opt (enabled = false when
 * the index has no tier options), checking what the option table cannot.
 */
void
tier_read_options(const FestConfig *config, uint32 page_size, TierOptions *opt)
{
	StaticAssertStmt(lengthof(placement_names) == TIER_RANDOM + 2,
					 "placement_names follows TierPlacement");
	StaticAssertStmt(lengthof(write_buffers_names) == TIER_BUFFERS_SHARED_CACHE + 2,
					 "write_buffers_names follows TierBuffering");
	StaticAssertStmt(lengthof(tuning_names) == TIER_TUNING_AUTO + 2,
					 "tuning_names follows TierTuning");
	for (int i = 0; tier_buffer_options[i] != NULL; i++)
		OPTIONS_FILL(config, tier_buffer_options[i], opt);
	OPTIONS_FILL(config, tier_options, opt);
	opt->capacity_pages = 0;
	opt->enabled = opt->fast_device != NULL;
	if (!opt->enabled && (opt->placement != TIER_SINGLE || opt->fast_capacity != NULL))
		bad_combination("placement and fast_capacity need a fast device",
						"Name the fast tier with \"fast_device\", e.g. '{\"fast_device\": \"optane\", \"placement\": \"level\"}'.");
	if (opt->fast_capacity != NULL)
		opt->capacity_pages = parse_capacity(opt->fast_capacity, page_size);
	if (opt->capacity_pages > 0 && opt->placement == TIER_RANDOM)
		bad_combination("placement \"random\" takes no fast_capacity",
						"random places as many pages as hot would; give the capacity to a hot index, or omit it.");
}

/*
 * At creation: refuse a tier option the placement never reads, which would
 * be stored as a setting that does nothing.  Only what the user named is
 * checked (the stored configuration lists every tier option), so indices
 * whose configuration holds such a value still open.
 */
void
tier_refuse_unused_options(Jsonb *user, const TierOptions *opt)
{
#define PLACED(p) (1 << (p))
	static const struct
	{
		const char *name;
		int			placements;	/* PLACED() of those that read it */
		const char *which;
	}			uses[] = {
		{"fast_min_level", PLACED(TIER_LEVEL) | PLACED(TIER_LEVEL_HOT), "level and level_hot"},
		{"hot_selectivity", PLACED(TIER_HOT) | PLACED(TIER_LEVEL_HOT) | PLACED(TIER_RANDOM),
		"hot, level_hot and random"},
		{"fast_capacity", PLACED(TIER_ALL_FAST) | PLACED(TIER_LEVEL) | PLACED(TIER_HOT) |
		PLACED(TIER_LEVEL_HOT), "all_fast, level, hot and level_hot"},
		{"placement_seed", PLACED(TIER_RANDOM), "random"},
		{"write_buffer_pages", PLACED(TIER_HOT) | PLACED(TIER_LEVEL_HOT) | PLACED(TIER_RANDOM),
		"hot, level_hot and random"},
		{"write_buffers", PLACED(TIER_HOT) | PLACED(TIER_LEVEL_HOT) | PLACED(TIER_RANDOM),
		"hot, level_hot and random"},
		{"cool_after", PLACED(TIER_HOT) | PLACED(TIER_LEVEL_HOT) | PLACED(TIER_RANDOM),
		"hot, level_hot and random"},
		{"hot_selectivity_tuning", PLACED(TIER_HOT) | PLACED(TIER_LEVEL_HOT) | PLACED(TIER_RANDOM),
		"hot, level_hot and random"}
	};

	for (int i = 0; i < lengthof(uses); i++)
	{
		JsonbValue *v = options_user_value(user, uses[i].name);

		if (v == NULL || v->type == jbvNull || (uses[i].placements & PLACED(opt->placement)))
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" does nothing under placement \"%s\"",
						uses[i].name, placement_names[opt->placement]),
				 errhint("\"%s\" applies to placement %s; omit it, or choose one of those.",
						 uses[i].name, uses[i].which)));
	}
	if (opt->write_buffers == TIER_BUFFERS_SHARED_CACHE)
	{
		JsonbValue *v = options_user_value(user, "write_buffer_pages");

		if (v != NULL && v->type != jbvNull)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"write_buffer_pages\" does nothing with write_buffers \"shared_cache\""),
					 errhint("shared_cache keeps no write buffers; omit write_buffer_pages, or use write_buffers \"per_device\".")));
	}
#undef PLACED
}

const char *
tier_placement_name(TierPlacement p)
{
	return placement_names[p];
}

/*
 * Memory the per-device write buffers of a detecting placement hold at most
 * (Fevgas 2019, §4.3: one buffer for each of the two devices), counted in
 * an index's memory with its buffer and cache (festival.max_index_memory).
 */
int64
tier_buffer_memory_bytes(const TierOptions *opt, int64 page_size)
{
	if (!opt->enabled || opt->write_buffers == TIER_BUFFERS_SHARED_CACHE)
		return 0;
	if (opt->placement != TIER_HOT && opt->placement != TIER_LEVEL_HOT &&
		opt->placement != TIER_RANDOM)
		return 0;
	return 2 * opt->write_buffer_pages * page_size;
}
