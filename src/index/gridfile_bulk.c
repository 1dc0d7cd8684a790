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
 *	   capacity, each part a directory page (its scales and grid array made
 *	   from its regions): the sub-directories, then the root pages, until
 *	   one page holds the rest: the root directory.
 *
 * Insertion splits a region exactly when it holds more than a page (a
 * bucket more points, a sub-directory or root page more regions), and a
 * count only grows while points are inserted, so the regions insertion
 * ends with are the largest regions whose parents hold more than a page:
 * the regions these cuts make.  The loader therefore builds the buckets,
 * sub-directories and root pages that inserting the same points one at a
 * time builds (sql/gridfile.sql compares them); the page numbers differ,
 * and the empty index's three pages are left free.
 *
 * Every address is computed and every cut made before the first write,
 * so bad input (a point outside the extent, more points in one grid cell
 * than a bucket holds) is refused with the index untouched.  Pages are
 * written bottom-up, each committed as it is written so that buffered
 * node stores can flush while the index grows; the root changes last.
 *
 * In bounded memory (gf_spill_*, for sources past maintenance_work_mem)
 * the points go to PostgreSQL's external sort (tuplesort) in the order of
 * step 1, as (address as an int8 of the same order, x, y, id), and the
 * sorted stream is read twice.  The first pass finds the cuts: a region
 * is halved exactly when it holds more than a bucket's capacity, so it is
 * enough to know, for each such region, how many of its points fall in
 * its first half.  Walking the sorted addresses, the region of each depth
 * containing the current point is open; a point whose address first
 * differs from the previous one at bit p closes the regions deeper than
 * p (their counts are final), opens those holding the point (each in its
 * second half already when the point's next bit is 1) and starts the
 * second half of the region of depth p.  The closed regions above the
 * capacity (address and first-half count, a few per bucket) go to a
 * second external sort, and every check of step 2 is made in this pass,
 * before the first write.  Sorted by address they come in the order in
 * which the halving of step 2 visits them, so the second pass cuts the
 * stream as cut_sorted cuts the array, reading them in turn: the same
 * buckets in the same order.  The buckets' directory entries go to a
 * temporary file, and each directory level is cut from the file of the
 * level below the same way, twice read: a first pass over its regions'
 * left-aligned addresses (distinct, as the regions tile the extent, so
 * they are cut as points would be) finds its halvings into a sort, and a
 * second writes its pages, as step 3 cuts the array, and their entries to
 * the next file.  Nothing that grows with the points is kept in memory.
 *
 * IDENTIFICATION
 *	  src/index/gridfile_bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"

#include "catalog/pg_type_d.h"
#include "index/spill_sort.h"
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
	return point_entry_cmp(&x->e, &y->e);
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

/*
 * Write a new node (a bucket or a directory page, its grid array made from
 * its regions) for region addr, commit it, and fill in the directory entry
 * of the level above that points to it; the node is freed.
 */
static void
write_node_entry(StructIndex *idx, TreeNode *node, uint64 addr, GfDirEntry *entry)
{
	gf_write_dir(idx, node, NS_WRITE_NEW);
	ns_commit(idx->ns);
	progress_step(idx->progress, 1);
	gf_fill_dir_entry((const GfState *) idx->state, entry, addr, node->page);
	tree_free_node(node);
}

/*
 * Write a new bucket holding its first count entries, for region addr,
 * and describe it in *entry for the directory above.
 */
static void
write_bucket(StructIndex *idx, TreeNode *node, uint32 count, uint64 addr,
			 GfDirEntry *entry)
{
	node->nentries = count;
	/* keys order cells, not points: (x, y, id) within the bucket */
	qsort(node->entries, node->nentries, sizeof(GfBucketEntry), point_entry_qsort_cmp);
	write_node_entry(idx, node, addr, entry);
}

/* A directory level lv is about to be built: refuse one past the deepest tree. */
static void
check_directory_level(StructIndex *idx, uint16 lv)
{
	if (lv >= FEST_MAX_LEVELS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" would exceed %d levels", idx->name, FEST_MAX_LEVELS),
				 errhint("Use a larger page_size.")));
}

/* The pages of the empty index init_empty made: root page, sub-directory, bucket. */
static void
empty_index_pages(StructIndex *idx, PageId pages[3])
{
	GfRoot	   *root = gf_root(idx);
	TreeNode   *sub;

	if (gf_root_count(root) != 1)
		elog(ERROR, "bulk load of index \"%s\" into an index that is not empty", idx->name);
	pages[0] = idx->ns->meta->root;
	pages[1] = gf_root_sub_page(root, 0);
	sub = tree_read_node(idx, (int64) pages[1], GF_LEVEL_SUBDIR);
	if (sub->level != GF_LEVEL_SUBDIR || sub->nentries != 1)
		elog(ERROR, "bulk load of index \"%s\" into an index that is not empty", idx->name);
	pages[2] = (PageId) GfDirEntries(sub)[0].child;
	tree_free_node(sub);
	/* the copy of the empty root directory goes with it */
	gf_root_reset(idx);
}

/*
 * The directory's root is the entry the last level left: it replaces the
 * empty index's pages only now, and the root directory in memory is made
 * from the root pages written.
 */
static void
set_directory_root(StructIndex *idx, const GfDirEntry *root, uint16 height,
				   const PageId *empty)
{
	Assert(root->addr == GF_ROOT_ADDR && height >= GF_MIN_HEIGHT);
	ns_set_root(idx->ns, (PageId) root->child, height);
	for (int i = 0; empty != NULL && i < 3; i++)
		ns_release(idx->ns, empty[i]);
	gf_root_changed(idx);
	ns_commit(idx->ns);
}

/*
 * Step 3: directory levels over the nlevel regions of the buckets (in
 * order): sub-directories, then root pages until one page holds the rest.
 * keys is scratch room (palloc'd, any size), level is freed.  The top
 * entry goes to *top, the height is returned.
 */
static uint16
build_directories(StructIndex *idx, GfDirEntry *level, int64 nlevel,
				  uint64 *keys, GfDirEntry *top)
{
	const GfState *st = (const GfState *) idx->state;
	Cutter		c;
	uint16		lv = 0;

	c.idx = idx;
	for (;;)
	{
		GfDirEntry *upper;

		lv++;
		check_directory_level(idx, lv);
		progress_phase(idx->progress, "writing the directory", "nodes", -1);
		keys = repalloc_huge(keys, Max(nlevel, 1) * sizeof(uint64));
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
			write_node_entry(idx, node, run->addr, &upper[r]);
		}
		pfree(c.runs);
		pfree(level);
		level = upper;
		nlevel = c.nruns;
		/* the two levels of the grid file at least: sub-directories, root */
		if (nlevel == 1 && lv >= GF_LEVEL_ROOT)
			break;
	}
	*top = level[0];
	pfree(level);
	pfree(keys);
	return lv + 1;
}

/*
 * The directory over the n buckets of `buckets` (their entries in region
 * order, tiling the extent; freed), made the root: LB-Grid's restore
 * (lbgrid.c) cuts it as the bulk loader does.
 */
void
gf_build_directory(StructIndex *idx, GfDirEntry *buckets, int64 n)
{
	GfDirEntry	top;
	uint16		height;

	gf_root_reset(idx);
	height = build_directories(idx, buckets, n, palloc(sizeof(uint64)), &top);
	set_directory_root(idx, &top, height, NULL);
}

void
gf_bulk_load(StructIndex *idx, BulkItem *items, int64 n, const char *method)
{
	const GfState *st = (const GfState *) idx->state;
	PageId		empty[3];
	SortItem   *sorted = palloc_extended(Max(n, 1) * sizeof(SortItem), MCXT_ALLOC_HUGE);
	uint64	   *keys = palloc_extended(Max(n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	Cutter		c;
	GfDirEntry *level;
	int64		nlevel;
	GfDirEntry	top;
	uint16		height;

	Assert(strcmp(method, "bulk") == 0);
	c.idx = idx;

	/* 1. addresses and order; points outside the extent are refused */
	for (int64 i = 0; i < n; i++)
	{
		double		x = items[i].box.xmin,
					y = items[i].box.ymin;

		sorted[i].key = gf_addr_key(gf_point_admit(idx, x, y));
		sorted[i].e.x = x;
		sorted[i].e.y = y;
		sorted[i].e.id = items[i].id;
	}
	progress_phase(idx->progress, "sorting", "points", n);
	qsort(sorted, n, sizeof(SortItem), sort_item_cmp);
	for (int64 i = 0; i < n; i++)
		keys[i] = sorted[i].key;

	/* 2. buckets, cut before anything is written */
	cut_level(&c, keys, n, st->bucket_max);
	empty_index_pages(idx, empty);
	nlevel = c.nruns;
	progress_phase(idx->progress, "writing buckets", "nodes", nlevel);
	level = palloc_extended(nlevel * sizeof(GfDirEntry), MCXT_ALLOC_HUGE);
	for (int64 r = 0; r < c.nruns; r++)
	{
		Run		   *run = &c.runs[r];
		TreeNode   *node = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);

		for (int64 i = run->lo; i < run->hi; i++)
			GfBucketEntries(node)[i - run->lo] = sorted[i].e;
		write_bucket(idx, node, (uint32) (run->hi - run->lo), run->addr, &level[r]);
	}
	pfree(sorted);
	pfree(c.runs);
	height = build_directories(idx, level, nlevel, keys, &top);
	set_directory_root(idx, &top, height, empty);
}

/* ------------------------------------------------------------------ */
/* bounded memory                                                     */
/* ------------------------------------------------------------------ */

/*
 * The regions holding more than a bucket, which are halved (first pass):
 * an external sort in gf_addr_cmp order (the left-aligned address, then
 * the depth), each with its points in its first half.
 */
enum
{
	SR_KEY, SR_LEN, SR_FIRST, SR_NCOLS
};

static const Oid sr_types[SR_NCOLS] = {INT8OID, INT8OID, INT8OID};

struct GfSpill
{
	StructIndex *idx;
	SpillSort  *sort;			/* spill_points_*, keyed by gf_addr_key */
	/* the second pass */
	SpillSort  *splits;			/* SR_*, performed */
	BufFile    *level;			/* the entries of the level written, in order */
	int64		nlevel;
	BufFile    *in;				/* the directory level being cut, or NULL: the points */
};

BulkSpill *
gf_spill_begin(StructIndex *idx, const char *method)
{
	GfSpill    *sp = palloc0(sizeof(GfSpill));

	Assert(strcmp(method, "bulk") == 0);
	sp->idx = idx;
	sp->sort = spill_points_begin();
	return (BulkSpill *) sp;
}

/* Step 1 for one point: refused outside the extent, sorted by address. */
void
gf_spill_put(BulkSpill *spill, const BulkItem *item)
{
	GfSpill    *sp = (GfSpill *) spill;
	double		x = item->box.xmin,
				y = item->box.ymin;
	uint64		addr = gf_point_admit(sp->idx, x, y);

	spill_points_put(sp->sort, gf_addr_key(addr), x, y, item->id);
}

/* The next point of the sorted stream; returns its left-aligned address. */
static inline uint64
sorted_point(GfSpill *sp, GfBucketEntry *e)
{
	return spill_points_get(sp->sort, &e->x, &e->y, &e->id);
}

/*
 * The first pass (see the header): every region above max points, with
 * the points of its first half, sorted in gf_addr_cmp order (the order in
 * which cut_sorted visits regions).  start[d] is where the open region of
 * depth d began, second[d] where its second half began (-1: not yet).
 */
static void
find_splits(GfSpill *sp, StructIndex *idx, uint32 max, int64 n)
{
	const GfState *st = (const GfState *) idx->state;
	int64		start[GF_MAX_DEPTH + 1];
	int64		second[GF_MAX_DEPTH + 1];
	uint64		prev = 0;

	sp->splits = spill_sort_begin(SR_NCOLS, sr_types, 2, TUPLESORT_RANDOMACCESS);
	for (int64 i = 0; i <= n; i++)
	{
		GfBucketEntry e;
		uint64		key = 0;
		int			p;

		if (i < n && sp->in != NULL)
		{
			GfDirEntry	d;

			spill_file_read(sp->in, &d, sizeof(d));
			key = gf_addr_key(d.addr);
		}
		else if (i < n)
		{
			key = sorted_point(sp, &e);
			CHECK_FOR_INTERRUPTS();
		}
		if (i == 0)
		{
			/* the first point opens every region */
			for (int d = 0; d <= GF_MAX_DEPTH; d++)
			{
				start[d] = 0;
				second[d] = d < GF_MAX_DEPTH && (key & (UINT64CONST(1) << (63 - d))) ? 0 : -1;
			}
			prev = key;
			continue;
		}
		/* the depth of the deepest region holding both points */
		if (i == n)
			p = -1;				/* the end closes every region */
		else if (key == prev)
			continue;
		else
			p = Min(63 - pg_leftmost_one_pos64(key ^ prev), GF_MAX_DEPTH);
		Assert(p < GF_MAX_DEPTH);
		for (int d = GF_MAX_DEPTH; d > p; d--)
		{
			int64		count = i - start[d];

			if (count > max)
			{
				uint64		addr = d == 0 ? GF_ROOT_ADDR :
				((prev >> (64 - d)) | (UINT64CONST(1) << d));
				Datum		v[SR_NCOLS];

				if (d == GF_MAX_DEPTH)
					ereport(ERROR,
							(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							 errmsg("index \"%s\" cannot hold more than %u points in one grid cell",
									idx->name, st->bucket_max),
							 errdetail("The source has " INT64_FORMAT " points in one cell of 1/2^%d of the extent per axis.",
									   count, GF_AXIS_BITS),
							 errhint("Use a larger page_size or max_fill, or index fewer copies of one point.")));
				v[SR_KEY] = Int64GetDatum(sort_key_u64(gf_addr_key(addr)));
				v[SR_LEN] = Int64GetDatum(gf_addr_len(addr));
				v[SR_FIRST] = Int64GetDatum((second[d] < 0 ? i : second[d]) - start[d]);
				spill_sort_put(sp->splits, v);
			}
			/* the region of depth d holding the new point: maybe in its second half already */
			start[d] = i;
			second[d] = d < GF_MAX_DEPTH && (key & (UINT64CONST(1) << (63 - d))) ? i : -1;
		}
		if (p >= 0)
			second[p] = i;
		prev = key;
	}
	spill_sort_perform(sp->splits);
}

/*
 * The second pass: cut_sorted over the stream, with the first halves'
 * sizes of the first pass; a part of at most max points is the next
 * bucket (lv 0), a part of at most max entries of the directory level lv
 * being cut the next page of that level, as build_directories writes it.
 */
static void
cut_streamed(GfSpill *sp, StructIndex *idx, uint64 region, int64 count, uint32 max,
			 uint16 lv)
{
	CHECK_FOR_INTERRUPTS();
	if (count <= max && lv == 0)
	{
		TreeNode   *node = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);
		GfDirEntry	entry;

		for (int64 i = 0; i < count; i++)
			(void) sorted_point(sp, &GfBucketEntries(node)[i]);
		write_bucket(idx, node, (uint32) count, region, &entry);
		BufFileWrite(sp->level, &entry, sizeof(entry));
		sp->nlevel++;
		return;
	}
	if (count <= max)
	{
		TreeNode   *node = ns_new_node(idx->ns, ns_alloc(idx->ns, lv), lv);
		GfDirEntry	upper;

		Assert(count > 0);
		spill_file_read(sp->in, node->entries, count * sizeof(GfDirEntry));
		node->nentries = (uint32) count;
		write_node_entry(idx, node, region, &upper);
		BufFileWrite(sp->level, &upper, sizeof(upper));
		sp->nlevel++;
		return;
	}
	{
		const Datum *v = spill_sort_next(sp->splits);
		int64		first;

		if (v == NULL || sort_key_to_u64(DatumGetInt64(v[SR_KEY])) != gf_addr_key(region) ||
			DatumGetInt64(v[SR_LEN]) != gf_addr_len(region))
			elog(ERROR, "bulk load of index \"%s\" lost the halving of a region", idx->name);
		first = DatumGetInt64(v[SR_FIRST]);

		Assert(first >= 0 && first <= count);
		cut_streamed(sp, idx, region << 1, first, max, lv);
		cut_streamed(sp, idx, (region << 1) | 1, count - first, max, lv);
	}
}

/*
 * gf_bulk_load from the external sort: the first pass finds the cuts
 * (every check made), the second writes the buckets, then each directory
 * level is cut the same way from the file of the level below (its regions'
 * left-aligned addresses as the keys, as build_directories cuts them),
 * until one entry is left above the sub-directories: the root.
 */
void
gf_spill_load(StructIndex *idx, BulkSpill *spill)
{
	GfSpill    *sp = (GfSpill *) spill;
	const GfState *st = (const GfState *) idx->state;
	PageId		empty[3];
	int64		n = spill_sort_count(sp->sort);
	GfDirEntry	root;
	uint16		lv = 0;

	/*
	 * More points than a bucket holds, as the caller spills only past
	 * maintenance_work_mem: gf_bulk_load's one-bucket case does not arise.
	 */
	if (n <= st->bucket_max)
		elog(ERROR, "bulk load of index \"%s\" spilled only " INT64_FORMAT " points",
			 idx->name, n);
	progress_phase(idx->progress, "sorting", "points", n);
	spill_sort_perform(sp->sort);
	find_splits(sp, idx, st->bucket_max, n);
	spill_sort_rescan(sp->sort);
	empty_index_pages(idx, empty);
	sp->level = BufFileCreateTemp(false);
	progress_phase(idx->progress, "writing buckets", "nodes", -1);
	cut_streamed(sp, idx, GF_ROOT_ADDR, n, st->bucket_max, 0);
	if (spill_sort_next(sp->splits) != NULL)
		elog(ERROR, "bulk load of index \"%s\" left a region unhalved", idx->name);
	spill_sort_end(sp->sort);
	spill_sort_end(sp->splits);

	/* step 3, build_directories' levels, each read twice from its file */
	do
	{
		int64		count = sp->nlevel;

		lv++;
		check_directory_level(idx, lv);
		progress_phase(idx->progress, "writing the directory", "nodes", -1);
		sp->in = sp->level;
		spill_file_rewind(sp->in);
		find_splits(sp, idx, st->dir_max, count);
		spill_file_rewind(sp->in);
		sp->level = BufFileCreateTemp(false);
		sp->nlevel = 0;
		cut_streamed(sp, idx, GF_ROOT_ADDR, count, st->dir_max, lv);
		if (spill_sort_next(sp->splits) != NULL)
			elog(ERROR, "bulk load of index \"%s\" left a region unhalved", idx->name);
		spill_sort_end(sp->splits);
		BufFileClose(sp->in);
		sp->in = NULL;
	} while (sp->nlevel > 1 || lv < GF_LEVEL_ROOT);

	spill_file_rewind(sp->level);
	spill_file_read(sp->level, &root, sizeof(root));
	BufFileClose(sp->level);
	set_directory_root(idx, &root, lv + 1, empty);
	pfree(sp);
}
