/*-------------------------------------------------------------------------
 *
 * rtree_split.c
 *	  TreeNode split policies of the R-tree: the table of policies (the
 *	  "split" option), and Guttman's two splits.  The others live in
 *	  rtree_split_exponential.c, rtree_split_axis.c (Greene, Ang & Tan) and
 *	  rtree_split_rstar.c.
 *
 * Guttman, "R-trees: a dynamic index structure for spatial searching",
 * SIGMOD 1984, section 3.5: the quadratic-cost split (3.5.2) and the
 * linear-cost split (3.5.3).  Both grow two groups from two seeds; they
 * differ in how the seeds and the next entry are picked.  A policy only
 * decides the groups; rtree.c moves the entries.
 *
 * Ties are broken deterministically (Guttman QS3: smaller area, then fewer
 * entries, then the first group), so a build is reproducible.
 *
 * IDENTIFICATION
 *	  src/index/rtree_split.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

static double
enlargement(const Mbr *group, const Mbr *entry)
{
	return mbr_union_area(group, entry) - mbr_area(group);
}

/*
 * Guttman's QS3: add the entry to the group needing the least enlargement;
 * ties go to the smaller group by area, then by entry count, then group 0.
 * Greene's split places its middle entry the same way.
 */
int
rtree_choose_group(const Mbr *boxes, const int *counts, const Mbr *entry)
{
	double		d0 = enlargement(&boxes[0], entry);
	double		d1 = enlargement(&boxes[1], entry);
	double		a0;
	double		a1;

	if (d0 != d1)
		return d0 < d1 ? 0 : 1;
	a0 = mbr_area(&boxes[0]);
	a1 = mbr_area(&boxes[1]);
	if (a0 != a1)
		return a0 < a1 ? 0 : 1;
	if (counts[0] != counts[1])
		return counts[0] < counts[1] ? 0 : 1;
	return 0;
}

/*
 * Shared skeleton of both splits: seed the groups, then assign the rest one
 * at a time in the order pick_next chooses, handing all remaining entries
 * to a group when it needs them all to reach m (Guttman QS2).
 */
static void
grow_groups(const RtreeEntry *entries, int n, int min_fill, int *group,
			int seed0, int seed1, bool quadratic_pick, FestStats *stats)
{
	Mbr			boxes[2];
	int			counts[2] = {1, 1};
	int			assigned = 2;

	for (int i = 0; i < n; i++)
		group[i] = -1;
	group[seed0] = 0;
	group[seed1] = 1;
	boxes[0] = entries[seed0].box;
	boxes[1] = entries[seed1].box;

	while (assigned < n)
	{
		int			remaining = n - assigned;
		int			next = -1;
		int			g;

		for (int k = 0; k < 2; k++)
		{
			if (counts[k] + remaining == min_fill)
			{
				for (int i = 0; i < n; i++)
					if (group[i] < 0)
					{
						group[i] = k;
						mbr_extend(&boxes[k], &entries[i].box);
					}
				return;
			}
		}

		if (quadratic_pick)
		{
			/* PickNext (QS3/PN1-PN2): the strongest preference first */
			double		best = -1;

			for (int i = 0; i < n; i++)
			{
				double		diff;

				if (group[i] >= 0)
					continue;
				stats->entries_examined++;
				diff = fabs(enlargement(&boxes[0], &entries[i].box) -
							enlargement(&boxes[1], &entries[i].box));
				if (diff > best)
				{
					best = diff;
					next = i;
				}
			}
		}
		else
		{
			/* the linear split takes the entries in any order */
			for (int i = 0; i < n && next < 0; i++)
				if (group[i] < 0)
					next = i;
		}

		g = rtree_choose_group(boxes, counts, &entries[next].box);
		group[next] = g;
		mbr_extend(&boxes[g], &entries[next].box);
		counts[g]++;
		assigned++;
	}
}

/*
 * Quadratic PickSeeds (PS1-PS2): the pair that would waste the most area
 * if put together; the first such pair in index order.  Greene's split
 * starts from the same seeds.
 */
void
rtree_quadratic_seeds(const RtreeEntry *entries, int n, int *seed0, int *seed1,
					  FestStats *stats)
{
	double		worst = -get_float8_infinity();

	*seed0 = 0;
	*seed1 = 1;

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
		{
			double		waste = mbr_union_area(&entries[i].box, &entries[j].box) -
				mbr_area(&entries[i].box) - mbr_area(&entries[j].box);

			stats->entries_examined++;
			if (waste > worst)
			{
				worst = waste;
				*seed0 = i;
				*seed1 = j;
			}
		}
}

static void
split_quadratic(const RtreeEntry *entries, int n, int min_fill, int *group,
				FestStats *stats)
{
	int			seed0;
	int			seed1;

	rtree_quadratic_seeds(entries, n, &seed0, &seed1, stats);
	grow_groups(entries, n, min_fill, group, seed0, seed1, true, stats);
}

/*
 * Linear PickSeeds (LPS1-LPS3): along each axis, the entry with the highest
 * low side and the one with the lowest high side; their separation is
 * normalised by the width of the whole set, and the axis with the greatest
 * normalised separation gives the seeds.
 */
static void
split_linear(const RtreeEntry *entries, int n, int min_fill, int *group,
			 FestStats *stats)
{
	double		best = -get_float8_infinity();
	int			seed0 = 0;
	int			seed1 = 1;

	for (int axis = 0; axis < 2; axis++)
	{
		int			high_low = 0;	/* entry with the highest low side */
		int			low_high = -1;	/* entry with the lowest high side */
		double		min_low = get_float8_infinity();
		double		max_high = -get_float8_infinity();
		double		width;
		double		separation;

		for (int i = 0; i < n; i++)
		{
			double		lo = mbr_low(&entries[i].box, axis);
			double		hi = mbr_high(&entries[i].box, axis);
			double		best_lo = mbr_low(&entries[high_low].box, axis);

			stats->entries_examined++;
			if (lo > best_lo)
				high_low = i;
			min_low = Min(min_low, lo);
			max_high = Max(max_high, hi);
		}
		/* the lowest high side among the other entries */
		for (int i = 0; i < n; i++)
		{
			double		hi = mbr_high(&entries[i].box, axis);

			if (i == high_low)
				continue;
			if (low_high < 0 || hi < mbr_high(&entries[low_high].box, axis))
				low_high = i;
		}

		width = max_high - min_low;
		separation = mbr_low(&entries[high_low].box, axis) -
			mbr_high(&entries[low_high].box, axis);
		if (width > 0)
			separation /= width;
		else
			separation = 0;

		if (separation > best)
		{
			best = separation;
			seed0 = Min(high_low, low_high);
			seed1 = Max(high_low, low_high);
		}
	}
	grow_groups(entries, n, min_fill, group, seed0, seed1, false, stats);
}

/*
 * The exhaustive split examines up to 2^M partitions (with pruning, far
 * fewer in practice): M + 1 = 20 entries is about half a million at
 * worst, a few milliseconds per split; every further entry doubles it.
 */
#define EXPONENTIAL_MAX_SPLIT_ENTRIES 20

/* In the order of the "split" option's choices. */
const char *const rtree_split_names[] = {
	"linear", "quadratic", "exponential", "greene", "angtan", "rstar", NULL
};

const RtreeSplitPolicy rtree_split_policies[] = {
	{"linear", split_linear, 0},
	{"quadratic", split_quadratic, 0},
	{"exponential", rtree_split_exponential, EXPONENTIAL_MAX_SPLIT_ENTRIES},
	{"greene", rtree_split_greene, 0},
	{"angtan", rtree_split_angtan, 0},
	{"rstar", rtree_split_rstar, 0},
	{NULL, NULL, 0}
};

const RtreeSplitPolicy *
rtree_split_policy(const char *name)
{
	for (const RtreeSplitPolicy *p = rtree_split_policies; p->name != NULL; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	elog(ERROR, "unknown R-tree split policy \"%s\"", name);
	pg_unreachable();
}
