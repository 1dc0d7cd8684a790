/*-------------------------------------------------------------------------
 *
 * measure.c
 *	  Structure statistics of any tree (measure.h).
 *
 * Generic over every structure: the walk only reads nodes through the
 * NodeStore and asks the structure's NodeOps for each entry's rectangle
 * and reference, and StructureOps.entry_region (when the structure has
 * one, xBR+'s quadrants) for the region a child stands for.  Union areas
 * and overlaps come from geom/rectset.c, so even pages of thousands of
 * entries and levels of many thousands of nodes cost O(n log n) rather
 * than a GEOS union per node or a test of every pair.
 *
 * IDENTIFICATION
 *	  src/index/measure.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/measure.h"

#include "common/hashfn.h"
#include "geom/rectset.h"
#include "miscadmin.h"

/* A node waiting to be read, with what its parent knows about it. */
typedef struct PendingNode
{
	PageId		page;
	PageId		parent;
	uint16		level;
	bool		has_region;
	Mbr			region;
	bool		overflow;
} PendingNode;

/* Order-independent contribution of one entry to its node's hash. */
static uint64
entry_hash(const Mbr *box, int64 ref, uint16 level)
{
	unsigned char buf[4 * sizeof(double) + sizeof(int64) + sizeof(uint16)];

	memcpy(buf, &box->xmin, sizeof(double));
	memcpy(buf + 8, &box->ymin, sizeof(double));
	memcpy(buf + 16, &box->xmax, sizeof(double));
	memcpy(buf + 24, &box->ymax, sizeof(double));
	memcpy(buf + 32, &ref, sizeof(int64));
	memcpy(buf + 40, &level, sizeof(uint16));
	return hash_bytes_extended(buf, sizeof(buf), 0);
}

static uint64
node_hash(const MeasuredNode *m, uint64 entries_sum)
{
	uint64		h = hash_bytes_extended((const unsigned char *) &m->page, sizeof(PageId), 1);

	h = hash_combine64(h, hash_bytes_extended((const unsigned char *) &m->parent, sizeof(PageId), 2));
	h = hash_combine64(h, (uint64) m->level * UINT64CONST(0x9E3779B97F4A7C15));
	h = hash_combine64(h, (uint64) m->nentries);
	return hash_combine64(h, entries_sum);
}

/*
 * Read one node, describe it in *m, and push its children (internal
 * nodes) on the stack.  Returns the node's fingerprint.
 */
static uint64
measure_node(StructIndex *idx, const StructureOps *ops, const PendingNode *p,
			 MeasuredNode *m, PendingNode **stack, int64 *nstack, int64 *maxstack)
{
	const NodeOps *nops = idx->ns->node_ops;
	TreeNode   *node = tree_read_node(idx, (int64) p->page, p->level);
	Mbr		   *boxes;
	uint64		entries_sum = 0;

	if (node->level != p->level)
		tree_report_bad_level(idx, node, p->level);

	m->page = p->page;
	m->parent = p->parent;
	m->level = node->level;
	m->nentries = node->nentries;
	m->has_region = p->has_region;
	m->region = p->region;
	m->overflow = p->overflow;
	mbr_set_empty(&m->mbr);

	boxes = palloc(Max(node->nentries, 1) * sizeof(Mbr));
	for (uint32 i = 0; i < node->nentries; i++)
	{
		const void *entry = NodeEntry(node, i);
		int64		ref = nops->entry_ref(entry, node->level);

		nops->entry_mbr(entry, node->level, &boxes[i]);
		mbr_extend(&m->mbr, &boxes[i]);
		entries_sum += entry_hash(&boxes[i], ref, node->level);

		if (node->level > 0)
		{
			PendingNode *child;

			if (*nstack == *maxstack)
			{
				*maxstack *= 2;
				*stack = repalloc(*stack, *maxstack * sizeof(PendingNode));
			}
			child = &(*stack)[(*nstack)++];
			child->page = (PageId) ref;
			child->parent = node->page;
			child->level = node->level - 1;
			child->has_region = ops->entry_region != NULL &&
				ops->entry_region(idx, entry, node->level, &child->region);
			if (!child->has_region)
				mbr_set_empty(&child->region);
			child->overflow = ops->entry_overflow != NULL &&
				ops->entry_overflow(idx, entry, node->level);
		}
	}

	if (node->nentries == 0)
		m->dead_space = 0.0;
	else
	{
		/* rounding may make the difference slightly negative */
		m->dead_space = mbr_area(&m->mbr) - rectset_union_area(boxes, node->nentries);
		if (m->dead_space < 0.0)
			m->dead_space = 0.0;
	}
	pfree(boxes);
	tree_free_node(node);
	return node_hash(m, entries_sum);
}

/* Per-level sums, overlaps and fill once every node is known. */
static void
summarize_levels(StructIndex *idx, TreeMeasure *tm)
{
	Mbr		   *level_boxes = palloc(Max(tm->nnodes, 1) * sizeof(Mbr));
	double		capacity_sum = 0.0;

	for (uint32 level = 0; level < tm->height; level++)
	{
		LevelMeasure *lm = &tm->levels[level];
		int64		nboxes = 0;

		lm->capacity = ns_page_capacity(idx->ns, (uint16) level);
		for (int64 i = 0; i < tm->nnodes; i++)
		{
			const MeasuredNode *m = &tm->node_list[i];

			if (m->level != level)
				continue;
			lm->nodes++;
			lm->entries += m->nentries;
			if (m->overflow)
			{
				lm->overflow_nodes++;
				lm->overflow_entries += m->nentries;
			}
			lm->dead_space += m->dead_space;
			if (!mbr_is_empty(&m->mbr))
			{
				lm->coverage += mbr_area(&m->mbr);
				level_boxes[nboxes++] = m->mbr;
			}
		}
		lm->overlap = rectset_pairwise_overlap(level_boxes, nboxes);
		lm->fill = lm->nodes > 0 ? (double) lm->entries / ((double) lm->nodes * lm->capacity) : 0.0;

		tm->entries += lm->entries;
		tm->overflow_nodes += lm->overflow_nodes;
		tm->coverage += lm->coverage;
		tm->overlap += lm->overlap;
		tm->dead_space += lm->dead_space;
		capacity_sum += (double) lm->nodes * lm->capacity;
	}
	tm->objects = tm->height > 0 ? tm->levels[0].entries : 0;
	tm->fill = capacity_sum > 0 ? (double) tm->entries / capacity_sum : 0.0;
	pfree(level_boxes);
}

TreeMeasure *
tree_measure(StructIndex *idx, const StructureOps *ops)
{
	FestMeta   *meta = idx->ns->meta;
	TreeMeasure *tm = palloc0(sizeof(TreeMeasure));
	int64		maxstack = 64;
	int64		nstack = 0;
	PendingNode *stack = palloc(maxstack * sizeof(PendingNode));
	int64		maxnodes = 64;

	/* a file of a layout the structure cannot read (an older grid file) */
	if (ops != NULL && ops->check_layout != NULL)
		ops->check_layout(idx);
	if (meta->height == 0 || meta->height > FEST_MAX_LEVELS)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" records an impossible height %u", idx->name, meta->height),
				 errhint("Run festival.check('%s'), then rebuild the index with festival.build('%s').",
						 idx->name, idx->name)));
	tm->height = meta->height;
	tm->has_overflow = ops->entry_overflow != NULL;
	tm->node_list = palloc(maxnodes * sizeof(MeasuredNode));

	stack[0].page = meta->root;
	stack[0].parent = InvalidPageId;
	stack[0].level = (uint16) (meta->height - 1);
	stack[0].has_region = false;
	mbr_set_empty(&stack[0].region);
	stack[0].overflow = false;
	nstack = 1;

	while (nstack > 0)
	{
		PendingNode p = stack[--nstack];

		CHECK_FOR_INTERRUPTS();
		if (tm->nnodes == maxnodes)
		{
			maxnodes *= 2;
			tm->node_list = repalloc_huge(tm->node_list, maxnodes * sizeof(MeasuredNode));
		}
		tm->fingerprint += measure_node(idx, ops, &p, &tm->node_list[tm->nnodes],
										&stack, &nstack, &maxstack);
		tm->nnodes++;
	}
	pfree(stack);

	tm->nodes = tm->nnodes;
	summarize_levels(idx, tm);
	return tm;
}
