/*-------------------------------------------------------------------------
 *
 * tier_buffer.c
 *	  The per-device write buffers of H-Grid (Fevgas 2019, PhD thesis,
 *	  University of Thessaly, §4.3, Alg. 10-12): a PageIO between the page
 *	  cache and tracing, under the detecting placements (hot, level_hot,
 *	  random).
 *
 * The thesis's H-Grid does not write a dirty page evicted from its main
 * buffer at once: the page joins the write buffer of the device it must go
 * to (a flash and a 3DXPoint write buffer), and a full write buffer is
 * written as one batch.  A dirty page carries the flag of its device; a
 * promotion is nothing but setting a page's "3DXPoint dirty" flag
 * (Alg. 9, step 5.3), so the page migrates when the fast buffer next
 * flushes, never at once.  Here:
 *
 *	- a write enters the buffer of the tier the placement assigns it
 *	  (tier_placement_target: the fast one for a page flagged for promotion
 *	  or already fast, the slow one otherwise); a page is in at most one
 *	  buffer, and a later write replaces its image (and moves it when its
 *	  tier changed);
 *	- a page arriving at a full buffer first makes that buffer flush: all
 *	  its pages, sorted by page number, in one write down the chain (one
 *	  batch, as the thesis's buffer manager writes its CLRU, §3.2);
 *	- a promotion (tier_buffer_flag) moves the page's buffered image to the
 *	  fast buffer, or enters the page there without an image when no buffer
 *	  holds it (a page cache or the node store has it): its image is read
 *	  when that buffer flushes, in the same batch, and written to the fast
 *	  tier (a newer image a cache still holds dirty follows it there at its
 *	  write-back, the page being flagged); a page whose copy on the device
 *	  is no node (freed, then a node again, not written back yet) gets the
 *	  flag only (tier_observer.c);
 *	- a read looks in the buffers before going down (Alg. 11: main buffer,
 *	  flash write buffer, 3DXPoint write buffer, then the device); a hit
 *	  transfers nothing;
 *	- sync and flush write the slow buffer, then the fast one (a demotion
 *	  frees room before the promotions need it), then go down.
 *
 * The buffers hold writes a kill -9 loses, as a write-back cache does
 * (PageIO.defers_writes, inherited from the router below, is already set):
 * the node store's log or journal has them.  Capacity, per buffer, is the
 * option write_buffer_pages.
 *
 * IDENTIFICATION
 *	  src/tier/tier_buffer.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier_state.h"

#define BUFFERS_OF(pio) ((TierBuffers *) ((char *) (pio) - offsetof(TierBuffers, io)))

static int
entry_page_cmp(const void *a, const void *b)
{
	PageId		x = (*(TierBufferEntry *const *) a)->page;
	PageId		y = (*(TierBufferEntry *const *) b)->page;

	return x < y ? -1 : (x > y ? 1 : 0);
}

static void
drop_entry(TierBuffers *b, TierBufferEntry *e)
{
	PageId		page = e->page;

	if (e->tier >= 0)
		b->count[e->tier]--;
	if (e->image != NULL)
		pageio_free_buffer(e->image);
	(void) hash_search(b->entries, &page, HASH_REMOVE, NULL);
}

/*
 * Write every page of one buffer as one batch, sorted by page number.  A
 * page flagged for promotion without an image is read first (one batched
 * read, from the tier the map names); one the map has never seen written
 * (a new page the node store still holds) is left to its first write,
 * which its flag already places on the fast tier.
 */
static void
buffer_flush(TierState *ts, int tier)
{
	TierBuffers *b = ts->buffers;
	HASH_SEQ_STATUS seq;
	TierBufferEntry *e;
	TierBufferEntry **list;
	PageIORequest *reqs;
	PageIORequest *reads;
	int			n = 0;
	int			nread = 0;
	int			nwrite = 0;
	MemoryContext old;

	if (b->count[tier] == 0)
		return;
	old = MemoryContextSwitchTo(ts->cxt);
	list = palloc(sizeof(TierBufferEntry *) * b->count[tier]);
	hash_seq_init(&seq, b->entries);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->tier == tier)
			list[n++] = e;
	Assert(n == b->count[tier]);
	qsort(list, n, sizeof(TierBufferEntry *), entry_page_cmp);
	reqs = palloc(sizeof(PageIORequest) * n);
	reads = palloc(sizeof(PageIORequest) * n);
	for (int i = 0; i < n; i++)
	{
		e = list[i];
		if (e->image == NULL)
		{
			/* flagged only: skip what is already fast or never written */
			if (e->page >= ts->nentries ||
				(ts->entry[e->page] & ENTRY_PRESENT) == 0)
				continue;
			if (tier_of(ts, e->page) == TIER_FAST)
			{
				tier_clear_want(ts, e->page);
				continue;
			}
			e->image = pageio_alloc_buffer(ts->page_size);
			reads[nread].page = e->page;
			reads[nread++].buf = e->image;
		}
		reqs[nwrite].page = e->page;
		reqs[nwrite++].buf = e->image;
	}
	MemoryContextSwitchTo(old);
	if (nread > 0)
		pageio_read(b->below, reads, nread);
	if (nwrite > 0)
		pageio_write(b->below, reqs, nwrite);
	for (int i = 0; i < n; i++)
		drop_entry(b, list[i]);
	Assert(b->count[tier] == 0);
	pfree(list);
	pfree(reqs);
	pfree(reads);
}

/*
 * Put page into the buffer of tier, with image (NULL: keep the image it
 * has, if any: a promotion flag).  A page new to a full buffer makes it
 * flush first.
 */
static void
buffer_put(TierState *ts, int tier, PageId page, const char *image,
		   bool verified)
{
	TierBuffers *b = ts->buffers;
	TierBufferEntry *e = hash_search(b->entries, &page, HASH_FIND, NULL);

	if (e != NULL && e->tier != tier)
	{
		/* leaves its buffer; the flush below must not take it */
		b->count[e->tier]--;
		e->tier = -1;
	}
	if ((e == NULL || e->tier != tier) && b->count[tier] >= b->capacity)
		buffer_flush(ts, tier);
	if (e == NULL)
	{
		bool		found;

		e = hash_search(b->entries, &page, HASH_ENTER, &found);
		Assert(!found);
		e->image = NULL;
		e->verified = false;
		e->tier = -1;
	}
	if (e->tier != tier)
	{
		e->tier = tier;
		b->count[tier]++;
	}
	if (image != NULL)
	{
		if (e->image == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(ts->cxt);

			e->image = pageio_alloc_buffer(ts->page_size);
			MemoryContextSwitchTo(old);
		}
		memcpy(e->image, image, ts->page_size);
		e->verified = verified;
	}
}

/*
 * Promote page: set its fast-tier dirty flag (Alg. 9, step 5.3).  It moves
 * at the fast buffer's next flush.  The caller has set the router's want.
 */
void
tier_buffer_flag(TierState *ts, PageId page)
{
	TierBufferEntry *e = hash_search(ts->buffers->entries, &page, HASH_FIND, NULL);

	if (e != NULL && e->tier == TIER_FAST)
		return;
	buffer_put(ts, TIER_FAST, page, NULL, false);
}

/*
 * Take page out of the buffers (a migration done at once: a demotion):
 * true, with its newest image in buf, when a buffer held one.
 */
bool
tier_buffer_take(TierState *ts, PageId page, char *buf)
{
	TierBuffers *b = ts->buffers;
	TierBufferEntry *e;
	bool		had_image;

	if (b == NULL)
		return false;
	e = hash_search(b->entries, &page, HASH_FIND, NULL);
	if (e == NULL)
		return false;
	had_image = e->image != NULL;
	if (had_image)
		memcpy(buf, e->image, ts->page_size);
	drop_entry(b, e);
	return had_image;
}

/* ----------------------------------------------------------------- layer */

static void
buffer_write(PageIO *io, PageIORequest *reqs, int n)
{
	TierBuffers *b = BUFFERS_OF(io);
	TierState  *ts = b->ts;

	for (int i = 0; i < n; i++)
	{
		PageId		page = reqs[i].page;
		int			target;

		tier_grow_map(ts, page + 1);
		target = tier_placement_target(ts, page, FestPageGetHeader(reqs[i].buf));
		/* no longer a node page (freed): its promotion is moot */
		if (target == TIER_SLOW && ts->want[page] == TIER_FAST)
			tier_clear_want(ts, page);
		buffer_put(ts, target, page, reqs[i].buf, reqs[i].verified);
	}
}

static void
buffer_read(PageIO *io, PageIORequest *reqs, int n)
{
	TierBuffers *b = BUFFERS_OF(io);
	PageIORequest *down = palloc(sizeof(PageIORequest) * n);
	int		   *from = palloc(sizeof(int) * n);
	int			m = 0;

	for (int i = 0; i < n; i++)
	{
		TierBufferEntry *e = hash_search(b->entries, &reqs[i].page, HASH_FIND, NULL);

		if (e != NULL && e->image != NULL)
		{
			/* Alg. 11: a write buffer serves it, nothing is transferred */
			memcpy(reqs[i].buf, e->image, b->ts->page_size);
			reqs[i].verified = e->verified;
			continue;
		}
		down[m] = reqs[i];
		from[m++] = i;
	}
	if (m > 0)
	{
		pageio_read(b->below, down, m);
		for (int k = 0; k < m; k++)
		{
			reqs[from[k]].verified = down[k].verified;
			reqs[from[k]].tier = down[k].tier;
		}
	}
	pfree(down);
	pfree(from);
}

/* Both buffers, the slow one first: a demotion frees room before promotions. */
static TierBuffers *
flush_both(PageIO *io)
{
	TierBuffers *b = BUFFERS_OF(io);

	buffer_flush(b->ts, TIER_SLOW);
	buffer_flush(b->ts, TIER_FAST);
	return b;
}

static void
buffer_sync(PageIO *io)
{
	pageio_sync(flush_both(io)->below);
}

static void
buffer_flush_op(PageIO *io)
{
	pageio_flush(flush_both(io)->below);
}

static void
buffer_truncate(PageIO *io, uint64 npages)
{
	TierBuffers *b = BUFFERS_OF(io);
	HASH_SEQ_STATUS seq;
	TierBufferEntry *e;

	hash_seq_init(&seq, b->entries);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->page >= npages)
			drop_entry(b, e);
	pageio_truncate(b->below, npages);
}

static uint64
buffer_npages(PageIO *io)
{
	TierBuffers *b = BUFFERS_OF(io);
	uint64		n = pageio_npages(b->below);
	HASH_SEQ_STATUS seq;
	TierBufferEntry *e;

	hash_seq_init(&seq, b->entries);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->image != NULL && e->page >= n)
			n = e->page + 1;
	return n;
}

static const PageIOOps tier_buffer_ops = {
	.read = buffer_read,
	.write = buffer_write,
	.sync = buffer_sync,
	.truncate = buffer_truncate,
	.npages = buffer_npages,
	.flush = buffer_flush_op
};

/*
 * The write buffers over below (tracing, over the router), for a detecting
 * placement; other placements get below itself.
 */
PageIO *
tier_buffers_wrap(TierState *ts, PageIO *below)
{
	TierBuffers *b;
	HASHCTL		ctl;

	if (!ts->detect || ts->opt.write_buffers == TIER_BUFFERS_SHARED_CACHE)
		return below;
	b = MemoryContextAllocZero(ts->cxt, sizeof(TierBuffers));
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(TierBufferEntry);
	ctl.hcxt = ts->cxt;
	b->entries = hash_create("festival tier write buffers", 256, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	b->capacity = (int) ts->opt.write_buffer_pages;
	b->below = below;
	b->ts = ts;
	pageio_wrap_init(&b->io, &tier_buffer_ops, below);
	ts->buffers = b;
	return &b->io;
}

/*
 * check(): the buffers' invariants.  Each buffer's count is its entries and
 * at most its capacity; a page in the fast buffer is wanted there (flagged
 * for promotion, or fast by placement), one in the slow buffer holds an
 * image the placement puts on the slow tier; and, without a capacity that
 * may refuse one, every page flagged for promotion that is still slow is
 * in the fast buffer, so it moves at that buffer's next flush (unless the
 * map's copy is no node: then its write-back takes the flag there,
 * tier_observer.c).
 */
void
tier_buffer_check(TierState *ts, TierProblem problem, void *arg)
{
	TierBuffers *b = ts->buffers;
	HASH_SEQ_STATUS seq;
	TierBufferEntry *e;
	int			count[2] = {0, 0};

	if (b == NULL)
		return;
	hash_seq_init(&seq, b->entries);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		int			target;

		if (e->tier != TIER_SLOW && e->tier != TIER_FAST)
		{
			problem(arg, e->page, psprintf("page " UINT64_FORMAT " is in no write buffer but listed", e->page));
			continue;
		}
		count[e->tier]++;
		if (e->image == NULL)
		{
			if (e->tier != TIER_FAST ||
				e->page >= ts->nentries || ts->want[e->page] != TIER_FAST)
				problem(arg, e->page, psprintf("page " UINT64_FORMAT " is in the %s write buffer without an image but not flagged for promotion",
											   e->page, e->tier == TIER_FAST ? "fast" : "slow"));
			continue;
		}
		target = tier_placement_target(ts, e->page, FestPageGetHeader(e->image));
		if (target != e->tier)
			problem(arg, e->page, psprintf("page " UINT64_FORMAT " is in the %s write buffer, but its placement puts it on the %s tier",
										   e->page, e->tier == TIER_FAST ? "fast" : "slow",
										   target == TIER_FAST ? "fast" : "slow"));
	}
	for (int tier = TIER_SLOW; tier <= TIER_FAST; tier++)
	{
		if (count[tier] != b->count[tier])
			problem(arg, -1, psprintf("the %s write buffer counts %d pages but holds %d",
									  tier == TIER_FAST ? "fast" : "slow", b->count[tier], count[tier]));
		if (count[tier] > b->capacity)
			problem(arg, -1, psprintf("the %s write buffer holds %d pages, more than its %d",
									  tier == TIER_FAST ? "fast" : "slow", count[tier], b->capacity));
	}
	if (ts->opt.capacity_pages > 0)
		return;
	for (PageId page = 0; page < ts->nentries; page++)
		if (ts->want[page] == TIER_FAST && tier_of(ts, page) == TIER_SLOW &&
			(ts->entry[page] & ENTRY_PRESENT) && ENTRY_LEVEL(ts->entry[page]) >= 0 &&
			hash_search(b->entries, &page, HASH_FIND, NULL) == NULL)
			problem(arg, page, psprintf("page " UINT64_FORMAT " is flagged for promotion but in no write buffer", page));
}
