/*-------------------------------------------------------------------------
 *
 * buffered.h
 *	  What FAST and eFIND share: a write buffer of node modifications in
 *	  front of the index file, kept durable by a redo log.
 *
 * Both frameworks (Sarwat et al. 2013; Carniel et al. 2017, 2019) keep the
 * modifications of nodes in memory, keyed by page, with a status:
 *	NEW	a node created in the buffer (its whole content is buffered),
 *	MOD	a node on disk whose entries were changed,
 *	DEL	a node deleted (its page is on the free list).
 * They differ in how a node's modifications are kept (FAST: a list of the
 * results of changes by position; eFIND: a red-black tree with the latest
 * version of each changed entry), in how the stored and buffered versions
 * are combined on a read, and in how flushing units are chosen.  Those are
 * the BufferedOps of each framework; everything else is here:
 *
 *	- learning what changed: a node written is compared with the version
 *	  the store last returned for that page (structures never talk to the
 *	  buffers, DESIGN.md section 5);
 *	- byte accounting against the write buffer's capacity; the capacity is
 *	  enforced when a modification commits, never in the middle of one, so
 *	  a flush never writes half a split;
 *	- the free list: a released page becomes DEL with a link to the next
 *	  free page, and is written as a free page when flushed;
 *	- the log: each modification's records form a group closed at commit,
 *	  meta changes included (LOG_META), so the meta page is written only
 *	  when the index is flushed or closed; a flush logs LOG_FLUSH_BEGIN
 *	  with the checksums of the images it is about to write, writes them,
 *	  syncs the index file and then logs LOG_FLUSH;
 *	- restart: opening an index whose meta page is not clean replays its
 *	  log (LOG_FLUSH drops the pages written since their records, and so
 *	  does LOG_FLUSH_BEGIN for each page whose stored checksum matches);
 *	- compaction (eFIND algorithm 7): when the log outgrows log_size it is
 *	  rewritten with only the records that rebuild the current buffer, and
 *	  if that is still too large, units are flushed first.
 *
 * Logical time: every modification taken into the buffer advances a
 * counter; timestamps and ages are in these ticks, so flushing decisions
 * are reproducible run after run.
 *
 * IDENTIFICATION
 *	  src/nodestore/buffered.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_BUFFERED_H
#define FEST_BUFFERED_H

#include "nodestore/framework.h"
#include "nodestore/nodestore.h"
#include "options/options.h"
#include "log/log.h"
#include "nodes/pg_list.h"
#include "utils/hsearch.h"

typedef enum BufStatus
{
	BUF_NEW = 1,
	BUF_MOD = 2,
	BUF_DEL = 3
} BufStatus;

/* Bytes a buffered page costs besides its modifications. */
#define BUF_PAGE_OVERHEAD 48

typedef struct BufPage
{
	PageId		page;			/* hash key */
	BufStatus	status;
	uint16		level;
	uint32		mod_count;		/* modifications since it entered the buffer */
	uint64		last_mod;		/* logical time of its last modification */
	PageId		link;			/* DEL: the next page of the free list */
	int64		bytes;			/* buffer bytes it occupies */
	void	   *mods;			/* the framework's record of its changes */
} BufPage;

typedef struct BufferedStore BufferedStore;

typedef struct BufferedOps
{
	const char *name;
	LogWriter	log_writer;		/* whose payloads its log holds (log/log.h) */

	/*
	 * Take the new version of a node into bp.  old is the version the store
	 * last returned for the page, or NULL when the node is new (kind NEW) or
	 * rewritten wholesale (REPLACE).  Records the modifications, keeps
	 * bp->bytes up to date and appends the log records.
	 */
	void		(*absorb) (BufferedStore *bs, BufPage *bp, const TreeNode *old,
						   const TreeNode *node, NodeWriteKind kind);

	/* The latest version of a NEW (stored NULL) or MOD page. */
	TreeNode   *(*materialize) (BufferedStore *bs, BufPage *bp, const TreeNode *stored);

	/*
	 * The stored version of a page, verified; on failure NULL with *check
	 * set.  eFIND goes through its read buffer.
	 */
	TreeNode   *(*read_stored) (BufferedStore *bs, PageId page, FestPageCheck *check);

	/* Apply one replayed LOG_NEW or LOG_MOD record to bp. */
	void		(*replay) (BufferedStore *bs, BufPage *bp, const LogRecord *rec);

	/* Append the log records that rebuild bp (compaction). */
	void		(*emit) (BufferedStore *bs, BufPage *bp);

	/* The pages of the next flushing unit, chosen by the policy (PageIds). */
	List	   *(*choose_unit) (BufferedStore *bs);

	/* A page was written by a flush with this content (NULL: freed). */
	void		(*flushed) (BufferedStore *bs, PageId page, const TreeNode *written);

	/* bp leaves the buffer or changes status: release its modifications. */
	void		(*forget) (BufferedStore *bs, BufPage *bp);

	/* bp has just become DEL (its page was freed). */
	void		(*deleted) (BufferedStore *bs, BufPage *bp);

	/*
	 * The file was emptied (a rebuild) and the buffer is empty: forget
	 * everything kept by page id (FAST's units, eFIND's read buffer and
	 * queues), which describes pages that no longer exist.
	 */
	void		(*reset) (BufferedStore *bs);

	/*
	 * Optional: set up the framework's state (BufferedStore.fw) once the
	 * store exists, before its log is replayed (FAST's unit map, eFIND's
	 * queues and read buffer, which live in the store's context).
	 */
	void		(*setup) (BufferedStore *bs);

	/* Framework statistics for festival.stats() (gauges). */
	void		(*describe) (BufferedStore *bs, JsonbParseState **state);

	/*
	 * Does read_stored have page without the device (eFIND's read buffer)?
	 * Asked before reading pages ahead in a batch, without touching any
	 * replacement order.  Optional: NULL means never.
	 */
	bool		(*stored_in_memory) (BufferedStore *bs, PageId page);
} BufferedOps;

/* One page of a LOG_FLUSH_BEGIN record. */
typedef struct FlushIntentItem
{
	PageId		page;
	uint32		checksum;		/* the page header's checksum field */
	uint32		pad;
} FlushIntentItem;

StaticAssertDecl(sizeof(FlushIntentItem) == 16,
				 "FlushIntentItem's layout is documented in log/log.h (FLUSH_BEGIN)");

/* Settings every buffering store takes from its options. */
typedef struct BufferedConfig
{
	int64		buffer_size;	/* write buffer capacity, bytes */
	int			flushing_unit;	/* pages per flushing unit */
	int64		log_size;		/* compaction threshold; 0 disables the log */
} BufferedConfig;

struct BufferedStore
{
	NodeStore	ns;				/* must be first */
	const BufferedOps *ops;
	MemoryContext cxt;			/* the store's memory */
	MemoryContext op_cxt;		/* versions returned during one modification */
	HTAB	   *table;			/* PageId -> BufPage */
	HTAB	   *returned;		/* PageId -> TreeNode * (in op_cxt) */
	BufferedConfig cfg;
	int64		used;			/* bytes in the write buffer */
	uint64		clock;			/* logical time */
	FestLog    *log;			/* NULL when log_size is 0 */
	bool		op_logged;		/* records appended in this modification */
	char		logged_meta[128];	/* LoggedMeta as last logged (or read) */
	bool		replaying;		/* restart in progress: do not log */
	uint64		torn_pages;		/* pages replay found torn by a flush */
	bool		log_lost;		/* opened unclean, its log file missing */
	bool		flushing;		/* a unit is being written: stored versions
								 * are read to merge, not at a caller's
								 * request (eFIND's read queue ignores them) */
	uint64		recovered_groups;	/* modifications replayed at open */
	PagePrefetch prefetch;		/* stored images read ahead in one batch */
	void	   *fw;				/* the framework's own state */
};

/* buffered.c */
extern BufPage *buffered_enter_page(BufferedStore *bs, PageId page, uint16 level);
extern void buffered_remove_page(BufferedStore *bs, BufPage *bp);
extern void buffered_meta_logged_now(BufferedStore *bs);
/* buffered_recovery.c: replay the log of an index not closed cleanly */
extern void buffered_recover(BufferedStore *bs);
extern NodeStore *buffered_store_create(const BufferedOps *ops,
										const BufferedConfig *cfg, void *fw,
										const NodeStoreArgs *args);
extern BufPage *buffered_lookup(BufferedStore *bs, PageId page);
extern void buffered_account(BufferedStore *bs, BufPage *bp, int64 new_bytes);
extern void buffered_set_status(BufPage *bp, BufStatus to);
extern TreeNode *buffered_read_disk(BufferedStore *bs, PageId page,
									FestPageCheck *check);
extern void buffered_log(BufferedStore *bs, LogRecordType type, const BufPage *bp,
						 uint32 count, const void *payload, uint32 len);
extern int	buffered_oldest_first(const void *a, const void *b);
extern List *buffered_pages(BufferedStore *bs);
extern void buffered_write_unit(BufferedStore *bs, List *pages);
extern void buffered_entry_mbr(const BufferedStore *bs, const void *entry,
							   uint16 level, Mbr *box);
extern void buffered_describe(BufferedStore *bs, JsonbParseState **state);

extern const NodeStoreOps buffered_store_ops;

/* framework.c */
/*
 * The options every buffering framework declares, for its own table and
 * typed struct (fast.c, efind.c): one declaration, so FAST and eFIND
 * cannot drift apart.
 */
#define BUFFERED_BUFFER_SIZE_OPTION(stype, field, default_bytes) \
	{ \
		.name = "buffer_size", .type = OPT_BYTES, .default_number = (default_bytes), \
		.min = 4096, .max = 1073741824, \
		.description = "Write buffer capacity in bytes (eFIND: read and write buffers together).", \
		.offset = offsetof(stype, field) \
	}
#define BUFFERED_FLUSHING_UNIT_OPTION(stype, field) \
	{ \
		.name = "flushing_unit", .type = OPT_INT, .default_number = 5, \
		.min = 1, .max = 256, \
		.description = "Pages per flushing unit, written in one batch.", \
		.offset = offsetof(stype, field) \
	}
#define BUFFERED_LOG_SIZE_OPTION(stype, field) \
	{ \
		.name = "log_size", .type = OPT_BYTES, .default_number = 10485760, \
		.min = 0, .max = 1073741824, \
		.description = "Redo log size in bytes that triggers compaction; 0 disables the log (no recovery after a crash).", \
		.offset = offsetof(stype, field) \
	}

/* fast.c, efind.c, fortree_buffer.c: their tables and checks (FrameworkDef) */
extern const OptionSpec fast_option_table[];
extern const OptionSpec efind_option_table[];
extern const OptionSpec fortree_buffer_option_table[];
extern int64 fast_validate(const FestConfig *config);
extern int64 efind_validate(const FestConfig *config);
extern int64 fortree_buffer_validate(const FestConfig *config);

/*
 * fast.c: FAST's record of the changes of a buffered page (a list of
 * changes by position, the whole node when NEW), which the FOR-tree's
 * buffer keeps too (Jin et al. 2015 §4: a hash of node updates as FAST's);
 * the BufferedOps of both are these plus their units.
 */
extern void fast_changes_absorb(BufferedStore *bs, BufPage *bp, const TreeNode *old,
								const TreeNode *node, NodeWriteKind kind);
extern TreeNode *fast_changes_materialize(BufferedStore *bs, BufPage *bp,
										  const TreeNode *stored);
extern TreeNode *fast_changes_read_stored(BufferedStore *bs, PageId page,
										  FestPageCheck *check);
extern void fast_changes_replay(BufferedStore *bs, BufPage *bp, const LogRecord *rec);
extern void fast_changes_emit(BufferedStore *bs, BufPage *bp);
extern void fast_changes_forget(BufferedStore *bs, BufPage *bp);

/* fast.c, efind.c, fortree_buffer.c */
extern NodeStore *fast_store_create(const NodeStoreArgs *args);
extern NodeStore *efind_store_create(const NodeStoreArgs *args);
extern NodeStore *fortree_buffer_store_create(const NodeStoreArgs *args);

#endif							/* FEST_BUFFERED_H */
