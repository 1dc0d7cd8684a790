/*-------------------------------------------------------------------------
 *
 * gridfile_check.c
 *	  Verifying every invariant of a grid file (GFFM; gridfile.h).
 *
 * The walk reads every reachable page without raising errors for damaged
 * ones (check.c marks each page reached, so a page reached twice (a bucket
 * or sub-directory two cells of different regions name) or neither
 * reached nor free is reported there) and reports:
 *	- a file of an older layout (gridfile.h), and fewer than the two
 *	  levels of directory (root pages, sub-directories) above the buckets;
 *	- pages that fail verification, nodes at the wrong level;
 *	- pages holding more entries than their capacity, directory pages
 *	  with none (buckets may be empty: every region has one);
 *	- directory entries: malformed addresses, regions outside the page's
 *	  own region, out of order, nested in another entry's region, a box
 *	  that is not the region's, and regions that do not tile the page's
 *	  region (their areas, in grid cells, must add up to it: with the
 *	  previous checks, that means no gap and no overlap);
 *	- each directory page's scales and grid array (gridfile.h): every
 *	  scale index names one grid line, the lines strictly increase, the
 *	  first and last are the page's region's edges, and every entry's cell
 *	  box lies in the grid and has its region's edges as lines; the boxes
 *	  cover every cell of the grid array exactly once;
 *	- bucket entries: coordinates not finite or outside the extent,
 *	  entries out of (x, y, id) order, points outside their bucket's
 *	  region;
 *	- the root directory in memory against the one its pages give
 *	  (gridfile_root.c).
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

/*
 * The page's scales and grid array, as its entries store them (their
 * regions tile the page's region: checked first): every scale index has
 * one line, the lines strictly increase from the region's first edge to
 * its last, and the cell boxes cover the nx x ny cells exactly once.
 */
static void
check_grid(CheckReport *report, const TreeNode *node, uint64 region)
{
	const GfDirEntry *e = GfDirEntries(node);
	int64		page = (int64) node->page;
	int			n = (int) node->nentries;
	int			nx = 0,
				ny = 0;
	uint64	   *sx;
	uint64	   *sy;
	uint64		rx0,
				rx1,
				ry0,
				ry1;
	int64		covered = 0;
	bool		ok = true;

	gf_region_lines(region, &rx0, &rx1, &ry0, &ry1);
	for (int r = 0; r < n; r++)
	{
		if (e[r].cx0 >= e[r].cx1 || e[r].cy0 >= e[r].cy1)
		{
			check_error(report, page, "entry %d covers no cell of the page's grid array", r);
			return;
		}
		nx = Max(nx, e[r].cx1);
		ny = Max(ny, e[r].cy1);
	}
	sx = palloc((nx + 1) * sizeof(uint64));
	sy = palloc((ny + 1) * sizeof(uint64));
	for (int i = 0; i <= nx; i++)
		sx[i] = UINT64_MAX;
	for (int j = 0; j <= ny; j++)
		sy[j] = UINT64_MAX;
	for (int r = 0; r < n && ok; r++)
	{
		uint64		lines[4];
		uint64	   *slot[4] = {&sx[e[r].cx0], &sx[e[r].cx1], &sy[e[r].cy0], &sy[e[r].cy1]};

		gf_region_lines(e[r].addr, &lines[0], &lines[1], &lines[2], &lines[3]);
		for (int k = 0; k < 4; k++)
		{
			if (*slot[k] != UINT64_MAX && *slot[k] != lines[k])
			{
				check_error(report, page,
							"entry %d's cell box does not match its region: a scale index of the grid array names two lines", r);
				ok = false;
				break;
			}
			*slot[k] = lines[k];
		}
		covered += (int64) (e[r].cx1 - e[r].cx0) * (e[r].cy1 - e[r].cy0);
	}
	for (int i = 0; i <= nx && ok; i++)
		if (sx[i] == UINT64_MAX || (i > 0 && sx[i - 1] >= sx[i]))
		{
			check_error(report, page, "the page's x-scale is not sorted (line %d of %d)", i, nx);
			ok = false;
		}
	for (int j = 0; j <= ny && ok; j++)
		if (sy[j] == UINT64_MAX || (j > 0 && sy[j - 1] >= sy[j]))
		{
			check_error(report, page, "the page's y-scale is not sorted (line %d of %d)", j, ny);
			ok = false;
		}
	if (ok && (sx[0] != rx0 || sx[nx] != rx1 || sy[0] != ry0 || sy[ny] != ry1))
	{
		check_error(report, page, "the page's scales do not span its region");
		ok = false;
	}
	/*
	 * The regions tile the page's region and each box has its region's
	 * lines, so boxes do not overlap; their cells then cover the array
	 * exactly when their count is nx x ny.
	 */
	if (ok && covered != (int64) nx * ny)
		check_error(report, page, "the grid array has %d x %d cells, and the entries' boxes cover " INT64_FORMAT,
					nx, ny, covered);
	pfree(sx);
	pfree(sy);
}

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
	else if (countable)
		check_grid(report, node, region);
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
	/*
	 * Root pages are resident (gf_level_flags), as every store writes them;
	 * FAST and eFIND hand out a page they hold as new without its header
	 * flags, so only what is below the root is checked under them.
	 */
	if (level >= GF_LEVEL_ROOT && (node->flags & FEST_NODE_RESIDENT) == 0 &&
		!w->idx->ns->buffers)
		check_error(w->report, (int64) page, "root directory page is not marked resident");
	if (level < GF_LEVEL_ROOT && (node->flags & FEST_NODE_RESIDENT) != 0)
		check_error(w->report, (int64) page, "page below the root directory is marked resident");
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
 * False when the file cannot be walked (an older layout, a bad height).
 */
bool
gf_check_walk(StructIndex *idx, CheckReport *report, GfCheckBucket bucket,
			  void *arg)
{
	FestMeta   *meta = idx->ns->meta;
	GfWalk		w;

	if (!gf_layout_current(meta))
	{
		check_error(report, -1,
					"the index was written by an older layout of the grid file; rebuild it with festival.build('%s')",
					idx->name);
		return false;
	}
	if (!check_height_plausible(report, meta))
		return false;
	if (meta->height < GF_MIN_HEIGHT)
	{
		check_error(report, -1, "the meta page records height %u; a two-level grid file has at least %d levels",
					meta->height, GF_MIN_HEIGHT);
		return false;
	}
	w.idx = idx;
	w.report = report;
	w.st = (const GfState *) idx->state;
	w.bucket = bucket;
	w.arg = arg;
	walk(&w, meta->root, (int) meta->height - 1, GF_ROOT_ADDR);
	gf_check_root(idx, report);
	return true;
}

void
gf_check(StructIndex *idx, CheckReport *report)
{
	(void) gf_check_walk(idx, report, NULL, NULL);
}
