/*-------------------------------------------------------------------------
 *
 * pageio.h
 *	  The page I/O interface: whole pages in, whole pages out.
 *
 * Everything below the node stores speaks this interface.  Devices
 * implement it (device/file.c, device/memory.c); every other layer wraps
 * the PageIO below it, like the storage-manager decorators of
 * libspatialindex, so a node store never knows what is under it:
 *
 *	  node store -> [tier observer] -> [page cache] -> tracing
 *	      -> [tier router -> slow chain, fast chain] -> sim -> fault -> device
 *
 * (the chain is assembled in one place, tier/tier_chain.c's page_chain_open).
 *
 * A wrapper writes only what it changes.  pageio_wrap_init gives it
 * everything it passes on unchanged (page size, counters, CPU timing,
 * label, fault state, whether writes are deferred) and the layer below;
 * every operation its PageIOOps leave NULL is passed to that layer as it
 * is (pageio_read and friends find the layer that implements it).  So a
 * layer that only watches reads sets .read and nothing else, and a field
 * added to PageIO reaches every layer.  device/passthrough.c is the
 * smallest layer: it changes nothing and writes nothing but its ops table.
 *
 * Requests come in arrays so that a flushing unit or a batch query can be
 * handed to a batched engine (libaio, io_uring) as one submission.  The sync
 * engine issues them one by one; every implementation counts pages and
 * submissions separately in the FestStats it was given.
 *
 * Buffers are page_size bytes, aligned to FEST_IO_ALIGN (O_DIRECT needs it).
 * Errors are raised with ereport; a read past the end of the file returns a
 * zero page, which page verification then reports.
 *
 * Beyond the core: the page cache (cache/cache.c) alone offers reads that
 * share its frames and writes of images it seals or keeps itself
 * (PageFrames, below), which the write-through store uses when its PageIO
 * is such a cache.
 *
 * IDENTIFICATION
 *	  src/device/pageio.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_PAGEIO_H
#define FEST_PAGEIO_H

#include "festival.h"
#include "stats/stats.h"

typedef struct PageIO PageIO;

/* PageIORequest.tier on one device: no tier router served it */
#define PAGEIO_NO_TIER	(-1)

typedef struct PageIORequest
{
	PageId		page;
	char	   *buf;			/* page_size bytes, FEST_IO_ALIGN-aligned */
	/*
	 * The image's magic and checksum are known good.  On a read it is set
	 * by the layers below (pageio_read clears it first) when the image did
	 * not come from the device now but from memory where it was checked
	 * when it last changed (a page cache's verified frame); readers may
	 * then skip recomputing the checksum (fest_page_verify_known), the
	 * other header checks stay theirs.  Devices never set it: a page that
	 * really comes from the device is always checksummed.  On a write it
	 * says the writer has just sealed the image (pageio_write_sealed sets
	 * it, pageio_write clears it), so a cache need not check it again.
	 */
	bool		verified;
	/*
	 * After the call: the tier that transferred the page (TIER_SLOW or
	 * TIER_FAST, tier/tier.h), set by the tier router; PAGEIO_NO_TIER
	 * (pageio_read and pageio_write set it first) when no router did, as on
	 * one device.  What the I/O trace records (trace/tracing.c).
	 */
	int8		tier;
} PageIORequest;

/*
 * The operations of a layer.  NULL passes the call to the layer below
 * (PageIO.below) as it is; a device, which has none below, implements
 * read, write, sync, truncate, npages and close.
 */
typedef struct PageIOOps
{
	/* Read n pages; the engine may submit them together. */
	void		(*read) (PageIO *io, PageIORequest *reqs, int n);
	/* Write n pages; the engine may submit them together. */
	void		(*write) (PageIO *io, PageIORequest *reqs, int n);
	/* Make every completed write durable. */
	void		(*sync) (PageIO *io);
	/* Drop every page at or after npages. */
	void		(*truncate) (PageIO *io, uint64 npages);
	/* Pages the device currently holds for this file. */
	uint64		(*npages) (PageIO *io);
	/* Release descriptors and memory; never raises an error. */
	void		(*close) (PageIO *io);
	/*
	 * The node store has flushed: everything it wrote is written and
	 * synced and its file is marked clean.  A layer that keeps state of its
	 * own settles it: a page cache writes back what it still holds (pages a
	 * layer above it wrote: the tier observer's promotions), the tier
	 * router does its pending migrations, syncs, and marks its map clean.
	 * NULL passes it on; at a device it does nothing.
	 */
	void		(*flush) (PageIO *io);
	/*
	 * The node store has delivered a node to its structure (ns_read and
	 * friends, nodestore/nodestore.h), from wherever it came: a read below,
	 * a page cache's hit or the store's own buffer.  A layer that models
	 * accesses (the tier observer, Fevgas 2019's Alg. 9) counts it here,
	 * since reads alone miss what the store serves itself.  flags are the
	 * node's header flags.  NULL passes it on; at a device it does nothing.
	 */
	void		(*access) (PageIO *io, PageId page, int level, uint16 flags);
} PageIOOps;

/*
 * The page cache's extras (cache/cache.c, the lru family, is the only
 * provider).  Zero-copy reads: read_stamped (a reader that keeps a page
 * decoded learns that the frame still holds the image it decoded, and
 * nothing is copied) and read_borrow (a hit lends the frame itself).
 * Writes the cache seals or keeps: write_unsealed takes images whose
 * checksum field is not computed (the cache seals each once, when it
 * leaves for the device) and, with donate, takes the writers' buffers as
 * its frames, handing back its old images.  Every call is made and counted
 * exactly as the core read or write of the same pages would be.
 *
 * Loans: a frame lent by read_borrow is valid only until the reader's next
 * call on that PageIO, whatever the call; the cache bumps lend_epoch at
 * every call so that a reader can Assert that no call came between the loan
 * and its last use of the image (pageio_loan_valid).
 *
 * Stamps (read_stamped): every frame's image has a stamp, new whenever the
 * image changes and never reused, so equal stamps mean byte-identical
 * images.  *stamp names the image the caller holds (0: none).  If the
 * frame still holds that very image and it is known good, the access is
 * made and counted as a hit, nothing is copied and true is returned;
 * otherwise the page is read into buf, *stamp names the frame's image now
 * (0 if the cache keeps none) and false is returned.
 *
 * Given buffers (write_unsealed's donate): after the call each reqs[i].buf
 * is the caller's buffer back (not taken), another buffer now the
 * caller's (the frame's old image), or NULL (taken, nothing in return).
 * Buffers so exchanged come from pool (pagepool_get) and whoever holds one
 * last gives it back there (pagepool_put).
 *
 * A PageIO has frames only when it is such a cache (PageIO.frames): a layer
 * above a cache does not pass them on, since it may watch or change what a
 * read returns (the tier observer); a layer that changes nothing may
 * (device/passthrough.c).  The calls go to frames->owner, the cache.
 */
typedef struct PageFramesOps
{
	bool		(*read_stamped) (PageIO *owner, PageId page, char *buf,
								 uint64 *stamp, bool *verified);
	const char *(*read_borrow) (PageIO *owner, PageId page, char *buf,
								bool *verified);
	void		(*write_unsealed) (PageIO *owner, PageIORequest *reqs, int n,
								   bool donate);
} PageFramesOps;

typedef struct PageFrames
{
	const PageFramesOps *ops;
	PageIO	   *owner;			/* the cache the calls go to */
	struct PagePool *pool;		/* buffers exchanged with writers (donate) */
	uint64		lend_epoch;		/* bumped at every call on the cache */
} PageFrames;

struct PageIO
{
	const PageIOOps *ops;
	PageIO	   *below;			/* the layer it wraps; NULL for a device */
	uint32		page_size;
	FestStats  *stats;			/* counters of the current operation */
	/*
	 * Also measure CPU time per device call (costly): the open index's
	 * switch, set once per operation (festival.track_io_cpu); every layer
	 * of its chains points at it.
	 */
	const bool *time_cpu;
	const char *label;			/* for messages: the file path */
	/* the fault layer's state below this PageIO, or NULL (device/fault.h) */
	struct FaultState *fault;
	/*
	 * A write may return before it is safe from the death of the process:
	 * this layer or one below keeps it in memory (a write-back page cache)
	 * or does not yet record where it went (the tier router, whose map is
	 * made durable at sync), so only sync makes it survive a kill -9.
	 * Devices write through the kernel at once: false.  A wrapper inherits
	 * it from below (pageio_wrap_init) and sets it if it defers itself.
	 * The write-through store journals its commits over such a chain
	 * (nodestore/writethrough.c), so that a crash or a failed write-back loses
	 * nothing it acknowledged.
	 */
	bool		defers_writes;
	PageFrames *frames;			/* the page cache's extras, or NULL */
};

/*
 * Set up a wrapper's PageIO over below: its ops, the layer below, and
 * everything a wrapper passes on unchanged (page size, counters, CPU
 * timing, label, the fault state, whether writes are deferred).  A wrapper
 * then sets only what it changes (defers_writes, frames), so a field
 * added here reaches every layer instead of each wrapper copying fields by
 * hand.
 */
static inline void
pageio_wrap_init(PageIO *io, const PageIOOps *ops, PageIO *below)
{
	io->ops = ops;
	io->below = below;
	io->page_size = below->page_size;
	io->stats = below->stats;
	io->time_cpu = below->time_cpu;
	io->label = below->label;
	io->fault = below->fault;
	io->defers_writes = below->defers_writes;
	io->frames = NULL;
}

/*
 * The layer that carries out an operation: io itself, or the first layer
 * below it whose ops implement it (NULL passes the call down).
 */
#define PAGEIO_SERVING(io, op) \
	do { \
		while ((io)->ops->op == NULL) \
		{ \
			Assert((io)->below != NULL); \
			(io) = (io)->below; \
		} \
	} while (0)

static inline void
pageio_read(PageIO *io, PageIORequest *reqs, int n)
{
	for (int i = 0; i < n; i++)
	{
		reqs[i].verified = false;
		reqs[i].tier = PAGEIO_NO_TIER;
	}
	PAGEIO_SERVING(io, read);
	io->ops->read(io, reqs, n);
}

/* Write n pages; the images are sealed but not known to be (see verified). */
static inline void
pageio_write(PageIO *io, PageIORequest *reqs, int n)
{
	for (int i = 0; i < n; i++)
	{
		reqs[i].verified = false;
		reqs[i].tier = PAGEIO_NO_TIER;
	}
	PAGEIO_SERVING(io, write);
	io->ops->write(io, reqs, n);
}

/* pageio_write of images the caller has just sealed (fest_page_seal). */
static inline void
pageio_write_sealed(PageIO *io, PageIORequest *reqs, int n)
{
	for (int i = 0; i < n; i++)
	{
		reqs[i].verified = true;
		reqs[i].tier = PAGEIO_NO_TIER;
	}
	PAGEIO_SERVING(io, write);
	io->ops->write(io, reqs, n);
}

/* Read one page; returns its request's verified flag. */
static inline bool
pageio_read_one(PageIO *io, PageId page, char *buf)
{
	PageIORequest req = {page, buf};

	pageio_read(io, &req, 1);
	return req.verified;
}

static inline void
pageio_write_one(PageIO *io, PageId page, char *buf)
{
	PageIORequest req = {page, buf};

	pageio_write(io, &req, 1);
}

static inline void
pageio_sync(PageIO *io)
{
	PAGEIO_SERVING(io, sync);
	io->ops->sync(io);
}

static inline void
pageio_truncate(PageIO *io, uint64 npages)
{
	PAGEIO_SERVING(io, truncate);
	io->ops->truncate(io, npages);
}

static inline uint64
pageio_npages(PageIO *io)
{
	PAGEIO_SERVING(io, npages);
	return io->ops->npages(io);
}

static inline void
pageio_close(PageIO *io)
{
	PAGEIO_SERVING(io, close);
	io->ops->close(io);
}

/* The node store has flushed (PageIOOps.flush); a device does nothing. */
static inline void
pageio_flush(PageIO *io)
{
	while (io->ops->flush == NULL)
	{
		if (io->below == NULL)
			return;
		io = io->below;
	}
	io->ops->flush(io);
}

/* A node was delivered to the structure (PageIOOps.access). */
static inline void
pageio_access(PageIO *io, PageId page, int level, uint16 flags)
{
	while (io->ops->access == NULL)
	{
		if (io->below == NULL)
			return;
		io = io->below;
	}
	io->ops->access(io, page, level, flags);
}

/*
 * Read one page unless *stamp still names the cache's image of it (see
 * PageFramesOps.read_stamped): true means nothing was copied, the caller's
 * image is current; false means buf holds the page (*verified as
 * pageio_read_one returns it).  Without frames it is pageio_read_one.
 */
static inline bool
pageio_read_stamped(PageIO *io, PageId page, char *buf, uint64 *stamp,
					bool *verified)
{
	if (io->frames == NULL)
	{
		*stamp = 0;
		*verified = pageio_read_one(io, page, buf);
		return false;
	}
	*verified = false;
	return io->frames->ops->read_stamped(io->frames->owner, page, buf, stamp,
										 verified);
}

/*
 * Read one page, borrowing the cache's frame if io has frames (see
 * PageFramesOps.read_borrow), otherwise into buf.  The result is valid
 * until the next call on io; *verified as pageio_read_one returns it.
 */
static inline const char *
pageio_read_borrow(PageIO *io, PageId page, char *buf, bool *verified)
{
	if (io->frames == NULL)
	{
		*verified = pageio_read_one(io, page, buf);
		return buf;
	}
	*verified = false;
	return io->frames->ops->read_borrow(io->frames->owner, page, buf, verified);
}

/* The loan epoch of io now (0 without frames, which never lend). */
static inline uint64
pageio_lend_epoch(const PageIO *io)
{
	return io->frames != NULL ? io->frames->lend_epoch : 0;
}

/*
 * Is an image borrowed from io when its epoch was epoch still lent?
 * For Asserts: a reader takes the epoch just after pageio_read_borrow.
 */
static inline bool
pageio_loan_valid(const PageIO *io, uint64 epoch)
{
	return pageio_lend_epoch(io) == epoch;
}

/*
 * pagepool.c: aligned page buffers.  pageio_alloc_buffer: one buffer in the
 * current context, for O_DIRECT (page_size + FEST_IO_ALIGN bytes).  A pool
 * holds many without that per-buffer alignment gap (a page cache's frames);
 * buffers from a pool go back to it with pagepool_put, never to
 * pageio_free_buffer.
 */
extern char *pageio_alloc_buffer(uint32 page_size);
extern void pageio_free_buffer(char *buf);

typedef struct PagePool PagePool;
extern PagePool *pagepool_create(MemoryContext cxt, uint32 page_size);
extern char *pagepool_get(PagePool *pool);
extern void pagepool_put(PagePool *pool, char *buf);

#endif							/* FEST_PAGEIO_H */
