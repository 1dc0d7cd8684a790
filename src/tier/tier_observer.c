/*-------------------------------------------------------------------------
 *
 * tier_observer.c
 *	  The tier observer: a PageIO above the page cache that runs the hot-page
 *	  model (tier_hot.c) on every node page read, cache hits included, as
 *	  Fevgas 2019's HybridBucketDetect (Alg. 9) requires.
 *
 * A page whose weight exceeds s times its level's moving average, and whose
 * parent (the last page read one level up) is hot, is promoted: the
 * observer writes the image it just read back into the cache, which marks
 * it dirty, so it migrates at the next write-back, as Alg. 9's "3DXPoint
 * dirty" flag does.  With a capacity, promoting into a full fast tier
 * first demotes the least recently used hot page that is no hot page's
 * parent (beyond the seeds, which never cool), and copies it back at once.
 * random runs the same detector but promotes a page drawn with the index's
 * seed from the node pages on the slow tier (copied at once).  Only reads
 * are watched; every other operation passes through.
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
} ObserverPageIO;

static void
observe(ObserverPageIO *o, PageId page, char *buf)
{
	TierState  *ts = o->ts;
	const FestPageHeader *h = FestPageGetHeader(buf);
	int			level;
	PageId		parent = InvalidPageId;
	HotStep		step;

	if (h->magic != FEST_PAGE_MAGIC || h->kind != FEST_PAGE_NODE ||
		h->page_id != page || h->level >= FEST_MAX_LEVELS)
		return;
	/* held in memory by its structure: read once, no access to model */
	if (h->flags & FEST_NODE_RESIDENT)
		return;
	level = h->level;
	if (level > ts->top_level)
		ts->top_level = level;
	/* the parent: the last page read one level up (exact for descents) */
	if (level < ts->top_level)
		parent = ts->last_read[level + 1];
	ts->last_read[level] = page;
	ts->weights_dirty = true;
	step = hot_model_access(&ts->hot, page, level, parent,
							parent != InvalidPageId && is_level_fast(ts, level + 1));
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
			tier_migrate_now(ts, pick);
		}
		return;
	}
	if (tier_of(ts, page) == TIER_FAST)
	{
		/* hot again before its demotion ran: it stays */
		tier_clear_want(ts, page);
		return;
	}
	tier_set_want(ts, page, TIER_FAST);
	/* Alg. 9's dirty flag: the cache writes it back to the fast tier */
	pageio_write_one(o->io.below, page, buf);
}

static void
observer_read(PageIO *io, PageIORequest *reqs, int n)
{
	ObserverPageIO *o = (ObserverPageIO *) io;

	pageio_read(io->below, reqs, n);
	if (o->ts->detect)
		for (int i = 0; i < n; i++)
			observe(o, reqs[i].page, reqs[i].buf);
}

/* it watches reads only; every other operation passes through (PageIOOps) */
const PageIOOps tier_observer_ops = {
	.read = observer_read
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
	return &o->io;
}
