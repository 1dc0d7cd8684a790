/*-------------------------------------------------------------------------
 *
 * gridfile_knn.c
 *	  The grid files' kNN search (Fevgas 2019, PhD thesis, §3.5.2, Alg. 7),
 *	  ring by ring over the grid arrays, with the thesis's prefetch
 *	  variants (knn_prefetch), for GFFM and LB-Grid alike.
 *
 * One implementation for both grid files, as in the thesis (§3.5: "GFFM
 * uses the same algorithms with one-page buckets"); buckets are read
 * through tree_read_nodes, which for LB-Grid is readBucket of a group of
 * logical buckets (its read_leaves, lbgrid.c: the union of their log-page
 * lists in one ns_read_many).
 *
 * The same procedure runs at the root directory (its cells name
 * sub-directories; entering one runs the procedure inside it) and inside
 * each sub-directory (its cells name buckets; entering one offers its
 * points to the max-heap of the k best (distance, id) pairs), as the
 * thesis says:
 *
 *	1. the query's cell c: the binary search of the grid's scales (the
 *	   nearest cell when the point lies outside the grid's region);
 *	2. ring step (0, 1, ...) is the cells whose column and row differ from
 *	   c's by at most step, one of them by exactly step (conceptual
 *	   partitioning, the thesis's [88]; the sides D of the ring);
 *	3. a cell whose region was entered already is skipped (visitedList:
 *	   several cells share a region); one whose minimum distance could
 *	   still beat the k-th neighbour (the heap holds fewer than k, or the
 *	   distance is at most the k-th: at most, so that a tie with a smaller
 *	   id still wins, as festival.knn documents) is queued with that
 *	   distance, a region once per ring at its nearest cell;
 *	4. the ring's queue is entered nearest first (cellQueue); the regions
 *	   are read ahead in next-fit groups that fit the read buffer
 *	   (cellQueue' and prefetch_logbuckets: LBB for buckets, DPB for
 *	   sub-directories), or one at a time without prefetch; a region that
 *	   can no longer hold one of the k best when its turn comes is not
 *	   entered (if a group read it, for nothing: the thesis's trade-off);
 *	5. the rings stop when the grid is explored, or when the heap holds k
 *	   and every cell outside the rings so far lies farther than the k-th
 *	   distance: the rings' box is step cells wide on every side of c, so a
 *	   cell beyond a side of it is at least that side's distance away.
 * The pseudo-code's stop test (current_dist, the nearest queued cell, with
 * "size <= k") can end the search before a nearer cell of a later ring is
 * seen when cells differ in size, which a grid file's do; step 5 is the
 * bound that keeps the answer exact.  The thesis's "size <= k" tests are
 * taken as "fewer than k".
 *
 * Prefetch (thesis §3.5.2 and §5.4, evaluated variants):
 *	none	every page is read when its cell is entered (one submission each;
 *			LB-Grid: each bucket's log pages, one submission per bucket);
 *	data	a ring's buckets are read ahead in next-fit groups of the data
 *			read buffer (LBB pages);
 *	all		sub-directories too, in groups of the directory read buffer (DPB;
 *			the thesis found this wasteful and dropped it from its figures).
 *
 * Duplicates: festival.insert keeps a second entry with an id already
 * present (without if_absent); like the generic search, an id is returned
 * once, at its smallest distance.
 *
 * IDENTIFICATION
 *	  src/index/gridfile_knn.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/float.h"
#include "utils/hsearch.h"

typedef struct KnnPair
{
	double		dist;
	int64		id;
} KnnPair;

typedef struct KnnIdSlot
{
	int64		id;				/* hash key */
	double		dist;			/* its distance in the heap */
} KnnIdSlot;

typedef struct RingKnn
{
	StructIndex *idx;
	Mbr			q;				/* the query point as a box */
	int			k;
	GfKnnPrefetch prefetch;
	uint64		qx_line;		/* the query's cell, clamped to the extent */
	uint64		qy_line;
	KnnPair    *heap;			/* max-heap: the worst of the k best on top */
	int			n;
	int			cap;
	HTAB	   *in_heap;		/* ids in the heap */
} RingKnn;

/* A region a ring reaches: its nearest cell of the ring's distance. */
typedef struct RingCell
{
	double		dist;
	int64		ref;			/* the region's child: page or bucket */
	int			region;
} RingCell;

static inline bool
pair_worse(const KnnPair *a, const KnnPair *b)
{
	return a->dist > b->dist || (a->dist == b->dist && a->id > b->id);
}

static void
heap_sift_up(RingKnn *r, int i)
{
	while (i > 0)
	{
		int			parent = (i - 1) / 2;
		KnnPair		tmp;

		if (!pair_worse(&r->heap[i], &r->heap[parent]))
			break;
		tmp = r->heap[i];
		r->heap[i] = r->heap[parent];
		r->heap[parent] = tmp;
		i = parent;
	}
}

static void
heap_sift_down(RingKnn *r, int i)
{
	for (;;)
	{
		int			worst = i;
		int			left = 2 * i + 1;
		int			right = left + 1;
		KnnPair		tmp;

		if (left < r->n && pair_worse(&r->heap[left], &r->heap[worst]))
			worst = left;
		if (right < r->n && pair_worse(&r->heap[right], &r->heap[worst]))
			worst = right;
		if (worst == i)
			break;
		tmp = r->heap[i];
		r->heap[i] = r->heap[worst];
		r->heap[worst] = tmp;
		i = worst;
	}
}

/* Could a cell at this minimum distance still hold one of the k best? */
static inline bool
ring_may_hold(const RingKnn *r, double dist)
{
	return r->n < r->k || dist <= r->heap[0].dist;
}

/* Offer one point to the k best. */
static void
ring_offer(RingKnn *r, int64 id, double dist)
{
	KnnPair		p = {dist, id};
	KnnIdSlot  *slot;
	bool		found;

	if (r->n == r->k && !pair_worse(&r->heap[0], &p))
		return;
	slot = hash_search(r->in_heap, &id, HASH_FIND, NULL);
	if (slot != NULL)
	{
		/* a second entry of this id: keep its smaller distance */
		if (dist >= slot->dist)
			return;
		for (int i = 0; i < r->n; i++)
			if (r->heap[i].id == id)
			{
				r->heap[i].dist = dist;
				slot->dist = dist;
				heap_sift_down(r, i);
				return;
			}
		Assert(false);
	}
	if (r->n == r->k)
	{
		/* replace the worst */
		(void) hash_search(r->in_heap, &r->heap[0].id, HASH_REMOVE, NULL);
		r->heap[0] = p;
		heap_sift_down(r, 0);
	}
	else
	{
		if (r->n == r->cap)
		{
			r->cap *= 2;
			r->heap = repalloc(r->heap, r->cap * sizeof(KnnPair));
		}
		r->heap[r->n++] = p;
		heap_sift_up(r, r->n - 1);
	}
	slot = hash_search(r->in_heap, &id, HASH_ENTER, &found);
	Assert(!found);
	slot->dist = dist;
}


static int
ring_cell_cmp(const void *a, const void *b)
{
	const RingCell *x = a;
	const RingCell *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->ref < y->ref ? -1 : (x->ref > y->ref ? 1 : 0);
}

/* One grid the rings run over: the root's or a sub-directory's. */
typedef struct RingGrid
{
	RingKnn    *r;
	const GfGrid *grid;
	const int64 *refs;			/* each region's child */
	const uint64 *addrs;		/* each region's address */
	uint16		child_level;
	bool	   *visited;		/* regions entered */
	RingCell   *cells;			/* the ring's queue */
} RingGrid;

static void sub_rings(RingKnn *r, TreeNode *sub, uint64 sub_addr);

/* Is the queued region still worth reading (the group is being formed)? */
static bool
ring_still(void *arg, int item)
{
	RingGrid   *g = arg;

	return !g->visited[g->cells[item].region] && ring_may_hold(g->r, g->cells[item].dist);
}

/* Enter a queued region whose page (or bucket) was read. */
static void
ring_enter(void *arg, int item, TreeNode *node)
{
	RingGrid   *g = arg;
	RingKnn    *r = g->r;
	const NodeOps *nops = r->idx->ns->node_ops;
	RingCell   *c = &g->cells[item];

	/* pruned since its group was formed: read for nothing */
	if (g->visited[c->region] || !ring_may_hold(r, c->dist))
		return;
	g->visited[c->region] = true;
	if (node->level == GF_LEVEL_SUBDIR)
	{
		sub_rings(r, node, g->addrs[c->region]);
		return;
	}
	r->idx->stats->entries_examined += node->nentries;
	for (uint32 i = 0; i < node->nentries; i++)
	{
		const void *entry = NodeEntry(node, i);
		Mbr			pt;

		nops->entry_mbr(entry, 0, &pt);
		ring_offer(r, nops->entry_ref(entry, 0), mbr_min_distance(&pt, &r->q));
	}
}

/*
 * Alg. 7 over one grid; regions marked visited beforehand are never
 * entered.
 */
static void
grid_rings(RingGrid *g, uint32 limit, bool *visited)
{
	RingKnn    *r = g->r;
	const GfState *st = (const GfState *) r->idx->state;
	const GfGrid *grid = g->grid;
	int			nx = grid->nx,
				ny = grid->ny;
	int			i0 = gf_scale_interval(grid->sx, nx, r->qx_line);
	int			j0 = gf_scale_interval(grid->sy, ny, r->qy_line);
	int		   *queued_at = palloc(grid->nregions * sizeof(int));
	double		qx = r->q.xmin,
				qy = r->q.ymin;

	g->visited = visited;
	g->cells = palloc(grid->nregions * sizeof(RingCell));
	for (int k = 0; k < grid->nregions; k++)
		queued_at[k] = -1;
	r->idx->stats->entries_examined += grid->nregions;

	for (int step = 0;; step++)
	{
		int			ncells = 0;
		int64	   *refs;
		double		gap = get_float8_infinity();
		bool		beyond = false;

		CHECK_FOR_INTERRUPTS();
		/* the ring's cells: its four sides D */
		for (int j = j0 - step; j <= j0 + step; j++)
		{
			int			di = (j == j0 - step || j == j0 + step) ? 1 : 2 * step;

			if (j < 0 || j >= ny)
				continue;
			for (int i = i0 - step; i <= i0 + step; i += Max(di, 1))
			{
				int			reg;
				Mbr			cell;
				double		d;

				if (i < 0 || i >= nx)
					continue;
				reg = grid->cells[(int64) j * nx + i];
				if (g->visited[reg])
					continue;
				cell.xmin = gf_line_x(st, grid->sx[i]);
				cell.xmax = gf_line_x(st, grid->sx[i + 1]);
				cell.ymin = gf_line_y(st, grid->sy[j]);
				cell.ymax = gf_line_y(st, grid->sy[j + 1]);
				d = mbr_min_distance(&cell, &r->q);
				if (!ring_may_hold(r, d))
					continue;
				if (queued_at[reg] >= 0 && queued_at[reg] < ncells &&
					g->cells[queued_at[reg]].region == reg)
				{
					/* a region once per ring, at its nearest cell */
					g->cells[queued_at[reg]].dist = Min(g->cells[queued_at[reg]].dist, d);
					continue;
				}
				queued_at[reg] = ncells;
				g->cells[ncells].dist = d;
				g->cells[ncells].ref = g->refs[reg];
				g->cells[ncells].region = reg;
				ncells++;
			}
		}
		/* cellQueue: nearest first; cellQueue': the same order, in groups */
		if (ncells > 1)
			qsort(g->cells, ncells, sizeof(RingCell), ring_cell_cmp);
		for (int k = 0; k < ncells; k++)
			queued_at[g->cells[k].region] = -1;
		refs = palloc(Max(ncells, 1) * sizeof(int64));
		for (int k = 0; k < ncells; k++)
			refs[k] = g->cells[k].ref;
		gf_read_next_fit(r->idx, refs, ncells, g->child_level, limit,
						 ring_still, ring_enter, g);
		pfree(refs);

		/* every cell outside the rings so far lies beyond one of its sides */
		if (i0 - step > 0)
		{
			gap = Min(gap, qx - gf_line_x(st, grid->sx[i0 - step]));
			beyond = true;
		}
		if (i0 + step < nx - 1)
		{
			gap = Min(gap, gf_line_x(st, grid->sx[i0 + step + 1]) - qx);
			beyond = true;
		}
		if (j0 - step > 0)
		{
			gap = Min(gap, qy - gf_line_y(st, grid->sy[j0 - step]));
			beyond = true;
		}
		if (j0 + step < ny - 1)
		{
			gap = Min(gap, gf_line_y(st, grid->sy[j0 + step + 1]) - qy);
			beyond = true;
		}
		if (!beyond)
			break;				/* the grid is explored */
		if (r->n == r->k && gap > r->heap[0].dist)
			break;
	}
	pfree(queued_at);
	pfree(g->visited);
	pfree(g->cells);
}

/*
 * Entering a sub-directory: the rings over its grid array, buckets read.
 * Only its entries inside its region count (as for window queries: after
 * a crash a split sub-directory's page may still hold its old content).
 */
static void
sub_rings(RingKnn *r, TreeNode *sub, uint64 sub_addr)
{
	const GfState *st = (const GfState *) r->idx->state;
	GfGrid		grid;
	RingGrid	g;
	int64	   *refs = palloc(sub->nentries * sizeof(int64));
	bool	   *outside = palloc0(sub->nentries * sizeof(bool));

	CHECK_FOR_INTERRUPTS();
	check_stack_depth();
	for (uint32 i = 0; i < sub->nentries; i++)
	{
		refs[i] = GfDirEntries(sub)[i].child;
		outside[i] = !gf_addr_contains(sub_addr, GfDirEntries(sub)[i].addr);
	}
	gf_dir_grid(r->idx, sub, &grid, true);
	g.r = r;
	g.grid = &grid;
	g.refs = refs;
	g.addrs = NULL;
	g.child_level = GF_LEVEL_BUCKET;
	grid_rings(&g, r->prefetch == GF_KNN_PREFETCH_NONE ? 0 : st->lbb_pages, outside);
	gf_grid_free(&grid);
	pfree(refs);
}

/* The rings over the root directory's grid array, sub-directories read. */
static void
root_rings(RingKnn *r, GfRoot *root)
{
	const GfState *st = (const GfState *) r->idx->state;
	int			n = gf_root_count(root);
	int64	   *refs = palloc(n * sizeof(int64));
	uint64	   *addrs = palloc(n * sizeof(uint64));
	RingGrid	g;

	for (int i = 0; i < n; i++)
	{
		refs[i] = (int64) gf_root_sub_page(root, i);
		addrs[i] = gf_root_sub_addr(root, i);
	}
	g.r = r;
	g.grid = gf_root_grid(root);
	g.refs = refs;
	g.addrs = addrs;
	g.child_level = GF_LEVEL_SUBDIR;
	grid_rings(&g, r->prefetch == GF_KNN_PREFETCH_ALL ? st->dpb_pages : 0,
			   palloc0(n * sizeof(bool)));
	pfree(refs);
	pfree(addrs);
}

static int
knn_pair_cmp(const void *a, const void *b)
{
	const KnnPair *x = a;
	const KnnPair *y = b;

	if (pair_worse(x, y))
		return 1;
	if (pair_worse(y, x))
		return -1;
	return 0;
}

/*
 * StructureOps.knn: the k nearest indexed points to (x, y), in (distance,
 * id) order, into *ids and *distances (palloc'd); returns how many.
 */
int
gf_knn(StructIndex *idx, double x, double y, int k, int64 **ids, double **distances)
{
	const GfState *st = (const GfState *) idx->state;
	RingKnn		r;
	HASHCTL		ctl;
	GfRoot	   *root = gf_root(idx);
	uint64		x1,
				y1;

	Assert(k > 0);
	memset(&r, 0, sizeof(r));
	r.idx = idx;
	r.q.xmin = r.q.xmax = x;
	r.q.ymin = r.q.ymax = y;
	r.k = k;
	r.prefetch = st->knn_prefetch;
	r.cap = Min(k, 1024);
	r.heap = palloc(r.cap * sizeof(KnnPair));
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(KnnIdSlot);
	ctl.hcxt = CurrentMemoryContext;
	r.in_heap = hash_create("festival ring knn ids", Min(k, 1024), &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	gf_region_lines(gf_point_addr(st, Min(Max(x, st->extent.xmin), st->extent.xmax),
								  Min(Max(y, st->extent.ymin), st->extent.ymax)),
					&r.qx_line, &x1, &r.qy_line, &y1);
	root_rings(&r, root);

	/* the heap in order: nearest first, ties by id */
	qsort(r.heap, r.n, sizeof(KnnPair), knn_pair_cmp);
	*ids = palloc(Max(r.n, 1) * sizeof(int64));
	*distances = palloc(Max(r.n, 1) * sizeof(double));
	for (int i = 0; i < r.n; i++)
	{
		(*ids)[i] = r.heap[i].id;
		(*distances)[i] = r.heap[i].dist;
	}
	hash_destroy(r.in_heap);
	return r.n;
}
