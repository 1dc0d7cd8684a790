/*-------------------------------------------------------------------------
 *
 * tier.c
 *	  The hot-page model (Fevgas 2019, Alg. 9), the router and the observer
 *	  PageIOs, and the tier part of check() (see tier.h); the options are
 *	  in tier_options.c.
 *
 * Placement rules, applied by the router on every page it writes:
 *	- meta pages and free pages go to the slow tier (all_fast: fast);
 *	- node pages: single -> slow; all_fast -> fast; level -> fast when
 *	  level >= fast_min_level; hot / random -> the tier the observer asked
 *	  for, else where the page is (a new page starts slow); level_hot ->
 *	  level's rule, then hot's;
 *	- with fast_capacity, a page that would exceed it stays slow.
 * The observer runs Alg. 9 on every node page it sees read: a page whose
 * weight exceeds s times its level's moving average, and whose parent
 * (the last page read one level up) is hot, is promoted: the observer
 * writes the image it just read back into the cache, which marks it dirty,
 * so it migrates at the next write-back, as Alg. 9's "3DXPoint dirty" flag
 * does.  With a capacity, promoting into a full fast tier first demotes
 * the least recently used hot page that is no hot page's parent (beyond
 * the seeds, which never cool), and copies it back at once.  random runs
 * the same detector but promotes a page drawn with the index's seed from
 * the node pages on the slow tier (copied at once), and at every sync
 * draws pages to promote or demote until the fast node pages are as many
 * as the detector's hot pages (random_balance), so it moves as many pages
 * as hot.
 * Migrations still pending at a sync (pages no cache wrote back) are done
 * then by copying.  The detector's state is saved beside the map at every
 * flush and restored at an open (save_weights, load_weights), so a close
 * changes nothing about placement.
 *
 * Process-global state: none; everything lives in the index's TierState,
 * in a child of the open index's memory context.
 *
 * IDENTIFICATION
 *	  src/tier/tier.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier.h"

#include <math.h>

#include "format/page.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/memutils.h"

/* ---------------------------------------------------------- the hot model */

void
hot_model_init(HotModel *m, double selectivity, int64 capacity, MemoryContext cxt)
{
	HASHCTL		ctl;

	memset(m, 0, sizeof(HotModel));
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(HotPage);
	ctl.hcxt = cxt;
	m->pages = hash_create("festival hot pages", 256, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	m->selectivity = selectivity;
	m->capacity = capacity;
}

/*
 * Forget the pages from first on, which a truncation removed from the file
 * (a rebuild empties it, a failed commit cuts off the pages it added): a
 * page of that number written later is another node.  Cut down to the
 * meta pages, the file holds no tree any more, and the model starts over.
 */
void
hot_model_forget_from(HotModel *m, PageId first)
{
	HASH_SEQ_STATUS seq;
	HotPage    *p;

	hash_seq_init(&seq, m->pages);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		if (p->page < first)
			continue;
		if (p->hot)
			m->nhot--;
		(void) hash_search(m->pages, &p->page, HASH_REMOVE, NULL);
	}
	if (first <= FEST_FIRST_DATA_PAGE)
	{
		Assert(m->nhot == 0);
		m->clock = 0;
		memset(m->max_count, 0, sizeof(m->max_count));
		memset(m->wsum, 0, sizeof(m->wsum));
		memset(m->wn, 0, sizeof(m->wn));
	}
}

/*
 * The demotion victim: the least recently accessed hot page among those
 * that are no hot page's parent (so that the rule "a page is fast only
 * when its parent is" survives demotion); never keep.  LRU rather than
 * lowest weight: a weight is only refreshed when its page is accessed, so
 * the pages of a hot set that has moved on keep their old, high weights
 * and would never leave.
 */
static HotPage *
coldest(HotModel *m, PageId keep)
{
	HASH_SEQ_STATUS seq;
	HotPage    *p;
	HotPage    *best = NULL;
	HASHCTL		ctl;
	HTAB	   *parents;

	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(PageId);
	ctl.hcxt = CurrentMemoryContext;
	parents = hash_create("festival hot parents", 64, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	hash_seq_init(&seq, m->pages);
	while ((p = hash_seq_search(&seq)) != NULL)
		if (p->hot && p->parent != InvalidPageId)
			(void) hash_search(parents, &p->parent, HASH_ENTER, NULL);
	hash_seq_init(&seq, m->pages);
	while ((p = hash_seq_search(&seq)) != NULL)
		if (p->hot && p->page != keep &&
			hash_search(parents, &p->page, HASH_FIND, NULL) == NULL &&
			(best == NULL || p->last < best->last))
			best = p;
	hash_destroy(parents);
	return best;
}

/*
 * One access to page at level, whose parent is parent (InvalidPageId: a
 * root).  Eq. 4.1/4.2 generalised to any number of levels:
 *	W = W(parent) + F - (T - t) / T
 * with F = count / max count at this level, T the clock after this access
 * and t the clock of the previous access (0: never, so the penalty is 1).
 * The level's cumulative sum counts every evaluated page (step 2 of Alg. 9
 * comes before the parent test).  parent_fast says whether the parent is
 * on the fast tier for a reason other than this model (level_hot).
 */
HotStep
hot_model_access(HotModel *m, PageId page, int level, PageId parent,
				 bool parent_fast)
{
	HotStep		step = {0, 0, false, false, InvalidPageId};
	HotPage    *p;
	HotPage    *par = NULL;
	bool		found;
	double		f;
	double		penalty;

	Assert(level >= 0 && level < FEST_MAX_LEVELS);
	m->clock++;
	p = hash_search(m->pages, &page, HASH_ENTER, &found);
	if (!found)
	{
		p->count = 0;
		p->last = 0;
		p->weight = 0;
		p->hot = false;
	}
	p->count++;
	p->parent = parent;
	if (p->count > m->max_count[level])
		m->max_count[level] = p->count;
	f = (double) p->count / (double) m->max_count[level];
	penalty = (double) (m->clock - p->last) / (double) m->clock;
	if (parent != InvalidPageId)
		par = hash_search(m->pages, &parent, HASH_FIND, NULL);
	step.weight = (par != NULL ? par->weight : 0) + f - penalty;
	p->weight = step.weight;
	p->last = m->clock;

	m->wsum[level] += step.weight;
	m->wn[level]++;
	step.average = m->wsum[level] / (double) m->wn[level];
	step.eligible = parent == InvalidPageId || parent_fast ||
		(par != NULL && par->hot);
	if (p->hot || !step.eligible)
		return step;
	if (step.weight > m->selectivity * step.average)
	{
		if (m->capacity > 0 && m->nhot >= m->capacity)
		{
			HotPage    *victim = coldest(m, page);

			/* every hot page is some hot page's parent: nothing can go */
			if (victim == NULL)
				return step;
			victim->hot = false;
			m->nhot--;
			step.demoted = victim->page;
		}
		p->hot = true;
		m->nhot++;
		step.promoted = true;
	}
	return step;
}

/* ------------------------------------------------------------ tier state */

#define ENTRY_FAST		0x01
#define ENTRY_PRESENT	0x80	/* written at least once */
#define ENTRY_LEVEL(e)	((int) (((e) >> 1) & 0x3F) - 1)	/* -1: not a node */
#define WANT_NONE		0xFF

struct TierState
{
	MemoryContext cxt;
	TierOptions opt;
	const char *index_name;
	char	   *map_path;
	char	   *weights_path;	/* the hot-page weights (tiermap.c) */
	bool		weights_dirty;	/* the detector changed since they were saved */
	PageIO	   *dev[2];
	PageIO		router;			/* the router's PageIO */
	uint32		page_size;
	uint64		nentries;		/* pages the map knows */
	uint64		allocated;
	uint8	   *entry;			/* per page, the map's byte (tiermap.c) */
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
	bool		unsynced[2];	/* written since its last sync */
	bool		open_marked;	/* the map on disk has TIERMAP_OPEN */
	char	   *zero;
	char	   *scratch;
};

typedef struct ObserverPageIO
{
	PageIO		io;				/* must be first */
	PageIO	   *below;
	TierState  *ts;
} ObserverPageIO;

static void
grow_map(TierState *ts, uint64 n)
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

static inline int
tier_of(const TierState *ts, PageId page)
{
	return page < ts->nentries ? (ts->entry[page] & ENTRY_FAST) : TIER_SLOW;
}

static bool
is_level_fast(const TierState *ts, int level)
{
	return (ts->opt.placement == TIER_LEVEL ||
			ts->opt.placement == TIER_LEVEL_HOT) &&
		level >= ts->opt.min_level;
}

/* The tier the placement assigns to a page written with this header. */
static int
placement_target(TierState *ts, PageId page, const FestPageHeader *h)
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
			return current;
		case TIER_ALL_FAST:
			break;
	}
	return TIER_FAST;
}

static void
set_want(TierState *ts, PageId page, int target)
{
	grow_map(ts, page + 1);
	if (ts->want[page] == WANT_NONE)
		ts->npending++;
	ts->want[page] = (uint8) target;
}

static void
clear_want(TierState *ts, PageId page)
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

static void
tier_io(TierState *ts, int tier, PageIORequest *reqs, int n, bool write)
{
	IoMark		before;
	PageIO	   *dev = ts->dev[tier];

	if (n == 0)
		return;
	before = mark(ts->router.stats, write);
	dev->time_cpu = ts->router.time_cpu;
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
	TierState  *ts = (TierState *) ((char *) io - offsetof(TierState, router));
	PageIORequest *split = palloc(sizeof(PageIORequest) * n);
	int			nfast = 0;
	int			nslow = 0;

	/* slow requests from the front, fast ones from the back: one call each */
	for (int i = 0; i < n; i++)
	{
		if (tier_of(ts, reqs[i].page) == TIER_FAST)
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
	TierState  *ts = (TierState *) ((char *) io - offsetof(TierState, router));
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

		grow_map(ts, page + 1);
		current = tier_of(ts, page);
		target[i] = placement_target(ts, page, h);
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
			clear_want(ts, page);
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
static PageId
random_page(TierState *ts, int tier)
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
static void
migrate_now(TierState *ts, PageId page)
{
	PageIORequest req;

	if (page >= ts->nentries || ts->want[page] == WANT_NONE)
		return;
	if ((ts->entry[page] & ENTRY_PRESENT) == 0 ||
		tier_of(ts, page) == ts->want[page])
	{
		clear_want(ts, page);
		return;
	}
	req.page = page;
	req.buf = ts->scratch;
	tier_io(ts, tier_of(ts, page), &req, 1, false);
	router_write(&ts->router, &req, 1);
	/* a full fast tier refused it: give up until asked again */
	clear_want(ts, page);
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
		PageId		pick = random_page(ts, from);

		if (pick == InvalidPageId)
			break;
		set_want(ts, pick, 1 - from);
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
				migrate_now(ts, page);
		}
}

/* Zero the copies the map no longer names (their pages are in released). */
static void
release_sources(TierState *ts, const PageId *pages, int n)
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

static void
router_sync(PageIO *io)
{
	TierState  *ts = (TierState *) ((char *) io - offsetof(TierState, router));

	if (ts->opt.placement == TIER_RANDOM)
		random_balance(ts);
	if (ts->npending > 0)
		run_pending(ts);
	/* a tier nothing was written to has nothing to make durable */
	for (int tier = TIER_SLOW; tier <= TIER_FAST; tier++)
		if (ts->unsynced[tier])
		{
			ts->dev[tier]->time_cpu = io->time_cpu;
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
	release_sources(ts, ts->released, ts->nreleased);
	ts->nreleased = 0;
}

static void
router_truncate(PageIO *io, uint64 npages)
{
	TierState  *ts = (TierState *) ((char *) io - offsetof(TierState, router));
	int			kept = 0;

	ts->dev[TIER_SLOW]->ops->truncate(ts->dev[TIER_SLOW], npages);
	ts->dev[TIER_FAST]->ops->truncate(ts->dev[TIER_FAST], npages);
	for (PageId page = npages; page < ts->nentries; page++)
	{
		if ((ts->entry[page] & (ENTRY_PRESENT | ENTRY_FAST)) == (ENTRY_PRESENT | ENTRY_FAST))
			ts->nfast--;
		clear_want(ts, page);
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

static uint64
router_npages(PageIO *io)
{
	TierState  *ts = (TierState *) ((char *) io - offsetof(TierState, router));
	uint64		slow = ts->dev[TIER_SLOW]->ops->npages(ts->dev[TIER_SLOW]);
	uint64		fast = ts->dev[TIER_FAST]->ops->npages(ts->dev[TIER_FAST]);

	return Max(slow, fast);
}

static void
router_close(PageIO *io)
{
	TierState  *ts = (TierState *) ((char *) io - offsetof(TierState, router));

	ts->dev[TIER_SLOW]->ops->close(ts->dev[TIER_SLOW]);
	ts->dev[TIER_FAST]->ops->close(ts->dev[TIER_FAST]);
}

static const PageIOOps router_ops = {
	.read = router_read,
	.write = router_write,
	.sync = router_sync,
	.truncate = router_truncate,
	.npages = router_npages,
	.close = router_close
};

/* -------------------------------------------------------------- observer */

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
			set_want(ts, step.demoted, TIER_SLOW);
			migrate_now(ts, step.demoted);
		}
	}
	if (!step.promoted)
		return;
	if (ts->opt.placement == TIER_RANDOM)
	{
		PageId		pick = random_page(ts, TIER_SLOW);

		/* none yet (pages still in a cache): random_balance draws it at the sync */
		if (pick != InvalidPageId)
		{
			set_want(ts, pick, TIER_FAST);
			migrate_now(ts, pick);
		}
		return;
	}
	if (tier_of(ts, page) == TIER_FAST)
	{
		/* hot again before its demotion ran: it stays */
		clear_want(ts, page);
		return;
	}
	set_want(ts, page, TIER_FAST);
	/* Alg. 9's dirty flag: the cache writes it back to the fast tier */
	pageio_write_one(o->below, page, buf);
}

static void
observer_read(PageIO *io, PageIORequest *reqs, int n)
{
	ObserverPageIO *o = (ObserverPageIO *) io;

	o->below->time_cpu = io->time_cpu;
	pageio_read(o->below, reqs, n);
	if (o->ts->detect)
		for (int i = 0; i < n; i++)
			observe(o, reqs[i].page, reqs[i].buf);
}

static void
observer_write(PageIO *io, PageIORequest *reqs, int n)
{
	ObserverPageIO *o = (ObserverPageIO *) io;

	o->below->time_cpu = io->time_cpu;
	pageio_write(o->below, reqs, n);
}

static void
observer_sync(PageIO *io)
{
	ObserverPageIO *o = (ObserverPageIO *) io;

	o->below->time_cpu = io->time_cpu;
	pageio_sync(o->below);
}

static void
observer_truncate(PageIO *io, uint64 npages)
{
	ObserverPageIO *o = (ObserverPageIO *) io;

	o->below->ops->truncate(o->below, npages);
}

static uint64
observer_npages(PageIO *io)
{
	ObserverPageIO *o = (ObserverPageIO *) io;

	return o->below->ops->npages(o->below);
}

static void
observer_close(PageIO *io)
{
	ObserverPageIO *o = (ObserverPageIO *) io;

	o->below->ops->close(o->below);
}

static const PageIOOps observer_ops = {
	.read = observer_read,
	.write = observer_write,
	.sync = observer_sync,
	.truncate = observer_truncate,
	.npages = observer_npages,
	.close = observer_close
};

/* ------------------------------------------------------- durable weights */

/*
 * The body of the weights file (tiermap.c has its header): the detector's
 * whole state, so that hot, level_hot and random continue after a close
 * exactly as if the index had stayed open: the model's clock, counts and
 * per-level sums, every page's history (count, clock of its last access,
 * which is also demotion's LRU order, weight, parent, hot), the parent
 * inference's last page per level and the random generator.
 */
typedef struct TierWeightsHead
{
	int32		placement;		/* a TierPlacement: the file is for this one */
	int32		top_level;
	int64		clock;
	int64		nhot;
	uint64		prng_state;
	uint64		npages;			/* TierWeightsPage records that follow */
	int64		max_count[FEST_MAX_LEVELS];
	double		wsum[FEST_MAX_LEVELS];
	int64		wn[FEST_MAX_LEVELS];
	PageId		last_read[FEST_MAX_LEVELS];
} TierWeightsHead;

typedef struct TierWeightsPage
{
	PageId		page;
	int64		count;
	int64		last;
	double		weight;
	PageId		parent;
	uint8		hot;
	uint8		reserved[7];
} TierWeightsPage;

StaticAssertDecl(sizeof(TierWeightsHead) == 40 + 32 * FEST_MAX_LEVELS,
				 "TierWeightsHead has no padding");
StaticAssertDecl(sizeof(TierWeightsPage) == 48,
				 "TierWeightsPage must be 48 bytes");

static void hot_from_map(TierState *ts);

/* Write the detector's state to the weights file (at a flush or close). */
static void
save_weights(TierState *ts)
{
	long		npages = hash_get_num_entries(ts->hot.pages);
	size_t		len = sizeof(TierWeightsHead) + sizeof(TierWeightsPage) * npages;
	char	   *body = MemoryContextAllocHuge(ts->cxt, len);
	TierWeightsHead *head = (TierWeightsHead *) body;
	TierWeightsPage *rec = (TierWeightsPage *) (body + sizeof(TierWeightsHead));
	HASH_SEQ_STATUS seq;
	HotPage    *p;
	long		i = 0;

	memset(body, 0, len);
	head->placement = ts->opt.placement;
	head->top_level = ts->top_level;
	head->clock = ts->hot.clock;
	head->nhot = ts->hot.nhot;
	head->prng_state = ts->prng.state;
	head->npages = npages;
	memcpy(head->max_count, ts->hot.max_count, sizeof(head->max_count));
	memcpy(head->wsum, ts->hot.wsum, sizeof(head->wsum));
	memcpy(head->wn, ts->hot.wn, sizeof(head->wn));
	memcpy(head->last_read, ts->last_read, sizeof(head->last_read));
	hash_seq_init(&seq, ts->hot.pages);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		Assert(i < npages);
		rec[i].page = p->page;
		rec[i].count = p->count;
		rec[i].last = p->last;
		rec[i].weight = p->weight;
		rec[i].parent = p->parent;
		rec[i].hot = p->hot ? 1 : 0;
		i++;
	}
	Assert(i == npages);
	tierweights_write(ts->weights_path, body, len, ts->router.fault);
	pfree(body);
}

/*
 * Check a weights body against the index it is read for; NULL when it
 * fits, else what is wrong.
 */
static const char *
weights_problem(const TierState *ts, const char *body, size_t len)
{
	const TierWeightsHead *head = (const TierWeightsHead *) body;
	int64		nhot = 0;
	const TierWeightsPage *rec;

	if (len < sizeof(TierWeightsHead) ||
		(len - sizeof(TierWeightsHead)) / sizeof(TierWeightsPage) != head->npages ||
		(len - sizeof(TierWeightsHead)) % sizeof(TierWeightsPage) != 0)
		return "its length does not match its page count";
	if (head->placement != ts->opt.placement)
		return "it was written for another placement";
	if (head->top_level < 0 || head->top_level >= FEST_MAX_LEVELS ||
		head->clock < 0 || head->nhot < 0)
		return "its model is out of range";
	rec = (const TierWeightsPage *) (body + sizeof(TierWeightsHead));
	for (uint64 i = 0; i < head->npages; i++)
	{
		/* count 0: a page hot with no history (a fallback, hot_from_map) */
		if (rec[i].count < 0 || rec[i].last < 0 || rec[i].last > head->clock ||
			rec[i].hot > 1)
			return "a page's history is out of range";
		nhot += rec[i].hot;
	}
	if (nhot != head->nhot)
		return "its hot count does not match its pages";
	return NULL;
}

/*
 * At an open: restore the detector from the weights file.  Missing (an
 * index never flushed with a detector, or from before the file existed)
 * or damaged (a WARNING: the weights only steer placement, so the index
 * stays usable): every fast node page counts as hot with no history, the
 * parents of the promotions to come.  after_crash: the map was in use, so
 * the weights (written at the last flush) may be older than the map; the
 * hot set is then made the fast pages again, which check() requires.
 */
static void
load_weights(TierState *ts, bool after_crash)
{
	size_t		len = 0;
	const char *problem;
	char	   *body = tierweights_read(ts->weights_path, &len, &problem, ts->cxt);

	if (body != NULL)
		problem = weights_problem(ts, body, len);
	if (body != NULL && problem == NULL)
	{
		const TierWeightsHead *head = (const TierWeightsHead *) body;
		const TierWeightsPage *rec = (const TierWeightsPage *) (body + sizeof(TierWeightsHead));

		ts->top_level = head->top_level;
		ts->hot.clock = head->clock;
		ts->hot.nhot = head->nhot;
		ts->prng.state = head->prng_state;
		memcpy(ts->hot.max_count, head->max_count, sizeof(head->max_count));
		memcpy(ts->hot.wsum, head->wsum, sizeof(head->wsum));
		memcpy(ts->hot.wn, head->wn, sizeof(head->wn));
		memcpy(ts->last_read, head->last_read, sizeof(head->last_read));
		for (uint64 i = 0; i < head->npages; i++)
		{
			bool		found;
			HotPage    *p = hash_search(ts->hot.pages, &rec[i].page, HASH_ENTER, &found);

			if (found)
			{
				problem = "a page is listed twice";
				break;
			}
			p->count = rec[i].count;
			p->last = rec[i].last;
			p->weight = rec[i].weight;
			p->parent = rec[i].parent;
			p->hot = rec[i].hot != 0;
		}
		pfree(body);
		if (problem == NULL)
		{
			if (after_crash && ts->opt.placement != TIER_RANDOM)
				hot_from_map(ts);
			return;
		}
		/* start again from nothing */
		hash_destroy(ts->hot.pages);
		hot_model_init(&ts->hot, ts->opt.selectivity, ts->opt.capacity_pages, ts->cxt);
		ts->top_level = 0;
		memset(ts->last_read, 0, sizeof(ts->last_read));
		prng_init(&ts->prng, ts->opt.seed, UINT64CONST(0x452821E638D01377));
	}
	if (strcmp(problem, "missing") != 0)
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("hot-page weights \"%s\" of index \"%s\" are damaged: %s",
						ts->weights_path, ts->index_name, problem),
				 errdetail("The index is intact; its fast pages now count as hot with no access history."),
				 errhint("Nothing to do: the weights only steer placement, and the next flush or close writes them again.")));
	for (PageId page = 0; page < ts->nentries; page++)
	{
		uint8		e = ts->entry[page];

		if ((e & (ENTRY_PRESENT | ENTRY_FAST)) == (ENTRY_PRESENT | ENTRY_FAST) &&
			ENTRY_LEVEL(e) >= 0)
		{
			HotPage    *p = hash_search(ts->hot.pages, &page, HASH_ENTER, NULL);

			memset(p, 0, sizeof(HotPage));
			p->page = page;
			p->hot = true;
			ts->hot.nhot++;
		}
	}
	/* the detector's state differs from the file's: write it at the next flush */
	ts->weights_dirty = true;
}

/*
 * hot, level_hot after a crash: the hot set below the level part is the
 * fast node pages the map names (a page the weights call hot that the map
 * keeps slow never moved; a fast one the weights do not know moved after
 * them), the others keep their history.
 */
static void
hot_from_map(TierState *ts)
{
	HASH_SEQ_STATUS seq;
	HotPage    *p;

	hash_seq_init(&seq, ts->hot.pages);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		uint8		e = p->page < ts->nentries ? ts->entry[p->page] : 0;

		if (p->hot && ((e & ENTRY_FAST) == 0 || ENTRY_LEVEL(e) < 0) &&
			!is_level_fast(ts, ENTRY_LEVEL(e)))
		{
			p->hot = false;
			ts->hot.nhot--;
		}
	}
	for (PageId page = 0; page < ts->nentries; page++)
	{
		uint8		e = ts->entry[page];
		bool		found;

		if ((e & (ENTRY_PRESENT | ENTRY_FAST)) != (ENTRY_PRESENT | ENTRY_FAST) ||
			ENTRY_LEVEL(e) < 0 || is_level_fast(ts, ENTRY_LEVEL(e)))
			continue;
		p = hash_search(ts->hot.pages, &page, HASH_ENTER, &found);
		if (!found)
		{
			memset(p, 0, sizeof(HotPage));
			p->page = page;
		}
		if (!p->hot)
		{
			p->hot = true;
			ts->hot.nhot++;
		}
	}
	ts->weights_dirty = true;
}

/* ------------------------------------------------------------ open, check */

static void release_orphans(TierState *ts);

/*
 * The tier state of an index over slow and fast (each a complete device
 * chain), in a child of the current memory context.  create: a new index
 * (the map is written at the first sync); otherwise the map is read and
 * verified, the releases it lists are done again, and a detecting
 * placement's hot-page weights are restored (load_weights).
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
	pageio_wrap_init(&ts->router, &router_ops, slow);
	/*
	 * A page written to the tier its durable map does not name is found
	 * after a crash only once a sync has written the map (router_sync).
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
		grow_map(ts, FEST_FIRST_DATA_PAGE);
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

		grow_map(ts, n);
		memcpy(ts->entry, entries, n);
		for (PageId page = 0; page < n; page++)
			if ((entries[page] & (ENTRY_PRESENT | ENTRY_FAST)) == (ENTRY_PRESENT | ENTRY_FAST))
				ts->nfast++;
		if (ts->detect)
			load_weights(ts, (flags & TIERMAP_OPEN) != 0);
		/* a crash may have come between the map and the releases */
		release_sources(ts, released, nreleased);
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
	uint64		end = router_npages(&ts->router);
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
			if (page >= ts->dev[tier]->ops->npages(ts->dev[tier]))
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
		router_sync(&ts->router);
}

/*
 * At a flush (the node store wrote and synced everything): do what is
 * pending, sync, save the hot-page weights, and mark the map clean, so that the next open needs no
 * orphan scan.
 */
void
tier_mark_clean(TierState *ts)
{
	router_sync(&ts->router);
	/* the weights before the clean map: a clean map never has older ones */
	if (ts->detect && ts->weights_dirty)
	{
		save_weights(ts);
		ts->weights_dirty = false;
	}
	if (!ts->open_marked || ts->npending > 0)
		return;
	tiermap_write(ts->map_path, 0, ts->entry, ts->nentries, ts->released,
				  ts->nreleased, ts->router.fault);
	ts->open_marked = false;
}

PageIO *
tier_router(TierState *ts)
{
	return &ts->router;
}

/* The observer above the cache; for placements without detection, the cache. */
PageIO *
tier_observer_wrap(TierState *ts, PageIO *cache)
{
	ObserverPageIO *o;

	if (!ts->detect)
		return cache;
	o = MemoryContextAllocZero(ts->cxt, sizeof(ObserverPageIO));
	pageio_wrap_init(&o->io, &observer_ops, cache);
	o->below = cache;
	o->ts = ts;
	return &o->io;
}

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

static const char *const tier_names[] = {"slow", "fast"};

/*
 * Migrated since the last sync: the source copy is still valid, on purpose
 * (the map on disk still names it), until the next sync releases it.
 */
static bool
release_pending(const TierState *ts, PageId page)
{
	for (int i = 0; i < ts->nreleased; i++)
		if (ts->released[i] == page)
			return true;
	return false;
}

/*
 * The tier part of check(): every written page valid on exactly the tier
 * the map names, the capacity kept, and the placement's rules.
 */
void
tier_check(TierState *ts, uint64 npages, TierProblem problem, void *arg)
{
	char	   *buf = ts->scratch;

	if (ts->opt.capacity_pages > 0 && ts->nfast > (uint64) ts->opt.capacity_pages)
		problem(arg, -1, psprintf("the fast tier holds " UINT64_FORMAT " pages, more than its capacity of " INT64_FORMAT,
								  ts->nfast, ts->opt.capacity_pages));
	for (PageId page = 0; page < Max(npages, ts->nentries); page++)
	{
		uint8		e = page < ts->nentries ? ts->entry[page] : 0;
		int			tier = e & ENTRY_FAST;
		int			level = ENTRY_LEVEL(e);
		PageIORequest req = {page, buf};
		FestPageCheck c;

		/* not written through the router yet (a node store may buffer it) */
		if ((e & ENTRY_PRESENT) == 0)
			continue;
		tier_io(ts, tier, &req, 1, false);
		c = fest_page_verify(buf, ts->page_size, page, FestPageGetHeader(buf)->kind);
		if (c != FEST_PAGE_OK)
			problem(arg, page, psprintf("page " UINT64_FORMAT " is not valid on the %s tier the map names: %s",
										page, tier_names[tier], fest_page_check_message(c)));
		tier_io(ts, 1 - tier, &req, 1, false);
		c = fest_page_verify(buf, ts->page_size, page, FestPageGetHeader(buf)->kind);
		if (c == FEST_PAGE_OK && !release_pending(ts, page))
			problem(arg, page, psprintf("page " UINT64_FORMAT " has a second valid copy on the %s tier",
										page, tier_names[1 - tier]));
		if (page >= npages || level < 0 || ts->want[page] != WANT_NONE)
			continue;
		/* the placement's rules (a full capacity may keep pages slow) */
		if (ts->opt.placement == TIER_SINGLE && tier == TIER_FAST)
			problem(arg, page, psprintf("page " UINT64_FORMAT " is fast under placement \"single\"", page));
		if (ts->opt.capacity_pages == 0)
		{
			bool		want_fast = ts->opt.placement == TIER_ALL_FAST ||
				is_level_fast(ts, level);

			if (want_fast && tier != TIER_FAST)
				problem(arg, page, psprintf("node page " UINT64_FORMAT " at level %d is slow, but placement \"%s\" puts it on the fast tier",
											page, level, tier_placement_name(ts->opt.placement)));
			if (ts->opt.placement == TIER_LEVEL && !want_fast && tier == TIER_FAST)
				problem(arg, page, psprintf("node page " UINT64_FORMAT " at level %d is fast, but placement \"level\" keeps it slow",
											page, level));
		}
		if ((ts->opt.placement == TIER_HOT || ts->opt.placement == TIER_LEVEL_HOT) &&
			!is_level_fast(ts, level))
		{
			/* after a flush the fast pages are exactly the detector's hot set */
			HotPage    *p = hash_search(ts->hot.pages, &page, HASH_FIND, NULL);
			bool		hot = p != NULL && p->hot;

			if (hot && tier != TIER_FAST && ts->opt.capacity_pages == 0)
				problem(arg, page, psprintf("hot page " UINT64_FORMAT " is on the slow tier", page));
			if (!hot && tier == TIER_FAST)
				problem(arg, page, psprintf("page " UINT64_FORMAT " is fast but not hot", page));
		}
	}
}
