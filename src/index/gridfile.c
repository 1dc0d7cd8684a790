/*-------------------------------------------------------------------------
 *
 * gridfile.c
 *	  GFFM, the Grid File for Flash Memory (Fevgas 2019, PhD thesis,
 *	  University of Thessaly, §3.3; Fevgas and Bozanis, DEXA 2015): the
 *	  two-level grid file of Hinrichs (1985, BIT 25) with buckets updated
 *	  in place (layouts and addresses: gridfile.h).
 *
 * The thesis leaves these choices open (§3.1, §3.3); festival's are:
 *
 *	- Split (thesis §3.3 "split it as in the Grid File").  Buddy system:
 *	  an overflowing bucket's region is halved at its midpoint on the axis
 *	  of its depth (x at even depths, y at odd ones), and a half that still
 *	  holds more than a bucket's capacity is halved again; every half gets
 *	  a bucket, empty ones included, so that the regions of a
 *	  sub-directory always tile it (every grid cell leads to a bucket).  A
 *	  directory page that overflows is halved the same way (no region
 *	  crosses its first halving line, since its regions are dyadic boxes
 *	  inside it), the halves becoming entries of its parent; a root that
 *	  overflows gets a new root above it.
 *	- Merge (thesis §3.3: deletes "as in the Grid File"; §3.4.4: LB-Grid
 *	  merges at <= 30 %).  After a deletion, a bucket or directory page
 *	  holding at most merge_fill percent (default 30) of its capacity is
 *	  merged with its buddy (the region differing in the last bit), when
 *	  the buddy is one page of the same parent and both fit in one page;
 *	  merges repeat while they apply, then move up a level.  A root
 *	  directory left with one entry is replaced by its child, the only way
 *	  the index loses a level (all buckets stay at level 0): a page whose
 *	  buddy region is cut finer stays, even when empty.
 *	- Sub-directory capacity: one page of 48-byte entries (170 regions in
 *	  8 KB), times max_fill percent; buckets: one page of 24-byte points
 *	  (340 in 8 KB), times max_fill percent.
 *	- Duplicates: more copies of one grid cell (2^31 cells per axis) than
 *	  a bucket holds are refused with an error, as in the xBR+-tree.
 *	- Root directory: the thesis keeps it in RAM (§3.1, Hinrichs 1985).
 *	  festival reads it through the node store like any page, so FAST,
 *	  eFIND and every cache see one consistent index and other sessions'
 *	  changes are seen; a cache keeps it resident, and a point search then
 *	  costs the thesis's one sub-directory and one bucket read.
 *
 * Every operation locates a point by its address (gf_point_addr): at each
 * directory page, the one entry whose region is a prefix of it.  Window
 * search (RQ), kNN of a non-point query, batch queries, snapshots and dumps
 * are the generic ones (traverse.c), which see each directory entry's
 * region as its rectangle (the traversal contract of structure.h: it
 * covers every point below); P-RQ is gf_search below, the kNN of a query
 * point the ring search of gridfile_knn.c.
 *
 * IDENTIFICATION
 *	  src/index/gridfile.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"

#include <math.h>

#include "index/batch_search.h"
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
		.description = "Window queries: rq reads one page at a time, depth first; p-rq (Fevgas 2019, Alg. 6) reads the pages a level needs in batches of up to 64, one submission each under libaio or io_uring.",
		.offset = offsetof(GfOptions, range_algorithm)
	},
	{
		.name = "knn_prefetch", .type = OPT_CHOICE, .default_choice = "none",
		.choices = gf_knn_prefetches,
		.description = "kNN of a query point (Fevgas 2019, Alg. 7, ring by ring): none reads each page when its cell is entered; data reads a ring's buckets ahead in groups of up to 64, one submission each under libaio or io_uring; all does the same for sub-directories too.",
		.offset = offsetof(GfOptions, knn_prefetch)
	},
	{
		.name = "merge_fill", .type = OPT_INT, .default_number = 30,
		.min = 0, .max = 50,
		.description = "After a deletion, a bucket or directory page with at most this percent of its capacity merges with its buddy region when both fit in one page (thesis: 30).",
		.offset = offsetof(GfOptions, merge_fill)
	},
	{0}
};

static const BuildMethod gf_build_methods[] = {
	{"bulk", "grid file bulk loading: points sorted by grid cell, the extent halved until every part fits in a bucket, directory levels cut the same way (festival's)"},
	{NULL, NULL}
};

/* ------------------------------------------------------------------ */
/* NodeOps                                                            */
/* ------------------------------------------------------------------ */

static int
compare_bucket(const GfBucketEntry *a, const GfBucketEntry *b)
{
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	if (a->y != b->y)
		return a->y < b->y ? -1 : 1;
	return a->id < b->id ? -1 : (a->id > b->id ? 1 : 0);
}

/*
 * The NodeOps of a grid file.  A level-0 entry begins with the fields of a
 * GfBucketEntry (x, y, id): GFFM's bucket entries, LB-Grid's log records
 * (lbgrid.c), so both use these.
 */
int
gf_compare_identity(const void *a, const void *b, uint16 level)
{
	if (level == 0)
		return compare_bucket(a, b);
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

static const NodeOps gf_node_ops = {
	.structure = "gridfile",
	.leaf_entry_size = sizeof(GfBucketEntry),
	.internal_entry_size = sizeof(GfDirEntry),
	.compare_identity = gf_compare_identity,
	.entry_mbr = gf_entry_mbr,
	.entry_ref = gf_entry_ref
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

		if (compare_bucket(&GfBucketEntries(bucket)[mid], e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
report_lost_point(StructIndex *idx, const TreeNode *node)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("index \"%s\" is corrupted at page " UINT64_FORMAT,
					idx->name, node->page),
			 errdetail("No region of the directory page holds the point."),
			 errhint("Run festival.check('%s'), then rebuild the index with festival.build('%s').",
					 idx->name, idx->name)));
}

/*
 * Point location: the path from the root down to the node at stop_level
 * (0: the bucket; LB-Grid stops at its sub-directory, level 1) whose region
 * holds the point; path[d].slot is the entry followed at depth d.  Returns
 * the depth of that node (path[depth].node, slot -1).
 */
int
gf_descend(StructIndex *idx, uint64 point, PathStep *path, int stop_level)
{
	TreeNode   *node = tree_read_root(idx);
	int			d = 0;

	while (node->level > stop_level)
	{
		int			slot = gf_locate(node, point);

		idx->stats->entries_examined += node->nentries;
		if (slot < 0)
			report_lost_point(idx, node);
		path[d].node = node;
		path[d].slot = slot;
		d++;
		node = tree_read_child(idx, node, GfDirEntries(node)[slot].child);
	}
	path[d].node = node;
	path[d].slot = -1;
	return d;
}

/* The region of the node at depth d of a path. */
uint64
gf_path_region(const PathStep *path, int d)
{
	if (d == 0)
		return GF_ROOT_ADDR;
	return GfDirEntries(path[d - 1].node)[path[d - 1].slot].addr;
}

/* ------------------------------------------------------------------ */
/* insertion: buddy splits                                             */
/* ------------------------------------------------------------------ */

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

/*
 * Write the pieces of a node that overflowed as nodes of its level, the
 * first on the node's own page (written as first_kind: a rewrite, or new
 * for a root level made in this operation); the directory entries for
 * them go to out (which has room for list_length(pieces)).
 */
static void
write_pieces(StructIndex *idx, const TreeNode *node, List *pieces, GfDirEntry *out,
			 NodeWriteKind first_kind)
{
	const GfState *st = (const GfState *) idx->state;
	ListCell   *lc;
	int			i = 0;

	foreach(lc, pieces)
	{
		GfPiece	   *p = lfirst(lc);
		PageId		page = i == 0 ? node->page : ns_alloc(idx->ns, node->level);
		TreeNode   *n = ns_new_node(idx->ns, page, node->level);

		Assert(p->n <= (int) n->capacity);
		memcpy(n->entries, p->entries, (size_t) p->n * n->entry_size);
		n->nentries = p->n;
		ns_write(idx->ns, n, i == 0 ? first_kind : NS_WRITE_NEW);
		gf_fill_dir_entry(st, &out[i], p->addr, page);
		tree_free_node(n);
		i++;
	}
	if (node->level == 0)
		idx->stats->splits_leaf++;
	else
		idx->stats->splits_internal++;
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

/*
 * Split path[d].node, whose n entries (entries, their addresses in keys,
 * esize bytes each) no longer fit in a page: cut it into pieces by buddy
 * halving, then give each parent the pieces' entries in place of the split
 * node's, splitting every directory page that overflows in turn, and
 * growing a new root when the root splits.  Shared by GFFM (from a bucket)
 * and LB-Grid (from a sub-directory, lbgrid.c).
 */
void
gf_split_up(StructIndex *idx, PathStep *path, int depth, TreeNode *node,
			char *entries, uint64 *keys, int n, uint32 esize)
{
	const GfState *st = (const GfState *) idx->state;
	bool		fresh_root = false;

	for (int d = depth;; d--)
	{
		NodeWriteKind first_kind = fresh_root ? NS_WRITE_NEW : NS_WRITE_REPLACE;

		List	   *pieces = NIL;
		GfDirEntry *made;
		int			np;
		TreeNode   *parent;
		GfDirEntry *pe;
		int			slot;

		gf_cut(gf_path_region(path, d), entries, keys, n, esize,
			node->level == 0 ? st->bucket_max : st->dir_max, &pieces);
		np = list_length(pieces);
		made = palloc(np * sizeof(GfDirEntry));
		write_pieces(idx, node, pieces, made, first_kind);
		fresh_root = false;

		if (d == 0)
		{
			/* the root split: a root directory over the whole extent */
			TreeNode   *root;

			if (node->level + 1 >= FEST_MAX_LEVELS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("index \"%s\" would exceed %d levels", idx->name, FEST_MAX_LEVELS),
						 errhint("Use a larger page_size.")));
			if (np > (int) st->dir_max)
			{
				/* more pieces than a page holds: a new level to cut them */
				TreeNode   *tmp = ns_new_node(idx->ns, ns_alloc(idx->ns, node->level + 1),
											  node->level + 1);

				entries = (char *) made;
				n = np;
				esize = sizeof(GfDirEntry);
				keys = palloc(n * sizeof(uint64));
				for (int i = 0; i < n; i++)
					keys[i] = made[i].addr;
				ns_set_root(idx->ns, tmp->page, idx->ns->meta->height + 1);
				node = tmp;
				path[0].node = tmp;
				fresh_root = true;
				d = 1;			/* the loop's d-- makes it 0 again */
				continue;
			}
			root = ns_new_node(idx->ns, ns_alloc(idx->ns, node->level + 1), node->level + 1);
			memcpy(root->entries, made, np * sizeof(GfDirEntry));
			root->nentries = np;
			ns_write(idx->ns, root, NS_WRITE_NEW);
			ns_set_root(idx->ns, root->page, idx->ns->meta->height + 1);
			return;
		}

		/* the parent's entry gives way to the pieces' */
		parent = path[d - 1].node;
		slot = path[d - 1].slot;
		n = parent->nentries + np - 1;
		esize = sizeof(GfDirEntry);
		pe = palloc(n * sizeof(GfDirEntry));
		memcpy(pe, GfDirEntries(parent), slot * sizeof(GfDirEntry));
		memcpy(pe + slot, made, np * sizeof(GfDirEntry));
		memcpy(pe + slot + np, GfDirEntries(parent) + slot + 1,
			   (parent->nentries - slot - 1) * sizeof(GfDirEntry));
		if (n <= (int) st->dir_max)
		{
			memcpy(parent->entries, pe, n * sizeof(GfDirEntry));
			parent->nentries = n;
			ns_write(idx->ns, parent, NS_WRITE_UPDATE);
			return;
		}
		entries = (char *) pe;
		keys = palloc(n * sizeof(uint64));
		for (int i = 0; i < n; i++)
			keys[i] = pe[i].addr;
		node = parent;
	}
}

static void
gf_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	const GfState *st = (const GfState *) idx->state;
	PathStep	path[FEST_MAX_LEVELS];
	uint64		point = gf_point_admit(idx, box->xmin, box->ymin);
	GfBucketEntry entry;
	TreeNode   *node;
	int			depth;
	int			pos;
	char	   *entries;
	uint64	   *keys;
	int			n;
	uint32		esize;

	entry.x = box->xmin;
	entry.y = box->ymin;
	entry.id = id;

	depth = gf_descend(idx, point, path, 0);
	node = path[depth].node;
	idx->stats->entries_examined += node->nentries;

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

	/* split the bucket, then every directory page that overflows */
	n = node->nentries;
	esize = sizeof(GfBucketEntry);
	entries = node->entries;
	keys = palloc(n * sizeof(uint64));
	for (int i = 0; i < n; i++)
		keys[i] = gf_point_addr(st, GfBucketEntries(node)[i].x, GfBucketEntries(node)[i].y);
	gf_refuse_copies(idx, keys, n, point, entry.x, entry.y);

	gf_split_up(idx, path, depth, node, entries, keys, n, esize);
}

/* ------------------------------------------------------------------ */
/* contains, deletion: buddy merges                                    */
/* ------------------------------------------------------------------ */

/* The path to the bucket holding (id, point); false when there is none. */
static bool
find_entry(StructIndex *idx, int64 id, const Mbr *box, PathStep *path, int *depth)
{
	const GfState *st = (const GfState *) idx->state;
	GfBucketEntry entry;
	TreeNode   *node;
	int			d;
	int			pos;

	if (!mbr_is_point(box) || !gf_point_inside(st, box->xmin, box->ymin))
		return false;
	entry.x = box->xmin;
	entry.y = box->ymin;
	entry.id = id;
	d = gf_descend(idx, gf_point_addr(st, entry.x, entry.y), path, 0);
	node = path[d].node;
	idx->stats->entries_examined += node->nentries;
	pos = bucket_lower_bound(node, &entry);
	if (pos >= (int) node->nentries ||
		compare_bucket(&GfBucketEntries(node)[pos], &entry) != 0)
		return false;
	path[d].slot = pos;
	*depth = d;
	return true;
}

static bool
gf_contains(StructIndex *idx, int64 id, const Mbr *box)
{
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;

	return find_entry(idx, id, box, path, &depth);
}

static int
bucket_qsort_cmp(const void *a, const void *b)
{
	return compare_bucket(a, b);
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

/*
 * Merge child (entry *slot of parent) with its buddy while it holds at
 * most the merge threshold and both fit in one page.  The union stays on
 * child's page, the buddy's is released, and the parent's two entries
 * become one (at *slot, updated).  True when anything merged.
 */
static bool
merge_buddies(StructIndex *idx, TreeNode *parent, int *slot, TreeNode *child)
{
	const GfState *st = (const GfState *) idx->state;
	uint32		max = child->level == 0 ? st->bucket_max : st->dir_max;
	uint32		low = child->level == 0 ? st->bucket_merge : st->dir_merge;
	bool		merged = false;

	while (child->nentries <= low)
	{
		GfDirEntry *e = GfDirEntries(parent);
		uint64		a = e[*slot].addr;
		bool		high = (a & 1) != 0;
		int			b = high ? *slot - 1 : *slot + 1;
		TreeNode   *buddy;
		size_t		esz = child->entry_size;

		if (a == GF_ROOT_ADDR || b < 0 || b >= (int) parent->nentries ||
			e[b].addr != (a ^ 1))
			break;				/* the buddy region is cut finer */
		buddy = tree_read_child(idx, parent, e[b].child);
		if (child->nentries + buddy->nentries > max)
		{
			tree_free_node(buddy);
			break;
		}
		/* the low half's entries first: region order (and (x, y, id) below) */
		if (child->level == 0)
		{
			memcpy(child->entries + child->nentries * esz, buddy->entries,
				   buddy->nentries * esz);
			child->nentries += buddy->nentries;
			qsort(child->entries, child->nentries, esz, bucket_qsort_cmp);
		}
		else if (high)
		{
			memmove(child->entries + buddy->nentries * esz, child->entries,
					child->nentries * esz);
			memcpy(child->entries, buddy->entries, buddy->nentries * esz);
			child->nentries += buddy->nentries;
		}
		else
		{
			memcpy(child->entries + child->nentries * esz, buddy->entries,
				   buddy->nentries * esz);
			child->nentries += buddy->nentries;
		}
		ns_release(idx->ns, buddy->page);
		tree_free_node(buddy);
		gf_fill_dir_entry(st, &e[*slot], a >> 1, child->page);
		gf_remove_slot(parent, b);
		if (high)
			(*slot)--;
		merged = true;
	}
	return merged;
}

/*
 * After path[depth].node changed (changed: it must be written), merge it
 * and each ancestor with their buddies where the merge rule applies,
 * writing what changed, then replace a root directory left with one region
 * by its child while the root is above min_root_level (GFFM: 0; LB-Grid
 * keeps a sub-directory root, 1).  Shared by GFFM and LB-Grid.
 */
void
gf_merge_up(StructIndex *idx, PathStep *path, int depth, bool changed,
			int min_root_level)
{
	TreeNode   *node = path[depth].node;

	for (int d = depth - 1; d >= 0; d--)
	{
		TreeNode   *parent = path[d].node;
		bool		parent_changed = false;

		if (changed)
			parent_changed = merge_buddies(idx, parent, &path[d].slot, node);
		if (changed)
			ns_write(idx->ns, node, NS_WRITE_UPDATE);
		node = parent;
		changed = parent_changed;
	}
	if (changed)
		ns_write(idx->ns, node, NS_WRITE_UPDATE);

	/* a root directory with one region is replaced by its child */
	for (;;)
	{
		TreeNode   *root = tree_read_root(idx);

		if (root->level <= min_root_level || root->nentries != 1)
			break;
		Assert(GfDirEntries(root)[0].addr == GF_ROOT_ADDR);
		ns_release(idx->ns, root->page);
		ns_set_root(idx->ns, (PageId) GfDirEntries(root)[0].child,
					idx->ns->meta->height - 1);
	}
}

static bool
gf_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;

	if (!find_entry(idx, id, box, path, &depth))
		return false;
	gf_remove_slot(path[depth].node, path[depth].slot);
	gf_merge_up(idx, path, depth, true, 0);
	return true;
}

/* ------------------------------------------------------------------ */
/* window queries                                                     */
/* ------------------------------------------------------------------ */

/*
 * RQ and P-RQ (Fevgas 2019, §3.5.1, Alg. 6).  RQ is the generic depth-
 * first search, one page per read.  P-RQ reads, level by level, the
 * sub-directories and then the buckets the window reaches in groups, each
 * group one ns_read_many (one submission under a batched engine): the
 * traversal of query_batch with a single query (batch_search.c), whose
 * groups of up to 64 pages stand in for the thesis's read buffers (DPB,
 * LBB).  Both return the same answers; only the I/O differs.
 */
void
gf_search(StructIndex *idx, const SearchSpec *spec)
{
	const GfState *st = (const GfState *) idx->state;

	if (st->batched_range)
		tree_search_batch(idx, spec, 1);
	else
		tree_search(idx, spec);
}

/* ------------------------------------------------------------------ */
/* set-up                                                             */
/* ------------------------------------------------------------------ */

static void
gf_init_empty(StructIndex *idx)
{
	TreeNode   *root = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);

	ns_write(idx->ns, root, NS_WRITE_NEW);
	ns_set_root(idx->ns, root->page, 1);
}

/*
 * The capacities, thresholds and query choices of a grid file's state from
 * its options, which GFFM and LB-Grid share (GFFM: 24-byte bucket entries;
 * LB-Grid: its logical bucket capacity in records, lbgrid.c).  Raises the
 * configuration error for pages too small.
 */
void
gf_state_fill(GfState *st, const FestConfig *config, uint32 page_size,
			  const OptionBox *extent, uint32 bucket_max, int max_fill,
			  int merge_fill, bool batched_range, int knn_prefetch)
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
				  opts.knn_prefetch);
	return st;
}

static void
gf_describe(StructIndex *idx, JsonbParseState **state)
{
	GfState    *st = (GfState *) idx->state;

	jb_int(state, "bucket_max_entries", st->bucket_max);
	jb_int(state, "directory_max_entries", st->dir_max);
	jb_int(state, "bucket_merge_at_most", st->bucket_merge);
	jb_int(state, "directory_merge_at_most", st->dir_merge);
	jb_int(state, "bucket_entry_bytes", sizeof(GfBucketEntry));
	jb_int(state, "directory_entry_bytes", sizeof(GfDirEntry));
	jb_int(state, "grid_bits_per_axis", GF_AXIS_BITS);
	jb_bool(state, "batched_range_queries", st->batched_range);
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
	.knn = gf_knn,
	.check = gf_check,
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
