/*-------------------------------------------------------------------------
 *
 * gridfile.c
 *	  GFFM, the Grid File for Flash Memory (Fevgas 2019, PhD thesis,
 *	  University of Thessaly, §3.3; Fevgas and Bozanis, DEXA 2015): the
 *	  two-level grid file of Hinrichs (1985, BIT 25) with buckets updated
 *	  in place (layouts and addresses: gridfile.h).
 *
 * The structure is the thesis's (§3.1, Fig. 3.2): a root directory in
 * memory, its scales and grid array naming sub-directories
 * (gridfile_root.c); one page per sub-directory, its sub-scales and grid
 * array naming buckets (gridfile_dir.c); one page per bucket.  A point is
 * found by the scales and grid arrays, in at most two page accesses
 * (gf_lookup).
 *
 * The thesis leaves these choices open (§3.1, §3.3); festival's are:
 *
 *	- Split (thesis §3.3 "split it as in the Grid File").  Buddy system:
 *	  an overflowing bucket's region is halved at its midpoint on the axis
 *	  of its depth (x at even depths, y at odd ones), the new boundary
 *	  entering the sub-scale when it is not there yet, and a half that
 *	  still holds more than a bucket's capacity is halved again; every
 *	  half gets a bucket, empty ones included, so that every cell of the
 *	  grid array leads to a bucket.  A sub-directory whose regions no
 *	  longer fit its page is halved the same way, its halves replacing it
 *	  in the root directory (gf_subdir_replace, gf_root_replace).
 *	- Merge (thesis §3.3: deletes "as in the Grid File"; §3.4.4: LB-Grid
 *	  merges at <= 30 %, the prerequisites of Hinrichs 1985).  After a
 *	  deletion, a bucket holding at most merge_fill percent (default 30)
 *	  of its capacity is merged with its buddy (the region differing in
 *	  the last bit), when the buddy is a bucket of the same sub-directory
 *	  and both fit in one page; merges repeat while they apply, a boundary
 *	  no region uses any more leaves the sub-scales, and a sub-directory
 *	  left with at most merge_fill percent merges with its buddy the same
 *	  way (gf_subdir_merge).  A region whose buddy is cut finer stays,
 *	  even when empty.
 *	- Sub-directory capacity: one page of 56-byte regions (145 in 8 KB),
 *	  times max_fill percent; buckets: one page of 24-byte points (340 in
 *	  8 KB), times max_fill percent.
 *	- Duplicates: more copies of one grid cell (2^31 cells per axis) than
 *	  a bucket holds are refused with an error, as in the xBR+-tree.
 *	- The root directory is in memory, persisted in root pages (levels
 *	  >= 2) that only opening the index and changes of the root directory
 *	  touch; gridfile_root.c says why the copy cannot go stale.
 *
 * Window queries (RQ and P-RQ, Alg. 6) and group point queries (Alg. 8)
 * are gridfile_query.c, the kNN of a query point (Alg. 7)
 * gridfile_knn.c; a kNN of a query that is not a point, snapshots and
 * dumps are the generic ones (traverse.c, knn.c, measure.c), which see
 * each directory entry's region as its rectangle (the traversal contract
 * of structure.h: it covers every point below) and walk the root pages
 * like any level.
 *
 * IDENTIFICATION
 *	  src/index/gridfile.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"

#include <math.h>

#include "stats/jsonbuild.h"

const char *const gf_range_algorithms[] = {"rq", "p-rq", NULL};

StaticAssertDecl(lengthof(gf_range_algorithms) == 3 && GF_RANGE_P_RQ == 1,
				 "gf_range_algorithms: rq, then p-rq");
const char *const gf_knn_prefetches[] = {"none", "data", "all", NULL};

StaticAssertDecl(lengthof(gf_knn_prefetches) == 4 &&
				 GF_KNN_PREFETCH_NONE == 0 && GF_KNN_PREFETCH_DATA == 1 &&
				 GF_KNN_PREFETCH_ALL == 2,
				 "gf_knn_prefetches: in GfKnnPrefetch order");


/* The grid file's options, read once by gf_setup. */
typedef struct GfOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	OptionBox	extent;
	int64		max_fill;
	int			range_algorithm;	/* index into gf_range_algorithms */
	int			knn_prefetch;	/* index into gf_knn_prefetches: a GfKnnPrefetch */
	int64		merge_fill;
	int64		directory_read_buffer;	/* bytes; 0: derived */
	int64		data_read_buffer;	/* bytes; 0: derived */
} GfOptions;


static const OptionSpec gf_options[] = {
	{
		.name = "extent", .type = OPT_BOX,
		.description = "The space the grid divides, [xmin, ymin, xmax, ymax]; points outside it are refused. Default: the source table's extent.",
		.offset = offsetof(GfOptions, extent)
	},
	{
		.name = "max_fill", .type = OPT_INT, .default_number = 100,
		.min = 10, .max = 100,
		.description = "Bucket and directory page capacity, in percent of the entries a page holds.",
		.offset = offsetof(GfOptions, max_fill)
	},
	{
		.name = "range_algorithm", .type = OPT_CHOICE, .default_choice = "rq",
		.choices = gf_range_algorithms,
		.description = "Window queries: rq reads one page at a time (the thesis's RQ); p-rq (Fevgas 2019, Alg. 6) reads the sub-directories a window reaches, then each one's buckets, in next-fit groups the size of the read buffers, one submission each under libaio or io_uring.",
		.offset = offsetof(GfOptions, range_algorithm)
	},
	{
		.name = "knn_prefetch", .type = OPT_CHOICE, .default_choice = "none",
		.choices = gf_knn_prefetches,
		.description = "kNN of a query point (Fevgas 2019, Alg. 7, ring by ring): none reads each page when its cell is entered; data reads a ring's buckets ahead in groups the size of the data read buffer, one submission each under libaio or io_uring; all does the same for sub-directories too, in groups of the directory read buffer.",
		.offset = offsetof(GfOptions, knn_prefetch)
	},
	{
		.name = "merge_fill", .type = OPT_INT, .default_number = 30,
		.min = 0, .max = 50,
		.description = "After a deletion, a bucket or sub-directory with at most this percent of its capacity merges with its buddy region when both fit in one page (thesis: 30).",
		.offset = offsetof(GfOptions, merge_fill)
	},
	{
		.name = "directory_read_buffer", .type = OPT_BYTES, .default_number = 0,
		.min = 0, .max = 1073741824.0,
		.description = "The thesis's directory-page read buffer (DPB), which a group read of sub-directories fills (Fevgas 2019, Alg. 6-8). 0: the thesis's 10.5 MB (75 % of its 16 MB buffer less two 1 MB cold lists).",
		.offset = offsetof(GfOptions, directory_read_buffer)
	},
	{
		.name = "data_read_buffer", .type = OPT_BYTES, .default_number = 0,
		.min = 0, .max = 1073741824.0,
		.description = "The thesis's data read buffer (LBB), which a group read of buckets fills (Fevgas 2019, Alg. 6-8). 0: the thesis's 3.5 MB.",
		.offset = offsetof(GfOptions, data_read_buffer)
	},
	{0}
};

static const BuildMethod gf_build_methods[] = {
	{"bulk", "grid file bulk loading: points sorted by grid cell, the extent halved until every part fits in a bucket, sub-directories and root pages cut the same way (festival's; the same buckets as insertion)"},
	{NULL, NULL}
};

/* ------------------------------------------------------------------ */
/* NodeOps                                                            */
/* ------------------------------------------------------------------ */

/*
 * The NodeOps of a grid file.  A level-0 entry begins with the fields of a
 * GfBucketEntry (x, y, id): GFFM's bucket entries, LB-Grid's log records
 * (lbgrid.c), so both use these.
 */
int
gf_compare_identity(const void *a, const void *b, uint16 level)
{
	if (level == 0)
		return point_entry_cmp(a, b);
	return gf_addr_cmp(((const GfDirEntry *) a)->addr, ((const GfDirEntry *) b)->addr);
}

void
gf_entry_mbr(const void *entry, uint16 level, Mbr *box)
{
	if (level == 0)
	{
		const GfBucketEntry *e = entry;

		box->xmin = box->xmax = e->x;
		box->ymin = box->ymax = e->y;
	}
	else
		*box = ((const GfDirEntry *) entry)->region;
}

int64
gf_entry_ref(const void *entry, uint16 level)
{
	if (level == 0)
		return ((const GfBucketEntry *) entry)->id;
	return ((const GfDirEntry *) entry)->child;
}

/*
 * The root pages (levels >= 2) are resident: the root directory is in
 * memory (gridfile_root.c), so the reads that make the copy are no accesses
 * for the tier layer's hot-page detector, which takes the sub-directories
 * for the top of the tree, as H-Grid's detector does (Fevgas 2019, §4.3).
 */
uint16
gf_level_flags(uint16 level)
{
	return level >= GF_LEVEL_ROOT ? FEST_NODE_RESIDENT : 0;
}

static const NodeOps gf_node_ops = {
	.structure = "gridfile",
	.leaf_entry_size = sizeof(GfBucketEntry),
	.internal_entry_size = sizeof(GfDirEntry),
	.compare_identity = gf_compare_identity,
	.entry_mbr = gf_entry_mbr,
	.entry_ref = gf_entry_ref,
	.level_flags = gf_level_flags
};

/* ------------------------------------------------------------------ */
/* the grid: cells, addresses, region boxes                            */
/* ------------------------------------------------------------------ */

#define GF_CELLS	(INT64CONST(1) << GF_AXIS_BITS)

/*
 * The coordinate of grid line c (0 .. 2^31) of an axis.  A function of
 * the fraction c / 2^31 alone, so that a line shared by regions of
 * different depths has one value; clamped so that lines never decrease.
 */
static double
grid_line(int64 c, double lo, double hi)
{
	double		v;

	if (c <= 0)
		return lo;
	if (c >= GF_CELLS)
		return hi;
	v = lo + (hi - lo) * ldexp((double) c, -GF_AXIS_BITS);
	return Min(v, hi);
}

/*
 * The cell of a coordinate inside [lo, hi]: the last one whose low line
 * is at or below it, so that cells are half-open and the top edge falls in
 * the last cell.  Defined by grid_line rather than by a division, so that
 * a point is exactly inside the box of its cell's regions: the division
 * only guesses, the lines confirm (a few steps fix a rounded guess; a
 * binary search over the lines is the fallback).
 */
static int64
grid_cell(double v, double lo, double hi)
{
	double		t = (v - lo) / (hi - lo) * (double) GF_CELLS;
	int64		g = t > 0.0 ? (t < (double) (GF_CELLS - 1) ? (int64) t : GF_CELLS - 1) : 0;
	int64		a = 0,
				b = GF_CELLS - 1;

	for (int step = 0; step < 4; step++)
	{
		if (g > 0 && grid_line(g, lo, hi) > v)
			g--;
		else if (g < GF_CELLS - 1 && grid_line(g + 1, lo, hi) <= v)
			g++;
		else
			return g;
	}
	while (a < b)
	{
		int64		mid = a + (b - a + 1) / 2;

		if (grid_line(mid, lo, hi) <= v)
			a = mid;
		else
			b = mid - 1;
	}
	return a;
}

bool
gf_point_inside(const GfState *st, double x, double y)
{
	return x >= st->extent.xmin && x <= st->extent.xmax &&
		y >= st->extent.ymin && y <= st->extent.ymax;
}

/* The full address (GF_MAX_DEPTH bits) of a point inside the extent. */
uint64
gf_point_addr(const GfState *st, double x, double y)
{
	uint64		cx = (uint64) grid_cell(x, st->extent.xmin, st->extent.xmax);
	uint64		cy = (uint64) grid_cell(y, st->extent.ymin, st->extent.ymax);
	uint64		a = UINT64CONST(1);

	Assert(gf_point_inside(st, x, y));
	for (int j = GF_AXIS_BITS - 1; j >= 0; j--)
		a = (a << 2) | (((cx >> j) & 1) << 1) | ((cy >> j) & 1);
	return a;
}

/* The box of a region: its first, third... bits halve x, the others y. */
void
gf_region_box(const GfState *st, uint64 addr, Mbr *box)
{
	int			len = gf_addr_len(addr);
	int			nx = (len + 1) / 2,
				ny = len / 2;
	int64		px = 0,
				py = 0;

	for (int i = 0; i < len; i++)
	{
		int64		bit = (int64) ((addr >> (len - 1 - i)) & 1);

		if (i % 2 == 0)
			px = 2 * px + bit;
		else
			py = 2 * py + bit;
	}
	box->xmin = grid_line(px << (GF_AXIS_BITS - nx), st->extent.xmin, st->extent.xmax);
	box->xmax = grid_line((px + 1) << (GF_AXIS_BITS - nx), st->extent.xmin, st->extent.xmax);
	box->ymin = grid_line(py << (GF_AXIS_BITS - ny), st->extent.ymin, st->extent.ymax);
	box->ymax = grid_line((py + 1) << (GF_AXIS_BITS - ny), st->extent.ymin, st->extent.ymax);
}

/* The point's address, or an error naming the extent. */
uint64
gf_point_admit(StructIndex *idx, double x, double y)
{
	const GfState *st = (const GfState *) idx->state;

	if (!gf_point_inside(st, x, y))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("point (%g %g) lies outside the extent of index \"%s\"",
						x, y, idx->name),
				 errdetail("The grid file divides the extent [%g, %g, %g, %g] into regions and indexes only points inside it.",
						   st->extent.xmin, st->extent.ymin, st->extent.xmax, st->extent.ymax),
				 errhint("Recreate the index with a wider \"extent\" option, e.g. options => '{\"extent\": [xmin, ymin, xmax, ymax]}'.")));
	return gf_point_addr(st, x, y);
}

/* The coordinates of grid lines (0 .. 2^31) of each axis. */
double
gf_line_x(const GfState *st, uint64 line)
{
	return grid_line((int64) line, st->extent.xmin, st->extent.xmax);
}

double
gf_line_y(const GfState *st, uint64 line)
{
	return grid_line((int64) line, st->extent.ymin, st->extent.ymax);
}

/* The directory entry whose region holds the point, or -1. */
int
gf_locate(const TreeNode *node, uint64 point)
{
	const GfDirEntry *e = GfDirEntries(node);
	int			a = 0,
				b = (int) node->nentries - 1;
	uint64		key = gf_addr_key(point);

	/* the last entry whose key is not above the point's */
	if (b < 0 || gf_addr_key(e[0].addr) > key)
		return -1;
	while (a < b)
	{
		int			mid = a + (b - a + 1) / 2;

		if (gf_addr_key(e[mid].addr) <= key)
			a = mid;
		else
			b = mid - 1;
	}
	return gf_addr_contains(e[a].addr, point) ? a : -1;
}

void
gf_fill_dir_entry(const GfState *st, GfDirEntry *e, uint64 addr, PageId child)
{
	memset(e, 0, sizeof(*e));
	gf_region_box(st, addr, &e->region);
	e->child = (int64) child;
	e->addr = addr;
}

/* The slot of the first bucket entry not before e. */
static int
bucket_lower_bound(const TreeNode *bucket, const GfBucketEntry *e)
{
	int			lo = 0,
				hi = bucket->nentries;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (point_entry_cmp(&GfBucketEntries(bucket)[mid], e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Cut entries lying in region into pieces of at most max entries by
 * halving (the buddy system): each half is a piece, or is halved again.
 * GfPieces come out in region order; a half may be empty (buckets only:
 * directory entries tile their region, so both halves get some).
 */
void
gf_cut(uint64 region, char *entries, uint64 *keys, int n, uint32 esize,
	uint32 max, List **pieces)
{
	int			len = gf_addr_len(region);
	char	   *half[2];
	uint64	   *hkeys[2];
	int			hn[2] = {0, 0};

	if (n <= (int) max)
	{
		GfPiece	   *p = palloc(sizeof(GfPiece));

		p->addr = region;
		p->entries = entries;
		p->keys = keys;
		p->n = n;
		*pieces = lappend(*pieces, p);
		return;
	}
	/* more than max points in one cell are refused before cutting */
	Assert(len < GF_MAX_DEPTH);
	for (int h = 0; h < 2; h++)
	{
		half[h] = palloc((size_t) n * esize);
		hkeys[h] = palloc(n * sizeof(uint64));
	}
	for (int i = 0; i < n; i++)
	{
		int			klen = gf_addr_len(keys[i]);
		int			h;

		Assert(klen > len && gf_addr_contains(region, keys[i]));
		h = (int) ((keys[i] >> (klen - len - 1)) & 1);
		memcpy(half[h] + (size_t) hn[h] * esize, entries + (size_t) i * esize, esize);
		hkeys[h][hn[h]++] = keys[i];
	}
	gf_cut(region << 1, half[0], hkeys[0], hn[0], esize, max, pieces);
	gf_cut((region << 1) | 1, half[1], hkeys[1], hn[1], esize, max, pieces);
}

/* Refuse a point whose cell already holds a bucket's worth of points. */
void
gf_refuse_copies(StructIndex *idx, const uint64 *keys, int n, uint64 point,
			  double x, double y)
{
	const GfState *st = (const GfState *) idx->state;
	int			same = 0;

	for (int i = 0; i < n; i++)
		if (keys[i] == point)
			same++;
	if (same > (int) st->bucket_max)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" cannot hold more than %u points in the grid cell of point (%g %g)",
						idx->name, st->bucket_max, x, y),
				 errdetail("The grid file separates points by halving regions down to cells of 1/2^%d of the extent per axis; a bucket holds %u points, and this cell already has as many.",
						   GF_AXIS_BITS, st->bucket_max),
				 errhint("Use a larger page_size or max_fill, or index fewer copies of one point.")));
}

void
gf_remove_slot(TreeNode *node, int slot)
{
	memmove(node->entries + (size_t) slot * node->entry_size,
			node->entries + (size_t) (slot + 1) * node->entry_size,
			(size_t) (node->nentries - slot - 1) * node->entry_size);
	node->nentries--;
	memset(node->entries + (size_t) node->nentries * node->entry_size, 0, node->entry_size);
}

/* ------------------------------------------------------------------ */
/* point lookup                                                       */
/* ------------------------------------------------------------------ */

/*
 * Locate point (a full address) as the two-level grid file does (thesis
 * §3.1): the root scales and grid array in memory give the sub-directory,
 * which is read; its scales and grid array give the bucket's entry, and
 * with read_bucket the bucket page is read (GFFM; LB-Grid reads its
 * logical bucket itself).  At most two page accesses, asserted.
 */
void
gf_lookup(StructIndex *idx, uint64 point, bool read_bucket, GfLookup *lk)
{
	GfRoot	   *root = gf_root(idx);
	int64		visited = idx->stats->nodes_visited;

	lk->sub = gf_root_find(root, point);
	lk->sub_addr = gf_root_sub_addr(root, lk->sub);
	lk->subdir = tree_read_node(idx, (int64) gf_root_sub_page(root, lk->sub),
								GF_LEVEL_SUBDIR);
	if (lk->subdir->level != GF_LEVEL_SUBDIR)
		tree_report_bad_level(idx, lk->subdir, GF_LEVEL_SUBDIR);
	idx->stats->entries_examined += lk->subdir->nentries;
	lk->slot = gf_dir_locate(idx, lk->subdir, point);
	lk->bucket = NULL;
	if (read_bucket)
	{
		lk->bucket = tree_read_child(idx, lk->subdir,
									 GfDirEntries(lk->subdir)[lk->slot].child);
		idx->stats->entries_examined += lk->bucket->nentries;
	}
	/* the thesis's two page accesses: the root directory is in memory */
	Assert(idx->stats->nodes_visited - visited <= (read_bucket ? 2 : 1));
	(void) visited;
}

/* ------------------------------------------------------------------ */
/* insertion: buddy splits                                             */
/* ------------------------------------------------------------------ */

/*
 * Write the buckets a split made (the first on the split bucket's page);
 * their directory entries go to out (room for list_length(pieces)).
 */
static int
write_buckets(StructIndex *idx, PageId page, List *pieces, GfDirEntry *out)
{
	const GfState *st = (const GfState *) idx->state;
	ListCell   *lc;
	int			i = 0;

	foreach(lc, pieces)
	{
		GfPiece    *p = lfirst(lc);
		PageId		pg = i == 0 ? page : ns_alloc(idx->ns, GF_LEVEL_BUCKET);
		TreeNode   *n = ns_new_node(idx->ns, pg, GF_LEVEL_BUCKET);

		Assert(p->n <= (int) n->capacity);
		memcpy(n->entries, p->entries, (size_t) p->n * n->entry_size);
		n->nentries = p->n;
		ns_write(idx->ns, n, i == 0 ? NS_WRITE_REPLACE : NS_WRITE_NEW);
		gf_fill_dir_entry(st, &out[i], p->addr, pg);
		tree_free_node(n);
		i++;
	}
	idx->stats->splits_leaf++;
	return i;
}

static void
gf_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	const GfState *st = (const GfState *) idx->state;
	uint64		point = gf_point_admit(idx, box->xmin, box->ymin);
	GfLookup	lk;
	GfBucketEntry entry;
	TreeNode   *node;
	uint64		region;
	int			pos;
	uint64	   *keys;
	int			n;
	List	   *pieces = NIL;
	GfDirEntry *made;
	int			np;

	entry.x = box->xmin;
	entry.y = box->ymin;
	entry.id = id;

	gf_lookup(idx, point, true, &lk);
	node = lk.bucket;

	/* the bucket, in (x, y, id) order: in place when it has room */
	pos = bucket_lower_bound(node, &entry);
	memmove(&GfBucketEntries(node)[pos + 1], &GfBucketEntries(node)[pos],
			(node->nentries - pos) * sizeof(GfBucketEntry));
	GfBucketEntries(node)[pos] = entry;
	node->nentries++;
	if (node->nentries <= st->bucket_max)
	{
		ns_write(idx->ns, node, NS_WRITE_UPDATE);
		return;
	}

	/* split the bucket by halving, then the sub-directory if it overflows */
	n = node->nentries;
	region = GfDirEntries(lk.subdir)[lk.slot].addr;
	keys = palloc(n * sizeof(uint64));
	for (int i = 0; i < n; i++)
		keys[i] = gf_point_addr(st, GfBucketEntries(node)[i].x, GfBucketEntries(node)[i].y);
	gf_refuse_copies(idx, keys, n, point, entry.x, entry.y);
	gf_cut(region, node->entries, keys, n, sizeof(GfBucketEntry), st->bucket_max, &pieces);
	made = palloc(list_length(pieces) * sizeof(GfDirEntry));
	np = write_buckets(idx, node->page, pieces, made);
	gf_subdir_replace(idx, &lk, region, made, np);
}

/* ------------------------------------------------------------------ */
/* contains, deletion: buddy merges                                    */
/* ------------------------------------------------------------------ */

/* The lookup of the bucket holding (id, point) and its slot; false if none. */
static bool
find_entry(StructIndex *idx, int64 id, const Mbr *box, GfLookup *lk, int *pos)
{
	const GfState *st = (const GfState *) idx->state;
	GfBucketEntry entry;
	TreeNode   *node;

	if (!mbr_is_point(box) || !gf_point_inside(st, box->xmin, box->ymin))
		return false;
	entry.x = box->xmin;
	entry.y = box->ymin;
	entry.id = id;
	gf_lookup(idx, gf_point_addr(st, entry.x, entry.y), true, lk);
	node = lk->bucket;
	*pos = bucket_lower_bound(node, &entry);
	return *pos < (int) node->nentries &&
		point_entry_cmp(&GfBucketEntries(node)[*pos], &entry) == 0;
}

static bool
gf_contains(StructIndex *idx, int64 id, const Mbr *box)
{
	GfLookup	lk;
	int			pos;

	return find_entry(idx, id, box, &lk, &pos);
}

/*
 * Merge the bucket lk->bucket (entry lk->slot of the sub-directory) with
 * its buddy while it holds at most the merge threshold, the buddy is a
 * bucket of the same sub-directory and both fit in one page.  The union
 * is written on a page of its own and the merged pages are released, so
 * that a crash in the middle of the write-through commit (which writes
 * new pages first, then the sub-directory, then frees) finds either the
 * old buckets whole or the union; the sub-directory's entries become one
 * (in memory; the caller writes it).  True when anything merged.
 */
static bool
merge_buckets(StructIndex *idx, GfLookup *lk)
{
	const GfState *st = (const GfState *) idx->state;
	TreeNode   *sub = lk->subdir;
	TreeNode   *child = lk->bucket;
	bool		merged = false;

	while (child->nentries <= st->bucket_merge)
	{
		GfDirEntry *e = GfDirEntries(sub);
		uint64		a = e[lk->slot].addr;
		bool		high = (a & 1) != 0;
		int			b = high ? lk->slot - 1 : lk->slot + 1;
		TreeNode   *buddy;
		size_t		esz = child->entry_size;

		if (a == lk->sub_addr || b < 0 || b >= (int) sub->nentries ||
			e[b].addr != (a ^ 1))
			break;				/* the buddy region is cut finer, or elsewhere */
		buddy = tree_read_child(idx, sub, e[b].child);
		if (child->nentries + buddy->nentries > st->bucket_max)
		{
			tree_free_node(buddy);
			break;
		}
		memcpy(child->entries + child->nentries * esz, buddy->entries,
			   buddy->nentries * esz);
		child->nentries += buddy->nentries;
		qsort(child->entries, child->nentries, esz, point_entry_qsort_cmp);
		ns_release(idx->ns, buddy->page);
		tree_free_node(buddy);
		gf_fill_dir_entry(st, &e[lk->slot], a >> 1, child->page);
		gf_remove_slot(sub, b);
		if (high)
			lk->slot--;
		merged = true;
	}
	if (merged)
	{
		PageId		old = child->page;

		child->page = ns_alloc(idx->ns, GF_LEVEL_BUCKET);
		ns_write(idx->ns, child, NS_WRITE_NEW);
		ns_release(idx->ns, old);
		GfDirEntries(sub)[lk->slot].child = (int64) child->page;
	}
	return merged;
}

static bool
gf_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	GfLookup	lk;
	int			pos;

	if (!find_entry(idx, id, box, &lk, &pos))
		return false;
	gf_remove_slot(lk.bucket, pos);
	if (merge_buckets(idx, &lk))
		gf_subdir_merge(idx, &lk);	/* the union is written */
	else
		ns_write(idx->ns, lk.bucket, NS_WRITE_UPDATE);
	return true;
}

/* ------------------------------------------------------------------ */
/* set-up                                                             */
/* ------------------------------------------------------------------ */

/* The empty index: one bucket, one sub-directory, the root directory. */
static void
gf_init_empty(StructIndex *idx)
{
	const GfState *st = (const GfState *) idx->state;
	TreeNode   *bucket = ns_new_node(idx->ns, ns_alloc(idx->ns, GF_LEVEL_BUCKET),
									 GF_LEVEL_BUCKET);
	TreeNode   *sub = ns_new_node(idx->ns, ns_alloc(idx->ns, GF_LEVEL_SUBDIR),
								  GF_LEVEL_SUBDIR);

	ns_write(idx->ns, bucket, NS_WRITE_NEW);
	gf_fill_dir_entry(st, GfDirEntries(sub), GF_ROOT_ADDR, bucket->page);
	sub->nentries = 1;
	gf_write_dir(idx, sub, NS_WRITE_NEW);
	gf_root_init(idx, sub->page);
}

/*
 * The pages a group read of directory pages (DPB) or data pages (LBB)
 * takes (thesis Alg. 6-8): the option when given, else the thesis's own
 * read buffers, 75 % and 25 % of its 16 MB buffer less two cold lists of
 * 1 MB (§3.2, §4.1.4).  Not a share of festival's page cache: experiments
 * shrink the cache to keep the thesis's buffer-to-index ratio (its hit
 * rate), but how many pages one group read takes is a property of the
 * I/O, which the thesis fixed in bytes.
 */
static uint32
read_buffer_pages(uint32 page_size, int64 bytes, bool directory)
{
	int64		pages;

	if (bytes == 0)
		bytes = (directory ? INT64CONST(10752) : INT64CONST(3584)) * 1024;
	pages = bytes / page_size;
	return (uint32) Max(1, Min(pages, PG_INT32_MAX));
}

/*
 * The capacities, thresholds and query choices of a grid file's state from
 * its options, which GFFM and LB-Grid share (GFFM: 24-byte bucket entries;
 * LB-Grid: its logical bucket capacity in records, lbgrid.c).  Raises the
 * configuration error for pages too small.  The root directory's copy is
 * made in the current context (the open index's).
 */
void
gf_state_fill(GfState *st, const FestConfig *config, uint32 page_size,
			  const OptionBox *extent, uint32 bucket_max, int max_fill,
			  int merge_fill, bool batched_range, int knn_prefetch,
			  int64 dpb_bytes, int64 lbb_bytes)
{
	uint32		body = page_size - FEST_PAGE_HEADER_SIZE;

	if (!extent->set)
		config_error(config, "The grid file divides a fixed extent into regions, and none is given.",
					 "Give options => '{\"extent\": [xmin, ymin, xmax, ymax]}', or a source table to take it from.");
	st->extent.xmin = extent->xmin;
	st->extent.ymin = extent->ymin;
	st->extent.xmax = extent->xmax;
	st->extent.ymax = extent->ymax;
	st->bucket_max = (uint32) floor((double) bucket_max * max_fill / 100.0);
	st->dir_max = (uint32) floor((double) (body / sizeof(GfDirEntry)) * max_fill / 100.0);
	st->bucket_merge = (uint32) floor((double) st->bucket_max * merge_fill / 100.0);
	st->dir_merge = (uint32) floor((double) st->dir_max * merge_fill / 100.0);
	st->batched_range = batched_range;
	Assert(knn_prefetch >= GF_KNN_PREFETCH_NONE && knn_prefetch <= GF_KNN_PREFETCH_ALL);
	st->knn_prefetch = (GfKnnPrefetch) knn_prefetch;
	st->dpb_pages = read_buffer_pages(page_size, dpb_bytes, true);
	st->lbb_pages = read_buffer_pages(page_size, lbb_bytes, false);
	st->bucket_pages = NULL;
	st->root = gf_root_create(CurrentMemoryContext);

	if (st->bucket_max < 2 || st->dir_max < 4)
		config_error(config,
					 psprintf("A %u-byte page with max_fill %d%% holds %u points per bucket and %u regions per directory page; the grid file needs at least 2 and 4.",
							  page_size, max_fill, st->bucket_max, st->dir_max),
					 "Use a larger page_size or max_fill.");
}

static void *
gf_setup(const FestConfig *config, uint32 page_size)
{
	GfState    *st = palloc0(sizeof(GfState));
	uint32		body = page_size - FEST_PAGE_HEADER_SIZE;
	GfOptions	opts;

	OPTIONS_FILL(config, gf_options, &opts);
	gf_state_fill(st, config, page_size, &opts.extent,
				  body / sizeof(GfBucketEntry), (int) opts.max_fill,
				  (int) opts.merge_fill, opts.range_algorithm == GF_RANGE_P_RQ,
				  opts.knn_prefetch, opts.directory_read_buffer, opts.data_read_buffer);
	return st;
}

/* What GFFM and LB-Grid both report in stats()->'config'->'derived'. */
void
gf_describe_common(const GfState *st, JsonbParseState **state)
{
	jb_int(state, "bucket_max_entries", st->bucket_max);
	jb_int(state, "directory_max_entries", st->dir_max);
	jb_int(state, "bucket_merge_at_most", st->bucket_merge);
	jb_int(state, "directory_merge_at_most", st->dir_merge);
	jb_int(state, "directory_entry_bytes", sizeof(GfDirEntry));
	jb_int(state, "grid_bits_per_axis", GF_AXIS_BITS);
	jb_bool(state, "batched_range_queries", st->batched_range);
	jb_int(state, "directory_read_buffer_pages", st->dpb_pages);
	jb_int(state, "data_read_buffer_pages", st->lbb_pages);
	jb_int(state, "layout", GF_LAYOUT_VERSION);
}

static void
gf_describe(StructIndex *idx, JsonbParseState **state)
{
	GfState    *st = (GfState *) idx->state;

	gf_describe_common(st, state);
	jb_int(state, "bucket_entry_bytes", sizeof(GfBucketEntry));
	gf_root_describe(idx, state);
}

bool
gf_entry_region(StructIndex *idx, const void *entry, uint16 level, Mbr *region)
{
	if (level == 0)
		return false;
	*region = ((const GfDirEntry *) entry)->region;
	return true;
}

const StructureOps gridfile_structure = {
	.name = "gridfile",
	.description = "two-level grid file for flash, GFFM (Fevgas 2019; Hinrichs 1985), points only",
	.options = gf_options,
	.node_ops = &gf_node_ops,
	.setup = gf_setup,
	.init_empty = gf_init_empty,
	.insert = gf_insert,
	.remove = gf_remove,
	.contains = gf_contains,
	.search = gf_search,
	.search_batch = gf_search_batch,
	.knn = gf_knn,
	.check = gf_check,
	.check_layout = gf_check_layout,
	.describe = gf_describe,
	.points_only = true,
	.needs_extent = true,
	.build_methods = gf_build_methods,
	.bulk_load = gf_bulk_load,
	.bulk_spill_begin = gf_spill_begin,
	.bulk_spill_put = gf_spill_put,
	.bulk_spill_load = gf_spill_load,
	.entry_region = gf_entry_region
};
