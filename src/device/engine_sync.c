/*-------------------------------------------------------------------------
 *
 * engine_sync.c
 *	  The sync engine: one pread/pwrite per page, so n pages are n
 *	  submissions.  Also the synchronous completion of short transfers,
 *	  which the batched engines share.
 *
 * IDENTIFICATION
 *	  src/device/engine_sync.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/engine.h"

#include <unistd.h>

/*
 * After a batched engine reaped a chunk of m requests, of which the first
 * `submitted` were accepted (results[i]: bytes transferred, or -errno):
 * raise the first failure, and finish short or unsubmitted transfers
 * synchronously.  Returns the extra submissions that took.
 */
int
engine_settle_chunk(IOEngine *e, PageIORequest *chunk, int m, int submitted,
					const long *results, bool write)
{
	int			submissions = 0;

	for (int i = 0; i < m; i++)
	{
		long		res = i < submitted ? results[i] : 0;

		if (res < 0)
			engine_report_failure(e, &chunk[i], write, (int) -res);
		if (res < e->page_size)
		{
			engine_finish_page(e, &chunk[i], (size_t) res, write);
			submissions++;
		}
	}
	return submissions;
}

/* Raise the error of a failed page transfer (err: an errno value). */
void
engine_report_failure(IOEngine *e, PageIORequest *req, bool write, int err)
{
	errno = err;
	ereport(ERROR,
			(errcode_for_file_access(),
			 errmsg("could not %s page " UINT64_FORMAT " of index file \"%s\": %m",
					write ? "write" : "read", req->page, e->path)));
}

/*
 * Move the rest of one page, from byte done on, retrying partial transfers
 * and interrupted calls.  Reading past the end of the file yields zeros (a
 * page never written, which page verification reports); a write that makes
 * no progress is a full device.
 */
void
engine_finish_page(IOEngine *e, PageIORequest *req, size_t done, bool write)
{
	uint32		page_size = e->page_size;
	off_t		offset = (off_t) req->page * page_size;

	while (done < page_size)
	{
		ssize_t		moved = write
			? pwrite(e->fd, req->buf + done, page_size - done, offset + done)
			: pread(e->fd, req->buf + done, page_size - done, offset + done);

		if (moved < 0 && errno == EINTR)
			continue;
		if (moved == 0 && !write)
		{
			memset(req->buf + done, 0, page_size - done);
			return;
		}
		if (moved <= 0)
			engine_report_failure(e, req, write, moved == 0 ? ENOSPC : errno);
		done += moved;
	}
}

static int
sync_transfer(IOEngine *e, PageIORequest *reqs, int n, bool write)
{
	for (int i = 0; i < n; i++)
		engine_finish_page(e, &reqs[i], 0, write);
	return n;
}

static void
sync_close(IOEngine *e)
{
}

static const IOEngineOps sync_engine_ops = {
	.transfer = sync_transfer,
	.close = sync_close
};

IOEngine *
engine_sync_create(int fd, uint32 page_size, const char *path)
{
	IOEngine   *e = palloc0(sizeof(IOEngine));

	e->ops = &sync_engine_ops;
	e->fd = fd;
	e->page_size = page_size;
	e->path = path;
	return e;
}

/* pread and pwrite are always there. */
void
engine_sync_probe(void)
{
}
