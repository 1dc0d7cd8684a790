/*-------------------------------------------------------------------------
 *
 * engine_libaio.c
 *	  The libaio engine: Linux native asynchronous I/O (io_submit).
 *
 * A batch is prepared as iocbs, submitted with one io_submit per chunk of
 * at most IO_ENGINE_MAX_DEPTH pages (the queue depth), and waited for with
 * io_getevents until every request of the chunk completed.  Only then are
 * results looked at, so no request is in flight when an error is raised.
 * A request the kernel did not accept (io_submit stopped early) is done
 * synchronously instead; a short transfer is finished synchronously.
 *
 * With io => 'buffered' the kernel performs native AIO synchronously
 * inside io_submit; the batch is still one system call.  With O_DIRECT the
 * requests of a chunk are in flight together.
 *
 * IDENTIFICATION
 *	  src/device/engine_libaio.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/engine.h"

#include <libaio.h>

typedef struct LibaioEngine
{
	IOEngine	e;				/* must be first */
	io_context_t ctx;
	struct iocb cbs[IO_ENGINE_MAX_DEPTH];
	struct iocb *cbp[IO_ENGINE_MAX_DEPTH];
	struct io_event events[IO_ENGINE_MAX_DEPTH];
	long		results[IO_ENGINE_MAX_DEPTH];
} LibaioEngine;

/*
 * Submit cbp[0..m) until the kernel took them all or refused; returns how
 * many it took and counts the io_submit calls that took some.
 */
static int
submit_chunk(LibaioEngine *a, int m, int *submissions)
{
	int			submitted = 0;

	while (submitted < m)
	{
		int			rc = io_submit(a->ctx, m - submitted, a->cbp + submitted);

		if (rc == -EINTR)
			continue;
		if (rc <= 0)
			break;				/* the rest is done synchronously */
		submitted += rc;
		(*submissions)++;
	}
	return submitted;
}

/* Wait for the completions of the submitted requests of a chunk. */
static void
reap_chunk(LibaioEngine *a, PageIORequest *chunk, int submitted)
{
	int			reaped = 0;

	while (reaped < submitted)
	{
		int			rc = io_getevents(a->ctx, submitted - reaped, submitted - reaped,
									  a->events, NULL);

		if (rc == -EINTR)
			continue;
		if (rc < 0)
		{
			/*
			 * Requests are still in flight into buffers the caller would
			 * free on an ERROR; only ending the process is safe.
			 */
			errno = -rc;
			ereport(FATAL,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not wait for I/O on index file \"%s\": %m",
							a->e.path)));
		}
		for (int i = 0; i < rc; i++)
		{
			PageIORequest *req = (PageIORequest *) a->events[i].data;

			a->results[req - chunk] = (long) a->events[i].res;
		}
		reaped += rc;
	}
}

static int
libaio_transfer(IOEngine *e, PageIORequest *reqs, int n, bool write)
{
	LibaioEngine *a = (LibaioEngine *) e;
	int			submissions = 0;

	for (int start = 0; start < n; start += IO_ENGINE_MAX_DEPTH)
	{
		PageIORequest *chunk = reqs + start;
		int			m = Min(n - start, IO_ENGINE_MAX_DEPTH);
		int			submitted;

		for (int i = 0; i < m; i++)
		{
			off_t		offset = (off_t) chunk[i].page * e->page_size;

			if (write)
				io_prep_pwrite(&a->cbs[i], e->fd, chunk[i].buf, e->page_size, offset);
			else
				io_prep_pread(&a->cbs[i], e->fd, chunk[i].buf, e->page_size, offset);
			a->cbs[i].data = &chunk[i];
			a->cbp[i] = &a->cbs[i];
		}
		submitted = submit_chunk(a, m, &submissions);
		reap_chunk(a, chunk, submitted);
		submissions += engine_settle_chunk(e, chunk, m, submitted, a->results, write);
	}
	return submissions;
}

static void
libaio_close(IOEngine *e)
{
	LibaioEngine *a = (LibaioEngine *) e;

	if (a->ctx != NULL)
		(void) io_destroy(a->ctx);
	a->ctx = NULL;
}

static const IOEngineOps libaio_engine_ops = {
	.transfer = libaio_transfer,
	.close = libaio_close
};

IOEngine *
engine_libaio_create(int fd, uint32 page_size, const char *path)
{
	LibaioEngine *a = palloc0(sizeof(LibaioEngine));
	int			rc = io_setup(IO_ENGINE_MAX_DEPTH, &a->ctx);

	if (rc < 0)
	{
		pfree(a);
		engine_unavailable("libaio", -rc, "io_setup");
	}
	a->e.ops = &libaio_engine_ops;
	a->e.fd = fd;
	a->e.page_size = page_size;
	a->e.path = path;
	return &a->e;
}

void
engine_libaio_probe(void)
{
	io_context_t ctx = NULL;
	int			rc = io_setup(1, &ctx);

	if (rc < 0)
		engine_unavailable("libaio", -rc, "io_setup");
	(void) io_destroy(ctx);
}
