/*-------------------------------------------------------------------------
 *
 * memory.c
 *	  Memory devices (kind => 'memory'): an index's pages kept in RAM.
 *
 * For fast, exact experiments: no file, no real I/O, and with a device
 * profile the virtual clock still runs (sim.c).  The pages belong to the
 * open index (they live in its DeviceState, device/open.c): they are gone
 * when the index is closed or the session ends.  Nothing is durable, so
 * sync does nothing.  Submissions are counted as the device's engine
 * would make them (sync: one per page), so counters compare with files.  Reading a page never written yields zeros, as a
 * file read past its end does.
 *
 * IDENTIFICATION
 *	  src/device/memory.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/device.h"

#include "utils/memutils.h"

struct MemoryPages
{
	MemoryContext cxt;
	uint32		page_size;
	uint64		npages;			/* pages held: highest written + 1 */
	uint64		capacity;		/* allocated slots */
	char	  **pages;			/* NULL: never written (reads as zeros) */
};

typedef struct MemoryPageIO
{
	PageIO		io;				/* must be first */
	MemoryPages *mem;
	bool		batched;		/* the engine submits an array at once */
} MemoryPageIO;

MemoryPages *
memory_pages_create(uint32 page_size)
{
	MemoryPages *mem = palloc0(sizeof(MemoryPages));

	mem->cxt = CurrentMemoryContext;
	mem->page_size = page_size;
	return mem;
}

uint64
memory_pages_count(const MemoryPages *mem)
{
	return mem->npages;
}

static void
memory_read(PageIO *io, PageIORequest *reqs, int n)
{
	MemoryPages *mem = ((MemoryPageIO *) io)->mem;

	for (int i = 0; i < n; i++)
	{
		PageId		page = reqs[i].page;

		if (page < mem->npages && mem->pages[page] != NULL)
			memcpy(reqs[i].buf, mem->pages[page], mem->page_size);
		else
			memset(reqs[i].buf, 0, mem->page_size);
	}
	io->stats->pages_read += n;
	io->stats->read_submissions += ((MemoryPageIO *) io)->batched ? 1 : n;
}

static void
memory_write(PageIO *io, PageIORequest *reqs, int n)
{
	MemoryPages *mem = ((MemoryPageIO *) io)->mem;

	for (int i = 0; i < n; i++)
	{
		PageId		page = reqs[i].page;

		if (page >= mem->capacity)
		{
			uint64		cap = Max(page + 1, Max(mem->capacity * 2, 64));

			if (mem->pages == NULL)
				mem->pages = MemoryContextAllocHuge(mem->cxt, cap * sizeof(char *));
			else
				mem->pages = repalloc_huge(mem->pages, cap * sizeof(char *));
			memset(mem->pages + mem->capacity, 0,
				   (cap - mem->capacity) * sizeof(char *));
			mem->capacity = cap;
		}
		if (mem->pages[page] == NULL)
			mem->pages[page] = MemoryContextAlloc(mem->cxt, mem->page_size);
		memcpy(mem->pages[page], reqs[i].buf, mem->page_size);
		mem->npages = Max(mem->npages, page + 1);
	}
	io->stats->pages_written += n;
	io->stats->write_submissions += ((MemoryPageIO *) io)->batched ? 1 : n;
}

/* Nothing is durable on a memory device: there is nothing to sync. */
static void
memory_sync(PageIO *io)
{
}

static void
memory_truncate(PageIO *io, uint64 npages)
{
	MemoryPages *mem = ((MemoryPageIO *) io)->mem;

	for (uint64 page = npages; page < mem->npages; page++)
		if (mem->pages[page] != NULL)
		{
			pfree(mem->pages[page]);
			mem->pages[page] = NULL;
		}
	mem->npages = Min(mem->npages, npages);
}

static uint64
memory_npages(PageIO *io)
{
	return ((MemoryPageIO *) io)->mem->npages;
}

/* The pages stay: they belong to the index's DeviceState, not to the PageIO. */
static void
memory_close(PageIO *io)
{
}

static const PageIOOps memory_pageio_ops = {
	.read = memory_read,
	.write = memory_write,
	.sync = memory_sync,
	.truncate = memory_truncate,
	.npages = memory_npages,
	.close = memory_close
};

PageIO *
memory_pageio_create(MemoryPages *mem, const char *label, bool batched,
					 FestStats *stats, const bool *time_cpu)
{
	MemoryPageIO *m = palloc0(sizeof(MemoryPageIO));

	m->io.ops = &memory_pageio_ops;
	m->io.page_size = mem->page_size;
	m->io.stats = stats;
	m->io.time_cpu = time_cpu;
	m->io.label = pstrdup(label);
	m->mem = mem;
	m->batched = batched;
	return &m->io;
}
