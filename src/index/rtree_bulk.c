/*-------------------------------------------------------------------------
 *
 * rtree_bulk.c
 *	  Bulk loading of the R-tree family by packing: Sort-Tile-Recursive
 *	  and Hilbert-sorted packing.
 *
 * STR (Leutenegger, Lopez, Edgington, "STR: a simple and efficient
 * algorithm for R-tree packing", ICDE 1997, section 2.2): with P =
 * ceil(n / M) nodes to fill, sort the rectangles by the x of their centres,
 * cut them into S = ceil(sqrt(P)) vertical slices, sort each slice by y and
 * pack it into nodes.  Each level above is packed the same way from the
 * rectangles of the level below, until one node remains: the root.
 *
 * Hilbert packing (Kamel & Faloutsos, "On packing R-trees", CIKM 1993):
 * sort by the Hilbert value of the centres (geom/hilbert.h, over the
 * extent of the data) and pack consecutive runs; the levels above pack
 * consecutive nodes, which keeps the curve's order.
 *
 * Nodes are filled to M, but every run of rectangles is cut into
 * ceil(k / M) nodes of balanced sizes (differing by at most one), so no
 * node falls below m and check() holds for a packed tree as for an
 * inserted one: a run of k > M rectangles gives nodes of at least
 * floor((M + 1) / 2) >= m entries.
 *
 * Nodes go through the NodeStore like every other write, one commit per
 * node, so buffering stores (FAST, eFIND) can flush as the tree grows; the
 * root changes last, so an interrupted load leaves the empty tree.
 *
 * STR in bounded memory (rtree_spill_*): a source too large for
 * maintenance_work_mem goes through PostgreSQL's external sort
 * (tuplesort, spilling to temporary files) ordered by the x comparator
 * below, in half of the budget, and the sorted stream is read one
 * vertical slice at a time.  A slice holds about sqrt(n * M) rectangles
 * (70k, 3.4 MB, at 50M points with 4 kB pages): it is sorted by y in
 * memory exactly as in the in-memory load while it fits in the other
 * half, and otherwise goes through a sort of its own by the y comparator.
 * The parents of such a level go to a temporary file (BufFile), never to
 * memory beside the sort (where they took up to half of the budget); the
 * level above is read back into memory when it fits there
 * whole, and otherwise sorted by x again once the level below's sort is
 * gone.  So at most two sorts, or a sort and a slice, are alive at once,
 * at any n.  Both comparators are total orders (the last keys are the
 * rectangle itself), so the slices hold the same rectangles in the same
 * order and the tree is the in-memory load's, page for page.
 * The centres are the sort's first two keys as int8 (sort_key_f8, through
 * spill_sort.h): most comparisons of the external sort end on the first
 * key without touching the tuple.
 *
 * Hilbert packing in bounded memory: the keys need the extent of every
 * object, so the objects first go to a temporary file (BufFile) while the
 * extent grows; the load reads them back, keys them and sorts them by
 * (Hilbert value, reference, corners) in an external sort -- the
 * in-memory load's order, which is total -- and packs the sorted stream
 * node by node.  The levels above need no sort: their entries come in
 * order, so a level too large for the budget goes to a temporary file and
 * is read back in that order.
 *
 * The in-memory sorts are lib/sort_template.h instances with the
 * comparators inlined: qsort_arg's indirect calls and byte-wise swaps of
 * 48-byte items were a fifth of an STR load.
 *
 * IDENTIFICATION
 *	  src/index/rtree_bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

#include <math.h>

#include "catalog/pg_type_d.h"
#include "geom/hilbert.h"
#include "index/spill_sort.h"
#include "miscadmin.h"

const BuildMethod rtree_build_methods[] = {
	{"str", "Sort-Tile-Recursive packing, Leutenegger et al. 1997"},
	{"hilbert", "Hilbert-sorted packing, Kamel & Faloutsos 1993"},
	{NULL, NULL}
};

/* A rectangle to pack and the Hilbert value of its centre. */
typedef struct PackItem
{
	RtreeEntry	entry;
	uint64		key;
} PackItem;

StaticAssertDecl(sizeof(PackItem) == BULK_BYTES_PER_OBJECT_DEFAULT,
				 "festival.build counts what the in-memory load holds per object");

static inline double
centre(const PackItem *p, int axis)
{
	return mbr_low(&p->entry.box, axis) / 2 + mbr_high(&p->entry.box, axis) / 2;
}

static inline int
compare_double(double a, double b)
{
	return a < b ? -1 : (a > b);
}

/*
 * By the centre on one axis (0 = x, 1 = y), ties by the other axis, then
 * by reference, then (only for a source repeating an id) by the
 * rectangle's corners: a total order, so a packing is reproducible and the
 * external sort of rtree_spill_load (whose keys are the same, in the same
 * order) puts the rectangles in the same order as the in-memory sort.
 * Coordinates are finite (geomarg_check_wkb), where "<" is float8's order.
 */
static inline int
compare_boxes(const PackItem *p, const PackItem *q)
{
	const Mbr  *pb = &p->entry.box;
	const Mbr  *qb = &q->entry.box;
	int			c;

	if (p->entry.ref != q->entry.ref)
		return p->entry.ref < q->entry.ref ? -1 : 1;
	if ((c = compare_double(pb->xmin, qb->xmin)) != 0)
		return c;
	if ((c = compare_double(pb->ymin, qb->ymin)) != 0)
		return c;
	if ((c = compare_double(pb->xmax, qb->xmax)) != 0)
		return c;
	return compare_double(pb->ymax, qb->ymax);
}

static inline int
compare_on_axis(const PackItem *p, const PackItem *q, int axis)
{
	int			c;

	if ((c = compare_double(centre(p, axis), centre(q, axis))) != 0)
		return c;
	if ((c = compare_double(centre(p, 1 - axis), centre(q, 1 - axis))) != 0)
		return c;
	return compare_boxes(p, q);
}

/*
 * By Hilbert value, then as compare_on_axis after the centres: total too,
 * so equal values (points sharing a cell of the curve's grid) keep one
 * order, in memory and in the external sort alike.
 */
static inline int
compare_key(const PackItem *p, const PackItem *q)
{
	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	return compare_boxes(p, q);
}

#define ST_SORT sort_by_x
#define ST_ELEMENT_TYPE PackItem
#define ST_COMPARE(a, b) compare_on_axis(a, b, 0)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT sort_by_y
#define ST_ELEMENT_TYPE PackItem
#define ST_COMPARE(a, b) compare_on_axis(a, b, 1)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT sort_by_key
#define ST_ELEMENT_TYPE PackItem
#define ST_COMPARE(a, b) compare_key(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Rectangles in PostgreSQL's external sort (spill_sort.h), ordered as
 * compare_on_axis orders them on x (STR: the centres as sort_key_f8) or as
 * compare_key (Hilbert: the value as sort_key_u64, then 0): the sort keys
 * are all the columns, in order.
 */
enum
{
	SPILL_K1, SPILL_K2, SPILL_REF, SPILL_XMIN, SPILL_YMIN, SPILL_XMAX,
	SPILL_YMAX, SPILL_NCOLS
};

static const Oid spill_types[SPILL_NCOLS] = {
	[SPILL_K1] = INT8OID,[SPILL_K2] = INT8OID,[SPILL_REF] = INT8OID,
	[SPILL_XMIN] = FLOAT8OID,[SPILL_YMIN] = FLOAT8OID,
	[SPILL_XMAX] = FLOAT8OID,[SPILL_YMAX] = FLOAT8OID
};

struct BulkSpill
{
	SpillSort  *sort;
	/* Hilbert packing: the objects before the extent is known */
	BufFile    *raw;
	int64		nraw;
	Mbr			extent;
};

/*
 * The bytes of maintenance_work_mem that one of the two sorts (or a sort
 * and what lives with it) may take: STR's level input and its slice's
 * sort or slice array, Hilbert packing's leaves' sort and the parents.
 */
static int64
half_budget(void)
{
	return (int64) maintenance_work_mem * 1024 / 2;
}

/* A sort of its own, in half of maintenance_work_mem (spill_sort.c). */
static BulkSpill *
spill_create(void)
{
	BulkSpill  *sp = palloc0(sizeof(BulkSpill));

	sp->sort = spill_sort_begin(SPILL_NCOLS, spill_types, SPILL_NCOLS, TUPLESORT_NONE);
	return sp;
}

static void
spill_put_entry(BulkSpill *sp, const RtreeEntry *e, int64 k1, int64 k2)
{
	Datum		v[SPILL_NCOLS];

	v[SPILL_K1] = Int64GetDatum(k1);
	v[SPILL_K2] = Int64GetDatum(k2);
	v[SPILL_REF] = Int64GetDatum(e->ref);
	v[SPILL_XMIN] = Float8GetDatum(e->box.xmin);
	v[SPILL_YMIN] = Float8GetDatum(e->box.ymin);
	v[SPILL_XMAX] = Float8GetDatum(e->box.xmax);
	v[SPILL_YMAX] = Float8GetDatum(e->box.ymax);
	spill_sort_put(sp->sort, v);
}

/*
 * STR's keys: the centre on axis (0 = x, 1 = y), then on the other, as
 * compare_on_axis orders them.
 */
static void
spill_put_centres(BulkSpill *sp, const RtreeEntry *e, int axis)
{
	double		cx = e->box.xmin / 2 + e->box.xmax / 2;
	double		cy = e->box.ymin / 2 + e->box.ymax / 2;

	spill_put_entry(sp, e, sort_key_f8(axis == 0 ? cx : cy),
					sort_key_f8(axis == 0 ? cy : cx));
}

/* A sorted row as the rectangle it holds; returns its first key. */
static int64
spill_row_entry(const Datum *v, RtreeEntry *e)
{
	e->ref = DatumGetInt64(v[SPILL_REF]);
	e->box.xmin = DatumGetFloat8(v[SPILL_XMIN]);
	e->box.ymin = DatumGetFloat8(v[SPILL_YMIN]);
	e->box.xmax = DatumGetFloat8(v[SPILL_XMAX]);
	e->box.ymax = DatumGetFloat8(v[SPILL_YMAX]);
	return DatumGetInt64(v[SPILL_K1]);
}

static void
spill_free(BulkSpill *sp)
{
	spill_sort_end(sp->sort);
	if (sp->raw != NULL)
		BufFileClose(sp->raw);
	pfree(sp);
}

/*
 * Where a level's entries come from when they are not in one array: a
 * performed external sort (k1 is then the Hilbert key, or unused) or a
 * temporary file of PackItems written in order.
 */
typedef struct PackSource
{
	BulkSpill  *sort;
	BufFile    *file;
	bool		hilbert;
} PackSource;

static void
source_next(PackSource *src, PackItem *item)
{
	if (src->sort != NULL)
	{
		int64		k1 = spill_row_entry(spill_sort_get(src->sort->sort, "rectangles"),
										 &item->entry);

		item->key = src->hilbert ? sort_key_to_u64(k1) : 0;
	}
	else
		spill_file_read(src->file, item, sizeof(PackItem));
}

typedef struct PackLevel
{
	StructIndex *idx;
	uint16		level;
	uint32		max_entries;
	PackItem   *parents;		/* one item per node written, or */
	BufFile    *file;			/* to a temporary file, in order */
	int64		nparents;
} PackLevel;

/* Write one node holding items[0 .. n-1] and remember it for the level above. */
static void
write_node(PackLevel *pl, const PackItem *items, int64 n)
{
	NodeStore  *ns = pl->idx->ns;
	TreeNode   *node = ns_new_node(ns, ns_alloc(ns, pl->level), pl->level);
	RtreeEntry *e = RtreeNodeEntries(node);
	PackItem	parent;

	for (int64 i = 0; i < n; i++)
		e[i] = items[i].entry;
	node->nentries = (uint32) n;
	ns_write(ns, node, NS_WRITE_NEW);
	ns_commit(ns);
	progress_step(pl->idx->progress, 1);

	memset(&parent, 0, sizeof(parent));
	rtree_node_box(node, &parent.entry.box);
	parent.entry.ref = (int64) node->page;
	parent.key = items[n - 1].key;	/* the run's largest Hilbert value */
	if (pl->file != NULL)
		BufFileWrite(pl->file, &parent, sizeof(PackItem));
	else
		pl->parents[pl->nparents] = parent;
	pl->nparents++;
	tree_free_node(node);
	CHECK_FOR_INTERRUPTS();
}

/* Cut a run of k items into ceil(k / M) nodes of balanced sizes. */
static void
pack_run(PackLevel *pl, const PackItem *items, int64 k)
{
	int64		nodes = (k + pl->max_entries - 1) / pl->max_entries;
	int64		done = 0;

	for (int64 j = 0; j < nodes; j++)
	{
		int64		size = (k - done) / (nodes - j);

		write_node(pl, items + done, size);
		done += size;
	}
}

/*
 * pack_run over the k items of a source, read one node at a time into
 * buf (room for M items): the same nodes.
 */
static void
pack_run_streamed(PackLevel *pl, PackSource *src, int64 k, PackItem *buf)
{
	int64		nodes = (k + pl->max_entries - 1) / pl->max_entries;
	int64		done = 0;

	for (int64 j = 0; j < nodes; j++)
	{
		int64		size = (k - done) / (nodes - j);

		Assert(size <= pl->max_entries);
		for (int64 i = 0; i < size; i++)
			source_next(src, &buf[i]);
		write_node(pl, buf, size);
		done += size;
	}
}

/* A level of a packed tree, about to be written; no destination yet. */
/* Writing a level of n entries: its nodes are the progress counted. */
static void
pack_level_phase(StructIndex *idx, const RtreeState *st, uint16 level, int64 n)
{
	char		phase[PROGRESS_PHASE_LEN];

	snprintf(phase, sizeof(phase), "writing level %u", level);
	progress_phase(idx->progress, phase, "nodes",
				   (n + st->max_entries - 1) / st->max_entries);
}

static PackLevel
pack_level_begin(StructIndex *idx, const RtreeState *st, uint16 level, int64 n)
{
	PackLevel	pl = {0};

	if (level >= FEST_MAX_LEVELS)
		elog(ERROR, "packed tree of index \"%s\" would exceed %d levels",
			 idx->name, FEST_MAX_LEVELS);
	pack_level_phase(idx, st, level, n);
	pl.idx = idx;
	pl.level = level;
	pl.max_entries = st->max_entries;
	return pl;
}

/*
 * One level of STR: S vertical slices of balanced sizes, each sorted by y
 * and packed.  Balanced slices (rather than S * M rectangles each, as in
 * the paper) keep the last slice from ending in a node below m.
 */
static void
pack_level_str(PackLevel *pl, PackItem *items, int64 n)
{
	int64		nodes = (n + pl->max_entries - 1) / pl->max_entries;
	int64		slices = (int64) ceil(sqrt((double) nodes));

	sort_by_x(items, n);
	for (int64 s = 0; s < slices; s++)
	{
		int64		first = n * s / slices;
		int64		size = n * (s + 1) / slices - first;

		sort_by_y(items + first, size);
		pack_run(pl, items + first, size);
	}
}

/*
 * pack_level_str over n rectangles coming sorted by x from a performed
 * external sort.  The slices' bounds are pack_level_str's, so are their
 * contents.  A slice is read into memory and sorted by y there while the
 * largest one fits in the half of maintenance_work_mem the input's sort
 * leaves; past that (about sqrt(n * M) rectangles grow with n) each slice
 * goes through an external sort of its own by compare_on_axis's order on
 * y, which is total as well, and is packed node by node from it.
 */
static void
pack_level_str_spilled(PackLevel *pl, BulkSpill *in, int64 n)
{
	int64		nodes = (n + pl->max_entries - 1) / pl->max_entries;
	int64		slices = (int64) ceil(sqrt((double) nodes));
	int64		most = n / slices + 1;
	bool		in_memory = most * (int64) sizeof(PackItem) <= half_budget();
	PackItem   *slice = MemoryContextAllocHuge(CurrentMemoryContext,
											   (in_memory ? most : pl->max_entries) *
											   sizeof(PackItem));
	PackSource	src = {.sort = in};

	if (!in_memory)
		elog(DEBUG1, "the slices of level %d of index \"%s\" go to external sorts",
			 pl->level, pl->idx->name);
	for (int64 s = 0; s < slices; s++)
	{
		int64		first = n * s / slices;
		int64		size = n * (s + 1) / slices - first;

		Assert(size <= most);
		if (in_memory)
		{
			for (int64 i = 0; i < size; i++)
				source_next(&src, &slice[i]);
			sort_by_y(slice, size);
			pack_run(pl, slice, size);
		}
		else
		{
			BulkSpill  *by_y = spill_create();
			PackSource	ysrc = {.sort = by_y};

			for (int64 i = 0; i < size; i++)
			{
				PackItem	item;

				source_next(&src, &item);
				spill_put_centres(by_y, &item.entry, 1);
				CHECK_FOR_INTERRUPTS();
			}
			spill_sort_perform(by_y->sort);
			pack_run_streamed(pl, &ysrc, size, slice);
			spill_free(by_y);
		}
	}
	pfree(slice);
}

/* Room for the parents of a level of n rectangles. */
static int64
parents_bound(const RtreeState *st, int64 n)
{
	/* at most one node per m rectangles, and one more per STR slice */
	return n / st->min_entries + 2 + (int64) sqrt((double) n);
}

/* Would the parents of a level of n rectangles overflow maintenance_work_mem? */
static bool
parents_over_budget(const RtreeState *st, int64 n)
{
	return parents_bound(st, n) * (int64) sizeof(PackItem) > (int64) maintenance_work_mem * 1024;
}

/*
 * Release the empty root of init_empty and make the packed root the root.
 * Only now does the empty tree make way for the packed one: every node
 * was committed as it was written, so a load interrupted before this point
 * leaves the empty tree (and pages nothing reaches, which check() reports
 * and the next build reclaims).
 */
static void
pack_set_root(StructIndex *idx, PageId empty_root, PageId root, uint16 levels)
{
	ns_release(idx->ns, empty_root);
	ns_set_root(idx->ns, root, levels);
}

/*
 * A load in bounded memory: STR's external sort, or Hilbert packing's
 * temporary file of objects (its sort is made once the extent is known).
 */
BulkSpill *
rtree_spill_begin(StructIndex *idx, const char *method)
{
	BulkSpill  *sp;

	if (strcmp(method, "str") == 0)
		return spill_create();
	if (strcmp(method, "hilbert") != 0)
		elog(ERROR, "R-tree bulk loader called with method \"%s\"", method);
	sp = palloc0(sizeof(BulkSpill));
	sp->raw = BufFileCreateTemp(false);
	mbr_set_empty(&sp->extent);
	return sp;
}

void
rtree_spill_put(BulkSpill *spill, const BulkItem *item)
{
	RtreeEntry	e;

	if (spill->raw != NULL)
	{
		BufFileWrite(spill->raw, unconstify(BulkItem *, item), sizeof(BulkItem));
		mbr_extend(&spill->extent, &item->box);
		spill->nraw++;
		return;
	}
	e.box = item->box;
	e.ref = item->id;
	spill_put_centres(spill, &e, 0);
}

/*
 * rtree_bulk_load's Hilbert packing from the temporary file of objects:
 * key them over their extent into an external sort, pack the sorted
 * leaves node by node, and each level above from memory or, while it does
 * not fit, from a temporary file.
 */
static void
hilbert_spill_load(StructIndex *idx, BulkSpill *raw)
{
	RtreeState *st = (RtreeState *) idx->state;
	PageId		empty_root = idx->ns->meta->root;
	BulkSpill  *sorted = spill_create();
	PackItem   *buf = palloc(st->max_entries * sizeof(PackItem));
	PackSource	src = {.hilbert = true};
	PackItem   *items = NULL;
	int64		n = raw->nraw;
	uint16		level = 0;

	Assert(n > 0);
	progress_phase(idx->progress, "computing Hilbert values", "objects", n);
	spill_file_rewind(raw->raw);
	for (int64 i = 0; i < n; i++)
	{
		BulkItem	item;
		RtreeEntry	e;

		spill_file_read(raw->raw, &item, sizeof(BulkItem));
		e.box = item.box;
		e.ref = item.id;
		spill_put_entry(sorted, &e,
						sort_key_u64(hilbert_of_box(&raw->extent, &item.box)), 0);
		progress_step(idx->progress, 1);
		CHECK_FOR_INTERRUPTS();
	}
	BufFileClose(raw->raw);
	raw->raw = NULL;
	pfree(raw);
	progress_phase(idx->progress, "sorting", "objects", n);
	spill_sort_perform(sorted->sort);
	src.sort = sorted;

	for (;;)
	{
		PackLevel	pl = pack_level_begin(idx, st, level, n);

		if (parents_over_budget(st, n))
		{
			elog(DEBUG1, "the parents of level %d of index \"%s\" go to a temporary file",
				 level, idx->name);
			pl.file = BufFileCreateTemp(false);
		}
		else
			pl.parents = MemoryContextAllocHuge(CurrentMemoryContext,
												parents_bound(st, n) * sizeof(PackItem));
		if (items != NULL)
		{
			pack_run(&pl, items, n);
			pfree(items);
			items = NULL;
		}
		else
		{
			pack_run_streamed(&pl, &src, n, buf);
			if (src.sort != NULL)
				spill_free(src.sort);
			else
				BufFileClose(src.file);
			src.sort = NULL;
			src.file = NULL;
		}
		n = pl.nparents;
		if (pl.file != NULL)
		{
			spill_file_rewind(pl.file);
			src.file = pl.file;
		}
		else
			items = pl.parents;
		level++;
		if (n == 1)
			break;
	}
	if (items == NULL)
	{
		items = palloc(sizeof(PackItem));
		source_next(&src, items);
		BufFileClose(src.file);
	}
	pack_set_root(idx, empty_root, (PageId) items[0].entry.ref, level);
	pfree(items);
	pfree(buf);
}

/*
 * Could pack_level_str load a level of n rectangles in memory: its items
 * and the room for their parents within maintenance_work_mem?
 */
static bool
str_level_fits(const RtreeState *st, int64 n)
{
	return (n + parents_bound(st, n)) * (int64) sizeof(PackItem) <=
		(int64) maintenance_work_mem * 1024;
}

/*
 * rtree_bulk_load from a bounded load.  STR: a level whose input comes
 * from an external sort writes its parents to a temporary file, so what
 * lives with that sort is only the slice being packed (pack_level_str_
 * spilled keeps it in the other half of maintenance_work_mem).  The level
 * above is read back into memory when str_level_fits, and otherwise put
 * into a new external sort by x once the level below's is gone.
 */
void
rtree_spill_load(StructIndex *idx, BulkSpill *spill)
{
	RtreeState *st = (RtreeState *) idx->state;
	PageId		empty_root = idx->ns->meta->root;
	BulkSpill  *in = spill;
	PackItem   *items = NULL;
	int64		n;
	uint16		level = 0;

	if (spill->raw != NULL)
	{
		hilbert_spill_load(idx, spill);
		return;
	}
	n = spill_sort_count(spill->sort);
	Assert(n > 0);
	for (;;)
	{
		PackLevel	pl = pack_level_begin(idx, st, level, n);

		if (in != NULL)
		{
			pl.file = BufFileCreateTemp(false);
			progress_phase(idx->progress, "sorting", "entries", n);
			spill_sort_perform(in->sort);
			pack_level_phase(idx, st, level, n);
			pack_level_str_spilled(&pl, in, n);
			spill_free(in);
			in = NULL;
		}
		else
		{
			pl.parents = MemoryContextAllocHuge(CurrentMemoryContext,
												parents_bound(st, n) * sizeof(PackItem));
			pack_level_str(&pl, items, n);
			pfree(items);
			items = NULL;
		}
		n = pl.nparents;
		level++;
		if (pl.file != NULL)
		{
			spill_file_rewind(pl.file);
			if (n == 1 || str_level_fits(st, n))
			{
				items = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(PackItem));
				spill_file_read(pl.file, items, n * sizeof(PackItem));
			}
			else
			{
				elog(DEBUG1, "level %d of index \"%s\" goes to an external sort",
					 level, idx->name);
				in = spill_create();
				for (int64 i = 0; i < n; i++)
				{
					PackItem	item;

					spill_file_read(pl.file, &item, sizeof(PackItem));
					spill_put_centres(in, &item.entry, 0);
					CHECK_FOR_INTERRUPTS();
				}
				Assert(spill_sort_count(in->sort) == n);
			}
			BufFileClose(pl.file);
		}
		else
			items = pl.parents;
		if (n == 1)
			break;
	}
	Assert(in == NULL);
	pack_set_root(idx, empty_root, (PageId) items[0].entry.ref, level);
	pfree(items);
}

/*
 * Load an emptied R-tree (or R*-tree: the same nodes) with n objects:
 * release the empty root, pack the leaves, then each level above from the
 * level below, and make the last node written the root.
 */
void
rtree_bulk_load(StructIndex *idx, BulkItem *objects, int64 n, const char *method)
{
	RtreeState *st = (RtreeState *) idx->state;
	NodeStore  *ns = idx->ns;
	bool		str = strcmp(method, "str") == 0;
	PackItem   *items = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(PackItem));
	uint16		level = 0;
	Mbr			extent;
	PageId		empty_root = ns->meta->root;

	if (!str && strcmp(method, "hilbert") != 0)
		elog(ERROR, "R-tree bulk loader called with method \"%s\"", method);

	mbr_set_empty(&extent);
	for (int64 i = 0; i < n; i++)
	{
		items[i].entry.box = objects[i].box;
		items[i].entry.ref = objects[i].id;
		items[i].key = 0;
		mbr_extend(&extent, &objects[i].box);
	}
	progress_phase(idx->progress, "sorting", "objects", n);
	if (!str)
	{
		for (int64 i = 0; i < n; i++)
			items[i].key = hilbert_of_box(&extent, &items[i].entry.box);
		sort_by_key(items, n);
	}

	for (;;)
	{
		PackLevel	pl = pack_level_begin(idx, st, level, n);

		pl.parents = MemoryContextAllocHuge(CurrentMemoryContext,
											parents_bound(st, n) * sizeof(PackItem));
		if (str)
			pack_level_str(&pl, items, n);
		else
			pack_run(&pl, items, n);	/* consecutive runs keep the curve's order */
		pfree(items);
		items = pl.parents;
		n = pl.nparents;
		level++;
		if (n == 1)
			break;
	}
	pack_set_root(idx, empty_root, (PageId) items[0].entry.ref, level);
	pfree(items);
}
