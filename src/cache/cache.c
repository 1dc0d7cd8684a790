/*-------------------------------------------------------------------------
 *
 * cache.c
 *	  A general-purpose page cache below any node store (options.cache).
 *
 * The cache is a PageIO that wraps the device's PageIO.  It holds page
 * images under LRU, HLRU, S2Q or 2Q (cache/replacement.c) and is
 * write-back: a write lands in the cache and reaches the device when the
 * page is evicted or the store syncs (flush, close, a FAST/eFIND flush).
 * A page the policy does not admit is written or read through.
 *
 * Frames are pinned only while a transfer copies them: the PageIO calls
 * copy pages in and out, so no frame is in use between calls and any may
 * be evicted.  The one exception is a loan (cache_read_borrow, see
 * device/pageio.h): a hit hands the reader a pointer into the frame
 * instead of a copy, valid until the reader's next call on the cache.
 * Every call ends the loan first (begin_call), and only calls evict, free
 * or overwrite frames, so a lent frame cannot change while lent; debug
 * builds Assert it where frames are freed or overwritten.
 *
 * Checksums: a frame remembers whether its image's magic and checksum were
 * found good since the image last changed.  A page read from the device is
 * checked as it arrives (so a page damaged on the device is still caught
 * on every device read), a page written into the cache at its first hit
 * unless its writer sealed it just before (pageio_write_sealed);
 * then every hit hands the image up marked verified (PageIORequest), and
 * the node store checks only its header instead of a CRC of the whole page.
 * A page that fails stays unverified, so its readers check it (and report
 * it) every time.
 *
 * Sealing: the write-through store writes its pages unsealed
 * (PageFramesOps.write_unsealed, fest_page_write_unsealed): their checksum field
 * is stale, and a frame holding one is verified (the image comes from the
 * store's memory) but not sealed.  It is sealed exactly once, when it
 * leaves the cache: written back at eviction or sync (write_back), or
 * written through when the policy does not admit it.  So a page modified
 * by many batches between two write-backs costs one CRC, and the device
 * only ever receives sealed pages.  Sealing changes the checksum field, so
 * it gives the frame a new stamp (below).  Readers of an unsealed frame
 * get it marked verified and check its header only; the one reader that
 * compares whole images (the write-through store's kept root) compares
 * the checksum field only for images that are not verified.
 *
 * Given buffers: a writer may give its buffer away (write_unsealed's
 * donate, the write-through store): a hit swaps it with the frame's image and
 * hands the old one back, a new frame keeps it, a page not admitted is
 * written through from it and it stays the writer's.  No copy either way.
 *
 * Counters: pages_read and pages_written keep counting the device's I/O
 * (the layer below); cache_hits, cache_misses, cache_evictions and
 * cache_writebacks count the cache's work.
 *
 * Stamps: every frame's image carries a stamp, new whenever the image
 * changes (taken from the device, written, or sealed), never reused.  A
 * reader that keeps a page decoded (the write-through store's root) passes
 * the stamp of the image it decoded; a hit on that same image is made and
 * counted as any hit but copies nothing (cache_read_stamped).
 *
 * Pages waiting here are not yet safe from a crash (PageIO.defers_writes):
 * the node store above keeps a log of what it wrote (FAST's and eFIND's
 * redo log, the write-through store's journal), which the next open
 * replays.
 *
 * Option cache = 'clru' chooses the thesis's hot/cold page cache instead
 * (clru.c), a decorator of its own; this file only validates and wraps.
 *
 * IDENTIFICATION
 *	  src/cache/cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "cache/cache.h"

#include "cache/clru.h"
#include "cache/replacement.h"
#include "format/page.h"
#include "utils/memutils.h"

typedef struct CacheFrame
{
	PageId		page;
	bool		dirty;
	bool		verified;		/* image known good: magic and checksum checked,
								 * or written unsealed by the store */
	bool		sealed;			/* checksum field matches the image; false
								 * only for a dirty, verified frame */
	uint64		stamp;			/* names image; new whenever image changes */
	char	   *image;			/* page_size bytes, aligned */
} CacheFrame;

typedef struct CachePageIO
{
	PageIO		io;				/* must be first */
	PageFrames	frames;			/* io.frames: the extras it offers */
	Replacement *r;
	MemoryContext cxt;			/* frames */
	uint64		next_stamp;		/* for the next image a frame takes (from 1) */
	CacheFrame *lent;			/* frame lent by cache_read_borrow, or NULL */
} CachePageIO;

static int64
frame_bytes(CachePageIO *c)
{
	return c->io.page_size;
}

/*
 * Every call on the cache starts here: it ends the loan of the previous
 * call (PageFrames.lend_epoch tells the borrower, pageio_loan_valid).
 */
static inline void
begin_call(CachePageIO *c)
{
	c->frames.lend_epoch++;
	c->lent = NULL;
}

static void
free_frame(CachePageIO *c, CacheFrame *f)
{
	Assert(f != c->lent);
	if (f->image != NULL)
		pagepool_put(c->frames.pool, f->image);
	pfree(f);
}

static int
frame_cmp(const void *a, const void *b)
{
	PageId		x = (*(CacheFrame *const *) a)->page;
	PageId		y = (*(CacheFrame *const *) b)->page;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Write dirty frames (in page order, one batch), then free them. */
static void
write_back(CachePageIO *c, List *frames, bool free_them)
{
	int			n = 0;
	CacheFrame **dirty = palloc(Max(list_length(frames), 1) * sizeof(CacheFrame *));
	ListCell   *lc;

	foreach(lc, frames)
	{
		CacheFrame *f = (CacheFrame *) lfirst(lc);

		if (f->dirty)
			dirty[n++] = f;
	}
	if (n > 0)
	{
		PageIORequest *reqs = palloc(n * sizeof(PageIORequest));

		qsort(dirty, n, sizeof(CacheFrame *), frame_cmp);
		for (int i = 0; i < n; i++)
		{
			/* an image written unsealed is sealed once, as it leaves */
			if (!dirty[i]->sealed)
			{
				Assert(dirty[i]->verified);
				fest_page_seal(dirty[i]->image, c->io.page_size);
				dirty[i]->sealed = true;
				dirty[i]->stamp = c->next_stamp++;
			}
			reqs[i].page = dirty[i]->page;
			reqs[i].buf = dirty[i]->image;
			dirty[i]->dirty = false;
		}
		pageio_write(c->io.below, reqs, n);
		c->io.stats->cache_writebacks += n;
		pfree(reqs);
	}
	pfree(dirty);
	if (free_them)
		foreach(lc, frames)
			free_frame(c, (CacheFrame *) lfirst(lc));
}

/* Offer a frame to the policy; evicted frames are written back. */
static bool
admit(CachePageIO *c, CacheFrame *f, bool force)
{
	List	   *evicted = NIL;
	uint16		level = FestPageGetHeader(f->image)->level;
	bool		admitted = replacement_admit(c->r, f->page, frame_bytes(c), level,
											 f, force, &evicted);

	c->io.stats->cache_evictions += list_length(evicted);
	write_back(c, evicted, true);
	list_free(evicted);
	return admitted;
}

/* A frame for page holding buf itself (a donated buffer), clean. */
static CacheFrame *
new_frame_taking(CachePageIO *c, PageId page, char *buf)
{
	CacheFrame *f = MemoryContextAlloc(c->cxt, sizeof(CacheFrame));

	f->page = page;
	f->dirty = false;
	f->verified = false;
	f->sealed = true;
	f->stamp = c->next_stamp++;
	f->image = buf;
	return f;
}

/* A frame for page holding a copy of image, clean. */
static CacheFrame *
new_frame(CachePageIO *c, PageId page, const char *image)
{
	CacheFrame *f = new_frame_taking(c, page, pagepool_get(c->frames.pool));

	memcpy(f->image, image, c->io.page_size);
	return f;
}

/* A hit on frame f: an image written into the cache is checked once, here. */
static void
frame_hit(CachePageIO *c, CacheFrame *f)
{
	Assert(f->sealed || f->verified);
	if (!f->verified)
		f->verified = fest_page_checksum_ok(f->image, c->io.page_size);
	/* a verified, sealed image must still be intact */
	Assert(!f->verified || !f->sealed ||
		   fest_page_checksum_ok(f->image, c->io.page_size));
	c->io.stats->cache_hits++;
}

/*
 * A page just read from the device into buf: a frame for it, checked
 * (every image that comes from the device is), then admitted or dropped.
 * Returns the frame, or NULL if the policy did not admit it.
 */
static CacheFrame *
frame_from_device(CachePageIO *c, PageId page, const char *buf, bool *verified)
{
	CacheFrame *f = new_frame(c, page, buf);

	f->verified = fest_page_checksum_ok(f->image, c->io.page_size);
	*verified = f->verified;
	if (!admit(c, f, false))
	{
		free_frame(c, f);
		return NULL;
	}
	return f;
}

static void
cache_read(PageIO *io, PageIORequest *reqs, int n)
{
	CachePageIO *c = (CachePageIO *) io;
	PageIORequest *misses = palloc(n * sizeof(PageIORequest));
	int		   *missed = palloc(n * sizeof(int));	/* their places in reqs */
	int			nmiss = 0;

	begin_call(c);
	for (int i = 0; i < n; i++)
	{
		CacheFrame *f = replacement_lookup(c->r, reqs[i].page);

		if (f != NULL)
		{
			frame_hit(c, f);
			memcpy(reqs[i].buf, f->image, io->page_size);
			reqs[i].verified = f->verified;
		}
		else
		{
			missed[nmiss] = i;
			misses[nmiss++] = reqs[i];
			io->stats->cache_misses++;
		}
	}
	if (nmiss > 0)
	{
		/* the misses go to the device together */
		pageio_read(c->io.below, misses, nmiss);
		for (int i = 0; i < nmiss; i++)
			(void) frame_from_device(c, misses[i].page, misses[i].buf,
									 &reqs[missed[i]].verified);
	}
	pfree(misses);
	pfree(missed);
}

/*
 * cache_read of one page for a reader that may hold the frame's image
 * already (PageFramesOps.read_stamped).  The policy sees the same lookup and a
 * miss the same admission as in cache_read, and the counters move the
 * same way, so a reader using it leaves the cache as a plain read would.
 */
static bool
cache_read_stamped(PageIO *io, PageId page, char *buf, uint64 *stamp,
				   bool *verified)
{
	CachePageIO *c = (CachePageIO *) io;
	CacheFrame *f = replacement_lookup(c->r, page);
	PageIORequest req = {page, buf, false};

	begin_call(c);
	if (f != NULL)
	{
		frame_hit(c, f);
		/* an image that failed its check is handed up to be reported */
		if (*stamp != 0 && f->stamp == *stamp && f->verified)
			return true;
		memcpy(buf, f->image, io->page_size);
		*verified = f->verified;
		*stamp = f->stamp;
		return false;
	}
	io->stats->cache_misses++;
	pageio_read(c->io.below, &req, 1);
	f = frame_from_device(c, page, buf, verified);
	*stamp = f != NULL ? f->stamp : 0;
	return false;
}

/*
 * cache_read of one page that lends the frame on a hit instead of copying
 * it (PageFramesOps.read_borrow); a miss reads into buf and admits the page as
 * cache_read does.  Lookup, admission and counters are cache_read's.
 */
static const char *
cache_read_borrow(PageIO *io, PageId page, char *buf, bool *verified)
{
	CachePageIO *c = (CachePageIO *) io;
	CacheFrame *f;
	PageIORequest req = {page, buf, false};

	begin_call(c);
	f = replacement_lookup(c->r, page);
	if (f != NULL)
	{
		frame_hit(c, f);
		*verified = f->verified;
		c->lent = f;
		return f->image;
	}
	io->stats->cache_misses++;
	pageio_read(c->io.below, &req, 1);
	(void) frame_from_device(c, page, buf, verified);
	return buf;
}

/*
 * Take n written pages in.  unsealed: their checksum fields are stale
 * (verified by their writer; sealed here as they leave); donate: the
 * writer gives its buffers (PageFramesOps.write_unsealed).
 */
static void
write_images(CachePageIO *c, PageIORequest *reqs, int n, bool unsealed,
			 bool donate)
{
	PageIO	   *io = &c->io;
	PageIORequest *through = palloc(n * sizeof(PageIORequest));
	int			nthrough = 0;

	begin_call(c);
	for (int i = 0; i < n; i++)
	{
		CacheFrame *f = replacement_lookup(c->r, reqs[i].page);

		if (f != NULL)
		{
			Assert(f != c->lent);
			if (donate)
			{
				/* the writer's buffer becomes the frame, the old one its */
				char	   *old = f->image;

				f->image = reqs[i].buf;
				reqs[i].buf = old;
			}
			else
				memcpy(f->image, reqs[i].buf, io->page_size);
			f->stamp = c->next_stamp++;
			f->dirty = true;
			/* sealed by its writer, unsealed, or checked at its next hit */
			f->verified = reqs[i].verified;
			f->sealed = !unsealed;
			continue;
		}
		if (donate)
			f = new_frame_taking(c, reqs[i].page, reqs[i].buf);
		else
			f = new_frame(c, reqs[i].page, reqs[i].buf);
		f->dirty = true;
		f->verified = reqs[i].verified;
		f->sealed = !unsealed;
		if (admit(c, f, false))
		{
			if (donate)
				reqs[i].buf = NULL;	/* taken, nothing in return */
		}
		else
		{
			if (donate)
				f->image = NULL;	/* the writer keeps its buffer */
			free_frame(c, f);
			/* not admitted: it leaves now, so it is sealed now */
			if (unsealed)
				fest_page_seal(reqs[i].buf, io->page_size);
			through[nthrough++] = reqs[i];
		}
	}
	if (nthrough > 0)
		pageio_write(c->io.below, through, nthrough);
	pfree(through);
}

static void
cache_write(PageIO *io, PageIORequest *reqs, int n)
{
	write_images((CachePageIO *) io, reqs, n, false, false);
}

static void
cache_write_unsealed(PageIO *io, PageIORequest *reqs, int n, bool donate)
{
	for (int i = 0; i < n; i++)
		reqs[i].tier = PAGEIO_NO_TIER;
	write_images((CachePageIO *) io, reqs, n, true, donate);
}

/* Sync: every dirty frame reaches the device, then the device syncs. */
static void
cache_sync(PageIO *io)
{
	CachePageIO *c = (CachePageIO *) io;
	List	   *all = replacement_all(c->r);

	begin_call(c);
	write_back(c, all, false);
	list_free(all);
	pageio_sync(c->io.below);
}

static void
cache_truncate(PageIO *io, uint64 npages)
{
	CachePageIO *c = (CachePageIO *) io;
	List	   *all;
	ListCell   *lc;

	begin_call(c);
	all = replacement_all(c->r);
	foreach(lc, all)
	{
		CacheFrame *f = (CacheFrame *) lfirst(lc);

		if (f->page >= npages)
		{
			replacement_remove(c->r, f->page);
			free_frame(c, f);
		}
	}
	list_free(all);
	pageio_truncate(c->io.below, npages);
}

static uint64
cache_npages(PageIO *io)
{
	CachePageIO *c = (CachePageIO *) io;
	uint64		n;
	List	   *all;
	ListCell   *lc;

	begin_call(c);
	n = pageio_npages(c->io.below);
	all = replacement_all(c->r);

	foreach(lc, all)
	{
		CacheFrame *f = (CacheFrame *) lfirst(lc);

		if (f->dirty)
			n = Max(n, f->page + 1);
	}
	list_free(all);
	return n;
}

/*
 * The store has flushed: what a layer above wrote since (the tier
 * observer's promotions) is written back, and the layers below settle.
 * The sync those pages need comes from the router below, the only layer
 * that settles anything (it syncs first): without a router nothing above
 * the cache writes outside the store, whose flush wrote back everything.
 */
static void
cache_flush(PageIO *io)
{
	CachePageIO *c = (CachePageIO *) io;
	List	   *all = replacement_all(c->r);

	begin_call(c);
	write_back(c, all, false);
	list_free(all);
	pageio_flush(io->below);
}

/* close passes through (PageIOOps) */
static const PageIOOps cache_pageio_ops = {
	.read = cache_read,
	.write = cache_write,
	.sync = cache_sync,
	.truncate = cache_truncate,
	.npages = cache_npages,
	.flush = cache_flush
};

static const PageFramesOps cache_frames_ops = {
	.read_stamped = cache_read_stamped,
	.read_borrow = cache_read_borrow,
	.write_unsealed = cache_write_unsealed
};

/*
 * Wrap a PageIO with a cache of capacity bytes under the given policy.
 * The cache lives in the current memory context.
 */
PageIO *
cache_pageio_create(PageIO *below, ReplacementPolicy policy, int64 capacity,
					int a1in_percent)
{
	CachePageIO *c = palloc0(sizeof(CachePageIO));
	int			frames = (int) Max(capacity / below->page_size, 1);

	pageio_wrap_init(&c->io, &cache_pageio_ops, below);
	/* write-back: a write reaches the device at eviction or sync */
	c->io.defers_writes = true;
	c->next_stamp = 1;
	c->cxt = AllocSetContextCreate(CurrentMemoryContext, "festival page cache",
								   ALLOCSET_DEFAULT_SIZES);
	c->frames.ops = &cache_frames_ops;
	c->frames.owner = &c->io;
	/* frames, and the buffers writers give and get back (donate) */
	c->frames.pool = pagepool_create(c->cxt, c->io.page_size);
	c->io.frames = &c->frames;
	c->r = replacement_create(policy,
							  (int64) frames * below->page_size, a1in_percent,
							  Max(frames / 2, 1), c->cxt);
	return &c->io;
}

/*
 * The choices of option cache: the replacement policies (in their enum
 * order, after "none"), then clru, the thesis's hot/cold page cache (clru.c),
 * which is not a Replacement policy: it needs the pages' dirty state.
 */
static const char *const cache_choices[] = {"none", "lru", "hlru", "s2q", "2q", "clru", NULL};
#define CACHE_CHOICE_CLRU 5

StaticAssertDecl(lengthof(cache_choices) == REPL_2Q + 4,
				 "cache_choices must list the replacement policies, then clru");

/* Options of the page cache; every framework takes them. */
static const OptionSpec cache_options[] = {
	{
		.name = "cache", .type = OPT_CHOICE, .default_choice = "none",
		.choices = cache_choices,
		.description = "General-purpose write-back page cache below the node store; clru is the hot/cold page cache of Fevgas 2019, Alg. 4-5.",
		.offset = offsetof(CacheOptions, cache)
	},
	{
		.name = "cache_size", .type = OPT_BYTES, .default_number = 4194304,
		.min = 0, .max = 8589934592.0,
		.description = "Bytes of the page cache (whole pages).",
		.offset = offsetof(CacheOptions, cache_size)
	},
	{
		.name = "cache_a1in_percent", .type = OPT_INT, .default_number = 25,
		.min = 1, .max = 90,
		.description = "Share of the cache for first-time pages under the 2q policy.",
		.offset = offsetof(CacheOptions, cache_a1in_percent)
	},
	{0}
};

/* Options of policy clru only (they apply only when it is chosen). */
static const OptionSpec cache_clru_options[] = {
	{
		.name = "cache_clru_pages", .type = OPT_INT, .default_number = 128,
		.min = 1, .max = 1048576,
		.description = "clru: pages of each cold list (directory and data), the write batch size (thesis: 128).",
		.offset = offsetof(CacheOptions, cache_clru_pages)
	},
	{
		.name = "cache_directory_percent", .type = OPT_INT, .default_number = 75,
		.min = 1, .max = 99,
		.description = "clru: share of the hot pages for directory pages, level >= 1 (thesis: 75).",
		.offset = offsetof(CacheOptions, cache_directory_percent)
	},
	{0}
};

/*
 * The cache's option tables that apply to a user's options: always
 * cache_options, and clru's when cache is clru.  Appends them to tables
 * and returns how many.
 */
int
cache_option_tables(Jsonb *user, const OptionSpec **tables)
{
	int			n = 0;

	tables[n++] = cache_options;
	if (strcmp(options_peek_choice(user, &cache_options[0]),
			   cache_choices[CACHE_CHOICE_CLRU]) == 0)
		tables[n++] = cache_clru_options;
	return n;
}

/*
 * Fill the cache's typed options from a complete configuration (once, when
 * the index is opened or created) and refuse combinations that cannot work.
 */
void
cache_options_fill(const FestConfig *config, uint32 page_size, CacheOptions *opts)
{
	OPTIONS_FILL(config, cache_clru_options, opts);
	OPTIONS_FILL(config, cache_options, opts);

	if (opts->cache != 0 && opts->cache_size < page_size)
		config_error(config,
					 psprintf("A cache of %lld bytes cannot hold one %u-byte page.",
							  (long long) opts->cache_size, page_size),
					 "Give cache_size at least one page, or set cache to 'none'.");
	if (opts->cache == CACHE_CHOICE_CLRU)
	{
		int64		pages = opts->cache_size / page_size;
		int64		cold = opts->cache_clru_pages;
		int64		hot_directory,
					hot_data;

		clru_split_capacity(pages, cold, opts->cache_directory_percent,
							&hot_directory, &hot_data);
		if (hot_directory < 1 || hot_data < 1)
			config_error(config,
						 psprintf("A clru cache of %lld pages with two cold lists of %lld pages leaves %lld hot pages for directory pages and %lld for data pages; each needs at least one.",
								  (long long) pages, (long long) cold,
								  (long long) Max(hot_directory, 0), (long long) Max(hot_data, 0)),
						 "Give a larger cache_size, a smaller cache_clru_pages, or a cache_directory_percent nearer 50.");
	}
}

/* The bytes of memory the cache holds by its options. */
int64
cache_memory_bytes(const CacheOptions *opts)
{
	OPTIONS_ASSERT_FILLED(opts);
	return opts->cache != 0 ? opts->cache_size : 0;
}

/* The cache the options ask for around below, or below itself. */
PageIO *
cache_wrap(PageIO *below, const CacheOptions *opts)
{
	OPTIONS_ASSERT_FILLED(opts);
	if (opts->cache == 0)
		return below;
	if (opts->cache == CACHE_CHOICE_CLRU)
		return clru_pageio_create(below, opts->cache_size, opts->cache_clru_pages,
								  opts->cache_directory_percent);
	return cache_pageio_create(below, replacement_policy_of_choice(opts->cache),
							   opts->cache_size, (int) opts->cache_a1in_percent);
}
