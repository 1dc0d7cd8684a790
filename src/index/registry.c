/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The structures festival knows, and the options they all share.
 *
 * Adding a structure means adding its StructureOps to the table below;
 * nothing else in the SQL surface or the node stores changes.
 *
 * IDENTIFICATION
 *	  src/index/registry.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/structure.h"

#include "buffer/cache.h"
#include "flash/framework.h"
#include "tier/tier.h"

#include "lib/stringinfo.h"

/* Options every structure takes. */
const OptionSpec common_options[] = {
	{
		.name = "page_size", .type = OPT_INT,
		.default_number = FEST_DEFAULT_PAGE_SIZE,
		.min = FEST_MIN_PAGE_SIZE, .max = FEST_MAX_PAGE_SIZE,
		.multiple_of = FEST_PAGE_SIZE_MULTIPLE,
		.description = "Size of a node (page) in bytes; the seeds use 2048 to 65536."
	},
	{0}
};

static const StructureOps *const structures[] = {
	&rtree_structure,
	&rstartree_structure,
	&hilbert_rtree_structure,
	&xbrtree_structure,
	&gridfile_structure,
	NULL
};

const StructureOps *
structure_lookup(const char *name)
{
	StringInfoData accepted;

	for (int i = 0; structures[i] != NULL; i++)
		if (strcmp(structures[i]->name, name) == 0)
			return structures[i];

	initStringInfo(&accepted);
	for (int i = 0; structures[i] != NULL; i++)
		appendStringInfo(&accepted, "%s'%s' (%s)", i > 0 ? ", " : "",
						 structures[i]->name, structures[i]->description);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown index structure \"%s\"", name),
			 errhint("Accepted structures: %s.", accepted.data)));
	pg_unreachable();
}

/*
 * Validate a user's options for a structure: the groups that apply are the
 * common options, the framework choice, the structure's and the chosen
 * framework's.  Returns the complete configuration, checked for impossible
 * combinations by the framework and the structure.
 */
FestConfig *
index_options_parse(const StructureOps *ops, Jsonb *user, uint32 *page_size,
					void **state)
{
	const OptionSpec *groups[8];
	const FrameworkDef *fw;
	int			n = 0;
	FestConfig *config;

	fw = framework_lookup(options_peek_choice(user, framework_option));
	groups[n++] = common_options;
	groups[n++] = framework_option;
	groups[n++] = ops->options;
	if (fw->options != NULL)
		groups[n++] = fw->options;
	groups[n++] = cache_options;
	if (cache_is_clru(options_peek_choice(user, cache_options)))
		groups[n++] = cache_clru_options;
	if (tier_options_given(user))
		groups[n++] = tier_options;
	groups[n] = NULL;

	config = options_parse(user, groups, ops->name, fw->name);
	*page_size = (uint32) config_int(config, "page_size");
	*state = ops->setup(config, *page_size);
	if (fw->validate != NULL)
		fw->validate(config);
	cache_validate(config, *page_size);
	{
		TierOptions topt;

		/* the combinations the option table cannot refuse */
		tier_read_options(config, *page_size, &topt);
	}
	return config;
}
