/*-------------------------------------------------------------------------
 *
 * xbrtree_bulk.c
 *	  Bulk loading an xBR+-tree (build method 'bulk').
 *
 * The loading of Roumelis et al. (thesis-fevgas-2019 §3.6, after [105,
 * 108]) splits the input into the 2^d quadrants of the space, recursively
 * until a part fits in memory, sorts each part in Z order, builds an
 * in-memory xBR+-tree per part and merges it into the disk tree.  Its
 * purpose is to bound the memory used; festival's build already holds all
 * the points in memory, so it does the same quadrant partitioning in one
 * pass (festival's design, the same structure as the result):
 *
 *	1. every point gets its quadrant address (grid cell in Z order) and
 *	   the points are sorted by it;
 *	2. leaves: the extent is partitioned recursively by quadrants; a
 *	   quadrant whose points fit in a leaf becomes one leaf; otherwise its
 *	   sub-quadrants are split off (the largest first, each partitioned the
 *	   same way) until the rest fits, and the rest becomes a leaf whose
 *	   region is the quadrant minus the split-off sub-quadrants (the
 *	   xBR+-tree's non-complete squares); what a split-off sub-quadrant
 *	   leaves over after making full leaves joins the enclosing leaf when
 *	   it has room, so that leaves are full;
 *	3. each level above is built the same way over the quadrants of the
 *	   level below, until one node remains: the root.  At these levels a
 *	   quadrant that is itself an entry's quadrant may only be split along
 *	   the quadrants of the entries nested in it (xbrtree_split.c explains
 *	   why a quadrant cut through an entry's region is never split off).
 *
 * Nodes are filled up to their capacity and written bottom-up in Z order,
 * each one committed as it is written so that buffered node stores can
 * flush while the tree grows.  The result satisfies every invariant that
 * insertion keeps (check() verifies the same things); quadrants without
 * points are covered by no entry, which insertion handles (xbrtree.c).
 *
 * IDENTIFICATION
 *	  src/index/xbrtree_bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/xbrtree.h"

#include "miscadmin.h"

/* One object of the level being built: its quadrant and its entry. */
typedef struct BulkEntry
{
	XbrAddr		addr;
	union
	{
		XbrLeafEntry leaf;
		XbrInternalEntry internal;
	}			e;
} BulkEntry;

typedef struct Partition
{
	StructIndex *idx;
	const BulkEntry *items;		/* sorted by address */
	uint32		capacity;
	bool		leaves;
	int32	   *node_of;		/* per item: the node it goes to */
	XbrAddr    *quadrant;		/* per node: its quadrant */
	int64		nnodes;
	int64		maxnodes;
} Partition;

/* A run of items split off or kept together, with its quadrant. */
typedef struct Unit
{
	int64		lo;
	int64		hi;
	XbrAddr		q;
	bool		keep;
} Unit;

static int
bulk_entry_cmp(const void *a, const void *b)
{
	const BulkEntry *x = a;
	const BulkEntry *y = b;
	int			c = xbr_addr_cmp(x->addr, y->addr);

	if (c != 0)
		return c;
	if (x->e.leaf.x != y->e.leaf.x)
		return x->e.leaf.x < y->e.leaf.x ? -1 : 1;
	if (x->e.leaf.y != y->e.leaf.y)
		return x->e.leaf.y < y->e.leaf.y ? -1 : 1;
	return x->e.leaf.id < y->e.leaf.id ? -1 : (x->e.leaf.id > y->e.leaf.id ? 1 : 0);
}

static int
internal_entry_cmp(const void *a, const void *b)
{
	return xbr_addr_cmp(((const BulkEntry *) a)->addr, ((const BulkEntry *) b)->addr);
}

static int
unit_size_cmp(const void *a, const void *b)
{
	const Unit *x = *(const Unit *const *) a;
	const Unit *y = *(const Unit *const *) b;
	int64		sx = x->hi - x->lo,
				sy = y->hi - y->lo;

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x->lo < y->lo ? -1 : (x->lo > y->lo ? 1 : 0);
}

static int64
new_node(Partition *p, XbrAddr q)
{
	if (p->nnodes == p->maxnodes)
	{
		p->maxnodes *= 2;
		p->quadrant = repalloc(p->quadrant, p->maxnodes * sizeof(XbrAddr));
	}
	p->quadrant[p->nnodes] = q;
	return p->nnodes++;
}

/* Runs of items [lo, hi) that go into one node together. */
typedef struct RunList
{
	int64	   *lo;
	int64	   *hi;
	int			n;
	int			max;
	int64		items;
} RunList;

static void
runs_init(RunList *r)
{
	r->n = 0;
	r->max = 8;
	r->items = 0;
	r->lo = palloc(r->max * sizeof(int64));
	r->hi = palloc(r->max * sizeof(int64));
}

static void
runs_add(RunList *r, int64 lo, int64 hi)
{
	if (lo >= hi)
		return;
	if (r->n == r->max)
	{
		r->max *= 2;
		r->lo = repalloc(r->lo, r->max * sizeof(int64));
		r->hi = repalloc(r->hi, r->max * sizeof(int64));
	}
	r->lo[r->n] = lo;
	r->hi[r->n] = hi;
	r->n++;
	r->items += hi - lo;
}

static void
runs_append(RunList *to, const RunList *from)
{
	for (int i = 0; i < from->n; i++)
		runs_add(to, from->lo[i], from->hi[i]);
}

static void
emit_node(Partition *p, XbrAddr q, const RunList *runs)
{
	int64		node = new_node(p, q);

	for (int i = 0; i < runs->n; i++)
		for (int64 j = runs->lo[i]; j < runs->hi[i]; j++)
			p->node_of[j] = (int32) node;
}

/*
 * Steps 2 and 3 of the header for the items [lo, hi) inside quadrant b.
 * The caller's node, whose quadrant encloses b, still has room for `room`
 * items: what is left over here after splitting off full nodes is handed
 * back (appended to leftover) rather than made into a small node of its
 * own, when it fits there.  A left-over item goes to a node of a larger
 * quadrant whose other nodes inside b are split-off quadrants holding no
 * left-over item, so point location still finds it.  Returns the number
 * of items handed back.
 */
static int64
partition(Partition *p, int64 lo, int64 hi, XbrAddr b, int64 room, RunList *leftover)
{
	const BulkEntry *it = p->items;
	int64		stay = lo;
	Unit	   *units;
	Unit	  **by_size;
	int			nunits = 0;
	RunList		kept;
	int64		handed = 0;

	CHECK_FOR_INTERRUPTS();
	check_stack_depth();

	if (hi - lo <= room)
	{
		runs_add(leftover, lo, hi);
		return hi - lo;
	}
	runs_init(&kept);
	if (hi - lo <= p->capacity)
	{
		runs_add(&kept, lo, hi);
		emit_node(p, b, &kept);
		return 0;
	}
	if (b.len == XBR_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("more than %u points of index \"%s\" lie in one cell of its quadtree",
						p->capacity, p->idx->name),
				 errdetail("The xBR+-tree divides the extent at most %d times; the points near (%g %g) cannot be split into two leaves.",
						   XBR_MAX_DEPTH, it[lo].e.leaf.x, it[lo].e.leaf.y),
				 errhint("Use a larger page_size (more points per leaf), or another structure for data with many copies of one point.")));

	/* an entry whose quadrant is b itself (internal levels only) */
	while (stay < hi && xbr_addr_equal(it[stay].addr, b))
		stay++;

	units = palloc(Max(hi - stay, 4) * sizeof(Unit));
	if (stay > lo)
	{
		/* b is an entry's region: only nested entries' quadrants split off */
		for (int64 i = stay; i < hi;)
		{
			int64		j = i + 1;

			while (j < hi && xbr_addr_contains(it[i].addr, it[j].addr))
				j++;
			units[nunits].lo = i;
			units[nunits].hi = j;
			units[nunits].q = it[i].addr;
			nunits++;
			i = j;
		}
	}
	else
	{
		/* the four sub-quadrants, each a run in Z order */
		for (int64 i = lo; i < hi;)
		{
			int			digit = xbr_addr_digit(it[i].addr, b.len);
			int64		j = i + 1;

			while (j < hi && xbr_addr_digit(it[j].addr, b.len) == digit)
				j++;
			units[nunits].lo = i;
			units[nunits].hi = j;
			units[nunits].q = xbr_addr_child(b, digit);
			nunits++;
			i = j;
		}
	}

	/* keep the smallest runs with b while they fit; split off the others */
	by_size = palloc(nunits * sizeof(Unit *));
	for (int u = 0; u < nunits; u++)
		by_size[u] = &units[u];
	qsort(by_size, nunits, sizeof(Unit *), unit_size_cmp);
	{
		int64		fill = stay - lo;

		for (int u = 0; u < nunits; u++)
		{
			int64		size = by_size[u]->hi - by_size[u]->lo;

			by_size[u]->keep = fill + size <= p->capacity;
			if (by_size[u]->keep)
				fill += size;
		}
	}
	runs_add(&kept, lo, stay);
	for (int u = 0; u < nunits; u++)
		if (units[u].keep)
			runs_add(&kept, units[u].lo, units[u].hi);

	/* the split-off runs fill what room b's node has left */
	for (int u = 0; u < nunits; u++)
		if (!units[u].keep)
			partition(p, units[u].lo, units[u].hi, units[u].q,
					  p->capacity - kept.items, &kept);

	if (kept.items > 0 && kept.items <= room)
	{
		runs_append(leftover, &kept);
		handed = kept.items;
	}
	else if (kept.items > 0)
		emit_node(p, b, &kept);
	pfree(by_size);
	pfree(units);
	pfree(kept.lo);
	pfree(kept.hi);
	return handed;
}

/*
 * Build one level from its sorted items: write its nodes and return the
 * items of the level above (one per node), sorted.
 */
static BulkEntry *
build_level(StructIndex *idx, BulkEntry *items, int64 n, uint16 level,
			int64 *nnodes, PageId *last_page)
{
	XbrState   *st = (XbrState *) idx->state;
	Partition	p;
	int64	   *start;
	int64	   *order;
	BulkEntry  *above;

	p.idx = idx;
	p.items = items;
	p.capacity = level == 0 ? st->leaf_max : st->internal_max;
	p.leaves = level == 0;
	p.node_of = palloc(n * sizeof(int32));
	p.maxnodes = 64;
	p.quadrant = palloc(p.maxnodes * sizeof(XbrAddr));
	p.nnodes = 0;
	{
		RunList		none;

		runs_init(&none);
		partition(&p, 0, n, xbr_addr_root(), 0, &none);
	}

	/* the items of each node, in address order (a counting sort) */
	start = palloc0((p.nnodes + 1) * sizeof(int64));
	order = palloc(n * sizeof(int64));
	for (int64 i = 0; i < n; i++)
		start[p.node_of[i] + 1]++;
	for (int64 k = 0; k < p.nnodes; k++)
		start[k + 1] += start[k];
	for (int64 i = 0; i < n; i++)
		order[start[p.node_of[i]]++] = i;
	for (int64 k = p.nnodes; k > 0; k--)
		start[k] = start[k - 1];
	start[0] = 0;

	above = palloc(p.nnodes * sizeof(BulkEntry));
	for (int64 k = 0; k < p.nnodes; k++)
	{
		TreeNode   *node = ns_new_node(idx->ns, ns_alloc(idx->ns, level), level);

		for (int64 r = start[k]; r < start[k + 1]; r++)
		{
			const BulkEntry *item = &items[order[r]];

			if (level == 0)
				XbrLeafEntries(node)[node->nentries++] = item->e.leaf;
			else
				XbrInternalEntries(node)[node->nentries++] = item->e.internal;
		}
		xbr_sort_entries(node);
		ns_write(idx->ns, node, NS_WRITE_NEW);
		ns_commit(idx->ns);

		above[k].addr = p.quadrant[k];
		xbr_fill_entry(&above[k].e.internal, p.quadrant[k], node);
		*last_page = node->page;
		tree_free_node(node);
	}
	qsort(above, p.nnodes, sizeof(BulkEntry), internal_entry_cmp);

	pfree(start);
	pfree(order);
	pfree(p.node_of);
	pfree(p.quadrant);
	*nnodes = p.nnodes;
	return above;
}

void
xbr_bulk_load(StructIndex *idx, BulkItem *items, int64 n, const char *method)
{
	PageId		empty_root = idx->ns->meta->root;
	BulkEntry  *level_items = palloc(Max(n, 1) * sizeof(BulkEntry));
	int64		count = n;
	uint16		level = 0;

	if (n > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot bulk load more than %d points", PG_INT32_MAX),
				 errhint("Load the rest with festival.insert(), or use build method 'insert'.")));

	/* step 1: addresses, Z order */
	for (int64 i = 0; i < n; i++)
	{
		BulkEntry  *b = &level_items[i];

		memset(b, 0, sizeof(*b));
		xbr_point_admit(idx, items[i].box.xmin, items[i].box.ymin, &b->addr);
		b->e.leaf.x = items[i].box.xmin;
		b->e.leaf.y = items[i].box.ymin;
		b->e.leaf.id = items[i].id;
	}
	qsort(level_items, n, sizeof(BulkEntry), bulk_entry_cmp);

	/* steps 2 and 3 */
	for (;;)
	{
		int64		nnodes;
		PageId		last_page = InvalidPageId;
		BulkEntry  *above;

		above = build_level(idx, level_items, count, level, &nnodes, &last_page);
		pfree(level_items);
		if (nnodes == 1)
		{
			pfree(above);
			ns_set_root(idx->ns, last_page, level + 1);
			break;
		}
		if (nnodes >= count || level + 1 >= FEST_MAX_LEVELS)
			elog(ERROR, "xBR+-tree bulk loading made no progress at level %u (%lld nodes for %lld entries)",
				 level, (long long) nnodes, (long long) count);
		level_items = above;
		count = nnodes;
		level++;
	}
	/* the empty root leaf of init_empty, replaced only now */
	ns_release(idx->ns, empty_root);
	ns_commit(idx->ns);
}
