/*-------------------------------------------------------------------------
 *
 * structure.h
 *	  The interface every index structure implements.
 *
 * A structure (R-tree, later R*-tree, Hilbert R-tree, xBR+-tree) is a
 * StructureOps table.  It sees an open index only as a StructIndex: a
 * NodeStore to read and write nodes through, the counters of the current
 * operation, its validated configuration and its own state.  It never
 * touches files, catalogs or SQL, so every structure works under every node
 * store.
 *
 * Operations run in the caller's memory context, which is reset after each
 * operation; a structure may allocate freely there.
 *
 * IDENTIFICATION
 *	  src/index/structure.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_STRUCTURE_H
#define FEST_STRUCTURE_H

#include "festival.h"
#include "cache/cache.h"
#include "tier/tier.h"
#include "nodestore/framework.h"
#include "nodestore/nodestore.h"
#include "geom/mbr.h"
#include "geom/predicate.h"
#include "index/check.h"
#include "options/options.h"
#include "stats/progress.h"

struct StructureOps;

typedef struct StructIndex
{
	const struct StructureOps *ops; /* the structure (its optional hooks) */
	NodeStore  *ns;
	FestStats  *stats;			/* counters of the current operation */
	const FestConfig *config;
	void	   *state;			/* returned by setup */
	const char *name;			/* index name, for messages */
	Progress   *progress;		/* of a long operation (a build, a bulk load,
								 * insert_many, check), or NULL */
	/*
	 * The window search's reading (set when each operation begins, from
	 * festival.window_search and the devices' queue depth): 0 reads one
	 * node at a time depth-first (tree_search); n > 0 reads a level at a
	 * time in batches of at most n pages (level_search.c).
	 */
	int			window_batch;
} StructIndex;

/* One step of a root-to-node path: the node and the entry followed. */
typedef struct PathStep
{
	TreeNode   *node;
	int			slot;
} PathStep;

/*
 * Traversal contract shared by the generic algorithms (traverse.c: window
 * search, kNN, batch queries, snapshots, dumps): through the structure's
 * NodeOps, a leaf entry's entry_mbr is its object's MBR and entry_ref the
 * object id; an internal entry's entry_mbr covers every object of its
 * subtree (an MBR, or xBR+'s DBR) and entry_ref is the child's page.  A
 * child is one level below its parent; leaves are level 0.  A structure
 * whose leaves are not pages (LB-Grid's logical buckets) sets read_leaves:
 * the generic algorithms then read level 0 through it (tree_read_nodes),
 * and a level-1 entry's entry_ref is whatever read_leaves takes.
 */

/* One object handed to a bulk loader (40 bytes, like an R-tree entry). */
typedef struct BulkItem
{
	Mbr			box;
	int64		id;
} BulkItem;

/* A structure's spilled bulk load (bulk_spill_begin); opaque to callers. */
typedef struct BulkSpill BulkSpill;

/* A build method besides 'insert'. */
typedef struct BuildMethod
{
	const char *name;
	const char *description;
} BuildMethod;

/*
 * What an in-memory bulk load holds per object besides the gathered
 * BulkItem unless its structure says otherwise: rtree_bulk.c's PackItem
 * (an RtreeEntry and a sort key, asserted there) and the Hilbert R-tree's
 * HilbertLeafEntry hold 48 bytes, the grid file's sort items less; the
 * xBR+-tree's loader holds more (StructureOps.bulk_bytes_per_object).
 */
#define BULK_BYTES_PER_OBJECT_DEFAULT 48

typedef struct StructureOps
{
	const char *name;
	const char *description;
	const OptionSpec *options;	/* NULL-terminated, structure-specific */
	const NodeOps *node_ops;

	/*
	 * Derive the structure's state from a complete configuration, raising
	 * an error for combinations that cannot work.  Called when an index is
	 * created and each time it is opened.
	 */
	void	   *(*setup) (const FestConfig *config, uint32 page_size);
	/*
	 * Optional: refuse a framework the structure cannot work under (an
	 * ERROR with errcode and hint); called before setup.  NULL = any.
	 */
	void		(*check_framework) (const char *framework);
	/* Create the empty tree (a root leaf) in a freshly reset file. */
	void		(*init_empty) (StructIndex *idx);
	/* Add one object; the structure's own insertion algorithm. */
	void		(*insert) (StructIndex *idx, int64 id, const Mbr *box);
	/* Remove one entry with this id and MBR; false if there is none. */
	bool		(*remove) (StructIndex *idx, int64 id, const Mbr *box);
	/* Is there an entry with this id and MBR? */
	bool		(*contains) (StructIndex *idx, int64 id, const Mbr *box);
	/*
	 * Optional: the structure's own window search, for an algorithm the
	 * generic window search (tree_search: depth-first, or a level at a
	 * time) does not cover, such as the grid file's batched P-RQ.  NULL:
	 * tree_search.
	 */
	void		(*search) (StructIndex *idx, const SearchSpec *spec);
	/*
	 * Optional: the structure's own search of many queries at once
	 * (festival.query_batch), such as the xBR+-tree's batch queries read a
	 * level at a time (Fevgas 2019 §3.6) or the grid files' group point
	 * query (Fevgas 2019, Alg. 8).  Each spec must receive exactly the
	 * emits tree_search_batch gives it, in any order.  NULL:
	 * tree_search_batch (batch_search.c).
	 */
	void		(*search_batch) (StructIndex *idx, const SearchSpec *specs, int nspecs);
	/*
	 * Optional: the structure's own k-nearest-neighbour search of a query
	 * point over an index of points, where distances come from the index
	 * alone (the grid file's ring search, Fevgas 2019 Alg. 7).  Returns at
	 * most k neighbours (fewer when the index holds fewer ids) in
	 * (distance, id) order in palloc'd *ids and *distances, each id once at
	 * its smallest distance: exactly what the generic search returns.
	 * NULL, or a query that is not a point: the generic best-first search
	 * (knn.c).
	 */
	int			(*knn) (StructIndex *idx, double x, double y, int k,
						int64 **ids, double **distances);
	/* Verify every invariant, reporting problems instead of raising. */
	void		(*check) (StructIndex *idx, CheckReport *report);
	/* Derived parameters worth reporting (capacities...), as JSON pairs. */
	void		(*describe) (StructIndex *idx, JsonbParseState **state);

	/* Only POINT geometries may be indexed (xBR+-tree). */
	bool		points_only;
	/*
	 * The structure has an OPT_BOX option "extent" (the space its grid or
	 * curve covers); create_index fills it from the source's extent when
	 * the user gives none.
	 */
	bool		needs_extent;
	/* Build methods besides 'insert'; NULL-terminated by name, or NULL. */
	const BuildMethod *build_methods;
	/*
	 * Load n objects into the index, which has just been emptied and holds
	 * the empty tree of init_empty; the loader may reorder items.  Called
	 * with one of build_methods.  The caller commits and flushes.
	 */
	void		(*bulk_load) (StructIndex *idx, BulkItem *items, int64 n,
							  const char *method);
	/*
	 * Optional: the same load in memory bounded by maintenance_work_mem,
	 * for sources too large to hold.  bulk_spill_begin returns NULL when
	 * the method has no bounded form (the caller then keeps every object
	 * in memory for bulk_load); otherwise the caller hands it every object
	 * with bulk_spill_put, in any order, and bulk_spill_load builds the
	 * tree, which must be identical, page for page, to what bulk_load
	 * builds from the same objects.  Commits and the root change as in
	 * bulk_load.
	 */
	BulkSpill  *(*bulk_spill_begin) (StructIndex *idx, const char *method);
	/*
	 * Bytes bulk_load holds per object besides the gathered BulkItem, for
	 * the caller's choice between bulk_load and the bounded form; 0 for
	 * BULK_BYTES_PER_OBJECT_DEFAULT.
	 */
	int			bulk_bytes_per_object;
	void		(*bulk_spill_put) (BulkSpill *spill, const BulkItem *item);
	void		(*bulk_spill_load) (StructIndex *idx, BulkSpill *spill);
	/*
	 * Optional: festival.insert_many methods besides 'insert' (one object
	 * at a time with insert), NULL-terminated by name; the xBR+-tree's bulk
	 * insertion.  bulk_insert_begin starts a batch into the existing tree,
	 * bulk_insert_put hands it every object (any order; what it refuses,
	 * it refuses before anything is written), bulk_insert_finish inserts
	 * them.  No commit: the caller commits once, so the batch is one
	 * modification.  The tree must satisfy check() as after inserts.
	 */
	const BuildMethod *insert_methods;
	BulkSpill  *(*bulk_insert_begin) (StructIndex *idx, const char *method);
	void		(*bulk_insert_put) (BulkSpill *spill, const BulkItem *item);
	void		(*bulk_insert_finish) (StructIndex *idx, BulkSpill *spill);
	/*
	 * Optional, for dumps: the region a child entry stands for when it is
	 * not just its entry_mbr (xBR+'s quadrant).  False when there is none.
	 */
	bool		(*entry_region) (StructIndex *idx, const void *entry,
								 uint16 level, Mbr *region);
	/*
	 * Optional, for snapshots: does this internal entry name an overflow
	 * node (the FOR-tree's O-nodes), which snapshots count apart (FESTIval's
	 * IndexSnapshot did)?  NULL: the structure has none.
	 */
	bool		(*entry_overflow) (StructIndex *idx, const void *entry, uint16 level);
	/*
	 * Optional: the leaves (level 0) for n references of level-1 entries,
	 * out[i] for refs[i], when leaves are not pages: LB-Grid assembles each
	 * logical bucket from its log pages, all of them read as one batch.
	 * NULL: leaves are pages, read with ns_read_many.
	 */
	void		(*read_leaves) (StructIndex *idx, const int64 *refs, int n,
								TreeNode **out);
	/*
	 * With read_leaves (required then): is ref a leaf of the index, the
	 * reference of a level-1 entry?  For a caller that got ref from a user
	 * (festival.node), since read_leaves trusts the references it is given.
	 */
	bool		(*leaf_exists) (StructIndex *idx, int64 ref);
	/*
	 * Optional: raise an error (with a hint to build()) when the file holds
	 * a layout of the structure this version cannot read (an older one);
	 * called before any operation reads the tree, build() excepted, which
	 * rewrites it.  NULL: every file of the structure is readable.
	 */
	void		(*check_layout) (StructIndex *idx);
	/*
	 * Optional: an index without a redo log was opened after an unclean
	 * shutdown.  Restore it from what the structure never overwrites
	 * (LB-Grid: its append-only log pages) and commit; true when it is then
	 * whole (it is trusted again), false to leave it suspect.  Must not
	 * raise an error for damaged pages.
	 */
	bool		(*recover) (StructIndex *idx);
} StructureOps;

/*
 * An index's options that the SQL layer reads (registry.c), filled once
 * when the index is opened or created: the index file's own, and what the
 * framework and the page cache need to be set up.  The structure's are in
 * its state (setup), the node store's in the store (create).
 */
typedef struct IndexOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	int64		page_size;		/* bytes of a node (page) */
	const FrameworkDef *framework;
	int64		framework_memory;	/* bytes of the node store's buffers */
	CacheOptions cache;
	TierOptions tier;			/* fast_device NULL: one device */
} IndexOptions;

/* registry.c */
extern const StructureOps *structure_lookup(const char *name);
extern const BuildMethod *structure_method_lookup(const StructureOps *structure,
												   const BuildMethod *methods,
												   const char *method,
												   const char *function,
												   const char *unit);
extern FestConfig *index_options_parse(const StructureOps *ops, Jsonb *user,
									   IndexOptions *out, void **state);

/* traverse.c: generic algorithms over the traversal contract */
extern void tree_search(StructIndex *idx, const SearchSpec *spec);
extern void tree_search_depth_first(StructIndex *idx, const SearchSpec *spec);
extern TreeNode *tree_search_root(StructIndex *idx, const SearchSpec *spec,
								  RootRead *root, uint32 *ntest);

/* Pages a window search is to read (with their levels, or levels NULL). */
typedef struct PageList
{
	PageId	   *pages;
	uint16	   *levels;
	int			n;
	int			max;
	bool		palloced;		/* the arrays are palloc'd (else the caller's) */
} PageList;

extern void tree_examine_node(StructIndex *idx, const TreeNode *node, uint16 level);
extern void tree_visit_entries(StructIndex *idx, const SearchSpec *spec,
							   const TreeNode *node, uint32 ntest, PageList *out);
extern void page_list_grow(PageList *list);
extern void page_list_free(PageList *list);

/* level_search.c: the window search a level at a time (P-RQ for trees) */
extern void tree_search_levels(StructIndex *idx, const SearchSpec *spec,
							   int batch);
extern void tree_filter_leaf_entry(const SearchSpec *spec, int64 id, const Mbr *box);
extern TreeNode *tree_read_root(StructIndex *idx);
extern TreeNode *tree_read_node(StructIndex *idx, int64 ref, uint16 level);
extern void tree_read_nodes(StructIndex *idx, const PageId *refs, int n,
							uint16 level, TreeNode **out);
extern TreeNode *tree_read_child(StructIndex *idx, const TreeNode *parent,
								 int64 child_page);
extern TreeNode *tree_read_root_to_change(StructIndex *idx);
extern TreeNode *tree_read_child_to_change(StructIndex *idx, const TreeNode *parent,
										   int64 child_page);
extern void tree_report_bad_level(StructIndex *idx, const TreeNode *node,
								  int expected) pg_attribute_noreturn();
extern void tree_free_node(TreeNode *node);

/* rtree.c */
extern const StructureOps rtree_structure;

/* rstartree.c */
extern const StructureOps rstartree_structure;

/* hilbert_rtree.c */
extern const StructureOps hilbert_rtree_structure;

/* xbrtree.c */
extern const StructureOps xbrtree_structure;

/* gridfile.c */
extern const StructureOps gridfile_structure;

/* lbgrid.c */
extern const StructureOps lbgrid_structure;

/* agrid.c */
extern const StructureOps agrid_structure;

/* fortree.c */
extern const StructureOps fortree_structure;

#endif							/* FEST_STRUCTURE_H */
