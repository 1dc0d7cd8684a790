/*-------------------------------------------------------------------------
 *
 * handle_chain.c
 *	  The storage of an open index: its files, device states and page I/O chain.
 *
 * The catalog names the devices; the tier layer assembles the chain over
 * them (page_chain_open, tier/tier.h).  This file looks up what the
 * assembly needs: the paths under festival.data_directory, the device
 * profiles, the fast device of a tiered index.
 *
 * IDENTIFICATION
 *	  src/sql/handle_chain.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle_internal.h"
#include "sql/run.h"
#include "sql/xact.h"

#include "tier/tier.h"

char *
handle_file_path(OpenIndex *ix, bool create)
{
	char	   *data_dir = device_data_directory(fest_data_directory_setting, create);
	char	   *dir = device_resolve_directory(data_dir, ix->cat.device.directory, create);

	return device_file_path(dir, ix->cat.file_name);
}

/*
 * The storage state of a newly opened index: a fresh simulated drive if
 * its device has a profile, and no memory pages yet.
 */
DeviceState *
handle_device_state(OpenIndex *ix)
{
	DeviceProfile *profile = NULL;

	if (ix->cat.device.profile != NULL)
		profile = catalog_load_profile(ix->cat.device.profile);
	return device_state_create(ix->cxt, profile);
}

/*
 * The fast device of a tiered index (catalog) and its storage state (a
 * fresh simulated drive if it has a profile), and its fast tier's file.
 * create: a new index, whose leftover files of an earlier index of the
 * name are removed (see ix_create_file) and whose new ones go if the
 * transaction aborts.
 */
static void
open_fast_device(OpenIndex *ix, bool create, PageChainSpec *spec)
{
	DeviceSpec *fast = catalog_load_device(ix->opts.tier.fast_device);
	DeviceProfile *profile = NULL;

	tier_check_devices(&ix->cat.device, fast);
	if (fast->profile != NULL)
		profile = catalog_load_profile(fast->profile);
	ix->fast_devstate = device_state_create(ix->cxt, profile);
	spec->fast_device = fast;
	spec->fast_state = ix->fast_devstate;
	spec->fast_path = tier_fast_path(device_data_directory(fest_data_directory_setting, create),
									 fast, ix->cat.file_name, create);
	if (create)
	{
		const char *files[] = {spec->fast_path, tier_map_path(ix->path),
			tier_weights_path(ix->path)};

		for (int i = 0; i < lengthof(files); i++)
		{
			device_file_unlink(files[i]);
			pending_unlink_on_abort(files[i]);
		}
	}
}

/*
 * The fast tier's file of an index that is not open (drop_index), or NULL
 * without one: read from its typed options (tier_read_options), which
 * the catalog's complete options give as at every open.
 */
char *
ix_fast_file(const IndexCatalog *cat)
{
	IndexOptions opts;
	void	   *state;

	(void) index_options_parse(structure_lookup(cat->structure), cat->options,
							   &opts, &state);
	if (!opts.tier.enabled)
		return NULL;
	return tier_fast_path(device_data_directory(fest_data_directory_setting, false),
						  catalog_load_device(opts.tier.fast_device),
						  cat->file_name, false);
}

/*
 * The page I/O chain of the index (tier/tier.h, page_chain_open, the one
 * place it is assembled), over the devices the catalog names.
 */
PageIO *
handle_open_chain(OpenIndex *ix, uint32 page_size, bool create)
{
	PageChainSpec spec = {
		.index_name = ix->name,
		.page_size = page_size,
		.create = create,
		.stats = &ix->op.stats,
		.time_cpu = &ix->op.time_io_cpu,
		.passthrough = fest_passthrough_layers,
		.trace = run_current_trace(),
		.cache = &ix->opts.cache,
		.tier = &ix->opts.tier,
		.device = &ix->cat.device,
		.state = ix->devstate,
		.path = ix->path
	};
	PageChain	chain;

	OPTIONS_ASSERT_FILLED(&ix->opts.tier);
	if (ix->opts.tier.enabled)
		open_fast_device(ix, create, &spec);
	page_chain_open(&spec, &chain);
	ix->tier = chain.tiers;
	ix->tracing = chain.tracing;
	return chain.top;
}
