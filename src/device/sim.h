/*-------------------------------------------------------------------------
 *
 * sim.h
 *	  The device model: virtual device time for a device profile.
 *
 * See sim.c.  A SimDevice is the state of one simulated drive (its clock,
 * head position, recent writes, for NAND flash its FTL and, with device
 * model 2, its DRAM cache).  The PageIO
 * decorator advances it for every submission; festival.device_simulate()
 * drives one directly with crafted access patterns.
 *
 * IDENTIFICATION
 *	  src/device/sim.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_SIM_H
#define FEST_SIM_H

#include "device/ftl.h"
#include "device/pageio.h"
#include "device/profile.h"

#include "utils/jsonb.h"

typedef struct SimDevice SimDevice;

extern SimDevice *sim_device_create(const DeviceProfile *profile, uint32 page_size);
extern void sim_submit(SimDevice *dev, const PageId *pages, int n, bool write,
					   FestStats *stats);
extern void sim_truncate(SimDevice *dev, uint64 npages);
extern void sim_precondition(SimDevice *dev, uint64 npages);
extern void sim_push_jsonb(const SimDevice *dev, JsonbParseState **state);

/* The decorator; batched: the engine submits an array at once. */
extern PageIO *sim_pageio_create(PageIO *below, SimDevice *dev, bool batched);

#endif							/* FEST_SIM_H */
