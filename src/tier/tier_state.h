/*-------------------------------------------------------------------------
 *
 * tier_state.h
 *	  The state the tier layer's files share (not for other layers: they
 *	  see tier/tier.h).
 *
 * One TierState per tiered index, in a child of the open index's memory
 * context: the page -> tier map as it is in memory (its durable copy is
 * the map file, tier_map.c), the migrations wanted and pending, the hot-page
 * model the observer runs (tier_hot.c, tier_observer.c) and the weights
 * that keep it across a close (tier_weights.c), and the router's PageIO
 * (tier_router.c) over the two device chains.
 *
 * IDENTIFICATION
 *	  src/tier/tier_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_TIER_STATE_H
#define FEST_TIER_STATE_H

#include "tier/tier.h"

#include "format/page.h"

/* a map byte (tier_map.c): bit 0 the tier, bits 1-6 the level + 1, bit 7 written */
#define ENTRY_FAST		0x01
#define ENTRY_PRESENT	0x80	/* written at least once */
#define ENTRY_LEVEL(e)	((int) (((e) >> 1) & 0x3F) - 1)	/* -1: not a node */
#define WANT_NONE		0xFF

/*
 * The per-device write buffers of a detecting placement (tier_buffer.c,
 * Fevgas 2019 §4.3, Alg. 11): one per tier, each up to capacity pages; a
 * page is in at most one.  An entry holds the page's newest image, or none
 * (a promotion flagged for a page whose image no buffer holds: it is read
 * when its buffer flushes).
 */
typedef struct TierBufferEntry
{
	PageId		page;			/* hash key */
	int			tier;			/* the buffer it is in: the tier it goes to */
	char	   *image;			/* NULL: flagged only */
	bool		verified;		/* the image is known sealed */
} TierBufferEntry;

typedef struct TierBuffers
{
	HTAB	   *entries;		/* PageId -> TierBufferEntry, both buffers */
	int			count[2];		/* entries per tier */
	int			capacity;		/* pages per buffer */
	PageIO	   *below;			/* where a flush writes (tracing, the router) */
	TierState  *ts;
	PageIO		io;				/* the layer's PageIO, above below */
} TierBuffers;

struct TierState
{
	MemoryContext cxt;
	TierOptions opt;
	const char *index_name;
	char	   *map_path;
	char	   *weights_path;	/* the hot-page weights (tier_weights.c) */
	bool		weights_dirty;	/* the detector changed since they were saved */
	PageIO	   *dev[2];
	PageIO		router;			/* the router's PageIO */
	uint32		page_size;
	uint64		nentries;		/* pages the map knows */
	uint64		allocated;
	uint8	   *entry;			/* per page, the map's byte (tier_map.c) */
	uint8	   *want;			/* per page, a pending migration's target */
	uint64		nfast;
	uint64		npending;		/* pages with want != WANT_NONE */
	bool		map_dirty;
	PageId	   *released;		/* migrated since the last map write */
	int			nreleased;
	int			released_cap;
	bool		detect;			/* the observer runs the hot model */
	HotModel	hot;
	PageId		last_read[FEST_MAX_LEVELS];
	int			top_level;		/* highest level read: the root's */
	Prng		prng;
	TierBuffers *buffers;		/* the per-device write buffers (tier_buffer.c), or NULL */
	bool		unsynced[2];	/* written since its last sync */
	bool		open_marked;	/* the map on disk has TIERMAP_OPEN */
	char	   *zero;
	char	   *scratch;
};

/* The TierState of the router's PageIO. */
#define TIER_STATE_OF(io) ((TierState *) ((char *) (io) - offsetof(TierState, router)))

/* The tier that holds page now (TIER_SLOW for a page never written). */
static inline int
tier_of(const TierState *ts, PageId page)
{
	return page < ts->nentries ? (ts->entry[page] & ENTRY_FAST) : TIER_SLOW;
}

/* Does the level part of placement (level, level_hot) put this level fast? */
static inline bool
is_level_fast(const TierState *ts, int level)
{
	return (ts->opt.placement == TIER_LEVEL ||
			ts->opt.placement == TIER_LEVEL_HOT) &&
		level >= ts->opt.min_level;
}

/* tier_router.c */
extern void tier_grow_map(TierState *ts, uint64 n);
extern void tier_set_want(TierState *ts, PageId page, int target);
extern void tier_clear_want(TierState *ts, PageId page);
extern void tier_io(TierState *ts, int tier, PageIORequest *reqs, int n,
					bool write);
extern PageId tier_random_page(TierState *ts, int tier);
extern void tier_migrate_now(TierState *ts, PageId page);
extern void tier_release_sources(TierState *ts, const PageId *pages, int n);
extern void tier_router_sync(PageIO *io);
extern uint64 tier_router_npages(PageIO *io);
extern const PageIOOps tier_router_ops;

extern int	tier_placement_target(TierState *ts, PageId page,
								  const FestPageHeader *h);

/* tier_buffer.c: the per-device write buffers */
extern void tier_buffer_flag(TierState *ts, PageId page);
extern bool tier_buffer_take(TierState *ts, PageId page, char *buf);
extern void tier_buffer_check(TierState *ts, TierProblem problem, void *arg);

/* tier_observer.c */
extern const PageIOOps tier_observer_ops;

/* tier_weights.c: the hot-page weights file */
extern void tier_weights_save(TierState *ts);
extern void tier_weights_load(TierState *ts, bool after_crash);

/*
 * tier_map.c: the durable page -> tier map.  TIERMAP_OPEN is set in every
 * map written before pages are written in a session and cleared by the
 * router's flush (PageIOOps.flush, after the node store's): an open that
 * finds it set follows a crash, after which a migration's target copy may
 * exist without the map naming it, and the open releases such orphans
 * (reading every page's other copy).
 */
#define TIERMAP_OPEN	0x0001
extern void tiermap_write(const char *path, uint16 flags, const uint8 *entries,
						  uint64 n, const PageId *released, int nreleased,
						  FaultState *fs);
extern uint8 *tiermap_read(const char *path, const char *index_name,
						   uint16 *flags, uint64 *n, PageId **released,
						   int *nreleased, MemoryContext cxt);

/*
 * tier_map.c: a file the index writes itself, replaced atomically (the map,
 * the weights): the parts are written to "<path>.tmp", fsynced, renamed
 * over path; the fault layer's target is checked half-way through.
 */
typedef struct TierFilePart
{
	const void *data;
	size_t		len;
} TierFilePart;
extern void tier_file_replace(const char *path, const char *what, const char *hint,
							  const TierFilePart *parts, int nparts, FaultState *fs,
							  FaultTarget target);

#endif							/* FEST_TIER_STATE_H */
