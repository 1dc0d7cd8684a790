/*-------------------------------------------------------------------------
 *
 * fault.c
 *	  The fault-injecting device layer (see fault.h).
 *
 * Faults are counted per page, not per call: a write of an array of n pages
 * is n page writes, and a fault armed after k of them writes the first k
 * pages (passed on to the device below as one array, so a batched engine
 * still sees one submission) and then fails.  That makes "the i-th page
 * write of an operation" a deterministic point for the tests, whatever
 * the engine.
 *
 * A torn page is made from the page below: its first half is the new
 * image, its second half what the device held (zeros past the end), which
 * is what a device that lost power or space mid-page leaves.
 *
 * IDENTIFICATION
 *	  src/device/fault.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/fault.h"

#include <signal.h>
#include <unistd.h>

#include "utils/memutils.h"

const char *const fault_target_names[] = {
	"write", "read", "sync", "log_write", "log_sync", "tier_write", "tier_map_write", NULL
};

const char *const fault_error_names[] = {
	"ENOSPC", "EIO", "torn", "crash", NULL
};

typedef struct FaultPageIO
{
	PageIO		io;				/* must be first */
	FaultState *fs;
} FaultPageIO;

void
fault_arm(FaultState *fs, FaultTarget target, int64 after, FaultError error)
{
	Assert(after >= 0 && target < FAULT_NTARGETS);
	fs->armed = true;
	fs->target = target;
	fs->remaining = after;
	fs->error = error;
}

void
fault_disarm(FaultState *fs)
{
	fs->armed = false;
}

/*
 * How many of the n operations of target about to run succeed; n if the
 * fault does not fire among them.  Counts them and disarms on firing.
 */
static int
fault_allow(FaultState *fs, FaultTarget target, int n)
{
	int			ok = n;

	Assert(n >= 0 && target < FAULT_NTARGETS);
	/* an armed fault still has its count; a fired one is disarmed */
	Assert(!fs->armed || fs->remaining >= 0);
	if (fs->armed && fs->target == target)
	{
		if (fs->remaining < n)
		{
			ok = (int) fs->remaining;
			fs->armed = false;
			fs->fired++;
		}
		else
			fs->remaining -= n;
	}
	/* exactly the operations let through are counted, and at most n */
	Assert(ok >= 0 && ok <= n);
	Assert(ok == n || !fs->armed);
	fs->seen[target] += ok;
	return ok;
}

/* A crash fault: die at once, as kill -9 would. */
static void
fault_crash(void)
{
	(void) kill(getpid(), SIGKILL);
	/* SIGKILL cannot be caught; this is never reached */
	pg_unreachable();
}

static void
fault_report(FaultPageIO *f, const char *what, PageId page, int err)
{
	errno = err;
	ereport(ERROR,
			(errcode_for_file_access(),
			 errmsg("could not %s page " UINT64_FORMAT " of index file \"%s\": %m",
					what, page, f->io.label),
			 errdetail("The fault was injected by festival.inject_fault().")));
}

static int
fault_errno(FaultError error)
{
	return error == FAULT_EIO ? EIO : ENOSPC;
}

static void
fault_read(PageIO *io, PageIORequest *reqs, int n)
{
	FaultPageIO *f = (FaultPageIO *) io;
	FaultError	error = f->fs->error;
	int			ok = fault_allow(f->fs, FAULT_READ, n);

	if (ok > 0)
		pageio_read(io->below, reqs, ok);
	if (ok < n)
	{
		if (error == FAULT_CRASH)
			fault_crash();
		/* a read cannot be torn; it fails as the device reports it */
		fault_report(f, "read", reqs[ok].page,
					 error == FAULT_ENOSPC ? ENOSPC : EIO);
	}
}

static void
fault_write(PageIO *io, PageIORequest *reqs, int n)
{
	FaultPageIO *f = (FaultPageIO *) io;
	FaultError	error = f->fs->error;
	int			ok = fault_allow(f->fs, FAULT_WRITE, n);

	if (ok > 0)
		pageio_write(io->below, reqs, ok);
	if (ok == n)
		return;
	if (error == FAULT_CRASH)
		fault_crash();
	if (error == FAULT_TORN)
	{
		uint32		half = io->page_size / 2;
		char	   *torn = pageio_alloc_buffer(io->page_size);

		pageio_read_one(io->below, reqs[ok].page, torn);
		memcpy(torn, reqs[ok].buf, half);
		pageio_write_one(io->below, reqs[ok].page, torn);
		pageio_free_buffer(torn);
	}
	io->stats->write_errors++;
	fault_report(f, "write", reqs[ok].page, fault_errno(error));
}

static void
fault_sync(PageIO *io)
{
	FaultPageIO *f = (FaultPageIO *) io;
	FaultError	error = f->fs->error;

	if (fault_allow(f->fs, FAULT_SYNC, 1) == 1)
	{
		pageio_sync(io->below);
		return;
	}
	if (error == FAULT_CRASH)
		fault_crash();
	io->stats->write_errors++;
	errno = fault_errno(error);
	ereport(ERROR,
			(errcode_for_file_access(),
			 errmsg("could not sync index file \"%s\": %m", io->label),
			 errdetail("The fault was injected by festival.inject_fault().")));
}

/* truncate, npages, close and flush pass through (PageIOOps) */
static const PageIOOps fault_pageio_ops = {
	.read = fault_read,
	.write = fault_write,
	.sync = fault_sync
};

/* The fault layer over below, in the current memory context. */
PageIO *
fault_pageio_create(PageIO *below, FaultState *fs)
{
	FaultPageIO *f = palloc0(sizeof(FaultPageIO));

	pageio_wrap_init(&f->io, &fault_pageio_ops, below);
	f->io.fault = fs;
	f->fs = fs;
	return &f->io;
}

int
fault_check_log(FaultState *fs, FaultTarget target, bool *torn)
{
	Assert(target == FAULT_LOG_WRITE || target == FAULT_LOG_SYNC);
	return fault_check_file(fs, target, torn);
}

/*
 * fault_check_log in the shape of the log's fault hook (log/log.h's
 * LogFaultHook), with the index's FaultState as its argument: every store
 * that keeps a log (FAST, eFIND, the write-through store's journal) arms
 * its log with it.
 */
int
fault_log_hook(void *arg, bool sync, bool *torn)
{
	return fault_check_log((FaultState *) arg,
						   sync ? FAULT_LOG_SYNC : FAULT_LOG_WRITE, torn);
}

/*
 * For a file the index writes itself (the redo log, a tiered index's
 * weights and map): as fault_check_log, for any target of such a file.
 */
int
fault_check_file(FaultState *fs, FaultTarget target, bool *torn)
{
	FaultError	error;

	Assert(target == FAULT_LOG_WRITE || target == FAULT_LOG_SYNC ||
		   target == FAULT_TIER_WRITE || target == FAULT_TIER_MAP_WRITE);
	*torn = false;
	if (fs == NULL)
		return 0;
	error = fs->error;
	if (fault_allow(fs, target, 1) == 1)
		return 0;
	if (error == FAULT_CRASH)
		fault_crash();
	if (error == FAULT_TORN)
	{
		*torn = true;
		return ENOSPC;
	}
	return fault_errno(error);
}
