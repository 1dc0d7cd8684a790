/*-------------------------------------------------------------------------
 *
 * tier_chain.c
 *	  The page I/O chain of an index, assembled in one place (tier.h), and
 *	  the files a tiered index keeps beside its index file.
 *
 * Bottom to top: the device with the fault layer and the simulated drive
 * (device_open stacks those, with the index's DeviceState); with a fast
 * device, a second such chain and the tier router over both; tracing; with
 * a detecting placement, the per-device write buffers (tier_buffer.c); the
 * page cache; with a detecting placement, the tier observer on the cache.
 * Tracing sits below the cache and the write buffers so that the I/O trace
 * shows exactly what the devices transferred; the observer on top, where
 * the node store tells it of every node it delivers (PageIOOps.access), so
 * that it counts every access, cache hits and the store's own buffers
 * included (Fevgas 2019, Alg. 9-10).  Under
 * festival.passthrough_layers a layer that changes nothing
 * (device/passthrough.c) goes above every layer, which must change
 * nothing (test/passthrough.pg).
 *
 * IDENTIFICATION
 *	  src/tier/tier_chain.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier.h"

#include "cache/cache.h"
#include "trace/tracing.h"

/* The tier map of the index whose file is index_path. */
char *
tier_map_path(const char *index_path)
{
	return psprintf("%s.tiermap", index_path);
}

/* The hot-page weights of the index whose file is index_path. */
char *
tier_weights_path(const char *index_path)
{
	return psprintf("%s.tierhot", index_path);
}

/*
 * The fast tier's file of an index whose file is named file_name: the same
 * name in the fast device's directory (data_directory: where devices live,
 * device_data_directory).
 */
char *
tier_fast_path(const char *data_directory, const DeviceSpec *fast,
			   const char *file_name, bool create)
{
	return device_file_path(device_resolve_directory(data_directory,
													 fast->directory, create),
							file_name);
}

/*
 * A tiered index needs a second device, and both must keep files: the map
 * beside the index file names pages that must outlive the session.
 */
void
tier_check_devices(const DeviceSpec *slow, const DeviceSpec *fast)
{
	if (strcmp(fast->name, slow->name) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fast_device \"%s\" is the index's own device", fast->name),
				 errhint("Name a second device for the fast tier (festival.create_device), or omit fast_device.")));
	if (!device_has(fast, DEVICE_CAP_FILE) || !device_has(slow, DEVICE_CAP_FILE))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a tiered index needs two file devices, but \"%s\" or \"%s\" keeps no files",
						slow->name, fast->name),
				 errhint("Create both devices with kind 'file'; a profile (e.g. 'optane_memory_32gb') gives each its speed.")));
}

/* Under festival.passthrough_layers, a layer that changes nothing over io. */
static PageIO *
layer(const PageChainSpec *spec, PageIO *io)
{
	return spec->passthrough ? passthrough_pageio_create(io) : io;
}

/* The fast device's chain and the tier router over it and slow. */
static PageIO *
open_tiers(const PageChainSpec *spec, PageIO *slow, PageChain *chain)
{
	PageIO	   *fast;

	Assert(spec->fast_device != NULL && spec->fast_state != NULL &&
		   spec->fast_path != NULL);
	tier_check_devices(spec->device, spec->fast_device);
	if (!spec->create && !device_file_exists(spec->fast_path))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("file \"%s\" of index \"%s\" on its fast device is missing",
						spec->fast_path, spec->index_name),
				 errhint("Drop the index with festival.drop_index('%s') and create it again.",
						 spec->index_name)));
	fast = layer(spec, device_open(spec->fast_device, spec->fast_state,
								   spec->fast_path, spec->page_size,
								   spec->create, spec->stats, spec->time_cpu));
	chain->tiers = tier_open(spec->tier, spec->index_name, slow, fast,
							 tier_map_path(spec->path),
							 tier_weights_path(spec->path), spec->create);
	return layer(spec, tier_router(chain->tiers));
}

/*
 * Open the page I/O chain spec describes, in the current memory context
 * (the open index's).  The devices' files are opened (made, with create)
 * by device_open; a failure part of the way leaves them to their memory
 * context, which closes them.
 */
void
page_chain_open(const PageChainSpec *spec, PageChain *chain)
{
	PageIO	   *io = layer(spec, device_open(spec->device, spec->state, spec->path,
											 spec->page_size, spec->create,
											 spec->stats, spec->time_cpu));

	chain->tiers = NULL;
	OPTIONS_ASSERT_FILLED(spec->tier);
	if (spec->tier->enabled)
		io = open_tiers(spec, io, chain);
	chain->tracing = tracing_pageio_wrap(io, spec->index_name, spec->trace);
	io = layer(spec, chain->tracing);
	if (chain->tiers != NULL)
		io = layer(spec, tier_buffers_wrap(chain->tiers, io));
	io = layer(spec, cache_wrap(io, spec->cache));
	if (chain->tiers != NULL)
		io = layer(spec, tier_observer_wrap(chain->tiers, io));
	chain->top = io;
}
