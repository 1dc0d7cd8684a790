/*-------------------------------------------------------------------------
 *
 * file.c
 *	  Index files on a file device: their PageIO.
 *
 * The file descriptor is opened once and held until the index is closed
 * (FESTIval reopened the file for every page).  It is registered with
 * PostgreSQL as an external descriptor, and an exclusive flock() on it keeps
 * other processes, including other clusters, away from the file.
 *
 * With io = 'direct' the file is opened with O_DIRECT, so every page
 * crosses to the device; buffers are aligned to FEST_IO_ALIGN and page sizes
 * are multiples of 512.  With 'buffered', pages go through the OS cache.
 *
 * How a batch of requests reaches the kernel is the engine's business
 * (device/engine.h: sync, libaio, io_uring); this file times each batch and
 * counts its pages and the submissions the engine used.
 *
 * IDENTIFICATION
 *	  src/device/file.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/device.h"
#include "device/engine.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/timestamp.h"

typedef struct FilePageIO
{
	PageIO		io;				/* must be first */
	int			fd;
	char	   *path;
	IOEngine   *engine;
	MemoryContextCallback release;	/* closes it with its memory context */
} FilePageIO;

/* Timing of one device call, for the I/O counters. */
typedef struct CallTimer
{
	int64		start;
	int64		start_cpu;
} CallTimer;

static void
timer_start(PageIO *io, CallTimer *t)
{
	t->start = fest_now_ns();
	t->start_cpu = *io->time_cpu ? fest_cpu_ns() : 0;
}

/* Wall nanoseconds of the call; its CPU time goes to io_cpu_ns if asked. */
static int64
timer_stop(PageIO *io, CallTimer *t)
{
	int64		elapsed = fest_now_ns() - t->start;

	if (*io->time_cpu)
		io->stats->io_cpu_ns += fest_cpu_ns() - t->start_cpu;
	io->stats->io_ns += elapsed;
	return elapsed;
}

/*
 * Write through the engine; a refused write is counted before its error
 * leaves, so that the handle knows a layer above may have let go of what
 * it held (a page cache's evicted page) and reloads the index.
 */
static int
write_counting_errors(PageIO *io, PageIORequest *reqs, int n)
{
	FilePageIO *f = (FilePageIO *) io;
	int			submissions = 0;

	PG_TRY();
	{
		submissions = f->engine->ops->transfer(f->engine, reqs, n, true);
	}
	PG_CATCH();
	{
		io->stats->write_errors++;
		PG_RE_THROW();
	}
	PG_END_TRY();
	return submissions;
}

/* One array of requests through the engine, timed and counted. */
static void
file_transfer(PageIO *io, PageIORequest *reqs, int n, bool write)
{
	FilePageIO *f = (FilePageIO *) io;
	CallTimer	t;
	int			submissions;
	int64		elapsed;

	if (n <= 0)
		return;
	timer_start(io, &t);
	submissions = write ? write_counting_errors(io, reqs, n)
		: f->engine->ops->transfer(f->engine, reqs, n, false);
	elapsed = timer_stop(io, &t);
	if (write)
	{
		io->stats->write_ns += elapsed;
		io->stats->pages_written += n;
		io->stats->write_submissions += submissions;
	}
	else
	{
		io->stats->read_ns += elapsed;
		io->stats->pages_read += n;
		io->stats->read_submissions += submissions;
	}
}

static void
file_read(PageIO *io, PageIORequest *reqs, int n)
{
	file_transfer(io, reqs, n, false);
}

static void
file_write(PageIO *io, PageIORequest *reqs, int n)
{
	file_transfer(io, reqs, n, true);
}

static void
file_sync(PageIO *io)
{
	FilePageIO *f = (FilePageIO *) io;
	CallTimer	t;
	int64		start_cpu;

	timer_start(io, &t);
	/*
	 * The kernel's CPU time flushing this machine's page cache belongs to
	 * the host's file, not to the index nor to a modelled drive (a sync
	 * costs no virtual time): measured always and left out of the index
	 * CPU time (ix_end_op), whose clock would otherwise count it.
	 */
	start_cpu = fest_cpu_ns();
	if (fdatasync(f->fd) != 0)
	{
		io->stats->write_errors++;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not sync index file \"%s\": %m", f->path)));
	}
	io->stats->sync_cpu_ns += fest_cpu_ns() - start_cpu;
	io->stats->sync_ns += timer_stop(io, &t);
	io->stats->syncs++;
}

static void
file_truncate(PageIO *io, uint64 npages)
{
	FilePageIO *f = (FilePageIO *) io;

	if (ftruncate(f->fd, (off_t) (npages * io->page_size)) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not truncate index file \"%s\": %m", f->path)));
	if (f->engine->ops->truncated != NULL)
		f->engine->ops->truncated(f->engine, npages);
}

static uint64
file_npages(PageIO *io)
{
	FilePageIO *f = (FilePageIO *) io;
	struct stat st;

	if (fstat(f->fd, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat index file \"%s\": %m", f->path)));
	return (uint64) st.st_size / io->page_size;
}

static void
file_close(PageIO *io)
{
	FilePageIO *f = (FilePageIO *) io;

	if (f->engine != NULL)
		f->engine->ops->close(f->engine);
	f->engine = NULL;
	if (f->fd >= 0)
	{
		/* closing drops the flock */
		close(f->fd);
		ReleaseExternalFD();
		f->fd = -1;
	}
}

/*
 * The file's descriptor, flock and engine belong to the memory context the
 * PageIO lives in (an open index's): when that context goes before the
 * PageIO was closed (an open that failed above the device, whose chain the
 * handle never got to hold), they are released with it.  After a close
 * this does nothing.
 */
static void
file_release_callback(void *arg)
{
	file_close((PageIO *) arg);
}

static const PageIOOps file_pageio_ops = {
	.read = file_read,
	.write = file_write,
	.sync = file_sync,
	.truncate = file_truncate,
	.npages = file_npages,
	.close = file_close
};

/*
 * Open (or, with create, exclusively create) an index file and lock it.
 * The returned PageIO is allocated in the current memory context; its
 * descriptor is released by the close callback, or else when that context
 * is reset or deleted (file_release_callback).
 */
PageIO *
device_file_open(const DeviceSpec *spec, const char *path, uint32 page_size,
				 bool create, FestStats *stats, const bool *time_cpu)
{
	FilePageIO *f;
	int			flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW;
	int			fd;
	TimestampTz wait_started;

	Assert(spec->kind == DEVICE_KIND_FILE);
	Assert(page_size % FEST_PAGE_SIZE_MULTIPLE == 0);

	if (create)
		flags |= O_CREAT | O_EXCL;
	if (spec->io_mode == DEVICE_IO_DIRECT)
		flags |= O_DIRECT;

	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("too many open index files"),
				 errhint("Close indices with festival.close() or raise max_files_per_process.")));

#ifdef O_NOATIME
	/*
	 * No access time: the kernel would otherwise check (and now and then
	 * write) it on every read, a visible part of a query on an index
	 * without a cache.  Only the file's owner may ask; anyone else opens
	 * it as before.
	 */
	fd = open(path, flags | O_NOATIME, S_IRUSR | S_IWUSR);
	if (fd < 0 && errno == EPERM)
		fd = open(path, flags, S_IRUSR | S_IWUSR);
#else
	fd = open(path, flags, S_IRUSR | S_IWUSR);
#endif
	if (fd < 0)
	{
		int			save_errno = errno;

		ReleaseExternalFD();
		errno = save_errno;
		if (errno == EEXIST)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_FILE),
					 errmsg("index file \"%s\" already exists", path),
					 errhint("Another index (perhaps in another database) uses this name on this device; choose another name or device.")));
		if (errno == EINVAL && spec->io_mode == DEVICE_IO_DIRECT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open index file \"%s\" with O_DIRECT: %m", path),
					 errhint("The file system of device \"%s\" does not support direct I/O; create a device with io => 'buffered'.",
							 spec->name)));
		if (errno == ELOOP)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("index file \"%s\" is a symbolic link", path),
					 errhint("Index files must be regular files inside festival.data_directory.")));
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open index file \"%s\": %m", path)));
	}

	/* the previous holder may be a session that is just ending: wait for it */
	wait_started = GetCurrentTimestamp();
	while (flock(fd, LOCK_EX | LOCK_NB) != 0)
	{
		int			save_errno = errno;

		if (save_errno == EWOULDBLOCK || save_errno == EINTR)
		{
			bool		retry;

			/* an interrupt's ERROR must not leak the descriptor */
			PG_TRY();
			{
				retry = device_wait_for_holder(wait_started);
			}
			PG_CATCH();
			{
				close(fd);
				ReleaseExternalFD();
				PG_RE_THROW();
			}
			PG_END_TRY();
			if (retry)
				continue;
		}

		close(fd);
		ReleaseExternalFD();
		if (save_errno == EWOULDBLOCK)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("index file \"%s\" is locked by another process", path),
					 errhint("Another server or session has it open; close it there first, or raise festival.open_timeout to wait longer.")));
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not lock index file \"%s\": %m", path)));
	}

	f = palloc0(sizeof(FilePageIO));
	f->io.ops = &file_pageio_ops;
	f->io.page_size = page_size;
	f->io.stats = stats;
	f->io.time_cpu = time_cpu;
	f->path = pstrdup(path);
	f->io.label = f->path;
	f->fd = fd;

	/* an engine the kernel refuses is an error; the file is released */
	PG_TRY();
	{
		f->engine = io_engine_create(spec->engine, fd, page_size, f->path);
	}
	PG_CATCH();
	{
		close(fd);
		ReleaseExternalFD();
		if (create)
			(void) unlink(path);
		PG_RE_THROW();
	}
	PG_END_TRY();
	f->release.func = file_release_callback;
	f->release.arg = f;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &f->release);
	return &f->io;
}

bool
device_file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Remove an index file; a missing file is not an error. */
void
device_file_unlink(const char *path)
{
	if (unlink(path) != 0 && errno != ENOENT)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not remove index file \"%s\": %m", path)));
}
