/*-------------------------------------------------------------------------
 *
 * hilbert_rtree_check.c
 *	  Verifying every invariant of a Hilbert R-tree.
 *
 * The walk reads every reachable node through the node store without
 * raising errors for damaged pages, and reports:
 *	- pages that fail verification (checksum, magic, page number, kind);
 *	- nodes at the wrong level (all leaves must be at the same depth);
 *	- fill outside [m, M] (the root: at least 2 entries if internal);
 *	- leaf MBRs that are not finite, ordered rectangles;
 *	- leaf entries whose stored Hilbert value is not that of their MBR's
 *	  centre over the index's extent;
 *	- internal entries whose MBR is not exactly that of the child's
 *	  entries, or whose LHV (and its id) is not the largest key of the
 *	  child;
 *	- entries out of order inside a node, and siblings out of order (a key
 *	  of a child above a key of the next child).
 *
 * IDENTIFICATION
 *	  src/index/hilbert_rtree_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/hilbert_rtree.h"

#include <math.h>

#include "geom/hilbert.h"
#include "miscadmin.h"

typedef struct CheckWalk
{
	StructIndex *idx;
	CheckReport *report;
	HilbertState *st;
	PageId		root;
} CheckWalk;

/* What a subtree's walk tells its parent. */
typedef struct SubtreeSummary
{
	Mbr			box;
	HilbertKey	min_key;
	HilbertKey	max_key;
	bool		empty;
} SubtreeSummary;

static bool
mbr_is_valid(const Mbr *b)
{
	return isfinite(b->xmin) && isfinite(b->ymin) &&
		isfinite(b->xmax) && isfinite(b->ymax) &&
		b->xmin <= b->xmax && b->ymin <= b->ymax;
}

static void
check_fill(CheckWalk *w, const TreeNode *node, bool is_root)
{
	uint32		min = hilbert_min_entries(w->st, node->level);
	uint32		max = hilbert_max_entries(w->st, node->level);

	if (!is_root && node->nentries < min)
		check_error(w->report, (int64) node->page,
					"node holds %u entries, fewer than the minimum m = %u",
					node->nentries, min);
	if (node->nentries > max)
		check_error(w->report, (int64) node->page,
					"node holds %u entries, more than the maximum M = %u",
					node->nentries, max);
	if (is_root && node->level > 0 && node->nentries < 2)
		check_error(w->report, (int64) node->page,
					"internal root holds %u entries; it needs at least 2",
					node->nentries);
}

static void
check_leaf_entry(CheckWalk *w, const TreeNode *node, uint32 i)
{
	const HilbertLeafEntry *e = (const HilbertLeafEntry *) NodeEntry(node, i);
	uint64		expected = hilbert_of_box(&w->st->extent, &e->box);

	w->report->leaf_entries++;
	if (!mbr_is_point(&e->box))
		w->report->non_point_seen = true;
	if (e->hilbert != expected)
		check_error(w->report, (int64) node->page,
					"entry %u (id " INT64_FORMAT ") holds Hilbert value " UINT64_FORMAT ", but its MBR's centre has " UINT64_FORMAT,
					i, e->id, e->hilbert, expected);
}

static bool walk(CheckWalk *w, PageId page, int level, SubtreeSummary *sum);

static void
check_internal_entry(CheckWalk *w, const TreeNode *node, uint32 i,
					 SubtreeSummary *prev_child, bool *have_prev)
{
	const HilbertInternalEntry *e = (const HilbertInternalEntry *) NodeEntry(node, i);
	SubtreeSummary child;
	HilbertKey	lhv = {e->lhv, e->lhv_id};

	if (!walk(w, (PageId) e->child, node->level - 1, &child) || child.empty)
		return;					/* reported by the child's walk */

	if (!mbr_contains(&e->box, &child.box))
		check_error(w->report, (int64) node->page,
					"entry %u's MBR does not cover the entries of its child page " INT64_FORMAT,
					i, e->child);
	else if (!mbr_equals(&e->box, &child.box))
		check_error(w->report, (int64) node->page,
					"entry %u's MBR is larger than the entries of its child page " INT64_FORMAT " (not exact)",
					i, e->child);
	if (hilbert_key_cmp(&lhv, &child.max_key) != 0)
		check_error(w->report, (int64) node->page,
					"entry %u's LHV is " UINT64_FORMAT " (id " INT64_FORMAT "), but the largest key of its child page " INT64_FORMAT " is " UINT64_FORMAT " (id " INT64_FORMAT ")",
					i, e->lhv, e->lhv_id, e->child, child.max_key.h, child.max_key.id);
	if (e->lhv_only != (hilbert_key_cmp(&child.min_key, &child.max_key) == 0) || e->zero != 0)
		check_error(w->report, (int64) node->page,
					"entry %u's flag lhv_only is %u (and its padding %u), but its child page " INT64_FORMAT " holds keys from " UINT64_FORMAT " (id " INT64_FORMAT ") to " UINT64_FORMAT " (id " INT64_FORMAT ")",
					i, e->lhv_only, e->zero, e->child, child.min_key.h, child.min_key.id,
					child.max_key.h, child.max_key.id);
	if (*have_prev && hilbert_key_cmp(&prev_child->max_key, &child.min_key) > 0)
		check_error(w->report, (int64) node->page,
					"entries %u and %u are out of Hilbert order: the previous child holds key " UINT64_FORMAT " (id " INT64_FORMAT "), above key " UINT64_FORMAT " (id " INT64_FORMAT ") of child page " INT64_FORMAT,
					i - 1, i, prev_child->max_key.h, prev_child->max_key.id,
					child.min_key.h, child.min_key.id, e->child);
	*prev_child = child;
	*have_prev = true;
}

/*
 * Check the subtree at page, expected at the given level.  On success the
 * union of its entries and its smallest and largest keys are stored in
 * *sum and true is returned.
 */
static bool
walk(CheckWalk *w, PageId page, int level, SubtreeSummary *sum)
{
	CheckReport *report = w->report;
	TreeNode   *node;
	SubtreeSummary prev_child;
	bool		have_prev = false;
	bool		have_key = false;

	node = check_read_node(w->idx->ns, report, page, level);
	if (node == NULL)
		return false;
	check_fill(w, node, page == w->root);

	mbr_set_empty(&sum->box);
	for (uint32 i = 0; i < node->nentries; i++)
	{
		const Mbr  *box = (const Mbr *) NodeEntry(node, i);
		HilbertKey	key;

		if (!mbr_is_valid(box))
		{
			check_error(report, (int64) page,
						"entry %u has an invalid MBR (%g %g, %g %g)",
						i, box->xmin, box->ymin, box->xmax, box->ymax);
			continue;
		}
		mbr_extend(&sum->box, box);
		if (i > 0 && hilbert_entry_cmp(NodeEntry(node, i - 1), NodeEntry(node, i), node->level) > 0)
			check_error(report, (int64) page,
						"entries %u and %u are out of Hilbert order", i - 1, i);

		if (level == 0)
		{
			check_leaf_entry(w, node, i);
			hilbert_entry_key(NodeEntry(node, i), 0, &key);
			if (!have_key)
				sum->min_key = key;
			sum->max_key = key;
			have_key = true;
		}
		else
		{
			/* the keys the children really hold, not what the LHVs claim */
			check_internal_entry(w, node, i, &prev_child, &have_prev);
			if (have_prev)
			{
				if (!have_key)
					sum->min_key = prev_child.min_key;
				sum->max_key = prev_child.max_key;
				have_key = true;
			}
		}
	}
	sum->empty = !have_key;
	tree_free_node(node);
	return true;
}

void
hilbert_check(StructIndex *idx, CheckReport *report)
{
	FestMeta   *meta = idx->ns->meta;
	CheckWalk	w;
	SubtreeSummary sum;

	if (!check_height_plausible(report, meta))
		return;
	w.idx = idx;
	w.report = report;
	w.st = (HilbertState *) idx->state;
	w.root = meta->root;
	walk(&w, meta->root, (int) meta->height - 1, &sum);
}
