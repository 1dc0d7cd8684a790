/*-------------------------------------------------------------------------
 *
 * gridfile_dir.c
 *	  The grid file's directory pages as grid arrays (Fevgas 2019, §3.1;
 *	  Hinrichs 1985): their scales and grid arrays, the thesis's lookup
 *	  (a binary search of the scales, then the grid array), and the
 *	  splits and merges of sub-directories (layouts: gridfile.h).
 *
 * A directory page keeps its grid array in region form (gridfile.h): each
 * entry says which cells of the page's grid its region covers, and the
 * page's scales are the regions' edges.  gf_dir_regrid makes the scales
 * and the cell boxes again from the regions whenever a page's regions
 * change, before it is written: after a split that needs a new boundary
 * the boundary is in the scale and every region it crosses covers one
 * more column or row; after a merge whose boundary no other region uses
 * it is gone from the scale and the grid (thesis §3.4.4).  The result is
 * the same as updating the scale and the array in place, cell by cell, as
 * the grid file does; the page never holds a boundary nobody uses.
 *
 * Sub-directory splits (Hinrichs 1985: splits happen locally, and a
 * sub-directory split propagates to the root directory): a sub-directory
 * whose regions no longer fit its page is halved at the midpoint of its
 * own region on the axis of its depth (its regions are dyadic boxes
 * inside it, so none crosses the halving line), a half still too full
 * halved again; the first half keeps the page.  The root directory then
 * takes the halves' entries in place of the old one (gf_root_replace).
 *
 * Sub-directory merges: after a delete, a sub-directory holding at most
 * merge_fill percent of its capacity merges with its buddy (the other
 * half of the region they split from) when the buddy is a sub-directory
 * of the same root page and both fit in one page; the union keeps the
 * page of the one that changed, the buddy's page is freed, and the root
 * directory takes one entry for the two.  Merges repeat while they apply.
 *
 * IDENTIFICATION
 *	  src/index/gridfile_dir.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"

/* The root grid array may hold at most this many cells (256 MB). */
#define GF_MAX_GRID_CELLS	(INT64CONST(1) << 26)

static int
line_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Sort and deduplicate n lines in place; returns how many remain. */
static int
unique_lines(uint64 *lines, int n)
{
	int			k = 0;

	qsort(lines, n, sizeof(uint64), line_cmp);
	for (int i = 0; i < n; i++)
		if (k == 0 || lines[k - 1] != lines[i])
			lines[k++] = lines[i];
	return k;
}

/* The index of line v in the scale s[0 .. n] (it is one of them). */
static int
scale_index(const uint64 *s, int n, uint64 v)
{
	int			a = 0,
				b = n;

	while (a < b)
	{
		int			mid = (a + b) / 2;

		if (s[mid] < v)
			a = mid + 1;
		else
			b = mid;
	}
	Assert(a <= n && s[a] == v);
	return a;
}

/*
 * The interval of the scale s[0 .. n] that holds cell coordinate v: the
 * last i < n with s[i] <= v (the binary search of the thesis's lookup; 0
 * or n - 1 for a coordinate before or past the scale).
 */
int
gf_scale_interval(const uint64 *s, int n, uint64 v)
{
	int			a = 0,
				b = n - 1;

	while (a < b)
	{
		int			mid = a + (b - a + 1) / 2;

		if (s[mid] <= v)
			a = mid;
		else
			b = mid - 1;
	}
	return a;
}

/* Room for the cell boxes of n regions; no grid array yet. */
static void
grid_alloc_regions(GfGrid *grid, int n)
{
	grid->nregions = n;
	grid->cx0 = palloc(n * sizeof(int32));
	grid->cx1 = palloc(n * sizeof(int32));
	grid->cy0 = palloc(n * sizeof(int32));
	grid->cy1 = palloc(n * sizeof(int32));
	grid->cells = NULL;
}

static void
grid_alloc_cells(GfGrid *grid)
{
	int64		ncells = (int64) grid->nx * grid->ny;

	if (ncells > GF_MAX_GRID_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the grid array of a grid file directory would hold " INT64_FORMAT " cells, more than " INT64_FORMAT,
						ncells, GF_MAX_GRID_CELLS),
				 errdetail("Its scales have %d x and %d y intervals.", grid->nx, grid->ny),
				 errhint("Use a larger page_size, so that fewer sub-directories cut the extent.")));
	grid->cells = palloc_extended(Max(ncells, 1) * sizeof(int32), MCXT_ALLOC_HUGE);
	for (int64 c = 0; c < ncells; c++)
		grid->cells[c] = -1;
}

/*
 * The scales and cell boxes of n regions that tile a box (addresses in any
 * order), and with cells the grid array; allocated in the current context.
 * False when the regions, given with cells, overlap or leave a gap (a
 * damaged root directory: the caller reports it).
 */
bool
gf_grid_build(GfGrid *grid, const uint64 *addrs, int n, bool cells)
{
	uint64	   *xs = palloc(Max(2 * n, 2) * sizeof(uint64));
	uint64	   *ys = palloc(Max(2 * n, 2) * sizeof(uint64));

	Assert(n > 0);
	for (int r = 0; r < n; r++)
		gf_region_lines(addrs[r], &xs[2 * r], &xs[2 * r + 1], &ys[2 * r], &ys[2 * r + 1]);
	grid->nx = unique_lines(xs, 2 * n) - 1;
	grid->ny = unique_lines(ys, 2 * n) - 1;
	grid->sx = xs;
	grid->sy = ys;
	grid_alloc_regions(grid, n);
	for (int r = 0; r < n; r++)
	{
		uint64		x0,
					x1,
					y0,
					y1;

		gf_region_lines(addrs[r], &x0, &x1, &y0, &y1);
		grid->cx0[r] = scale_index(grid->sx, grid->nx, x0);
		grid->cx1[r] = scale_index(grid->sx, grid->nx, x1);
		grid->cy0[r] = scale_index(grid->sy, grid->ny, y0);
		grid->cy1[r] = scale_index(grid->sy, grid->ny, y1);
	}
	if (!cells)
		return true;
	grid_alloc_cells(grid);
	for (int r = 0; r < n; r++)
		for (int j = grid->cy0[r]; j < grid->cy1[r]; j++)
			for (int i = grid->cx0[r]; i < grid->cx1[r]; i++)
			{
				if (grid->cells[(int64) j * grid->nx + i] != -1)
					return false;
				grid->cells[(int64) j * grid->nx + i] = r;
			}
	for (int64 c = 0; c < (int64) grid->nx * grid->ny; c++)
		if (grid->cells[c] == -1)
			return false;
	return true;
}

void
gf_grid_free(GfGrid *grid)
{
	if (grid->sx == NULL)
		return;
	pfree(grid->sx);
	pfree(grid->sy);
	pfree(grid->cx0);
	pfree(grid->cx1);
	pfree(grid->cy0);
	pfree(grid->cy1);
	if (grid->cells != NULL)
		pfree(grid->cells);
	memset(grid, 0, sizeof(GfGrid));
}

/* The region holding the cell (px, py): the thesis's lookup. */
int
gf_grid_find(const GfGrid *grid, uint64 px, uint64 py)
{
	int			i = gf_scale_interval(grid->sx, grid->nx, px);
	int			j = gf_scale_interval(grid->sy, grid->ny, py);

	Assert(grid->cells != NULL);
	return grid->cells[(int64) j * grid->nx + i];
}

/*
 * The columns i0 .. i1 and rows j0 .. j1 (inclusive) of the grid that
 * hold the cells [lx0, lx1] x [ly0, ly1].
 */
void
gf_grid_range(const GfGrid *grid, uint64 lx0, uint64 lx1, uint64 ly0, uint64 ly1,
			  int *i0, int *i1, int *j0, int *j1)
{
	*i0 = gf_scale_interval(grid->sx, grid->nx, lx0);
	*i1 = gf_scale_interval(grid->sx, grid->nx, lx1);
	*j0 = gf_scale_interval(grid->sy, grid->ny, ly0);
	*j1 = gf_scale_interval(grid->sy, grid->ny, ly1);
}

/*
 * The grid of a directory page as its entries store it: the scales from
 * the cell boxes and the regions' edges, with cells the grid array.  A
 * page whose boxes disagree with its regions (a damaged page that passed
 * its checksum) is reported as corrupted.
 */
void
gf_dir_grid(StructIndex *idx, const TreeNode *node, GfGrid *grid, bool cells)
{
	const GfDirEntry *e = GfDirEntries(node);
	int			n = (int) node->nentries;
	int			nx = 0,
				ny = 0;

	if (n == 0)
		fest_report_corrupt(idx->name, node->page,
							"The directory page has no entries.");
	for (int r = 0; r < n; r++)
	{
		if (e[r].cx0 >= e[r].cx1 || e[r].cy0 >= e[r].cy1)
			fest_report_corrupt(idx->name, node->page,
								"An entry covers no cell of the page's grid.");
		nx = Max(nx, e[r].cx1);
		ny = Max(ny, e[r].cy1);
	}
	grid->nx = nx;
	grid->ny = ny;
	grid->sx = palloc((nx + 1) * sizeof(uint64));
	grid->sy = palloc((ny + 1) * sizeof(uint64));
	for (int i = 0; i <= nx; i++)
		grid->sx[i] = UINT64_MAX;
	for (int j = 0; j <= ny; j++)
		grid->sy[j] = UINT64_MAX;
	grid_alloc_regions(grid, n);
	for (int r = 0; r < n; r++)
	{
		uint64		x0,
					x1,
					y0,
					y1;

		if (e[r].addr == 0 || gf_addr_len(e[r].addr) > GF_MAX_DEPTH)
			fest_report_corrupt(idx->name, node->page,
								"An entry has a malformed region address.");
		gf_region_lines(e[r].addr, &x0, &x1, &y0, &y1);
		if ((grid->sx[e[r].cx0] != UINT64_MAX && grid->sx[e[r].cx0] != x0) ||
			(grid->sx[e[r].cx1] != UINT64_MAX && grid->sx[e[r].cx1] != x1) ||
			(grid->sy[e[r].cy0] != UINT64_MAX && grid->sy[e[r].cy0] != y0) ||
			(grid->sy[e[r].cy1] != UINT64_MAX && grid->sy[e[r].cy1] != y1))
			fest_report_corrupt(idx->name, node->page,
								"Two entries give one scale index two lines.");
		grid->sx[e[r].cx0] = x0;
		grid->sx[e[r].cx1] = x1;
		grid->sy[e[r].cy0] = y0;
		grid->sy[e[r].cy1] = y1;
		grid->cx0[r] = e[r].cx0;
		grid->cx1[r] = e[r].cx1;
		grid->cy0[r] = e[r].cy0;
		grid->cy1[r] = e[r].cy1;
	}
	for (int i = 0; i <= nx; i++)
		if (grid->sx[i] == UINT64_MAX || (i > 0 && grid->sx[i - 1] >= grid->sx[i]))
			fest_report_corrupt(idx->name, node->page,
								"The page's x-scale is not a strictly increasing set of region edges.");
	for (int j = 0; j <= ny; j++)
		if (grid->sy[j] == UINT64_MAX || (j > 0 && grid->sy[j - 1] >= grid->sy[j]))
			fest_report_corrupt(idx->name, node->page,
								"The page's y-scale is not a strictly increasing set of region edges.");
	if (!cells)
		return;
	grid_alloc_cells(grid);
	for (int r = 0; r < n; r++)
		for (int j = e[r].cy0; j < e[r].cy1; j++)
			for (int i = e[r].cx0; i < e[r].cx1; i++)
			{
				if (grid->cells[(int64) j * nx + i] != -1)
					fest_report_corrupt(idx->name, node->page,
										"Two entries cover one cell of the grid array.");
				grid->cells[(int64) j * nx + i] = r;
			}
	for (int64 c = 0; c < (int64) nx * ny; c++)
		if (grid->cells[c] == -1)
			fest_report_corrupt(idx->name, node->page,
								"A cell of the grid array belongs to no entry.");
}

/*
 * Make the page's scales and grid array again from its regions: every
 * entry's cell box in the scales its regions' edges give.
 */
void
gf_dir_regrid(TreeNode *node)
{
	GfDirEntry *e = GfDirEntries(node);
	int			n = (int) node->nentries;
	uint64	   *addrs;
	GfGrid		grid;

	Assert(node->level >= GF_LEVEL_SUBDIR && n > 0);
	addrs = palloc(n * sizeof(uint64));
	for (int r = 0; r < n; r++)
		addrs[r] = e[r].addr;
	(void) gf_grid_build(&grid, addrs, n, false);
	/* every line is an edge of a region: at most one per region per axis */
	Assert(grid.nx <= n && grid.ny <= n && n <= PG_UINT16_MAX);
	for (int r = 0; r < n; r++)
	{
		e[r].cx0 = (uint16) grid.cx0[r];
		e[r].cx1 = (uint16) grid.cx1[r];
		e[r].cy0 = (uint16) grid.cy0[r];
		e[r].cy1 = (uint16) grid.cy1[r];
	}
	gf_grid_free(&grid);
	pfree(addrs);
}

/*
 * The entry of a directory page whose region holds point (a full
 * address), found as the thesis finds it (§3.1): the scales turn the
 * point's coordinates into a column and a row, and the entry covering
 * that cell of the grid array holds it.
 */
int
gf_dir_locate(StructIndex *idx, const TreeNode *node, uint64 point)
{
	const GfDirEntry *e = GfDirEntries(node);
	uint64		px,
				px1,
				py,
				py1;
	uint64		sx_start[256],
				sy_start[256];
	uint64	   *sx = sx_start,
			   *sy = sy_start;
	int			nx = 0,
				ny = 0;
	int			i,
				j;
	int			slot = -1;

	gf_region_lines(point, &px, &px1, &py, &py1);
	for (uint32 r = 0; r < node->nentries; r++)
	{
		nx = Max(nx, e[r].cx1);
		ny = Max(ny, e[r].cy1);
	}
	if (nx == 0 || ny == 0)
		fest_report_corrupt(idx->name, node->page,
							"The directory page has no grid array.");
	if (nx >= (int) lengthof(sx_start))
		sx = palloc((nx + 1) * sizeof(uint64));
	if (ny >= (int) lengthof(sy_start))
		sy = palloc((ny + 1) * sizeof(uint64));
	/* the scales, from the regions' edges */
	for (uint32 r = 0; r < node->nentries; r++)
	{
		uint64		x0,
					x1,
					y0,
					y1;

		gf_region_lines(e[r].addr, &x0, &x1, &y0, &y1);
		sx[e[r].cx0] = x0;
		sx[e[r].cx1] = x1;
		sy[e[r].cy0] = y0;
		sy[e[r].cy1] = y1;
	}
	i = gf_scale_interval(sx, nx, px);
	j = gf_scale_interval(sy, ny, py);
	for (uint32 r = 0; r < node->nentries; r++)
		if (e[r].cx0 <= i && i < e[r].cx1 && e[r].cy0 <= j && j < e[r].cy1)
		{
			slot = (int) r;
			break;
		}
	if (sx != sx_start)
		pfree(sx);
	if (sy != sy_start)
		pfree(sy);
	if (slot < 0 || !gf_addr_contains(e[slot].addr, point))
		fest_report_corrupt(idx->name, node->page,
							"No region of the directory page's grid array holds the point.");
	/* the region order finds the same entry */
	Assert(slot == gf_locate(node, point));
	return slot;
}

/*
 * Write a directory page (its grid array made again from its regions
 * first), or a bucket; a root page's copy in memory follows.
 */
void
gf_write_dir(StructIndex *idx, TreeNode *node, NodeWriteKind kind)
{
	if (node->level >= GF_LEVEL_SUBDIR)
		gf_dir_regrid(node);
	ns_write(idx->ns, node, kind);
	if (node->level >= GF_LEVEL_ROOT)
		gf_root_note(idx, node);
}

/* The entries [*lo, *hi) of node whose regions lie inside region. */
void
gf_entries_inside(const TreeNode *node, uint64 region, int *lo, int *hi)
{
	const GfDirEntry *e = GfDirEntries(node);
	int			a = 0;

	while (a < (int) node->nentries && !gf_addr_contains(region, e[a].addr))
		a++;
	*lo = a;
	while (a < (int) node->nentries && gf_addr_contains(region, e[a].addr))
		a++;
	*hi = a;
}

/*
 * Take the entries of buddy, the directory page of the other half of the
 * region they split from, into node (room for both): the low half's first,
 * which keeps region order.  buddy_low: buddy is the low half.
 */
void
gf_dir_absorb(TreeNode *node, const TreeNode *buddy, bool buddy_low)
{
	size_t		esz = sizeof(GfDirEntry);

	Assert(node->nentries + buddy->nentries <= node->capacity);
	if (buddy_low)
	{
		memmove(node->entries + buddy->nentries * esz, node->entries, node->nentries * esz);
		memcpy(node->entries, buddy->entries, buddy->nentries * esz);
	}
	else
		memcpy(node->entries + node->nentries * esz, buddy->entries, buddy->nentries * esz);
	node->nentries += buddy->nentries;
}

/*
 * In the sub-directory of lk, the entries inside region give way to the n
 * entries ents, which tile it (a bucket split: the bucket's region and
 * its pieces; a bucket merge: the buddies' union region and one entry).
 * The page is written, or, when its regions no longer fit, halved into
 * new sub-directories that replace it in the root directory.
 */
void
gf_subdir_replace(StructIndex *idx, GfLookup *lk, uint64 region,
				  const GfDirEntry *ents, int n)
{
	const GfState *st = (const GfState *) idx->state;
	TreeNode   *sub = lk->subdir;
	GfDirEntry *e = GfDirEntries(sub);
	int			lo,
				hi;
	int			total;
	GfDirEntry *all;
	uint64	   *keys;
	List	   *pieces = NIL;
	GfDirEntry *made;
	ListCell   *lc;
	int			k = 0;

	gf_entries_inside(sub, region, &lo, &hi);
	Assert(hi > lo);
	total = (int) sub->nentries - (hi - lo) + n;
	all = palloc(total * sizeof(GfDirEntry));
	memcpy(all, e, lo * sizeof(GfDirEntry));
	memcpy(all + lo, ents, n * sizeof(GfDirEntry));
	memcpy(all + lo + n, e + hi, (sub->nentries - hi) * sizeof(GfDirEntry));
	if (total <= (int) st->dir_max)
	{
		memcpy(sub->entries, all, total * sizeof(GfDirEntry));
		sub->nentries = total;
		gf_write_dir(idx, sub, NS_WRITE_UPDATE);
		pfree(all);
		return;
	}

	/* the sub-directory split: halves of its region, as gf_cut halves */
	keys = palloc(total * sizeof(uint64));
	for (int i = 0; i < total; i++)
		keys[i] = all[i].addr;
	gf_cut(lk->sub_addr, (char *) all, keys, total, sizeof(GfDirEntry),
		   st->dir_max, &pieces);
	Assert(list_length(pieces) >= 2);
	made = palloc(list_length(pieces) * sizeof(GfDirEntry));
	foreach(lc, pieces)
	{
		GfPiece    *p = lfirst(lc);
		PageId		page = k == 0 ? sub->page : ns_alloc(idx->ns, GF_LEVEL_SUBDIR);
		TreeNode   *node = ns_new_node(idx->ns, page, GF_LEVEL_SUBDIR);

		Assert(p->n > 0);		/* directory entries tile their region */
		memcpy(node->entries, p->entries, (size_t) p->n * sizeof(GfDirEntry));
		node->nentries = p->n;
		gf_write_dir(idx, node, k == 0 ? NS_WRITE_REPLACE : NS_WRITE_NEW);
		gf_fill_dir_entry(st, &made[k], p->addr, page);
		tree_free_node(node);
		k++;
	}
	idx->stats->splits_internal++;
	gf_root_replace(idx, lk->sub_addr, made, k);
	lk->subdir = NULL;			/* no longer one page */
}

/*
 * The sub-directory of lk changed (a bucket merge): write it, merging it
 * first with its buddy sub-directory while it holds at most the merge
 * threshold, the buddy is a sub-directory of the same root page and both
 * fit in one page.  A union is written on a page of its own and the
 * merged pages are released (a crash in the middle of the write-through
 * commit, which writes new pages before the root page that names them and
 * frees last, finds the old pages whole or the union); the root directory
 * takes one entry for them.
 */
void
gf_subdir_merge(StructIndex *idx, GfLookup *lk)
{
	const GfState *st = (const GfState *) idx->state;
	GfRoot	   *root = gf_root(idx);
	TreeNode   *sub = lk->subdir;
	uint64		region = lk->sub_addr;
	bool		merged = false;
	GfDirEntry	entry;
	PageId		old;

	for (;;)
	{
		int			b;
		TreeNode   *buddy;

		if (sub->nentries > st->dir_merge || region == GF_ROOT_ADDR)
			break;
		b = gf_root_sub_by_addr(root, region ^ 1);
		if (b < 0 || !gf_root_same_holder(root, lk->sub, b))
			break;				/* the buddy region is cut finer, or elsewhere */
		buddy = tree_read_node(idx, (int64) gf_root_sub_page(root, b), GF_LEVEL_SUBDIR);
		if (buddy->level != GF_LEVEL_SUBDIR)
			tree_report_bad_level(idx, buddy, GF_LEVEL_SUBDIR);
		if (sub->nentries + buddy->nentries > st->dir_max)
		{
			tree_free_node(buddy);
			break;
		}
		gf_dir_absorb(sub, buddy, (region & 1) != 0);
		ns_release(idx->ns, buddy->page);
		tree_free_node(buddy);
		region >>= 1;
		merged = true;
	}
	if (!merged)
	{
		gf_write_dir(idx, sub, NS_WRITE_UPDATE);
		return;
	}
	old = sub->page;
	sub->page = ns_alloc(idx->ns, GF_LEVEL_SUBDIR);
	gf_write_dir(idx, sub, NS_WRITE_NEW);
	ns_release(idx->ns, old);
	gf_fill_dir_entry(st, &entry, region, sub->page);
	gf_root_replace(idx, region, &entry, 1);
	lk->sub_addr = region;
	lk->sub = gf_root_sub_by_addr(gf_root(idx), region);
	Assert(lk->sub >= 0);
}
