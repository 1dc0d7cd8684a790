/*-------------------------------------------------------------------------
 *
 * rtree_split_axis.c
 *	  R-tree splits that cut a node along one axis: Greene's and Ang & Tan's.
 *
 * Greene, "An implementation and performance analysis of spatial data
 * access methods", ICDE 1989: ChooseAxis takes the quadratic split's seeds
 * (the most wasteful pair), measures their separation along each axis,
 * normalised by the node's extent along it, and picks the axis of the
 * greatest normalised separation; Distribute sorts the entries by their
 * low coordinate on that axis and gives the first (M+1) div 2 to one group
 * and the last (M+1) div 2 to the other; with an odd count the middle
 * entry goes to the group it enlarges least.
 *
 * Ang and Tan, "New linear node splitting algorithm for R-trees", SSD
 * 1997: every entry goes to LISTL or LISTR by which of the node MBR's left
 * and right borders it is closer to (the distance from its own low side to
 * the left border against that from its high side to the right border;
 * equal distances go right), and likewise to LISTB or LISTT; the axis
 * whose two lists are the more evenly sized is chosen, ties by the smaller
 * overlap of the two groups' MBRs, then by the smaller total coverage
 * (sum of the two areas), then the x axis.  The paper does not guarantee
 * the minimum fill; here a list with fewer than m entries receives, from
 * the other list, the entries closest (relative to the two borders) to its
 * border, until it has m.
 *
 * Both are linear apart from sorting (Greene's seeds are quadratic).
 * Ties are broken by entry position, so splits are deterministic.
 *
 * IDENTIFICATION
 *	  src/index/rtree_split_axis.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

static Mbr
entries_box(const RtreeEntry *entries, int n)
{
	Mbr			box;

	mbr_set_empty(&box);
	for (int i = 0; i < n; i++)
		mbr_extend(&box, &entries[i].box);
	return box;
}

/*-------------------------------------------------------------------------
 * Greene 1989
 *-------------------------------------------------------------------------
 */

typedef struct AxisSortArg
{
	const RtreeEntry *entries;
	int			axis;
} AxisSortArg;

/* By low coordinate on the axis, then high coordinate, then position. */
static int
compare_low_on_axis(const void *a, const void *b, void *arg)
{
	const AxisSortArg *sa = arg;
	int			ia = *(const int *) a;
	int			ib = *(const int *) b;
	const Mbr  *ba = &sa->entries[ia].box;
	const Mbr  *bb = &sa->entries[ib].box;
	double		la = mbr_low(ba, sa->axis);
	double		lb = mbr_low(bb, sa->axis);

	if (la != lb)
		return la < lb ? -1 : 1;
	la = mbr_high(ba, sa->axis);
	lb = mbr_high(bb, sa->axis);
	if (la != lb)
		return la < lb ? -1 : 1;
	return ia - ib;
}

void
rtree_split_greene(const RtreeEntry *entries, int n, int min_fill, int *group,
				   FestStats *stats)
{
	Mbr			node = entries_box(entries, n);
	int			seed0;
	int			seed1;
	int			axis = 0;
	double		best = -get_float8_infinity();
	int		   *order = palloc(n * sizeof(int));
	AxisSortArg arg;
	int			half = n / 2;

	/* ChooseAxis (CA1-CA4) */
	rtree_quadratic_seeds(entries, n, &seed0, &seed1, stats);
	for (int a = 0; a < 2; a++)
	{
		const Mbr  *s0 = &entries[seed0].box;
		const Mbr  *s1 = &entries[seed1].box;
		double		separation = Max(mbr_low(s0, a), mbr_low(s1, a)) -
			Min(mbr_high(s0, a), mbr_high(s1, a));
		double		width = mbr_high(&node, a) - mbr_low(&node, a);

		separation = width > 0 ? separation / width : 0.0;
		if (separation > best)
		{
			best = separation;
			axis = a;
		}
	}

	/* Distribute (D1-D3) */
	for (int i = 0; i < n; i++)
		order[i] = i;
	arg.entries = entries;
	arg.axis = axis;
	qsort_arg(order, n, sizeof(int), compare_low_on_axis, &arg);
	stats->entries_examined += n;

	for (int k = 0; k < half; k++)
	{
		group[order[k]] = 0;
		group[order[n - 1 - k]] = 1;
	}
	if (n % 2 == 1)
	{
		Mbr			boxes[2];
		int			counts[2] = {half, half};

		mbr_set_empty(&boxes[0]);
		mbr_set_empty(&boxes[1]);
		for (int k = 0; k < half; k++)
		{
			mbr_extend(&boxes[0], &entries[order[k]].box);
			mbr_extend(&boxes[1], &entries[order[n - 1 - k]].box);
		}
		group[order[half]] = rtree_choose_group(boxes, counts,
												&entries[order[half]].box);
	}
	/* half >= m because setup guarantees m <= (M + 1) / 2 */
	Assert(half >= min_fill);
	pfree(order);
}

/*-------------------------------------------------------------------------
 * Ang & Tan 1997
 *-------------------------------------------------------------------------
 */

/* One axis's distribution into the low list (0) and the high list (1). */
typedef struct AxisLists
{
	int		   *side;			/* per entry, 0 or 1 */
	int			raw_larger;		/* size of the larger list, before the fill fix */
	double		overlap;
	double		coverage;
} AxisLists;

typedef struct MoveCandidate
{
	double		preference;		/* how much closer to the low border */
	int			index;
} MoveCandidate;

static int
compare_preference(const void *a, const void *b)
{
	const MoveCandidate *x = a;
	const MoveCandidate *y = b;

	if (x->preference != y->preference)
		return x->preference < y->preference ? -1 : 1;
	return x->index - y->index;
}

static void
distribute_by_borders(const RtreeEntry *entries, int n, int min_fill,
					  const Mbr *node, int axis, AxisLists *lists)
{
	double	   *preference = palloc(n * sizeof(double));
	int			counts[2] = {0, 0};
	Mbr			boxes[2];

	for (int i = 0; i < n; i++)
	{
		double		to_low = mbr_low(&entries[i].box, axis) - mbr_low(node, axis);
		double		to_high = mbr_high(node, axis) - mbr_high(&entries[i].box, axis);

		/* negative: closer to the low border */
		preference[i] = to_low - to_high;
		lists->side[i] = to_low < to_high ? 0 : 1;
		counts[lists->side[i]]++;
	}
	lists->raw_larger = Max(counts[0], counts[1]);

	/* the minimum fill: the short list takes the entries nearest its border */
	for (int small = 0; small < 2; small++)
	{
		MoveCandidate *cand;
		int			ncand = 0;

		if (counts[small] >= min_fill)
			continue;
		cand = palloc(n * sizeof(MoveCandidate));
		for (int i = 0; i < n; i++)
			if (lists->side[i] != small)
			{
				/* for the high list, nearest means the largest preference */
				cand[ncand].preference = small == 0 ? preference[i] : -preference[i];
				cand[ncand].index = i;
				ncand++;
			}
		qsort(cand, ncand, sizeof(MoveCandidate), compare_preference);
		for (int k = 0; counts[small] < min_fill; k++)
		{
			lists->side[cand[k].index] = small;
			counts[small]++;
			counts[1 - small]--;
		}
		pfree(cand);
	}

	mbr_set_empty(&boxes[0]);
	mbr_set_empty(&boxes[1]);
	for (int i = 0; i < n; i++)
		mbr_extend(&boxes[lists->side[i]], &entries[i].box);
	lists->overlap = mbr_overlap_area(&boxes[0], &boxes[1]);
	lists->coverage = mbr_area(&boxes[0]) + mbr_area(&boxes[1]);
	pfree(preference);
}

void
rtree_split_angtan(const RtreeEntry *entries, int n, int min_fill, int *group,
				   FestStats *stats)
{
	Mbr			node = entries_box(entries, n);
	AxisLists	lists[2];
	int			axis;

	for (int a = 0; a < 2; a++)
	{
		lists[a].side = palloc(n * sizeof(int));
		distribute_by_borders(entries, n, min_fill, &node, a, &lists[a]);
	}
	stats->entries_examined += 2 * n;

	/* the more even distribution; ties by overlap, then coverage, then x */
	if (lists[0].raw_larger != lists[1].raw_larger)
		axis = lists[0].raw_larger < lists[1].raw_larger ? 0 : 1;
	else if (lists[0].overlap != lists[1].overlap)
		axis = lists[0].overlap < lists[1].overlap ? 0 : 1;
	else if (lists[0].coverage != lists[1].coverage)
		axis = lists[0].coverage < lists[1].coverage ? 0 : 1;
	else
		axis = 0;

	memcpy(group, lists[axis].side, n * sizeof(int));
	pfree(lists[0].side);
	pfree(lists[1].side);
}
