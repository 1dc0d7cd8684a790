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
 * In bounded memory (xbr_spill_*, for sources past maintenance_work_mem)
 * the points go to PostgreSQL's external sort (tuplesort) in step 1's
 * order, as (address code as an int8 of the same order, x, y, id), and
 * the leaves are made from counts: the decisions of step 2 depend only on
 * how many points each quadrant holds.  A first pass over the sorted
 * stream finds every quadrant of more points than a leaf holds, with the
 * points of each of its sub-quadrants (walking the sorted codes, as the
 * grid file's loader does with its regions), and refuses a cell of too
 * many points as partition would, before any write.  partition then runs
 * on those counts instead of the items and gives each node its runs of
 * the sorted stream; a second pass tags every point with its node into a
 * second sort by (node, place in the first), and the leaves are written
 * from it in build_level's order with build_level's contents.  The levels
 * above (one entry per leaf) are built in memory as before, so the tree
 * is the in-memory load's, page for page.  Memory: about 150 bytes per
 * leaf (split quadrants, node runs, quadrants, counts, the entries above),
 * which grow with the points; the ones alive with the second sort are
 * taken out of its half of maintenance_work_mem (spill_sort_begin_within),
 * so the load stays within the budget while they fit in that half (4.7 MB
 * for 5M uniform points with 4 kB pages, against 32 MB of the default
 * 64 MB; past it the peak grows by what they exceed it by).  The in-memory load holds
 * XBR_BULK_BYTES_PER_POINT per point besides the gathered item, which
 * festival.build counts to choose between the two.
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

#include "catalog/pg_type_d.h"
#include "index/spill_sort.h"
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

StaticAssertDecl(sizeof(BulkEntry) + sizeof(int32) + sizeof(int64) == XBR_BULK_BYTES_PER_POINT,
				 "XBR_BULK_BYTES_PER_POINT is what the in-memory load holds per point");

/*
 * A quadrant of more points than a leaf holds, found by the first pass of
 * a bounded load (see xbr_spill_load): its points in each sub-quadrant.
 */
typedef struct SplitQuad
{
	XbrAddr		addr;
	int64		sub[4];
} SplitQuad;

/* A run [lo, hi) of the sorted items that goes to one node. */
typedef struct NodeRange
{
	int64		lo;
	int64		hi;
	int64		node;
} NodeRange;

typedef struct Partition
{
	StructIndex *idx;
	const BulkEntry *items;		/* sorted by address, or NULL: */
	const SplitQuad *splits;	/* the leaves of a bounded load, sorted */
	int64		nsplits;
	uint32		capacity;
	bool		leaves;
	int32	   *node_of;		/* per item: the node it goes to, or */
	NodeRange  *ranges;			/* the runs of each node (bounded load) */
	int64		nranges;
	int64		maxranges;
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
	{
		if (p->node_of == NULL)
		{
			if (p->nranges == p->maxranges)
			{
				p->maxranges *= 2;
				p->ranges = repalloc_huge(p->ranges, p->maxranges * sizeof(NodeRange));
			}
			p->ranges[p->nranges].lo = runs->lo[i];
			p->ranges[p->nranges].hi = runs->hi[i];
			p->ranges[p->nranges].node = node;
			p->nranges++;
		}
		else
			for (int64 j = runs->lo[i]; j < runs->hi[i]; j++)
				p->node_of[j] = (int32) node;
	}
}

static int
split_quad_cmp(const void *a, const void *b)
{
	return xbr_addr_cmp(((const SplitQuad *) a)->addr, ((const SplitQuad *) b)->addr);
}

/*
 * The sub-quadrant runs of quadrant b holding the leaves [lo, hi) of a
 * bounded load, from the first pass: the non-empty ones in Z order, as
 * partition finds them in the sorted items.
 */
static int
split_units(const Partition *p, int64 lo, int64 hi, XbrAddr b, Unit *units)
{
	SplitQuad	key;
	const SplitQuad *sq;
	int			n = 0;

	key.addr = b;
	sq = bsearch(&key, p->splits, p->nsplits, sizeof(SplitQuad), split_quad_cmp);
	if (sq == NULL)
		elog(ERROR, "bulk load of index \"%s\" lost the points of a quadrant", p->idx->name);
	for (int d = 0; d < 4; d++)
	{
		if (sq->sub[d] == 0)
			continue;
		units[n].lo = lo;
		units[n].hi = lo + sq->sub[d];
		units[n].q = xbr_addr_child(b, d);
		lo = units[n].hi;
		n++;
	}
	if (lo != hi)
		elog(ERROR, "bulk load of index \"%s\" miscounted the points of a quadrant", p->idx->name);
	return n;
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
	if (b.len == XBR_MAX_DEPTH && it == NULL)
		elog(ERROR, "bulk load of index \"%s\" found too many points in one cell late",
			 p->idx->name);		/* find_splits refuses them */
	if (b.len == XBR_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("more than %u points of index \"%s\" lie in one cell of its quadtree",
						p->capacity, p->idx->name),
				 errdetail("The xBR+-tree divides the extent at most %d times; the points near (%g %g) cannot be split into two leaves.",
						   XBR_MAX_DEPTH, it[lo].e.leaf.x, it[lo].e.leaf.y),
				 errhint("Use a larger page_size (more points per leaf), or another structure for data with many copies of one point.")));

	/* an entry whose quadrant is b itself (internal levels only) */
	while (it != NULL && stay < hi && xbr_addr_equal(it[stay].addr, b))
		stay++;

	units = palloc((it == NULL ? 4 : Max(hi - stay, 4)) * sizeof(Unit));
	if (it == NULL)
		nunits = split_units(p, lo, hi, b, units);
	else if (stay > lo)
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

	memset(&p, 0, sizeof(p));
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

/* The root changes last; the empty root leaf of init_empty goes only now. */
static void
set_root(StructIndex *idx, PageId root, uint16 height, PageId empty_root)
{
	ns_set_root(idx->ns, root, height);
	ns_release(idx->ns, empty_root);
	ns_commit(idx->ns);
}

static void build_levels(StructIndex *idx, BulkEntry *level_items, int64 count,
						 uint16 level, PageId empty_root);

void
xbr_bulk_load(StructIndex *idx, BulkItem *items, int64 n, const char *method)
{
	PageId		empty_root = idx->ns->meta->root;
	BulkEntry  *level_items = palloc(Max(n, 1) * sizeof(BulkEntry));

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
	build_levels(idx, level_items, n, 0, empty_root);
}

/*
 * Steps 2 and 3 from level `level` up: level_items (count of them, sorted)
 * are the items of that level; they are freed.
 */
static void
build_levels(StructIndex *idx, BulkEntry *level_items, int64 count, uint16 level,
			 PageId empty_root)
{
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
			set_root(idx, last_page, level + 1, empty_root);
			return;
		}
		if (nnodes >= count || level + 1 >= FEST_MAX_LEVELS)
			elog(ERROR, "xBR+-tree bulk loading made no progress at level %u (%lld nodes for %lld entries)",
				 level, (long long) nnodes, (long long) count);
		level_items = above;
		count = nnodes;
		level++;
	}
}

/* ------------------------------------------------------------------ */
/* bounded memory                                                     */
/* ------------------------------------------------------------------ */

/*
 * The first external sort is spill_sort.h's spill_points_*, keyed by the
 * address's code: bulk_entry_cmp's order.  The second: the points by node,
 * then by their place in the first (the two keys; unique, so the order is
 * total).
 */
enum
{
	XN_NODE, XN_POS, XN_X, XN_Y, XN_ID, XN_NCOLS
};

static const Oid xn_types[XN_NCOLS] = {
	[XN_NODE] = INT8OID,[XN_POS] = INT8OID,
	[XN_X] = FLOAT8OID,[XN_Y] = FLOAT8OID,[XN_ID] = INT8OID
};

struct XbrSpill
{
	StructIndex *idx;
	SpillSort  *sort;			/* spill_points_*, keyed by the code */
};

BulkSpill *
xbr_spill_begin(StructIndex *idx, const char *method)
{
	XbrSpill   *sp = palloc0(sizeof(XbrSpill));

	if (strcmp(method, "bulk") != 0)
		elog(ERROR, "xBR+-tree bulk loader called with method \"%s\"", method);
	sp->idx = idx;
	sp->sort = spill_points_begin();
	return (BulkSpill *) sp;
}

/* Step 1 for one point: refused outside the extent, sorted by address. */
void
xbr_spill_put(BulkSpill *spill, const BulkItem *item)
{
	XbrSpill   *sp = (XbrSpill *) spill;
	XbrAddr		addr;

	xbr_point_admit(sp->idx, item->box.xmin, item->box.ymin, &addr);
	Assert(addr.len == XBR_MAX_DEPTH);
	spill_points_put(sp->sort, addr.code, item->box.xmin, item->box.ymin, item->id);
}

/* The next point of the first sort; returns its address's code. */
static inline uint64
sorted_point(XbrSpill *sp, XbrLeafEntry *e)
{
	return spill_points_get(sp->sort, &e->x, &e->y, &e->id);
}

/*
 * The first pass: every quadrant of more than `capacity` points, with the
 * points of each of its sub-quadrants, sorted by address; more than
 * `capacity` points in one cell are refused as partition refuses them.
 * Walking the sorted codes, the quadrant of each depth holding the
 * current point is open: start[d] is where it began, sub[d][k] where its
 * sub-quadrant k began (-1: none yet).  A point whose code first differs
 * from the previous one in digit p closes the quadrants deeper than p
 * (their counts are final) and starts a sub-quadrant of depth p's.
 */
static SplitQuad *
find_splits(XbrSpill *sp, uint32 capacity, int64 *nsplits)
{
	int64		start[XBR_MAX_DEPTH + 1];
	int64		sub[XBR_MAX_DEPTH][4];
	int64		max = 64;
	int64		n = 0;
	SplitQuad  *splits = palloc(max * sizeof(SplitQuad));
	uint64		prev = 0;
	XbrLeafEntry cell_first = {0};
	int64		npoints = spill_sort_count(sp->sort);

	for (int64 i = 0; i <= npoints; i++)
	{
		XbrLeafEntry e = {0};
		uint64		code = 0;
		int			p;

		if (i < npoints)
		{
			code = sorted_point(sp, &e);
			CHECK_FOR_INTERRUPTS();
		}
		if (i == 0)
			p = -1;				/* opens every quadrant */
		else if (i == npoints)
			p = -1;				/* closes every quadrant */
		else if (code == prev)
			continue;
		else
			p = (63 - pg_leftmost_one_pos64(code ^ prev)) / 2;
		Assert(p < XBR_MAX_DEPTH);

		/* close the quadrants deeper than p (none before the first point) */
		for (int d = XBR_MAX_DEPTH; i > 0 && d > p; d--)
		{
			int64		count = i - start[d];
			XbrAddr		a = {prev, XBR_MAX_DEPTH};

			if (count <= capacity)
				continue;
			if (d == XBR_MAX_DEPTH)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("more than %u points of index \"%s\" lie in one cell of its quadtree",
								capacity, sp->idx->name),
						 errdetail("The xBR+-tree divides the extent at most %d times; the points near (%g %g) cannot be split into two leaves.",
								   XBR_MAX_DEPTH, cell_first.x, cell_first.y),
						 errhint("Use a larger page_size (more points per leaf), or another structure for data with many copies of one point.")));
			if (n == max)
			{
				max *= 2;
				splits = repalloc_huge(splits, max * sizeof(SplitQuad));
			}
			splits[n].addr = xbr_addr_prefix(a, d);
			for (int k = 0; k < 4; k++)
			{
				int64		end = i;

				for (int l = k + 1; l < 4; l++)
					if (sub[d][l] >= 0)
					{
						end = sub[d][l];
						break;
					}
				splits[n].sub[k] = sub[d][k] < 0 ? 0 : end - sub[d][k];
			}
			n++;
		}
		if (i == npoints)
			break;
		/* open the quadrants deeper than p, and a sub-quadrant of p's */
		for (int d = p + 1; d <= XBR_MAX_DEPTH; d++)
		{
			start[d] = i;
			if (d < XBR_MAX_DEPTH)
			{
				XbrAddr		a = {code, XBR_MAX_DEPTH};

				for (int k = 0; k < 4; k++)
					sub[d][k] = -1;
				sub[d][xbr_addr_digit(a, d)] = i;
			}
		}
		if (p >= 0)
		{
			XbrAddr		a = {code, XBR_MAX_DEPTH};

			sub[p][xbr_addr_digit(a, p)] = i;
		}
		cell_first = e;
		prev = code;
	}
	qsort(splits, n, sizeof(SplitQuad), split_quad_cmp);
	*nsplits = n;
	return splits;
}

static int
range_lo_cmp(const void *a, const void *b)
{
	int64		x = ((const NodeRange *) a)->lo;
	int64		y = ((const NodeRange *) b)->lo;

	return x < y ? -1 : (x > y);
}

/*
 * xbr_bulk_load from the external sort.  The leaves: the first pass finds
 * the quadrants partition splits (and refuses what it would refuse),
 * partition assigns runs of the sorted points to nodes, the second pass
 * sorts the points by (node, place) and the third writes the nodes in
 * build_level's order with build_level's contents.  The levels above, one
 * entry per leaf, are built in memory.
 */
void
xbr_spill_load(StructIndex *idx, BulkSpill *spill)
{
	XbrSpill   *sp = (XbrSpill *) spill;
	XbrState   *st = (XbrState *) idx->state;
	PageId		empty_root = idx->ns->meta->root;
	Partition	p;
	RunList		none;
	SpillSort  *bynode;
	uint32	   *counts;
	BulkEntry  *above;
	PageId		last_page = InvalidPageId;
	int64		r = 0;
	int64		npoints = spill_sort_count(sp->sort);
	int64		reserved;

	spill_sort_perform(sp->sort);
	memset(&p, 0, sizeof(p));
	p.idx = idx;
	p.capacity = st->leaf_max;
	p.leaves = true;
	p.splits = find_splits(sp, st->leaf_max, &p.nsplits);
	p.maxranges = 64;
	p.ranges = palloc(p.maxranges * sizeof(NodeRange));
	p.maxnodes = 64;
	p.quadrant = palloc(p.maxnodes * sizeof(XbrAddr));
	runs_init(&none);
	partition(&p, 0, npoints, xbr_addr_root(), 0, &none);
	Assert(none.items == 0);
	pfree(unconstify(SplitQuad *, p.splits));

	/* the second pass: each point tagged with its node */
	qsort(p.ranges, p.nranges, sizeof(NodeRange), range_lo_cmp);
	counts = palloc0(Max(p.nnodes, 1) * sizeof(uint32));

	/*
	 * Alive with the second sort, and growing with the leaves: the
	 * quadrants and counts, and the runs (this pass) or the entries above
	 * (the third, once the runs are freed).  They come out of the sort's
	 * half of maintenance_work_mem, which they would otherwise overrun
	 * with enough leaves (the sort gives back the same order whatever its
	 * budget, so the tree does not change).
	 */
	reserved = p.maxnodes * sizeof(XbrAddr) + Max(p.nnodes, 1) * sizeof(uint32) +
		Max(p.maxranges * sizeof(NodeRange), Max(p.nnodes, 1) * sizeof(BulkEntry));
	bynode = spill_sort_begin_within(XN_NCOLS, xn_types, 2, TUPLESORT_NONE, reserved);
	spill_sort_rescan(sp->sort);
	for (int64 i = 0; i < npoints; i++)
	{
		XbrLeafEntry e;
		Datum		v[XN_NCOLS];

		(void) sorted_point(sp, &e);
		while (r < p.nranges && p.ranges[r].hi <= i)
			r++;
		if (r == p.nranges || p.ranges[r].lo > i)
			elog(ERROR, "bulk load of index \"%s\" left a point without a node", idx->name);
		counts[p.ranges[r].node]++;
		v[XN_NODE] = Int64GetDatum(p.ranges[r].node);
		v[XN_POS] = Int64GetDatum(i);
		v[XN_X] = Float8GetDatum(e.x);
		v[XN_Y] = Float8GetDatum(e.y);
		v[XN_ID] = Int64GetDatum(e.id);
		spill_sort_put(bynode, v);
		CHECK_FOR_INTERRUPTS();
	}
	spill_sort_end(sp->sort);
	sp->sort = NULL;
	pfree(p.ranges);

	/* the third: the leaves, in build_level's order */
	spill_sort_perform(bynode);
	above = MemoryContextAllocHuge(CurrentMemoryContext, Max(p.nnodes, 1) * sizeof(BulkEntry));
	for (int64 k = 0; k < p.nnodes; k++)
	{
		TreeNode   *node = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);

		for (uint32 c = 0; c < counts[k]; c++)
		{
			XbrLeafEntry *e = &XbrLeafEntries(node)[node->nentries++];
			const Datum *v = spill_sort_get(bynode, "points");

			Assert(DatumGetInt64(v[XN_NODE]) == k);
			e->x = DatumGetFloat8(v[XN_X]);
			e->y = DatumGetFloat8(v[XN_Y]);
			e->id = DatumGetInt64(v[XN_ID]);
		}
		xbr_sort_entries(node);
		ns_write(idx->ns, node, NS_WRITE_NEW);
		ns_commit(idx->ns);
		memset(&above[k], 0, sizeof(BulkEntry));
		above[k].addr = p.quadrant[k];
		xbr_fill_entry(&above[k].e.internal, p.quadrant[k], node);
		last_page = node->page;
		tree_free_node(node);
		CHECK_FOR_INTERRUPTS();
	}
	spill_sort_end(bynode);
	pfree(counts);
	pfree(p.quadrant);
	if (p.nnodes == 1)
	{
		pfree(above);
		set_root(idx, last_page, 1, empty_root);
	}
	else
	{
		qsort(above, p.nnodes, sizeof(BulkEntry), internal_entry_cmp);
		build_levels(idx, above, p.nnodes, 1, empty_root);
	}
	pfree(sp);
}
