/*-------------------------------------------------------------------------
 *
 * framework.c
 *	  The node-store registry and the options of FAST and eFIND.
 *
 * Defaults are the best values the papers report: a 512 kB buffer and
 * flushing units of 5 pages for both (Carniel et al. 2016, 2017 and 2018,
 * eFIND IS §5-6); FAST* for FAST (Carniel et al. 2016, 2017); for eFIND 20% of
 * the buffer for reads, the oldest 60% of buffered nodes as flush candidates,
 * the MH policy and S2Q with temporal control; a 10 MB log.  Where the papers
 * give no value (the sizes of the temporal-control queues) the default is
 * festival's own and docs/frameworks.md says so.
 *
 * IDENTIFICATION
 *	  src/flash/framework.c
 *
 *-------------------------------------------------------------------------
 */
#include "flash/framework.h"

#include "buffer/replacement.h"
#include "flash/buffered.h"

int			fest_log_sync_mode = LOG_SYNC_OPERATION;
int			fest_log_sync_interval = 1000;

const char *const framework_names[] = {"none", "fast", "efind", NULL};

const OptionSpec framework_option[] = {
	{
		.name = "framework", .type = OPT_CHOICE, .default_choice = "none",
		.choices = framework_names,
		.description = "Node store: none (write-through), fast (FAST, Sarwat et al. 2013) or efind (eFIND, Carniel et al. 2019)."
	},
	{0}
};

static const char *const fast_policies[] = {"flush_all", "random", "fast", "fast_star", NULL};
static const char *const efind_policies[] = {"m", "mh", "mha", "mhao", NULL};
static const char *const tc_modes[] = {"none", "read", "write", "both", NULL};

#define BUFFER_SIZE_OPTION(default_bytes) \
	{ \
		.name = "buffer_size", .type = OPT_INT, .default_number = (default_bytes), \
		.min = 4096, .max = 1073741824, \
		.description = "Write buffer capacity in bytes (eFIND: read and write buffers together)." \
	}
#define FLUSHING_UNIT_OPTION \
	{ \
		.name = "flushing_unit", .type = OPT_INT, .default_number = 5, \
		.min = 1, .max = 256, \
		.description = "Pages per flushing unit, written in one batch." \
	}
#define LOG_SIZE_OPTION \
	{ \
		.name = "log_size", .type = OPT_INT, .default_number = 10485760, \
		.min = 0, .max = 1073741824, \
		.description = "Redo log size in bytes that triggers compaction; 0 disables the log (no recovery after a crash)." \
	}

const OptionSpec fast_options[] = {
	BUFFER_SIZE_OPTION(524288),
	FLUSHING_UNIT_OPTION,
	{
		.name = "flushing_policy", .type = OPT_CHOICE, .default_choice = "fast_star",
		.choices = fast_policies,
		.description = "Which flushing unit to write when the buffer is full."
	},
	{
		.name = "random_seed", .type = OPT_INT, .default_number = 0,
		.min = 0, .max = 2147483647,
		.description = "Seed of the random flushing policy (reproducible runs)."
	},
	LOG_SIZE_OPTION,
	{0}
};

const OptionSpec efind_options[] = {
	BUFFER_SIZE_OPTION(524288),
	{
		.name = "read_buffer_percent", .type = OPT_INT, .default_number = 20,
		.min = 0, .max = 90,
		.description = "Share of buffer_size given to the read buffer."
	},
	{
		.name = "read_buffer_policy", .type = OPT_CHOICE, .default_choice = "s2q",
		.choices = replacement_option_choices,
		.description = "Replacement policy of the read buffer."
	},
	{
		.name = "timestamp_percent", .type = OPT_INT, .default_number = 60,
		.min = 1, .max = 100,
		.description = "Share of buffered nodes, oldest first, considered for a flush."
	},
	FLUSHING_UNIT_OPTION,
	{
		.name = "flushing_policy", .type = OPT_CHOICE, .default_choice = "mh",
		.choices = efind_policies,
		.description = "Score of a flushing unit: modifications (m), by height (mh), by modified area (mha), and overlap (mhao)."
	},
	{
		.name = "temporal_control", .type = OPT_CHOICE, .default_choice = "both",
		.choices = tc_modes,
		.description = "Temporal control of reads (read queue), of writes (write queue), both or none."
	},
	{
		.name = "write_tc_min_distance", .type = OPT_INT, .default_number = 10,
		.min = 0, .max = 1000000,
		.description = "Pages at most this far from a recently written page are sequential."
	},
	{
		.name = "write_tc_stride", .type = OPT_INT, .default_number = 100,
		.min = 1, .max = 1000000000,
		.description = "Pages at least this far from every recently written page are a stride."
	},
	{
		.name = "write_tc_size", .type = OPT_INT, .default_number = 50,
		.min = 1, .max = 1000000,
		.description = "Pages remembered by the write queue."
	},
	{
		.name = "read_tc_percent", .type = OPT_INT, .default_number = 25,
		.min = 1, .max = 100,
		.description = "Size of the read queue, in percent of the pages both buffers hold (at least 10 pages)."
	},
	{
		.name = "twoq_a1in_percent", .type = OPT_INT, .default_number = 25,
		.min = 1, .max = 90,
		.description = "Share of the read buffer for first-time pages under the 2q policy."
	},
	LOG_SIZE_OPTION,
	{0}
};

static void
efind_validate(const FestConfig *config)
{
	const char *policy = config_choice_name(config, "read_buffer_policy");
	const char *tc = config_choice_name(config, "temporal_control");

	if (strcmp(policy, "s2q") == 0 && strcmp(tc, "read") != 0 && strcmp(tc, "both") != 0)
		config_error(config,
					 "The s2q read buffer admits pages found in the read queue, which only temporal control of reads keeps.",
					 "Use temporal_control 'read' or 'both', or another read_buffer_policy.");
	if (config_int(config, "read_buffer_percent") == 0 && strcmp(policy, "none") != 0)
		config_error(config,
					 psprintf("read_buffer_percent 0 leaves no memory for the %s read buffer.", policy),
					 "Set read_buffer_policy to 'none', or give the read buffer a share.");
	if (config_int(config, "read_buffer_percent") > 0 && strcmp(policy, "none") == 0)
		config_error(config,
					 "read_buffer_policy 'none' takes no share of the buffer.",
					 "Set read_buffer_percent to 0, or choose a read_buffer_policy.");
}

static NodeStore *
direct_create(PageIO *io, FestMeta *meta, const NodeOps *node_ops,
			  const char *index_name, FestStats *stats, const FestConfig *config,
			  const char *log_path, bool create)
{
	return direct_store_create(io, meta, node_ops, index_name, stats);
}

static const FrameworkDef frameworks[] = {
	{"none", "write-through", NULL, direct_create, NULL, false},
	{"fast", "FAST (Sarwat et al. 2013)", fast_options, fast_store_create, NULL, true},
	{"efind", "eFIND (Carniel et al. 2019)", efind_options, efind_store_create, efind_validate, true},
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

const FrameworkDef *
framework_of(const FestConfig *config)
{
	return framework_lookup(config_choice_name(config, "framework"));
}

/* The settings shared by FAST and eFIND. */
void
buffered_config_from(const FestConfig *config, BufferedConfig *cfg)
{
	cfg->buffer_size = config_int(config, "buffer_size");
	cfg->flushing_unit = (int) config_int(config, "flushing_unit");
	cfg->log_size = config_int(config, "log_size");
}
