/*-------------------------------------------------------------------------
 *
 * iotrace.h
 *	  The I/O trace of a run: every page the device read or wrote, in order.
 *
 * festival.begin_run(label, trace => true) gives the run an IoTrace.  The
 * tracing PageIO (trace/tracing.c), which sits directly on the device,
 * appends one record per page the device transfers to the trace it was
 * given when the operation began (tracing_set_target; the SQL layer passes
 * its run's trace down, as it passes the operation's counters); the run
 * writes the records to festival.io_trace in bulk (sql/run.c).  Without a
 * tracing run nothing is allocated and nothing is recorded.  It lives
 * beside the tracing PageIO because it reads page headers of the pages the
 * device transferred.
 *
 * IDENTIFICATION
 *	  src/trace/iotrace.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_IOTRACE_H
#define FEST_IOTRACE_H

#include "festival.h"
#include "device/pageio.h"
#include "nodes/pg_list.h"

typedef struct IoTraceRecord
{
	PageId		page;
	int64		submission;		/* run-relative device submission, 1-based */
	int32		index_slot;		/* position in IoTrace.index_names */
	int16		level;			/* node height, -1 = not a node page */
	int8		tier;			/* TIER_SLOW or TIER_FAST (tier/tier.h); -1 = one device */
	bool		write;
} IoTraceRecord;

typedef struct IoTrace
{
	MemoryContext cxt;			/* the run's context */
	IoTraceRecord *records;		/* not yet stored */
	int			nrecords;
	int			capacity;
	int			committed;		/* records of operations that completed */
	int64		stored;			/* records already written to the table */
	int64		submissions;	/* device submissions so far in the run */
	int64		committed_submissions;
	List	   *index_names;	/* char *, interned */
} IoTrace;

extern IoTrace *iotrace_create(MemoryContext cxt);
extern void iotrace_record(IoTrace *trace, const char *index_name,
						   const PageIORequest *reqs, int n, bool write,
						   int64 submissions);
extern void iotrace_commit(IoTrace *trace);
extern void iotrace_discard_uncommitted(IoTrace *trace);

#endif							/* FEST_IOTRACE_H */
