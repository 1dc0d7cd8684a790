/*-------------------------------------------------------------------------
 *
 * rstartree.c
 *	  The R*-tree of Beckmann, Kriegel, Schneider and Seeger, "The R*-tree:
 *	  an efficient and robust access method for points and rectangles",
 *	  SIGMOD 1990.
 *
 * The R*-tree is the R-tree of rtree.c (same 40-byte entries, same node
 * layout, deletion, check and search) with three other decisions, which
 * this file gives to the shared core through RtreeState:
 *
 *	- ChooseSubtree (section 4.1): in a node whose children are leaves, the
 *	  entry whose rectangle needs the least overlap enlargement, ties by
 *	  least area enlargement, then least area.  The overlap is computed
 *	  only for the max_neighbors entries of least area enlargement, against
 *	  all entries of the node: the paper's "nearly minimum overlap cost"
 *	  for large nodes.  Elsewhere, the least area enlargement (ties by
 *	  area), as in the R-tree.
 *	- OverflowTreatment (section 4.3): the first overflow at each level
 *	  during the insertion of one object, except at the root, is treated by
 *	  forced reinsertion: the p = reinsert_percent % of M entries whose
 *	  centres lie farthest from the centre of the node's MBR are removed
 *	  and inserted again at the same level, closest first ('close', the
 *	  paper's better variant) or farthest first ('far').  Any other
 *	  overflow is a split.
 *	- Split (section 4.2): rtree_split_rstar.c.
 *
 * Deletion is the R-tree's: CondenseTree reinserts the entries of
 * eliminated nodes, and does so with this insertion.
 *
 * IDENTIFICATION
 *	  src/index/rstartree.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

#include <math.h>

#include "stats/jsonbuild.h"

static const char *const reinsert_orders[] = {"close", "far", NULL};

StaticAssertDecl(lengthof(reinsert_orders) == 3, "reinsert_orders: close, then far");

/* The R*-tree's options, read once by rstartree_setup. */
typedef struct RstartreeOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	int64		min_fill;
	int64		max_fill;
	int64		max_neighbors;
	int64		reinsert_percent;
	int			reinsert;		/* index into reinsert_orders */
} RstartreeOptions;

#define REINSERT_FAR 1

static const OptionSpec rstartree_options[] = {
	{
		.name = "min_fill", .type = OPT_INT, .default_number = 40,
		.min = 1, .max = 100,
		.description = "Minimum node occupancy m, in percent of the maximum M (the R*-tree paper finds 40 best).",
		.offset = offsetof(RstartreeOptions, min_fill)
	},
	{
		.name = "max_fill", .type = OPT_INT, .default_number = 100,
		.min = 10, .max = 100,
		.description = "Maximum node occupancy M, in percent of the entries a page holds.",
		.offset = offsetof(RstartreeOptions, max_fill)
	},
	{
		.name = "max_neighbors", .type = OPT_INT, .default_number = 32,
		.min = 1, .max = 100000,
		.description = "Entries of least area enlargement whose overlap enlargement ChooseSubtree computes, above the leaves.",
		.offset = offsetof(RstartreeOptions, max_neighbors)
	},
	{
		.name = "reinsert_percent", .type = OPT_INT, .default_number = 30,
		.min = 1, .max = 50,
		.description = "Entries removed and reinserted by a forced reinsertion, in percent of M.",
		.offset = offsetof(RstartreeOptions, reinsert_percent)
	},
	{
		.name = "reinsert", .type = OPT_CHOICE, .default_choice = "close",
		.choices = reinsert_orders,
		.description = "Order of a forced reinsertion: 'close' (closest to the node centre first) or 'far'.",
		.offset = offsetof(RstartreeOptions, reinsert)
	},
	{0}
};

/* How much each entry's rectangle must grow to cover the new one. */
typedef struct SubtreeCandidate
{
	double		enlargement;
	double		area;
	int			slot;
} SubtreeCandidate;

static int
compare_candidates(const void *a, const void *b)
{
	const SubtreeCandidate *x = a;
	const SubtreeCandidate *y = b;

	if (x->enlargement != y->enlargement)
		return x->enlargement < y->enlargement ? -1 : 1;
	if (x->area != y->area)
		return x->area < y->area ? -1 : 1;
	return x->slot - y->slot;
}

/* compare_candidates(x, y) < 0, inline: a total order on finite keys */
static inline bool
candidate_before(const SubtreeCandidate *x, const SubtreeCandidate *y)
{
	if (x->enlargement != y->enlargement)
		return x->enlargement < y->enlargement;
	if (x->area != y->area)
		return x->area < y->area;
	return x->slot < y->slot;
}

/*
 * The reference ChooseSubtree above the leaves, the algorithm as the paper
 * states it: sort all entries by area enlargement (then area, then
 * position), compute the whole overlap enlargement of the first
 * max_neighbors, keep the first least.  rstar_choose_subtree must return
 * the same entry for every input, and assert-enabled builds (the test
 * suite's) check each of its calls against this one.  It also decides when
 * a key is not finite: areas that overflow to infinity make NaN
 * enlargements, which the fast path's reasoning does not cover.
 */
static int
rstar_choose_subtree_reference(const RtreeEntry *e, int n, const Mbr *box,
							   int max_neighbors)
{
	SubtreeCandidate *cand = palloc(n * sizeof(SubtreeCandidate));
	int			ncand = Min(n, max_neighbors);
	int			best = 0;
	double		best_overlap = get_float8_infinity();

	for (int i = 0; i < n; i++)
	{
		cand[i].area = mbr_area(&e[i].box);
		cand[i].enlargement = mbr_union_area(&e[i].box, box) - cand[i].area;
		cand[i].slot = i;
	}
	qsort(cand, n, sizeof(SubtreeCandidate), compare_candidates);

	/* in candidate order, so the first of equal overlap enlargement wins */
	for (int k = 0; k < ncand; k++)
	{
		const Mbr  *old_box = &e[cand[k].slot].box;
		Mbr			grown = *old_box;
		double		overlap = 0;

		mbr_extend(&grown, box);
		for (int j = 0; j < n; j++)
		{
			if (j == cand[k].slot)
				continue;
			overlap += mbr_overlap_area(&grown, &e[j].box) -
				mbr_overlap_area(old_box, &e[j].box);
		}
		if (overlap < best_overlap)
		{
			best_overlap = overlap;
			best = cand[k].slot;
		}
	}
	pfree(cand);
	return best;
}

/*
 * Overlap enlargement of entry `slot` grown to cover box: the sum, over
 * every other entry in position order, of how much its overlap with that
 * entry grows.  With finite areas every term is finite and >= 0 (the grown
 * box reaches at least as far on every side, and rounded subtraction and
 * multiplication are monotonic), so the partial sums never decrease: once
 * one exceeds bound the entry cannot win and the partial sum (> bound) is
 * returned.  Otherwise the terms are added in the reference's order, so the
 * sum is the very same double.  *examined counts the entries tested.
 *
 * Most entries of a node do not overlap the grown box at all.  Their term
 * is +0 (the old box is inside the grown one, so its overlap is 0 too, by
 * the same monotonicity), and adding +0 leaves the sum as it was: they
 * are skipped without computing the old box's overlap.  The sum is
 * unchanged at every step, so the early stop happens at the same entry.
 */
static double
overlap_enlargement(const RtreeEntry *e, int n, int slot, const Mbr *box,
					double bound, int64 *examined)
{
	const Mbr  *old_box = &e[slot].box;
	Mbr			grown = *old_box;
	double		overlap = 0;
	int			j;

	mbr_extend(&grown, box);
	for (j = 0; j < n; j++)
	{
		const Mbr  *other = &e[j].box;
		double		grown_overlap;

		if (j == slot)
			continue;
		grown_overlap = mbr_overlap_area(&grown, other);
		if (grown_overlap == 0)
			continue;
		overlap += grown_overlap - mbr_overlap_area(old_box, other);
		if (overlap > bound)
		{
			j++;
			break;
		}
	}
	*examined += j;
	Assert(overlap >= 0);
	return overlap;
}

/*
 * Move the k first candidates in candidate order to c[0..k-1] (in no
 * particular order): quickselect, O(n) expected instead of a full sort.
 */
static void
select_first_candidates(SubtreeCandidate *c, int n, int k)
{
	int			lo = 0;
	int			hi = n - 1;

	while (lo < hi)
	{
		SubtreeCandidate pivot = c[lo + (hi - lo) / 2];
		int			i = lo;
		int			j = hi;

		/* Hoare partition: c[lo..j] before-or-equal pivot, c[i..hi] after-or-equal */
		while (i <= j)
		{
			while (candidate_before(&c[i], &pivot))
				i++;
			while (candidate_before(&pivot, &c[j]))
				j--;
			if (i <= j)
			{
				SubtreeCandidate t = c[i];

				c[i] = c[j];
				c[j] = t;
				i++;
				j--;
			}
		}
		if (k - 1 <= j)
			hi = j;
		else if (k - 1 >= i)
			lo = i;
		else
			break;
	}
}

/* Insertion sort in candidate order, for the few selected candidates. */
static void
sort_candidates(SubtreeCandidate *c, int n)
{
	for (int i = 1; i < n; i++)
	{
		SubtreeCandidate x = c[i];
		int			j = i;

		while (j > 0 && candidate_before(&x, &c[j - 1]))
		{
			c[j] = c[j - 1];
			j--;
		}
		c[j] = x;
	}
}

/*
 * ChooseSubtree (CS2), with the reduced-cost overlap test above leaves.
 *
 * It returns exactly the entry of rstar_choose_subtree_reference, faster:
 *	- an entry that contains the box has area enlargement 0 and overlap
 *	  enlargement 0 (growing it changes nothing), and no entry has less of
 *	  either; only entries before it in candidate order (enlargement 0,
 *	  less area, or equal area and earlier position) can still win, by an
 *	  overlap enlargement of 0, and only those are tested;
 *	- otherwise the max_neighbors first candidates are selected, not the
 *	  whole node sorted, and only they are sorted;
 *	- the overlap sum of a candidate stops as soon as it exceeds the best
 *	  so far (it can only grow).
 */
static int
rstar_choose_subtree(StructIndex *idx, const TreeNode *node, const Mbr *box)
{
	RtreeState *st = (RtreeState *) idx->state;
	const RtreeEntry *e = RtreeNodeEntries(node);
	int			n = node->nentries;
	int			ncand;
	SubtreeCandidate local[128];
	SubtreeCandidate *cand;
	int			containing = -1;
	int			best;
	double		best_overlap;
	int64		examined = n;

	if (node->level != 1)
		return rtree_choose_least_enlargement(idx, node, box);

	Assert(n > 0);
	ncand = Min(n, (int) st->max_neighbors);
	cand = n <= lengthof(local) ? local : palloc(n * sizeof(SubtreeCandidate));
	for (int i = 0; i < n; i++)
	{
		cand[i].area = mbr_area(&e[i].box);
		cand[i].enlargement = mbr_union_area(&e[i].box, box) - cand[i].area;
		cand[i].slot = i;
		if (!isfinite(cand[i].area) || !isfinite(cand[i].enlargement))
		{
			best = rstar_choose_subtree_reference(e, n, box, (int) st->max_neighbors);
			examined += (int64) ncand * n;
			goto done;
		}
		if (mbr_contains(&e[i].box, box) &&
			(containing < 0 || candidate_before(&cand[i], &cand[containing])))
			containing = i;
	}

	if (containing >= 0)
	{
		SubtreeCandidate c = cand[containing];
		int			nbefore = 0;

		/* the box's union with a box containing it is that box, bit for bit */
		Assert(c.enlargement == 0);

		/* the entries before it in candidate order, moved to the front */
		for (int i = 0; i < n; i++)
			if (cand[i].enlargement == 0 && candidate_before(&cand[i], &c))
				cand[nbefore++] = cand[i];
		if (nbefore < ncand)
		{
			best = containing;
			sort_candidates(cand, nbefore);
			for (int k = 0; k < nbefore; k++)
			{
				if (overlap_enlargement(e, n, cand[k].slot, box, 0.0, &examined) <= 0)
				{
					best = cand[k].slot;
					break;
				}
			}
			goto done;
		}
		/* more than max_neighbors entries precede it: it is no candidate */
		for (int i = 0; i < n; i++)
		{
			cand[i].area = mbr_area(&e[i].box);
			cand[i].enlargement = mbr_union_area(&e[i].box, box) - cand[i].area;
			cand[i].slot = i;
		}
	}

	if (ncand < n)
		select_first_candidates(cand, n, ncand);
	sort_candidates(cand, ncand);

	/*
	 * In candidate order, so the first of equal overlap enlargement wins the
	 * ties as the paper asks; a candidate stopped early has a partial sum
	 * above the best and loses as its whole sum would.
	 */
	best = cand[0].slot;
	best_overlap = get_float8_infinity();
	for (int k = 0; k < ncand; k++)
	{
		double		overlap = overlap_enlargement(e, n, cand[k].slot, box,
												  best_overlap, &examined);

		if (overlap < best_overlap)
		{
			best_overlap = overlap;
			best = cand[k].slot;
		}
	}

done:
	Assert(best == rstar_choose_subtree_reference(e, n, box, (int) st->max_neighbors));
	idx->stats->entries_examined += examined;
	if (cand != local)
		pfree(cand);
	return best;
}

typedef struct CentreDistance
{
	double		distance;		/* squared: only the order matters */
	int			slot;
} CentreDistance;

/* Farthest first; equal distances by position. */
static int
compare_farthest(const void *a, const void *b)
{
	const CentreDistance *x = a;
	const CentreDistance *y = b;

	if (x->distance != y->distance)
		return x->distance > y->distance ? -1 : 1;
	return x->slot - y->slot;
}

/*
 * OverflowTreatment (OT1) and Reinsert (RI1-RI3); RI4, inserting the
 * removed entries again, is done by the core once the path is adjusted.
 */
static TreeNode *
rstar_overflow(StructIndex *idx, RtreeInsertion *ins, TreeNode *node, bool is_root)
{
	RtreeState *st = (RtreeState *) idx->state;
	uint32		level_bit = (uint32) 1 << node->level;
	RtreeEntry *e = RtreeNodeEntries(node);
	int			n = node->nentries;
	int			p = st->reinsert_count;
	CentreDistance *dist;
	bool	   *removed;
	Mbr			box;
	double		cx;
	double		cy;
	int			kept = 0;

	if (is_root || (ins->reinserted_levels & level_bit) != 0)
		return rtree_split_node(idx, node);
	ins->reinserted_levels |= level_bit;
	Assert(ins->npending == 0);

	/* RI1-RI2: distances of the entries' centres from the node's centre */
	rtree_node_box(node, &box);
	cx = (box.xmin + box.xmax) / 2;
	cy = (box.ymin + box.ymax) / 2;
	dist = palloc(n * sizeof(CentreDistance));
	for (int i = 0; i < n; i++)
	{
		double		dx = (e[i].box.xmin + e[i].box.xmax) / 2 - cx;
		double		dy = (e[i].box.ymin + e[i].box.ymax) / 2 - cy;

		dist[i].distance = dx * dx + dy * dy;
		dist[i].slot = i;
	}
	qsort(dist, n, sizeof(CentreDistance), compare_farthest);

	/* RI3: remove the p farthest; RI4's order: far as sorted, close reversed */
	ins->pending = palloc(p * sizeof(RtreeEntry));
	ins->npending = p;
	ins->pending_level = node->level;
	removed = palloc0(n * sizeof(bool));
	for (int k = 0; k < p; k++)
	{
		int			slot = dist[k].slot;

		removed[slot] = true;
		ins->pending[st->reinsert_far ? k : p - 1 - k] = e[slot];
	}
	for (int i = 0; i < n; i++)
		if (!removed[i])
			e[kept++] = e[i];
	node->nentries = kept;
	Assert(kept >= (int) st->min_entries);

	idx->stats->forced_reinsertions += p;
	idx->stats->entries_examined += n;
	ns_write(idx->ns, node, NS_WRITE_REPLACE);
	pfree(dist);
	pfree(removed);
	return NULL;
}

static void *
rstartree_setup(const FestConfig *config, uint32 page_size)
{
	RstartreeOptions opts;
	RtreeState *st;
	int64		percent;

	OPTIONS_FILL(config, rstartree_options, &opts);
	st = rtree_state_init(config, page_size, opts.min_fill, opts.max_fill,
						  rtree_split_policy("rstar"));
	percent = opts.reinsert_percent;
	st->choose_subtree = rstar_choose_subtree;
	st->overflow = rstar_overflow;
	st->max_neighbors = (uint32) opts.max_neighbors;
	st->reinsert_far = opts.reinsert == REINSERT_FAR;
	st->reinsert_count = Max(1, (uint32) floor((double) st->max_entries * percent / 100.0));

	/*
	 * The node left after a forced reinsertion keeps m entries: p <= M / 2
	 * (reinsert_percent is at most 50) and m <= (M + 1) / 2 (checked by
	 * rtree_state_init), so M + 1 - p >= m.
	 */
	Assert(st->max_entries + 1 - st->reinsert_count >= st->min_entries);
	return st;
}

static void
rstartree_describe(StructIndex *idx, JsonbParseState **state)
{
	RtreeState *st = (RtreeState *) idx->state;

	rtree_describe(idx, state);
	jb_int(state, "max_neighbors", st->max_neighbors);
	jb_int(state, "reinsert_entries", st->reinsert_count);
}

const StructureOps rstartree_structure = {
	.name = "rstartree",
	.description = "R*-tree (Beckmann et al. 1990)",
	.options = rstartree_options,
	.node_ops = &rtree_node_ops,
	.setup = rstartree_setup,
	.init_empty = rtree_init_empty,
	.insert = rtree_insert,
	.remove = rtree_remove,
	.contains = rtree_contains,
	.check = rtree_check,
	.describe = rstartree_describe,
	/* a packed tree is the same for both: the R* rules apply from the next insert */
	.build_methods = rtree_build_methods,
	.bulk_load = rtree_bulk_load,
	.bulk_spill_begin = rtree_spill_begin,
	.bulk_spill_put = rtree_spill_put,
	.bulk_spill_load = rtree_spill_load
};
