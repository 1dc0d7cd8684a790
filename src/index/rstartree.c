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

/* Entries of a node ChooseSubtree works on without palloc. */
#define RSTAR_LOCAL_ENTRIES 128

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
 * The rectangles of a node above the leaves, decoded once per
 * ChooseSubtree into one array per coordinate: the overlap test of every
 * candidate passes over all of them, and the columns keep that pass to
 * the four values it compares, contiguous, instead of 40-byte entries.
 */
typedef struct NodeColumns
{
	double	   *xmin;
	double	   *ymin;
	double	   *xmax;
	double	   *ymax;
} NodeColumns;

static inline void
column_box(const NodeColumns *c, int i, Mbr *box)
{
	box->xmin = c->xmin[i];
	box->ymin = c->ymin[i];
	box->xmax = c->xmax[i];
	box->ymax = c->ymax[i];
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
 * Such an entry is recognised by a side test alone: the overlap's width
 * min(xmax) - max(xmin) of finite values is positive only if
 * min(xmax) > max(xmin), which needs the other entry's xmax above the
 * grown box's xmin and its xmin below the grown box's xmax (the same for
 * y); an entry failing one of the four has no overlap, and the others get
 * mbr_overlap_area itself, so every term is the reference's.
 */
static inline bool
add_overlap_term(const NodeColumns *c, int j, int slot, const Mbr *grown,
				 const Mbr *old_box, double bound, double *overlap)
{
	Mbr			other;
	double		grown_overlap;

	if (j == slot)
		return false;
	column_box(c, j, &other);
	grown_overlap = mbr_overlap_area(grown, &other);
	if (grown_overlap == 0)
		return false;
	*overlap += grown_overlap - mbr_overlap_area(old_box, &other);
	return *overlap > bound;
}

/* Is entry j apart from box g by the side test above? */
static inline bool
side_apart(const NodeColumns *c, int j, const Mbr *g)
{
	return (c->xmax[j] <= g->xmin) | (c->xmin[j] >= g->xmax) |
		(c->ymax[j] <= g->ymin) | (c->ymin[j] >= g->ymax);
}

static double
overlap_enlargement(const NodeColumns *c, int n, int slot, const Mbr *box,
					double bound, int64 *examined)
{
	Mbr			old_box;
	Mbr			grown;
	double		overlap = 0;
	int			j = 0;

	column_box(c, slot, &old_box);
	grown = old_box;
	mbr_extend(&grown, box);
#ifdef __SSE2__
	{
		/* the side test of two entries at a time; their terms in order */
		__m128d		gxmin = _mm_set1_pd(grown.xmin);
		__m128d		gymin = _mm_set1_pd(grown.ymin);
		__m128d		gxmax = _mm_set1_pd(grown.xmax);
		__m128d		gymax = _mm_set1_pd(grown.ymax);

		for (; j + 2 <= n; j += 2)
		{
			__m128d		apart_x = _mm_or_pd(_mm_cmple_pd(_mm_loadu_pd(&c->xmax[j]), gxmin),
											_mm_cmpge_pd(_mm_loadu_pd(&c->xmin[j]), gxmax));
			__m128d		apart_y = _mm_or_pd(_mm_cmple_pd(_mm_loadu_pd(&c->ymax[j]), gymin),
											_mm_cmpge_pd(_mm_loadu_pd(&c->ymin[j]), gymax));
			int			apart = _mm_movemask_pd(_mm_or_pd(apart_x, apart_y));

			if (apart == 3)
				continue;
			if ((apart & 1) == 0 &&
				add_overlap_term(c, j, slot, &grown, &old_box, bound, &overlap))
			{
				j += 1;
				goto stopped;
			}
			if ((apart & 2) == 0 &&
				add_overlap_term(c, j + 1, slot, &grown, &old_box, bound, &overlap))
			{
				j += 2;
				goto stopped;
			}
		}
	}
#endif
	for (; j < n; j++)
	{
		if (!side_apart(c, j, &grown) &&
			add_overlap_term(c, j, slot, &grown, &old_box, bound, &overlap))
		{
			j++;
			break;
		}
	}
#ifdef __SSE2__
stopped:
#endif
	*examined += j;
	Assert(overlap >= 0);
	return overlap;
}

/* Insertion sort in candidate order, for the few selected candidates. */
static void
sort_candidates(SubtreeCandidate *c, int n)
{
	if (n > 64)
	{
		/* many ties of the k-th enlargement: the same order, sooner */
		qsort(c, n, sizeof(SubtreeCandidate), compare_candidates);
		return;
	}
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
 * The k-th smallest (k >= 1) of v[0..n-1] (no NaN), which it reorders:
 * quickselect, O(n) expected.  Each pass moves the values below the pivot
 * to the front, and, when k lies past them, the values equal to it next,
 * by conditional increments instead of branches: the values' order is
 * random, and mispredicted branches were most of the selection's cost.
 */
static double
kth_smallest(double *v, int n, int k)
{
	int			lo = 0;
	int			hi = n;			/* v[lo..hi-1] holds the k-th */

	for (;;)
	{
		double		pivot = v[lo + (hi - lo) / 2];
		int			below = lo;
		int			upto;

		for (int i = lo; i < hi; i++)
		{
			double		x = v[i];

			v[i] = v[below];
			v[below] = x;
			below += x < pivot;
		}
		if (k - 1 < below)
		{
			hi = below;
			continue;
		}
		/* v[below..hi-1] >= pivot, and at least one equals it */
		upto = below;
		for (int i = below; i < hi; i++)
		{
			double		x = v[i];

			v[i] = v[upto];
			v[upto] = x;
			upto += x == pivot;
		}
		if (k - 1 < upto)
			return pivot;
		lo = upto;
	}
}

/*
 * The k first of the n candidates c in candidate order, into out[0..k-1]
 * (out has room for n): every candidate of less enlargement than the k-th
 * least enlargement, and of those of equal enlargement the first by area
 * and position.  The selection works on the bare enlargements (scratch,
 * room for n), and the candidates are moved only once.  Returns the
 * number put into out: k, in no particular order, when exactly k have
 * at most the k-th enlargement; otherwise all of those (more than k),
 * sorted, of which the caller keeps the first k.
 */
static int
select_first_candidates(const SubtreeCandidate *c, int n, int k,
						SubtreeCandidate *out, double *scratch)
{
	double		kth;
	int			m = 0;

	for (int i = 0; i < n; i++)
		scratch[i] = c[i].enlargement;
	kth = kth_smallest(scratch, n, k);
	for (int i = 0; i < n; i++)
	{
		/* out has room for n: written always, kept when it belongs */
		out[m] = c[i];
		m += c[i].enlargement <= kth;
	}
	Assert(m >= k);
	if (m > k)
		sort_candidates(out, m);
	return m;
}

/* The columns of n entries (room for them in column_space, 4 * n). */
static void
decode_columns(const RtreeEntry *e, int n, double *column_space, NodeColumns *cols)
{
	cols->xmin = column_space;
	cols->ymin = column_space + n;
	cols->xmax = column_space + 2 * n;
	cols->ymax = column_space + 3 * n;
	for (int i = 0; i < n; i++)
	{
		cols->xmin[i] = e[i].box.xmin;
		cols->ymin[i] = e[i].box.ymin;
		cols->xmax[i] = e[i].box.xmax;
		cols->ymax[i] = e[i].box.ymax;
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
 *	  whole node sorted, and they are sorted only when the first one's
 *	  overlap enlargement is not 0 (see below);
 *	- the overlap sum of a candidate stops as soon as it exceeds the best
 *	  so far (it can only grow), and skips the entries a side test shows
 *	  apart from the grown box (overlap_enlargement);
 *	- the keys come from one pass over the entries (rtree_entry_keys), and
 *	  the columns of the overlap test are decoded only when it runs.
 */
static int
rstar_choose_subtree(StructIndex *idx, const TreeNode *node, const Mbr *box)
{
	RtreeState *st = (RtreeState *) idx->state;
	const RtreeEntry *e = RtreeNodeEntries(node);
	int			n = node->nentries;
	int			ncand;
	SubtreeCandidate local[RSTAR_LOCAL_ENTRIES];
	SubtreeCandidate local_chosen[RSTAR_LOCAL_ENTRIES];
	double		local_columns[4 * RSTAR_LOCAL_ENTRIES];
	double		local_scratch[RSTAR_LOCAL_ENTRIES];
	SubtreeCandidate *cand;
	SubtreeCandidate *chosen = NULL;
	bool		sorted = false;
	int			first;
	double	   *column_space;
	NodeColumns cols;
	bool		finite = true;
	int			local_zero[RSTAR_LOCAL_ENTRIES];
	int		   *zero;
	int			nzero = 0;
	int			containing = -1;
	int			best;
	double		best_overlap;
	int64		examined = n;

	if (node->level != 1)
		return rtree_choose_least_enlargement(idx, node, box);

	Assert(n > 0);
	ncand = Min(n, (int) st->max_neighbors);
	if (n <= RSTAR_LOCAL_ENTRIES)
	{
		cand = local;
		column_space = local_columns;
		zero = local_zero;
	}
	else
	{
		cand = palloc(n * sizeof(SubtreeCandidate));
		column_space = palloc(4 * n * sizeof(double));
		zero = palloc(n * sizeof(int));
	}

	/*
	 * The keys of every entry, and the entries of enlargement 0 (those
	 * containing the box, and rarely another, degenerate or grown by less
	 * than a rounding), in position order.
	 */
	for (int i = 0; i < n; i++)
	{
		double		area;
		double		enlargement;
		bool		contains = rtree_entry_keys(&e[i].box, box, &area, &enlargement);

		cand[i].area = area;
		cand[i].enlargement = enlargement;
		cand[i].slot = i;
		/* one test after the loop */
		finite &= isfinite(area) & isfinite(enlargement);
		zero[nzero] = i;
		nzero += enlargement == 0;
		if (contains &&
			(containing < 0 || candidate_before(&cand[i], &cand[containing])))
			containing = i;
	}
	if (!finite)
	{
		best = rstar_choose_subtree_reference(e, n, box, (int) st->max_neighbors);
		examined += (int64) ncand * n;
		goto done;
	}

	if (containing >= 0)
	{
		SubtreeCandidate c = cand[containing];
		int			nbefore = 0;

		/* the box's union with a box containing it is that box, bit for bit */
		Assert(c.enlargement == 0);

		/* the entries before it in candidate order, moved to the front */
		for (int z = 0; z < nzero; z++)
			if (candidate_before(&cand[zero[z]], &c))
				cand[nbefore++] = cand[zero[z]];
		if (nbefore < ncand)
		{
			best = containing;
			if (nbefore > 0)
				decode_columns(e, n, column_space, &cols);
			sort_candidates(cand, nbefore);
			for (int k = 0; k < nbefore; k++)
			{
				if (overlap_enlargement(&cols, n, cand[k].slot, box, 0.0, &examined) <= 0)
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

	decode_columns(e, n, column_space, &cols);
	if (ncand < n)
	{
		bool		small = n <= RSTAR_LOCAL_ENTRIES;
		double	   *scratch = small ? local_scratch : palloc(n * sizeof(double));

		chosen = small ? local_chosen : palloc(n * sizeof(SubtreeCandidate));
		sorted = select_first_candidates(cand, n, ncand, chosen, scratch) > ncand;
		if (!small)
			pfree(scratch);
	}
	else
		chosen = cand;

	/*
	 * In candidate order, so the first of equal overlap enlargement wins the
	 * ties as the paper asks; a candidate stopped early has a partial sum
	 * above the best and loses as its whole sum would.  The first
	 * candidate's sum is often 0, and then no other can win (a sum is never
	 * below 0): each is still summed, with the bound 0, as the loop below
	 * would, for entries_examined, but that does not depend on their order,
	 * so the candidates are sorted only when the first's sum is not 0.
	 */
	first = 0;
	if (!sorted)
		for (int k = 1; k < ncand; k++)
			if (candidate_before(&chosen[k], &chosen[first]))
				first = k;
	best = chosen[first].slot;
	best_overlap = overlap_enlargement(&cols, n, best, box,
									   get_float8_infinity(), &examined);
	if (best_overlap == 0)
	{
		for (int k = 0; k < ncand; k++)
			if (k != first)
				(void) overlap_enlargement(&cols, n, chosen[k].slot, box, 0.0, &examined);
		goto done;
	}
	if (!sorted)
	{
		SubtreeCandidate t = chosen[0];

		chosen[0] = chosen[first];
		chosen[first] = t;
		sort_candidates(chosen + 1, ncand - 1);
	}
	for (int k = 1; k < ncand; k++)
	{
		double		overlap = overlap_enlargement(&cols, n, chosen[k].slot, box,
												  best_overlap, &examined);

		if (overlap < best_overlap)
		{
			best_overlap = overlap;
			best = chosen[k].slot;
		}
	}

done:
	Assert(best == rstar_choose_subtree_reference(e, n, box, (int) st->max_neighbors));
	idx->stats->entries_examined += examined;
	if (chosen != NULL && chosen != cand && chosen != local_chosen)
		pfree(chosen);
	if (cand != local)
	{
		pfree(cand);
		pfree(column_space);
		pfree(zero);
	}
	return best;
}

typedef struct CentreDistance
{
	double		distance;		/* squared: only the order matters */
	int			slot;
} CentreDistance;

/*
 * Farthest first; equal distances by position.  Sorted by a
 * lib/sort_template.h instance, the comparison inlined: qsort's algorithm,
 * so the same order.
 */
static inline int
compare_farthest(const CentreDistance *x, const CentreDistance *y)
{
	if (x->distance != y->distance)
		return x->distance > y->distance ? -1 : 1;
	return x->slot - y->slot;
}

#define ST_SORT sort_farthest_first
#define ST_ELEMENT_TYPE CentreDistance
#define ST_COMPARE(a, b) compare_farthest(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

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
	sort_farthest_first(dist, n);

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
