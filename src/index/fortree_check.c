/*-------------------------------------------------------------------------
 *
 * fortree_check.c
 *	  Verifying every invariant of a FOR-tree (fortree.h).
 *
 * The walk goes from group to group through the node store, without
 * raising errors for damaged pages, and reports:
 *	- pages that fail verification, sit at the wrong level or are reached
 *	  twice (a group named in two parents, a page in two groups);
 *	- a page with more than M entries, an empty page other than the root,
 *	  a group other than the root with fewer than m entries in all, an
 *	  internal root with fewer than 2 entries;
 *	- a group whose entries in the parent do not name exactly one P-node
 *	  (child == group) or do not all carry the same rectangle;
 *	- a group rectangle that does not cover the entries of every page of
 *	  the group (error) or covers more than them (warning: not tight);
 *	- leaf MBRs that are not finite, ordered rectangles.
 *
 * IDENTIFICATION
 *	  src/index/fortree_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/fortree.h"

#include <math.h>

typedef struct FtCheckWalk
{
	StructIndex *idx;
	CheckReport *report;
	FtState    *st;
	PageId		root;
	uint64		overflow_pages;
} FtCheckWalk;

static bool
box_is_valid(const Mbr *b)
{
	return isfinite(b->xmin) && isfinite(b->ymin) &&
		isfinite(b->xmax) && isfinite(b->ymax) &&
		b->xmin <= b->xmax && b->ymin <= b->ymax;
}

static int
compare_group_child(const void *a, const void *b)
{
	const FtInternalEntry *ea = a;
	const FtInternalEntry *eb = b;

	if (ea->group != eb->group)
		return ea->group < eb->group ? -1 : 1;
	/* the P-node (child == group) first */
	if ((ea->child == ea->group) != (eb->child == eb->group))
		return ea->child == ea->group ? -1 : 1;
	return ea->child < eb->child ? -1 : (ea->child > eb->child ? 1 : 0);
}

/*
 * Check the group of the given pages at level (pages[0] its P-node) and
 * everything below; the union of its entries goes to *box.  False when
 * nothing of it could be read.
 */
static bool
walk_group(FtCheckWalk *w, const PageId *pages, int npages, int level, Mbr *box)
{
	CheckReport *report = w->report;
	uint32		max = FtMax(w->st, level);
	uint32		min = FtMin(w->st, level);
	bool		is_root = npages == 1 && pages[0] == w->root;
	FtInternalEntry *internal = NULL;
	int			ninternal = 0;
	uint64		total = 0;
	bool		any = false;

	mbr_set_empty(box);
	w->overflow_pages += npages - 1;
	for (int p = 0; p < npages; p++)
	{
		TreeNode   *node = check_read_node(w->idx->ns, report, pages[p], level);

		if (node == NULL)
			continue;
		any = true;
		total += node->nentries;
		if (node->nentries > max)
			check_error(report, (int64) pages[p],
						"node holds %u entries, more than the maximum M = %u",
						node->nentries, max);
		if (node->nentries == 0 && !is_root)
			check_error(report, (int64) pages[p],
						"%s of group " UINT64_FORMAT " holds no entry",
						p == 0 ? "P-node" : "O-node", pages[0]);
		if (is_root && level > 0 && node->nentries < 2)
			check_error(report, (int64) pages[p],
						"internal root holds %u entries; it needs at least 2",
						node->nentries);
		for (uint32 i = 0; i < node->nentries; i++)
		{
			const Mbr  *b = ft_entry_box(node, i);

			if (!box_is_valid(b))
			{
				check_error(report, (int64) pages[p],
							"entry %u has an invalid rectangle (%g %g, %g %g)",
							i, b->xmin, b->ymin, b->xmax, b->ymax);
				continue;
			}
			mbr_extend(box, b);
			if (level == 0)
			{
				report->leaf_entries++;
				if (!mbr_is_point(b))
					report->non_point_seen = true;
			}
			else
			{
				if (internal == NULL)
					internal = palloc(sizeof(FtInternalEntry) * node->capacity * npages);
				internal[ninternal++] = FtInternalEntries(node)[i];
			}
		}
		tree_free_node(node);
	}
	if (any && !is_root && total < min)
		check_error(report, (int64) pages[0],
					"group of P-node " UINT64_FORMAT " (%d pages) holds " UINT64_FORMAT " entries, fewer than the minimum m = %u",
					pages[0], npages, total, min);
	if (ninternal == 0)
		return any;

	/* the child groups: runs of equal group, the P-node first */
	qsort(internal, ninternal, sizeof(FtInternalEntry), compare_group_child);
	for (int i = 0; i < ninternal;)
	{
		int			j = i + 1;
		PageId	   *members;
		int			nmembers = 0;
		PageId		tag = (PageId) internal[i].group;
		bool		has_p = (PageId) internal[i].child == tag;
		Mbr			child_box;

		while (j < ninternal && (PageId) internal[j].group == tag)
			j++;
		members = palloc(sizeof(PageId) * (j - i));
		for (int q = i; q < j; q++)
		{
			if (q > i && (PageId) internal[q].child == tag)
				check_error(report, (int64) tag,
							"group of P-node " UINT64_FORMAT " has the P-node's entry twice", tag);
			if (!mbr_equals(&internal[q].box, &internal[i].box))
				check_error(report, (int64) internal[q].child,
							"the entries of group " UINT64_FORMAT " carry different rectangles", tag);
			members[nmembers++] = (PageId) internal[q].child;
		}
		if (!has_p)
			check_error(report, (int64) tag,
						"group " UINT64_FORMAT " has no entry for its P-node", tag);
		else if (walk_group(w, members, nmembers, level - 1, &child_box) &&
				 !mbr_is_empty(&child_box))
		{
			if (!mbr_contains(&internal[i].box, &child_box))
				check_error(report, (int64) tag,
							"the rectangle of group " UINT64_FORMAT " does not cover the entries of its pages", tag);
			else if (!mbr_equals(&internal[i].box, &child_box))
				check_warning(report, (int64) tag,
							  "the rectangle of group " UINT64_FORMAT " is larger than the entries of its pages (not tight)", tag);
		}
		pfree(members);
		i = j;
	}
	pfree(internal);
	return true;
}

void
ft_check(StructIndex *idx, CheckReport *report)
{
	FestMeta   *meta = idx->ns->meta;
	FtCheckWalk w;
	Mbr			box;

	if (!check_height_plausible(report, meta))
		return;
	w.idx = idx;
	w.report = report;
	w.st = (FtState *) idx->state;
	w.root = meta->root;
	w.overflow_pages = 0;
	(void) walk_group(&w, &meta->root, 1, (int) meta->height - 1, &box);
}
