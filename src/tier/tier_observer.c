/*-------------------------------------------------------------------------
 *
 * tier_observer.c
 *	  The tier observer: a PageIO on top of the chain that runs the hot-page
 *	  model (tier_hot.c) on every node the node store delivers to its
 *	  structure (PageIOOps.access), wherever the store found it: a device
 *	  read, a page cache's hit, FAST's or eFIND's buffer, a prefetched
 *	  batch; Fevgas 2019's HybridBucketDetect (Alg. 9) counts every access.
 *
 * A page whose weight exceeds s times its level's moving average, and whose
 * parent (the last page accessed one level up) is hot, is promoted by
 * setting its "3DXPoint dirty" flag (Alg. 9, step 5.3): the router's want
 * and an entry in the fast write buffer (tier_buffer.c), so it migrates
 * when that buffer next flushes, not at once.  With a capacity, promoting
 * into a full fast tier first demotes the least recently used hot page
 * that is no hot page's parent (beyond the seeds, which never cool), and
 * copies it back at once.  random runs the same detector but flags a page
 * drawn with the index's seed from the node pages on the slow tier.  Under
 * write_buffers shared_cache (no write buffers) a promoted page's image is
 * written back into the page cache instead, which moves it at its
 * write-back (at once without a cache; random copies its page at once).
 * The access that ends an epoch of the model's clock ends it in the model
 * (hot_model_epoch_end), which re-sets s under hot_selectivity_tuning auto.
 * Nothing else is watched; every operation passes through.
 *
 * IDENTIFICATION
 *	  src/tier/tier_observer.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier_state.h"

typedef struct ObserverPageIO
{
	PageIO		io;				/* must be first */
	TierState  *ts;
	char	   *image;			/* shared_cache: a promoted page's image */
} ObserverPageIO;

/*
 * One access to a node page at level (Alg. 10: Search refreshes the weight
 * of a fast page, runs HybridBucketDetect on a slow one; the model does
 * both).  A promotion sets the page's fast-tier dirty flag: the router's
 * want and an entry in the fast write buffer (tier_buffer_flag), so the
 * page migrates at that buffer's next flush.
 */
static void
observe(ObserverPageIO *o, PageId page, int level, uint16 flags)
{
	TierState  *ts = o->ts;
	PageId		parent = InvalidPageId;
	HotStep		step;

	if (page < FEST_FIRST_DATA_PAGE || level < 0 || level >= FEST_MAX_LEVELS)
		return;
	/* held in memory by its structure: read once, no access to model */
	if (flags & FEST_NODE_RESIDENT)
		return;
	if (level > ts->top_level)
		ts->top_level = level;
	/* the parent: the last page accessed one level up (exact for descents) */
	if (level < ts->top_level)
		parent = ts->last_read[level + 1];
	ts->last_read[level] = page;
	ts->weights_dirty = true;
	step = hot_model_access(&ts->hot, page, level, parent,
							parent != InvalidPageId && is_level_fast(ts, level + 1));
	/* this access ends an epoch: hot_selectivity_tuning auto re-sets s */
	if (ts->hot.clock % HOT_TUNE_EPOCH == 0)
		hot_model_epoch_end(&ts->hot, ts->opt.tuning == TIER_TUNING_AUTO);
	if (step.demoted != InvalidPageId && ts->opt.placement != TIER_RANDOM)
	{
		uint8		e = step.demoted < ts->nentries ? ts->entry[step.demoted] : 0;

		if (!is_level_fast(ts, ENTRY_LEVEL(e)))
		{
			/* make room now, so the promotion below finds it */
			tier_set_want(ts, step.demoted, TIER_SLOW);
			tier_migrate_now(ts, step.demoted);
		}
	}
	if (!step.promoted)
		return;
	if (ts->opt.placement == TIER_RANDOM)
	{
		PageId		pick = tier_random_page(ts, TIER_SLOW);

		/* none yet (pages still in a cache): random_balance draws it at the sync */
		if (pick != InvalidPageId)
		{
			tier_set_want(ts, pick, TIER_FAST);
			if (ts->buffers == NULL)
				tier_migrate_now(ts, pick);
			else
				tier_buffer_flag(ts, pick);
		}
		return;
	}
	if (tier_of(ts, page) == TIER_FAST)
	{
		/* hot again before its demotion ran: it stays */
		tier_clear_want(ts, page);
		return;
	}
	/* never written yet (a node store holds it): its first write is fast */
	if (page >= ts->nentries || (ts->entry[page] & ENTRY_PRESENT) == 0)
		return;
	/* Alg. 9, step 5.3: the 3DXPoint dirty flag */
	tier_set_want(ts, page, TIER_FAST);
	if (ts->buffers == NULL)
	{
		/*
		 * write_buffers shared_cache: the image goes back into the page
		 * cache (read there: a hit unless the store served the access),
		 * which writes it to the fast tier at its write-back; without a
		 * cache it moves now
		 */
		pageio_read_one(o->io.below, page, o->image);
		pageio_write_one(o->io.below, page, o->image);
		return;
	}

	/*
	 * The map's copy is no node (the page was freed and is a node again):
	 * its node image is above, in a cache or the node store, not written
	 * back yet.  The flag alone carries that write-back to the fast buffer;
	 * an entry without an image would read the old copy at the buffer's
	 * flush and move it, and a freed page's copy leaves the hot set
	 * (router_write), so the node would arrive fast but not hot.
	 */
	if (ENTRY_LEVEL(ts->entry[page]) < 0)
		return;
	tier_buffer_flag(ts, page);
}

static void
observer_access(PageIO *io, PageId page, int level, uint16 flags)
{
	ObserverPageIO *o = (ObserverPageIO *) io;

	if (o->ts->detect)
		observe(o, page, level, flags);
	pageio_access(io->below, page, level, flags);
}

/* it hears of accesses only; every other operation passes through (PageIOOps) */
const PageIOOps tier_observer_ops = {
	.access = observer_access
};

/* The observer above the cache; for placements without detection, the cache. */
PageIO *
tier_observer_wrap(TierState *ts, PageIO *cache)
{
	ObserverPageIO *o;

	if (!ts->detect)
		return cache;
	o = MemoryContextAllocZero(ts->cxt, sizeof(ObserverPageIO));
	pageio_wrap_init(&o->io, &tier_observer_ops, cache);
	o->ts = ts;
	if (ts->buffers == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(ts->cxt);

		o->image = pageio_alloc_buffer(ts->page_size);
		MemoryContextSwitchTo(old);
	}
	return &o->io;
}
