/*-------------------------------------------------------------------------
 *
 * xbrtree_bulkins.c
 *	  Bulk insertion into an xBR+-tree (festival.insert_many methods 'bulk'
 *	  and 'bulk_ssd').
 *
 * The bulk insertion of Roumelis et al. (MEDI 2017) as Fevgas 2019 §3.6
 * describes it: the points of the batch go into the leaves of the existing
 * tree; a leaf that overflows becomes an in-memory subtree rooted at the
 * leaf's parent, which is then merged into the disk-resident tree.  And its
 * version for SSDs (Roumelis, Fevgas et al., Computing 2019), which reads
 * and writes the leaves in batches through an in-memory buffer.
 *
 * festival's form of it:
 *	- the batch is sorted in Z order (PostgreSQL's external sort, in half
 *	  of maintenance_work_mem: spill_points_*), so the points of a subtree
 *	  come together and each node is read once per run of points below it;
 *	- each point descends from the root by point location (xbrtree.c),
 *	  through the path of nodes held in memory from the previous point, and
 *	  only the nodes it leaves are read; at its leaf's parent P (level 1) it
 *	  waits in P's list of new points instead of going to the leaf;
 *	- when the descent leaves P (or P's list fills a quarter of
 *	  maintenance_work_mem), P's leaves that receive points are read, and
 *	  each takes its points: a leaf that still fits is rewritten, one that
 *	  overflows is partitioned, with its new points, into leaves that fit
 *	  (the one-pass loader's partitioning over the leaf's quadrant,
 *	  xbr_partition_nodes), which replace its entry in P: P and its leaves
 *	  are the in-memory subtree;
 *	- when the descent leaves a node at level >= 1, it is merged into the
 *	  tree: written as it is when it fits a page, else partitioned over its
 *	  quadrant into nodes that fit, whose entries replace its entry in its
 *	  parent; a root that overflows gets a new root above its parts.
 * The points of a node's quadrant are not one run of the Z order when
 * other nodes' quadrants are nested in it: the descent then leaves the
 * node and comes back to it, read again (from the node store's memory
 * within the batch), as a separate merge.
 *
 * The two methods build the same tree, page for page, and differ only in
 * their I/O: 'bulk' (the HDD original) reads P's leaves one at a time and
 * hands every page to the device in a request of its own at the commit
 * (NodeStore.write_pages_singly); 'bulk_ssd' reads them in one batch
 * (ns_read_many: one submission under libaio and io_uring, in groups of up
 * to a quarter of maintenance_work_mem) and hands the commit's pages down
 * as arrays.  The whole batch is one modification: the caller commits once
 * (festival.insert_many, docs/durability.md), so until then the node store
 * holds every page the batch changed (the write-through store's pending
 * images, FAST's and eFIND's write buffer), which is read back from memory
 * by both methods.
 *
 * IDENTIFICATION
 *	  src/index/xbrtree_bulkins.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/xbrtree.h"

#include "index/spill_sort.h"
#include "miscadmin.h"
#include "utils/memutils.h"

const BuildMethod xbr_insert_methods[] = {
	{"bulk", "bulk insertion (Roumelis et al., MEDI 2017): points in Z order, an overflowing leaf partitioned in memory under its parent and merged, pages read and written one at a time"},
	{"bulk_ssd", "the bulk insertion adapted to SSDs (Roumelis, Fevgas et al. 2019): each parent's leaves read in one batch, pages written in batches; the same tree"},
	{NULL, NULL}
};

/* A new point waiting at its leaf's parent. */
typedef struct PendingPoint
{
	int64		leaf;			/* the leaf's page */
	int64		seq;			/* arrival order, for a stable grouping */
	XbrLeafEntry e;
} PendingPoint;

/* The node of one level on the current path, held in memory. */
typedef struct PathNode
{
	TreeNode   *node;			/* NULL: none loaded */
	bool		dirty;
	bool		is_new;			/* has no page yet (the root over a root leaf) */
} PathNode;

typedef struct XbrBulkIns
{
	XbrSpillKind kind;			/* XBR_SPILL_INSERT */
	StructIndex *idx;
	bool		ssd;
	SpillSort  *sort;			/* the batch, by address */
	int64		npoints;

	/* the insertion */
	PathNode	path[FEST_MAX_LEVELS];
	int			top;			/* level of path[top], the root */
	PageId		root_leaf;		/* the root before a new root was put over it */
	PendingPoint *pending;		/* for path[1] */
	int64		npending;
	int64		maxpending;
	int			leaf_group;		/* leaves read together ('bulk_ssd') */
	int64		seq;
} XbrBulkIns;

static int
pending_cmp(const void *a, const void *b)
{
	const PendingPoint *x = a;
	const PendingPoint *y = b;

	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq ? 1 : 0);
}

BulkSpill *
xbr_bulkins_begin(StructIndex *idx, const char *method)
{
	XbrBulkIns *bi = palloc0(sizeof(XbrBulkIns));

	if (strcmp(method, "bulk") != 0 && strcmp(method, "bulk_ssd") != 0)
		elog(ERROR, "xBR+-tree bulk insertion called with method \"%s\"", method);
	bi->kind = XBR_SPILL_INSERT;
	bi->idx = idx;
	bi->ssd = strcmp(method, "bulk_ssd") == 0;
	bi->sort = spill_points_begin();
	return (BulkSpill *) bi;
}

/* One point of the batch: refused outside the extent, sorted by address. */
void
xbr_bulkins_put(BulkSpill *spill, const BulkItem *item)
{
	XbrBulkIns *bi = (XbrBulkIns *) spill;
	XbrAddr		addr;

	Assert(bi->kind == XBR_SPILL_INSERT);
	xbr_point_admit(bi->idx, item->box.xmin, item->box.ymin, &addr);
	spill_points_put(bi->sort, addr.code, item->box.xmin, item->box.ymin, item->id);
	bi->npoints++;
}

/* ---- nodes held in memory ---- */

/* The slot of node's entry for child, or an error. */
static int
slot_of_child(StructIndex *idx, const TreeNode *node, int64 child)
{
	for (uint32 i = 0; i < node->nentries; i++)
		if (XbrInternalEntries(node)[i].child == child)
			return i;
	elog(ERROR, "bulk insertion into index \"%s\" lost the entry of page " INT64_FORMAT " in page " UINT64_FORMAT,
		 idx->name, child, node->page);
	pg_unreachable();
}

static void
remove_slot(TreeNode *node, int slot)
{
	memmove(XbrInternalEntries(node) + slot, XbrInternalEntries(node) + slot + 1,
			(node->nentries - slot - 1) * sizeof(XbrInternalEntry));
	node->nentries--;
}

/* Add an entry in address order to a node that may exceed a page. */
static void
add_entry(TreeNode *node, const XbrInternalEntry *e)
{
	xbr_node_reserve(node, node->nentries + 1);
	xbr_insert_internal_entry(node, e);
}

/*
 * Write the parts a node was partitioned into: the node's page goes to
 * the part of the node's own quadrant, or to the first, the others get new
 * pages.  Their entries go to parts_out (for the parent).
 */
static void
write_parts(StructIndex *idx, PageId page, XbrAddr quadrant, TreeNode **parts,
			XbrAddr *quads, int64 nparts, XbrInternalEntry *parts_out)
{
	int64		keep = 0;

	for (int64 k = 0; k < nparts; k++)
		if (xbr_addr_equal(quads[k], quadrant))
		{
			keep = k;
			break;
		}
	for (int64 k = 0; k < nparts; k++)
	{
		TreeNode   *part = parts[k];

		if (k == keep && page != InvalidPageId)
		{
			part->page = page;
			ns_write(idx->ns, part, NS_WRITE_REPLACE);
		}
		else
		{
			part->page = ns_alloc(idx->ns, part->level);
			ns_write(idx->ns, part, NS_WRITE_NEW);
		}
		xbr_fill_entry(&parts_out[k], quads[k], part);
	}
	if (parts[0]->level == 0)
		idx->stats->splits_leaf += nparts - 1;
	else
		idx->stats->splits_internal += nparts - 1;
}

/*
 * The items (sorted) of a node of the given level that does not fit a page,
 * partitioned over its quadrant into nodes that do (written: the node's
 * page to one of them, unless it has none), whose entries go into `into`
 * in place of the entry at slot (none when slot < 0).  items is freed.
 */
static void
replace_by_parts(StructIndex *idx, XbrBulkEntry *items, int64 n, uint16 level,
				 XbrAddr quadrant, PageId page, TreeNode *into, int slot)
{
	TreeNode  **parts;
	XbrAddr    *quads;
	XbrInternalEntry *entries;
	int64		nparts;

	nparts = xbr_partition_nodes(idx, items, n, level, quadrant, &parts, &quads);
	entries = palloc(nparts * sizeof(XbrInternalEntry));
	write_parts(idx, page, quadrant, parts, quads, nparts, entries);
	if (slot >= 0)
		remove_slot(into, slot);
	for (int64 k = 0; k < nparts; k++)
	{
		add_entry(into, &entries[k]);
		tree_free_node(parts[k]);
	}
	xbr_set_flags(into);
	pfree(items);
	pfree(parts);
	pfree(quads);
	pfree(entries);
}

/* A node's entries as the items of its level, in their (address) order. */
static XbrBulkEntry *
node_items(const TreeNode *node)
{
	XbrBulkEntry *items = palloc(Max(node->nentries, 1) * sizeof(XbrBulkEntry));

	for (uint32 i = 0; i < node->nentries; i++)
	{
		memset(&items[i], 0, sizeof(XbrBulkEntry));
		items[i].e.internal = XbrInternalEntries(node)[i];
		items[i].addr = xbr_entry_addr(&items[i].e.internal);
	}
	return items;
}

/* ---- the leaves of path[1] ---- */

/*
 * One leaf and its new points: rewritten when they fit, else partitioned
 * over the leaf's quadrant into leaves that replace its entry in parent.
 */
static void
apply_leaf(XbrBulkIns *bi, TreeNode *parent, TreeNode *leaf, const PendingPoint *pts, int64 m)
{
	StructIndex *idx = bi->idx;
	XbrState   *st = (XbrState *) idx->state;
	int			slot = slot_of_child(idx, parent, (int64) leaf->page);
	XbrAddr		quadrant = xbr_entry_addr(&XbrInternalEntries(parent)[slot]);
	int64		total = leaf->nentries + m;

	if (leaf->level != 0)
		tree_report_bad_level(idx, leaf, 0);
	if (total <= st->leaf_max)
	{
		for (int64 i = 0; i < m; i++)
			XbrLeafEntries(leaf)[leaf->nentries++] = pts[i].e;
		xbr_sort_entries(leaf);
		ns_write(idx->ns, leaf, NS_WRITE_UPDATE);
		xbr_fill_entry(&XbrInternalEntries(parent)[slot], quadrant, leaf);
		xbr_set_flags(parent);
	}
	else
	{
		XbrBulkEntry *items = MemoryContextAllocHuge(CurrentMemoryContext,
													 total * sizeof(XbrBulkEntry));

		for (int64 i = 0; i < total; i++)
		{
			const XbrLeafEntry *e = i < leaf->nentries ? &XbrLeafEntries(leaf)[i]
				: &pts[i - leaf->nentries].e;

			memset(&items[i], 0, sizeof(XbrBulkEntry));
			items[i].e.leaf = *e;
			items[i].addr = xbr_leaf_entry_addr(st, e);
		}
		qsort(items, total, sizeof(XbrBulkEntry), xbr_bulk_entry_cmp);
		replace_by_parts(idx, items, total, 0, quadrant, leaf->page, parent, slot);
	}
}

/*
 * The new points waiting at path[1] go into its leaves: the leaves read
 * one at a time ('bulk') or in groups of leaf_group ('bulk_ssd').
 */
static void
apply_pending(XbrBulkIns *bi)
{
	StructIndex *idx = bi->idx;
	TreeNode   *parent = bi->path[1].node;
	int64		i = 0;
	PageId	   *pages;
	TreeNode  **leaves;
	int64	   *first;
	int64		nleaves = 0;

	if (bi->npending == 0)
		return;
	qsort(bi->pending, bi->npending, sizeof(PendingPoint), pending_cmp);
	pages = palloc(bi->npending * sizeof(PageId));
	first = palloc((bi->npending + 1) * sizeof(int64));
	while (i < bi->npending)
	{
		int64		j = i;

		while (j < bi->npending && bi->pending[j].leaf == bi->pending[i].leaf)
			j++;
		pages[nleaves] = (PageId) bi->pending[i].leaf;
		first[nleaves] = i;
		nleaves++;
		i = j;
	}
	first[nleaves] = bi->npending;

	leaves = palloc(Min(nleaves, (int64) bi->leaf_group) * sizeof(TreeNode *));
	for (int64 g = 0; g < nleaves; g += bi->leaf_group)
	{
		int			n = (int) Min((int64) bi->leaf_group, nleaves - g);

		CHECK_FOR_INTERRUPTS();
		if (bi->ssd)
			ns_read_many(idx->ns, &pages[g], n, leaves);
		for (int k = 0; k < n; k++)
		{
			TreeNode   *leaf = bi->ssd ? leaves[k] : ns_read(idx->ns, pages[g + k]);

			apply_leaf(bi, parent, leaf, &bi->pending[first[g + k]],
					   first[g + k + 1] - first[g + k]);
			tree_free_node(leaf);
		}
	}
	bi->path[1].dirty = true;
	bi->npending = 0;
	pfree(leaves);
	pfree(pages);
	pfree(first);
}

/* ---- leaving a node: the merge ---- */

/*
 * The root (path[top]) after its subtree is done: written when it fits,
 * else partitioned over the whole extent into parts under a new root,
 * level after level until the root fits.
 */
static void
finish_root(XbrBulkIns *bi)
{
	StructIndex *idx = bi->idx;
	XbrState   *st = (XbrState *) idx->state;
	PathNode   *pn = &bi->path[bi->top];
	TreeNode   *node = pn->node;

	/* a root put over a root leaf that kept its points: the leaf stays the root */
	if (pn->is_new && node->nentries == 1 &&
		XbrInternalEntries(node)[0].child == (int64) bi->root_leaf)
	{
		tree_free_node(node);
		pn->node = NULL;
		return;
	}

	while (node->nentries > st->internal_max)
	{
		TreeNode   *root = ns_new_node(idx->ns, InvalidPageId, node->level + 1);

		replace_by_parts(idx, node_items(node), node->nentries, node->level, xbr_addr_root(),
						 pn->is_new ? InvalidPageId : node->page, root, -1);
		tree_free_node(node);
		node = root;
		pn->is_new = true;
		pn->dirty = true;
	}
	if (pn->is_new)
	{
		node->page = ns_alloc(idx->ns, node->level);
		ns_write(idx->ns, node, NS_WRITE_NEW);
		ns_set_root(idx->ns, node->page, node->level + 1);
	}
	else if (pn->dirty)
		ns_write(idx->ns, node, NS_WRITE_UPDATE);
	tree_free_node(node);
	pn->node = NULL;
}

/*
 * Merge path[level] into the tree: written when it fits, else partitioned
 * over its quadrant into nodes whose entries replace its entry in its
 * parent (path[level + 1]).  Its entry's DBR is made exact again.
 */
static void
finish_node(XbrBulkIns *bi, int level)
{
	StructIndex *idx = bi->idx;
	XbrState   *st = (XbrState *) idx->state;
	PathNode   *pn = &bi->path[level];
	TreeNode   *node = pn->node;
	TreeNode   *parent;
	int			slot;
	XbrAddr		quadrant;

	Assert(node != NULL && level >= 1);
	if (level == 1)
		apply_pending(bi);
	if (level == bi->top)
	{
		finish_root(bi);
		return;
	}
	parent = bi->path[level + 1].node;
	slot = slot_of_child(idx, parent, (int64) node->page);
	quadrant = xbr_entry_addr(&XbrInternalEntries(parent)[slot]);
	if (node->nentries <= st->internal_max)
	{
		if (pn->dirty)
			ns_write(idx->ns, node, NS_WRITE_UPDATE);
		xbr_fill_entry(&XbrInternalEntries(parent)[slot], quadrant, node);
		xbr_set_flags(parent);
	}
	else
		replace_by_parts(idx, node_items(node), node->nentries, node->level, quadrant,
						 node->page, parent, slot);
	bi->path[level + 1].dirty = true;
	tree_free_node(node);
	pn->node = NULL;
	pn->dirty = false;
}

/* Merge path[1] .. path[level], the lowest first. */
static void
finish_below(XbrBulkIns *bi, int level)
{
	for (int l = 1; l <= level; l++)
		if (bi->path[l].node != NULL)
			finish_node(bi, l);
}

/* ---- the descent ---- */

/* A node read for the path (merges grow it with xbr_node_reserve). */
static TreeNode *
read_path_node(XbrBulkIns *bi, const TreeNode *parent, int64 page)
{
	return tree_read_child(bi->idx, parent, page);
}

static void
insert_point(XbrBulkIns *bi, const XbrLeafEntry *e, XbrAddr addr)
{
	StructIndex *idx = bi->idx;

	for (int level = bi->top; level >= 1; level--)
	{
		TreeNode   *node = bi->path[level].node;
		XbrInternalEntry *entry;
		int			slot;

		for (;;)
		{
			int64		child;

			idx->stats->entries_examined += node->nentries;
			slot = xbr_locate(node, addr);
			if (slot < 0)
			{
				slot = xbr_widen_to_cover(idx, node, addr);
				bi->path[level].dirty = true;
			}
			if (level == 1)
				break;
			child = XbrInternalEntries(node)[slot].child;
			if (bi->path[level - 1].node != NULL &&
				bi->path[level - 1].node->page == (PageId) child)
				break;
			if (bi->path[level - 1].node != NULL)
			{
				/* leaving a subtree: merge it, then locate again */
				finish_below(bi, level - 1);
				continue;
			}
			bi->path[level - 1].node = read_path_node(bi, node, child);
			bi->path[level - 1].dirty = false;
			bi->path[level - 1].is_new = false;
			break;
		}
		entry = &XbrInternalEntries(node)[slot];
		if (entry->flags & XBR_EMPTY)
		{
			entry->dbr.xmin = entry->dbr.xmax = e->x;
			entry->dbr.ymin = entry->dbr.ymax = e->y;
			entry->flags &= ~XBR_EMPTY;
			bi->path[level].dirty = true;
		}
		else if (!(e->x >= entry->dbr.xmin && e->x <= entry->dbr.xmax &&
				   e->y >= entry->dbr.ymin && e->y <= entry->dbr.ymax))
		{
			mbr_extend_point(&entry->dbr, e->x, e->y);
			bi->path[level].dirty = true;
		}
		if (level == 1)
		{
			if (bi->npending == bi->maxpending)
				apply_pending(bi);
			bi->pending[bi->npending].leaf = entry->child;
			bi->pending[bi->npending].seq = bi->seq++;
			bi->pending[bi->npending].e = *e;
			bi->npending++;
		}
	}
}

/*
 * Insert the batch, sorted, into the tree.  Does not commit: the caller
 * commits once, so that the batch is one modification.
 */
void
xbr_bulkins_finish(StructIndex *idx, BulkSpill *spill)
{
	XbrBulkIns *bi = (XbrBulkIns *) spill;
	int64		budget = (int64) maintenance_work_mem * 1024;
	TreeNode   *root;

	Assert(bi->kind == XBR_SPILL_INSERT);
	idx->ns->write_pages_singly = !bi->ssd;
	progress_phase(idx->progress, "sorting the batch", "points", bi->npoints);
	spill_sort_perform(bi->sort);
	if (bi->npoints == 0)
	{
		spill_sort_end(bi->sort);
		pfree(bi);
		return;
	}
	bi->maxpending = Max((int64) 1024, budget / 4 / (int64) sizeof(PendingPoint));
	bi->pending = MemoryContextAllocHuge(CurrentMemoryContext,
										 bi->maxpending * sizeof(PendingPoint));
	bi->leaf_group = (int) Min((int64) PG_INT32_MAX,
							   Max((int64) 1, budget / 4 / (int64) idx->ns->page_size));

	root = tree_read_root(idx);
	if (root->level == 0)
	{
		/* a root leaf: a new root over it, kept only if the leaf splits */
		XbrInternalEntry e;
		TreeNode   *over = ns_new_node(idx->ns, InvalidPageId, 1);

		xbr_fill_entry(&e, xbr_addr_root(), root);
		add_entry(over, &e);
		bi->root_leaf = root->page;
		tree_free_node(root);
		root = over;
		bi->path[1].is_new = true;
	}
	bi->top = root->level;
	bi->path[bi->top].node = root;

	progress_phase(idx->progress, "inserting the batch", "points", bi->npoints);
	for (int64 i = 0; i < bi->npoints; i++)
	{
		XbrLeafEntry e;
		XbrAddr		addr;

		CHECK_FOR_INTERRUPTS();
		memset(&e, 0, sizeof(e));
		addr.code = spill_points_get(bi->sort, &e.x, &e.y, &e.id);
		addr.len = XBR_MAX_DEPTH;
		insert_point(bi, &e, addr);
		progress_step(idx->progress, 1);
	}
	spill_sort_end(bi->sort);
	finish_below(bi, bi->top);
	pfree(bi->pending);
	pfree(bi);
}
