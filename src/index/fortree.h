/*-------------------------------------------------------------------------
 *
 * fortree.h
 *	  The FOR-tree (Jin, Xie, Wang and Yue, "Optimizing R-tree for flash
 *	  memory", Expert Systems with Applications 42(10), 2015), private
 *	  declarations.
 *
 * An R-tree that does not split a full node: the entry goes to an overflow
 * node (O-node) attached to it (the primary node, P-node), and the node is
 * split later, by a merge-back, when the reads its O-nodes have cost
 * outweigh the writes of the split (Jin et al. 2015, Alg. 1, AddElement).
 * A P-node and its O-nodes form a *group*: one logical node spread over
 * k + 1 pages, all at the same level.
 *
 * How the groups are stored.  The paper keeps the P -> O-nodes association in an in-memory Overflow
 * Node Table (ONT), which a crash or a restart loses (FESTIval never
 * stored it: its O-nodes became unreachable after the session).  festival
 * stores the association in the parents: every page of a group, P-node and
 * O-nodes alike, has its own entry in the parent, and each such entry names
 * the group by its P-node's page (group) and carries the group's rectangle
 * (the union of every page of the group), so:
 *	- a search that reaches the group reads every page of it, as the
 *	  paper's search reads P and all its O-nodes (the generic window, kNN
 *	  and batch searches see ordinary children and need nothing else);
 *	- a P-node's entry has child == group; an O-node's has child != group;
 *	- the entries of one group are in one parent logical node (the parent
 *	  group), possibly on different pages of it;
 *	- the root is one page (the generic searches start at meta->root): a
 *	  root that would need an O-node grows the tree at once, the new root
 *	  holding the old root and its O-node as one group.
 * The traversal contract holds unchanged (an entry's rectangle covers its
 * child's subtree, a looser bound than the page's own), and every node
 * store, cache and tier placement sees ordinary pages: FAST, eFIND, the
 * FOR-tree's buffer and the journal see node writes (an O-node is a NEW
 * page, a merge-back REPLACEs its pages), tier maps and caches see pages,
 * and a crash recovers the groups with the pages that hold them, so no
 * combination is refused.  Mappings not chosen: a chain of O-nodes through
 * TreeNode.link is not logged by FAST and eFIND (their records hold
 * entries) and would be lost at a replay; a group read as one logical node
 * would need the generic algorithms to read nodes through the structure
 * above the leaves (read_leaves is for level 0 only).  The price is one
 * parent write per O-node, which the paper's in-memory table saves, and
 * parents filling with O-node entries (a parent's O-node is another group).
 *
 * Only the access counters of the ONT stay in memory (the state, below, in
 * a context of the open index, started at 0 at each open): they time
 * merge-backs and never change an answer.  A modification reads each page
 * once, changes it in memory and writes it once at its end, sorted by page
 * (FtOp), so node writes equal page writes under every store.  The flaw of
 * FESTIval's FOR-tree (Carniel et al. 2018 §2: the access count of an
 * overflowed root never incremented, so a one-at-a-time build makes one
 * overflowed root) is fixed by counting every descent that reads a group
 * with O-nodes, insertions at their own level included (access_count
 * 'festival' keeps FESTIval's counting, for comparison).
 *
 * Leaf entries (40 bytes, as the R-tree's):
 *
 *	offset size field
 *	     0    8 xmin	float8
 *	     8    8 ymin	float8
 *	    16    8 xmax	float8
 *	    24    8 ymax	float8
 *	    32    8 id		int8: the object id
 *
 * Internal entries (48 bytes):
 *
 *	offset size field
 *	     0   32 box		4 x float8: the union of the entries of every page
 *						of the child's group
 *	    32    8 child	int8: the child's page
 *	    40    8 group	int8: the page of the child's P-node (== child for
 *						the P-node itself)
 *
 * so a page of P bytes holds floor((P - 32) / 40) leaf entries and
 * floor((P - 32) / 48) internal ones; max_fill scales those to M per level
 * and min_fill (percent of M) gives m.  A node page holds at most M
 * entries; a group other than the root holds at least m entries in all
 * (an O-node alone may hold one).
 *
 * IDENTIFICATION
 *	  src/index/fortree.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_FORTREE_H
#define FEST_FORTREE_H

#include "index/structure.h"

#include "utils/hsearch.h"

typedef struct FtLeafEntry
{
	Mbr			box;
	int64		id;
} FtLeafEntry;

typedef struct FtInternalEntry
{
	Mbr			box;
	int64		child;
	int64		group;
} FtInternalEntry;

StaticAssertDecl(sizeof(FtLeafEntry) == 40, "FtLeafEntry must be 40 bytes");
StaticAssertDecl(sizeof(FtInternalEntry) == 48, "FtInternalEntry must be 48 bytes");

#define FtLeafEntries(node)		((FtLeafEntry *) (node)->entries)
#define FtInternalEntries(node)	((FtInternalEntry *) (node)->entries)

/* An entry of either kind (a leaf entry is the first 40 bytes). */
typedef union FtAnyEntry
{
	FtLeafEntry leaf;
	FtInternalEntry internal;
} FtAnyEntry;

/* Which descents count as accesses of a group (option access_count). */
typedef enum FtAccessCount
{
	FT_COUNT_ALL,				/* every descent through the group */
	FT_COUNT_FESTIVAL			/* searches, and groups above the level an
								 * insertion targets (FESTIval 1.1.1) */
} FtAccessCount;

/*
 * The structure's state: capacities, the merge-back's cost parameters and
 * the ONT's access counters (tsc in the paper), one per group that has
 * O-nodes, keyed by its P-node's page, in a memory context of the open
 * index.  The counters only time merge-backs; they start at 0 when the
 * index is opened (as the paper's ONT starts empty) and never change an
 * answer.
 */
typedef struct FtState
{
	uint32		max_entries[2]; /* M: [0] leaves, [1] internal levels */
	uint32		min_entries[2]; /* m */
	double		read_cost;		/* x */
	double		write_cost;		/* y */
	FtAccessCount access_count;
	MemoryContext cxt;
	HTAB	   *ont;			/* PageId -> FtCounter */
} FtState;

typedef struct FtCounter
{
	PageId		page;			/* hash key: the P-node */
	uint64		accesses;
} FtCounter;

#define FtMax(st, level)	((st)->max_entries[(level) > 0 ? 1 : 0])
#define FtMin(st, level)	((st)->min_entries[(level) > 0 ? 1 : 0])

/*
 * One modification's view of the nodes it touches (FtOp): each page is
 * read once, changed in memory, and written once when the modification
 * ends (ft_op_finish), in page order, as NEW (allocated by it), REPLACE
 * (rewritten by a merge-back) or UPDATE.
 */
typedef struct FtNodeRef
{
	PageId		page;			/* hash key */
	TreeNode   *node;
	bool		dirty;
	bool		fresh;			/* allocated by this modification */
	bool		replaced;
	bool		released;
} FtNodeRef;

typedef struct FtOp
{
	StructIndex *idx;
	FtState    *st;
	HTAB	   *nodes;			/* PageId -> FtNodeRef */
	/* entries of dissolved groups, to insert again (ft_settle) */
	FtAnyEntry *orphans;
	uint16	   *orphan_levels;
	int			norphans;
	int			maxorphans;
} FtOp;

/*
 * A group as one modification sees it: its pages, the P-node first, then
 * the O-nodes in the order of their entries in the parent.
 */
typedef struct FtGroup
{
	uint16		level;
	PageId		tag;			/* the P-node's page */
	int			npages;
	int			maxpages;
	TreeNode  **pages;
	bool		received;		/* an entry was added in this modification */
	bool		changed;		/* lost entries or its rectangle changed */
} FtGroup;

/*
 * The groups from the root down to the level a modification works at,
 * indexed by level; top is the root's level.
 */
typedef struct FtPath
{
	int			top;
	int			bottom;
	FtGroup    *at[FEST_MAX_LEVELS];
} FtPath;

/* fortree.c */
extern const NodeOps fortree_node_ops;
extern void ft_op_begin(FtOp *op, StructIndex *idx);
extern void ft_op_finish(FtOp *op);
extern TreeNode *ft_get(FtOp *op, PageId page, uint16 level);
extern void ft_dirty(FtOp *op, TreeNode *node);
extern void ft_replaced(FtOp *op, TreeNode *node);
extern TreeNode *ft_new_page(FtOp *op, uint16 level);
extern void ft_release(FtOp *op, TreeNode *node);
extern const Mbr *ft_entry_box(const TreeNode *node, uint32 slot);
extern void ft_group_box(const FtGroup *g, Mbr *box);
extern uint32 ft_group_entries(const FtGroup *g);
extern FtGroup *ft_group_new(uint16 level, PageId tag);
extern void ft_group_add_page(FtGroup *g, TreeNode *page);
extern FtGroup *ft_root_group(FtOp *op);
extern FtGroup *ft_child_group(FtOp *op, const FtGroup *parent, PageId tag);
extern void ft_remove_slot(TreeNode *node, uint32 slot);
extern void ft_insert_at(FtOp *op, const FtAnyEntry *entry, uint16 level,
						 const FtAnyEntry *more, int nmore);
extern void ft_count_access(FtOp *op, const FtGroup *g, bool target);
extern uint64 ft_counter_get(FtState *st, PageId tag);
extern void ft_counter_forget(FtState *st, PageId tag);
extern void ft_counter_move(FtState *st, PageId from, PageId to);

/* fortree_merge.c */
extern double ft_merge_threshold(const FtState *st, int k);
extern bool ft_merge_due(FtState *st, const FtGroup *g);
extern void ft_merge_back(FtOp *op, FtPath *path, int level);
extern void ft_condense(FtOp *op, FtPath *path, int level);
extern void ft_settle(FtOp *op);
extern bool ft_remove(StructIndex *idx, int64 id, const Mbr *box);
extern bool ft_contains(StructIndex *idx, int64 id, const Mbr *box);

/* fortree_check.c */
extern void ft_check(StructIndex *idx, CheckReport *report);

#endif							/* FEST_FORTREE_H */
