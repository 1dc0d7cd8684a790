/*-------------------------------------------------------------------------
 *
 * nodestore.h
 *	  The NodeStore interface: how index structures read and write nodes.
 *
 * Structures (src/index) are written once against this interface and never
 * learn what is below it (DESIGN.md section 5, composition).  A
 * NodeStore turns nodes into page images and page images into device I/O;
 * the write-through store (nodestore/writethrough.c) is the default, FAST, eFIND and
 * the FOR-tree's buffer are other NodeStores with write buffers and a redo
 * log.
 *
 * Contract:
 *	- ns_read returns a private copy of the latest version of a node,
 *	  allocated in the caller's memory context; the caller may change it and
 *	  hand it back with ns_write.
 *	- ns_read_to_change reads a node its caller is about to change, for
 *	  callers that promise more: they change it only to write it back with
 *	  ns_write before the commit (or an ERROR, which discards the
 *	  modification), append at most one entry beyond the entries read before
 *	  each such write, read no other copy of the page meanwhile, and never
 *	  free the node's entries (the operation's memory context takes the node).
 *	  A store may then hand out a node whose entries are its own image of
 *	  the page (the write-through store, for the pages a modification has
 *	  written); the node's capacity then ends at the page's.
 *	- ns_write records the new version of a node.  The kind tells buffering
 *	  stores whether entries changed in place (UPDATE), whether the node is
 *	  new (NEW), or whether it was rewritten wholesale (REPLACE: a split),
 *	  which eFIND treats as DEL + NEW.
 *	- ns_alloc / ns_release manage pages; the meta data (root, height,
 *	  allocation state) lives in the FestMeta the store was given.
 *	- ns_commit ends one logical modification (one insert, one delete...).
 *	  The write-through store writes the modification's pages at this point,
 *	  so an ERROR before the commit leaves the file as it was.
 *	- ns_flush writes everything buffered, syncs, and marks the file clean.
 *
 * TreeNode entries are fixed-size records whose size depends only on the level;
 * the structure describes them with NodeOps.
 *
 * IDENTIFICATION
 *	  src/nodestore/nodestore.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_NODESTORE_H
#define FEST_NODESTORE_H

#include "festival.h"
#include "device/pageio.h"
#include "format/meta.h"
#include "format/page.h"
#include "geom/mbr.h"
#include "nodes/pg_list.h"
#include "stats/stats.h"
#include "utils/jsonb.h"

/* A node in memory: a header and a packed array of entries. */
typedef struct TreeNode
{
	PageId		page;
	uint16		level;			/* 0 = leaf */
	uint16		flags;			/* owned by the structure */
	uint32		nentries;
	uint32		capacity;		/* entries the array can hold (page + 1) */
	uint32		entry_size;
	uint64		link;			/* owned by the structure */
	char	   *entries;
} TreeNode;

#define NodeEntry(node, i)	((void *) ((node)->entries + (size_t) (i) * (node)->entry_size))

/* One buffered page, as festival.buffer() shows it. */
typedef struct BufferedPageInfo
{
	PageId		page;
	const char *status;			/* "new", "mod", "del" */
	uint16		level;
	uint32		modifications;
	uint64		last_modified;	/* logical time */
	int64		bytes;
} BufferedPageInfo;

/* What a structure tells the node stores about its entries. */
typedef struct NodeOps
{
	const char *structure;
	uint32		leaf_entry_size;
	uint32		internal_entry_size;
	/*
	 * Order of entries by identity: eFIND keeps the latest version of each
	 * entry keyed by it, and returns nodes in this order.  Entries with
	 * equal identity are told apart by their rank among equals.
	 */
	int			(*compare_identity) (const void *a, const void *b, uint16 level);
	/* The rectangle an entry covers (eFIND's area-based flushing policies). */
	void		(*entry_mbr) (const void *entry, uint16 level, Mbr *box);
	/* What an entry points to: an object id (leaf) or a child page. */
	int64		(*entry_ref) (const void *entry, uint16 level);
	/*
	 * Optional: page header flags every node of a level carries, set when
	 * any store writes the page (ns_serialize), since FAST and eFIND keep a
	 * node as its entries and would lose flags set on it: the grid file's
	 * FEST_NODE_RESIDENT on its root pages.  NULL: none.
	 */
	uint16		(*level_flags) (uint16 level);
	/*
	 * The structure keeps a node's entries in an order (an insertion or a
	 * removal moves every later entry one place): FAST records a change
	 * of one entry more or less as one INSERT or DELETE item
	 * (nodestore/fast.c).  False (a node is a set, as the R-tree's, which
	 * appends and fills a hole with its last entry): changes by position
	 * only.
	 */
	bool		ordered_entries;
	/*
	 * Every entry, at every level, starts with its rectangle as an Mbr
	 * (what entry_mbr returns): loops over many entries (the kNN search,
	 * index/knn.c) read it in place instead of calling entry_mbr.
	 */
	bool		mbr_first;
} NodeOps;

typedef enum NodeWriteKind
{
	NS_WRITE_UPDATE,			/* entries changed in place */
	NS_WRITE_NEW,				/* a node on a freshly allocated page */
	NS_WRITE_REPLACE			/* node rewritten wholesale (split) */
} NodeWriteKind;

/*
 * The meta fields a redo log carries in its LOG_META records (FAST and
 * eFIND's log, the write-through store's journal), little-endian:
 *
 *	offset size field
 *	     0    8 root
 *	     8    8 page_count
 *	    16    8 free_head
 *	    24    8 free_count
 *	    32    8 entry_count
 *	    40    4 height
 *	    44    4 flags		FestMeta flags; FEST_META_CLEAN is never
 *							taken from a record
 *	    48    4 srid
 *	    52    4 reserved	zero
 *	    56   64 structure_state
 */
typedef struct LoggedMeta
{
	uint64		root;
	uint64		page_count;
	uint64		free_head;
	uint64		free_count;
	uint64		entry_count;
	uint32		height;
	uint32		flags;
	int32		srid;
	uint32		reserved;
	uint8		structure_state[FEST_STRUCTURE_STATE_SIZE];
} LoggedMeta;

StaticAssertDecl(sizeof(LoggedMeta) == 56 + FEST_STRUCTURE_STATE_SIZE,
				 "LoggedMeta's layout is documented above");

typedef struct NodeStore NodeStore;


/* The root as ns_read_root hands it out. */
typedef struct RootRead
{
	TreeNode   *node;
	bool		shared;			/* the store's copy: neither change nor free it;
								 * valid until the next call into the store */
	bool		has_bounds;		/* bounds is the union of the entries' rectangles
								 * (false without entries, or not known) */
	Mbr			bounds;
} RootRead;

typedef struct NodeStoreOps
{
	TreeNode	   *(*read) (NodeStore *ns, PageId page);
	/* ns_read_to_change (see the contract above); optional: NULL reads */
	TreeNode	   *(*read_to_change) (NodeStore *ns, PageId page);
	/* like read, but reports a damaged page instead of raising an error */
	FestPageCheck (*read_checked) (NodeStore *ns, PageId page, TreeNode **node);
	void		(*write) (NodeStore *ns, const TreeNode *node, NodeWriteKind kind);
	PageId		(*alloc) (NodeStore *ns, uint16 level);
	void		(*release) (NodeStore *ns, PageId page);
	void		(*commit) (NodeStore *ns);
	void		(*flush) (NodeStore *ns);
	/* drop all page images and start an empty file (build's rebuild) */
	void		(*reset) (NodeStore *ns);
	/* release memory and descriptors below; never raises an error */
	void		(*close) (NodeStore *ns);
	/* the next page of the free list after page (check) */
	FestPageCheck (*read_free_link) (NodeStore *ns, PageId page, PageId *link);
	/* pages that can be read: the file's, and buffered pages beyond it */
	uint64		(*pages_available) (NodeStore *ns);
	/* end of any operation: free per-operation state (reads included) */
	void		(*end_op) (NodeStore *ns);
	/* write one flushing unit as if the buffer were full; NIL if nothing */
	List	   *(*flush_some) (NodeStore *ns);
	/* the pages the store buffers (BufferedPageInfo), in page order */
	List	   *(*buffered) (NodeStore *ns);
	/* gauges (buffer sizes...) as key/value pairs of an open object */
	void		(*describe) (NodeStore *ns, JsonbParseState **state);
	/*
	 * Like read for each of n pages (out[i] for pages[i]), the device reads
	 * issued together as one batch.  Optional: NULL reads one by one.
	 */
	void		(*read_many) (NodeStore *ns, const PageId *pages, int n,
							  TreeNode **out);
	/*
	 * Read the root (meta->root) as read does, with every counter and every
	 * page access below the same, for a reader that does not change it.
	 * Optional: NULL reads it with read (ns_read_root).
	 */
	void		(*read_root) (NodeStore *ns, RootRead *out);
} NodeStoreOps;

struct NodeStore
{
	const NodeStoreOps *ops;
	const NodeOps *node_ops;
	PageIO	   *io;
	FestMeta   *meta;			/* owned by the open index */
	const char *index_name;		/* for messages */
	FestStats  *stats;			/* counters of the current operation */
	uint32		page_size;
	bool		meta_dirty;		/* meta changed since last written */
	bool		marked_unclean; /* meta on disk has the clean flag cleared */
	bool		suspect;		/* opened after an unclean shutdown and not
								 * rebuilt or verified since: never marked
								 * clean again */
	bool		has_log;		/* changes survive a crash through a redo log */
	bool		buffers;		/* holds changes in memory between operations */
	bool		modifying_op;	/* the operation may write (set by the caller) */
	/*
	 * The operation's commits hand their pages to the device one page per
	 * request instead of as arrays: set by a structure's HDD-era bulk
	 * algorithm that festival measures beside its SSD version (the
	 * xBR+-tree's, Fevgas 2019 §3.6), which writes every node alone.  Only
	 * the write-through store batches its commits, so only it reads this
	 * (FAST and eFIND write their flushing units as they always do); the
	 * pages, their order and what a crash or a failed write leaves are the
	 * same.  Cleared at the end of every operation (ix_end_op, or
	 * ix_mark_failed when an ERROR ended it and the handle is kept).
	 */
	bool		write_pages_singly;
	/*
	 * A modification may keep up to this many clean pages it read until it
	 * commits, and read them from memory again (write-through store; 0:
	 * none): set by festival_build for its batches of rows, which descend
	 * through the same inner nodes (see clean_find in writethrough.c), and
	 * cleared with write_pages_singly.
	 */
	int			retain_pages;
	/*
	 * The page images the open modification holds (write-through store:
	 * pending writes and kept clean pages; 0 for the other stores): a
	 * build commits its batch when they reach its memory.
	 */
	int			held_pages;
	bool		op_touched;		/* this operation wrote, allocated or freed */
	/*
	 * A commit is overwriting pages that held committed data (set before
	 * the first such write, cleared when the commit completes): if it
	 * fails now, the file may mix old and new pages.  A commit that fails
	 * before this is set has left the file exactly as it was.
	 */
	bool		overwriting;
	uint64		recovered;		/* modifications replayed from the log at open */
	/*
	 * The meta data as of the last modification the store made durable (as
	 * its store defines it: written through, or in its log), which is what
	 * ns_mark_unclean writes: the meta in memory may already hold the
	 * modification in progress, which may yet fail.  Set by
	 * ns_note_committed.
	 */
	LoggedMeta	committed_meta;
};

/*
 * Every node handed to a structure is an access the page I/O chain hears of
 * (pageio_access), wherever the store found it: the tier observer's hot-page
 * model counts every access (Fevgas 2019, Alg. 9-10), not only the reads
 * that reach it.
 */
static inline void
ns_note_access(NodeStore *ns, const TreeNode *node)
{
	if (node != NULL)
		pageio_access(ns->io, node->page, node->level, node->flags);
}

static inline TreeNode *
ns_read(NodeStore *ns, PageId page)
{
	TreeNode   *node = ns->ops->read(ns, page);

	ns_note_access(ns, node);
	return node;
}

/* Read a node to change it, under the promises of the contract above. */
static inline TreeNode *
ns_read_to_change(NodeStore *ns, PageId page)
{
	TreeNode   *node = ns->ops->read_to_change != NULL ?
		ns->ops->read_to_change(ns, page) : ns->ops->read(ns, page);

	ns_note_access(ns, node);
	return node;
}

/* Read several nodes; a store that can batches their device reads. */
static inline void
ns_read_many(NodeStore *ns, const PageId *pages, int n, TreeNode **out)
{
	if (ns->ops->read_many != NULL)
		ns->ops->read_many(ns, pages, n, out);
	else
		for (int i = 0; i < n; i++)
			out[i] = ns->ops->read(ns, pages[i]);
	for (int i = 0; i < n; i++)
		ns_note_access(ns, out[i]);
}

/*
 * Read the root for a reader that does not change it.  A store may hand out
 * a copy it keeps decoded (out->shared): the caller must not free it.
 */
static inline void
ns_read_root(NodeStore *ns, RootRead *out)
{
	if (ns->ops->read_root != NULL)
	{
		ns->ops->read_root(ns, out);
		ns_note_access(ns, out->node);
		return;
	}
	out->node = ns_read(ns, ns->meta->root);
	out->shared = false;
	out->has_bounds = false;
}

static inline void
ns_write(NodeStore *ns, const TreeNode *node, NodeWriteKind kind)
{
	ns->ops->write(ns, node, kind);
}

static inline PageId
ns_alloc(NodeStore *ns, uint16 level)
{
	return ns->ops->alloc(ns, level);
}

static inline void
ns_release(NodeStore *ns, PageId page)
{
	ns->ops->release(ns, page);
}

static inline void
ns_commit(NodeStore *ns)
{
	ns->ops->commit(ns);
}

/*
 * The store's flush, then the page I/O chain's (pageio_flush): the layers
 * that keep state of their own settle it once the store is clean (the tier
 * router marks its map clean).
 */
static inline void
ns_flush(NodeStore *ns)
{
	ns->ops->flush(ns);
	pageio_flush(ns->io);
}

/*
 * Page images read ahead in one batch (ns_read_many, a flushing unit), which
 * the store's one-page read path takes instead of reading again.  Only
 * valid until ns_prefetch_clear: callers clear it after the reads and on
 * an error, so no
 * stale image outlives the call that loaded it.
 */
typedef struct PagePrefetch
{
	int			n;
	PageIORequest *reqs;		/* sorted by page, no duplicates */
} PagePrefetch;


/* nodestore.c: helpers shared by every NodeStore */
extern void ns_meta_to_logged(const FestMeta *meta, LoggedMeta *lm);
extern void ns_meta_from_logged(const LoggedMeta *lm, FestMeta *meta);
extern void ns_prefetch_load(NodeStore *ns, PagePrefetch *pf, PageId *pages, int n);
extern char *ns_prefetch_find(const PagePrefetch *pf, PageId page, bool *verified);
extern void ns_prefetch_clear(PagePrefetch *pf);
extern void ns_init(NodeStore *ns, const NodeStoreOps *ops, PageIO *io, FestMeta *meta,
					const NodeOps *node_ops, const char *index_name, FestStats *stats);
extern uint32 ns_entry_size(const NodeStore *ns, uint16 level);
extern uint32 ns_page_capacity(const NodeStore *ns, uint16 level);
extern TreeNode *ns_new_node(const NodeStore *ns, PageId page, uint16 level);
extern TreeNode *ns_copy_node(const TreeNode *node, MemoryContext cxt);
extern void ns_truncate_to_empty(NodeStore *ns);
extern void ns_empty_meta(NodeStore *ns);
extern void ns_set_root(NodeStore *ns, PageId root, uint32 height);
extern void ns_meta_changed(NodeStore *ns);
extern void ns_serialize(const NodeStore *ns, const TreeNode *node, char *page);
extern bool ns_header_plausible(const NodeStore *ns, const char *page);
extern TreeNode *ns_deserialize(const NodeStore *ns, const char *page, PageId page_id);
extern TreeNode *ns_node_in_place(const NodeStore *ns, char *page, PageId page_id);
extern void ns_write_meta(NodeStore *ns);
extern void ns_mark_unclean(NodeStore *ns);
extern void ns_note_committed(NodeStore *ns);
extern void ns_raise_kept(MemoryContext cxt, const char *detail) pg_attribute_noreturn();
extern void ns_mark_clean(NodeStore *ns);

/* writethrough.c: the write-through store */
/*
 * festival.write_through_per_access (GUC, set by sql/festival.c): the
 * write-through store charges a device read for every node access and a
 * device write for every node write, as FESTIval's disk-based indices.
 */
extern bool fest_write_through_per_access;


#endif							/* FEST_NODESTORE_H */
