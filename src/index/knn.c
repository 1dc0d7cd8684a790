/*-------------------------------------------------------------------------
 *
 * knn.c
 *	  Best-first k-nearest-neighbour search (Hjaltason & Samet 1999).
 *
 * One priority queue holds three kinds of items, keyed by a distance:
 *
 *	node		a subtree not read yet; key = mindist(entry MBR, MBR(g)),
 *				a lower bound of every object below (traversal contract)
 *	candidate	a leaf entry whose key is only a lower bound of its
 *				object's distance (its MBR distance)
 *	object		a leaf entry with its exact distance
 *
 * The item with the smallest key comes out first (Hjaltason & Samet,
 * section 4.1, "incremental nearest neighbour"): a node is read and its
 * entries queued; a candidate is measured by the caller and comes back as
 * an object; an object is the next neighbour, because every item still
 * queued has a key, and so every object still to come a distance, at
 * least as large.
 *
 * Ties: at equal keys nodes and candidates come out before objects, so
 * when an object is at the head no queued item can still hide an object
 * at the same distance; objects at equal distance come out by increasing
 * id.  Hence the order is (distance, id) and with ties at the k-th
 * distance the smallest ids win.
 *
 * An id queued twice (the same object indexed twice) is returned once.
 *
 * IDENTIFICATION
 *	  src/index/knn.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/knn.h"

#include "lib/pairingheap.h"
#include "miscadmin.h"
#include "utils/hsearch.h"

/* The order of kinds at equal keys (see above). */
typedef enum KnnItemKind
{
	KNN_ITEM_NODE,
	KNN_ITEM_CANDIDATE,
	KNN_ITEM_OBJECT
} KnnItemKind;

typedef struct KnnItem
{
	pairingheap_node ph;
	double		key;
	KnnItemKind kind;
	uint16		level;			/* nodes: the child's level */
	int64		ref;			/* nodes: the page; otherwise the object id */
} KnnItem;

struct KnnSearch
{
	StructIndex *idx;
	Mbr			query;
	bool		exact_leaves;
	pairingheap *queue;
	HTAB	   *returned;		/* ids already returned */
	int64	   *batch;			/* candidates handed to the caller */
	int			maxbatch;
};

/*
 * pairingheap is a max-heap: "greater" items come out first, so an item
 * with a smaller key (then an earlier kind, then a smaller ref) is greater.
 */
static int
knn_item_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const KnnItem *x = pairingheap_const_container(KnnItem, ph, a);
	const KnnItem *y = pairingheap_const_container(KnnItem, ph, b);

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? 1 : -1;
	if (x->ref != y->ref)
		return x->ref < y->ref ? 1 : -1;
	return 0;
}

static void
knn_enqueue(KnnSearch *s, KnnItemKind kind, double key, int64 ref, uint16 level)
{
	KnnItem    *item = palloc(sizeof(KnnItem));

	item->key = key;
	item->kind = kind;
	item->ref = ref;
	item->level = level;
	pairingheap_add(s->queue, &item->ph);
}

KnnSearch *
knn_begin(StructIndex *idx, const Mbr *query, bool exact_leaves)
{
	KnnSearch  *s = palloc0(sizeof(KnnSearch));
	HASHCTL		ctl;
	FestMeta   *meta = idx->ns->meta;

	s->idx = idx;
	s->query = *query;
	s->exact_leaves = exact_leaves;
	s->queue = pairingheap_allocate(knn_item_cmp, NULL);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(int64);
	ctl.hcxt = CurrentMemoryContext;
	s->returned = hash_create("festival knn returned ids", 256, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/* a tree has at least its root leaf; tree_read_root reports otherwise */
	if (meta->height == 0)
		(void) tree_read_root(idx);
	/* the root's key does not matter: it is the only item */
	knn_enqueue(s, KNN_ITEM_NODE, 0.0, (int64) meta->root, meta->height - 1);
	return s;
}

/* Read a queued node and queue its entries. */
static void
knn_expand(KnnSearch *s, const KnnItem *item)
{
	StructIndex *idx = s->idx;
	const NodeOps *nops = idx->ns->node_ops;
	TreeNode   *node = tree_read_node(idx, item->ref, item->level);

	if (node->level != item->level)
		tree_report_bad_level(idx, node, item->level);
	idx->stats->entries_examined += node->nentries;

	for (uint32 i = 0; i < node->nentries; i++)
	{
		const void *entry = NodeEntry(node, i);
		Mbr			box;
		double		key;

		nops->entry_mbr(entry, node->level, &box);
		key = mbr_min_distance(&box, &s->query);
		if (node->level > 0)
			knn_enqueue(s, KNN_ITEM_NODE, key, nops->entry_ref(entry, node->level),
						node->level - 1);
		else
			knn_enqueue(s, s->exact_leaves ? KNN_ITEM_OBJECT : KNN_ITEM_CANDIDATE,
						key, nops->entry_ref(entry, 0), 0);
	}
	tree_free_node(node);
}

static bool
knn_already_returned(KnnSearch *s, int64 id)
{
	return hash_search(s->returned, &id, HASH_FIND, NULL) != NULL;
}

/*
 * Advance to the next neighbour, or to a batch of at most max_refine
 * candidates (those at the head of the queue) for the caller to measure.
 */
KnnStep
knn_next(KnnSearch *s, int max_refine, int64 *id, double *distance,
		 const int64 **refine_ids, int *nrefine)
{
	Assert(max_refine > 0);
	while (!pairingheap_is_empty(s->queue))
	{
		KnnItem    *item = pairingheap_container(KnnItem, ph,
												 pairingheap_first(s->queue));

		CHECK_FOR_INTERRUPTS();
		switch (item->kind)
		{
			case KNN_ITEM_NODE:
				pairingheap_remove_first(s->queue);
				knn_expand(s, item);
				pfree(item);
				break;

			case KNN_ITEM_OBJECT:
				pairingheap_remove_first(s->queue);
				if (!knn_already_returned(s, item->ref))
				{
					hash_search(s->returned, &item->ref, HASH_ENTER, NULL);
					*id = item->ref;
					*distance = item->key;
					pfree(item);
					return KNN_RESULT;
				}
				pfree(item);
				break;

			case KNN_ITEM_CANDIDATE:
				{
					int			n = 0;

					if (s->maxbatch < max_refine)
					{
						s->maxbatch = max_refine;
						s->batch = s->batch
							? repalloc(s->batch, max_refine * sizeof(int64))
							: palloc(max_refine * sizeof(int64));
					}
					/* every candidate at the head, up to max_refine */
					while (n < max_refine && item != NULL &&
						   item->kind == KNN_ITEM_CANDIDATE)
					{
						pairingheap_remove_first(s->queue);
						if (!knn_already_returned(s, item->ref))
							s->batch[n++] = item->ref;
						pfree(item);
						item = pairingheap_is_empty(s->queue) ? NULL
							: pairingheap_container(KnnItem, ph,
													pairingheap_first(s->queue));
					}
					if (n > 0)
					{
						*refine_ids = s->batch;
						*nrefine = n;
						return KNN_REFINE;
					}
				}
				break;
		}
	}
	return KNN_DONE;
}

/* A measured candidate comes back as an object with its exact distance. */
void
knn_push_exact(KnnSearch *s, int64 id, double distance)
{
	knn_enqueue(s, KNN_ITEM_OBJECT, distance, id, 0);
}
