/*-------------------------------------------------------------------------
 *
 * rtree_split_exponential.c
 *	  The exhaustive R-tree split: the partition of minimum total area.
 *
 * Guttman (SIGMOD 1984, section 3.5.1) names the straightforward way to
 * find the minimum-area split: try every grouping.  This one examines every
 * partition of the M + 1 entries into two groups of at least m entries and
 * keeps the one whose two MBRs have the least sum of areas, which the
 * quadratic and linear splits only approximate.  (FESTIval's version keeps
 * a candidate only when both group areas shrink, so it is not the
 * minimum; see festival-1.1.1-inventory.md section 2.2.)
 *
 * The search is a depth-first branch and bound: entries are placed one at
 * a time into group 0 or group 1; a group's MBR only grows as entries are
 * added, so a partial assignment whose area sum already reaches the best
 * complete one is abandoned, as is one that can no longer give both groups
 * m entries.  The first entry always goes to group 0 (the two groups are
 * interchangeable), and the quadratic split's result is the first bound.
 * The cost is still exponential in M, which is why setup refuses nodes of
 * more than a bounded number of entries (rtree_split.c).
 *
 * Deterministic: entries are placed in a fixed order (larger area first,
 * which makes the bound bite early; ties by position), group 0 is tried
 * before group 1, and only a strictly smaller area replaces the best, so
 * among equal minima the first in this order wins (the quadratic split's
 * partition when it is already minimal).
 *
 * IDENTIFICATION
 *	  src/index/rtree_split_exponential.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

typedef struct ExhaustiveSearch
{
	const RtreeEntry *entries;
	const int  *order;			/* search position -> entry index */
	int			n;
	int			min_fill;
	int		   *current;		/* group of each search position */
	int		   *best;			/* best complete assignment, by position */
	double		best_area;
	bool		found;			/* a partition better than the initial one */
	int64		steps;
} ExhaustiveSearch;

/* Area of a group's MBR; an empty group covers nothing. */
static double
group_area(const Mbr *box, int count)
{
	return count == 0 ? 0.0 : mbr_area(box);
}

static void
place_from(ExhaustiveSearch *s, int k, const Mbr *boxes, const int *counts)
{
	double		area = group_area(&boxes[0], counts[0]) + group_area(&boxes[1], counts[1]);
	int			remaining = s->n - k;

	s->steps++;
	if (area >= s->best_area)
		return;
	if (counts[0] + remaining < s->min_fill || counts[1] + remaining < s->min_fill)
		return;
	if (k == s->n)
	{
		s->best_area = area;
		memcpy(s->best, s->current, s->n * sizeof(int));
		s->found = true;
		return;
	}

	for (int g = 0; g < 2; g++)
	{
		Mbr			next_boxes[2];
		int			next_counts[2];

		/* the groups are interchangeable: the first entry goes to group 0 */
		if (k == 0 && g == 1)
			break;
		next_boxes[0] = boxes[0];
		next_boxes[1] = boxes[1];
		next_counts[0] = counts[0];
		next_counts[1] = counts[1];
		mbr_extend(&next_boxes[g], &s->entries[s->order[k]].box);
		next_counts[g]++;
		s->current[k] = g;
		place_from(s, k + 1, next_boxes, next_counts);
	}
}

typedef struct AreaOrderItem
{
	double		area;
	int			index;
} AreaOrderItem;

static int
compare_area_desc(const void *a, const void *b)
{
	const AreaOrderItem *x = a;
	const AreaOrderItem *y = b;

	if (x->area != y->area)
		return x->area > y->area ? -1 : 1;
	return x->index - y->index;
}

void
rtree_split_exponential(const RtreeEntry *entries, int n, int min_fill, int *group,
						FestStats *stats)
{
	ExhaustiveSearch s;
	AreaOrderItem *items = palloc(n * sizeof(AreaOrderItem));
	int		   *order = palloc(n * sizeof(int));
	Mbr			boxes[2];
	int			counts[2] = {0, 0};

	/* the first bound: the quadratic split's partition (section 3.5.2) */
	rtree_split_policy("quadratic")->split(entries, n, min_fill, group, stats);
	mbr_set_empty(&boxes[0]);
	mbr_set_empty(&boxes[1]);
	for (int i = 0; i < n; i++)
		mbr_extend(&boxes[group[i]], &entries[i].box);

	for (int i = 0; i < n; i++)
	{
		items[i].area = mbr_area(&entries[i].box);
		items[i].index = i;
	}
	qsort(items, n, sizeof(AreaOrderItem), compare_area_desc);
	for (int i = 0; i < n; i++)
		order[i] = items[i].index;

	s.entries = entries;
	s.order = order;
	s.n = n;
	s.min_fill = min_fill;
	s.current = palloc(n * sizeof(int));
	s.best = palloc(n * sizeof(int));
	s.best_area = mbr_area(&boxes[0]) + mbr_area(&boxes[1]);
	s.found = false;
	s.steps = 0;

	mbr_set_empty(&boxes[0]);
	mbr_set_empty(&boxes[1]);
	place_from(&s, 0, boxes, counts);
	stats->entries_examined += s.steps;

	if (s.found)
		for (int k = 0; k < n; k++)
			group[order[k]] = s.best[k];

	pfree(s.current);
	pfree(s.best);
	pfree(order);
	pfree(items);
}
