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
 * call) and the tier that served it (PageIORequest.tier, which the tier
 * router sets).  The trace is the one the SQL layer hands down when an operation
 * begins (tracing_set_target), as it hands down the operation's counters:
 * the I/O layer never looks up at the run.  Hooking here rather than in the node stores means every store,
 * cache and engine is traced without knowing it.
 *
 * Without a tracing run a call costs one pointer test after it is passed
 * on: no allocation, no copy, nothing recorded.
 *
 * IDENTIFICATION
 *	  src/trace/tracing.c
 *
 *-------------------------------------------------------------------------
 */
#include "trace/tracing.h"

typedef struct TracingPageIO
{
	PageIO		io;				/* must be first */
	const char *index_name;		/* owned by the open index */
	IoTrace    *target;			/* the run's trace, or NULL: not tracing */
} TracingPageIO;

static void
tracing_read(PageIO *io, PageIORequest *reqs, int n)
{
	IoTrace    *trace = ((TracingPageIO *) io)->target;
	int64		before = io->stats->read_submissions;

	pageio_read(io->below, reqs, n);
	if (trace != NULL)
		iotrace_record(trace, ((TracingPageIO *) io)->index_name, reqs, n,
					   false, io->stats->read_submissions - before);
}

static void
tracing_write(PageIO *io, PageIORequest *reqs, int n)
{
	IoTrace    *trace = ((TracingPageIO *) io)->target;
	int64		before = io->stats->write_submissions;

	pageio_write(io->below, reqs, n);
	if (trace != NULL)
		iotrace_record(trace, ((TracingPageIO *) io)->index_name, reqs, n,
					   true, io->stats->write_submissions - before);
}

/* the other operations pass through (PageIOOps) */
static const PageIOOps tracing_pageio_ops = {
	.read = tracing_read,
	.write = tracing_write
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
