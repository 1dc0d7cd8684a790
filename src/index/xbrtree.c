/*-------------------------------------------------------------------------
 *
 * xbrtree.c
 *	  The xBR+-tree of Roumelis, Vassilakopoulos, Corral and Manolopoulos
 *	  (DEXA 2015; "Efficient query processing on large spatial databases: a
 *	  performance study", JSS 132, 2017), after the xBR-tree of
 *	  Vassilakopoulos and Manolopoulos (2000); structure as in Carniel et al.
 *	  2018 section 3.1 (layouts: xbrtree.h).
 *
 * Insert: point location from the root, at each node following the entry
 * whose quadrant address is the longest prefix of the point's address (the
 * entry whose region holds the point), enlarging DBRs on the way; the
 * point joins its leaf in (x, y, id) order.  An overflowing leaf or
 * internal node is split by quadrant subdivision (xbrtree_split.c); a
 * split of the root grows the tree, so all leaves stay at one depth.
 *
 * A point that no entry of a node covers lies where the node holds no
 * point yet (a bulk-loaded node only has quadrants for its data; merges
 * can leave such room too).  The outermost entry whose quadrant is nearest
 * in the quadtree (the longest common prefix) is then widened to the
 * smallest quadrant holding both: it has no enclosing entry, so nothing
 * else of the node is cut, and the room it gains held no point.  [This
 * rule is festival's: the papers' trees always cover their nodes.]
 *
 * Delete: point location to the unique leaf, removal, exact DBRs on the
 * way back up.  A subtree left without points is removed with its pages
 * (unless it is its parent's only entry: then the parent's subtree is
 * empty, and is removed one level up), so that only an empty tree has an
 * empty node, its root leaf.  A node left with fewer entries than
 * merge_fill percent of its capacity is merged when the result fits in
 * one node:
 *	(a) into the node of the enclosing entry (longest proper prefix): the
 *		enclosing region simply takes the hole back;
 *	(b) else the smallest node of an entry nested directly in it is pulled
 *		in: the node's region takes the nested hole;
 *	(c) else, for an outermost entry, with the nearest outermost entry in
 *		Z order: both become one entry for their smallest common quadrant.
 * The papers' own merging rules were not available to us (the notes do not
 * give them); (a)-(c) are festival's, each one keeps every point in the
 * region point location leads to.  A root left with a single entry is
 * replaced by its child.  XBR_EMPTY marks the entry of an empty subtree
 * while a deletion climbs the tree; no finished operation leaves one.
 *
 * Window searches and kNN are the generic ones (traverse.c, knn.c) over the
 * DBRs, which cover their subtrees exactly; point queries use point
 * location, and festival.query_batch the level-by-level batches of Fevgas
 * 2019 §3.6 (xbrtree_batch.c).  The SSD algorithms of that section and
 * their HDD originals are in xbrtree_phases.c (bulk loading in four phases)
 * and xbrtree_bulkins.c (bulk insertion); they merge subtrees into the tree
 * with xbr_insert_at, insertion generalised to any level.
 *
 * IDENTIFICATION
 *	  src/index/xbrtree.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/xbrtree.h"

#include <math.h>

#include "stats/jsonbuild.h"

/* The xBR+-tree's options, read once by xbr_setup. */
typedef struct XbrOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	OptionBox	extent;
	int64		max_fill;
	int64		merge_fill;
} XbrOptions;

static const OptionSpec xbr_options[] = {
	{
		.name = "extent", .type = OPT_BOX,
		.description = "The space divided into quadrants, [xmin, ymin, xmax, ymax]; points outside it are refused. Default: the source table's extent.",
		.offset = offsetof(XbrOptions, extent)
	},
	{
		.name = "max_fill", .type = OPT_INT, .default_number = 100,
		.min = 10, .max = 100,
		.description = "Node capacity, in percent of the entries a page holds (leaves and internal nodes).",
		.offset = offsetof(XbrOptions, max_fill)
	},
	{
		.name = "merge_fill", .type = OPT_INT, .default_number = 30,
		.min = 0, .max = 50,
		.description = "After a deletion, a node with fewer entries than this percent of its capacity is merged with a neighbouring quadrant's node when both fit in one; empty leaves always are.",
		.offset = offsetof(XbrOptions, merge_fill)
	},
	{0}
};

static const BuildMethod xbr_build_methods[] = {
	{"bulk", "xBR+-tree bulk loading: points sorted in Z order and partitioned by quadrants into full leaves, then levels built bottom-up the same way"},
	{"four_phase", "four-phase bulk loading (Roumelis et al. 2016, 2018): quadrant sub-files split until they fit in memory, an in-memory tree per block merged into the disk tree, every node written alone"},
	{"four_phase_ssd", "the four-phase loading adapted to SSDs (Roumelis, Fevgas et al. 2019): large temporary-file requests, nodes written in batches; the same tree"},
	{NULL, NULL}
};

/* ------------------------------------------------------------------ */
/* NodeOps                                                            */
/* ------------------------------------------------------------------ */

static int
compare_identity(const void *a, const void *b, uint16 level)
{
	if (level == 0)
		return point_entry_cmp(a, b);
	return xbr_addr_cmp(xbr_entry_addr(a), xbr_entry_addr(b));
}

static void
entry_mbr(const void *entry, uint16 level, Mbr *box)
{
	if (level == 0)
	{
		const XbrLeafEntry *e = entry;

		box->xmin = box->xmax = e->x;
		box->ymin = box->ymax = e->y;
	}
	else
		*box = ((const XbrInternalEntry *) entry)->dbr;
}

static int64
entry_ref(const void *entry, uint16 level)
{
	if (level == 0)
		return ((const XbrLeafEntry *) entry)->id;
	return ((const XbrInternalEntry *) entry)->child;
}

static const NodeOps xbr_node_ops = {
	.structure = "xbrtree",
	.leaf_entry_size = sizeof(XbrLeafEntry),
	.internal_entry_size = sizeof(XbrInternalEntry),
	.compare_identity = compare_identity,
	.entry_mbr = entry_mbr,
	.entry_ref = entry_ref,
	.ordered_entries = true		/* leaves in (x, y, id), internal in address order */
};

/* ------------------------------------------------------------------ */
/* addresses and node helpers (shared with split, bulk and check)      */
/* ------------------------------------------------------------------ */

/* Grid cell of a coordinate: 32 bits, half-open cells, the top edge in the last. */
static uint32
grid_cell(double v, double lo, double hi)
{
	double		t = (v - lo) / (hi - lo) * 4294967296.0;

	if (!(t > 0.0))
		return 0;
	if (t >= 4294967295.0)
		return PG_UINT32_MAX;
	return (uint32) t;
}

/*
 * The address of the grid cell holding a point (XBR_MAX_DEPTH digits); false
 * when the point is outside the extent.  Digit = 2 * south + east: NW 0,
 * NE 1, SW 2, SE 3 (Carniel et al. 2018 §3.1).  A point on a quadrant border
 * belongs to the east / north quadrant.
 */
bool
xbr_point_addr(const XbrState *st, double x, double y, XbrAddr *addr)
{
	uint32		cx,
				cy;

	if (!(x >= st->extent.xmin && x <= st->extent.xmax &&
		  y >= st->extent.ymin && y <= st->extent.ymax))
		return false;
	cx = grid_cell(x, st->extent.xmin, st->extent.xmax);
	cy = grid_cell(y, st->extent.ymin, st->extent.ymax);
	addr->code = 0;
	addr->len = XBR_MAX_DEPTH;
	for (int i = 0; i < XBR_MAX_DEPTH; i++)
	{
		uint64		east = (cx >> (31 - i)) & 1;
		uint64		south = 1 - ((cy >> (31 - i)) & 1);

		addr->code |= ((south << 1) | east) << (62 - 2 * i);
	}
	return true;
}

/* The point's address, or an error naming the extent. */
void
xbr_point_admit(StructIndex *idx, double x, double y, XbrAddr *addr)
{
	const XbrState *st = (const XbrState *) idx->state;

	if (!xbr_point_addr(st, x, y, addr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("point (%g %g) lies outside the extent of index \"%s\"",
						x, y, idx->name),
				 errdetail("The xBR+-tree divides the extent [%g, %g, %g, %g] into quadrants and indexes only points inside it.",
						   st->extent.xmin, st->extent.ymin, st->extent.xmax, st->extent.ymax),
				 errhint("Recreate the index with a wider \"extent\" option, e.g. options => '{\"extent\": [xmin, ymin, xmax, ymax]}'.")));
}

XbrAddr
xbr_leaf_entry_addr(const XbrState *st, const XbrLeafEntry *e)
{
	XbrAddr		a;

	if (!xbr_point_addr(st, e->x, e->y, &a))
		elog(ERROR, "xBR+-tree leaf entry (%g %g) lies outside the extent", e->x, e->y);
	return a;
}

/* The rectangle of a quadrant within the extent. */
void
xbr_quadrant_box(const XbrState *st, XbrAddr a, Mbr *box)
{
	uint64		cx = 0,
				cy = 0;
	double		w = st->extent.xmax - st->extent.xmin;
	double		h = st->extent.ymax - st->extent.ymin;

	for (int i = 0; i < a.len; i++)
	{
		int			d = xbr_addr_digit(a, i);

		cx = 2 * cx + (d & 1);
		cy = 2 * cy + ((d & 2) ? 0 : 1);
	}
	box->xmin = st->extent.xmin + w * ldexp((double) cx, -a.len);
	box->xmax = st->extent.xmin + w * ldexp((double) (cx + 1), -a.len);
	box->ymin = st->extent.ymin + h * ldexp((double) cy, -a.len);
	box->ymax = st->extent.ymin + h * ldexp((double) (cy + 1), -a.len);
}

/* The DBR of a node's points; *empty when its subtree holds none. */
void
xbr_node_dbr(const TreeNode *node, Mbr *box, bool *empty)
{
	mbr_set_empty(box);
	*empty = true;
	for (uint32 i = 0; i < node->nentries; i++)
	{
		if (node->level == 0)
		{
			const XbrLeafEntry *e = &XbrLeafEntries(node)[i];

			mbr_extend_point(box, e->x, e->y);
			*empty = false;
		}
		else
		{
			const XbrInternalEntry *e = &XbrInternalEntries(node)[i];

			if (e->flags & XBR_EMPTY)
				continue;
			mbr_extend(box, &e->dbr);
			*empty = false;
		}
	}
}

/*
 * An entry's DBR and empty flag from its child; an empty subtree keeps a
 * degenerate box where its DBR was (finite, so that area-based flushing
 * policies and distances stay meaningful).  True when the entry changed.
 */
static bool
refresh_entry(XbrInternalEntry *e, const TreeNode *child)
{
	XbrInternalEntry before = *e;
	Mbr			box;
	bool		empty;

	xbr_node_dbr(child, &box, &empty);
	if (!empty)
	{
		e->dbr = box;
		e->flags &= ~XBR_EMPTY;
	}
	else
	{
		e->dbr.xmax = e->dbr.xmin;
		e->dbr.ymax = e->dbr.ymin;
		e->flags |= XBR_EMPTY;
	}
	return memcmp(&before, e, sizeof(before)) != 0;
}

/* A new entry for a child node with the given quadrant. */
void
xbr_fill_entry(XbrInternalEntry *e, XbrAddr a, const TreeNode *child)
{
	memset(e, 0, sizeof(*e));
	e->code = a.code;
	e->len = a.len;
	e->child = (int64) child->page;
	refresh_entry(e, child);
}

/*
 * The shape flags: an entry is a complete square when no later entry of
 * the node is nested in it; nested entries immediately follow it in
 * address order, so looking at the next entry is enough.
 */
void
xbr_set_flags(TreeNode *node)
{
	XbrInternalEntry *e = XbrInternalEntries(node);

	if (node->level == 0)
		return;
	for (uint32 i = 0; i < node->nentries; i++)
	{
		bool		complete = !(i + 1 < node->nentries &&
								 xbr_addr_contains(xbr_entry_addr(&e[i]),
												   xbr_entry_addr(&e[i + 1])));

		e[i].flags = (e[i].flags & ~XBR_COMPLETE) | (complete ? XBR_COMPLETE : 0);
	}
}

static int
sort_leaf_cmp(const void *a, const void *b)
{
	int			c = point_entry_cmp(a, b);

	return c != 0 ? c : memcmp(a, b, sizeof(XbrLeafEntry));
}

static int
sort_internal_cmp(const void *a, const void *b)
{
	int			c = xbr_addr_cmp(xbr_entry_addr(a), xbr_entry_addr(b));

	return c != 0 ? c : memcmp(a, b, sizeof(XbrInternalEntry));
}

/* Entries in their identity order, ties by content (as eFIND returns them). */
void
xbr_sort_entries(TreeNode *node)
{
	if (node->level == 0)
		qsort(node->entries, node->nentries, sizeof(XbrLeafEntry), sort_leaf_cmp);
	else
	{
		qsort(node->entries, node->nentries, sizeof(XbrInternalEntry), sort_internal_cmp);
		xbr_set_flags(node);
	}
}

/* Point location in one node: the entry with the longest prefix, or -1. */
int
xbr_locate(const TreeNode *node, XbrAddr point)
{
	const XbrInternalEntry *e = XbrInternalEntries(node);
	int			best = -1;

	for (uint32 i = 0; i < node->nentries; i++)
		if (xbr_addr_contains(xbr_entry_addr(&e[i]), point) &&
			(best < 0 || e[i].len > e[best].len))
			best = i;
	return best;
}

/* Insert an internal entry at its place in address order; its slot. */
int
xbr_insert_internal_entry(TreeNode *node, const XbrInternalEntry *entry)
{
	XbrInternalEntry *e = XbrInternalEntries(node);
	XbrAddr		a = xbr_entry_addr(entry);
	int			pos = node->nentries;

	Assert(node->nentries < node->capacity);
	while (pos > 0 && xbr_addr_cmp(xbr_entry_addr(&e[pos - 1]), a) > 0)
		pos--;
	memmove(&e[pos + 1], &e[pos], (node->nentries - pos) * sizeof(XbrInternalEntry));
	e[pos] = *entry;
	node->nentries++;
	xbr_set_flags(node);
	return pos;
}

/*
 * Room for n entries in a node held in memory (the bulk insertion's nodes,
 * which may hold more than a page until they are split); the node must not
 * be written before it fits a page again (ns_serialize refuses it).
 */
void
xbr_node_reserve(TreeNode *node, uint32 n)
{
	if (n <= node->capacity)
		return;
	n = Max(n, node->capacity * 2);
	node->entries = repalloc_huge(node->entries, (size_t) n * node->entry_size);
	node->capacity = n;
}

static void
remove_entry(TreeNode *node, int slot)
{
	memmove(node->entries + (size_t) slot * node->entry_size,
			node->entries + (size_t) (slot + 1) * node->entry_size,
			(size_t) (node->nentries - slot - 1) * node->entry_size);
	node->nentries--;
	memset(node->entries + (size_t) node->nentries * node->entry_size, 0, node->entry_size);
	xbr_set_flags(node);
}

/* The slot of the first leaf entry not before e. */
static int
leaf_lower_bound(const TreeNode *leaf, const XbrLeafEntry *e)
{
	int			lo = 0,
				hi = leaf->nentries;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (point_entry_cmp(&XbrLeafEntries(leaf)[mid], e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entry whose quadrant is the longest proper prefix of slot's, or -1. */
static int
encloser(const TreeNode *node, int slot)
{
	const XbrInternalEntry *e = XbrInternalEntries(node);
	XbrAddr		a = xbr_entry_addr(&e[slot]);

	/* prefixes sort before, the longest one last */
	for (int j = slot - 1; j >= 0; j--)
		if (xbr_addr_contains(xbr_entry_addr(&e[j]), a) &&
			!xbr_addr_equal(xbr_entry_addr(&e[j]), a))
			return j;
	return -1;
}

static XbrAddr
parent_quadrant(const PathStep *path, int depth)
{
	if (depth == 0)
		return xbr_addr_root();
	return xbr_entry_addr(&XbrInternalEntries(path[depth - 1].node)[path[depth - 1].slot]);
}

/* ------------------------------------------------------------------ */
/* insertion                                                          */
/* ------------------------------------------------------------------ */

/*
 * No entry covers the point: widen the outermost entry nearest to it in
 * the quadtree to the smallest quadrant holding both (see the file
 * header).  Returns the entry's slot after re-sorting.
 */
int
xbr_widen_to_cover(StructIndex *idx, TreeNode *node, XbrAddr point)
{
	XbrInternalEntry *e = XbrInternalEntries(node);
	int			best = -1;
	int			best_len = -1;
	int64		child;
	XbrAddr		common;

	if (node->nentries == 0)
		fest_report_corrupt(idx->name, node->page, "An internal node has no entries.");
	for (uint32 i = 0; i < node->nentries; i++)
	{
		int			len;

		if (encloser(node, i) >= 0)
			continue;
		len = xbr_addr_common(xbr_entry_addr(&e[i]), point).len;
		if (len > best_len)
		{
			best = i;
			best_len = len;
		}
	}
	common = xbr_addr_common(xbr_entry_addr(&e[best]), point);
	e[best].code = common.code;
	e[best].len = common.len;
	child = e[best].child;
	xbr_sort_entries(node);
	for (uint32 i = 0; i < node->nentries; i++)
		if (e[i].child == child)
			return i;
	pg_unreachable();
}

/*
 * Insert one item at a level: a point into its leaf (level 0), or the entry
 * of a subtree into a node of that level (level >= 1: the merges of the
 * bulk loading and bulk insertion of Fevgas 2019 §3.6, xbrtree_phases.c and
 * xbrtree_bulkins.c).  addr is the item's quadrant (a point's cell), box
 * its DBR.  The node is found by point location of the quadrant, from the
 * root: at each node the entry with the longest prefix of addr, widened
 * (xbr_widen_to_cover) where none holds it, its DBR enlarged to box; an
 * overflowing node is split, and splits climb to the root, which a split
 * of its own makes one level higher.
 *
 * An entry's quadrant must hold no point of the tree that point location
 * does not lead into it (the merges insert subtrees of quadrants the tree
 * holds no point of), and no entry of the node may have the same address.
 */
void
xbr_insert_at(StructIndex *idx, uint16 level, const void *item, XbrAddr addr,
			  const Mbr *box)
{
	XbrState   *st = (XbrState *) idx->state;
	PathStep	path[FEST_MAX_LEVELS];
	bool		dirty[FEST_MAX_LEVELS];
	TreeNode   *node;
	TreeNode   *sibling = NULL;
	XbrAddr		sibling_addr = {0, 0};
	int			depth = 0;

	node = tree_read_root(idx);
	if (node->level < level)
		elog(ERROR, "xBR+-tree of index \"%s\" has no level %u to insert into",
			 idx->name, level);
	while (node->level > level)
	{
		int			slot = xbr_locate(node, addr);
		bool		changed = false;
		XbrInternalEntry *e;

		idx->stats->entries_examined += node->nentries;
		if (slot < 0)
		{
			slot = xbr_widen_to_cover(idx, node, addr);
			changed = true;
		}
		e = &XbrInternalEntries(node)[slot];
		if (e->flags & XBR_EMPTY)
		{
			e->dbr = *box;
			e->flags &= ~XBR_EMPTY;
			changed = true;
		}
		else if (!mbr_contains(&e->dbr, box))
		{
			mbr_extend(&e->dbr, box);
			changed = true;
		}
		path[depth].node = node;
		path[depth].slot = slot;
		dirty[depth] = changed;
		depth++;
		node = tree_read_child(idx, node, e->child);
	}

	if (level == 0)
	{
		/* the leaf, in (x, y, id) order */
		const XbrLeafEntry *entry = item;
		int			pos = leaf_lower_bound(node, entry);

		memmove(&XbrLeafEntries(node)[pos + 1], &XbrLeafEntries(node)[pos],
				(node->nentries - pos) * sizeof(XbrLeafEntry));
		XbrLeafEntries(node)[pos] = *entry;
		node->nentries++;
		if (node->nentries > st->leaf_max)
			sibling = xbr_split_leaf(idx, node, parent_quadrant(path, depth), &sibling_addr);
		else
			ns_write(idx->ns, node, NS_WRITE_UPDATE);
	}
	else
	{
		const XbrInternalEntry *entry = item;

		for (uint32 i = 0; i < node->nentries; i++)
			if (xbr_addr_equal(xbr_entry_addr(&XbrInternalEntries(node)[i]), addr))
				elog(ERROR, "xBR+-tree of index \"%s\" already has an entry for the quadrant of a merged subtree at page " UINT64_FORMAT,
					 idx->name, node->page);
		Assert(xbr_addr_equal(xbr_entry_addr(entry), addr));
		xbr_insert_internal_entry(node, entry);
		if (node->nentries > st->internal_max)
			sibling = xbr_split_internal(idx, node, parent_quadrant(path, depth),
										 &sibling_addr);
		else
			ns_write(idx->ns, node, NS_WRITE_UPDATE);
	}

	for (int d = depth - 1; d >= 0; d--)
	{
		TreeNode   *parent = path[d].node;

		if (sibling != NULL)
		{
			XbrInternalEntry added;

			/* the split node kept part of its entries: exact DBR again */
			refresh_entry(&XbrInternalEntries(parent)[path[d].slot], node);
			xbr_fill_entry(&added, sibling_addr, sibling);
			xbr_insert_internal_entry(parent, &added);
			if (parent->nentries > st->internal_max)
				sibling = xbr_split_internal(idx, parent, parent_quadrant(path, d),
											 &sibling_addr);
			else
			{
				sibling = NULL;
				ns_write(idx->ns, parent, NS_WRITE_UPDATE);
			}
		}
		else if (dirty[d])
			ns_write(idx->ns, parent, NS_WRITE_UPDATE);
		node = parent;
	}

	if (sibling != NULL)
	{
		/* the root split: a new root over the whole extent and the new quadrant */
		TreeNode   *root = ns_new_node(idx->ns, ns_alloc(idx->ns, node->level + 1),
									   node->level + 1);
		XbrInternalEntry half;

		xbr_fill_entry(&half, xbr_addr_root(), node);
		xbr_insert_internal_entry(root, &half);
		xbr_fill_entry(&half, sibling_addr, sibling);
		xbr_insert_internal_entry(root, &half);
		ns_write(idx->ns, root, NS_WRITE_NEW);
		ns_set_root(idx->ns, root->page, idx->ns->meta->height + 1);
	}
}

static void
xbr_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	XbrAddr		point;
	XbrLeafEntry entry;

	xbr_point_admit(idx, box->xmin, box->ymin, &point);
	entry.x = box->xmin;
	entry.y = box->ymin;
	entry.id = id;
	xbr_insert_at(idx, 0, &entry, point, box);
}

/* ------------------------------------------------------------------ */
/* point location, contains, deletion                                 */
/* ------------------------------------------------------------------ */

/*
 * The path to the leaf whose region holds the point, and the slot of the
 * entry (x, y, id) there; false when there is none.
 */
static bool
find_entry(StructIndex *idx, int64 id, const Mbr *box, PathStep *path, int *depth)
{
	XbrState   *st = (XbrState *) idx->state;
	XbrAddr		point;
	XbrLeafEntry entry;
	TreeNode   *node;
	int			d = 0;
	int			pos;

	if (!mbr_is_point(box) || !xbr_point_addr(st, box->xmin, box->ymin, &point))
		return false;
	entry.x = box->xmin;
	entry.y = box->ymin;
	entry.id = id;

	node = tree_read_root(idx);
	while (node->level > 0)
	{
		int			slot = xbr_locate(node, point);

		idx->stats->entries_examined += node->nentries;
		if (slot < 0)
			return false;
		path[d].node = node;
		path[d].slot = slot;
		d++;
		node = tree_read_child(idx, node, XbrInternalEntries(node)[slot].child);
	}
	idx->stats->entries_examined += node->nentries;
	pos = leaf_lower_bound(node, &entry);
	if (pos >= (int) node->nentries ||
		point_entry_cmp(&XbrLeafEntries(node)[pos], &entry) != 0)
		return false;
	path[d].node = node;
	path[d].slot = pos;
	*depth = d;
	return true;
}

static bool
xbr_contains(StructIndex *idx, int64 id, const Mbr *box)
{
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;

	return find_entry(idx, id, box, path, &depth);
}

/* dst takes all of src's entries, in order. */
static void
absorb(TreeNode *dst, const TreeNode *src)
{
	Assert(dst->nentries + src->nentries <= dst->capacity);
	memcpy(dst->entries + (size_t) dst->nentries * dst->entry_size, src->entries,
		   (size_t) src->nentries * src->entry_size);
	dst->nentries += src->nentries;
	xbr_sort_entries(dst);
}

static bool
node_is_empty(const TreeNode *node)
{
	Mbr			box;
	bool		empty;

	xbr_node_dbr(node, &box, &empty);
	return empty;
}

/* Release the pages of a subtree without points. */
static void
release_subtree(StructIndex *idx, const TreeNode *node)
{
	for (uint32 i = 0; node->level > 0 && i < node->nentries; i++)
	{
		TreeNode   *child = tree_read_child(idx, node, XbrInternalEntries(node)[i].child);

		release_subtree(idx, child);
		tree_free_node(child);
	}
	ns_release(idx->ns, node->page);
}

/*
 * Merge the underfull child (entry k of parent) by rules (a)-(c) of the
 * file header.  Writes or releases the children involved and changes
 * parent in memory; false (nothing done) when no merge fits.
 */
static bool
try_merge(StructIndex *idx, TreeNode *parent, int k, TreeNode *child)
{
	XbrState   *st = (XbrState *) idx->state;
	XbrInternalEntry *e = XbrInternalEntries(parent);
	uint32		max = child->level == 0 ? st->leaf_max : st->internal_max;
	uint32		low = child->level == 0 ? st->leaf_merge : st->internal_merge;
	XbrAddr		ak = xbr_entry_addr(&e[k]);
	int			j = encloser(parent, k);
	int			best = -1;
	TreeNode   *best_node = NULL;

	if (node_is_empty(child))
	{
		/*
		 * No point left below: the entry goes with its pages; its quadrant
		 * becomes room that widening reclaims.  A parent's only entry
		 * stays: then the parent's subtree is empty, one level up.
		 */
		if (parent->nentries == 1)
			return false;
		release_subtree(idx, child);
		remove_entry(parent, k);
		return true;
	}
	if (child->nentries >= low)
		return false;

	/* (a) into the enclosing entry's node */
	if (j >= 0)
	{
		TreeNode   *outer = tree_read_child(idx, parent, e[j].child);

		if (outer->nentries + child->nentries <= max)
		{
			absorb(outer, child);
			ns_write(idx->ns, outer, NS_WRITE_UPDATE);
			ns_release(idx->ns, child->page);
			refresh_entry(&e[j], outer);
			remove_entry(parent, k);
			return true;
		}
		tree_free_node(outer);
	}

	/* (b) the smallest node nested directly in it */
	for (uint32 i = k + 1; i < parent->nentries &&
		 xbr_addr_contains(ak, xbr_entry_addr(&e[i])); i++)
	{
		TreeNode   *inner;

		if (encloser(parent, i) != k)
			continue;
		inner = tree_read_child(idx, parent, e[i].child);
		if (child->nentries + inner->nentries <= max &&
			(best_node == NULL || inner->nentries < best_node->nentries))
		{
			if (best_node != NULL)
				tree_free_node(best_node);
			best = i;
			best_node = inner;
		}
		else
			tree_free_node(inner);
	}
	if (best_node != NULL)
	{
		absorb(child, best_node);
		ns_write(idx->ns, child, NS_WRITE_UPDATE);
		ns_release(idx->ns, best_node->page);
		remove_entry(parent, best);		/* after k: k keeps its slot */
		refresh_entry(&e[k], child);
		return true;
	}

	/* (c) an outermost entry with its nearest outermost neighbour */
	if (j < 0)
	{
		int			prev = -1,
					next = -1;
		int			order[2];

		for (int i = k - 1; i >= 0; i--)
			if (encloser(parent, i) < 0)
			{
				prev = i;
				break;
			}
		for (uint32 i = k + 1; i < parent->nentries; i++)
			if (!xbr_addr_contains(ak, xbr_entry_addr(&e[i])))
			{
				/*
				 * outermost: an entry enclosing it would lie between k
				 * and it in address order, hence inside k, and so would it
				 */
				next = i;
				break;
			}
		/* the neighbour sharing the longer prefix first */
		if (prev >= 0 && next >= 0 &&
			xbr_addr_common(ak, xbr_entry_addr(&e[next])).len >
			xbr_addr_common(ak, xbr_entry_addr(&e[prev])).len)
		{
			order[0] = next;
			order[1] = prev;
		}
		else
		{
			order[0] = prev;
			order[1] = next;
		}
		for (int o = 0; o < 2; o++)
		{
			int			s = order[o];
			TreeNode   *other;
			XbrAddr		common;

			if (s < 0)
				continue;
			other = tree_read_child(idx, parent, e[s].child);
			if (child->nentries + other->nentries > max)
			{
				tree_free_node(other);
				continue;
			}
			common = xbr_addr_common(ak, xbr_entry_addr(&e[s]));
			absorb(child, other);
			ns_write(idx->ns, child, NS_WRITE_UPDATE);
			ns_release(idx->ns, other->page);
			e[k].code = common.code;
			e[k].len = common.len;
			refresh_entry(&e[k], child);
			remove_entry(parent, s);
			xbr_sort_entries(parent);
			return true;
		}
	}
	return false;
}

static bool
xbr_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;
	TreeNode   *node;
	bool		changed = true;

	if (!find_entry(idx, id, box, path, &depth))
		return false;
	node = path[depth].node;
	remove_entry(node, path[depth].slot);

	for (int d = depth - 1; d >= 0; d--)
	{
		TreeNode   *parent = path[d].node;
		bool		parent_changed = false;

		if (changed)
		{
			if (try_merge(idx, parent, path[d].slot, node))
				parent_changed = true;
			else
			{
				ns_write(idx->ns, node, NS_WRITE_UPDATE);
				parent_changed = refresh_entry(&XbrInternalEntries(parent)[path[d].slot], node);
			}
		}
		node = parent;
		changed = parent_changed;
	}
	if (changed)
		ns_write(idx->ns, node, NS_WRITE_UPDATE);

	/* a root with a single entry is replaced by its child */
	for (;;)
	{
		TreeNode   *root = tree_read_root(idx);

		if (root->level == 0 || root->nentries != 1)
			break;
		ns_release(idx->ns, root->page);
		ns_set_root(idx->ns, (PageId) XbrInternalEntries(root)[0].child,
					idx->ns->meta->height - 1);
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* set-up                                                             */
/* ------------------------------------------------------------------ */

static void
xbr_init_empty(StructIndex *idx)
{
	TreeNode   *root = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);

	ns_write(idx->ns, root, NS_WRITE_NEW);
	ns_set_root(idx->ns, root->page, 1);
}

static void *
xbr_setup(const FestConfig *config, uint32 page_size)
{
	XbrState   *st = palloc0(sizeof(XbrState));
	uint32		body = page_size - FEST_PAGE_HEADER_SIZE;
	XbrOptions	opts;
	int64		max_fill;
	int64		merge_fill;

	OPTIONS_FILL(config, xbr_options, &opts);
	max_fill = opts.max_fill;
	merge_fill = opts.merge_fill;
	if (!opts.extent.set)
		config_error(config, "The xBR+-tree divides a fixed extent into quadrants, and none is given.",
					 "Give options => '{\"extent\": [xmin, ymin, xmax, ymax]}', or a source table to take it from.");
	st->extent.xmin = opts.extent.xmin;
	st->extent.ymin = opts.extent.ymin;
	st->extent.xmax = opts.extent.xmax;
	st->extent.ymax = opts.extent.ymax;
	st->leaf_max = (uint32) floor((double) (body / sizeof(XbrLeafEntry)) * max_fill / 100.0);
	st->internal_max = (uint32) floor((double) (body / sizeof(XbrInternalEntry)) * max_fill / 100.0);
	st->leaf_merge = (uint32) floor((double) st->leaf_max * merge_fill / 100.0);
	st->internal_merge = (uint32) floor((double) st->internal_max * merge_fill / 100.0);

	/* the bulk loader needs 8 entries per internal node to make progress */
	if (st->leaf_max < 4 || st->internal_max < 8)
		config_error(config,
					 psprintf("A %u-byte page with max_fill %d%% holds %u points per leaf and %u entries per internal node; the xBR+-tree needs at least 4 and 8.",
							  page_size, (int) max_fill, st->leaf_max, st->internal_max),
					 "Use a larger page_size or max_fill.");
	return st;
}

static void
xbr_describe(StructIndex *idx, JsonbParseState **state)
{
	XbrState   *st = (XbrState *) idx->state;

	jb_int(state, "leaf_max_entries", st->leaf_max);
	jb_int(state, "internal_max_entries", st->internal_max);
	jb_int(state, "leaf_merge_below", st->leaf_merge);
	jb_int(state, "internal_merge_below", st->internal_merge);
	jb_int(state, "leaf_entry_bytes", sizeof(XbrLeafEntry));
	jb_int(state, "internal_entry_bytes", sizeof(XbrInternalEntry));
	jb_int(state, "grid_depth", XBR_MAX_DEPTH);
}

static bool
xbr_entry_region(StructIndex *idx, const void *entry, uint16 level, Mbr *region)
{
	if (level == 0)
		return false;
	xbr_quadrant_box((XbrState *) idx->state,
					 xbr_entry_addr((const XbrInternalEntry *) entry), region);
	return true;
}

/* The bulk loaders' entry points, by method and by BulkSpill. */
static void
xbr_bulk_load_any(StructIndex *idx, BulkItem *items, int64 n, const char *method)
{
	if (xbr_phases_method(method))
		xbr_phases_load(idx, items, n, method);
	else
		xbr_bulk_load(idx, items, n, method);
}

static BulkSpill *
xbr_spill_begin_any(StructIndex *idx, const char *method)
{
	if (xbr_phases_method(method))
		return xbr_phases_begin(idx, method);
	return xbr_spill_begin(idx, method);
}

static void
xbr_spill_put_any(BulkSpill *spill, const BulkItem *item)
{
	if (*(XbrSpillKind *) spill == XBR_SPILL_PHASES)
		xbr_phases_put(spill, item);
	else
		xbr_spill_put(spill, item);
}

static void
xbr_spill_load_any(StructIndex *idx, BulkSpill *spill)
{
	if (*(XbrSpillKind *) spill == XBR_SPILL_PHASES)
		xbr_phases_finish(idx, spill);
	else
		xbr_spill_load(idx, spill);
}

const StructureOps xbrtree_structure = {
	.name = "xbrtree",
	.description = "xBR+-tree (Roumelis et al. 2015/2017), points only",
	.options = xbr_options,
	.node_ops = &xbr_node_ops,
	.setup = xbr_setup,
	.init_empty = xbr_init_empty,
	.insert = xbr_insert,
	.remove = xbr_remove,
	.contains = xbr_contains,
	.check = xbr_check,
	.describe = xbr_describe,
	.points_only = true,
	.needs_extent = true,
	.build_methods = xbr_build_methods,
	.bulk_load = xbr_bulk_load_any,
	.bulk_spill_begin = xbr_spill_begin_any,
	.bulk_bytes_per_object = XBR_BULK_BYTES_PER_POINT,
	.bulk_spill_put = xbr_spill_put_any,
	.bulk_spill_load = xbr_spill_load_any,
	.insert_methods = xbr_insert_methods,
	.bulk_insert_begin = xbr_bulkins_begin,
	.bulk_insert_put = xbr_bulkins_put,
	.bulk_insert_finish = xbr_bulkins_finish,
	.search = xbr_search,
	.search_batch = xbr_search_batch,
	.entry_region = xbr_entry_region
};
