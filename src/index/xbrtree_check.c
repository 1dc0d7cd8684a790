/*-------------------------------------------------------------------------
 *
 * xbrtree_check.c
 *	  Verifying every invariant of an xBR+-tree.
 *
 * The walk reads every reachable node without raising errors for damaged
 * pages and reports:
 *	- pages that fail verification, nodes at the wrong level;
 *	- nodes holding more entries than their capacity, internal nodes with
 *	  none (a node below merge_fill is allowed: the xBR+-tree guarantees
 *	  no minimum occupancy);
 *	- internal entries: addresses that are malformed, outside the node's
 *	  own quadrant (its parent entry's), out of address order or repeated;
 *	  a wrong shape flag; bytes that should be zero; a DBR that does not
 *	  cover the child's points (error) or is larger (warning); a child
 *	  subtree without points (only an empty tree has an empty node: its
 *	  root leaf), an empty flag on a non-empty subtree;
 *	- leaf entries: coordinates that are not finite or outside the extent,
 *	  entries out of (x, y, id) order, and points that point location
 *	  would not lead to this leaf (at every ancestor, the entry followed
 *	  must be the one with the longest prefix of the point's address):
 *	  this verifies that the regions nest and partition the points.
 *
 * IDENTIFICATION
 *	  src/index/xbrtree_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/xbrtree.h"

#include <math.h>

#include "miscadmin.h"

typedef struct CheckWalk
{
	StructIndex *idx;
	CheckReport *report;
	XbrState   *st;
	PageId		root;
	/* the ancestors of the node being checked and the entries followed */
	TreeNode   *ancestor[FEST_MAX_LEVELS];
	int			followed[FEST_MAX_LEVELS];
	int			depth;
} CheckWalk;

static bool
box_is_valid(const Mbr *b)
{
	return isfinite(b->xmin) && isfinite(b->ymin) &&
		isfinite(b->xmax) && isfinite(b->ymax) &&
		b->xmin <= b->xmax && b->ymin <= b->ymax;
}

static void
check_leaf(CheckWalk *w, TreeNode *node, Mbr *box, bool *empty)
{
	CheckReport *report = w->report;
	XbrLeafEntry *e = XbrLeafEntries(node);

	for (uint32 i = 0; i < node->nentries; i++)
	{
		XbrAddr		point;

		report->leaf_entries++;
		if (!isfinite(e[i].x) || !isfinite(e[i].y))
		{
			check_error(report, (int64) node->page, "entry %u has a point that is not finite", i);
			continue;
		}
		mbr_extend_point(box, e[i].x, e[i].y);
		*empty = false;
		if (i > 0)
		{
			const XbrLeafEntry *p = &e[i - 1];

			if (p->x > e[i].x || (p->x == e[i].x && (p->y > e[i].y ||
													 (p->y == e[i].y && p->id > e[i].id))))
				check_error(report, (int64) node->page,
							"entry %u is not in (x, y, id) order after entry %u", i, i - 1);
		}
		if (!xbr_point_addr(w->st, e[i].x, e[i].y, &point))
		{
			check_error(report, (int64) node->page,
						"entry %u: point (%g %g) lies outside the extent", i, e[i].x, e[i].y);
			continue;
		}
		for (int d = 0; d < w->depth; d++)
			if (xbr_locate(w->ancestor[d], point) != w->followed[d])
			{
				check_error(report, (int64) node->page,
							"entry %u: point (%g %g) with id " INT64_FORMAT " is outside the region of the entry followed at page " UINT64_FORMAT,
							i, e[i].x, e[i].y, e[i].id, w->ancestor[d]->page);
				break;
			}
	}
}

static bool walk(CheckWalk *w, PageId page, int level, XbrAddr quadrant,
				 Mbr *box, bool *empty);

static void
check_internal(CheckWalk *w, TreeNode *node, XbrAddr quadrant, Mbr *box, bool *empty)
{
	CheckReport *report = w->report;
	XbrInternalEntry *e = XbrInternalEntries(node);
	int64		page = (int64) node->page;

	if (node->nentries == 0)
		check_error(report, page, "internal node has no entries");

	for (uint32 i = 0; i < node->nentries; i++)
	{
		XbrAddr		a = xbr_entry_addr(&e[i]);
		bool		complete;
		Mbr			child_box;
		bool		child_empty;
		static const uint8 zero[6] = {0};

		if (a.len > XBR_MAX_DEPTH || xbr_addr_prefix(a, a.len).code != a.code)
		{
			check_error(report, page, "entry %u has a malformed address (length %u)", i, a.len);
			continue;
		}
		if (!xbr_addr_contains(quadrant, a))
			check_error(report, page, "entry %u's quadrant lies outside the node's quadrant", i);
		if (i > 0 && xbr_addr_cmp(xbr_entry_addr(&e[i - 1]), a) >= 0)
			check_error(report, page, "entry %u is not after entry %u in address order", i, i - 1);
		complete = !(i + 1 < node->nentries &&
					 xbr_addr_contains(a, xbr_entry_addr(&e[i + 1])));
		if (((e[i].flags & XBR_COMPLETE) != 0) != complete)
			check_error(report, page, "entry %u's shape flag says %s square, but it is %s",
						i, (e[i].flags & XBR_COMPLETE) ? "a complete" : "a non-complete",
						complete ? "complete" : "not");
		if ((e[i].flags & ~(XBR_COMPLETE | XBR_EMPTY)) != 0 ||
			memcmp(e[i].zero, zero, sizeof(zero)) != 0)
			check_error(report, page, "entry %u has unknown flags or non-zero padding", i);
		if (!box_is_valid(&e[i].dbr))
		{
			check_error(report, page, "entry %u has an invalid DBR (%g %g, %g %g)", i,
						e[i].dbr.xmin, e[i].dbr.ymin, e[i].dbr.xmax, e[i].dbr.ymax);
			continue;
		}

		w->ancestor[w->depth] = node;
		w->followed[w->depth] = i;
		w->depth++;
		if (!walk(w, (PageId) e[i].child, node->level - 1, a, &child_box, &child_empty))
		{
			w->depth--;
			continue;
		}
		w->depth--;

		if (child_empty)
		{
			/* deletions remove empty subtrees (xbrtree.c) */
			check_error(report, page, "entry %u's child page " INT64_FORMAT " holds no point",
						i, e[i].child);
			continue;
		}
		if (e[i].flags & XBR_EMPTY)
			check_error(report, page, "entry %u is marked empty but its child page " INT64_FORMAT " holds points",
						i, e[i].child);
		mbr_extend(box, &e[i].dbr);
		*empty = false;
		if (!mbr_contains(&e[i].dbr, &child_box))
			check_error(report, page, "entry %u's DBR does not cover the points of its child page " INT64_FORMAT,
						i, e[i].child);
		else if (!mbr_equals(&e[i].dbr, &child_box))
			check_warning(report, page, "entry %u's DBR is larger than the points of its child page " INT64_FORMAT " (not tight)",
						  i, e[i].child);
	}
}

/*
 * Check the subtree at page, expected at the given level inside quadrant.
 * On success the DBR of its points goes to *box (*empty when none).
 */
static bool
walk(CheckWalk *w, PageId page, int level, XbrAddr quadrant, Mbr *box, bool *empty)
{
	CheckReport *report = w->report;
	TreeNode   *node;
	uint32		max;

	CHECK_FOR_INTERRUPTS();
	check_stack_depth();

	mbr_set_empty(box);
	*empty = true;
	node = check_read_node(w->idx->ns, report, page, level);
	if (node == NULL)
		return false;
	max = level == 0 ? w->st->leaf_max : w->st->internal_max;
	if (node->nentries > max)
		check_error(report, (int64) page, "node holds %u entries, more than its capacity %u",
					node->nentries, max);

	if (level == 0)
		check_leaf(w, node, box, empty);
	else
		check_internal(w, node, quadrant, box, empty);
	tree_free_node(node);
	return true;
}

void
xbr_check(StructIndex *idx, CheckReport *report)
{
	FestMeta   *meta = idx->ns->meta;
	CheckWalk	w;
	Mbr			box;
	bool		empty;

	if (!check_height_plausible(report, meta))
		return;
	memset(&w, 0, sizeof(w));
	w.idx = idx;
	w.report = report;
	w.st = (XbrState *) idx->state;
	w.root = meta->root;
	walk(&w, meta->root, (int) meta->height - 1, xbr_addr_root(), &box, &empty);
}
