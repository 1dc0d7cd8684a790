/*-------------------------------------------------------------------------
 *
 * tracing.c
 *	  A PageIO on the device that records each page it transfers when the
 *	  run in progress traces (festival.begin_run(label, trace => true)).
 *
 * It sits directly on the device, below any page cache, so the trace shows
 * exactly the pages the device read and wrote (the run's pages_read and
 * pages_written), with their order, node level (from the page header) and
 * device submission (from the device's submission counters around the
 * call).  The trace is the one the SQL layer hands down when an operation
 * begins (tracing_set_target), as it hands down the operation's counters:
 * the I/O layer never looks up at the run.  Hooking here rather than in the node stores means every store,
 * cache and engine is traced without knowing it.
 *
 * Without a tracing run a call costs one pointer test before it is passed
 * on: no allocation, no copy, nothing recorded.
 *
 * IDENTIFICATION
 *	  src/buffer/tracing.c
 *
 *-------------------------------------------------------------------------
 */
#include "buffer/tracing.h"
#include "tier/tier.h"

typedef struct TracingPageIO
{
	PageIO		io;				/* must be first */
	PageIO	   *below;
	const char *index_name;		/* owned by the open index */
	IoTrace    *target;			/* the run's trace, or NULL: not tracing */
	TierState  *tiers;			/* on a tier router: where each page went */
} TracingPageIO;

/* Each page's tier after the transfer, or NULL for a one-device index. */
static int8 *
page_tiers(TracingPageIO *t, const PageIORequest *reqs, int n)
{
	int8	   *tiers;

	if (t->tiers == NULL)
		return NULL;
	tiers = palloc(n);
	for (int i = 0; i < n; i++)
		tiers[i] = (int8) tier_page_tier(t->tiers, reqs[i].page);
	return tiers;
}

static void
tracing_read(PageIO *io, PageIORequest *reqs, int n)
{
	TracingPageIO *t = (TracingPageIO *) io;
	IoTrace    *trace = t->target;
	int64		before;
	int8	   *tiers;

	t->below->time_cpu = io->time_cpu;
	if (trace == NULL)
	{
		pageio_read(t->below, reqs, n);
		return;
	}
	before = io->stats->read_submissions;
	pageio_read(t->below, reqs, n);
	tiers = page_tiers(t, reqs, n);
	iotrace_record(trace, t->index_name, reqs, n, false,
				   io->stats->read_submissions - before, tiers);
	if (tiers != NULL)
		pfree(tiers);
}

static void
tracing_write(PageIO *io, PageIORequest *reqs, int n)
{
	TracingPageIO *t = (TracingPageIO *) io;
	IoTrace    *trace = t->target;
	int64		before;
	int8	   *tiers;

	t->below->time_cpu = io->time_cpu;
	if (trace == NULL)
	{
		pageio_write(t->below, reqs, n);
		return;
	}
	before = io->stats->write_submissions;
	pageio_write(t->below, reqs, n);
	tiers = page_tiers(t, reqs, n);
	iotrace_record(trace, t->index_name, reqs, n, true,
				   io->stats->write_submissions - before, tiers);
	if (tiers != NULL)
		pfree(tiers);
}

static void
tracing_sync(PageIO *io)
{
	TracingPageIO *t = (TracingPageIO *) io;

	t->below->time_cpu = io->time_cpu;
	pageio_sync(t->below);
}

static void
tracing_truncate(PageIO *io, uint64 npages)
{
	TracingPageIO *t = (TracingPageIO *) io;

	t->below->ops->truncate(t->below, npages);
}

static uint64
tracing_npages(PageIO *io)
{
	TracingPageIO *t = (TracingPageIO *) io;

	return t->below->ops->npages(t->below);
}

static void
tracing_close(PageIO *io)
{
	TracingPageIO *t = (TracingPageIO *) io;

	t->below->ops->close(t->below);
}

static const PageIOOps tracing_pageio_ops = {
	.read = tracing_read,
	.write = tracing_write,
	.sync = tracing_sync,
	.truncate = tracing_truncate,
	.npages = tracing_npages,
	.close = tracing_close
};

/*
 * Wrap the device's PageIO; allocated in the current memory context (the
 * open index's).  index_name must live as long as the PageIO; target (NULL:
 * record nothing) until the next tracing_set_target.
 */
PageIO *
tracing_pageio_wrap(PageIO *device, const char *index_name, IoTrace *target)
{
	TracingPageIO *t = palloc0(sizeof(TracingPageIO));

	pageio_wrap_init(&t->io, &tracing_pageio_ops, device);
	t->below = device;
	t->index_name = index_name;
	t->target = target;
	return &t->io;
}

/*
 * Point a tracing PageIO at the trace its next page transfers go to (NULL:
 * none).  The caller clears it before the trace is freed.
 */
void
tracing_set_target(PageIO *tracing, IoTrace *target)
{
	TracingPageIO *t = (TracingPageIO *) tracing;

	Assert(tracing->ops == &tracing_pageio_ops);
	t->target = target;
}

/* The tracing PageIO sits on a tier router: record each page's tier. */
void
tracing_set_tiers(PageIO *tracing, TierState *tiers)
{
	TracingPageIO *t = (TracingPageIO *) tracing;

	Assert(tracing->ops == &tracing_pageio_ops);
	t->tiers = tiers;
}
