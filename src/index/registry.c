/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The structures festival knows, the options of the index file, and
 *	  which modules' option tables apply to an index.
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

#include "cache/cache.h"
#include "nodestore/framework.h"
#include "tier/tier.h"

#include "lib/stringinfo.h"

/* Options of the index file, which every structure takes. */
static const OptionSpec index_file_options[] = {
	{
		.name = "page_size", .type = OPT_BYTES,
		.default_number = FEST_DEFAULT_PAGE_SIZE,
		.min = FEST_MIN_PAGE_SIZE, .max = FEST_MAX_PAGE_SIZE,
		.multiple_of = FEST_PAGE_SIZE_MULTIPLE,
		.description = "Size of a node (page) in bytes; Carniel et al. 2016 and 2017 (JIDM) use 2048 to 65536.",
		.offset = offsetof(IndexOptions, page_size)
	},
	{0}
};

static const StructureOps *const structures[] = {
	&rtree_structure,
	&rstartree_structure,
	&hilbert_rtree_structure,
	&xbrtree_structure,
	&gridfile_structure,
	&lbgrid_structure,
	&agrid_structure,
	&fortree_structure,
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
 * The method of a build or an insert_many a user asked for: 'insert' (NULL,
 * the structure's one-at-a-time algorithm, which every structure has) or one
 * of the structure's own methods.  An unknown name is an error whose hint
 * lists what the call accepts.  function names the SQL call in the message
 * ("build", "insert_many"); unit is what 'insert' inserts one at a time.
 */
const BuildMethod *
structure_method_lookup(const StructureOps *structure, const BuildMethod *methods,
						const char *method, const char *function, const char *unit)
{
	StringInfoData accepted;

	if (strcmp(method, "insert") == 0)
		return NULL;
	if (methods != NULL)
		for (const BuildMethod *m = methods; m->name != NULL; m++)
			if (strcmp(m->name, method) == 0)
				return m;

	initStringInfo(&accepted);
	appendStringInfo(&accepted, "'insert' (one %s at a time with the structure's insertion algorithm)", unit);
	if (methods != NULL)
		for (const BuildMethod *m = methods; m->name != NULL; m++)
			appendStringInfo(&accepted, ", '%s' (%s)", m->name, m->description);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown %s method \"%s\" for structure \"%s\"", function, method,
					structure->name),
			 errhint("Accepted methods: %s.", accepted.data)));
	pg_unreachable();
}

/*
 * Validate a user's options for a structure and fill the typed options of
 * every module but the node store's (filled when the store is created).
 * The tables that apply are each module's own, in this order (it is the
 * order hints list them in): the index file's, the framework choice, the
 * structure's, the chosen framework's, the page cache's.  Each module
 * then checks its combinations.  Returns the complete configuration, the
 * one festival.index and the meta pages store.
 */
FestConfig *
index_options_parse(const StructureOps *ops, Jsonb *user, IndexOptions *out,
					void **state)
{
	const OptionSpec *tables[12];
	const FrameworkDef *fw;
	int			n = 0;
	FestConfig *config;

	fw = framework_choose(user);
	tables[n++] = index_file_options;
	tables[n++] = framework_option;
	tables[n++] = ops->options;
	if (fw->options != NULL)
		tables[n++] = fw->options;
	n += cache_option_tables(user, &tables[n]);
	/* only when asked for, so one-device configurations stay as they were */
	n += tier_option_tables(user, &tables[n]);
	Assert(n < lengthof(tables));
	tables[n] = NULL;

	if (ops->check_framework != NULL)
		ops->check_framework(fw->name);
	config = options_parse(user, tables, ops->name, fw->name);
	OPTIONS_FILL(config, index_file_options, out);
	*state = ops->setup(config, (uint32) out->page_size);
	out->framework = fw;
	out->framework_memory = fw->validate != NULL ? fw->validate(config) : 0;
	cache_options_fill(config, (uint32) out->page_size, &out->cache);
	tier_read_options(config, (uint32) out->page_size, &out->tier);
	return config;
}
