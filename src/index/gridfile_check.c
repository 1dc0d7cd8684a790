/*-------------------------------------------------------------------------
 *
 * gridfile_check.c
 *	  Verifying every invariant of a grid file (GFFM; gridfile.h).
 *
 * The walk reads every reachable page without raising errors for damaged
 * ones (check.c marks each page reached, so a page reached twice or
 * neither reached nor free is reported there) and reports:
 *	- pages that fail verification, nodes at the wrong level;
 *	- pages holding more entries than their capacity, directory pages
 *	  with none (buckets may be empty: every region has one);
 *	- directory entries: malformed addresses, regions outside the page's
 *	  own region, out of order, nested in another entry's region, a box
 *	  that is not the region's, and regions that do not tile the page's
 *	  region (their areas, in grid cells, must add up to it: with the
 *	  previous checks, that means no gap and no overlap);
 *	- bucket entries: coordinates not finite or outside the extent,
 *	  entries out of (x, y, id) order, points outside their bucket's
 *	  region.
 *
 * IDENTIFICATION
 *	  src/index/gridfile_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"

#include <math.h>

#include "miscadmin.h"

typedef struct GfWalk
{
	StructIndex *idx;
	CheckReport *report;
	const GfState *st;
	GfCheckBucket bucket;		/* NULL: GFFM's bucket pages */
	void	   *arg;
} GfWalk;

/*
 * Report entry i of page (or logical bucket) page if its point is not
 * finite, outside the extent or outside region; false if it is not.
 */
bool
gf_check_point(CheckReport *report, const GfState *st, int64 page, uint32 i,
			   double x, double y, int64 id, uint64 region)
{
	if (!isfinite(x) || !isfinite(y))
	{
		check_error(report, page, "entry %u has a point that is not finite", i);
		return false;
	}
	if (!gf_point_inside(st, x, y))
	{
		check_error(report, page, "entry %u: point (%g %g) lies outside the extent",
					i, x, y);
		return false;
	}
	if (!gf_addr_contains(region, gf_point_addr(st, x, y)))
	{
		check_error(report, page,
					"entry %u: point (%g %g) with id " INT64_FORMAT " lies outside its bucket's region",
					i, x, y, id);
		return false;
	}
	return true;
}

static void
check_bucket(GfWalk *w, TreeNode *node, uint64 region)
{
	CheckReport *report = w->report;
	GfBucketEntry *e = GfBucketEntries(node);
	int64		page = (int64) node->page;

	for (uint32 i = 0; i < node->nentries; i++)
	{
		report->leaf_entries++;
		if (i > 0)
		{
			const GfBucketEntry *p = &e[i - 1];

			if (p->x > e[i].x || (p->x == e[i].x && (p->y > e[i].y ||
													 (p->y == e[i].y && p->id > e[i].id))))
				check_error(report, page,
							"entry %u is not in (x, y, id) order after entry %u", i, i - 1);
		}
		(void) gf_check_point(report, w->st, page, i, e[i].x, e[i].y, e[i].id, region);
	}
}

static void walk(GfWalk *w, PageId page, int level, uint64 region);

static void
check_directory(GfWalk *w, TreeNode *node, uint64 region)
{
	CheckReport *report = w->report;
	GfDirEntry *e = GfDirEntries(node);
	int64		page = (int64) node->page;
	int			rlen = gf_addr_len(region);
	uint64		cells = 0;
	bool		countable = true;

	if (node->nentries == 0)
	{
		check_error(report, page, "directory page has no entries");
		return;
	}
	for (uint32 i = 0; i < node->nentries; i++)
	{
		uint64		a = e[i].addr;
		Mbr			box;

		if (a == 0 || gf_addr_len(a) > GF_MAX_DEPTH)
		{
			check_error(report, page, "entry %u has a malformed region address", i);
			countable = false;
			continue;
		}
		if (!gf_addr_contains(region, a))
		{
			check_error(report, page, "entry %u's region lies outside the page's region", i);
			countable = false;
			continue;
		}
		if (i > 0 && e[i - 1].addr != 0 && gf_addr_len(e[i - 1].addr) <= GF_MAX_DEPTH)
		{
			if (gf_addr_cmp(e[i - 1].addr, a) >= 0)
				check_error(report, page, "entry %u is not after entry %u in region order", i, i - 1);
			else if (gf_addr_contains(e[i - 1].addr, a))
			{
				check_error(report, page, "entry %u's region lies inside entry %u's", i, i - 1);
				countable = false;
			}
		}
		gf_region_box(w->st, a, &box);
		if (memcmp(&box, &e[i].region, sizeof(Mbr)) != 0)
			check_error(report, page, "entry %u's box (%g %g, %g %g) is not its region's (%g %g, %g %g)",
						i, e[i].region.xmin, e[i].region.ymin, e[i].region.xmax, e[i].region.ymax,
						box.xmin, box.ymin, box.xmax, box.ymax);
		cells += UINT64CONST(1) << (GF_MAX_DEPTH - gf_addr_len(a));
		walk(w, (PageId) e[i].child, node->level - 1, a);
	}
	if (countable && cells != (UINT64CONST(1) << (GF_MAX_DEPTH - rlen)))
		check_error(report, page, "the regions of the page do not tile its region (%s)",
					cells < (UINT64CONST(1) << (GF_MAX_DEPTH - rlen)) ? "a gap" : "an overlap");
}

static void
walk(GfWalk *w, PageId page, int level, uint64 region)
{
	TreeNode   *node;
	uint32		max;

	CHECK_FOR_INTERRUPTS();
	check_stack_depth();

	if (level == 0 && w->bucket != NULL)
	{
		w->bucket(w->arg, w->report, (int64) page, region);
		return;
	}
	node = check_read_node(w->idx->ns, w->report, page, level);
	if (node == NULL)
		return;
	max = level == 0 ? w->st->bucket_max : w->st->dir_max;
	if (node->nentries > max)
		check_error(w->report, (int64) page, "page holds %u entries, more than its capacity %u",
					node->nentries, max);
	if (level == 0)
		check_bucket(w, node, region);
	else
		check_directory(w, node, region);
	tree_free_node(node);
}

/*
 * The walk over the directory; level-0 references go to bucket (LB-Grid's
 * logical buckets, lbgrid.c), or are GFFM bucket pages when it is NULL.
 */
void
gf_check_walk(StructIndex *idx, CheckReport *report, GfCheckBucket bucket,
			  void *arg)
{
	FestMeta   *meta = idx->ns->meta;
	GfWalk		w;

	if (!check_height_plausible(report, meta))
		return;
	w.idx = idx;
	w.report = report;
	w.st = (const GfState *) idx->state;
	w.bucket = bucket;
	w.arg = arg;
	walk(&w, meta->root, (int) meta->height - 1, GF_ROOT_ADDR);
}

void
gf_check(StructIndex *idx, CheckReport *report)
{
	gf_check_walk(idx, report, NULL, NULL);
}
