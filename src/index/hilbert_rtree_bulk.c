/*-------------------------------------------------------------------------
 *
 * hilbert_rtree_bulk.c
 *	  Hilbert-sorted bulk loading of a Hilbert R-tree (build method
 *	  'hilbert').
 *
 * Kamel and Faloutsos built their static Hilbert-packed R-trees ("On
 * packing R-trees", CIKM 1993) by sorting the objects on the Hilbert value
 * of their centres and filling the leaves in that order; the Hilbert
 * R-tree (VLDB 1994, section 3) keeps exactly that order, so a packed tree
 * is a legal Hilbert R-tree that later insertions and deletions maintain.
 *
 * Objects are sorted by (h, id) (then by MBR, as nodes are), leaves are
 * filled with M entries each, and each upper level packs the entries
 * (MBR, page, LHV) of the level below, M per node, until one node is
 * left: the root.  When the last node of a level would hold fewer than m
 * entries, the last two nodes share their entries evenly (both then hold
 * at least m, as M >= 2m - 1).  Each node is committed once written, so
 * buffering stores (FAST, eFIND) can flush as the load goes; the empty
 * root leaf left by init_empty is released only when the new root is set,
 * so a load interrupted part-way leaves the empty tree.
 *
 * In bounded memory (hilbert_spill_*, for sources past
 * maintenance_work_mem): the extent is the index's, so every object is
 * keyed as it comes and goes to PostgreSQL's external sort (tuplesort)
 * ordered by (h as an int8 of the same order, id); the leaves are filled
 * from the sorted stream.  Objects equal in (h, id) -- a source repeating
 * an id -- are gathered and put in the in-memory load's order
 * (hilbert_entry_cmp, which ends on the entry's bytes) before they are
 * packed, so the leaves hold the same entries in the same order.  The
 * levels above need no sort, their entries come in order: a level too
 * large for half the budget goes to a temporary file (BufFile) and is read
 * back in order, and each node's entry count is computed as it is written
 * (node_entries), so nothing of a level's size stays beside the sort.
 * The tree is the in-memory load's, page for page.
 *
 * IDENTIFICATION
 *	  src/index/hilbert_rtree_bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/hilbert_rtree.h"

#include "catalog/pg_type_d.h"
#include "geom/hilbert.h"
#include "index/spill_sort.h"
#include "miscadmin.h"

/*
 * The nodes of a level of n entries: M entries each, the last two evened
 * out when the last would be below m.  Computed per node rather than kept
 * in an array of the level's nodes, which would grow with the entries
 * beside the bounded load's sort.
 */
static int64
level_nodes(int64 n, uint32 max)
{
	return (n + max - 1) / max;
}

/* The entries of node i (0 .. level_nodes - 1) of a level of n entries. */
static uint32
node_entries(int64 n, uint32 max, uint32 min, int64 i)
{
	int64		nnodes = level_nodes(n, max);
	int64		last = n - (nnodes - 1) * max;	/* the last node's, unevened */

	Assert(i >= 0 && i < nnodes);
	if (nnodes >= 2 && last < min && i >= nnodes - 2)
	{
		int64		both = max + last;

		return (uint32) (i == nnodes - 2 ? both - both / 2 : both / 2);
	}
	return (uint32) Min((int64) max, n - i * max);
}

/*
 * Where the entries of a level come from: one sorted array, the leaves'
 * external sort (leaf_next), or a temporary file of internal entries
 * written in order.  The parents of a level go to an array or, when too
 * large for the budget, to a temporary file.
 */
typedef struct LevelSource
{
	const char *array;
	HilbertSpill *sort;
	BufFile    *file;
} LevelSource;

static void leaf_next(HilbertSpill *sp, HilbertLeafEntry *leaf);

/* The next count entries of src (of esize bytes each) into dst. */
static void
source_take(LevelSource *src, char *dst, uint32 count, uint32 esize, int64 offset)
{
	if (src->array != NULL)
		memcpy(dst, src->array + (size_t) offset * esize, (size_t) count * esize);
	else if (src->sort != NULL)
	{
		for (uint32 i = 0; i < count; i++)
			leaf_next(src->sort, (HilbertLeafEntry *) (dst + (size_t) i * esize));
	}
	else
		spill_file_read(src->file, dst, (size_t) count * esize);
}

/*
 * Write the nodes of one level from its n entries (sorted), returning the
 * parent entries of the written nodes: in an array, or in *file (then
 * NULL is returned) when the caller gives one.
 */
static HilbertInternalEntry *
pack_level(StructIndex *idx, LevelSource *src, int64 n, uint16 level,
		   int64 *nparents, BufFile *file)
{
	HilbertState *st = (HilbertState *) idx->state;
	uint32		esize = level == 0 ? sizeof(HilbertLeafEntry) : sizeof(HilbertInternalEntry);
	uint32		max = hilbert_max_entries(st, level);
	uint32		min = hilbert_min_entries(st, level);
	int64		nnodes = level_nodes(n, max);
	HilbertInternalEntry *parents = NULL;
	int64		offset = 0;
	char		phase[PROGRESS_PHASE_LEN];

	snprintf(phase, sizeof(phase), "writing level %u", level);
	progress_phase(idx->progress, phase, "nodes", nnodes);
	if (file == NULL)
		parents = MemoryContextAllocHuge(CurrentMemoryContext,
										 Max(nnodes, 1) * sizeof(HilbertInternalEntry));
	for (int64 i = 0; i < nnodes; i++)
	{
		TreeNode   *node;
		HilbertInternalEntry parent;
		uint32		count = node_entries(n, max, min, i);

		CHECK_FOR_INTERRUPTS();
		node = ns_new_node(idx->ns, ns_alloc(idx->ns, level), level);
		source_take(src, node->entries, count, esize, offset);
		node->nentries = count;
		offset += count;
		ns_write(idx->ns, node, NS_WRITE_NEW);
		hilbert_summary_entry(node, &parent);
		if (file != NULL)
			BufFileWrite(file, &parent, sizeof(parent));
		else
			parents[i] = parent;
		tree_free_node(node);
		ns_commit(idx->ns);
		progress_step(idx->progress, 1);
	}
	Assert(offset == n);
	*nparents = nnodes;
	return parents;
}

static int
leaf_cmp(const void *a, const void *b)
{
	return hilbert_entry_cmp(a, b, 0);
}

void
hilbert_bulk_load(StructIndex *idx, BulkItem *items, int64 n, const char *method)
{
	HilbertState *st = (HilbertState *) idx->state;
	HilbertLeafEntry *leaves;
	char	   *entries;
	int64		count = n;
	uint16		level = 0;
	PageId		empty_root = idx->ns->meta->root;

	if (strcmp(method, "hilbert") != 0)
		elog(ERROR, "unknown bulk load method \"%s\" for the Hilbert R-tree", method);
	if (idx->ns->meta->height != 1)
		elog(ERROR, "bulk load of index \"%s\" needs the empty tree", idx->name);
	if (n == 0)
		return;

	leaves = MemoryContextAllocHuge(CurrentMemoryContext, (Size) n * sizeof(HilbertLeafEntry));
	for (int64 i = 0; i < n; i++)
	{
		leaves[i].box = items[i].box;
		leaves[i].id = items[i].id;
		leaves[i].hilbert = hilbert_of_box(&st->extent, &items[i].box);
	}
	progress_phase(idx->progress, "sorting", "objects", n);
	qsort(leaves, n, sizeof(HilbertLeafEntry), leaf_cmp);

	/* levels bottom-up until a level fits in one node: the root */
	entries = (char *) leaves;
	for (;;)
	{
		int64		nparents;
		LevelSource src = {.array = entries};
		HilbertInternalEntry *parents = pack_level(idx, &src, count, level,
												   &nparents, NULL);

		pfree(entries);
		if (nparents == 1)
		{
			/*
			 * The root changes last: a load interrupted before this point
			 * leaves the empty tree (every node was committed as written).
			 */
			ns_release(idx->ns, empty_root);
			ns_set_root(idx->ns, (PageId) parents[0].child, level + 1);
			pfree(parents);
			break;
		}
		if (level + 1 >= FEST_MAX_LEVELS)
			elog(ERROR, "bulk load of index \"%s\" needs more than %d levels",
				 idx->name, FEST_MAX_LEVELS);
		entries = (char *) parents;
		count = nparents;
		level++;
	}
}

/* ------------------------------------------------------------------ */
/* bounded memory                                                     */
/* ------------------------------------------------------------------ */

/* The external sort's columns (spill_sort.h): the first two are its keys. */
enum
{
	HS_KEY, HS_ID, HS_XMIN, HS_YMIN, HS_XMAX, HS_YMAX, HS_NCOLS
};

static const Oid hs_types[HS_NCOLS] = {
	[HS_KEY] = INT8OID,[HS_ID] = INT8OID,
	[HS_XMIN] = FLOAT8OID,[HS_YMIN] = FLOAT8OID,
	[HS_XMAX] = FLOAT8OID,[HS_YMAX] = FLOAT8OID
};

struct HilbertSpill
{
	Mbr			extent;
	SpillSort  *sort;			/* by (h as sort_key_u64, id) */
	/* leaf_next: a run of leaves equal in (h, id), in hilbert_entry_cmp order */
	HilbertLeafEntry *ties;
	int			nties;
	int			maxties;
	int			next;
	bool		peeked;			/* peek holds the first leaf of the next run */
	HilbertLeafEntry peek;
};

BulkSpill *
hilbert_spill_begin(StructIndex *idx, const char *method)
{
	HilbertState *st = (HilbertState *) idx->state;
	HilbertSpill *sp;

	if (strcmp(method, "hilbert") != 0)
		elog(ERROR, "unknown bulk load method \"%s\" for the Hilbert R-tree", method);
	sp = palloc0(sizeof(HilbertSpill));
	sp->extent = st->extent;

	/*
	 * Keyed by (h, id) only: the ties of a repeated id are put in order by
	 * leaf_next, as the in-memory load's comparator ends on the entry's
	 * bytes, which no column order reproduces.
	 */
	sp->sort = spill_sort_begin(HS_NCOLS, hs_types, 2, TUPLESORT_NONE);
	return (BulkSpill *) sp;
}

void
hilbert_spill_put(BulkSpill *spill, const BulkItem *item)
{
	HilbertSpill *sp = (HilbertSpill *) spill;
	Datum		v[HS_NCOLS];

	v[HS_KEY] = Int64GetDatum(sort_key_u64(hilbert_of_box(&sp->extent, &item->box)));
	v[HS_ID] = Int64GetDatum(item->id);
	v[HS_XMIN] = Float8GetDatum(item->box.xmin);
	v[HS_YMIN] = Float8GetDatum(item->box.ymin);
	v[HS_XMAX] = Float8GetDatum(item->box.xmax);
	v[HS_YMAX] = Float8GetDatum(item->box.ymax);
	spill_sort_put(sp->sort, v);
}

/* The next leaf of the performed sort, as the in-memory load builds it. */
static bool
sorted_leaf(HilbertSpill *sp, HilbertLeafEntry *leaf)
{
	const Datum *v = spill_sort_next(sp->sort);

	if (v == NULL)
		return false;
	memset(leaf, 0, sizeof(*leaf));
	leaf->hilbert = sort_key_to_u64(DatumGetInt64(v[HS_KEY]));
	leaf->id = DatumGetInt64(v[HS_ID]);
	leaf->box.xmin = DatumGetFloat8(v[HS_XMIN]);
	leaf->box.ymin = DatumGetFloat8(v[HS_YMIN]);
	leaf->box.xmax = DatumGetFloat8(v[HS_XMAX]);
	leaf->box.ymax = DatumGetFloat8(v[HS_YMAX]);
	return true;
}

/*
 * The next leaf entry in leaf_cmp's order: the sort orders by (h, id)
 * only, so each run of equal (h, id) is gathered and sorted here.
 */
static void
leaf_next(HilbertSpill *sp, HilbertLeafEntry *leaf)
{
	if (sp->next == sp->nties)
	{
		HilbertLeafEntry e;

		if (!sp->peeked && !sorted_leaf(sp, &sp->peek))
			elog(ERROR, "external sort of a bulk load returned fewer than " INT64_FORMAT " objects",
				 spill_sort_count(sp->sort));
		sp->ties[0] = sp->peek;
		sp->nties = 1;
		sp->next = 0;
		sp->peeked = false;
		while (sorted_leaf(sp, &e))
		{
			if (e.hilbert != sp->ties[0].hilbert || e.id != sp->ties[0].id)
			{
				sp->peek = e;
				sp->peeked = true;
				break;
			}
			if (sp->nties == sp->maxties)
			{
				sp->maxties *= 2;
				sp->ties = repalloc_huge(sp->ties, sp->maxties * sizeof(HilbertLeafEntry));
			}
			sp->ties[sp->nties++] = e;
		}
		if (sp->nties > 1)
			qsort(sp->ties, sp->nties, sizeof(HilbertLeafEntry), leaf_cmp);
	}
	*leaf = sp->ties[sp->next++];
}

/*
 * hilbert_bulk_load from the external sort: the same levels, the leaves
 * from the sorted stream, each level above from memory or, while its
 * entries exceed half of maintenance_work_mem, from a temporary file.
 */
void
hilbert_spill_load(StructIndex *idx, BulkSpill *spill)
{
	HilbertSpill *sp = (HilbertSpill *) spill;
	HilbertState *st = (HilbertState *) idx->state;
	PageId		empty_root = idx->ns->meta->root;
	LevelSource src = {0};
	int64		count = spill_sort_count(sp->sort);
	uint16		level = 0;

	if (idx->ns->meta->height != 1)
		elog(ERROR, "bulk load of index \"%s\" needs the empty tree", idx->name);
	Assert(count > 0);
	progress_phase(idx->progress, "sorting", "objects", count);
	spill_sort_perform(sp->sort);
	sp->maxties = 16;
	sp->ties = palloc(sp->maxties * sizeof(HilbertLeafEntry));
	src.sort = sp;

	for (;;)
	{
		int64		nparents;
		int64		nnodes = (count + hilbert_max_entries(st, level) - 1) /
			hilbert_max_entries(st, level);
		BufFile    *file = NULL;
		HilbertInternalEntry *parents;

		if (nnodes * (int64) sizeof(HilbertInternalEntry) >
			(int64) maintenance_work_mem * 1024 / 2)
		{
			elog(DEBUG1, "the parents of level %d of index \"%s\" go to a temporary file",
				 level, idx->name);
			file = BufFileCreateTemp(false);
		}
		parents = pack_level(idx, &src, count, level, &nparents, file);
		if (src.sort != NULL)
		{
			Assert(sp->next == sp->nties && !sp->peeked);
			spill_sort_end(sp->sort);
			pfree(sp->ties);
			pfree(sp);
			src.sort = NULL;
		}
		else if (src.file != NULL)
			BufFileClose(src.file);
		else
			pfree(unconstify(char *, src.array));
		src.file = NULL;
		src.array = NULL;
		if (file != NULL)
		{
			spill_file_rewind(file);
			src.file = file;
		}
		else
			src.array = (const char *) parents;

		if (nparents == 1)
		{
			HilbertInternalEntry root;

			source_take(&src, (char *) &root, 1, sizeof(root), 0);
			if (src.file != NULL)
				BufFileClose(src.file);
			else
				pfree(parents);
			/* the root changes last, as in hilbert_bulk_load */
			ns_release(idx->ns, empty_root);
			ns_set_root(idx->ns, (PageId) root.child, level + 1);
			break;
		}
		if (level + 1 >= FEST_MAX_LEVELS)
			elog(ERROR, "bulk load of index \"%s\" needs more than %d levels",
				 idx->name, FEST_MAX_LEVELS);
		count = nparents;
		level++;
	}
}
