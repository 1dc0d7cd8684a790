/*-------------------------------------------------------------------------
 *
 * ftl.h
 *	  A simulated page-mapping flash translation layer.
 *
 * See ftl.c.  One Ftl models one drive: the device model (sim.c) gives
 * every open index file its own, so a file is the only tenant of its
 * simulated drive.
 *
 * IDENTIFICATION
 *	  src/device/ftl.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_FTL_H
#define FEST_FTL_H

#include "festival.h"

typedef struct Ftl Ftl;

/* What the FTL did, cumulatively since it was created. */
typedef struct FtlCounters
{
	int64		host_writes;	/* logical pages the host wrote */
	int64		flash_writes;	/* physical pages programmed (GC copies too) */
	int64		gc_copies;		/* valid pages moved by garbage collection */
	int64		erases;
	int64		gc_runs;		/* victim blocks collected */
} FtlCounters;

/* Occupancy and wear, computed on demand. */
typedef struct FtlState
{
	uint32		blocks;
	uint32		free_blocks;
	uint64		valid_pages;
	uint64		logical_pages;	/* user capacity in pages */
	uint32		wear_min;		/* erase counts over all blocks */
	uint32		wear_max;
} FtlState;

extern Ftl *ftl_create(int pages_per_block, double overprovision_percent);
extern void ftl_set_free_space(Ftl *ftl, uint32 blocks);
extern void ftl_write(Ftl *ftl, uint64 lpn);
extern void ftl_trim_from(Ftl *ftl, uint64 first_lpn);
extern void ftl_precondition(Ftl *ftl, uint64 npages);
extern const FtlCounters *ftl_counters(const Ftl *ftl);
extern void ftl_state(const Ftl *ftl, FtlState *state);

#endif							/* FEST_FTL_H */
