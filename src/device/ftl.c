/*-------------------------------------------------------------------------
 *
 * ftl.c
 *	  A simulated page-mapping flash translation layer (FTL).
 *
 * NAND flash cannot overwrite a page in place: a block (pages_per_block
 * pages) must be erased before its pages are programmed again (Carniel et al.
 * 2016 section 4, "erase-before-update").  A page-mapping FTL therefore writes
 * every logical page out of place, to the next free page of an open block,
 * and marks the old copy invalid.  When free blocks run short, garbage
 * collection picks a victim block, copies its still-valid pages forward
 * and erases it; those copies are the write amplification (Chung et al.
 * 2009, cited by Carniel et al. 2016; thesis section 2.2).
 *
 * Policies, chosen to be simple and deterministic:
 *	- greedy GC: the full block with the fewest valid pages is collected,
 *	  ties broken by fewer erases, then by lower block number;
 *	- wear levelling, dynamic: a new block is the free block erased least
 *	  often (ties: lower block number); and static: cold data never frees
 *	  its blocks, so after GC, when the most erased block is more than
 *	  WEAR_LEVEL_SPREAD erases ahead of the least erased full block, that
 *	  block's data is moved once (into a worn block) and it rejoins the
 *	  free pool;
 *	- GC starts when only GC_RESERVE_BLOCKS free blocks remain, so copies
 *	  always find room;
 *	- capacity: the drive's user capacity follows the file (rounded up to
 *	  whole blocks); over-provisioning adds overprovision_percent spare
 *	  blocks, and never fewer than MIN_SPARE_BLOCKS, which guarantees that
 *	  some full block holds an invalid page whenever GC runs.
 *
 * Everything lives in the memory context current at ftl_create().
 *
 * IDENTIFICATION
 *	  src/device/ftl.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/ftl.h"

#include <math.h>

#define FTL_UNMAPPED		PG_UINT32_MAX
#define GC_RESERVE_BLOCKS	1
#define MIN_SPARE_BLOCKS	3
#define WEAR_LEVEL_SPREAD	16

typedef enum BlockState
{
	BLOCK_FREE,
	BLOCK_OPEN,
	BLOCK_FULL
} BlockState;

struct Ftl
{
	MemoryContext cxt;
	uint32		ppb;			/* pages per block */
	double		op_percent;
	uint32		free_space_blocks;	/* erased blocks of the rest of the drive */
	uint64		logical_pages;	/* user capacity, a multiple of ppb */
	uint32		nblocks;		/* physical blocks */
	uint64		l2p_cap;		/* allocated entries of l2p */
	uint32	   *l2p;			/* logical page -> physical page */
	uint32	   *p2l;			/* physical page -> logical page */
	uint32	   *valid;			/* valid pages per block */
	uint32	   *erase_count;	/* per block */
	uint8	   *state;			/* BlockState per block */
	uint32		free_blocks;
	uint32		active;			/* open block, or FTL_UNMAPPED */
	uint32		write_ptr;		/* next page in the open block */
	uint32		max_erases;		/* highest erase count of any block */
	FtlCounters counters;
};

Ftl *
ftl_create(int pages_per_block, double overprovision_percent)
{
	Ftl		   *ftl = palloc0(sizeof(Ftl));

	Assert(pages_per_block > 0);
	ftl->cxt = CurrentMemoryContext;
	ftl->ppb = (uint32) pages_per_block;
	ftl->op_percent = overprovision_percent;
	ftl->active = FTL_UNMAPPED;
	return ftl;
}

/*
 * The drive is larger than the index: blocks more are erased and free
 * (device model 2, see sim.c).  Call before the first write.
 */
void
ftl_set_free_space(Ftl *ftl, uint32 blocks)
{
	Assert(ftl->nblocks == 0);
	ftl->free_space_blocks = blocks;
}

static void *
grow_array(Ftl *ftl, void *array, size_t elem, uint64 old_n, uint64 new_n,
		   int fill)
{
	char	   *result;

	if (array == NULL)
		result = MemoryContextAllocHuge(ftl->cxt, new_n * elem);
	else
		result = repalloc_huge(array, new_n * elem);
	memset(result + old_n * elem, fill, (new_n - old_n) * elem);
	return result;
}

/*
 * Make the user capacity cover lpn: the file grew, so the drive grows by
 * whole blocks, spare blocks included.  New physical blocks arrive erased.
 */
static void
ensure_capacity(Ftl *ftl, uint64 lpn)
{
	uint64		logical_blocks;
	uint64		spare;
	uint64		nblocks;

	if (lpn < ftl->logical_pages)
		return;
	logical_blocks = lpn / ftl->ppb + 1;
	spare = (uint64) ceil(logical_blocks * ftl->op_percent / 100.0);
	spare = Max(spare, MIN_SPARE_BLOCKS) + ftl->free_space_blocks;
	nblocks = logical_blocks + spare;
	if ((nblocks + 1) * ftl->ppb >= FTL_UNMAPPED)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("simulated flash drive cannot exceed %u pages",
						FTL_UNMAPPED - 1),
				 errhint("Use a larger page size or a device without a flash profile.")));

	if (logical_blocks * ftl->ppb > ftl->l2p_cap)
	{
		uint64		cap = Max(logical_blocks * ftl->ppb, ftl->l2p_cap * 2);

		ftl->l2p = grow_array(ftl, ftl->l2p, sizeof(uint32), ftl->l2p_cap, cap, 0xFF);
		ftl->l2p_cap = cap;
	}
	ftl->logical_pages = logical_blocks * ftl->ppb;

	if (nblocks > ftl->nblocks)
	{
		ftl->p2l = grow_array(ftl, ftl->p2l, sizeof(uint32),
							  (uint64) ftl->nblocks * ftl->ppb,
							  nblocks * ftl->ppb, 0xFF);
		ftl->valid = grow_array(ftl, ftl->valid, sizeof(uint32), ftl->nblocks, nblocks, 0);
		ftl->erase_count = grow_array(ftl, ftl->erase_count, sizeof(uint32),
									  ftl->nblocks, nblocks, 0);
		ftl->state = grow_array(ftl, ftl->state, sizeof(uint8), ftl->nblocks, nblocks, BLOCK_FREE);
		ftl->free_blocks += (uint32) (nblocks - ftl->nblocks);
		ftl->nblocks = (uint32) nblocks;
	}
}

/* Wear levelling: the least erased free block (lowest number on ties). */
static uint32
take_free_block(Ftl *ftl)
{
	uint32		best = FTL_UNMAPPED;

	for (uint32 b = 0; b < ftl->nblocks; b++)
		if (ftl->state[b] == BLOCK_FREE &&
			(best == FTL_UNMAPPED || ftl->erase_count[b] < ftl->erase_count[best]))
			best = b;
	if (best == FTL_UNMAPPED)
		elog(ERROR, "simulated FTL has no free block");
	ftl->state[best] = BLOCK_OPEN;
	ftl->free_blocks--;
	return best;
}

static void
invalidate(Ftl *ftl, uint64 lpn)
{
	uint32		ppn = ftl->l2p[lpn];

	if (ppn == FTL_UNMAPPED)
		return;
	ftl->p2l[ppn] = FTL_UNMAPPED;
	ftl->valid[ppn / ftl->ppb]--;
	ftl->l2p[lpn] = FTL_UNMAPPED;
}

static void collect_garbage(Ftl *ftl);

/*
 * Program lpn at the write frontier.  Host writes may trigger GC before a
 * new block is opened; GC copies (gc true) use the reserve instead.
 */
static void
program(Ftl *ftl, uint64 lpn, bool gc)
{
	uint32		ppn;

	if (ftl->active == FTL_UNMAPPED || ftl->write_ptr == ftl->ppb)
	{
		if (ftl->active != FTL_UNMAPPED)
			ftl->state[ftl->active] = BLOCK_FULL;
		ftl->active = FTL_UNMAPPED;
		if (!gc)
			collect_garbage(ftl);
		if (ftl->active == FTL_UNMAPPED || ftl->write_ptr == ftl->ppb)
		{
			if (ftl->active != FTL_UNMAPPED)
				ftl->state[ftl->active] = BLOCK_FULL;
			ftl->active = take_free_block(ftl);
			ftl->write_ptr = 0;
		}
	}
	ppn = ftl->active * ftl->ppb + ftl->write_ptr++;
	ftl->l2p[lpn] = ppn;
	ftl->p2l[ppn] = (uint32) lpn;
	ftl->valid[ftl->active]++;
	ftl->counters.flash_writes++;
}

/* Greedy victim: the full block with the fewest valid pages. */
static uint32
choose_victim(Ftl *ftl)
{
	uint32		best = FTL_UNMAPPED;

	for (uint32 b = 0; b < ftl->nblocks; b++)
	{
		if (ftl->state[b] != BLOCK_FULL)
			continue;
		if (best == FTL_UNMAPPED ||
			ftl->valid[b] < ftl->valid[best] ||
			(ftl->valid[b] == ftl->valid[best] &&
			 ftl->erase_count[b] < ftl->erase_count[best]))
			best = b;
	}
	return best;
}

/* Copy a full block's valid pages forward and erase it. */
static void
reclaim(Ftl *ftl, uint32 victim)
{
	uint32		first = victim * ftl->ppb;

	for (uint32 i = 0; i < ftl->ppb && ftl->valid[victim] > 0; i++)
	{
		uint32		lpn = ftl->p2l[first + i];

		if (lpn == FTL_UNMAPPED)
			continue;
		invalidate(ftl, lpn);
		program(ftl, lpn, true);
		ftl->counters.gc_copies++;
	}
	Assert(ftl->valid[victim] == 0);
	memset(&ftl->p2l[first], 0xFF, ftl->ppb * sizeof(uint32));
	ftl->erase_count[victim]++;
	ftl->max_erases = Max(ftl->max_erases, ftl->erase_count[victim]);
	ftl->state[victim] = BLOCK_FREE;
	ftl->free_blocks++;
	ftl->counters.erases++;
	ftl->counters.gc_runs++;
}

/* Static wear levelling: the least erased full block, if it lags too far. */
static uint32
choose_cold_block(Ftl *ftl)
{
	uint32		best = FTL_UNMAPPED;

	for (uint32 b = 0; b < ftl->nblocks; b++)
		if (ftl->state[b] == BLOCK_FULL &&
			(best == FTL_UNMAPPED || ftl->erase_count[b] < ftl->erase_count[best]))
			best = b;
	if (best != FTL_UNMAPPED &&
		ftl->max_erases - ftl->erase_count[best] > WEAR_LEVEL_SPREAD)
		return best;
	return FTL_UNMAPPED;
}

/*
 * Reclaim blocks until more than the reserve is free, greedy victims
 * first.  A victim without an invalid page would free nothing;
 * MIN_SPARE_BLOCKS rules that out, but the loop stops rather than spin if
 * it ever happened.  Then, at most once per call, a lagging cold block is
 * moved (it frees as much as it uses, so the reserve stays intact).
 */
static void
collect_garbage(Ftl *ftl)
{
	bool		collected = false;
	uint32		cold;

	while (ftl->free_blocks <= GC_RESERVE_BLOCKS)
	{
		uint32		victim = choose_victim(ftl);

		if (victim == FTL_UNMAPPED || ftl->valid[victim] == ftl->ppb)
			break;
		reclaim(ftl, victim);
		collected = true;
	}
	if (collected && ftl->free_blocks > GC_RESERVE_BLOCKS &&
		(cold = choose_cold_block(ftl)) != FTL_UNMAPPED)
		reclaim(ftl, cold);
}

/* The host writes one logical page. */
void
ftl_write(Ftl *ftl, uint64 lpn)
{
	ensure_capacity(ftl, lpn);
	invalidate(ftl, lpn);
	program(ftl, lpn, false);
	ftl->counters.host_writes++;
}

/* The file was truncated: its pages from first_lpn on are trimmed. */
void
ftl_trim_from(Ftl *ftl, uint64 first_lpn)
{
	for (uint64 lpn = first_lpn; lpn < ftl->logical_pages; lpn++)
		invalidate(ftl, lpn);
}

/*
 * An existing file was opened: its pages are laid out as if written once,
 * in order, on a fresh drive.  Nothing is counted.
 */
void
ftl_precondition(Ftl *ftl, uint64 npages)
{
	FtlCounters saved = ftl->counters;

	for (uint64 lpn = 0; lpn < npages; lpn++)
		ftl_write(ftl, lpn);
	ftl->counters = saved;
}

const FtlCounters *
ftl_counters(const Ftl *ftl)
{
	return &ftl->counters;
}

void
ftl_state(const Ftl *ftl, FtlState *st)
{
	memset(st, 0, sizeof(FtlState));
	st->blocks = ftl->nblocks;
	st->free_blocks = ftl->free_blocks;
	st->logical_pages = ftl->logical_pages;
	for (uint32 b = 0; b < ftl->nblocks; b++)
	{
		st->valid_pages += ftl->valid[b];
		if (b == 0 || ftl->erase_count[b] < st->wear_min)
			st->wear_min = ftl->erase_count[b];
		if (ftl->erase_count[b] > st->wear_max)
			st->wear_max = ftl->erase_count[b];
	}
}
