/*-------------------------------------------------------------------------
 *
 * gridfile_knn.c
 *	  The grid files' ring kNN search (Fevgas 2019, PhD thesis, §3.5.2,
 *	  Alg. 7), with the thesis's prefetch variants (knn_prefetch), for
 *	  GFFM and LB-Grid alike.
 *
 * One implementation for both grid files, as in the thesis (§3.5: "GFFM
 * uses the same algorithms with one-page buckets").  The directory part
 * is GFFM's, which LB-Grid shares (its root and sub-directories are GFFM
 * directory pages).  The bucket part goes through the structure's
 * read_leaves hook (StructureOps, via tree_read_node/tree_read_nodes),
 * the one callback the two differ in: GFFM has none and reads bucket
 * pages (ns_read/ns_read_many); LB-Grid's (lbgrid.c) is readBucket for a
 * group of buckets, §3.4.2: the union of their log-page lists read with
 * one ns_read_many, a log page shared by several buckets of the group read
 * once, then each bucket replayed from its pages.  So for LB-Grid "a page"
 * below means a logical bucket, one submission whatever its list's length;
 * a group of GF_KNN_GROUP buckets stands in for the thesis's log-bucket
 * read buffer (prefetch_logbuckets: "as many log-buckets as fit in LBB",
 * a size the thesis does not give beyond its 16 MB total), bounded by
 * buckets rather than pages as LB-Grid's P-RQ groups are.
 *
 * At every directory page, beginning with the root, the cells (entries)
 * are examined ring by ring outward from the query's cell, as in
 * conceptual partitioning: ring 0 is the cell nearest the query point
 * (the one holding it, when the point is inside the page's region); ring
 * s holds the cells, not yet queued, that overlap that cell's box widened
 * by s cell widths and s cell heights on every side.  A ring's cells whose
 * minimum distance could still beat the k-th neighbour are sorted by that
 * distance (then page) and entered in that order: a sub-directory by the
 * same procedure one level down, a bucket by offering its points to a
 * max-heap of the k best (distance, id) pairs.  The same procedure runs at
 * the root and inside each sub-directory, as the thesis says.
 *
 * Stopping.  A cell is entered only while the heap holds fewer than k
 * points or the cell's minimum distance is at most the k-th distance (at
 * most: a point at exactly that distance with a smaller id still wins, so
 * ties come out as festival.knn documents, smallest ids first).  Rings stop
 * when every cell has been queued, or when the heap is full and the gap
 * from the query point to the border of the widened box exceeds the k-th
 * distance: every cell not yet queued lies outside that box, so its
 * minimum distance is at least the gap.  (The thesis's pseudo-code tests
 * "size <= k"; the intent, used here, is "fewer than k".)
 *
 * Prefetch (thesis §3.5.2 and §5.4, evaluated variants):
 *	none	every page is read when its cell is entered (one submission each;
 *			LB-Grid: each bucket's log pages, one submission per bucket);
 *	data	a ring's buckets are read ahead in groups of up to
 *			GF_KNN_GROUP pages with ns_read_many (one submission per group
 *			under libaio or io_uring), the cells the heap has not yet pruned
 *			when the group is formed; cells pruned while the group is
 *			examined were read for nothing, the trade-off the thesis
 *			measures;
 *	all		sub-directories are read ahead the same way, too (the thesis
 *			found this wasteful and dropped it from its figures).
 * The group of GF_KNN_GROUP pages stands in for the thesis's log-bucket and
 * directory read buffers, as in P-RQ (gridfile.c).
 *
 * visitedList: the thesis needs it because cells of a scales-based grid
 * share buckets.  Here every cell is its own entry with its own page (in
 * LB-Grid its own logical bucket), so a bucket is reached once and no list
 * is kept.
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
	KnnPair    *heap;			/* max-heap: the worst of the k best on top */
	int			n;
	int			cap;
	HTAB	   *in_heap;		/* ids in the heap */
} RingKnn;

/* One cell of a ring: a directory entry and its minimum distance. */
typedef struct RingCell
{
	double		dist;
	int64		page;
	int			slot;
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
	return x->page < y->page ? -1 : (x->page > y->page ? 1 : 0);
}

static void ring_visit(RingKnn *r, TreeNode *node);

/*
 * Does the cell overlap the ring's box with more than its border?  A cell
 * that only touches the border has every point outside the box's
 * interior, so it is at least the gap away (see ring_visit) and belongs to
 * a later ring: ring 0 is the query's cell alone, not its neighbours too.
 */
static inline bool
ring_overlaps(const Mbr *cell, const Mbr *e)
{
	return cell->xmin < e->xmax && cell->xmax > e->xmin &&
		cell->ymin < e->ymax && cell->ymax > e->ymin;
}

/*
 * Enter the ring's cells (sorted, all may hold at the time of sorting) in
 * order, reading their pages one at a time or in groups.
 */
static void
ring_enter_cells(RingKnn *r, TreeNode *node, RingCell *cells, int ncells)
{
	bool		grouped = (node->level == 1) ? r->prefetch != GF_KNN_PREFETCH_NONE
		: r->prefetch == GF_KNN_PREFETCH_ALL;
	int			i = 0;

	while (i < ncells && ring_may_hold(r, cells[i].dist))
	{
		PageId		pages[GF_KNN_GROUP];
		TreeNode   *nodes[GF_KNN_GROUP];
		int			ngroup = 0;

		if (!grouped)
		{
			TreeNode   *child = tree_read_child(r->idx, node, cells[i].page);

			ring_visit(r, child);
			tree_free_node(child);
			i++;
			continue;
		}
		/* the cells still worth reading when the group is formed */
		while (i + ngroup < ncells && ngroup < GF_KNN_GROUP &&
			   ring_may_hold(r, cells[i + ngroup].dist))
		{
			pages[ngroup] = (PageId) cells[i + ngroup].page;
			ngroup++;
		}
		Assert(ngroup > 0);
		/* bucket pages, or LB-Grid's buckets through its read_leaves */
		tree_read_nodes(r->idx, pages, ngroup, node->level - 1, nodes);
		for (int g = 0; g < ngroup; g++)
		{
			if (nodes[g]->level != node->level - 1)
				tree_report_bad_level(r->idx, nodes[g], node->level - 1);
			/* pruned since the group was formed: read for nothing */
			if (ring_may_hold(r, cells[i + g].dist))
				ring_visit(r, nodes[g]);
			tree_free_node(nodes[g]);
		}
		i += ngroup;
	}
}

static void
ring_visit(RingKnn *r, TreeNode *node)
{
	const NodeOps *nops = r->idx->ns->node_ops;
	int			n = (int) node->nentries;
	double	   *dist;
	Mbr		   *box;
	bool	   *queued;
	RingCell   *cells;
	int			nqueued = 0;
	int			start = 0;
	double		w,
				h,
				qx = r->q.xmin,
				qy = r->q.ymin;

	CHECK_FOR_INTERRUPTS();
	r->idx->stats->entries_examined += n;
	if (node->level == 0)
	{
		for (int i = 0; i < n; i++)
		{
			const void *entry = NodeEntry(node, i);
			Mbr			pt;

			nops->entry_mbr(entry, 0, &pt);
			ring_offer(r, nops->entry_ref(entry, 0), mbr_min_distance(&pt, &r->q));
		}
		return;
	}
	if (n == 0)
		return;

	dist = palloc(n * sizeof(double));
	box = palloc(n * sizeof(Mbr));
	queued = palloc0(n * sizeof(bool));
	cells = palloc(n * sizeof(RingCell));
	for (int i = 0; i < n; i++)
	{
		nops->entry_mbr(NodeEntry(node, i), node->level, &box[i]);
		dist[i] = mbr_min_distance(&box[i], &r->q);
		if (dist[i] < dist[start])
			start = i;
	}
	/* the query's cell: a ring is this cell's size wide */
	w = box[start].xmax - box[start].xmin;
	h = box[start].ymax - box[start].ymin;
	if (!(w > 0.0))
		w = 1.0;
	if (!(h > 0.0))
		h = 1.0;

	for (int step = 0; nqueued < n; step++)
	{
		Mbr			e;
		int			ncells = 0;
		double		gap;

		e.xmin = box[start].xmin - step * w;
		e.xmax = box[start].xmax + step * w;
		e.ymin = box[start].ymin - step * h;
		e.ymax = box[start].ymax + step * h;
		for (int i = 0; i < n; i++)
		{
			if (queued[i] || !ring_overlaps(&box[i], &e))
				continue;
			queued[i] = true;
			nqueued++;
			/* a cell too far now stays too far: the k-th distance only falls */
			if (ring_may_hold(r, dist[i]))
			{
				cells[ncells].dist = dist[i];
				cells[ncells].page = nops->entry_ref(NodeEntry(node, i), node->level);
				cells[ncells].slot = i;
				ncells++;
			}
		}
		if (ncells > 1)
			qsort(cells, ncells, sizeof(RingCell), ring_cell_cmp);
		ring_enter_cells(r, node, cells, ncells);

		/* every cell not queued yet lies outside e: at least gap away */
		if (qx >= e.xmin && qx <= e.xmax && qy >= e.ymin && qy <= e.ymax)
			gap = Min(Min(qx - e.xmin, e.xmax - qx), Min(qy - e.ymin, e.ymax - qy));
		else
			gap = 0.0;
		if (r->n == r->k && gap > r->heap[0].dist)
			break;
	}
	pfree(dist);
	pfree(box);
	pfree(queued);
	pfree(cells);
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
	TreeNode   *root;

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

	root = tree_read_root(idx);
	ring_visit(&r, root);
	tree_free_node(root);

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
