/*-------------------------------------------------------------------------
 *
 * engine_io_uring.c
 *	  The io_uring engine (liburing 2.3, Debian 12).
 *
 * Each file gets a ring of IO_ENGINE_MAX_DEPTH entries.  A batch is queued
 * as read or write SQEs, chunk by chunk, and each chunk is submitted and
 * waited for with one io_uring_submit_and_wait: one submission.  All the
 * chunk's completions are reaped before any result is looked at, so no
 * request is in flight when an error is raised.  A short transfer is
 * finished synchronously.
 *
 * Kernels may disable io_uring (kernel.io_uring_disabled, seccomp filters
 * of container runtimes); io_uring_queue_init then fails with ENOSYS or
 * EPERM and the device reports the engine as unavailable
 * (engine_unavailable) instead of failing later.
 *
 * The ring holds a descriptor, counted against max_files_per_process like
 * the index file's.
 *
 * IDENTIFICATION
 *	  src/device/engine_io_uring.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/engine.h"

#include <liburing.h>

#include "storage/fd.h"

typedef struct UringEngine
{
	IOEngine	e;				/* must be first */
	struct io_uring ring;
	bool		ring_open;
	long		results[IO_ENGINE_MAX_DEPTH];
} UringEngine;

static int
ring_open(UringEngine *u)
{
	int			rc;

	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("too many open index files"),
				 errhint("Close indices with festival.close() or raise max_files_per_process.")));
	rc = io_uring_queue_init(IO_ENGINE_MAX_DEPTH, &u->ring, 0);
	if (rc < 0)
	{
		ReleaseExternalFD();
		return rc;
	}
	u->ring_open = true;
	return 0;
}

static void
ring_close(UringEngine *u)
{
	if (!u->ring_open)
		return;
	io_uring_queue_exit(&u->ring);
	ReleaseExternalFD();
	u->ring_open = false;
}

/*
 * Submit the queued SQEs of a chunk and wait for their completions.
 * Returns how many the kernel took; on a refusal the unsubmitted SQEs are
 * discarded by recreating the ring (they must never reach the kernel
 * later, when their buffers may be gone).
 */
static int
submit_chunk(UringEngine *u, PageIORequest *chunk, int m, int *submissions)
{
	int			submitted = 0;
	int			reaped = 0;

	while (submitted < m)
	{
		int			rc = io_uring_submit_and_wait(&u->ring, m - submitted);

		if (rc == -EINTR)
			continue;
		if (rc <= 0)
			break;				/* refused (EAGAIN: short of resources) */
		submitted += rc;
		(*submissions)++;
		/* reap before submitting more: a refusal then has nothing in flight */
		while (reaped < submitted)
		{
			struct io_uring_cqe *cqe;
			int			wrc = io_uring_wait_cqe(&u->ring, &cqe);

			if (wrc == -EINTR)
				continue;
			if (wrc < 0)
			{
				/* requests in flight into the caller's buffers */
				errno = -wrc;
				ereport(FATAL,
						(errcode(ERRCODE_SYSTEM_ERROR),
						 errmsg("could not wait for I/O on index file \"%s\": %m",
								u->e.path)));
			}
			u->results[(PageIORequest *) io_uring_cqe_get_data(cqe) - chunk] = cqe->res;
			io_uring_cqe_seen(&u->ring, cqe);
			reaped++;
		}
	}
	if (submitted < m)
	{
		int			rc;

		ring_close(u);
		rc = ring_open(u);
		if (rc < 0)
			engine_unavailable("io_uring", -rc, "io_uring_queue_init");
	}
	return submitted;
}

static int
uring_transfer(IOEngine *e, PageIORequest *reqs, int n, bool write)
{
	UringEngine *u = (UringEngine *) e;
	int			submissions = 0;

	if (!u->ring_open)
	{
		int			rc = ring_open(u);

		if (rc < 0)
			engine_unavailable("io_uring", -rc, "io_uring_queue_init");
	}

	for (int start = 0; start < n; start += IO_ENGINE_MAX_DEPTH)
	{
		PageIORequest *chunk = reqs + start;
		int			m = Min(n - start, IO_ENGINE_MAX_DEPTH);
		int			submitted;

		for (int i = 0; i < m; i++)
		{
			struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
			off_t		offset = (off_t) chunk[i].page * e->page_size;

			/* the ring has IO_ENGINE_MAX_DEPTH entries and starts empty */
			Assert(sqe != NULL);
			if (write)
				io_uring_prep_write(sqe, e->fd, chunk[i].buf, e->page_size, offset);
			else
				io_uring_prep_read(sqe, e->fd, chunk[i].buf, e->page_size, offset);
			io_uring_sqe_set_data(sqe, &chunk[i]);
		}
		submitted = submit_chunk(u, chunk, m, &submissions);
		submissions += engine_settle_chunk(e, chunk, m, submitted, u->results, write);
	}
	return submissions;
}

static void
uring_close(IOEngine *e)
{
	ring_close((UringEngine *) e);
}

static const IOEngineOps uring_engine_ops = {
	.transfer = uring_transfer,
	.close = uring_close
};

IOEngine *
engine_io_uring_create(int fd, uint32 page_size, const char *path)
{
	UringEngine *u = palloc0(sizeof(UringEngine));
	int			rc;

	u->e.ops = &uring_engine_ops;
	u->e.fd = fd;
	u->e.page_size = page_size;
	u->e.path = path;
	rc = ring_open(u);
	if (rc < 0)
	{
		pfree(u);
		engine_unavailable("io_uring", -rc, "io_uring_queue_init");
	}
	return &u->e;
}

void
engine_io_uring_probe(void)
{
	struct io_uring ring;
	int			rc = io_uring_queue_init(1, &ring, 0);

	if (rc < 0)
		engine_unavailable("io_uring", -rc, "io_uring_queue_init");
	io_uring_queue_exit(&ring);
}
