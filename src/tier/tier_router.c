/*-------------------------------------------------------------------------
 *
 * tier_router.c
 *	  The tier router, the PageIO below tracing that joins an index's two
 *	  device chains (tier.h), and the TierState it keeps: the page -> tier
 *	  map in memory, the placements, migrations and their durability.
 *
 * Placement rules, applied by the router on every page it writes:
 *	- meta pages and free pages go to the slow tier (all_fast: fast);
 *	- node pages: single -> slow; all_fast -> fast; level -> fast when
 *	  level >= fast_min_level; hot / random -> the tier the observer asked
 *	  for, else where the page is (a new page starts slow); level_hot ->
 *	  level's rule, then hot's;
 *	- with fast_capacity, a page that would exceed it stays slow.
 * A write to another tier than the page's is a migration: the target is
 * written first, the map (tier_map.c) names it only after both devices were
 * synced, and the source copy is released (zeroed) only after the map is
 * durable.  random moves as many pages as hot would: at every sync it
 * draws pages to promote or demote until the fast node pages are as many
 * as the detector's hot pages (random_balance).  Migrations still pending
 * at a sync (pages no cache wrote back) are done then by copying.  The
 * router records in each request the tier that served it
 * (PageIORequest.tier), which the I/O trace keeps.  At the node store's
 * flush (PageIOOps.flush) it saves the hot-page weights (tier_weights.c)
 * and marks the map clean, so a close changes nothing about placement and
 * the next open needs no orphan scan.
 *
 * Process-global state: none; everything lives in the index's TierState,
 * in a child of the open index's memory context.
 *
 * IDENTIFICATION
 *	  src/tier/tier_router.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier_state.h"

#include "utils/float.h"
#include "utils/memutils.h"

/* ------------------------------------------------------------ tier state */

void
tier_grow_map(TierState *ts, uint64 n)
{
	uint64		cap;

	if (n <= ts->nentries)
		return;
	if (n > ts->allocated)
	{
		cap = Max(n, ts->allocated * 2);
		cap = Max(cap, 64);
		if (ts->entry == NULL)
		{
			ts->entry = MemoryContextAllocHuge(ts->cxt, cap);
			ts->want = MemoryContextAllocHuge(ts->cxt, cap);
		}
		else
		{
			ts->entry = repalloc_huge(ts->entry, cap);
			ts->want = repalloc_huge(ts->want, cap);
		}
		ts->allocated = cap;
	}
	memset(ts->entry + ts->nentries, 0, n - ts->nentries);
	memset(ts->want + ts->nentries, WANT_NONE, n - ts->nentries);
	ts->nentries = n;
}

/* The tier the placement assigns to a page written with this header. */
int
tier_placement_target(TierState *ts, PageId page, const FestPageHeader *h)
{
	int			current = tier_of(ts, page);

	if (ts->opt.placement == TIER_ALL_FAST)
		return TIER_FAST;
	if (h->magic != FEST_PAGE_MAGIC || h->kind != FEST_PAGE_NODE)
		return TIER_SLOW;
	switch (ts->opt.placement)
	{
		case TIER_SINGLE:
			return TIER_SLOW;
		case TIER_LEVEL:
			return is_level_fast(ts, h->level) ? TIER_FAST : TIER_SLOW;
		case TIER_LEVEL_HOT:
			if (is_level_fast(ts, h->level))
				return TIER_FAST;
			/* FALLTHROUGH */
		case TIER_HOT:
		case TIER_RANDOM:
			if (page < ts->nentries && ts->want[page] != WANT_NONE)
				return ts->want[page];
			/* a first write: a page the detector found hot before it was written */
			if (ts->opt.placement != TIER_RANDOM &&
				(page >= ts->nentries || (ts->entry[page] & ENTRY_PRESENT) == 0))
			{
				HotPage    *p = hash_search(ts->hot.pages, &page, HASH_FIND, NULL);

				if (p != NULL && p->hot)
					return TIER_FAST;
			}
			return current;
		case TIER_ALL_FAST:
			break;
	}
	return TIER_FAST;
}

void
tier_set_want(TierState *ts, PageId page, int target)
{
	tier_grow_map(ts, page + 1);
	if (ts->want[page] == WANT_NONE)
		ts->npending++;
	ts->want[page] = (uint8) target;
}

void
tier_clear_want(TierState *ts, PageId page)
{
	if (page < ts->nentries && ts->want[page] != WANT_NONE)
	{
		ts->want[page] = WANT_NONE;
		ts->npending--;
	}
}

/* Add this call's transfers on the shared counters to a tier's own. */
typedef struct IoMark
{
	int64		pages;
	int64		submissions;
	int64		device_ns;
} IoMark;

static IoMark
mark(const FestStats *s, bool write)
{
	IoMark		m;

	m.pages = write ? s->pages_written : s->pages_read;
	m.submissions = write ? s->write_submissions : s->read_submissions;
	m.device_ns = s->device_ns;
	return m;
}

static void
account(FestStats *s, int tier, bool write, IoMark before)
{
	IoMark		after = mark(s, write);
	int64		pages = after.pages - before.pages;
	int64		subs = after.submissions - before.submissions;
	int64		ns = after.device_ns - before.device_ns;

	if (tier == TIER_FAST)
	{
		if (write)
			s->tier_fast_pages_written += pages;
		else
			s->tier_fast_pages_read += pages;
		s->tier_fast_submissions += subs;
		s->tier_fast_device_ns += ns;
	}
	else
	{
		if (write)
			s->tier_slow_pages_written += pages;
		else
			s->tier_slow_pages_read += pages;
		s->tier_slow_submissions += subs;
		s->tier_slow_device_ns += ns;
	}
}

void
tier_io(TierState *ts, int tier, PageIORequest *reqs, int n, bool write)
{
	IoMark		before;
	PageIO	   *dev = ts->dev[tier];

	if (n == 0)
		return;
	before = mark(ts->router.stats, write);
	if (write)
		ts->unsynced[tier] = true;
	if (write)
		pageio_write(dev, reqs, n);
	else
		pageio_read(dev, reqs, n);
	account(ts->router.stats, tier, write, before);
}

/* ---------------------------------------------------------------- router */

static void
router_read(PageIO *io, PageIORequest *reqs, int n)
{
	TierState  *ts = TIER_STATE_OF(io);
	PageIORequest *split = palloc(sizeof(PageIORequest) * n);
	int			nfast = 0;
	int			nslow = 0;

	/* slow requests from the front, fast ones from the back: one call each */
	for (int i = 0; i < n; i++)
	{
		reqs[i].tier = (int8) tier_of(ts, reqs[i].page);
		if (reqs[i].tier == TIER_FAST)
			split[n - 1 - nfast++] = reqs[i];
		else
			split[nslow++] = reqs[i];
	}
	tier_io(ts, TIER_SLOW, split, nslow, false);
	tier_io(ts, TIER_FAST, split + n - nfast, nfast, false);
	pfree(split);
}

static void
note_released(TierState *ts, PageId page)
{
	if (ts->nreleased == ts->released_cap)
	{
		ts->released_cap = Max(16, ts->released_cap * 2);
		if (ts->released == NULL)
			ts->released = MemoryContextAlloc(ts->cxt, sizeof(PageId) * ts->released_cap);
		else
			ts->released = repalloc(ts->released, sizeof(PageId) * ts->released_cap);
	}
	ts->released[ts->nreleased++] = page;
}

static void
router_write(PageIO *io, PageIORequest *reqs, int n)
{
	TierState  *ts = TIER_STATE_OF(io);
	PageIORequest *split = palloc(sizeof(PageIORequest) * n);
	int		   *target = palloc(sizeof(int) * n);
	int			nfast = 0;
	int			nslow = 0;
	uint64		fast_after = ts->nfast;	/* counting this batch's moves */

	/*
	 * Before the first write since the map was last marked clean, mark it
	 * in use: a crash from now on may leave copies the map does not name.
	 * Nothing changed since that map was written, so it is still exact.
	 */
	if (!ts->open_marked)
	{
		tiermap_write(ts->map_path, TIERMAP_OPEN, ts->entry, ts->nentries,
					  ts->released, ts->nreleased, ts->router.fault);
		ts->open_marked = true;
	}

	for (int i = 0; i < n; i++)
	{
		PageId		page = reqs[i].page;
		const FestPageHeader *h = FestPageGetHeader(reqs[i].buf);
		int			current;

		tier_grow_map(ts, page + 1);
		current = tier_of(ts, page);
		target[i] = tier_placement_target(ts, page, h);
		/* a page that would overfill the fast tier stays slow */
		if (target[i] == TIER_FAST && current != TIER_FAST &&
			ts->opt.capacity_pages > 0 &&
			fast_after >= (uint64) ts->opt.capacity_pages)
			target[i] = TIER_SLOW;
		if (target[i] == TIER_FAST && current != TIER_FAST)
			fast_after++;
		else if (target[i] != TIER_FAST && current == TIER_FAST &&
				 (ts->entry[page] & ENTRY_PRESENT))
			fast_after--;
		reqs[i].tier = (int8) target[i];
		if (target[i] == TIER_FAST)
			split[n - 1 - nfast++] = reqs[i];
		else
			split[nslow++] = reqs[i];
	}
	/* the targets first: the source stays valid until the map is durable */
	tier_io(ts, TIER_SLOW, split, nslow, true);
	tier_io(ts, TIER_FAST, split + n - nfast, nfast, true);

	for (int i = 0; i < n; i++)
	{
		PageId		page = reqs[i].page;
		const FestPageHeader *h = FestPageGetHeader(reqs[i].buf);
		uint8		old = ts->entry[page];
		int			level = (h->magic == FEST_PAGE_MAGIC &&
							 h->kind == FEST_PAGE_NODE) ? h->level : -1;
		uint8		now = (uint8) (ENTRY_PRESENT | ((level + 1) << 1) | target[i]);

		if (ts->want[page] == target[i])
			tier_clear_want(ts, page);
		if (level < 0 && ts->detect)
		{
			/* a freed page is no longer hot: it may come back as any node */
			HotPage    *hp = hash_search(ts->hot.pages, &page, HASH_FIND, NULL);

			if (hp != NULL && hp->hot)
			{
				hp->hot = false;
				ts->hot.nhot--;
				ts->weights_dirty = true;
			}
		}
		if ((old & ENTRY_PRESENT) == 0)
		{
			if (target[i] == TIER_FAST)
				ts->nfast++;
		}
		else if ((old & ENTRY_FAST) != target[i])
		{
			if (target[i] == TIER_FAST)
			{
				ts->nfast++;
				ts->router.stats->tier_promotions++;
			}
			else
			{
				ts->nfast--;
				ts->router.stats->tier_demotions++;
			}
			/* the source holds an older copy: released after the map */
			note_released(ts, page);
		}
		if (old != now)
		{
			ts->entry[page] = now;
			ts->map_dirty = true;
		}
	}
	/* the capacity holds after every write (router_write's first loop) */
	Assert(ts->opt.capacity_pages == 0 ||
		   ts->nfast <= (uint64) ts->opt.capacity_pages);
	pfree(split);
	pfree(target);
}

/*
 * Draw a node page on the given tier with no pending migration (random
 * placement); InvalidPageId when there is none.
 */
PageId
tier_random_page(TierState *ts, int tier)
{
	uint64		n = ts->nentries;
	uint64		start;

	if (n <= FEST_FIRST_DATA_PAGE)
		return InvalidPageId;
	start = FEST_FIRST_DATA_PAGE + prng_below(&ts->prng, (uint32) (n - FEST_FIRST_DATA_PAGE));
	for (uint64 k = 0; k < n - FEST_FIRST_DATA_PAGE; k++)
	{
		PageId		page = FEST_FIRST_DATA_PAGE +
			(start - FEST_FIRST_DATA_PAGE + k) % (n - FEST_FIRST_DATA_PAGE);
		uint8		e = ts->entry[page];

		if ((e & ENTRY_PRESENT) && ENTRY_LEVEL(e) >= 0 &&
			(e & ENTRY_FAST) == tier && ts->want[page] == WANT_NONE)
			return page;
	}
	return InvalidPageId;
}

/*
 * Move one page to the tier it is wanted on, now: read it from its tier,
 * write it through the router (which places it and notes the release).
 */
void
tier_migrate_now(TierState *ts, PageId page)
{
	PageIORequest req;

	bool		buffered;

	if (page >= ts->nentries || ts->want[page] == WANT_NONE)
		return;
	req.page = page;
	req.buf = ts->scratch;
	/* a write buffer may hold a newer image than the device: it goes now */
	buffered = tier_buffer_take(ts, page, ts->scratch);
	if ((ts->entry[page] & ENTRY_PRESENT) == 0 ||
		tier_of(ts, page) == ts->want[page])
	{
		tier_clear_want(ts, page);
		if (buffered)
			router_write(&ts->router, &req, 1);
		return;
	}
	if (!buffered)
		tier_io(ts, tier_of(ts, page), &req, 1, false);
	router_write(&ts->router, &req, 1);
	/* a full fast tier refused it: give up until asked again */
	tier_clear_want(ts, page);
}

/*
 * random: make the fast node pages as many as the detector's hot pages.
 * They drift apart in two ways.  A promotion may find no slow page to draw
 * (new pages still in a cache or in a node store's batch).  And a freed
 * page leaves both sets on its own: a freed hot page leaves the hot set,
 * a freed fast page goes slow, and under random these are different pages
 * (hot demotes the freed page itself, so random must demote one too).
 * Settled at every sync, by drawing slow pages to promote or fast pages to
 * demote; pending migrations count as done.
 */
static void
random_balance(TierState *ts)
{
	int64		fast = (int64) ts->nfast;

	Assert(ts->opt.placement == TIER_RANDOM);
	for (PageId page = 0; page < ts->nentries && ts->npending > 0; page++)
		if (ts->want[page] != WANT_NONE && ts->want[page] != tier_of(ts, page))
			fast += ts->want[page] == TIER_FAST ? 1 : -1;
	while (fast != ts->hot.nhot)
	{
		int			from = fast < ts->hot.nhot ? TIER_SLOW : TIER_FAST;
		PageId		pick = tier_random_page(ts, from);

		if (pick == InvalidPageId)
			break;
		tier_set_want(ts, pick, 1 - from);
		fast += from == TIER_SLOW ? 1 : -1;
		ts->weights_dirty = true;	/* the generator moved */
	}
}

/*
 * Do the migrations no write-back did: read each page from its tier and
 * write it through the router, which places it.  Demotions first, so that
 * promotions find the room they free.
 */
static void
run_pending(TierState *ts)
{
	for (int pass = TIER_SLOW; pass <= TIER_FAST && ts->npending > 0; pass++)
		for (PageId page = 0; page < ts->nentries && ts->npending > 0; page++)
		{
			if (ts->want[page] == pass)
				tier_migrate_now(ts, page);
		}
}

/* Zero the copies the map no longer names (their pages are in released). */
void
tier_release_sources(TierState *ts, const PageId *pages, int n)
{
	for (int i = 0; i < n; i++)
	{
		PageIORequest req;

		if (pages[i] >= ts->nentries)
			continue;
		req.page = pages[i];
		req.buf = ts->zero;
		tier_io(ts, 1 - tier_of(ts, pages[i]), &req, 1, true);
		ts->router.stats->tier_releases++;
	}
}

void
tier_router_sync(PageIO *io)
{
	TierState  *ts = TIER_STATE_OF(io);

	if (ts->opt.placement == TIER_RANDOM)
		random_balance(ts);
	if (ts->npending > 0)
		run_pending(ts);
	/* a tier nothing was written to has nothing to make durable */
	for (int tier = TIER_SLOW; tier <= TIER_FAST; tier++)
		if (ts->unsynced[tier])
		{
			pageio_sync(ts->dev[tier]);
			ts->unsynced[tier] = false;
		}
	if (!ts->map_dirty)
		return;
	/* both targets are durable: now the map may name them */
	tiermap_write(ts->map_path, TIERMAP_OPEN, ts->entry, ts->nentries,
				  ts->released, ts->nreleased, ts->router.fault);
	ts->open_marked = true;
	ts->map_dirty = false;
	/* and only now may the sources go (replayed from the map after a crash) */
	tier_release_sources(ts, ts->released, ts->nreleased);
	ts->nreleased = 0;
}

static void
router_truncate(PageIO *io, uint64 npages)
{
	TierState  *ts = TIER_STATE_OF(io);
	int			kept = 0;

	pageio_truncate(ts->dev[TIER_SLOW], npages);
	pageio_truncate(ts->dev[TIER_FAST], npages);
	for (PageId page = npages; page < ts->nentries; page++)
	{
		if ((ts->entry[page] & (ENTRY_PRESENT | ENTRY_FAST)) == (ENTRY_PRESENT | ENTRY_FAST))
			ts->nfast--;
		tier_clear_want(ts, page);
	}
	if (ts->detect)
	{
		hot_model_forget_from(&ts->hot, npages);
		for (int level = 0; level < FEST_MAX_LEVELS; level++)
			if (ts->last_read[level] != InvalidPageId && ts->last_read[level] >= npages)
				ts->last_read[level] = InvalidPageId;
		if (npages <= FEST_FIRST_DATA_PAGE)
			ts->top_level = 0;
		ts->weights_dirty = true;
	}
	if (npages < ts->nentries)
	{
		ts->nentries = npages;
		ts->map_dirty = true;
	}
	for (int i = 0; i < ts->nreleased; i++)
		if (ts->released[i] < npages)
			ts->released[kept++] = ts->released[i];
	ts->nreleased = kept;
}

uint64
tier_router_npages(PageIO *io)
{
	TierState  *ts = TIER_STATE_OF(io);
	uint64		slow = pageio_npages(ts->dev[TIER_SLOW]);
	uint64		fast = pageio_npages(ts->dev[TIER_FAST]);

	return Max(slow, fast);
}

static void
router_close(PageIO *io)
{
	TierState  *ts = TIER_STATE_OF(io);

	pageio_close(ts->dev[TIER_SLOW]);
	pageio_close(ts->dev[TIER_FAST]);
}


/*
 * Time-based cooling at a flush (option cool_after, beyond the seeds): the
 * hot pages idle for cool_after accesses leave the hot set (hot_model_cool)
 * and, unless the level part keeps them fast, are wanted slow, which the
 * sync below carries out.  Under random the hot set shrinks and
 * random_balance demotes as many drawn pages.
 */
static void
cool_idle_pages(TierState *ts)
{
	PageId	   *cooled;
	int			n = hot_model_cool(&ts->hot, ts->opt.cool_after, &cooled);

	if (n > 0)
		ts->weights_dirty = true;
	for (int i = 0; i < n; i++)
	{
		PageId		page = cooled[i];

		if (ts->opt.placement == TIER_RANDOM || page >= ts->nentries ||
			is_level_fast(ts, ENTRY_LEVEL(ts->entry[page])))
			continue;
		tier_set_want(ts, page, TIER_SLOW);
	}
	pfree(cooled);
}

/*
 * The node store has flushed (PageIOOps.flush; a page cache above has
 * written back what the observer promoted since): do what is pending,
 * sync, save the hot-page weights, and mark the map clean, so that the
 * next open needs no orphan scan.  Synced twice: the first sync makes the
 * migrations and the map durable and then zeroes the sources the map
 * released; the second makes those zeroes durable before the clean map,
 * which no longer lists them, is written.
 */
static void
tier_router_flush(PageIO *io)
{
	TierState  *ts = TIER_STATE_OF(io);

	if (ts->detect && ts->opt.cool_after > 0)
		cool_idle_pages(ts);
	tier_router_sync(&ts->router);
	tier_router_sync(&ts->router);
	/* the weights before the clean map: a clean map never has older ones */
	if (ts->detect && ts->weights_dirty)
	{
		tier_weights_save(ts);
		ts->weights_dirty = false;
	}
	if (!ts->open_marked || ts->npending > 0)
		return;
	tiermap_write(ts->map_path, 0, ts->entry, ts->nentries, ts->released,
				  ts->nreleased, ts->router.fault);
	ts->open_marked = false;
}

/* the router implements every operation: it is over two chains */
const PageIOOps tier_router_ops = {
	.read = router_read,
	.write = router_write,
	.sync = tier_router_sync,
	.truncate = router_truncate,
	.npages = tier_router_npages,
	.close = router_close,
	.flush = tier_router_flush
};

/* ------------------------------------------------------------------ open */

static void release_orphans(TierState *ts);

/*
 * The tier state of an index over slow and fast (each a complete device
 * chain), in a child of the current memory context.  create: a new index
 * (the map is written at the first sync); otherwise the map is read and
 * verified, the releases it lists are done again, and a detecting
 * placement's hot-page weights are restored (tier_weights_load).
 */
TierState *
tier_open(const TierOptions *opt, const char *index_name, PageIO *slow,
		  PageIO *fast, const char *map_path, const char *weights_path,
		  bool create)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "festival tiers",
											  ALLOCSET_DEFAULT_SIZES);
	TierState  *ts = MemoryContextAllocZero(cxt, sizeof(TierState));

	Assert(opt->enabled && slow->page_size == fast->page_size);
	ts->cxt = cxt;
	ts->opt = *opt;
	ts->index_name = index_name;
	ts->map_path = MemoryContextStrdup(cxt, map_path);
	ts->weights_path = MemoryContextStrdup(cxt, weights_path);
	ts->dev[TIER_SLOW] = slow;
	ts->dev[TIER_FAST] = fast;
	ts->page_size = slow->page_size;
	pageio_wrap_init(&ts->router, &tier_router_ops, slow);
	/*
	 * A page written to the tier its durable map does not name is found
	 * after a crash only once a sync has written the map (tier_router_sync).
	 */
	ts->router.defers_writes = true;
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		ts->zero = pageio_alloc_buffer(ts->page_size);
		memset(ts->zero, 0, ts->page_size);
		ts->scratch = pageio_alloc_buffer(ts->page_size);
		MemoryContextSwitchTo(old);
	}
	ts->detect = opt->placement == TIER_HOT || opt->placement == TIER_LEVEL_HOT ||
		opt->placement == TIER_RANDOM;
	hot_model_init(&ts->hot, opt->selectivity, opt->capacity_pages, cxt);
	prng_init(&ts->prng, opt->seed, UINT64CONST(0x452821E638D01377));

	if (create)
	{
		tier_grow_map(ts, FEST_FIRST_DATA_PAGE);
		ts->map_dirty = true;
	}
	else
	{
		uint64		n;
		PageId	   *released;
		int			nreleased;
		uint16		flags;
		uint8	   *entries = tiermap_read(map_path, index_name, &flags, &n,
										   &released, &nreleased, cxt);

		tier_grow_map(ts, n);
		memcpy(ts->entry, entries, n);
		for (PageId page = 0; page < n; page++)
			if ((entries[page] & (ENTRY_PRESENT | ENTRY_FAST)) == (ENTRY_PRESENT | ENTRY_FAST))
				ts->nfast++;
		if (ts->detect)
			tier_weights_load(ts, (flags & TIERMAP_OPEN) != 0);
		/* a crash may have come between the map and the releases */
		tier_release_sources(ts, released, nreleased);
		ts->open_marked = (flags & TIERMAP_OPEN) != 0;
		if (ts->open_marked)
			release_orphans(ts);
	}
	return ts;
}

/*
 * After a crash: zero every valid copy the map does not name (the target
 * of a migration the map never recorded, or a page written to either tier
 * before the map knew it: then both copies go, and a later write of the
 * page, which the router takes for its first, leaves no stale copy
 * behind).  Costs two reads per page, once.
 */
static void
release_orphans(TierState *ts)
{
	uint64		end = tier_router_npages(&ts->router);
	char	   *buf = ts->scratch;

	for (PageId page = 0; page < end; page++)
	{
		uint8		e = page < ts->nentries ? ts->entry[page] : 0;

		/*
		 * A page the map names keeps its copy there; one it does not know
		 * (written first after the last sync: a node store's flush, a new
		 * page) keeps none, as nothing durable refers to it: its log or
		 * journal writes it again.
		 */
		for (int tier = TIER_SLOW; tier <= TIER_FAST; tier++)
		{
			PageIORequest req = {page, buf};

			if ((e & ENTRY_PRESENT) ? tier == (e & ENTRY_FAST) :
				page < FEST_FIRST_DATA_PAGE && tier == TIER_SLOW)
				continue;
			if (page >= pageio_npages(ts->dev[tier]))
				continue;
			tier_io(ts, tier, &req, 1, false);
			if (fest_page_verify(buf, ts->page_size, page, FestPageGetHeader(buf)->kind) != FEST_PAGE_OK)
				continue;
			req.buf = ts->zero;
			tier_io(ts, tier, &req, 1, true);
			ts->router.stats->tier_releases++;
		}
	}
	if (ts->unsynced[TIER_SLOW] || ts->unsynced[TIER_FAST])
		tier_router_sync(&ts->router);
}

PageIO *
tier_router(TierState *ts)
{
	return &ts->router;
}

/* The observer above the cache; for placements without detection, the cache. */
/* The tier that holds page now (TIER_SLOW for a page never written). */
int
tier_page_tier(TierState *ts, PageId page)
{
	return tier_of(ts, page);
}

uint64
tier_page_count(TierState *ts)
{
	return ts->nentries;
}

/*
 * The detector's s now (hot_selectivity, or where hot_selectivity_tuning
 * auto has moved it), clock, hot pages and the demotions of the epoch so
 * far (festival.stats); false for a placement without a detector.
 */
bool
tier_hot_state(TierState *ts, TierHotState *state)
{
	if (!ts->detect)
		return false;
	state->selectivity = ts->hot.selectivity;
	state->clock = ts->hot.clock;
	state->hot_pages = ts->hot.nhot;
	state->epoch_demotions = ts->hot.epoch_demotions;
	return true;
}

void
tier_page_info(TierState *ts, PageId page, TierPageInfo *info)
{
	uint8		e = page < ts->nentries ? ts->entry[page] : 0;
	HotPage    *p = hash_search(ts->hot.pages, &page, HASH_FIND, NULL);

	info->page = page;
	info->tier = (e & ENTRY_PRESENT) ? (e & ENTRY_FAST) : -1;
	info->level = ENTRY_LEVEL(e);
	info->weight = (p != NULL && p->last > 0) ? p->weight : get_float8_nan();
	info->accesses = p != NULL ? p->count : 0;
	info->hot = p != NULL && p->hot;
}
