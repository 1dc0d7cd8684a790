/*-------------------------------------------------------------------------
 *
 * rectset.c
 *	  Union area and pairwise overlap of sets of rectangles (rectset.h).
 *
 * The union area is Klee's measure problem in two dimensions (Bentley
 * 1977): sweep a vertical line over the left and right edges in x order;
 * between two consecutive edges the covered area grows by the length of y
 * covered by the open rectangles times the distance swept.  That length is
 * kept by a segment tree over the elementary intervals between the
 * distinct y coordinates: each tree node counts the rectangles covering
 * its whole interval and knows the covered length below it, so opening or
 * closing a rectangle costs O(log n).  The result is exact up to floating
 * point rounding, as PostGIS's ST_Area(ST_Union(...)) is.
 *
 * IDENTIFICATION
 *	  src/geom/rectset.c
 *
 *-------------------------------------------------------------------------
 */
#include "geom/rectset.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

/* A rectangle with a positive, finite area. */
static bool
rect_has_area(const Mbr *r)
{
	return isfinite(r->xmin) && isfinite(r->ymin) &&
		isfinite(r->xmax) && isfinite(r->ymax) &&
		r->xmin < r->xmax && r->ymin < r->ymax;
}

/*--------------------------------------------------------------------------
 * Union area
 *--------------------------------------------------------------------------
 */

typedef struct SweepEdge
{
	double		x;
	int32		ylo;			/* first elementary y interval covered */
	int32		yhi;			/* last elementary y interval covered */
	int32		delta;			/* +1 left edge, -1 right edge */
} SweepEdge;

typedef struct CoverTree
{
	const double *ys;			/* distinct y coordinates, ascending */
	int32	   *count;			/* rectangles covering a tree node's whole interval */
	double	   *covered;		/* covered y length below a tree node */
} CoverTree;

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static int
cmp_edge(const void *a, const void *b)
{
	const SweepEdge *e = (const SweepEdge *) a;
	const SweepEdge *f = (const SweepEdge *) b;

	if (e->x != f->x)
		return e->x < f->x ? -1 : 1;
	return 0;
}

/* Index of y among the n distinct coordinates (it is one of them). */
static int32
y_index(const double *ys, int32 n, double y)
{
	int32		lo = 0;
	int32		hi = n - 1;

	while (lo < hi)
	{
		int32		mid = lo + (hi - lo) / 2;

		if (ys[mid] < y)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Add delta to the cover count of elementary intervals [qlo, qhi] under the
 * tree node that spans intervals [lo, hi].
 */
static void
cover_update(CoverTree *t, int32 node, int32 lo, int32 hi,
			 int32 qlo, int32 qhi, int32 delta)
{
	if (qhi < lo || hi < qlo)
		return;
	if (qlo <= lo && hi <= qhi)
		t->count[node] += delta;
	else
	{
		int32		mid = lo + (hi - lo) / 2;

		cover_update(t, 2 * node, lo, mid, qlo, qhi, delta);
		cover_update(t, 2 * node + 1, mid + 1, hi, qlo, qhi, delta);
	}

	if (t->count[node] > 0)
		t->covered[node] = t->ys[hi + 1] - t->ys[lo];
	else if (lo == hi)
		t->covered[node] = 0.0;
	else
		t->covered[node] = t->covered[2 * node] + t->covered[2 * node + 1];
}

double
rectset_union_area(const Mbr *rects, int64 n)
{
	int64		nrects = 0;
	double	   *ys;
	int32		nys = 0;
	SweepEdge  *edges;
	int64		nedges = 0;
	CoverTree	tree;
	int32		nintervals;
	double		area = 0.0;

	if (n <= 0)
		return 0.0;
	if (n > (int64) (MaxAllocSize / (2 * sizeof(SweepEdge))))
		elog(ERROR, "too many rectangles for a union area: " INT64_FORMAT, n);

	ys = palloc(2 * n * sizeof(double));
	for (int64 i = 0; i < n; i++)
		if (rect_has_area(&rects[i]))
		{
			ys[2 * nrects] = rects[i].ymin;
			ys[2 * nrects + 1] = rects[i].ymax;
			nrects++;
		}
	if (nrects <= 1)
	{
		/* nothing to merge: the area of the one rectangle, if any */
		pfree(ys);
		for (int64 i = 0; i < n && nrects == 1; i++)
			if (rect_has_area(&rects[i]))
				area = mbr_area(&rects[i]);
		return area;
	}

	qsort(ys, 2 * nrects, sizeof(double), cmp_double);
	for (int64 i = 0; i < 2 * nrects; i++)
		if (nys == 0 || ys[i] != ys[nys - 1])
			ys[nys++] = ys[i];
	nintervals = nys - 1;		/* at least 1: every rectangle has height */

	edges = palloc(2 * nrects * sizeof(SweepEdge));
	for (int64 i = 0; i < n; i++)
	{
		const Mbr  *r = &rects[i];
		int32		lo;
		int32		hi;

		if (!rect_has_area(r))
			continue;
		lo = y_index(ys, nys, r->ymin);
		hi = y_index(ys, nys, r->ymax) - 1;
		edges[nedges++] = (SweepEdge) {r->xmin, lo, hi, +1};
		edges[nedges++] = (SweepEdge) {r->xmax, lo, hi, -1};
	}
	/* edges at the same x: their order changes no area (nothing is swept) */
	qsort(edges, nedges, sizeof(SweepEdge), cmp_edge);

	tree.ys = ys;
	tree.count = palloc0(4 * (size_t) nintervals * sizeof(int32));
	tree.covered = palloc0(4 * (size_t) nintervals * sizeof(double));

	for (int64 i = 0; i < nedges; i++)
	{
		if (i > 0)
			area += tree.covered[1] * (edges[i].x - edges[i - 1].x);
		cover_update(&tree, 1, 0, nintervals - 1,
					 edges[i].ylo, edges[i].yhi, edges[i].delta);
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	pfree(tree.count);
	pfree(tree.covered);
	pfree(edges);
	pfree(ys);
	return area;
}

/*--------------------------------------------------------------------------
 * Pairwise overlap
 *--------------------------------------------------------------------------
 */

typedef struct XOrder
{
	const Mbr  *rect;
	int64		pos;			/* position in the input: ties broken by it */
} XOrder;

static int
cmp_xorder(const void *a, const void *b)
{
	const XOrder *p = (const XOrder *) a;
	const XOrder *q = (const XOrder *) b;

	if (p->rect->xmin != q->rect->xmin)
		return p->rect->xmin < q->rect->xmin ? -1 : 1;
	return (p->pos > q->pos) - (p->pos < q->pos);
}

/*
 * Rectangles in xmin order; the active list holds those whose x range may
 * still meet a later one's (xmax beyond the current xmin).  Pairs that
 * only touch have no overlap area, so a rectangle leaves the list as soon
 * as the sweep reaches its xmax.
 */
double
rectset_pairwise_overlap(const Mbr *rects, int64 n)
{
	XOrder	   *order;
	const Mbr **active;
	int64		nrects = 0;
	int64		nactive = 0;
	double		overlap = 0.0;

	if (n <= 1)
		return 0.0;
	if (n > (int64) (MaxAllocSize / sizeof(XOrder)))
		elog(ERROR, "too many rectangles for a pairwise overlap: " INT64_FORMAT, n);

	order = palloc(n * sizeof(XOrder));
	for (int64 i = 0; i < n; i++)
		if (rect_has_area(&rects[i]))
		{
			order[nrects].rect = &rects[i];
			order[nrects].pos = i;
			nrects++;
		}
	qsort(order, nrects, sizeof(XOrder), cmp_xorder);

	active = palloc(Max(nrects, 1) * sizeof(const Mbr *));
	for (int64 i = 0; i < nrects; i++)
	{
		const Mbr  *r = order[i].rect;
		int64		kept = 0;

		for (int64 j = 0; j < nactive; j++)
		{
			const Mbr  *a = active[j];

			if (a->xmax <= r->xmin)
				continue;		/* closed before r opens: drop it */
			overlap += mbr_overlap_area(a, r);
			active[kept++] = a;
		}
		nactive = kept;
		active[nactive++] = r;
		if ((i & 0x3FF) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	pfree(active);
	pfree(order);
	return overlap;
}
