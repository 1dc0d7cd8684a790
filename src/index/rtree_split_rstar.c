/*-------------------------------------------------------------------------
 *
 * rtree_split_rstar.c
 *	  The R*-tree split (Beckmann, Kriegel, Schneider, Seeger, "The R*-tree:
 *	  an efficient and robust access method for points and rectangles",
 *	  SIGMOD 1990, section 4.2), used by the R*-tree and available to the
 *	  R-tree as split 'rstar'.
 *
 * For each axis the M + 1 entries are sorted by their lower value and, as
 * a second sort, by their upper value; each sort gives M - 2m + 2
 * distributions, the first group holding the first (m - 1) + k entries,
 * k = 1 .. M - 2m + 2.  ChooseSplitAxis (CSA1-CSA2) takes the axis whose
 * distributions have the least sum of margins (half perimeters) of both
 * groups' MBRs; ChooseSplitIndex (CSI1) takes, along that axis and over
 * both sorts, the distribution of least overlap between the two MBRs, ties
 * by least sum of areas.
 *
 * Deterministic: sorts break ties by the other coordinate, then by entry
 * position; the x axis wins ties of margin; among equal distributions the
 * lower-value sort comes first, then the smaller first group.  The MBRs of
 * every prefix and suffix of a sort are computed once, so each sort costs
 * O(n log n) plus O(n).
 *
 * IDENTIFICATION
 *	  src/index/rtree_split_rstar.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

/*
 * The two keys of one sort, per entry: the lower (or upper) value on the
 * axis, then the other one; ties by position.  A strict total order on
 * finite keys, which the sort_template.h instance below sorts with the
 * comparison inlined: the same algorithm as qsort_arg, the same order.
 */
typedef struct RstarSortKeys
{
	double	   *first;
	double	   *second;
} RstarSortKeys;

static inline int
compare_on_axis(int ia, int ib, const RstarSortKeys *keys)
{
	if (keys->first[ia] != keys->first[ib])
		return keys->first[ia] < keys->first[ib] ? -1 : 1;
	if (keys->second[ia] != keys->second[ib])
		return keys->second[ia] < keys->second[ib] ? -1 : 1;
	return ia - ib;
}

#define ST_SORT sort_by_keys
#define ST_ELEMENT_TYPE int
#define ST_COMPARE(a, b, arg) compare_on_axis(*(a), *(b), arg)
#define ST_COMPARE_ARG_TYPE const RstarSortKeys
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * One sort of the entries with the MBRs of its prefixes and suffixes:
 * prefix[k] covers order[0..k], suffix[k] covers order[k..n-1].
 */
typedef struct RstarSort
{
	int		   *order;
	Mbr		   *prefix;
	Mbr		   *suffix;
} RstarSort;

static void
sort_entries(const RtreeEntry *entries, int n, int axis, bool by_upper,
			 RstarSort *sort)
{
	RstarSortKeys keys;

	keys.first = palloc(2 * n * sizeof(double));
	keys.second = keys.first + n;
	sort->order = palloc(n * sizeof(int));
	sort->prefix = palloc(n * sizeof(Mbr));
	sort->suffix = palloc(n * sizeof(Mbr));
	for (int i = 0; i < n; i++)
	{
		const Mbr  *b = &entries[i].box;

		keys.first[i] = by_upper ? mbr_high(b, axis) : mbr_low(b, axis);
		keys.second[i] = by_upper ? mbr_low(b, axis) : mbr_high(b, axis);
		sort->order[i] = i;
	}
	sort_by_keys(sort->order, n, &keys);
	pfree(keys.first);

	sort->prefix[0] = entries[sort->order[0]].box;
	for (int k = 1; k < n; k++)
	{
		sort->prefix[k] = sort->prefix[k - 1];
		mbr_extend(&sort->prefix[k], &entries[sort->order[k]].box);
	}
	sort->suffix[n - 1] = entries[sort->order[n - 1]].box;
	for (int k = n - 2; k >= 0; k--)
	{
		sort->suffix[k] = sort->suffix[k + 1];
		mbr_extend(&sort->suffix[k], &entries[sort->order[k]].box);
	}
}

/* Is every entry's lower value on axis equal to its upper one? */
static bool
degenerate_on_axis(const RtreeEntry *entries, int n, int axis)
{
	for (int i = 0; i < n; i++)
		if (mbr_low(&entries[i].box, axis) != mbr_high(&entries[i].box, axis))
			return false;
	return true;
}

static void
copy_sort(const RstarSort *from, int n, RstarSort *to)
{
	to->order = palloc(n * sizeof(int));
	to->prefix = palloc(n * sizeof(Mbr));
	to->suffix = palloc(n * sizeof(Mbr));
	memcpy(to->order, from->order, n * sizeof(int));
	memcpy(to->prefix, from->prefix, n * sizeof(Mbr));
	memcpy(to->suffix, from->suffix, n * sizeof(Mbr));
}

static void
free_sort(RstarSort *sort)
{
	pfree(sort->order);
	pfree(sort->prefix);
	pfree(sort->suffix);
}

void
rtree_split_rstar(const RtreeEntry *entries, int n, int min_fill, int *group,
				  FestStats *stats)
{
	RstarSort	sorts[2][2];	/* [axis][by_upper] */
	double		margin[2] = {0, 0};
	int			axis;
	int			best_sort = 0;
	int			best_size = min_fill;
	double		best_overlap = get_float8_infinity();
	double		best_area = get_float8_infinity();

	/* ChooseSplitAxis: the least sum of margins over all distributions */
	for (int a = 0; a < 2; a++)
		for (int u = 0; u < 2; u++)
		{
			RstarSort  *s = &sorts[a][u];

			/*
			 * When every entry's lower value on the axis equals its upper
			 * one (points), the upper-value sort compares the same keys as
			 * the lower-value one and gives its order, prefixes and
			 * suffixes: they are copied.
			 */
			if (u == 1 && degenerate_on_axis(entries, n, a))
				copy_sort(&sorts[a][0], n, s);
			else
				sort_entries(entries, n, a, u == 1, s);
			/* the first group has size entries, from m to n - m */
			for (int size = min_fill; size <= n - min_fill; size++)
				margin[a] += mbr_margin(&s->prefix[size - 1]) + mbr_margin(&s->suffix[size]);
		}
	stats->entries_examined += 4 * n;
	axis = margin[1] < margin[0] ? 1 : 0;

	/* ChooseSplitIndex: least overlap, then least area */
	for (int u = 0; u < 2; u++)
	{
		RstarSort  *s = &sorts[axis][u];

		for (int size = min_fill; size <= n - min_fill; size++)
		{
			const Mbr  *first = &s->prefix[size - 1];
			const Mbr  *second = &s->suffix[size];
			double		overlap = mbr_overlap_area(first, second);
			double		area = mbr_area(first) + mbr_area(second);

			if (overlap < best_overlap ||
				(overlap == best_overlap && area < best_area))
			{
				best_overlap = overlap;
				best_area = area;
				best_sort = u;
				best_size = size;
			}
		}
	}

	for (int k = 0; k < n; k++)
		group[sorts[axis][best_sort].order[k]] = k < best_size ? 0 : 1;

	for (int a = 0; a < 2; a++)
		for (int u = 0; u < 2; u++)
			free_sort(&sorts[a][u]);
}
