/*-------------------------------------------------------------------------
 *
 * pageio.h
 *	  The page I/O interface: whole pages in, whole pages out.
 *
 * Everything below the node stores speaks this interface.  Devices
 * implement it (device/file.c, device/memory.c); the fault layer
 * (device/fault.c), the simulated drive (device/sim.c), the tracing layer
 * and the page caches (src/buffer) implement it too and wrap another
 * PageIO, like decorators, so a node store never knows what is under it.
 *
 * Requests come in arrays so that a flushing unit or a batch query can be
 * handed to a batched engine (libaio, io_uring) as one submission.  The sync
 * engine issues them one by one; every implementation counts pages and
 * submissions separately in the FestStats it was given.
 *
 * Buffers are page_size bytes, aligned to FEST_IO_ALIGN (O_DIRECT needs it).
 *
 * Loans: a layer that holds page images in memory (a page cache) may lend
 * one to a reader instead of copying it (PageIOOps.read_borrow): the
 * reader gets a const pointer into the layer's frame, valid only until its
 * next call on that PageIO, whatever the call.  Such a layer bumps
 * lend_epoch at every call, so a reader can Assert that no call came
 * between the loan and its last use of the image (pageio_loan_valid).
 * Layers that do not lend leave lend_epoch alone; pageio_read_borrow then
 * reads into the caller's buffer.
 * Errors are raised with ereport; a read past the end of the file returns a
 * zero page, which page verification then reports.
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
	 * Write only: the image is final and known good but its checksum field
	 * is not computed (fest_page_write_unsealed, format/page.c, sets it
	 * with verified, and only for a PageIO whose ops take unsealed images;
	 * pageio_write and pageio_write_sealed clear it).  Such a PageIO (the
	 * write-back page cache) seals the image exactly once, when it writes
	 * it below; nothing below it ever sees an unsealed image.
	 */
	bool		unsealed;
	/*
	 * Write only: the caller gives buf away (only to a PageIO whose ops
	 * take buffers; pageio_write and pageio_write_sealed clear it).  After
	 * the call buf is the caller's buffer back (not taken), another buffer
	 * now the caller's (the layer's old image of the page), or NULL (taken,
	 * nothing in return).  Buffers so exchanged come from the PageIO's
	 * pool (PageIO.pool, pagepool_get) and whoever holds one last gives it
	 * back there (pagepool_put).
	 */
	bool		donate;
} PageIORequest;

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
	 * Optional (NULL: pageio_read_stamped reads as pageio_read_one does).
	 * Read one page for a caller that may already hold its image: *stamp
	 * names the image the caller holds (0: none).  If this layer serves the
	 * page from memory, its image is still the stamped one and it is known
	 * good, the access is made and counted exactly as a read would make and
	 * count it (a cache hit, the policy's reference), nothing is copied and
	 * true is returned.  Otherwise the page is read into buf as read does,
	 * *stamp names the image now in memory (0 if this layer keeps none) and
	 * false is returned.  Stamps are never reused by one layer, so equal
	 * stamps mean byte-identical images.
	 */
	bool		(*read_stamped) (PageIO *io, PageId page, char *buf,
								 uint64 *stamp, bool *verified);
	/*
	 * Optional (NULL: pageio_read_borrow reads into buf as pageio_read_one
	 * does).  Read one page, made and counted exactly as read makes and
	 * counts it, and return its image: either buf, filled as read fills
	 * it, or this layer's own copy, lent until the next call on this PageIO
	 * (see Loans above) and never to be written.  *verified as read sets
	 * the request's flag.
	 */
	const char *(*read_borrow) (PageIO *io, PageId page, char *buf,
								bool *verified);
	/*
	 * write accepts requests marked unsealed (PageIORequest.unsealed) and
	 * seals them before they go below.  False for every layer that passes
	 * images on or stores them (devices, fault, sim, tracing, clru, tiers):
	 * fest_page_write_unsealed seals for them first.
	 */
	bool		takes_unsealed;
	/*
	 * write accepts requests marked donate (PageIORequest.donate); the
	 * PageIO then has a pool (PageIO.pool) the buffers come from.
	 */
	bool		takes_buffers;
} PageIOOps;

struct PageIO
{
	const PageIOOps *ops;
	uint32		page_size;
	FestStats  *stats;			/* counters of the current operation */
	bool		time_cpu;		/* also measure CPU time per call (costly) */
	const char *label;			/* for messages: the file path */
	/* the fault layer's state below this PageIO, or NULL (device/fault.h) */
	struct FaultState *fault;
	/* bumped at every call by a layer that lends images (see Loans) */
	uint64		lend_epoch;
	/*
	 * Where the page buffers a layer that takes buffers exchanges with its
	 * writers come from and go back to (pagepool.c), living as long as the
	 * PageIO: set by every layer whose ops take buffers, NULL for others.
	 */
	struct PagePool *pool;
	/*
	 * A write may return before it is safe from the death of the process:
	 * this layer or one below keeps it in memory (a write-back page cache)
	 * or does not yet record where it went (the tier router, whose map is
	 * made durable at sync), so only sync makes it survive a kill -9.
	 * Devices write through the kernel at once: false.  A wrapper inherits
	 * it from below (pageio_wrap_init) and sets it if it defers itself.
	 * The write-through store journals its commits over such a chain
	 * (flash/direct.c), so that a crash or a failed write-back loses
	 * nothing it acknowledged.
	 */
	bool		defers_writes;
};

/*
 * Set up a wrapper's PageIO over below: its ops, and everything a wrapper
 * passes on unchanged (page size, counters, CPU timing, label, the fault
 * state, whether writes are deferred).  A wrapper then sets only what it
 * changes (a pool, defers_writes), so a field added here reaches every
 * layer instead of each wrapper copying fields by hand.
 */
static inline void
pageio_wrap_init(PageIO *io, const PageIOOps *ops, const PageIO *below)
{
	io->ops = ops;
	io->page_size = below->page_size;
	io->stats = below->stats;
	io->time_cpu = below->time_cpu;
	io->label = below->label;
	io->fault = below->fault;
	io->lend_epoch = 0;
	io->pool = NULL;
	io->defers_writes = below->defers_writes;
}

static inline void
pageio_read(PageIO *io, PageIORequest *reqs, int n)
{
	for (int i = 0; i < n; i++)
		reqs[i].verified = false;
	io->ops->read(io, reqs, n);
}

static inline void
pageio_write(PageIO *io, PageIORequest *reqs, int n)
{
	for (int i = 0; i < n; i++)
	{
		reqs[i].verified = false;
		reqs[i].unsealed = false;
		reqs[i].donate = false;
	}
	io->ops->write(io, reqs, n);
}

/* pageio_write of images the caller has just sealed (fest_page_seal). */
static inline void
pageio_write_sealed(PageIO *io, PageIORequest *reqs, int n)
{
	for (int i = 0; i < n; i++)
	{
		reqs[i].verified = true;
		reqs[i].unsealed = false;
		reqs[i].donate = false;
	}
	io->ops->write(io, reqs, n);
}

/* Read one page; returns its request's verified flag. */
static inline bool
pageio_read_one(PageIO *io, PageId page, char *buf)
{
	PageIORequest req = {page, buf, false};

	io->ops->read(io, &req, 1);
	return req.verified;
}

/*
 * Read one page unless *stamp still names this layer's image of it (see
 * PageIOOps.read_stamped): true means nothing was copied, the caller's
 * image is current; false means buf holds the page (*verified as
 * pageio_read_one returns it).
 */
static inline bool
pageio_read_stamped(PageIO *io, PageId page, char *buf, uint64 *stamp,
					bool *verified)
{
	if (io->ops->read_stamped == NULL)
	{
		*stamp = 0;
		*verified = pageio_read_one(io, page, buf);
		return false;
	}
	*verified = false;
	return io->ops->read_stamped(io, page, buf, stamp, verified);
}

/*
 * Read one page, borrowing the image from the PageIO if it lends it (see
 * PageIOOps.read_borrow), otherwise into buf.  The result is valid until
 * the next call on io; *verified as pageio_read_one returns it.
 */
static inline const char *
pageio_read_borrow(PageIO *io, PageId page, char *buf, bool *verified)
{
	if (io->ops->read_borrow == NULL)
	{
		*verified = pageio_read_one(io, page, buf);
		return buf;
	}
	*verified = false;
	return io->ops->read_borrow(io, page, buf, verified);
}

/*
 * Is an image borrowed from io when its lend_epoch was epoch still lent?
 * For Asserts: a reader takes the epoch just after pageio_read_borrow.
 */
static inline bool
pageio_loan_valid(const PageIO *io, uint64 epoch)
{
	return io->lend_epoch == epoch;
}

static inline void
pageio_write_one(PageIO *io, PageId page, char *buf)
{
	PageIORequest req = {page, buf, false};

	io->ops->write(io, &req, 1);
}

static inline void
pageio_sync(PageIO *io)
{
	io->ops->sync(io);
}

/* Allocate a page buffer aligned for O_DIRECT in the current context. */
extern char *pageio_alloc_buffer(uint32 page_size);
extern void pageio_free_buffer(char *buf);

/*
 * pagepool.c: many aligned page buffers without the per-buffer alignment
 * gap of pageio_alloc_buffer (a page cache's frames).  Buffers from a pool
 * go back to it with pagepool_put, never to pageio_free_buffer.
 */
typedef struct PagePool PagePool;
extern PagePool *pagepool_create(MemoryContext cxt, uint32 page_size);
extern char *pagepool_get(PagePool *pool);
extern void pagepool_put(PagePool *pool, char *buf);

#endif							/* FEST_PAGEIO_H */
