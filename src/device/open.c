/*-------------------------------------------------------------------------
 *
 * open.c
 *	  Opening an index's storage: the device's PageIO, with the device
 *	  model stacked over it when the device has a profile.
 *
 * What outlives a single PageIO lives in the index's DeviceState: the
 * pages of a memory device, the simulated drive (clock and FTL) of a
 * profiled device, and the fault layer's state (its counters and an armed
 * fault).  Each open index has its own: one index file is one simulated
 * drive, and nothing is shared between indices or kept in process-global
 * state.  The handle layer keeps the DeviceState across
 * the reload that follows an interrupted operation (the pages of a memory
 * device would otherwise be lost), and drops it when the index is closed.
 *
 * IDENTIFICATION
 *	  src/device/open.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/device.h"

#include "device/engine.h"
#include "device/fault.h"
#include "device/sim.h"
#include "utils/memutils.h"

/*
 * A DeviceState in its own context under parent; profile (may be NULL) is
 * copied.
 */
DeviceState *
device_state_create(MemoryContext parent, const DeviceProfile *profile)
{
	MemoryContext cxt = AllocSetContextCreate(parent, "festival device state",
											  ALLOCSET_DEFAULT_SIZES);
	DeviceState *state = MemoryContextAllocZero(cxt, sizeof(DeviceState));

	state->cxt = cxt;
	state->fault = MemoryContextAllocZero(cxt, sizeof(FaultState));
	if (profile != NULL)
	{
		state->profile = MemoryContextAlloc(cxt, sizeof(DeviceProfile));
		*state->profile = *profile;
		state->profile->name = MemoryContextStrdup(cxt, profile->name);
	}
	return state;
}

/*
 * Open (or create) the storage of an index: a file or memory pages, and
 * the device model over it if the state has a profile.  A memory device
 * opened without create must already hold pages (the caller checks with
 * device_state_holds_pages).
 */
PageIO *
device_open(const DeviceSpec *spec, DeviceState *state, const char *path,
			uint32 page_size, bool create, FestStats *stats, const bool *time_cpu)
{
	bool		batched = device_engine_batches(spec->engine);
	PageIO	   *io;
	bool		fresh = false;

	if (spec->kind == DEVICE_KIND_MEMORY)
	{
		if (state->pages == NULL || create)
		{
			MemoryContext old = MemoryContextSwitchTo(state->cxt);

			state->pages = memory_pages_create(page_size);
			MemoryContextSwitchTo(old);
			fresh = true;
		}
		io = memory_pageio_create(state->pages, path, batched, stats, time_cpu);
	}
	else
	{
		io = device_file_open(spec, path, page_size, create, stats, time_cpu);
		fresh = create;
	}
	/* directly above the device: it sees exactly what reaches it */
	io = fault_pageio_create(io, state->fault);

	if (state->profile == NULL)
		return io;

	if (state->sim == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(state->cxt);

		state->sim = sim_device_create(state->profile, page_size);
		MemoryContextSwitchTo(old);
		/* an existing file starts as if written once, in order */
		if (!fresh)
		{
			PG_TRY();
			{
				sim_precondition(state->sim, pageio_npages(io));
			}
			PG_CATCH();
			{
				pageio_close(io);
				PG_RE_THROW();
			}
			PG_END_TRY();
		}
	}
	return sim_pageio_create(io, state->sim, batched);
}

bool
device_state_holds_pages(const DeviceState *state)
{
	return state != NULL && state->pages != NULL;
}

/*
 * The most pages a reader should submit at once to this device (a level
 * of a window search, level_search.c): a profiled device serves its
 * profile's channels at once (device/sim.c serves a submission in rounds
 * of that many, so larger batches gain no virtual time), any other the
 * queue depth the session set (festival.queue_depth, chosen for the real
 * drive: docs/devices.md).  At most IO_ENGINE_MAX_DEPTH, what an engine
 * keeps in flight.
 */
int
device_queue_depth(const DeviceState *state, int setting)
{
	int			depth = state->profile != NULL ? state->profile->channels : setting;

	return Max(1, Min(depth, IO_ENGINE_MAX_DEPTH));
}
