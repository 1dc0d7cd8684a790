/*-------------------------------------------------------------------------
 *
 * hilbert_rtree_load.c
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
 * IDENTIFICATION
 *	  src/index/hilbert_rtree_load.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/hilbert_rtree.h"

#include "geom/hilbert.h"
#include "miscadmin.h"

/*
 * The entry counts of the nodes of a level of n entries: M each, the last
 * two evened out when the last would be below m.  Returns the node count.
 */
static int64
level_layout(int64 n, uint32 max, uint32 min, uint32 **counts)
{
	int64		nnodes = (n + max - 1) / max;
	uint32	   *c = palloc(Max(nnodes, 1) * sizeof(uint32));

	for (int64 i = 0; i < nnodes; i++)
		c[i] = (uint32) Min((int64) max, n - i * max);
	if (nnodes >= 2 && c[nnodes - 1] < min)
	{
		uint32		both = c[nnodes - 2] + c[nnodes - 1];

		c[nnodes - 2] = both - both / 2;
		c[nnodes - 1] = both / 2;
	}
	*counts = c;
	return nnodes;
}

/*
 * Write the nodes of one level from its entries (sorted), returning the
 * parent entries of the written nodes.
 */
static HilbertInternalEntry *
pack_level(StructIndex *idx, const char *entries, int64 n, uint16 level,
		   int64 *nparents)
{
	HilbertState *st = (HilbertState *) idx->state;
	uint32		esize = level == 0 ? sizeof(HilbertLeafEntry) : sizeof(HilbertInternalEntry);
	uint32	   *counts;
	int64		nnodes = level_layout(n, hilbert_max_entries(st, level),
									  hilbert_min_entries(st, level), &counts);
	HilbertInternalEntry *parents = palloc(Max(nnodes, 1) * sizeof(HilbertInternalEntry));
	int64		offset = 0;

	for (int64 i = 0; i < nnodes; i++)
	{
		TreeNode   *node;

		CHECK_FOR_INTERRUPTS();
		node = ns_new_node(idx->ns, ns_alloc(idx->ns, level), level);
		memcpy(node->entries, entries + (size_t) offset * esize, (size_t) counts[i] * esize);
		node->nentries = counts[i];
		offset += counts[i];
		ns_write(idx->ns, node, NS_WRITE_NEW);
		hilbert_summary_entry(node, &parents[i]);
		tree_free_node(node);
		ns_commit(idx->ns);
	}
	pfree(counts);
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
	qsort(leaves, n, sizeof(HilbertLeafEntry), leaf_cmp);

	/* levels bottom-up until a level fits in one node: the root */
	entries = (char *) leaves;
	for (;;)
	{
		int64		nparents;
		HilbertInternalEntry *parents = pack_level(idx, entries, count, level,
												   &nparents);

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
