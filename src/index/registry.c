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

/* The option groups that apply to an index of this structure. */
void
structure_option_groups(const StructureOps *ops, const OptionSpec **groups,
						int max)
{
	Assert(max >= 3);
	groups[0] = common_options;
	groups[1] = ops->options;
	groups[2] = NULL;
}
