/*-------------------------------------------------------------------------
 *
 * rtree_check.c
 *	  Verifying every invariant of an R-tree.
 *
 * The walk reads every reachable node through the node store without
 * raising errors for damaged pages, and reports:
 *	- pages that fail verification (checksum, magic, page number, kind);
 *	- nodes at the wrong level (all leaves must be at the same depth);
 *	- fill outside [m, M] (the root: at least 2 entries if internal);
 *	- internal entries whose MBR does not cover the child's entries (error)
 *	  or covers more than them (warning: MBRs should be tight);
 *	- leaf MBRs that are not finite, ordered rectangles.
 *
 * IDENTIFICATION
 *	  src/index/rtree_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

#include <math.h>

#include "miscadmin.h"

typedef struct CheckWalk
{
	StructIndex *idx;
	CheckReport *report;
	RtreeState *st;
	PageId		root;
} CheckWalk;

static bool
mbr_is_valid(const Mbr *b)
{
	return isfinite(b->xmin) && isfinite(b->ymin) &&
		isfinite(b->xmax) && isfinite(b->ymax) &&
		b->xmin <= b->xmax && b->ymin <= b->ymax;
}

/*
 * Check the subtree at page, expected at the given level.  On success the
 * union of its entries is stored in *box and true is returned.
 */
static bool
walk(CheckWalk *w, PageId page, int level, Mbr *box)
{
	CheckReport *report = w->report;
	RtreeState *st = w->st;
	TreeNode	   *node;
	RtreeEntry *e;
	bool		is_root = (page == w->root);

	node = check_read_node(w->idx->ns, report, page, level);
	if (node == NULL)
		return false;

	if (!is_root && node->nentries < st->min_entries)
		check_error(report, (int64) page,
					"node holds %u entries, fewer than the minimum m = %u",
					node->nentries, st->min_entries);
	if (node->nentries > st->max_entries)
		check_error(report, (int64) page,
					"node holds %u entries, more than the maximum M = %u",
					node->nentries, st->max_entries);
	if (is_root && level > 0 && node->nentries < 2)
		check_error(report, (int64) page,
					"internal root holds %u entries; it needs at least 2",
					node->nentries);

	e = RtreeNodeEntries(node);
	mbr_set_empty(box);
	for (uint32 i = 0; i < node->nentries; i++)
	{
		if (!mbr_is_valid(&e[i].box))
		{
			check_error(report, (int64) page,
						"entry %u has an invalid MBR (%g %g, %g %g)",
						i, e[i].box.xmin, e[i].box.ymin, e[i].box.xmax, e[i].box.ymax);
			continue;
		}
		mbr_extend(box, &e[i].box);

		if (level == 0)
		{
			w->report->leaf_entries++;
			if (!mbr_is_point(&e[i].box))
				w->report->non_point_seen = true;
			continue;
		}

		{
			Mbr			child_box;

			if (!walk(w, (PageId) e[i].ref, level - 1, &child_box))
				continue;
			if (mbr_is_empty(&child_box))
				continue;		/* an empty child was reported by its fill check */
			if (!mbr_contains(&e[i].box, &child_box))
				check_error(report, (int64) page,
							"entry %u's MBR does not cover the entries of its child page " INT64_FORMAT,
							i, e[i].ref);
			else if (!mbr_equals(&e[i].box, &child_box))
				check_warning(report, (int64) page,
							  "entry %u's MBR is larger than the entries of its child page " INT64_FORMAT " (not tight)",
							  i, e[i].ref);
		}
	}
	pfree(node->entries);
	pfree(node);
	return true;
}

void
rtree_check(StructIndex *idx, CheckReport *report)
{
	FestMeta   *meta = idx->ns->meta;
	CheckWalk	w;
	Mbr			box;

	if (!check_height_plausible(report, meta))
		return;
	w.idx = idx;
	w.report = report;
	w.st = (RtreeState *) idx->state;
	w.root = meta->root;
	walk(&w, meta->root, (int) meta->height - 1, &box);
}
