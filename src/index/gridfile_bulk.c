/*-------------------------------------------------------------------------
 *
 * gridfile_bulk.c
 *	  Bulk loading a grid file (GFFM; build method 'bulk').
 *
 * The thesis builds its grid files by insertion (Fevgas 2019, §3.3 and
 * the experiments of chapter 3); this loader is festival's, and gives the
 * index that the buddy splits of insertion would give if every bucket
 * were split only once it holds more than it can:
 *
 *	1. every point gets its address (its grid cell, x and y bits
 *	   interleaved), and the points are sorted by it: the points of any
 *	   region are then one run of the array;
 *	2. buckets: the extent is halved, x then y then x..., until each part
 *	   holds at most a bucket's capacity; every part, empty ones included,
 *	   becomes a bucket, so the regions tile the extent;
 *	3. directories: the regions of the level below, in the same order,
 *	   are cut the same way into parts of at most a directory page's
 *	   capacity, each part a directory page, until one part remains: the
 *	   root.
 *
 * Every address is computed and every cut made before the first write,
 * so bad input (a point outside the extent, more points in one grid cell
 * than a bucket holds) is refused with the index untouched.  Pages are
 * written bottom-up, each committed as it is written so that buffered
 * node stores can flush while the index grows; the root changes last.
 *
 * IDENTIFICATION
 *	  src/index/gridfile_bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"

#include "miscadmin.h"

typedef struct SortItem
{
	uint64		key;			/* the point's address, left-aligned */
	GfBucketEntry e;
} SortItem;

/* A run [lo, hi) of the sorted level filling region. */
typedef struct Run
{
	uint64		addr;
	int64		lo;
	int64		hi;
} Run;

typedef struct Cutter
{
	StructIndex *idx;
	const uint64 *keys;			/* left-aligned addresses, ascending */
	int64		max;
	Run		   *runs;
	int64		nruns;
	int64		maxruns;
} Cutter;

static int
sort_item_cmp(const void *a, const void *b)
{
	const SortItem *x = a,
			   *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->e.x != y->e.x)
		return x->e.x < y->e.x ? -1 : 1;
	if (x->e.y != y->e.y)
		return x->e.y < y->e.y ? -1 : 1;
	return x->e.id < y->e.id ? -1 : (x->e.id > y->e.id ? 1 : 0);
}

static int
sort_item_cmp_bucket(const void *a, const void *b)
{
	const GfBucketEntry *x = a,
			   *y = b;

	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	if (x->y != y->y)
		return x->y < y->y ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

static void
add_run(Cutter *c, uint64 addr, int64 lo, int64 hi)
{
	if (c->nruns == c->maxruns)
	{
		c->maxruns *= 2;
		c->runs = repalloc_huge(c->runs, c->maxruns * sizeof(Run));
	}
	c->runs[c->nruns].addr = addr;
	c->runs[c->nruns].lo = lo;
	c->runs[c->nruns].hi = hi;
	c->nruns++;
}

/*
 * Cut the run [lo, hi), which lies in region, into runs of at most max by
 * halving.  Keys are left-aligned, so within a region the ones whose next
 * bit is 0 come first: the halving point is a binary search.
 */
static void
cut_sorted(Cutter *c, uint64 region, int64 lo, int64 hi)
{
	int			len = gf_addr_len(region);
	uint64		bit;
	int64		a = lo,
				b = hi;

	CHECK_FOR_INTERRUPTS();
	if (hi - lo <= c->max)
	{
		add_run(c, region, lo, hi);
		return;
	}
	if (len >= GF_MAX_DEPTH)
	{
		const GfState *st = (const GfState *) c->idx->state;

		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" cannot hold more than %u points in one grid cell",
						c->idx->name, st->bucket_max),
				 errdetail("The source has " INT64_FORMAT " points in one cell of 1/2^%d of the extent per axis.",
						   hi - lo, GF_AXIS_BITS),
				 errhint("Use a larger page_size or max_fill, or index fewer copies of one point.")));
	}
	bit = UINT64CONST(1) << (63 - len);
	/* the first key of the run with the bit set */
	while (a < b)
	{
		int64		mid = a + (b - a) / 2;

		if (c->keys[mid] & bit)
			b = mid;
		else
			a = mid + 1;
	}
	cut_sorted(c, region << 1, lo, a);
	cut_sorted(c, (region << 1) | 1, a, hi);
}

static void
cut_level(Cutter *c, const uint64 *keys, int64 n, int64 max)
{
	c->keys = keys;
	c->max = max;
	c->nruns = 0;
	c->maxruns = 64;
	c->runs = palloc(c->maxruns * sizeof(Run));
	cut_sorted(c, GF_ROOT_ADDR, 0, n);
}

void
gf_bulk_load(StructIndex *idx, BulkItem *items, int64 n, const char *method)
{
	const GfState *st = (const GfState *) idx->state;
	PageId		empty_root = idx->ns->meta->root;
	SortItem   *sorted = palloc_extended(n * sizeof(SortItem), MCXT_ALLOC_HUGE);
	uint64	   *keys = palloc_extended(n * sizeof(uint64), MCXT_ALLOC_HUGE);
	Cutter		c;
	GfDirEntry *level;
	int64		nlevel;
	uint16		lv = 0;

	Assert(strcmp(method, "bulk") == 0);
	c.idx = idx;

	/* 1. addresses and order; points outside the extent are refused */
	for (int64 i = 0; i < n; i++)
	{
		double		x = items[i].box.xmin,
					y = items[i].box.ymin;

		if (!gf_point_inside(st, x, y))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("point (%g %g) lies outside the extent of index \"%s\"",
							x, y, idx->name),
					 errdetail("The grid file divides the extent [%g, %g, %g, %g] into regions and indexes only points inside it.",
							   st->extent.xmin, st->extent.ymin, st->extent.xmax, st->extent.ymax),
					 errhint("Recreate the index with a wider \"extent\" option, e.g. options => '{\"extent\": [xmin, ymin, xmax, ymax]}'.")));
		sorted[i].e.x = x;
		sorted[i].e.y = y;
		sorted[i].e.id = items[i].id;
		sorted[i].key = gf_addr_key(gf_point_addr(st, x, y));
	}
	qsort(sorted, n, sizeof(SortItem), sort_item_cmp);
	for (int64 i = 0; i < n; i++)
		keys[i] = sorted[i].key;

	/* 2. buckets, cut before anything is written */
	cut_level(&c, keys, n, st->bucket_max);
	if (c.nruns == 1)
	{
		/* one bucket for the whole extent: fill the empty root leaf */
		TreeNode   *root = tree_read_root(idx);

		for (int64 i = 0; i < n; i++)
			GfBucketEntries(root)[i] = sorted[i].e;
		root->nentries = (uint32) n;
		qsort(root->entries, root->nentries, sizeof(GfBucketEntry), sort_item_cmp_bucket);
		ns_write(idx->ns, root, NS_WRITE_REPLACE);
		ns_commit(idx->ns);
		return;
	}
	nlevel = c.nruns;
	level = palloc_extended(nlevel * sizeof(GfDirEntry), MCXT_ALLOC_HUGE);
	for (int64 r = 0; r < c.nruns; r++)
	{
		Run		   *run = &c.runs[r];
		TreeNode   *node = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);

		for (int64 i = run->lo; i < run->hi; i++)
			GfBucketEntries(node)[i - run->lo] = sorted[i].e;
		node->nentries = (uint32) (run->hi - run->lo);
		/* keys order cells, not points: (x, y, id) within the bucket */
		qsort(node->entries, node->nentries, sizeof(GfBucketEntry), sort_item_cmp_bucket);
		ns_write(idx->ns, node, NS_WRITE_NEW);
		ns_commit(idx->ns);
		memset(&level[r], 0, sizeof(GfDirEntry));
		gf_region_box(st, run->addr, &level[r].region);
		level[r].child = (int64) node->page;
		level[r].addr = run->addr;
		tree_free_node(node);
	}
	pfree(sorted);

	/* 3. directory levels until one page holds the rest: the root */
	for (;;)
	{
		GfDirEntry *upper;

		lv++;
		if (lv >= FEST_MAX_LEVELS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("index \"%s\" would exceed %d levels", idx->name, FEST_MAX_LEVELS),
					 errhint("Use a larger page_size.")));
		keys = repalloc_huge(keys, nlevel * sizeof(uint64));
		for (int64 i = 0; i < nlevel; i++)
			keys[i] = gf_addr_key(level[i].addr);
		cut_level(&c, keys, nlevel, st->dir_max);
		upper = palloc_extended(c.nruns * sizeof(GfDirEntry), MCXT_ALLOC_HUGE);
		for (int64 r = 0; r < c.nruns; r++)
		{
			Run		   *run = &c.runs[r];
			TreeNode   *node = ns_new_node(idx->ns, ns_alloc(idx->ns, lv), lv);

			Assert(run->hi > run->lo);
			memcpy(node->entries, &level[run->lo], (run->hi - run->lo) * sizeof(GfDirEntry));
			node->nentries = (uint32) (run->hi - run->lo);
			ns_write(idx->ns, node, NS_WRITE_NEW);
			ns_commit(idx->ns);
			memset(&upper[r], 0, sizeof(GfDirEntry));
			gf_region_box(st, run->addr, &upper[r].region);
			upper[r].child = (int64) node->page;
			upper[r].addr = run->addr;
			tree_free_node(node);
		}
		pfree(level);
		level = upper;
		nlevel = c.nruns;
		if (nlevel == 1)
			break;
	}
	Assert(level[0].addr == GF_ROOT_ADDR);
	ns_set_root(idx->ns, (PageId) level[0].child, lv + 1);
	/* the empty root bucket of init_empty, replaced only now */
	ns_release(idx->ns, empty_root);
	ns_commit(idx->ns);
}
