/*-------------------------------------------------------------------------
 *
 * iotrace.c
 *	  Recording page accesses of a traced run in memory.
 *
 * Records are appended to one growing array in the run's memory context.
 * An operation's records become part of the run only when the operation
 * completes (iotrace_commit, called where its counters are added to the
 * run), so the trace always matches the run's pages_read + pages_written:
 * the records of an operation an ERROR interrupted are dropped with its
 * counters.  Storing them in festival.io_trace is the run's business.
 *
 * IDENTIFICATION
 *	  src/trace/iotrace.c
 *
 *-------------------------------------------------------------------------
 */
#include "trace/iotrace.h"

#include "format/page.h"
#include "utils/memutils.h"

IoTrace *
iotrace_create(MemoryContext cxt)
{
	IoTrace    *trace = MemoryContextAllocZero(cxt, sizeof(IoTrace));

	trace->cxt = cxt;
	trace->capacity = 1024;
	trace->records = MemoryContextAlloc(cxt, trace->capacity * sizeof(IoTraceRecord));
	return trace;
}

/* Position of index_name in the trace's list of names, added if new. */
static int32
index_slot(IoTrace *trace, const char *index_name)
{
	ListCell   *lc;
	MemoryContext old;

	foreach(lc, trace->index_names)
		if (strcmp((const char *) lfirst(lc), index_name) == 0)
			return foreach_current_index(lc);
	old = MemoryContextSwitchTo(trace->cxt);
	trace->index_names = lappend(trace->index_names, pstrdup(index_name));
	MemoryContextSwitchTo(old);
	return list_length(trace->index_names) - 1;
}

/* The height of a node page image, -1 for meta and free pages. */
static int16
page_level(const char *image)
{
	const FestPageHeader *h = FestPageGetHeader(image);

	if (h->magic != FEST_PAGE_MAGIC || h->kind != FEST_PAGE_NODE)
		return -1;
	return (int16) h->level;
}

/*
 * Record n pages the device just transferred with `submissions` device
 * submissions, each on the tier its request names (PAGEIO_NO_TIER: one
 * device): a sync engine submits each page alone (submissions == n), a
 * batched engine the whole array at once (1); the pages are spread evenly
 * over the submissions in between.
 */
void
iotrace_record(IoTrace *trace, const char *index_name,
			   const PageIORequest *reqs, int n, bool write, int64 submissions)
{
	int32		slot = index_slot(trace, index_name);

	if (trace->nrecords + n > trace->capacity)
	{
		int			capacity = trace->capacity;

		while (capacity < trace->nrecords + n)
			capacity *= 2;
		trace->records = repalloc_huge(trace->records, (Size) capacity * sizeof(IoTraceRecord));
		trace->capacity = capacity;
	}
	for (int i = 0; i < n; i++)
	{
		IoTraceRecord *r = &trace->records[trace->nrecords++];

		r->page = reqs[i].page;
		r->submission = submissions > 0
			? trace->submissions + 1 + (int64) i * submissions / n
			: trace->submissions;
		r->index_slot = slot;
		r->level = page_level(reqs[i].buf);
		r->tier = reqs[i].tier;
		r->write = write;
	}
	trace->submissions += submissions;
}

/* The current operation completed: its records belong to the run. */
void
iotrace_commit(IoTrace *trace)
{
	trace->committed = trace->nrecords;
	trace->committed_submissions = trace->submissions;
}

/* Drop what an interrupted operation recorded.  Never raises an error. */
void
iotrace_discard_uncommitted(IoTrace *trace)
{
	trace->nrecords = trace->committed;
	trace->submissions = trace->committed_submissions;
}
