/*-------------------------------------------------------------------------
 *
 * clru.c
 *	  The hot/cold LRU buffer manager of Fevgas 2019 (PhD thesis,
 *	  University of Thessaly, §3.2, Alg. 4 FetchPage and Alg. 5 Evict), and
 *	  the page cache that uses it (policy 'clru'; see clru.h).
 *
 * Alg. 4 FetchPage(p): a page in the hot list moves to its head; a page
 * in the cold list moves, with its dirty state, to the head of the hot
 * list (after Evict() if the hot list is full); a miss (after Evict() if
 * the hot list is full) enters the head of the hot list.  festival takes
 * a page out of the cold list before that Evict(), so the page being
 * fetched is neither written by the batch nor dropped.
 *
 * Alg. 5 Evict(): the victim is the hot list's tail.  A clean victim is
 * dropped.  A dirty one goes to the head of the cold list; first, if the
 * cold list is full and its tail is dirty, the whole cold list is written
 * as one batch and marked clean, and if the cold list is full its (now
 * clean) tail is dropped.  The printed pseudo-code drops the tail outside
 * the "full" test; it only makes sense inside (as the thesis notes do).
 *
 * Writes: a page written while in the hot list is marked dirty there; a
 * write to a cold page fetches it first (as the thesis's modify-after-
 * fetch does); a write to an uncached page (a new page) enters the hot
 * list dirty, without a read.
 *
 * Partitions: a page of level >= 1 (directory) uses the directory lists,
 * level 0 (data) the data lists.  Capacities: clru_split_capacity.
 *
 * IDENTIFICATION
 *	  src/cache/clru.c
 *
 *-------------------------------------------------------------------------
 */
#include "cache/clru.h"

#include "format/page.h"
#include "utils/memutils.h"

Clru *
clru_create(int64 hot_directory, int64 hot_data, int64 cold, MemoryContext cxt)
{
	Clru	   *c = MemoryContextAllocZero(cxt, sizeof(Clru));
	HASHCTL		ctl;

	Assert(hot_directory >= 1 && hot_data >= 1 && cold >= 1);
	c->hot_capacity[CLRU_DIRECTORY] = hot_directory;
	c->hot_capacity[CLRU_DATA] = hot_data;
	c->cold_capacity = cold;
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(ClruEntry);
	ctl.hcxt = cxt;
	c->map = hash_create("festival clru", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int p = 0; p < 2; p++)
	{
		dlist_init(&c->hot[p]);
		dlist_init(&c->cold[p]);
	}
	return c;
}

static void
forget(Clru *c, ClruEntry *e, ClruEffects *fx)
{
	PageId		page = e->page;

	Assert(!e->dirty);
	dlist_delete(&e->link);
	if (e->cold)
		c->ncold[e->part]--;
	else
		c->nhot[e->part]--;
	if (fx != NULL)
		fx->dropped = lappend(fx->dropped, e->data);
	hash_search(c->map, &page, HASH_REMOVE, NULL);
}

/* Alg. 5 */
static void
evict(Clru *c, int part, ClruEffects *fx)
{
	ClruEntry  *v;

	Assert(!dlist_is_empty(&c->hot[part]));
	v = dlist_tail_element(ClruEntry, link, &c->hot[part]);
	if (!v->dirty)
	{
		forget(c, v, fx);
		return;
	}
	if (c->ncold[part] >= c->cold_capacity)
	{
		ClruEntry  *cp = dlist_tail_element(ClruEntry, link, &c->cold[part]);

		if (cp->dirty)
		{
			dlist_iter	it;

			/* the whole cold list, one batch */
			dlist_foreach(it, &c->cold[part])
			{
				ClruEntry  *e = dlist_container(ClruEntry, link, it.cur);

				if (e->dirty)
				{
					fx->batch = lappend(fx->batch, e->data);
					e->dirty = false;
				}
			}
		}
		forget(c, cp, fx);
	}
	dlist_delete(&v->link);
	c->nhot[part]--;
	v->cold = true;
	dlist_push_head(&c->cold[part], &v->link);
	c->ncold[part]++;
}

/*
 * Alg. 4 for a cached page: its payload, now at the head of its hot list
 * (dirty when write); NULL when the page is not cached (nothing changes).
 */
void *
clru_access(Clru *c, PageId page, bool write, ClruEffects *fx)
{
	ClruEntry  *e = hash_search(c->map, &page, HASH_FIND, NULL);

	if (e == NULL)
		return NULL;
	dlist_delete(&e->link);
	if (e->cold)
	{
		c->ncold[e->part]--;
		e->cold = false;
		if (c->nhot[e->part] >= c->hot_capacity[e->part])
			evict(c, e->part, fx);
	}
	else
		c->nhot[e->part]--;
	dlist_push_head(&c->hot[e->part], &e->link);
	c->nhot[e->part]++;
	if (write)
		e->dirty = true;
	return e->data;
}

/* Alg. 4 for a miss: the page enters the head of its hot list. */
void
clru_insert(Clru *c, PageId page, uint16 level, bool dirty, void *data, ClruEffects *fx)
{
	int			part = level >= 1 ? CLRU_DIRECTORY : CLRU_DATA;
	ClruEntry  *e;
	bool		found;

	if (c->nhot[part] >= c->hot_capacity[part])
		evict(c, part, fx);
	e = hash_search(c->map, &page, HASH_ENTER, &found);
	Assert(!found);
	e->part = (uint8) part;
	e->cold = false;
	e->dirty = dirty;
	e->data = data;
	dlist_push_head(&c->hot[part], &e->link);
	c->nhot[part]++;
}

/* Take a page out whatever its state (truncation); its payload or NULL. */
void *
clru_remove(Clru *c, PageId page)
{
	ClruEntry  *e = hash_search(c->map, &page, HASH_FIND, NULL);
	void	   *data;

	if (e == NULL)
		return NULL;
	data = e->data;
	e->dirty = false;
	forget(c, e, NULL);
	return data;
}

bool
clru_is_dirty(Clru *c, PageId page)
{
	ClruEntry  *e = hash_search(c->map, &page, HASH_FIND, NULL);

	return e != NULL && e->dirty;
}

/* The payloads of every dirty page, which become clean (a sync). */
List *
clru_take_dirty(Clru *c)
{
	List	   *out = NIL;
	HASH_SEQ_STATUS seq;
	ClruEntry  *e;

	hash_seq_init(&seq, c->map);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->dirty)
		{
			out = lappend(out, e->data);
			e->dirty = false;
		}
	return out;
}

List *
clru_all(Clru *c)
{
	List	   *out = NIL;
	HASH_SEQ_STATUS seq;
	ClruEntry  *e;

	hash_seq_init(&seq, c->map);
	while ((e = hash_seq_search(&seq)) != NULL)
		out = lappend(out, e->data);
	return out;
}

/*
 * The thesis's split of a buffer of M pages (§3.2): each partition's cold
 * list takes cold pages, the hot lists share the rest, directory_percent
 * of it for directory pages (thesis: 75).  Either hot list may come out
 * below one page; callers refuse that.
 */
void
clru_split_capacity(int64 pages, int64 cold, int64 directory_percent,
					int64 *hot_directory, int64 *hot_data)
{
	int64		hot = pages - 2 * cold;

	*hot_directory = hot * directory_percent / 100;
	*hot_data = hot - *hot_directory;
}

/* ------------------------------------------------------------------ */
/* the page cache                                                     */
/* ------------------------------------------------------------------ */

typedef struct ClruFrame
{
	PageId		page;
	char	   *image;			/* page_size bytes, aligned */
} ClruFrame;

typedef struct ClruPageIO
{
	PageIO		io;				/* must be first */
	Clru	   *policy;
	MemoryContext cxt;			/* frames and the policy */
	PagePool   *frames;			/* the frames' images, in cxt */
} ClruPageIO;

static int
frame_cmp(const void *a, const void *b)
{
	PageId		x = (*(ClruFrame *const *) a)->page;
	PageId		y = (*(ClruFrame *const *) b)->page;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Write frames in page order as one submission. */
static void
write_frames(ClruPageIO *c, List *frames)
{
	int			n = list_length(frames);
	ClruFrame **f;
	PageIORequest *reqs;
	int			i = 0;
	ListCell   *lc;

	if (n == 0)
		return;
	f = palloc(n * sizeof(ClruFrame *));
	foreach(lc, frames)
		f[i++] = lfirst(lc);
	qsort(f, n, sizeof(ClruFrame *), frame_cmp);
	reqs = palloc(n * sizeof(PageIORequest));
	for (i = 0; i < n; i++)
	{
		reqs[i].page = f[i]->page;
		reqs[i].buf = f[i]->image;
	}
	pageio_write(c->io.below, reqs, n);
	c->io.stats->cache_writebacks += n;
	pfree(reqs);
	pfree(f);
}

static void
free_frame(ClruPageIO *c, ClruFrame *f)
{
	pagepool_put(c->frames, f->image);
	pfree(f);
}

/* Carry out an access's effects: the batch first, then the drops. */
static void
apply(ClruPageIO *c, ClruEffects *fx)
{
	ListCell   *lc;

	write_frames(c, fx->batch);
	list_free(fx->batch);
	c->io.stats->cache_evictions += list_length(fx->dropped);
	foreach(lc, fx->dropped)
		free_frame(c, lfirst(lc));
	list_free(fx->dropped);
	fx->batch = NIL;
	fx->dropped = NIL;
}

static ClruFrame *
new_frame(ClruPageIO *c, PageId page, const char *image)
{
	MemoryContext old = MemoryContextSwitchTo(c->cxt);
	ClruFrame  *f = palloc(sizeof(ClruFrame));

	f->page = page;
	f->image = pagepool_get(c->frames);
	memcpy(f->image, image, c->io.page_size);
	MemoryContextSwitchTo(old);
	return f;
}

static void
clru_read(PageIO *io, PageIORequest *reqs, int n)
{
	ClruPageIO *c = (ClruPageIO *) io;
	PageIORequest *misses = palloc(n * sizeof(PageIORequest));
	int			nmiss = 0;
	ClruEffects fx = {NIL, NIL};

	for (int i = 0; i < n; i++)
	{
		ClruFrame  *f = clru_access(c->policy, reqs[i].page, false, &fx);

		apply(c, &fx);
		if (f != NULL)
		{
			memcpy(reqs[i].buf, f->image, io->page_size);
			io->stats->cache_hits++;
		}
		else
		{
			misses[nmiss++] = reqs[i];
			io->stats->cache_misses++;
		}
	}
	if (nmiss > 0)
	{
		/* the misses go to the device together */
		pageio_read(c->io.below, misses, nmiss);
		for (int i = 0; i < nmiss; i++)
		{
			/* a page asked for twice in one call enters once */
			if (clru_access(c->policy, misses[i].page, false, &fx) == NULL)
				clru_insert(c->policy, misses[i].page,
							FestPageGetHeader(misses[i].buf)->level, false,
							new_frame(c, misses[i].page, misses[i].buf), &fx);
			apply(c, &fx);
		}
	}
	pfree(misses);
}

static void
clru_write(PageIO *io, PageIORequest *reqs, int n)
{
	ClruPageIO *c = (ClruPageIO *) io;
	ClruEffects fx = {NIL, NIL};

	for (int i = 0; i < n; i++)
	{
		ClruFrame  *f = clru_access(c->policy, reqs[i].page, true, &fx);

		if (f != NULL)
			memcpy(f->image, reqs[i].buf, io->page_size);
		else
			clru_insert(c->policy, reqs[i].page, FestPageGetHeader(reqs[i].buf)->level,
						true, new_frame(c, reqs[i].page, reqs[i].buf), &fx);
		apply(c, &fx);
	}
}

/* Sync: every dirty page reaches the device in one batch, then the device syncs. */
static void
clru_sync(PageIO *io)
{
	ClruPageIO *c = (ClruPageIO *) io;
	List	   *dirty = clru_take_dirty(c->policy);

	write_frames(c, dirty);
	list_free(dirty);
	pageio_sync(c->io.below);
}

static void
clru_truncate(PageIO *io, uint64 npages)
{
	ClruPageIO *c = (ClruPageIO *) io;
	List	   *all = clru_all(c->policy);
	ListCell   *lc;

	foreach(lc, all)
	{
		ClruFrame  *f = lfirst(lc);

		if (f->page >= npages)
		{
			clru_remove(c->policy, f->page);
			free_frame(c, f);
		}
	}
	list_free(all);
	pageio_truncate(io->below, npages);
}

static uint64
clru_npages(PageIO *io)
{
	ClruPageIO *c = (ClruPageIO *) io;
	uint64		n = pageio_npages(io->below);
	List	   *all = clru_all(c->policy);
	ListCell   *lc;

	foreach(lc, all)
	{
		ClruFrame  *f = lfirst(lc);

		if (clru_is_dirty(c->policy, f->page))
			n = Max(n, f->page + 1);
	}
	list_free(all);
	return n;
}

/*
 * The store has flushed: pages a layer above wrote since (the tier
 * observer's promotions) are written back as one batch, and the layers
 * below settle (as cache.c's cache_flush).
 */
static void
clru_flush(PageIO *io)
{
	ClruPageIO *c = (ClruPageIO *) io;
	List	   *dirty = clru_take_dirty(c->policy);

	write_frames(c, dirty);
	list_free(dirty);
	pageio_flush(io->below);
}

/* close passes through (PageIOOps) */
static const PageIOOps clru_pageio_ops = {
	.read = clru_read,
	.write = clru_write,
	.sync = clru_sync,
	.truncate = clru_truncate,
	.npages = clru_npages,
	.flush = clru_flush
};

/*
 * Wrap a PageIO with the thesis's buffer of capacity_bytes (whole pages):
 * two cold lists of cold_pages each, the rest hot, directory_percent of it
 * for directory pages.  The options were validated (cache.c).  The cache
 * lives in the current memory context.
 */
PageIO *
clru_pageio_create(PageIO *below, int64 capacity_bytes, int64 cold_pages,
				   int64 directory_percent)
{
	ClruPageIO *c = palloc0(sizeof(ClruPageIO));
	int64		hot_directory,
				hot_data;

	clru_split_capacity(capacity_bytes / below->page_size, cold_pages, directory_percent,
						&hot_directory, &hot_data);
	pageio_wrap_init(&c->io, &clru_pageio_ops, below);
	/* dirty pages wait in the hot and cold lists */
	c->io.defers_writes = true;
	c->cxt = AllocSetContextCreate(CurrentMemoryContext, "festival clru cache",
								   ALLOCSET_DEFAULT_SIZES);
	c->policy = clru_create(hot_directory, hot_data, cold_pages, c->cxt);
	c->frames = pagepool_create(c->cxt, c->io.page_size);
	return &c->io;
}
