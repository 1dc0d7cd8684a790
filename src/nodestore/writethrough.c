/*-------------------------------------------------------------------------
 *
 * writethrough.c
 *	  The write-through node store (framework 'none'); its functions are
 *	  prefixed wt_.
 *
 * Every node a modification writes goes to the device when the
 * modification commits: nothing stays buffered between operations, as in
 * the disk-based indices of Carniel et al. 2016, 2017.  Within one
 * modification the written pages are collected as page images and written
 * together at ns_commit: first the pages that extend the file, then the
 * existing ones from the top level down, then the meta page if the root,
 * height or allocation state changed (see wt_commit for the exact order).
 * Consequences, all intended:
 *	- a node written twice by one insert costs one page write (the
 *	  logical writes stay visible as nodes_written);
 *	- an ERROR before the commit leaves the file exactly as it was, so the
 *	  open index can be reloaded from disk and used again;
 *	- so does an ERROR while writing the new pages (a full disk): they are
 *	  cut off again and nothing refers to them.
 *
 * The pages go down unsealed (fest_page_write_unsealed): a write-back page
 * cache (cache/cache.c) takes them so and computes each page's checksum
 * once, when the page leaves it for the device, instead of at every commit
 * that changed it; any other PageIO gets them sealed at the commit, as
 * before.  What reaches the device is the same bytes either way.  Such a
 * cache also takes the images' buffers as its frames instead of copying
 * them (PageFramesOps.write_unsealed, donate), and gives back the frames' old buffers,
 * which the store uses for its next modification's images (spare).
 *
 * A build's batch of rows (ns->retain_pages) also keeps the clean nodes
 * it reads until its commit, and reads them from memory again (see
 * clean_find): its rows descend through the same inner nodes.  A page it
 * then writes takes the kept image's buffer, so each page is held once
 * (ns->held_pages, which ends the build's batch).
 *
 * Freed pages are chained into a free list through their headers' link
 * field; ns_alloc takes the head of that list before growing the file.
 *
 * With festival.write_through_per_access on, the device is charged as the
 * disk-based indices of FESTIval (Carniel et al. 2016, 2017) charge it:
 * their get_rnode/put_rnode go to the drive (direct I/O, no buffer) at
 * every node access.  A node read that this modification already holds as
 * a pending image (it wrote the node before) then also reads the page
 * from the device, and the image is not taken from what that read
 * returns (the file may not have it yet); a node written k times by one
 * modification is written k times at the commit (the same final image,
 * in the same place of the write order).  What the tree becomes, and
 * when and in which order pages reach the file, stay as without it; only
 * the extra transfers are added.  An R*-tree insert with a forced
 * reinsertion is where it matters: each reinserted entry descends again
 * through the nodes the overflow has just rewritten.
 *
 * The root, read for a reader that does not change it (ns_read_root: the
 * window search), is kept decoded with the verified image it came from.
 * Every such read still goes down the page I/O chain: a page cache that
 * still holds that very image (its stamp, PageFramesOps.read_stamped) counts
 * the hit and copies nothing; any other read delivers the bytes, and bytes
 * equal to the kept image are the kept node (a page equal to a verified
 * one is valid, and decodes to the same node).  So the kept copy needs no
 * invalidation: a write, a rebuild, a reload or a damaged page all show up
 * as another stamp or other bytes, and are then verified and decoded as
 * any read is.  Counters do not change: the read is counted as before
 * (nodes_visited, reads_per_level, and below it cache hits or pages_read).
 *
 * The journal.  Written through, a commit is safe from a crash of the
 * process once its writes return: the kernel holds them.  Not so over a
 * chain that defers writes (PageIO.defers_writes): a write-back page cache
 * keeps them in memory until eviction or sync, and the tier router names a
 * page's new tier only in the map it writes at sync.  Over such a chain
 * the store keeps a journal, a redo log beside the index file
 * (<index file>.log, log/log.h) of page images: each commit first appends
 * the whole image of every page it writes, and the meta data when it
 * changed, as one group (LOG_PAGE records, a LOG_META, a COMMIT), synced
 * as festival.log_sync says, and only then hands the pages down.  Opening
 * an index whose meta page is not clean replays the journal: every page
 * image of every complete group is written again, in order, and the meta
 * restored from the last group, so the index is exactly as after its last
 * acknowledged modification, whatever the cache or the router had written
 * back (a page image is whole, so rewriting it is idempotent).  The same
 * happens when a failed write (a full disk under a cache's write-back)
 * makes the handle reload.  The journal is emptied when the chain is
 * synced: at flush, and at a checkpoint when it outgrows
 * JOURNAL_CHECKPOINT_BYTES (a sync, which writes back the cache's dirty
 * pages early, then an empty journal).  A build is not journaled: its
 * first commit makes the BUILDING flag durable (journal_reset), so a crash
 * in the middle leaves an index that refuses everything but build(), and
 * its last commit syncs the pages before the meta that clears the flag.
 *
 * Other node reads take the image without a copy where they can: a page
 * cache that lends its frames (pageio_read_borrow) hands the frame itself,
 * valid until the next call on the PageIO, and a page read ahead is used
 * in the read-ahead buffer; the image is verified and decoded (or its
 * free-list link read) before anything else is asked of the PageIO.  Only
 * a PageIO that does not lend reads into the scratch buffer.
 *
 * IDENTIFICATION
 *	  src/nodestore/writethrough.c
 *
 *-------------------------------------------------------------------------
 */
#include "nodestore/nodestore.h"

#include "device/device.h"
#include "device/fault.h"
#include "nodestore/framework.h"
#include "log/log.h"
#include "stats/jsonbuild.h"
#include "utils/memutils.h"

/*
 * A journal that outgrows this is emptied by a checkpoint (a sync of the
 * chain).  Large enough that one-at-a-time changes between two flushes
 * rarely reach it (64 MB is 16,384 commits of one 4 kB page), small enough
 * to replay in a second.
 */
#define JOURNAL_CHECKPOINT_BYTES ((uint64) 64 * 1024 * 1024)

typedef struct PendingPage
{
	PageId		page;
	uint16		level;
	bool		is_free;		/* a free-list page, not a node */
	int			writes;			/* node writes and frees of this page by the
								 * modification: device writes when
								 * write_through_per_access is on */
	char	   *image;			/* page_size bytes, aligned */
} PendingPage;

typedef struct WriteThroughStore
{
	NodeStore	ns;				/* must be first */
	MemoryContext pending_cxt;	/* the open modification's page index
								 * (slots); its images come from pool */
	/*
	 * pooled: the PageIO takes buffers (a write-back page cache), so the
	 * pending images are given to it at the commit instead of copied
	 * (donate, PageFramesOps.write_unsealed) and come from spare, the buffers it gave
	 * back, or from the cache's pool (PageIO.pool); the spares go back to
	 * the pool at flush and reset.
	 */
	bool		pooled;
	/*
	 * The pool the pending images come from: the cache's when pooled,
	 * otherwise the store's own, in images_cxt (NULL when pooled).  A
	 * batch's images then cost their pages (one palloc each had cost a
	 * page more, for the alignment) and the next batch reuses them
	 * instead of allocating, freeing and faulting in the same megabytes
	 * again at every commit.  The own pool is emptied at flush and reset.
	 */
	PagePool   *pool;
	MemoryContext images_cxt;
	char	  **spare;
	int			nspare;
	int			maxspare;
	PendingPage *pending;
	int			npending;
	int			maxpending;
	/*
	 * An index of pending by page (open addressing, position + 1, 0 free),
	 * built once a modification holds more than PENDING_SCAN_MAX pages (a
	 * build's batch of rows), in pending_cxt; NULL otherwise.
	 */
	int		   *slots;
	int			nslots;			/* a power of 2, at least 2 * npending */
	char	   *scratch;		/* aligned buffer for reads */
	PagePrefetch prefetch;		/* pages read ahead by wt_read_many */
	uint64		file_pages;		/* pages in the file as of the last commit */
	PageId	   *reused;			/* pages this modification took from the
								 * free list */
	int			nreused;
	int			maxreused;
	PageId		committed_root; /* root and height as of the last commit */
	uint32		committed_height;
	/* the root kept decoded (wt_read_root); root_page invalid: none */
	MemoryContext root_cxt;		/* root_image, root_node; reset to replace */
	PageId		root_page;
	uint64		root_stamp;		/* the page cache's stamp of the image, or 0 */
	char	   *root_image;		/* the verified image root_node came from */
	TreeNode   *root_node;
	bool		root_has_bounds;
	Mbr			root_bounds;	/* union of root_node's entries' rectangles */
	uint64		root_decodes;	/* times root_node was (re)made: a gauge of
								 * festival.stats() */
	uint64		lent_reads;		/* pages decoded straight from a page cache's
								 * frame (PageFramesOps.read_borrow): a gauge */
	uint64		unsealed_writes;	/* pages handed to a page cache unsealed,
									 * to be sealed when they leave it: a gauge */
	uint64		given_images;	/* pending images the cache took as its frame
								 * instead of a copy: a gauge */
	/*
	 * The journal of a store over a chain that defers writes (see the
	 * file header), or NULL.
	 */
	FestLog    *journal;
	LoggedMeta	journaled_meta; /* the meta as the journal last recorded it */
	bool		committed_building; /* FEST_META_BUILDING as of the last
									 * commit: its commits are not journaled */
	uint64		checkpoints;	/* journal checkpoints: a gauge */
	/*
	 * The clean pages this modification read from the device, kept while
	 * ns->retain_reads is set (a build's batch of rows, see wt_fetch):
	 * clean_page[i]'s verified image is clean_image[i] (from pool, like the
	 * pending images); an index by page as for pending (clean_slots, a
	 * power of 2, at least 2 * max_clean).  Emptied at every commit.
	 */
	PageId	   *clean_page;
	char	  **clean_image;
	int			nclean;
	int			nclean_taken;	/* of them, given to a pending image (NULL) */
	int			max_clean;		/* room of the arrays */
	int		   *clean_slots;
	int			nclean_slots;
	uint64		retained_reads; /* node reads served by a kept clean page: a
								 * gauge */
} WriteThroughStore;

bool		fest_write_through_per_access = false;

/* Pending pages found by a linear scan; beyond, through slots. */
#define PENDING_SCAN_MAX 32

/* The pages held for the open modification, as ns->held_pages shows them. */
static inline void
held_update(WriteThroughStore *ds)
{
	ds->ns.held_pages = ds->npending + ds->nclean - ds->nclean_taken;
}

static inline int
pending_hash(const WriteThroughStore *ds, PageId page)
{
	return (int) ((page * UINT64CONST(0x9E3779B97F4A7C15)) >> 32) & (ds->nslots - 1);
}

/* (Re)build the index of pending pages for at least 2 * maxpending slots. */
static void
pending_index(WriteThroughStore *ds)
{
	ds->nslots = 64;
	while (ds->nslots < 2 * ds->maxpending)
		ds->nslots *= 2;
	ds->slots = MemoryContextAllocZero(ds->pending_cxt, ds->nslots * sizeof(int));
	for (int i = 0; i < ds->npending; i++)
	{
		int			h = pending_hash(ds, ds->pending[i].page);

		while (ds->slots[h] != 0)
			h = (h + 1) & (ds->nslots - 1);
		ds->slots[h] = i + 1;
	}
}

static void
pending_forget_index(WriteThroughStore *ds)
{
	ds->slots = NULL;			/* its memory goes with pending_cxt */
	ds->nslots = 0;
}

static PendingPage *
pending_find(WriteThroughStore *ds, PageId page)
{
	if (ds->slots != NULL)
	{
		for (int h = pending_hash(ds, page); ds->slots[h] != 0; h = (h + 1) & (ds->nslots - 1))
			if (ds->pending[ds->slots[h] - 1].page == page)
				return &ds->pending[ds->slots[h] - 1];
		return NULL;
	}
	/* modifications touch few pages; a linear scan beats a hash here */
	for (int i = ds->npending - 1; i >= 0; i--)
		if (ds->pending[i].page == page)
			return &ds->pending[i];
	return NULL;
}

/* A buffer for a pending image (its content is written whole by the caller). */
static char *
image_alloc(WriteThroughStore *ds)
{
	if (ds->nspare > 0)
		return ds->spare[--ds->nspare];
	/* pooled, it may become a cache frame: it comes from the cache's pool */
	return pagepool_get(ds->pool);
}

/*
 * After a commit or a reset: the pending pages' buffers become spares
 * (NULL: given to the cache).
 */
static void
images_to_spare(WriteThroughStore *ds)
{
	for (int i = 0; i < ds->npending; i++)
	{
		char	   *image = ds->pending[i].image;

		if (image == NULL)
			continue;
		if (ds->nspare == ds->maxspare)
		{
			ds->maxspare *= 2;
			ds->spare = repalloc(ds->spare, ds->maxspare * sizeof(char *));
		}
		ds->spare[ds->nspare++] = image;
		ds->pending[i].image = NULL;
	}
}

/*
 * Kept clean pages (ns->retain_reads).  A build inserts its rows in
 * batches committed together (festival_build), and every row descends
 * from the root: without these, a node the batch reads but does not
 * change (an inner node whose rectangle already covers the row, a leaf
 * the batch has not reached yet) is read from the device again by every
 * row that passes through it, so the reads per row grow with the nodes
 * of the levels above the leaves that a batch does not change -- from
 * 1.27 to 2.50 per row for a quadratic R-tree between 200k and 1M
 * points, where one more level explains a quarter of that.  Within one
 * modification no one else writes the file, so the image read once is
 * the page's image until this modification writes it (then the pending
 * image, looked up first, shadows it) or commits (then they go).  A node
 * delivered from here is counted as a pending one is: a node visit, no
 * page read, no read per level.  With festival.write_through_per_access
 * nothing is kept: every access goes to the device.
 */
static int
clean_lookup(const WriteThroughStore *ds, PageId page)
{
	if (ds->nclean == 0)
		return -1;
	for (int h = (int) ((page * UINT64CONST(0x9E3779B97F4A7C15)) >> 32) & (ds->nclean_slots - 1);
		 ds->clean_slots[h] != 0; h = (h + 1) & (ds->nclean_slots - 1))
		if (ds->clean_page[ds->clean_slots[h] - 1] == page)
			return ds->clean_slots[h] - 1;
	return -1;
}

static char *
clean_find(const WriteThroughStore *ds, PageId page)
{
	int			i = clean_lookup(ds, page);

	return i < 0 ? NULL : ds->clean_image[i];
}

/*
 * A page the modification writes for the first time: the buffer of its
 * kept clean image, if any, becomes the pending image's (which shadows it
 * from then on), so a page is held once.  NULL if none.
 */
static char *
clean_take(WriteThroughStore *ds, PageId page)
{
	int			i = clean_lookup(ds, page);
	char	   *image;

	if (i < 0 || ds->clean_image[i] == NULL)
		return NULL;
	image = ds->clean_image[i];
	ds->clean_image[i] = NULL;
	ds->nclean_taken++;
	return image;
}

/* Keep a copy of image, page's verified node image read from the device. */
static void
clean_keep(WriteThroughStore *ds, PageId page, const char *image)
{
	int			h;

	if (ds->ns.held_pages >= ds->ns.retain_pages)
		return;					/* past the bound, reads go to the device */
	if (ds->nclean == ds->max_clean)
	{
		/* more room (kept in the store's context: reused by later batches) */
		MemoryContext cxt = GetMemoryChunkContext(ds);

		ds->max_clean = Max(256, 2 * ds->max_clean);
		if (ds->clean_page == NULL)
		{
			ds->clean_page = MemoryContextAlloc(cxt, ds->max_clean * sizeof(PageId));
			ds->clean_image = MemoryContextAlloc(cxt, ds->max_clean * sizeof(char *));
		}
		else
		{
			ds->clean_page = repalloc(ds->clean_page, ds->max_clean * sizeof(PageId));
			ds->clean_image = repalloc(ds->clean_image, ds->max_clean * sizeof(char *));
			pfree(ds->clean_slots);
		}
		ds->nclean_slots = 512;
		while (ds->nclean_slots < 2 * ds->max_clean)
			ds->nclean_slots *= 2;
		ds->clean_slots = MemoryContextAllocZero(cxt, ds->nclean_slots * sizeof(int));
		for (int i = 0; i < ds->nclean; i++)
		{
			h = (int) ((ds->clean_page[i] * UINT64CONST(0x9E3779B97F4A7C15)) >> 32) &
				(ds->nclean_slots - 1);
			while (ds->clean_slots[h] != 0)
				h = (h + 1) & (ds->nclean_slots - 1);
			ds->clean_slots[h] = i + 1;
		}
	}
	Assert(clean_lookup(ds, page) < 0);
	ds->clean_page[ds->nclean] = page;
	ds->clean_image[ds->nclean] = image_alloc(ds);
	memcpy(ds->clean_image[ds->nclean], image, ds->ns.page_size);
	ds->nclean++;
	h = (int) ((page * UINT64CONST(0x9E3779B97F4A7C15)) >> 32) & (ds->nclean_slots - 1);
	while (ds->clean_slots[h] != 0)
		h = (h + 1) & (ds->nclean_slots - 1);
	ds->clean_slots[h] = ds->nclean;
	held_update(ds);
}

/* At a commit or a reset: the kept clean pages' buffers become spares. */
static void
clean_forget(WriteThroughStore *ds)
{
	if (ds->nclean == 0)
		return;
	while (ds->nspare + ds->nclean > ds->maxspare)
	{
		ds->maxspare *= 2;
		ds->spare = repalloc(ds->spare, ds->maxspare * sizeof(char *));
	}
	for (int i = 0; i < ds->nclean; i++)
		if (ds->clean_image[i] != NULL)
			ds->spare[ds->nspare++] = ds->clean_image[i];
	ds->nclean = 0;
	ds->nclean_taken = 0;
	memset(ds->clean_slots, 0, ds->nclean_slots * sizeof(int));
	held_update(ds);
}

/*
 * Give the spare buffers back to their pool (flush, reset): a build holds
 * them until its flush.  The store's own pool then gives its memory back.
 */
static void
spare_free(WriteThroughStore *ds)
{
	Assert(ds->npending == 0);
	if (ds->images_cxt != NULL)
	{
		/* every image is a spare now: the whole pool goes */
		ds->nspare = 0;
		MemoryContextReset(ds->images_cxt);
		ds->pool = pagepool_create(ds->images_cxt, ds->ns.page_size);
		return;
	}
	while (ds->nspare > 0)
		pagepool_put(ds->pool, ds->spare[--ds->nspare]);
}

static PendingPage *
pending_slot(WriteThroughStore *ds, PageId page)
{
	PendingPage *p = pending_find(ds, page);

	if (p != NULL)
		return p;

	if (ds->npending == ds->maxpending)
	{
		ds->maxpending *= 2;
		ds->pending = repalloc(ds->pending, ds->maxpending * sizeof(PendingPage));
	}
	p = &ds->pending[ds->npending++];
	p->page = page;
	p->writes = 0;
	if ((p->image = clean_take(ds, page)) == NULL)
		p->image = image_alloc(ds);
	held_update(ds);
	if (ds->slots != NULL && 2 * ds->npending > ds->nslots)
		pending_forget_index(ds);	/* rebuilt larger below */
	if (ds->slots == NULL)
	{
		if (ds->npending > PENDING_SCAN_MAX)
			pending_index(ds);
	}
	else
	{
		int			h = pending_hash(ds, page);

		while (ds->slots[h] != 0)
			h = (h + 1) & (ds->nslots - 1);
		ds->slots[h] = ds->npending;
	}
	return p;
}

/*
 * festival.write_through_per_access: a node this modification has written
 * is read from the device again, as a store without pending images would
 * read it; what the device returns is dropped (the file may not hold the
 * page yet: a read past its end returns a zero page).  A page read ahead
 * by wt_read_many costs no second read.
 */
static void
charge_pending_read(WriteThroughStore *ds, const PendingPage *p)
{
	NodeStore  *ns = &ds->ns;

	Assert(!p->is_free);
	if (ns_prefetch_find(&ds->prefetch, p->page, NULL) == NULL)
		pageio_read_one(ns->io, p->page, ds->scratch);
	ns->stats->reads_per_level[p->level]++;
}

/*
 * The current image of a page: the pending one if this modification wrote
 * it, a page read ahead by wt_read_many, otherwise the page as the
 * page I/O chain delivers it: lent by a page cache that holds it (no copy),
 * or read into the scratch buffer.  A lent image is valid only until the
 * next call on ns->io, so callers use it before any other read or write
 * (they Assert it with pageio_loan_valid and *epoch).  Returns the
 * verification outcome; *image is set either way, and *pending (unless
 * NULL) tells whether it is the modification's pending image.
 */
static FestPageCheck
wt_fetch(WriteThroughStore *ds, PageId page, FestPageKind kind, const char **image,
			 uint64 *epoch, bool *pending)
{
	NodeStore  *ns = &ds->ns;
	PendingPage *p = pending_find(ds, page);
	FestPageCheck check;
	bool		verified;
	bool		retain;

	*epoch = pageio_lend_epoch(ns->io);
	if (pending != NULL)
		*pending = p != NULL;
	if (p != NULL)
	{
		if (p->is_free != (kind == FEST_PAGE_FREE))
		{
			*image = p->image;
			return FEST_PAGE_WRONG_KIND;
		}
		if (fest_write_through_per_access && kind == FEST_PAGE_NODE)
		{
			charge_pending_read(ds, p);
			/* that read was a call on the PageIO; the image is no loan */
			*epoch = pageio_lend_epoch(ns->io);
		}
		*image = p->image;
		return FEST_PAGE_OK;
	}

	if (page < FEST_FIRST_DATA_PAGE || page >= ns->meta->page_count)
	{
		*image = NULL;
		return FEST_PAGE_WRONG_ID;
	}

	retain = kind == FEST_PAGE_NODE && ns->retain_pages > 0 && !ds->pooled &&
		!fest_write_through_per_access;
	if (retain && (*image = clean_find(ds, page)) != NULL)
	{
		ds->retained_reads++;
		return FEST_PAGE_OK;
	}

	/* a read-ahead image stays until ns_prefetch_clear: no copy either */
	if ((*image = ns_prefetch_find(&ds->prefetch, page, &verified)) == NULL)
	{
		*image = pageio_read_borrow(ns->io, page, ds->scratch, &verified);
		*epoch = pageio_lend_epoch(ns->io);
		if (*image != ds->scratch)
			ds->lent_reads++;
	}
	/* a cache's verified image needs no second checksum */
	check = fest_page_verify_known(*image, ns->page_size, page, kind, verified);
	if (check == FEST_PAGE_OK && kind == FEST_PAGE_NODE)
	{
		uint16		level = FestPageGetHeader(*image)->level;

		if (level < FEST_MAX_LEVELS)
			ns->stats->reads_per_level[level]++;
		if (retain)
			clean_keep(ds, page, *image);
	}
	return check;
}

/* Raise the error for a page wt_fetch could not deliver. */
static void
report_fetch_failure(NodeStore *ns, PageId page, FestPageCheck check,
					 const char *image)
{
	if (image == NULL)
		fest_report_page_out_of_range(ns->index_name, page, ns->meta->page_count);
	fest_page_report_corrupt(check, ns->index_name, page, image, ns->page_size);
}

/*
 * wt_read, and ns_read_to_change's wt_read_to_change: the same counters
 * and page accesses, but for the latter a node this modification has
 * written (its pending image) is handed out in place, its entries the
 * image's own (ns_node_in_place): an insert reads every node of its path,
 * and copying the image of a leaf the batch holds was the largest cost of
 * an insert build after ChooseSubtree (the images of a large tree do not
 * fit the CPU's caches, and the copy touched all of a leaf to append one
 * entry).  A pending image stays where it is until the commit, and
 * wt_write serializes the node into it again, so the caller's ns_write
 * finds its entries there.  A full node (no room in the page for the
 * entry an insert appends before it splits) is copied, as is every node
 * read from elsewhere.
 */
static TreeNode *
wt_read_node(NodeStore *ns, PageId page, bool to_change)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;
	const char *image;
	FestPageCheck check;
	uint64		epoch;
	bool		pending;
	TreeNode   *node = NULL;

	ns->stats->nodes_visited++;
	check = wt_fetch(ds, page, FEST_PAGE_NODE, &image, &epoch, &pending);
	if (check != FEST_PAGE_OK)
		report_fetch_failure(ns, page, check, image);
	if (to_change && pending)
		node = ns_node_in_place(ns, (char *) image, page);
	if (node == NULL)
		node = ns_deserialize(ns, image, page);
	Assert(pageio_loan_valid(ns->io, epoch));
	return node;
}

static TreeNode *
wt_read(NodeStore *ns, PageId page)
{
	return wt_read_node(ns, page, false);
}

static TreeNode *
wt_read_to_change(NodeStore *ns, PageId page)
{
	return wt_read_node(ns, page, true);
}

/*
 * Keep the node in ds->scratch (verified, page page) as the decoded root,
 * with the union of its entries' rectangles.
 */
static void
root_keep(WriteThroughStore *ds, PageId page)
{
	NodeStore  *ns = &ds->ns;
	MemoryContext old;
	TreeNode   *node;

	/* empty until complete: decoding may raise an error */
	ds->root_page = InvalidPageId;
	ds->root_node = NULL;
	MemoryContextReset(ds->root_cxt);
	old = MemoryContextSwitchTo(ds->root_cxt);
	node = ns_deserialize(ns, ds->scratch, page);
	ds->root_image = palloc(ns->page_size);
	memcpy(ds->root_image, ds->scratch, ns->page_size);
	/*
	 * A page cache may hold the root unsealed, its checksum field stale
	 * until the page leaves the cache: keep the copy as the device will
	 * have it, so that root_is_kept can compare a device's image whole.
	 */
	fest_page_seal(ds->root_image, ns->page_size);
	MemoryContextSwitchTo(old);

	ds->root_has_bounds = node->nentries > 0;
	for (uint32 i = 0; i < node->nentries; i++)
	{
		Mbr			box;

		ns->node_ops->entry_mbr(NodeEntry(node, i), node->level, &box);
		if (i == 0)
			ds->root_bounds = box;
		else
			mbr_extend(&ds->root_bounds, &box);
	}
	ds->root_node = node;
	ds->root_page = page;
	ds->root_decodes++;
}

/*
 * Is image (page page, verified as the read said) the kept root's?  The
 * kept copy is sealed (root_keep), so bytes equal to it are a valid page.
 * An image known good from memory may be waiting unsealed in a write-back
 * cache, its checksum field stale: for it the rest of the page decides.
 */
static bool
root_is_kept(WriteThroughStore *ds, PageId page, const char *image, bool verified)
{
	const size_t skip = offsetof(FestPageHeader, magic);
	uint32		page_size = ds->ns.page_size;

	StaticAssertStmt(offsetof(FestPageHeader, checksum) == 0 &&
					 offsetof(FestPageHeader, magic) == sizeof(uint32),
					 "the checksum field must be the page's first 4 bytes");
	if (ds->root_page != page)
		return false;
	if (memcmp(image, ds->root_image, page_size) == 0)
		return true;
	return verified &&
		memcmp(image + skip, ds->root_image + skip, page_size - skip) == 0;
}

/*
 * ns_read_root: the root as wt_read reads it, handed out from the
 * decoded copy while the page's image is the one it came from (see the
 * top of the file).  A root this modification wrote, a prefetched one or
 * one outside the file goes through wt_read.
 */
static void
wt_read_root(NodeStore *ns, RootRead *out)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;
	PageId		page = ns->meta->root;
	uint64		stamp;
	bool		verified;

	if (ds->npending > 0 || ds->prefetch.n > 0 ||
		page < FEST_FIRST_DATA_PAGE || page >= ns->meta->page_count)
	{
		out->node = wt_read(ns, page);
		out->shared = false;
		out->has_bounds = false;
		return;
	}

	ns->stats->nodes_visited++;
	stamp = ds->root_page == page ? ds->root_stamp : 0;
	if (!pageio_read_stamped(ns->io, page, ds->scratch, &stamp, &verified))
	{
		if (!root_is_kept(ds, page, ds->scratch, verified))
		{
			FestPageCheck check = fest_page_verify_known(ds->scratch, ns->page_size,
														 page, FEST_PAGE_NODE,
														 verified);

			if (check != FEST_PAGE_OK)
				report_fetch_failure(ns, page, check, ds->scratch);
			root_keep(ds, page);
		}
		ds->root_stamp = stamp;
	}
	Assert(ds->root_page == page && ds->root_node != NULL);
	/* counted as wt_fetch counts a node page it delivers */
	if (ds->root_node->level < FEST_MAX_LEVELS)
		ns->stats->reads_per_level[ds->root_node->level]++;
	out->node = ds->root_node;
	out->shared = true;
	out->has_bounds = ds->root_has_bounds;
	out->bounds = ds->root_bounds;
}

/*
 * Read several nodes: the pages this modification has not written are read
 * from the device as one batch (one submission with a batched engine),
 * then each node is delivered, verified and counted as wt_read does.
 */
static void
wt_read_many(NodeStore *ns, const PageId *pages, int n, TreeNode **out)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;
	PageId	   *fetch = palloc(Max(n, 1) * sizeof(PageId));
	int			nfetch = 0;

	for (int i = 0; i < n; i++)
		if ((fest_write_through_per_access ||
			 (pending_find(ds, pages[i]) == NULL &&
			  clean_find(ds, pages[i]) == NULL)) &&
			pages[i] >= FEST_FIRST_DATA_PAGE && pages[i] < ns->meta->page_count)
			fetch[nfetch++] = pages[i];
	PG_TRY();
	{
		ns_prefetch_load(ns, &ds->prefetch, fetch, nfetch);
		for (int i = 0; i < n; i++)
			out[i] = wt_read(ns, pages[i]);
	}
	PG_CATCH();
	{
		ns_prefetch_clear(&ds->prefetch);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ns_prefetch_clear(&ds->prefetch);
	pfree(fetch);
}

static FestPageCheck
wt_read_checked(NodeStore *ns, PageId page, TreeNode **node)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;
	const char *image;
	FestPageCheck check;
	uint64		epoch;

	*node = NULL;
	ns->stats->nodes_visited++;
	check = wt_fetch(ds, page, FEST_PAGE_NODE, &image, &epoch, NULL);
	if (check == FEST_PAGE_OK && !ns_header_plausible(ns, image))
		check = FEST_PAGE_IMPOSSIBLE;
	if (check == FEST_PAGE_OK)
		*node = ns_deserialize(ns, image, page);
	Assert(pageio_loan_valid(ns->io, epoch));
	return check;
}

static void
wt_write(NodeStore *ns, const TreeNode *node, NodeWriteKind kind)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;
	PendingPage *p;

	Assert(node->page >= FEST_FIRST_DATA_PAGE &&
		   node->page < ns->meta->page_count);
	ns->op_touched = true;
	ns->stats->nodes_written++;
	p = pending_slot(ds, node->page);
	p->level = node->level;
	p->is_free = false;
	p->writes++;
	ns_serialize(ns, node, p->image);
}

static PageId
wt_alloc(NodeStore *ns, uint16 level)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;
	PageId		page;

	ns->op_touched = true;
	ns->stats->nodes_allocated++;
	if (ns->meta->free_head != InvalidPageId)
	{
		const char *image;
		FestPageCheck check;
		uint64		epoch;

		page = ns->meta->free_head;
		check = wt_fetch(ds, page, FEST_PAGE_FREE, &image, &epoch, NULL);
		if (check != FEST_PAGE_OK)
			report_fetch_failure(ns, page, check, image);
		ns->meta->free_head = FestPageGetHeader(image)->link;
		Assert(pageio_loan_valid(ns->io, epoch));
		ns->meta->free_count--;
		if (ds->nreused == ds->maxreused)
		{
			ds->maxreused *= 2;
			ds->reused = repalloc(ds->reused, ds->maxreused * sizeof(PageId));
		}
		ds->reused[ds->nreused++] = page;
	}
	else
		page = ns->meta->page_count++;

	ns->meta_dirty = true;
	return page;
}

static void
wt_release(NodeStore *ns, PageId page)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;
	PendingPage *p = pending_slot(ds, page);

	ns->op_touched = true;
	ns->stats->nodes_freed++;
	p->writes++;
	fest_page_init(p->image, ns->page_size, page, FEST_PAGE_FREE);
	FestPageGetHeader(p->image)->link = ns->meta->free_head;
	p->is_free = true;
	p->level = 0;
	ns->meta->free_head = page;
	ns->meta->free_count++;
	ns->meta_dirty = true;
}

/*
 * The commit's write groups, in order (see wt_commit): pages that
 * extend the file, pages taken from the free list, existing nodes (from
 * the top level down), pages freed; by page number within each.
 */
typedef enum CommitGroup
{
	GROUP_EXTENDING,
	GROUP_REUSED,
	GROUP_EXISTING,
	GROUP_FREED,
	NGROUPS
} CommitGroup;

static CommitGroup
pending_group(const WriteThroughStore *ds, const PendingPage *p)
{
	if (p->is_free)
		return GROUP_FREED;
	if (p->page >= ds->file_pages)
		return GROUP_EXTENDING;
	for (int i = 0; i < ds->nreused; i++)
		if (ds->reused[i] == p->page)
			return GROUP_REUSED;
	return GROUP_EXISTING;
}

static int
pending_cmp(const void *a, const void *b, void *arg)
{
	const WriteThroughStore *ds = (const WriteThroughStore *) arg;
	const PendingPage *pa = (const PendingPage *) a;
	const PendingPage *pb = (const PendingPage *) b;
	CommitGroup ga = pending_group(ds, pa);
	CommitGroup gb = pending_group(ds, pb);

	if (ga != gb)
		return ga < gb ? -1 : 1;
	if (ga == GROUP_EXISTING && pa->level != pb->level)
		return pa->level > pb->level ? -1 : 1;
	return pa->page < pb->page ? -1 : (pa->page > pb->page ? 1 : 0);
}

/*
 * Write one group of pending pages as one array, unsealed: a write-back
 * page cache seals each when it leaves the cache (once, however many
 * batches changed it meanwhile), any other PageIO gets them sealed
 * (fest_page_write_unsealed).  With
 * festival.write_through_per_access on, a page the modification wrote k
 * times is then written k - 1 times more, in rounds (each an array of the
 * pages that still owe a write): the same image again, so the file ends as
 * with one write, and the group's place in the commit order is kept.
 * A pooled store gives its images to the cache (one round only): each
 * page's image is then the buffer the cache gave back, or NULL.
 */
static void
write_group(WriteThroughStore *ds, PendingPage *pages, int n)
{
	NodeStore  *ns = &ds->ns;
	PageIORequest *reqs;
	int			round = 0;
	bool		donate = ds->pooled && !fest_write_through_per_access;

	if (n == 0)
		return;
	reqs = palloc(n * sizeof(PageIORequest));
	for (;;)
	{
		int			m = 0;

		for (int i = 0; i < n; i++)
		{
			Assert(pages[i].writes >= 1);
			if (round > 0 && pages[i].writes <= round)
				continue;
			reqs[m].page = pages[i].page;
			reqs[m].buf = pages[i].image;
			m++;
		}
		if (m == 0)
			break;
		if (ns->write_pages_singly)
		{
			/* one request per page, in the same order (nodestore.h) */
			for (int i = 0; i < m; i++)
				if (fest_page_write_unsealed(ns->io, &reqs[i], 1, donate))
					ds->unsealed_writes++;
		}
		else if (fest_page_write_unsealed(ns->io, reqs, m, donate))
			ds->unsealed_writes += m;
		if (donate)
		{
			Assert(m == n);
			for (int i = 0; i < n; i++)
			{
				if (reqs[i].buf != pages[i].image)
					ds->given_images++;
				pages[i].image = reqs[i].buf;
			}
		}
		if (!fest_write_through_per_access)
			break;
		round++;
	}
	pfree(reqs);
}

/* ---------------------------------------------------------------- journal */

/* Record the meta data in the group being written if it changed. */
static void
journal_meta(WriteThroughStore *ds, bool always)
{
	LoggedMeta	lm;

	ns_meta_to_logged(ds->ns.meta, &lm);
	if (!always && memcmp(&lm, &ds->journaled_meta, sizeof(lm)) == 0)
		return;
	log_append(ds->journal, LOG_META, InvalidPageId, 0, 0, 0, &lm, sizeof(lm));
	ds->journaled_meta = lm;
}

/*
 * Append the open modification's pages (already in commit order) and its
 * meta data to the journal as one group, durable as festival.log_sync
 * says.  Nothing has been handed down yet, so a failure here leaves the
 * index as it was (log_commit cuts off a group it could not sync, and a
 * replay drops a torn one).
 */
static void
journal_commit(WriteThroughStore *ds)
{
	for (int i = 0; i < ds->npending; i++)
	{
		PendingPage *p = &ds->pending[i];

		log_append(ds->journal, LOG_PAGE, p->page, p->level, 0,
				   p->is_free ? LOG_PAGE_FREE : 0, p->image, ds->ns.page_size);
	}
	journal_meta(ds, false);
	log_commit(ds->journal, (LogSyncMode) fest_log_sync_mode,
			   fest_log_sync_interval);
}

/*
 * Everything the journal holds is on the device once the chain is synced
 * with the current meta written: then it may be emptied.  The meta page
 * keeps its clean flag cleared (the store has not flushed); the next group
 * records the meta again.
 */
static void
journal_checkpoint(WriteThroughStore *ds)
{
	NodeStore  *ns = &ds->ns;

	ns_write_meta(ns);
	pageio_sync(ns->io);
	log_truncate(ds->journal);
	memset(&ds->journaled_meta, 0, sizeof(ds->journaled_meta));
	ds->checkpoints++;
}

/* The detail of an error after the modification's group reached the journal */
#define JOURNAL_KEPT "The change was logged in the index's journal before this failure and is kept; writing it to the device failed."

/* One record of a replay (journal_replay). */
static void
journal_apply(void *arg, const LogRecord *rec)
{
	WriteThroughStore *ds = (WriteThroughStore *) arg;
	NodeStore  *ns = &ds->ns;

	ns->stats->recovery_records++;
	switch ((LogRecordType) rec->hdr.type)
	{
		case LOG_PAGE:
			if (rec->payload_len != ns->page_size)
				break;
			memcpy(ds->scratch, rec->payload, ns->page_size);
			fest_page_seal(ds->scratch, ns->page_size);
			{
				PageIORequest req = {rec->hdr.page, ds->scratch, false};

				pageio_write_sealed(ns->io, &req, 1);
			}
			return;
		case LOG_META:
			if (rec->payload_len != sizeof(LoggedMeta))
				break;
			ns_meta_from_logged((const LoggedMeta *) rec->payload, ns->meta);
			return;
		case LOG_COMMIT:
			return;
		default:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("journal of index \"%s\" holds a record its write-through store does not write (type %d, %u bytes)",
					ns->index_name, rec->hdr.type, rec->payload_len),
			 errhint("The journal belongs to another kind of index or is damaged; festival.build('%s') rebuilds the index from its source.",
					 ns->index_name)));
}

/*
 * An index not closed cleanly: write every page image of every complete
 * group again and restore the meta of the last one.  The pages go down
 * the chain as any write (a cache holds them); the journal is kept until
 * the next flush empties it, so a crash before that replays it again.
 */
static void
journal_replay(WriteThroughStore *ds)
{
	NodeStore  *ns = &ds->ns;
	LogReplayResult result;
	int64		start = fest_now_ns();

	log_replay(ds->journal, journal_apply, ds, &result);
	ns_note_committed(ns);
	ns->recovered = result.groups;
	ns->stats->recoveries++;
	/* the chain holds the replayed meta too, for readers and the next sync */
	ns_write_meta(ns);
	ns->stats->recovery_ns += fest_now_ns() - start;
}

/*
 * Open (or start) the journal of a store over a chain that defers writes,
 * and replay it if the index was not closed cleanly.  An index not closed
 * cleanly whose journal is missing cannot be restored: it stays suspect
 * (refusing changes until check() or build()) and gets a new journal.
 */
static void
journal_open(WriteThroughStore *ds, const char *log_path, bool create)
{
	NodeStore  *ns = &ds->ns;
	bool		clean = (ns->meta->flags & FEST_META_CLEAN) != 0;
	bool		exists = !create && device_file_exists(log_path);

	ds->journal = log_open(log_path, ns->meta->index_uid, LOG_WRITER_JOURNAL, !exists,
						   ns->index_name, ns->stats);
	if (ns->io->fault != NULL)
		log_set_fault_hook(ds->journal, fault_log_hook, ns->io->fault);
	ns->has_log = true;
	if (!clean && exists)
	{
		journal_replay(ds);
		ns->suspect = false;
	}
	else if (!clean)
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" was not closed cleanly and its journal \"%s\" is missing",
						ns->index_name, log_path),
				 errdetail("Changes its page cache or tier router had not yet written may be lost; until a check finds no error or a build rewrites it, the index refuses changes."),
				 errhint("Run festival.check('%s'); festival.build('%s') rebuilds it from its source.",
						 ns->index_name, ns->index_name)));
	else if (!log_is_empty(ds->journal))
		log_truncate(ds->journal);	/* a clean index has nothing to replay */
	ns_meta_to_logged(ns->meta, &ds->journaled_meta);
}

/*
 * A rebuild empties the file.  Journaled, it first makes the empty meta,
 * with the BUILDING flag the caller has set, as durable as the journal
 * makes a commit, and on the device before the journal is emptied: a crash
 * at any point then leaves either the old index with its journal, or an
 * index that refuses everything but build().
 */
static void
journal_reset(WriteThroughStore *ds)
{
	NodeStore  *ns = &ds->ns;
	FestMeta   *meta = ns->meta;

	Assert(meta->flags & FEST_META_BUILDING);
	ns_mark_unclean(ns);
	ns_empty_meta(ns);
	journal_meta(ds, true);
	log_commit(ds->journal, (LogSyncMode) fest_log_sync_mode,
			   fest_log_sync_interval);
	ns_note_committed(ns);
	pageio_truncate(ns->io, FEST_FIRST_DATA_PAGE);
	ns_write_meta(ns);
	pageio_sync(ns->io);
	log_truncate(ds->journal);
	ns_meta_to_logged(meta, &ds->journaled_meta);
}

/*
 * Write the modification's pages and the meta in the order that lets a
 * failure leave the file as it was, and a crash lose nothing committed:
 *	1. the pages that extend the file (at or past the size it had when the
 *	   modification began): nothing refers to them yet;
 *	2. the pages taken from the free list: only the old meta's free list
 *	   refers to them, so from here on a failure may leave the file damaged
 *	   (ns->overwriting tells the caller), but a crash loses no entry;
 *	3. the meta, if the root, height or allocation changed: it then covers
 *	   the pages of steps 1 and 2, and the old root it may no longer name
 *	   is still whole;
 *	4. the existing nodes, parents before children: a parent that already
 *	   points to a new sibling while its split child still holds every
 *	   entry duplicates entries for a moment, but loses none (children
 *	   first would drop the moved entries if a crash came in between);
 *	5. the pages freed, then the meta again if it changed otherwise (the
 *	   entry count alone, say) or only now.
 * If a write fails before step 2, the file is cut back to its old size and
 * the error raised: the file is exactly as before the modification (the
 * meta writes go to the other meta slot, and ns_mark_unclean only cleared
 * the clean flag).
 */
static void
wt_commit(NodeStore *ns)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;
	uint64		old_pages = ds->file_pages;
	int			count[NGROUPS] = {0};
	bool		meta_early;
	bool		building = (ns->meta->flags & FEST_META_BUILDING) != 0;
	/* a build's commits are not journaled (see the file header) */
	bool		journaled = ds->journal != NULL && !ds->committed_building;
	/* the last commit of a journaled build: its pages before its meta */
	bool		finishing = ds->journal != NULL && ds->committed_building && !building;
	MemoryContext cxt = CurrentMemoryContext;

	if (ds->npending == 0 && !ns->meta_dirty)
	{
		/* the entry count alone changed (a delete of nothing written?) */
		if (journaled && ns->op_touched)
		{
			ns_mark_unclean(ns);
			journal_commit(ds);
			ns_note_committed(ns);
		}
		return;
	}

	ns_mark_unclean(ns);

	/* sorting moves the pending pages: their index no longer holds */
	pending_forget_index(ds);
	qsort_arg(ds->pending, ds->npending, sizeof(PendingPage), pending_cmp, ds);
	for (int i = 0; i < ds->npending; i++)
	{
		PendingPage *p = &ds->pending[i];

		/*
		 * The write order below relies on it: groups in order, parents
		 * before children, and each page once (a node written twice by one
		 * modification is one pending page).
		 */
		Assert(i == 0 || pending_cmp(&ds->pending[i - 1], p, ds) < 0);

		if (!p->is_free)
			ns->stats->writes_per_level[p->level] +=
				fest_write_through_per_access ? p->writes : 1;
		count[pending_group(ds, p)]++;
	}
	meta_early = ns->meta_dirty && !finishing &&
		(count[GROUP_EXTENDING] > 0 || count[GROUP_REUSED] > 0 ||
		 ns->meta->root != ds->committed_root ||
		 ns->meta->height != ds->committed_height);

	if (journaled)
	{
		journal_commit(ds);
		ns_note_committed(ns);
	}

	PG_TRY();
	{
		PendingPage *next = ds->pending;

		write_group(ds, next, count[GROUP_EXTENDING]);
		next += count[GROUP_EXTENDING];
		ns->overwriting = count[GROUP_REUSED] > 0;
		write_group(ds, next, count[GROUP_REUSED]);
		next += count[GROUP_REUSED];
		if (meta_early)
			ns_write_meta(ns);
		if (count[GROUP_EXISTING] + count[GROUP_FREED] > 0)
			ns->overwriting = true;
		write_group(ds, next, count[GROUP_EXISTING] + count[GROUP_FREED]);
		Assert(next + count[GROUP_EXISTING] + count[GROUP_FREED] ==
			   ds->pending + ds->npending);
		/* a finished build's tree is on the device before the meta says so */
		if (finishing)
			pageio_sync(ns->io);
		if (ns->meta_dirty || finishing)
			ns_write_meta(ns);
		if (finishing)
			pageio_sync(ns->io);
	}
	PG_CATCH();
	{
		/*
		 * Which buffers the cache took is unknown now: forget them all (the
		 * handle is reloaded after an ERROR, which frees them).
		 */
		if (ds->pooled)
			for (int i = 0; i < ds->npending; i++)
				ds->pending[i].image = NULL;
		/* the journal has the change: the reload replays it */
		if (journaled)
			ns_raise_kept(cxt, JOURNAL_KEPT);
		if (!ns->overwriting && count[GROUP_EXTENDING] > 0)
		{
			/*
			 * Nothing committed was overwritten: drop the new pages.  If
			 * even that fails, the file is longer than its meta says, which
			 * check() reports as leaked pages and is otherwise harmless.
			 */
			pageio_truncate(ns->io, old_pages);
		}
		PG_RE_THROW();
	}
	PG_END_TRY();

	ns->overwriting = false;
	ds->file_pages = Max(ds->file_pages, ns->meta->page_count);
	ds->committed_root = ns->meta->root;
	ds->committed_height = ns->meta->height;
	ds->committed_building = building;
	ns_note_committed(ns);
	ds->nreused = 0;
	images_to_spare(ds);
	clean_forget(ds);
	ds->npending = 0;
	held_update(ds);
	MemoryContextReset(ds->pending_cxt);
	pending_forget_index(ds);
	ns->op_touched = false;

	if (journaled && log_size(ds->journal) > JOURNAL_CHECKPOINT_BYTES)
	{
		PG_TRY();
		{
			journal_checkpoint(ds);
		}
		PG_CATCH();
		{
			ns_raise_kept(cxt, JOURNAL_KEPT);
		}
		PG_END_TRY();
	}
}

static void
wt_flush(NodeStore *ns)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;

	wt_commit(ns);
	spare_free(ds);
	ns_mark_clean(ns);
	/* everything the journal holds is on the device now */
	if (ds->journal != NULL && !ns->suspect)
	{
		log_truncate(ds->journal);
		ns_meta_to_logged(ns->meta, &ds->journaled_meta);
	}
}

static void
wt_reset(NodeStore *ns)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;

	images_to_spare(ds);
	clean_forget(ds);
	ds->npending = 0;
	held_update(ds);
	spare_free(ds);
	ds->nreused = 0;
	MemoryContextReset(ds->pending_cxt);
	pending_forget_index(ds);
	if (ds->journal != NULL)
	{
		journal_reset(ds);
		ds->committed_building = true;
	}
	else
		ns_truncate_to_empty(ns);
	ds->file_pages = FEST_FIRST_DATA_PAGE;
	ds->committed_root = InvalidPageId;
	ds->committed_height = 0;
	/* not needed for correctness (see wt_read_root), only to free it */
	ds->root_page = InvalidPageId;
	ds->root_node = NULL;
	MemoryContextReset(ds->root_cxt);
}

static void
wt_close(NodeStore *ns)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;

	if (ds->journal != NULL)
		log_close(ds->journal);
	pageio_close(ns->io);
}

static FestPageCheck
wt_read_free_link(NodeStore *ns, PageId page, PageId *link)
{
	const char *image;
	uint64		epoch;
	FestPageCheck check = wt_fetch((WriteThroughStore *) ns, page, FEST_PAGE_FREE,
									   &image, &epoch, NULL);

	if (check == FEST_PAGE_OK)
		*link = FestPageGetHeader(image)->link;
	Assert(pageio_loan_valid(ns->io, epoch));
	return check;
}

static uint64
wt_pages_available(NodeStore *ns)
{
	return pageio_npages(ns->io);
}

static void
wt_end_op(NodeStore *ns)
{
	/* pending pages exist only between a write and its commit */
	Assert(((WriteThroughStore *) ns)->npending == 0 || ns->op_touched);
	/* kept clean pages do not outlive their operation */
	clean_forget((WriteThroughStore *) ns);
}

/* Nothing is buffered, so nothing is flushed on demand. */
static List *
wt_flush_some(NodeStore *ns)
{
	return NIL;
}

/*
 * How often the root kept for the window search was decoded, how many
 * pages were read from a page cache's frame without a copy, how many were
 * handed to it unsealed and how many of those it took as its frames'
 * images (tests).
 */
static void
wt_describe(NodeStore *ns, JsonbParseState **state)
{
	WriteThroughStore *ds = (WriteThroughStore *) ns;

	jb_int(state, "root_decodes", (int64) ds->root_decodes);
	jb_int(state, "lent_reads", (int64) ds->lent_reads);
	jb_int(state, "unsealed_writes", (int64) ds->unsealed_writes);
	jb_int(state, "given_images", (int64) ds->given_images);
	jb_int(state, "retained_reads", (int64) ds->retained_reads);
	if (ds->journal != NULL)
	{
		jb_int(state, "log_bytes", (int64) log_size(ds->journal));
		jb_int(state, "journal_checkpoints", (int64) ds->checkpoints);
	}
	else
		jb_null(state, "log_bytes");
}

static List *
wt_buffered(NodeStore *ns)
{
	return NIL;
}

static const NodeStoreOps wt_store_ops = {
	.read = wt_read,
	.read_to_change = wt_read_to_change,
	.read_checked = wt_read_checked,
	.write = wt_write,
	.alloc = wt_alloc,
	.release = wt_release,
	.commit = wt_commit,
	.flush = wt_flush,
	.reset = wt_reset,
	.close = wt_close,
	.read_free_link = wt_read_free_link,
	.pages_available = wt_pages_available,
	.end_op = wt_end_op,
	.flush_some = wt_flush_some,
	.buffered = wt_buffered,
	.describe = wt_describe,
	.read_many = wt_read_many,
	.read_root = wt_read_root
};

/*
 * Create the write-through store over an open PageIO, in the current memory
 * context (the open index's).
 */
NodeStore *
wt_store_create(const NodeStoreArgs *args)
{
	WriteThroughStore *ds = palloc0(sizeof(WriteThroughStore));
	PageIO	   *io = args->io;
	FestMeta   *meta = args->meta;

	ns_init(&ds->ns, &wt_store_ops, io, meta, args->node_ops,
			args->index_name, args->stats);
	ds->pending_cxt = AllocSetContextCreate(CurrentMemoryContext,
											"festival write-through store pages",
											ALLOCSET_DEFAULT_SIZES);
	ds->maxpending = 16;
	ds->pending = palloc(ds->maxpending * sizeof(PendingPage));
	ds->maxreused = 8;
	ds->reused = palloc(ds->maxreused * sizeof(PageId));
	ds->scratch = pageio_alloc_buffer(io->page_size);
	ds->pooled = io->frames != NULL;
	if (ds->pooled)
		ds->pool = io->frames->pool;
	else
	{
		ds->images_cxt = AllocSetContextCreate(CurrentMemoryContext,
											   "festival write-through store images",
											   ALLOCSET_DEFAULT_SIZES);
		ds->pool = pagepool_create(ds->images_cxt, io->page_size);
	}
	ds->maxspare = 16;
	ds->spare = palloc(ds->maxspare * sizeof(char *));
	/*
	 * A replay changes the meta: before the state taken from it below.  No
	 * path: the device does not outlive the session (memory), nor needs one.
	 */
	if (io->defers_writes && args->log_path != NULL)
		journal_open(ds, args->log_path, args->create);
	ds->committed_building = (meta->flags & FEST_META_BUILDING) != 0;
	/* pages past the meta's count are leftovers of a failed commit */
	ds->file_pages = meta->page_count;
	ds->committed_root = meta->root;
	ds->committed_height = meta->height;
	ds->root_cxt = AllocSetContextCreate(CurrentMemoryContext,
										 "festival write-through store root",
										 ALLOCSET_SMALL_SIZES);
	ds->root_page = InvalidPageId;
	return &ds->ns;
}
