/*-------------------------------------------------------------------------
 *
 * framework.c
 *	  The node-store registry and the option that chooses among them.
 *
 * Each framework owns its option table and typed struct (fast.c, efind.c,
 * fortree_buffer.c);
 * the registry below names them.
 *
 * IDENTIFICATION
 *	  src/nodestore/framework.c
 *
 *-------------------------------------------------------------------------
 */
#include "nodestore/framework.h"

#include "nodestore/buffered.h"

int			fest_log_sync_mode = LOG_SYNC_NEVER;
int			fest_log_sync_interval = 1000;

const char *const framework_names[] = {"none", "fast", "efind", "fortree", NULL};

/*
 * The choice of node store.  It decides which other table applies, so it
 * is read from the user's options before they are parsed (framework_choose)
 * and never filled into a struct: it has no offset.
 */
const OptionSpec framework_option[] = {
	{
		.name = "framework", .type = OPT_CHOICE, .default_choice = "none",
		.choices = framework_names,
		.description = "Node store: none (write-through), fast (FAST, Sarwat et al. 2013), efind (eFIND, Carniel et al. 2019) or fortree (the FOR-tree's write buffer, Jin et al. 2015)."
	},
	{0}
};

static const FrameworkDef frameworks[] = {
	{"none", "write-through", NULL, wt_store_create, NULL, false},
	{"fast", "FAST (Sarwat et al. 2013)", fast_option_table, fast_store_create, fast_validate, true},
	{"efind", "eFIND (Carniel et al. 2019)", efind_option_table, efind_store_create, efind_validate, true},
	{"fortree", "the FOR-tree's write buffer (Jin et al. 2015)", fortree_buffer_option_table, fortree_buffer_store_create, fortree_buffer_validate, true},
	{NULL}
};

const FrameworkDef *
framework_lookup(const char *name)
{
	for (int i = 0; frameworks[i].name != NULL; i++)
		if (strcmp(frameworks[i].name, name) == 0)
			return &frameworks[i];
	elog(ERROR, "unknown framework \"%s\"", name);
	pg_unreachable();
}

/*
 * The framework a user's options choose (validated), before the whole
 * object is parsed: its table is one of those that apply.
 */
const FrameworkDef *
framework_choose(Jsonb *user)
{
	return framework_lookup(options_peek_choice(user, framework_option));
}
