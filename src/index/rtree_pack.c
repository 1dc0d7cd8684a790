/*-------------------------------------------------------------------------
 *
 * rtree_pack.c
 *	  Bulk loading of the R-tree family by packing: Sort-Tile-Recursive
 *	  and Hilbert-sorted packing.
 *
 * STR (Leutenegger, Lopez, Edgington, "STR: a simple and efficient
 * algorithm for R-tree packing", ICDE 1997, section 2.2): with P =
 * ceil(n / M) nodes to fill, sort the rectangles by the x of their centres,
 * cut them into S = ceil(sqrt(P)) vertical slices, sort each slice by y and
 * pack it into nodes.  Each level above is packed the same way from the
 * rectangles of the level below, until one node remains: the root.
 *
 * Hilbert packing (Kamel & Faloutsos, "On packing R-trees", CIKM 1993):
 * sort by the Hilbert value of the centres (geom/hilbert.h, over the
 * extent of the data) and pack consecutive runs; the levels above pack
 * consecutive nodes, which keeps the curve's order.
 *
 * Nodes are filled to M, but every run of rectangles is cut into
 * ceil(k / M) nodes of balanced sizes (differing by at most one), so no
 * node falls below m and check() holds for a packed tree as for an
 * inserted one: a run of k > M rectangles gives nodes of at least
 * floor((M + 1) / 2) >= m entries.
 *
 * Nodes go through the NodeStore like every other write, one commit per
 * node, so buffering stores (FAST, eFIND) can flush as the tree grows; the
 * root changes last, so an interrupted load leaves the empty tree.
 *
 * IDENTIFICATION
 *	  src/index/rtree_pack.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

#include <math.h>

#include "geom/hilbert.h"
#include "miscadmin.h"

const BuildMethod rtree_build_methods[] = {
	{"str", "Sort-Tile-Recursive packing, Leutenegger et al. 1997"},
	{"hilbert", "Hilbert-sorted packing, Kamel & Faloutsos 1993"},
	{NULL, NULL}
};

/* A rectangle to pack and the Hilbert value of its centre. */
typedef struct PackItem
{
	RtreeEntry	entry;
	uint64		key;
} PackItem;

static inline double
centre(const PackItem *p, int axis)
{
	return mbr_low(&p->entry.box, axis) / 2 + mbr_high(&p->entry.box, axis) / 2;
}

/*
 * By the centre on one axis (*arg: 0 = x, 1 = y), ties by the other axis,
 * then by reference: a packing is reproducible.
 */
static int
compare_on_axis(const void *a, const void *b, void *arg)
{
	const PackItem *p = a;
	const PackItem *q = b;
	int			axis = *(const int *) arg;
	double		d = centre(p, axis) - centre(q, axis);

	if (d != 0)
		return d < 0 ? -1 : 1;
	d = centre(p, 1 - axis) - centre(q, 1 - axis);
	if (d != 0)
		return d < 0 ? -1 : 1;
	return p->entry.ref < q->entry.ref ? -1 : (p->entry.ref > q->entry.ref);
}

static int
compare_key(const void *a, const void *b)
{
	const PackItem *p = a;
	const PackItem *q = b;

	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	return p->entry.ref < q->entry.ref ? -1 : (p->entry.ref > q->entry.ref);
}

typedef struct PackLevel
{
	StructIndex *idx;
	uint16		level;
	uint32		max_entries;
	PackItem   *parents;		/* one item per node written */
	int64		nparents;
} PackLevel;

/* Write one node holding items[0 .. n-1] and remember it for the level above. */
static void
write_node(PackLevel *pl, const PackItem *items, int64 n)
{
	NodeStore  *ns = pl->idx->ns;
	TreeNode   *node = ns_new_node(ns, ns_alloc(ns, pl->level), pl->level);
	RtreeEntry *e = RtreeNodeEntries(node);
	PackItem   *parent = &pl->parents[pl->nparents++];

	for (int64 i = 0; i < n; i++)
		e[i] = items[i].entry;
	node->nentries = (uint32) n;
	ns_write(ns, node, NS_WRITE_NEW);
	ns_commit(ns);

	rtree_node_box(node, &parent->entry.box);
	parent->entry.ref = (int64) node->page;
	parent->key = items[n - 1].key;		/* the run's largest Hilbert value */
	tree_free_node(node);
	CHECK_FOR_INTERRUPTS();
}

/* Cut a run of k items into ceil(k / M) nodes of balanced sizes. */
static void
pack_run(PackLevel *pl, const PackItem *items, int64 k)
{
	int64		nodes = (k + pl->max_entries - 1) / pl->max_entries;
	int64		done = 0;

	for (int64 j = 0; j < nodes; j++)
	{
		int64		size = (k - done) / (nodes - j);

		write_node(pl, items + done, size);
		done += size;
	}
}

/*
 * One level of STR: S vertical slices of balanced sizes, each sorted by y
 * and packed.  Balanced slices (rather than S * M rectangles each, as in
 * the paper) keep the last slice from ending in a node below m.
 */
static void
pack_level_str(PackLevel *pl, PackItem *items, int64 n)
{
	int64		nodes = (n + pl->max_entries - 1) / pl->max_entries;
	int64		slices = (int64) ceil(sqrt((double) nodes));
	int			x_axis = 0;
	int			y_axis = 1;

	qsort_arg(items, n, sizeof(PackItem), compare_on_axis, &x_axis);
	for (int64 s = 0; s < slices; s++)
	{
		int64		first = n * s / slices;
		int64		size = n * (s + 1) / slices - first;

		qsort_arg(items + first, size, sizeof(PackItem), compare_on_axis, &y_axis);
		pack_run(pl, items + first, size);
	}
}

/*
 * Load an emptied R-tree (or R*-tree: the same nodes) with n objects:
 * release the empty root, pack the leaves, then each level above from the
 * level below, and make the last node written the root.
 */
void
rtree_bulk_load(StructIndex *idx, BulkItem *objects, int64 n, const char *method)
{
	RtreeState *st = (RtreeState *) idx->state;
	NodeStore  *ns = idx->ns;
	bool		str = strcmp(method, "str") == 0;
	PackItem   *items = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(PackItem));
	uint16		level = 0;
	Mbr			extent;
	PageId		empty_root = ns->meta->root;

	if (!str && strcmp(method, "hilbert") != 0)
		elog(ERROR, "R-tree bulk loader called with method \"%s\"", method);

	mbr_set_empty(&extent);
	for (int64 i = 0; i < n; i++)
	{
		items[i].entry.box = objects[i].box;
		items[i].entry.ref = objects[i].id;
		mbr_extend(&extent, &objects[i].box);
	}
	if (!str)
	{
		for (int64 i = 0; i < n; i++)
			items[i].key = hilbert_of_box(&extent, &items[i].entry.box);
		qsort(items, n, sizeof(PackItem), compare_key);
	}

	for (;;)
	{
		PackLevel	pl;

		if (level >= FEST_MAX_LEVELS)
			elog(ERROR, "packed tree of index \"%s\" would exceed %d levels",
				 idx->name, FEST_MAX_LEVELS);
		pl.idx = idx;
		pl.level = level;
		pl.max_entries = st->max_entries;
		/* at most one node per m rectangles, and one more per STR slice */
		pl.parents = MemoryContextAllocHuge(CurrentMemoryContext,
											(n / st->min_entries + 2 + (int64) sqrt((double) n)) * sizeof(PackItem));
		pl.nparents = 0;
		if (str)
			pack_level_str(&pl, items, n);
		else
			pack_run(&pl, items, n);	/* consecutive runs keep the curve's order */
		pfree(items);
		items = pl.parents;
		n = pl.nparents;
		level++;
		if (n == 1)
			break;
	}
	/*
	 * Only now does the empty root of init_empty make way for the packed
	 * tree: every node was committed as it was written, so a load
	 * interrupted before this point leaves the empty tree (and pages
	 * nothing reaches, which check() reports and the next build reclaims).
	 */
	ns_release(ns, empty_root);
	ns_set_root(ns, (PageId) items[0].entry.ref, level);
	pfree(items);
}
