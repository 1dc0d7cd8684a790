/*-------------------------------------------------------------------------
 *
 * engine_mmap.c
 *	  The mmap engine: reads copy pages out of a read-only shared mapping of
 *	  the index file; writes are the sync engine's pwrite.
 *
 * Why: on a buffered device without a page cache, every node a query
 * visits is a pread of one page from the OS cache.  On this machine such a
 * call costs about 1.3 us against 0.5 us for copying the same page out of a
 * mapping (random pages of a 256 MB file), and the system call, not the
 * copy, was the largest part of a kNN query or a window on 1M points
 * (issue 26; docs/experiments.md, "Reads through a mapping").  The pages
 * are the same: a MAP_SHARED mapping and pwrite share Linux's page cache,
 * so a read sees every write that came before it, and what reaches the
 * disk, and when, is unchanged (writes and fdatasync are as with sync).
 * Only buffered devices may use it: O_DIRECT writes bypass the cache the
 * mapping reads (device_validate_spec refuses the pair).
 *
 * The mapping covers twice the file's size (at least MMAP_MIN_RESERVE) and
 * is mapped again, twice as large, when the file outgrows it: a build
 * remaps about log2 of its size in 256 kB times.  Touching a
 * mapped page beyond the end of the file raises SIGBUS, so the engine
 * keeps the number of whole pages the file is known to hold (its own
 * writes extend it, a truncation through file.c shrinks it, fstat renews
 * it when a read asks beyond it) and reads any page beyond that with
 * pread, which yields zeros past the end as the sync engine does.
 *
 * A SIGBUS can still come from below: the kernel failing to read a page
 * in (EIO of the drive), or another process truncating the file behind
 * the flock.  A copy out of the mapping therefore runs under a guard: the
 * process's SIGBUS handler, installed once, jumps back to the copy when
 * the faulting address lies in the mapping being copied from, and the
 * read fails with an I/O error naming the file and page, as a failed pread
 * would.  Any other SIGBUS (a fault elsewhere, one another process sends)
 * is raised again with the default action, as if no handler were
 * installed.  The guard (the copy in progress) is the only process-global
 * state of this layer (DESIGN.md, Invariants).
 *
 * Counters: each page copied is one submission, as with sync (each is a
 * separate access the caller waited for).
 *
 * IDENTIFICATION
 *	  src/device/engine_mmap.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/engine.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The smallest mapping.  Small, so that the tests' indices of a few hundred
 * kB already grow past it; address space beyond the file costs nothing.
 */
#define MMAP_MIN_RESERVE	((size_t) 256 * 1024)

typedef struct MmapEngine
{
	IOEngine	e;				/* must be first */
	char	   *map;			/* NULL until the first read */
	size_t		map_len;		/* bytes of address space mapped */
	uint64		file_pages;		/* whole pages the file is known to hold */
} MmapEngine;

/*
 * The copy in progress, for the SIGBUS handler: set only while
 * guarded_copy runs, so a signal at any other time is not ours.
 */
static sigjmp_buf *volatile guard_jump = NULL;
static const char *volatile guard_start = NULL;
static volatile size_t guard_len = 0;
static bool guard_installed = false;

static void
mapped_copy_sigbus(int signo, siginfo_t *info, void *context)
{
	sigjmp_buf *jump = guard_jump;

	/* si_code > 0: raised by the kernel for a fault, si_addr its address */
	if (jump != NULL && info->si_code > 0 &&
		(const char *) info->si_addr >= guard_start &&
		(const char *) info->si_addr < guard_start + guard_len)
	{
		guard_jump = NULL;
		siglongjmp(*jump, 1);
	}

	/*
	 * Not a page of the mapping being copied, or a SIGBUS another process
	 * sent: the process ends as it would have without the handler.
	 */
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

static void
install_guard(void)
{
	struct sigaction sa;

	if (guard_installed)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = mapped_copy_sigbus;
	/* not blocked in the handler: the jump out does not restore a mask */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) != 0)
		engine_unavailable("mmap", errno, "sigaction(SIGBUS)");
	guard_installed = true;
}

/* Renew the count of whole pages from the file's size. */
static void
refresh_file_pages(MmapEngine *m)
{
	struct stat st;

	if (fstat(m->e.fd, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat index file \"%s\": %m", m->e.path)));
	m->file_pages = (uint64) st.st_size / m->e.page_size;
}

/* Map the file so that its first `pages` pages lie inside the mapping. */
static void
ensure_mapped(MmapEngine *m, uint64 pages)
{
	size_t		need = (size_t) pages * m->e.page_size;
	size_t		len;
	void	   *map;

	if (m->map != NULL && need <= m->map_len)
		return;
	len = Max(MMAP_MIN_RESERVE, m->map_len);
	while (len < 2 * need)
		len *= 2;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, m->e.fd, 0);
	if (map == MAP_FAILED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not map index file \"%s\": %m", m->e.path),
				 errhint("Close other indices, raise the process's address-space limit, or use engine => 'sync'.")));
	if (m->map != NULL)
		(void) munmap(m->map, m->map_len);
	m->map = map;
	m->map_len = len;
}

/*
 * Copy n pages that lie inside the file out of the mapping.  A SIGBUS on
 * the way (the kernel could not read a page in, or the file shrank behind
 * the flock) fails the read of that page with EIO.
 */
static void
guarded_copy(MmapEngine *m, PageIORequest *reqs, int n)
{
	sigjmp_buf	jump;
	volatile int i = 0;
	uint32		page_size = m->e.page_size;

	if (sigsetjmp(jump, 0) != 0)
	{
		guard_jump = NULL;
		errno = EIO;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read page " UINT64_FORMAT " of index file \"%s\": %m",
						reqs[i].page, m->e.path),
				 errdetail("The kernel could not bring the mapped page in (SIGBUS): the drive failed to read it, or the file was made shorter by another process.")));
	}
	guard_start = m->map;
	guard_len = m->map_len;
	guard_jump = &jump;
	for (; i < n; i++)
	{
		Assert(reqs[i].page < m->file_pages);
		memcpy(reqs[i].buf, m->map + (size_t) reqs[i].page * page_size, page_size);
	}
	guard_jump = NULL;
}

static int
mmap_transfer(IOEngine *e, PageIORequest *reqs, int n, bool write)
{
	MmapEngine *m = (MmapEngine *) e;
	int			start = 0;

	if (write)
	{
		for (int i = 0; i < n; i++)
		{
			engine_finish_page(e, &reqs[i], 0, true);
			m->file_pages = Max(m->file_pages, reqs[i].page + 1);
		}
		return n;
	}

	/* runs of pages inside the file are copied; any other page is pread */
	while (start < n)
	{
		int			end = start;

		while (end < n && reqs[end].page < m->file_pages)
			end++;
		if (end > start)
		{
			ensure_mapped(m, m->file_pages);
			guarded_copy(m, reqs + start, end - start);
			start = end;
			continue;
		}
		/* beyond what is known: the file may have grown under a sync write */
		refresh_file_pages(m);
		if (reqs[start].page < m->file_pages)
			continue;
		engine_finish_page(e, &reqs[start], 0, false);
		start++;
	}
	return n;
}

static void
mmap_truncated(IOEngine *e, uint64 npages)
{
	MmapEngine *m = (MmapEngine *) e;

	m->file_pages = Min(m->file_pages, npages);
}

static void
mmap_close(IOEngine *e)
{
	MmapEngine *m = (MmapEngine *) e;

	if (m->map != NULL)
		(void) munmap(m->map, m->map_len);
	m->map = NULL;
	m->map_len = 0;
}

static const IOEngineOps mmap_engine_ops = {
	.transfer = mmap_transfer,
	.truncated = mmap_truncated,
	.close = mmap_close
};

IOEngine *
engine_mmap_create(int fd, uint32 page_size, const char *path)
{
	MmapEngine *m = palloc0(sizeof(MmapEngine));

	m->e.ops = &mmap_engine_ops;
	m->e.fd = fd;
	m->e.page_size = page_size;
	m->e.path = path;
	install_guard();
	refresh_file_pages(m);
	return &m->e;
}

/* mmap is always there; the guard is installed when a device opens. */
void
engine_mmap_probe(void)
{
}
