/*-------------------------------------------------------------------------
 *
 * pagepool.c
 *	  Aligned page buffers: one at a time (pageio_alloc_buffer), or carved
 *	  from larger chunks (PagePool).
 *
 * A page buffer must be aligned to FEST_IO_ALIGN for O_DIRECT.  One palloc
 * per buffer (pageio_alloc_buffer) asks for page_size + FEST_IO_ALIGN
 * bytes, which the allocator serves as a block of its own: a 4 kB page
 * costs over 8 kB.  That is fine for the few buffers a call uses, but a
 * page cache holds thousands (a 128 MB cache took over 256 MB).  A pool
 * allocates a chunk of buffers at a time, aligned once per chunk,
 * and keeps the buffers given back on a free list for the next request,
 * so a cache of n pages costs n pages and about 3 % more (pages smaller
 * than FEST_IO_ALIGN take FEST_IO_ALIGN bytes each, as before).  A chunk is
 * about PAGEPOOL_CHUNK_BYTES, and at least one page: a pool of large pages
 * (up to 1 MB) does not carve 32 of them for its first request.  Chunks are not
 * given back before the pool's memory context goes: a cache's buffers are
 * reused by the cache itself (frames evicted, then refilled).
 *
 * IDENTIFICATION
 *	  src/device/pagepool.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/pageio.h"

#include "utils/memutils.h"

/*
 * An aligned page buffer; the chunk palloc returned is remembered just
 * before it so that pageio_free_buffer can release it.
 */
char *
pageio_alloc_buffer(uint32 page_size)
{
	char	   *raw = palloc(page_size + FEST_IO_ALIGN + sizeof(void *));
	char	   *buf = (char *) TYPEALIGN(FEST_IO_ALIGN, raw + sizeof(void *));

	((void **) buf)[-1] = raw;
	return buf;
}

void
pageio_free_buffer(char *buf)
{
	pfree(((void **) buf)[-1]);
}

/* Bytes per chunk: 32 pages of 4 kB, one alignment gap per chunk. */
#define PAGEPOOL_CHUNK_BYTES (128 * 1024)

/* A free buffer's first bytes link it to the next free one. */
typedef struct PoolFreeBuffer
{
	struct PoolFreeBuffer *next;
} PoolFreeBuffer;

struct PagePool
{
	MemoryContext cxt;			/* the chunks' */
	Size		stride;			/* page_size rounded up to FEST_IO_ALIGN */
	int			chunk_pages;	/* buffers carved at a time */
	PoolFreeBuffer *free;
	uint64		buffers;		/* carved so far */
	uint64		in_use;			/* handed out and not given back */
};

/* A pool of page_size buffers whose chunks live in cxt. */
PagePool *
pagepool_create(MemoryContext cxt, uint32 page_size)
{
	PagePool   *pool = MemoryContextAllocZero(cxt, sizeof(PagePool));

	Assert(page_size >= sizeof(PoolFreeBuffer));
	pool->cxt = cxt;
	/* every buffer aligned: pages smaller than FEST_IO_ALIGN take that much */
	pool->stride = TYPEALIGN(FEST_IO_ALIGN, page_size);
	pool->chunk_pages = Max(1, PAGEPOOL_CHUNK_BYTES / pool->stride);
	return pool;
}

char *
pagepool_get(PagePool *pool)
{
	PoolFreeBuffer *buf;

	if (pool->free == NULL)
	{
		char	   *chunk = MemoryContextAlloc(pool->cxt,
											   pool->chunk_pages * pool->stride +
											   FEST_IO_ALIGN);

		chunk = (char *) TYPEALIGN(FEST_IO_ALIGN, chunk);
		/* linked in address order, so a new chunk is used front to back */
		for (int i = pool->chunk_pages - 1; i >= 0; i--)
		{
			PoolFreeBuffer *b = (PoolFreeBuffer *) (chunk + i * pool->stride);

			b->next = pool->free;
			pool->free = b;
		}
		pool->buffers += pool->chunk_pages;
	}
	buf = pool->free;
	pool->free = buf->next;
	pool->in_use++;
	Assert(pool->in_use <= pool->buffers);
	return (char *) buf;
}

/* Give back a buffer pagepool_get handed out. */
void
pagepool_put(PagePool *pool, char *buf)
{
	PoolFreeBuffer *b = (PoolFreeBuffer *) buf;

	Assert(buf != NULL && (uintptr_t) buf % FEST_IO_ALIGN == 0);
	Assert(pool->in_use > 0);
	b->next = pool->free;
	pool->free = b;
	pool->in_use--;
}
