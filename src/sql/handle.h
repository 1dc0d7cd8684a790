/*-------------------------------------------------------------------------
 *
 * handle.h
 *	  Open indices of this session and their operations (the catalog,
 *	  runs and transaction callbacks have their own headers).
 *
 * An index is opened on first use in a session and stays open until
 * festival.close(), festival.drop_index() or the end of the session; a
 * session that may only read it releases it at the end of each transaction
 * (ix_release_readers).  Opening waits up to festival.open_timeout for
 * another holder.  Open
 * means: the catalog row is loaded, a session-level advisory lock and an
 * flock() on the file are held (so another session gets a clear error
 * naming the holder), the meta page is read and the node store is ready.
 *
 * Every SQL operation on an index runs between ix_begin_op() and
 * ix_end_op().  While it runs the index is marked busy.  If an ERROR
 * escapes, the (sub)transaction-abort callback marks the index as needing
 * a reload (only operations begun inside the aborted (sub)transaction: an
 * outer operation may still be using its index).  Nothing is freed during
 * the abort; the next use discards the whole in-memory state and reopens
 * the index from disk.  With the write-through store nothing reaches the
 * file before the operation commits, so an operation interrupted before
 * its write-out leaves the file consistent, and the reopen (or the end of
 * the session) marks it clean without a warning.
 *
 * Everything an open index owns lives in its own MemoryContext; per
 * operation work happens in a child context reset at the end of each
 * operation.
 *
 * IDENTIFICATION
 *	  src/sql/handle.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_HANDLE_H
#define FEST_HANDLE_H

#include "festival.h"
#include "trace/iotrace.h"
#include "device/device.h"
#include "nodestore/nodestore.h"
#include "format/meta.h"
#include "index/structure.h"
#include "sql/catalog.h"
#include "stats/progress.h"
#include "stats/stats.h"

#include "fmgr.h"
#include "storage/lock.h"

/* The operation in progress on an open index (OpenIndex.op). */
typedef struct IndexOp
{
	MemoryContext cxt;			/* reset after every operation */
	FestStats	stats;			/* the counters of the current operation */
	bool		busy;			/* an operation is running */
	bool		committing;		/* pages are being written */
	int			nest_level;		/* transaction nesting level it began at */
	int64		start_ns;
	int64		start_cpu_ns;
	int64		start_sync_cpu_ns;	/* op stats' sync_cpu_ns when it began */
	int64		start_modelled_io_cpu_ns;	/* and its modelled_io_cpu_ns */
	bool		track_cpu;		/* festival.track_cpu_time when it began */
	bool		time_io_cpu;	/* festival.track_io_cpu when it began: every
								 * layer of the chains reads it
								 * (PageIO.time_cpu) */
	Progress	progress;		/* of a long operation (ix_progress_begin),
								 * handed down as sidx.progress */
} IndexOp;

/*
 * What a reload after an ERROR carries over from the handle it replaces
 * (OpenIndex.reload, handle_failure.c).
 */
typedef struct ReloadInfo
{
	bool		consistent;		/* the failed operation left the file as it was */
	bool		damaged;		/* it failed while overwriting committed pages */
	uint64		entry_count;	/* entries as of the last commit */
	bool		entries_valid;
} ReloadInfo;

typedef struct OpenIndex
{
	char		name[FEST_NAME_MAXLEN + 1];
	MemoryContext cxt;			/* owns everything below */

	/* Unchanging while it is open: its catalog row and what that says. */
	IndexCatalog cat;
	const StructureOps *structure;
	FestConfig *config;			/* complete, as stored (describe) */
	IndexOptions opts;			/* typed, filled by handle_configure */
	char	   *path;			/* index file */
	char	   *postgis_schema; /* quoted, for SQL text */
	TimestampTz opened_at;
	LOCKTAG		locktag;
	bool		lock_held;

	/* The page I/O chain (tier/tier.h) and the node store over it. */
	DeviceState *devstate;		/* memory pages, simulated drive (device/open.c) */
	DeviceState *fast_devstate; /* the fast device's, with a fast device */
	struct TierState *tier;		/* with a fast device (tier/tier.h), else NULL */
	PageIO	   *io;				/* top of the page I/O chain */
	PageIO	   *tracing;		/* its tracing layer (tracing_set_target) */
	NodeStore  *ns;
	StructIndex sidx;
	FestMeta	meta;

	/* This session's use of it. */
	bool		keep_open;		/* a user who may change it used it: the
								 * handle stays open until close or session
								 * end; otherwise it is released at the end
								 * of each transaction (ix_release_readers) */
	bool		open_complete;	/* opened (or created) successfully */
	bool		exit_flush_tried;	/* the session-end hook began its flush */
	FestStats	totals;			/* since the index was opened */

	/* The operation in progress. */
	IndexOp		op;

	/*
	 * After an ERROR interrupted an operation the next use reloads the index
	 * from disk (needs_reload); reload holds what that reload is told,
	 * entry_count and entries_valid as of the last commit.
	 */
	bool		needs_reload;
	ReloadInfo	reload;
} OpenIndex;

/* What an operation needs to be allowed to do. */
typedef enum IndexAccess
{
	IX_READ,					/* owner, or SELECT on the source table */
	IX_MODIFY					/* owner */
} IndexAccess;

/* handle_*.c (handle_internal.h lists which does what) */
extern OpenIndex *ix_begin_op(const char *name, IndexAccess access);
extern void ix_require_writable(OpenIndex *ix);
extern void ix_require_layout(OpenIndex *ix);
extern void ix_require_built(OpenIndex *ix);
extern void ix_finish_build(OpenIndex *ix);
extern void ix_commit(OpenIndex *ix);
extern void ix_flush(OpenIndex *ix);
extern void ix_end_op(OpenIndex *ix);
extern OpenIndex *ix_lookup_open(const char *name);
extern char *ix_name_arg(FunctionCallInfo fcinfo, int argno, char *buf);
extern OpenIndex *ix_create_file(IndexCatalog *cat,
									const StructureOps *structure,
									FestConfig *config);
extern void ix_close(OpenIndex *ix);
extern void ix_close_for_drop(OpenIndex *ix);
extern void ix_lock_until_commit(int64 index_id, const char *name,
									LOCKTAG *tag);
extern void ix_reset_for_build(OpenIndex *ix);
extern void ix_mark_failed(OpenIndex *ix);
extern void ix_discard(OpenIndex *ix);
extern void ix_settle_failed(OpenIndex *ix);
extern List *ix_all_open(void);
extern void ix_release_readers(void);
extern void ix_trace_all(IoTrace *trace);
extern char *ix_fast_file(const IndexCatalog *cat);

/* settings (GUCs, registered in festival.c) */
extern int	fest_max_index_memory_kb;
extern char *fest_data_directory_setting;
extern int	fest_progress_interval;
extern bool fest_track_io_cpu;
extern bool fest_passthrough_layers;
extern bool fest_track_cpu_time;
extern int	fest_build_commit_rows;
extern int	fest_knn_batch;
extern bool fest_generic_query_batch;
extern int	fest_knn_speculative;
extern int	fest_window_search;
extern int	fest_queue_depth;

/* festival.window_search's values */
typedef enum WindowSearch
{
	WINDOW_SEARCH_DEPTH_FIRST,	/* one node at a time (traverse.c) */
	WINDOW_SEARCH_LEVEL			/* a level at a time (level_search.c) */
} WindowSearch;

#endif							/* FEST_HANDLE_H */
