/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Counters and timers of index work (docs/measurements.md).
 *
 * One FestStats is filled per SQL operation (an insert, a query, a whole
 * build); when the operation ends it is added to the open index's totals
 * and, if a run is active, to the run's totals.  Layers receive a pointer to
 * the operation's FestStats and only ever add to it, so counting never needs
 * a prior call and costs a few additions.
 *
 * The scalar counters are declared once, in FEST_STATS_SCALARS, so the
 * struct, the sums and the JSON report cannot drift apart.  Times are kept in
 * nanoseconds so sums stay exact; reports convert them to seconds.
 *
 * IDENTIFICATION
 *	  src/stats/stats.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_STATS_H
#define FEST_STATS_H

#include "festival.h"

#include <time.h>

#include "utils/jsonb.h"

/*
 * X(name): every scalar counter, in report order.  Names ending in _ns are
 * nanoseconds and are reported as seconds under the name without _ns.
 */
#define FEST_STATS_SCALARS(X) \
	/* operations, by kind */ \
	X(inserts) \
	X(deletes) \
	X(updates) \
	X(queries) \
	X(builds) \
	/* page I/O as the device sees it (meta pages included) */ \
	X(pages_read) \
	X(pages_written) \
	X(read_submissions)		/* device calls; a batch counts once */ \
	X(write_submissions) \
	X(meta_writes) \
	X(syncs) \
	X(write_errors)			/* page writes and syncs the device refused */ \
	/* logical node traffic between structure and node store */ \
	X(nodes_visited)		/* node reads requested by the structure */ \
	X(nodes_written)		/* node writes requested by the structure */ \
	X(nodes_allocated) \
	X(nodes_freed) \
	/* structure work */ \
	X(splits_leaf) \
	X(splits_internal) \
	X(entries_examined)		/* entries tested while choosing or searching */ \
	X(reinserted_entries)	/* orphans reinserted by delete's condense */ \
	X(forced_reinsertions)	/* entries moved by the R*-tree's forced reinsertion */ \
	X(overflow_nodes)		/* FOR-tree: overflow nodes created instead of splits */ \
	X(merge_backs)			/* FOR-tree: overflowed groups split by a merge-back */ \
	/* query work */ \
	X(candidates)			/* filter output */ \
	X(filter_exact)			/* candidates accepted without refinement */ \
	X(refined)				/* candidates checked against exact geometry */ \
	X(results)				/* ids returned */ \
	/* buffering node stores (FAST, eFIND) */ \
	X(buffered_modifications)	/* changes taken into a write buffer */ \
	X(flushes)				/* flushing units (or flush-alls) written */ \
	X(flushed_pages) \
	X(unnecessary_flushed_pages)	/* unmodified pages a flush wrote (FAST) */ \
	X(merges)				/* node reads merging buffered and stored entries */ \
	X(read_buffer_hits) \
	X(read_buffer_misses) \
	X(read_buffer_precached)	/* pages put in the read buffer at a flush (eFIND) */ \
	X(tc_sequential)		/* flush candidates by temporal control of writes */ \
	X(tc_stride) \
	X(tc_both) \
	X(tc_unfiltered) \
	X(cache_hits)			/* general-purpose page cache */ \
	X(cache_misses) \
	X(cache_evictions) \
	X(cache_writebacks) \
	/* redo log */ \
	X(log_records) \
	X(log_bytes) \
	X(log_syncs) \
	X(log_compactions) \
	X(recoveries) \
	X(recovery_records)		/* log records replayed */ \
	/* operations whose CPU time index_cpu_ns lacks (track_cpu_time off) */ \
	X(cpu_untimed_operations) \
	/* times */ \
	X(index_ns)				/* wall time of index work */ \
	X(index_cpu_ns)			/* CPU time of index work (festival.track_cpu_time) */ \
	X(io_ns)				/* wall time inside device calls */ \
	X(io_cpu_ns)			/* CPU time inside device calls (festival.track_io_cpu) */ \
	X(read_ns) \
	X(write_ns) \
	X(sync_ns) \
	X(sync_cpu_ns)			/* CPU time inside the host's syncs of the index file and log: \
							 * left out of index_cpu_ns (always measured) */ \
	X(modelled_io_cpu_ns)	/* CPU time inside a profiled device's reads and writes (the \
							 * host's transfer and the drive model, whose virtual time \
							 * stands for them): left out of index_cpu_ns */ \
	X(split_ns) \
	X(refine_ns)			/* wall time of refinement (fetch + GEOS) */ \
	X(refine_fetch_ns)		/* part of refine_ns spent fetching rows */ \
	X(refine_cpu_ns)		/* CPU time of refinement (festival.track_cpu_time) */ \
	X(flush_ns)				/* wall time of flushes */ \
	X(log_write_ns)			/* wall time writing and syncing the log */ \
	X(recovery_ns)			/* wall time replaying the log */ \
	/* query kinds (queries counts every query, a batch's one by one) */ \
	X(knn_queries) \
	X(batch_queries)		/* festival.query_batch calls */ \
	/* device model (device/sim.c); 0 without a device profile */ \
	X(device_ns)			/* virtual device time */ \
	X(device_erases)		/* simulated flash block erases */ \
	X(ftl_host_writes)		/* FTL pages the host wrote to simulated flash */ \
	X(ftl_flash_writes)		/* FTL pages programmed, GC copies included */ \
	X(ftl_gc_runs)			/* blocks reclaimed by garbage collection */ \
	/* tiers (src/tier): the device transfers above, split by tier */ \
	X(tier_slow_pages_read) \
	X(tier_slow_pages_written) \
	X(tier_slow_submissions) \
	X(tier_slow_device_ns) \
	X(tier_fast_pages_read) \
	X(tier_fast_pages_written) \
	X(tier_fast_submissions) \
	X(tier_fast_device_ns) \
	X(tier_promotions)		/* pages moved slow -> fast */ \
	X(tier_demotions)		/* pages moved fast -> slow */ \
	X(tier_releases)		/* stale source copies zeroed after a migration */

typedef struct FestStats
{
#define FEST_STATS_FIELD(name) int64 name;
	FEST_STATS_SCALARS(FEST_STATS_FIELD)
#undef FEST_STATS_FIELD
	/* node pages read and written, by level (0 = leaves) */
	int64		reads_per_level[FEST_MAX_LEVELS];
	int64		writes_per_level[FEST_MAX_LEVELS];
} FestStats;

/* Wall clock in nanoseconds (monotonic). */
static inline int64
fest_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * INT64CONST(1000000000) + ts.tv_nsec;
}

/* CPU time of the calling thread, nanoseconds. */
static inline int64
fest_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64) ts.tv_sec * INT64CONST(1000000000) + ts.tv_nsec;
}

extern void fest_stats_reset(FestStats *stats);
extern void fest_stats_add(FestStats *into, const FestStats *from);
extern void fest_stats_drain(FestStats *from, FestStats *into, FestStats *also);
extern Jsonb *fest_stats_to_jsonb(const FestStats *stats);
extern void fest_stats_push_jsonb(const FestStats *stats,
								  JsonbParseState **state);

#endif							/* FEST_STATS_H */
