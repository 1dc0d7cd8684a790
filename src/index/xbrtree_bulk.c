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
 * grid file's loader does with its regions), into a second sort by
 * address, copies the points in their sorted place to a temporary file,
 * and refuses a cell of too many points as partition would, before any
 * write.  partition then runs on those counts instead of the items,
 * reading the quadrants in turn (it visits them in address order), and
 * gives each node its runs of the sorted stream, into a sort by (node,
 * start), and its quadrant, to a temporary file; a second pass writes the
 * leaves in build_level's order with build_level's contents, each read
 * run by run from the file of sorted points (so the points go through
 * one external sort, formed as its tuples once, and the runs -- a few per
 * leaf -- through a second, small one), their entries for the level above
 * to a temporary file.  Each
 * pass holds at most two sorts of half of maintenance_work_mem and
 * nothing per leaf in memory (that was about 150 bytes a leaf, past half
 * of the budget from about 30M uniform points in 64 MB).  The levels
 * above (one entry per leaf, about 90 bytes a leaf with build_level's
 * arrays) are then built in memory as before, the sorts gone, so the tree
 * is the in-memory load's, page for page.  The in-memory load holds
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
typedef XbrBulkEntry BulkEntry;

StaticAssertDecl(sizeof(BulkEntry) + sizeof(int32) + sizeof(int64) == XBR_BULK_BYTES_PER_POINT,
				 "XBR_BULK_BYTES_PER_POINT is what the in-memory load holds per point");

/*
 * The leaves of a bounded load (see xbr_spill_load) are partitioned from
 * external sorts and temporary files, nothing per leaf in memory: the
 * quadrants of more points than a leaf holds, with the points of each
 * sub-quadrant, sorted by address (SQ_*, from the first pass), and the
 * runs [lo, hi) of the sorted points that go to each node, sorted by
 * node, then lo (NR_*, for the second pass).
 */
enum
{
	SQ_CODE, SQ_LEN, SQ_SUB0, SQ_NCOLS = SQ_SUB0 + 4
};

static const Oid sq_types[SQ_NCOLS] = {
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID
};

enum
{
	NR_NODE, NR_LO, NR_HI, NR_NCOLS
};

static const Oid nr_types[NR_NCOLS] = {INT8OID, INT8OID, INT8OID};

typedef struct Partition
{
	StructIndex *idx;
	const BulkEntry *items;		/* sorted by address, or NULL: */
	SpillSort  *splits;			/* the leaves of a bounded load: SQ_*, performed */
	uint32		capacity;
	bool		leaves;
	int32	   *node_of;		/* per item: the node it goes to, or */
	SpillSort  *ranges;			/* the runs of each node (bounded load): NR_* */
	XbrAddr    *quadrant;		/* per node: its quadrant, or */
	BufFile    *quadrants;		/* in node order (bounded load) */
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

/* Step 1's order: by address, then (x, y, id); also the bulk insertion's. */
int
xbr_bulk_entry_cmp(const void *a, const void *b)
{
	const BulkEntry *x = a;
	const BulkEntry *y = b;
	int			c = xbr_addr_cmp(x->addr, y->addr);

	if (c != 0)
		return c;
	return point_entry_cmp(&x->e.leaf, &y->e.leaf);
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
	if (p->quadrants != NULL)
	{
		XbrAddr		a;

		memset(&a, 0, sizeof(a));	/* no padding bytes of the stack to the file */
		a.code = q.code;
		a.len = q.len;
		BufFileWrite(p->quadrants, &a, sizeof(a));
		return p->nnodes++;
	}
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
			Datum		v[NR_NCOLS];

			v[NR_LO] = Int64GetDatum(runs->lo[i]);
			v[NR_HI] = Int64GetDatum(runs->hi[i]);
			v[NR_NODE] = Int64GetDatum(node);
			spill_sort_put(p->ranges, v);
		}
		else
			for (int64 j = runs->lo[i]; j < runs->hi[i]; j++)
				p->node_of[j] = (int32) node;
	}
}

/*
 * The sub-quadrant runs of quadrant b holding the leaves [lo, hi) of a
 * bounded load, from the first pass: the non-empty ones in Z order, as
 * partition finds them in the sorted items.  partition asks for every
 * quadrant of the first pass (each holds more points than a leaf, so it
 * is never kept whole) and for no other, in depth-first Z order, which is
 * xbr_addr_cmp's: the next row of the sorted quadrants is b's.
 */
static int
split_units(const Partition *p, int64 lo, int64 hi, XbrAddr b, Unit *units)
{
	const Datum *v = spill_sort_next(p->splits);
	int64		sub[4];
	int			n = 0;

	if (v == NULL || sort_key_to_u64(DatumGetInt64(v[SQ_CODE])) != b.code ||
		DatumGetInt64(v[SQ_LEN]) != b.len)
		elog(ERROR, "bulk load of index \"%s\" lost the points of a quadrant", p->idx->name);
	for (int d = 0; d < 4; d++)
		sub[d] = DatumGetInt64(v[SQ_SUB0 + d]);
	for (int d = 0; d < 4; d++)
	{
		if (sub[d] == 0)
			continue;
		units[n].lo = lo;
		units[n].hi = lo + sub[d];
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
		/* freed here, once per leaf: a bounded load's partition must not grow */
		pfree(kept.lo);
		pfree(kept.hi);
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

void
xbr_writer_init(StructIndex *idx, XbrWriter *w, int64 commit_every)
{
	Assert(commit_every >= 1);
	w->commit_every = commit_every;
	w->written_at_commit = idx->stats->nodes_written;
}

/* The commit that persists the nodes written since the last one. */
void
xbr_writer_commit(StructIndex *idx, XbrWriter *w)
{
	ns_commit(idx->ns);
	w->written_at_commit = idx->stats->nodes_written;
}

/* After node writes: commit when the write buffer is full. */
void
xbr_writer_wrote(StructIndex *idx, XbrWriter *w)
{
	if (idx->stats->nodes_written - w->written_at_commit >= w->commit_every)
		xbr_writer_commit(idx, w);
}

/*
 * Write a new node of quadrant q, its entries put in order, hand it to the
 * writer (which commits it alone or with its batch), and make the item of
 * the level above that points to it; the node is freed.
 */
static void
write_node_entry(StructIndex *idx, TreeNode *node, XbrAddr q, BulkEntry *above,
				 PageId *last_page, XbrWriter *w)
{
	xbr_sort_entries(node);
	ns_write(idx->ns, node, NS_WRITE_NEW);
	xbr_writer_wrote(idx, w);
	progress_step(idx->progress, 1);
	/* zeroed whole: a bounded load writes it to a file, padding too */
	memset(above, 0, sizeof(BulkEntry));
	above->addr = q;
	xbr_fill_entry(&above->e.internal, q, node);
	*last_page = node->page;
	tree_free_node(node);
}

/*
 * The nodes of one level: the sorted items inside quadrant q partitioned
 * (steps 2 and 3 of the header) into p, and each node's items, in address
 * order, at order[start[k]] .. order[start[k + 1] - 1] (a counting sort).
 */
static void
group_level(StructIndex *idx, const BulkEntry *items, int64 n, uint16 level,
			XbrAddr q, Partition *p, int64 **start_out, int64 **order_out)
{
	XbrState   *st = (XbrState *) idx->state;
	int64	   *start;
	int64	   *order;

	memset(p, 0, sizeof(*p));
	p->idx = idx;
	p->items = items;
	p->capacity = level == 0 ? st->leaf_max : st->internal_max;
	p->leaves = level == 0;
	p->node_of = palloc(Max(n, 1) * sizeof(int32));
	p->maxnodes = 64;
	p->quadrant = palloc(p->maxnodes * sizeof(XbrAddr));
	p->nnodes = 0;
	{
		RunList		none;

		runs_init(&none);
		partition(p, 0, n, q, 0, &none);
	}

	start = palloc0((p->nnodes + 1) * sizeof(int64));
	order = palloc(Max(n, 1) * sizeof(int64));
	for (int64 i = 0; i < n; i++)
		start[p->node_of[i] + 1]++;
	for (int64 k = 0; k < p->nnodes; k++)
		start[k + 1] += start[k];
	for (int64 i = 0; i < n; i++)
		order[start[p->node_of[i]]++] = i;
	for (int64 k = p->nnodes; k > 0; k--)
		start[k] = start[k - 1];
	start[0] = 0;
	*start_out = start;
	*order_out = order;
}

/* Node k of a grouped level, in memory, with no page yet. */
static TreeNode *
grouped_node(StructIndex *idx, const BulkEntry *items, uint16 level,
			 const int64 *start, const int64 *order, int64 k)
{
	TreeNode   *node = ns_new_node(idx->ns, InvalidPageId, level);

	xbr_node_reserve(node, (uint32) (start[k + 1] - start[k]));
	for (int64 r = start[k]; r < start[k + 1]; r++)
	{
		const BulkEntry *item = &items[order[r]];

		if (level == 0)
			XbrLeafEntries(node)[node->nentries++] = item->e.leaf;
		else
			XbrInternalEntries(node)[node->nentries++] = item->e.internal;
	}
	return node;
}

/*
 * Build one level from its sorted items inside quadrant q: write its
 * nodes through the writer and return the items of the level above (one
 * per node), sorted.
 */
static BulkEntry *
build_level(StructIndex *idx, BulkEntry *items, int64 n, uint16 level, XbrAddr q,
			XbrWriter *w, int64 *nnodes, PageId *last_page)
{
	Partition	p;
	int64	   *start;
	int64	   *order;
	BulkEntry  *above;
	char		phase[PROGRESS_PHASE_LEN];

	group_level(idx, items, n, level, q, &p, &start, &order);
	snprintf(phase, sizeof(phase), "writing level %u", level);
	progress_phase(idx->progress, phase, "nodes", p.nnodes);
	above = palloc(p.nnodes * sizeof(BulkEntry));
	for (int64 k = 0; k < p.nnodes; k++)
	{
		TreeNode   *node = grouped_node(idx, items, level, start, order, k);

		node->page = ns_alloc(idx->ns, level);
		write_node_entry(idx, node, p.quadrant[k], &above[k], last_page, w);
	}
	qsort(above, p.nnodes, sizeof(BulkEntry), internal_entry_cmp);

	pfree(start);
	pfree(order);
	pfree(p.node_of);
	pfree(p.quadrant);
	*nnodes = p.nnodes;
	return above;
}

/*
 * The items of one level inside quadrant q, partitioned into nodes that
 * fit (the leaves of an overflowing leaf in the bulk insertion, the nodes
 * of an overflowing internal node): the nodes, in memory with their
 * entries in order and no page, and their quadrants.  Returns how many.
 */
int64
xbr_partition_nodes(StructIndex *idx, const XbrBulkEntry *items, int64 n, uint16 level,
					XbrAddr quadrant, TreeNode ***nodes, XbrAddr **quadrants)
{
	Partition	p;
	int64	   *start;
	int64	   *order;

	group_level(idx, items, n, level, quadrant, &p, &start, &order);
	*nodes = palloc(p.nnodes * sizeof(TreeNode *));
	for (int64 k = 0; k < p.nnodes; k++)
	{
		(*nodes)[k] = grouped_node(idx, items, level, start, order, k);
		xbr_sort_entries((*nodes)[k]);
	}
	*quadrants = p.quadrant;
	pfree(start);
	pfree(order);
	pfree(p.node_of);
	return p.nnodes;
}

/*
 * The levels of one block of the four-phase loading (xbrtree_phases.c):
 * the sorted items of a level inside quadrant q become nodes, written
 * through the writer, level by level, while they do not fit in one node;
 * the items that do (the entries of the block's root, or its points when
 * they fit in one leaf) are returned, not written, with their level, for
 * the merge into the disk-resident tree.  items is freed.
 */
XbrBulkEntry *
xbr_build_block(StructIndex *idx, XbrBulkEntry *items, int64 n, XbrAddr quadrant,
				XbrWriter *w, int64 *ntop, uint16 *top_level)
{
	XbrState   *st = (XbrState *) idx->state;
	uint16		level = 0;

	while (n > (level == 0 ? st->leaf_max : st->internal_max))
	{
		int64		nnodes;
		PageId		last_page = InvalidPageId;
		BulkEntry  *above;

		CHECK_FOR_INTERRUPTS();
		above = build_level(idx, items, n, level, quadrant, w, &nnodes, &last_page);
		pfree(items);
		if (nnodes >= n || level + 1 >= FEST_MAX_LEVELS)
			elog(ERROR, "xBR+-tree bulk loading made no progress at level %u (%lld nodes for %lld entries)",
				 level, (long long) nnodes, (long long) n);
		items = above;
		n = nnodes;
		level++;
	}
	*ntop = n;
	*top_level = level;
	return items;
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
	progress_phase(idx->progress, "sorting", "points", n);
	qsort(level_items, n, sizeof(BulkEntry), xbr_bulk_entry_cmp);

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
	XbrWriter	w;

	/* every node committed alone (see the file header) */
	xbr_writer_init(idx, &w, 1);
	for (;;)
	{
		int64		nnodes;
		PageId		last_page = InvalidPageId;
		BulkEntry  *above;

		above = build_level(idx, level_items, count, level, xbr_addr_root(), &w,
							&nnodes, &last_page);
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
 * The one external sort of the points is spill_sort.h's spill_points_*,
 * keyed by the address's code: bulk_entry_cmp's order.
 */
struct XbrSpill
{
	XbrSpillKind kind;			/* XBR_SPILL_ONE_PASS */
	StructIndex *idx;
	SpillSort  *sort;			/* spill_points_*, keyed by the code */
};

BulkSpill *
xbr_spill_begin(StructIndex *idx, const char *method)
{
	XbrSpill   *sp = palloc0(sizeof(XbrSpill));

	if (strcmp(method, "bulk") != 0)
		elog(ERROR, "xBR+-tree bulk loader called with method \"%s\"", method);
	sp->kind = XBR_SPILL_ONE_PASS;
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
 * points of each of its sub-quadrants, into an external sort by address
 * (returned unperformed), and every point in its sorted place into the
 * file `points`; more than `capacity` points in one cell are refused as
 * partition refuses them.
 * Walking the sorted codes, the quadrant of each depth holding the
 * current point is open: start[d] is where it began, sub[d][k] where its
 * sub-quadrant k began (-1: none yet).  A point whose code first differs
 * from the previous one in digit p closes the quadrants deeper than p
 * (their counts are final) and starts a sub-quadrant of depth p's.
 */
static SpillSort *
find_splits(XbrSpill *sp, uint32 capacity, BufFile *points)
{
	int64		start[XBR_MAX_DEPTH + 1];
	int64		sub[XBR_MAX_DEPTH][4];
	SpillSort  *splits = spill_sort_begin(SQ_NCOLS, sq_types, 2, TUPLESORT_RANDOMACCESS);
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
			BufFileWrite(points, &e, sizeof(e));
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
			XbrAddr		q;
			Datum		v[SQ_NCOLS];

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
			q = xbr_addr_prefix(a, d);
			v[SQ_CODE] = Int64GetDatum(sort_key_u64(q.code));
			v[SQ_LEN] = Int64GetDatum(q.len);
			for (int k = 0; k < 4; k++)
			{
				int64		end = i;

				for (int l = k + 1; l < 4; l++)
					if (sub[d][l] >= 0)
					{
						end = sub[d][l];
						break;
					}
				v[SQ_SUB0 + k] = Int64GetDatum(sub[d][k] < 0 ? 0 : end - sub[d][k]);
			}
			spill_sort_put(splits, v);
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
	return splits;
}

/*
 * xbr_bulk_load from the external sort, in passes that each hold at most
 * two sorts and temporary files, nothing that grows with the points or
 * the leaves: the first pass reads the sorted points into a temporary
 * file and finds the quadrants partition splits (refusing what it would
 * refuse) into a sort by address; partition assigns runs of the sorted
 * points to nodes (a sort of the runs by node and start) and writes each
 * node's quadrant to a file; the second writes the nodes in build_level's
 * order with build_level's contents, reading each node's runs from the
 * points' file, their entries for the level above to a file.  Only then,
 * the sorts gone, are the levels above (one entry per leaf) built in
 * memory.
 */
void
xbr_spill_load(StructIndex *idx, BulkSpill *spill)
{
	XbrSpill   *sp = (XbrSpill *) spill;
	XbrState   *st = (XbrState *) idx->state;
	PageId		empty_root = idx->ns->meta->root;
	Partition	p;
	RunList		none;
	BufFile    *points = BufFileCreateTemp(false);
	BufFile    *entries = BufFileCreateTemp(false);
	BulkEntry  *above;
	PageId		last_page = InvalidPageId;
	int64		npoints = spill_sort_count(sp->sort);
	const Datum *v;
	int64		place = 0;		/* the points file's position, in points */
	int64		assigned = 0;
	XbrWriter	w;

	xbr_writer_init(idx, &w, 1);
	progress_phase(idx->progress, "sorting", "points", npoints);
	spill_sort_perform(sp->sort);
	progress_phase(idx->progress, "partitioning", "points", npoints);
	memset(&p, 0, sizeof(p));
	p.idx = idx;
	p.capacity = st->leaf_max;
	p.leaves = true;
	p.splits = find_splits(sp, st->leaf_max, points);
	spill_sort_end(sp->sort);
	sp->sort = NULL;
	spill_sort_perform(p.splits);
	p.ranges = spill_sort_begin(NR_NCOLS, nr_types, 2, TUPLESORT_NONE);
	p.quadrants = BufFileCreateTemp(false);
	runs_init(&none);
	partition(&p, 0, npoints, xbr_addr_root(), 0, &none);
	Assert(none.items == 0);
	if (spill_sort_next(p.splits) != NULL)
		elog(ERROR, "bulk load of index \"%s\" left a quadrant unsplit", idx->name);
	spill_sort_end(p.splits);

	/*
	 * The second pass: the leaves, in build_level's order, each read from
	 * the sorted points' file run by run (the runs sorted by node, then
	 * start): the points were formed and sorted once, and a leaf takes
	 * them as they lie in the file, in their sorted order.
	 */
	spill_sort_perform(p.ranges);
	spill_file_rewind(points);
	progress_phase(idx->progress, "writing level 0", "nodes", p.nnodes);
	spill_file_rewind(p.quadrants);
	v = spill_sort_next(p.ranges);
	for (int64 k = 0; k < p.nnodes; k++)
	{
		TreeNode   *node = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);
		XbrAddr		q;
		BulkEntry	entry;

		spill_file_read(p.quadrants, &q, sizeof(q));
		for (; v != NULL && DatumGetInt64(v[NR_NODE]) == k; v = spill_sort_next(p.ranges))
		{
			int64		lo = DatumGetInt64(v[NR_LO]);
			int64		hi = DatumGetInt64(v[NR_HI]);

			if (lo < 0 || hi > npoints || lo >= hi ||
				node->nentries + (hi - lo) > st->leaf_max)
				elog(ERROR, "bulk load of index \"%s\" gave a leaf a run it cannot hold", idx->name);
			if (lo != place &&
				BufFileSeek(points, 0, (off_t) (lo - place) * sizeof(XbrLeafEntry), SEEK_CUR) != 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not seek in a temporary file of the bulk load of index \"%s\": %m",
								idx->name)));
			spill_file_read(points, &XbrLeafEntries(node)[node->nentries],
							(hi - lo) * sizeof(XbrLeafEntry));
			node->nentries += hi - lo;
			assigned += hi - lo;
			place = hi;
		}
		if (node->nentries == 0)
			elog(ERROR, "bulk load of index \"%s\" made a leaf without points", idx->name);
		write_node_entry(idx, node, q, &entry, &last_page, &w);
		BufFileWrite(entries, &entry, sizeof(entry));
		progress_step(idx->progress, 1);
		CHECK_FOR_INTERRUPTS();
	}
	/* the runs partition the points: none left over, none twice */
	if (v != NULL || assigned != npoints)
		elog(ERROR, "bulk load of index \"%s\" assigned " INT64_FORMAT " of " INT64_FORMAT " points to leaves",
			 idx->name, assigned, npoints);
	spill_sort_end(p.ranges);
	BufFileClose(points);
	BufFileClose(p.quadrants);
	if (p.nnodes == 1)
		set_root(idx, last_page, 1, empty_root);
	else
	{
		above = MemoryContextAllocHuge(CurrentMemoryContext, p.nnodes * sizeof(BulkEntry));
		spill_file_rewind(entries);
		spill_file_read(entries, above, p.nnodes * sizeof(BulkEntry));
		qsort(above, p.nnodes, sizeof(BulkEntry), internal_entry_cmp);
		build_levels(idx, above, p.nnodes, 1, empty_root);
	}
	BufFileClose(entries);
	pfree(sp);
}
