/*-------------------------------------------------------------------------
 *
 * batch_search.c
 *	  Many window searches in one traversal of any structure.
 *
 * The depth-first search of traverse.c, carrying with each queued node the
 * set of queries whose filter reaches it (the queries for which
 * predicate_descend holds on the parent entry).  Each node is read once
 * for all of them, where separate searches would read a node once per
 * query reaching it; queries are answered as by tree_search, each through
 * its own SearchSpec and emit callback.  Like tree_search it only uses the
 * traversal contract (structure.h), so it serves every structure.
 *
 * Nodes are read in groups: the frames on top of the stack at the same
 * level (siblings, and cousins queued by the same group) are read with one
 * ns_read_many, which a batched engine (libaio, io_uring) submits at once
 * (issue 5, thesis section 4.1.6).  The depth-first order is kept: leaves
 * are visited in stack order, and internal nodes push their children so
 * that the first node's children end up on top; answers are emitted in
 * the same order as one node at a time.
 *
 * IDENTIFICATION
 *	  src/index/batch_search.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/batch_search.h"

#include "miscadmin.h"

/* Most nodes read with one ns_read_many. */
#define BATCH_READ_GROUP 64

/* A node to visit and the queries that reach it. */
typedef struct BatchFrame
{
	PageId		page;
	uint16		level;
	int			nactive;
	int		   *active;			/* indexes into specs, increasing */
} BatchFrame;

/* A leaf's entries decoded once for all the queries that reach it. */
typedef struct LeafScratch
{
	uint32		max;
	int64	   *ids;
	Mbr		   *boxes;
} LeafScratch;

/*
 * Filter a leaf's entries for each query of its frame, query by query:
 * each query's answers are collected in one run (its own list stays hot,
 * as in a search of its own), in entry order as before; the entries are
 * decoded only once.
 */
static void
visit_leaf(StructIndex *idx, const SearchSpec *specs, const BatchFrame *frame,
		   const TreeNode *node, LeafScratch *scratch)
{
	const NodeOps *nops = idx->ns->node_ops;

	if (node->nentries > scratch->max)
	{
		scratch->max = Max(node->nentries, scratch->max * 2);
		scratch->ids = repalloc(scratch->ids, scratch->max * sizeof(int64));
		scratch->boxes = repalloc(scratch->boxes, scratch->max * sizeof(Mbr));
	}
	for (uint32 i = 0; i < node->nentries; i++)
	{
		const void *entry = NodeEntry(node, i);

		nops->entry_mbr(entry, 0, &scratch->boxes[i]);
		scratch->ids[i] = nops->entry_ref(entry, 0);
	}
	for (int a = 0; a < frame->nactive; a++)
	{
		const SearchSpec *spec = &specs[frame->active[a]];

		for (uint32 i = 0; i < node->nentries; i++)
			tree_filter_leaf_entry(spec, scratch->ids[i], &scratch->boxes[i]);
	}
}

/*
 * Examine one node for the queries of its frame: leaf entries are emitted,
 * children reached by some query are pushed with those queries.
 */
static void
visit_node(StructIndex *idx, const SearchSpec *specs, BatchFrame *frame,
		   TreeNode *node, int *reach, LeafScratch *scratch,
		   BatchFrame **stackp, int *nstackp, int *maxstackp)
{
	const NodeOps *nops = idx->ns->node_ops;

	if (node->level != frame->level)
		tree_report_bad_level(idx, node, frame->level);
	idx->stats->entries_examined += (int64) node->nentries * frame->nactive;

	if (node->level == 0)
		visit_leaf(idx, specs, frame, node, scratch);
	else
	{
		for (uint32 i = 0; i < node->nentries; i++)
		{
			const void *entry = NodeEntry(node, i);
			Mbr			box;
			int			nreach = 0;
			BatchFrame *child;

			nops->entry_mbr(entry, node->level, &box);
			for (int a = 0; a < frame->nactive; a++)
				if (predicate_descend(&specs[frame->active[a]], &box))
					reach[nreach++] = frame->active[a];
			if (nreach == 0)
				continue;
			if (*nstackp == *maxstackp)
			{
				*maxstackp *= 2;
				*stackp = repalloc(*stackp, *maxstackp * sizeof(BatchFrame));
			}
			child = &(*stackp)[(*nstackp)++];
			child->page = (PageId) nops->entry_ref(entry, node->level);
			child->level = node->level - 1;
			child->nactive = nreach;
			child->active = palloc(nreach * sizeof(int));
			memcpy(child->active, reach, nreach * sizeof(int));
		}
	}
	tree_free_node(node);
	pfree(frame->active);
}

void
tree_search_batch(StructIndex *idx, const SearchSpec *specs, int nspecs)
{
	int			maxstack = 64;
	int			nstack = 0;
	BatchFrame *stack;
	int		   *reach;
	LeafScratch scratch;

	if (nspecs <= 0)
		return;
	/* a tree has at least its root leaf; tree_read_root reports otherwise */
	if (idx->ns->meta->height == 0)
		(void) tree_read_root(idx);
	stack = palloc(maxstack * sizeof(BatchFrame));
	reach = palloc(nspecs * sizeof(int));
	scratch.max = 64;
	scratch.ids = palloc(scratch.max * sizeof(int64));
	scratch.boxes = palloc(scratch.max * sizeof(Mbr));

	stack[0].page = idx->ns->meta->root;
	stack[0].level = idx->ns->meta->height - 1;
	stack[0].nactive = nspecs;
	stack[0].active = palloc(nspecs * sizeof(int));
	for (int q = 0; q < nspecs; q++)
		stack[0].active[q] = q;
	nstack = 1;

	while (nstack > 0)
	{
		BatchFrame	group[BATCH_READ_GROUP];
		PageId		pages[BATCH_READ_GROUP];
		TreeNode   *nodes[BATCH_READ_GROUP];
		int			ngroup = 0;
		uint16		level = stack[nstack - 1].level;

		CHECK_FOR_INTERRUPTS();
		while (nstack > 0 && ngroup < BATCH_READ_GROUP &&
			   stack[nstack - 1].level == level)
		{
			group[ngroup] = stack[--nstack];
			pages[ngroup] = group[ngroup].page;
			ngroup++;
		}
		tree_read_nodes(idx, pages, ngroup, level, nodes);

		/*
		 * Leaves emit answers: visit them in stack order.  Internal nodes
		 * only push: visit them last to first, so that the children of the
		 * first are on top, as if each had been visited alone.
		 */
		for (int g = 0; g < ngroup; g++)
		{
			int			k = level == 0 ? g : ngroup - 1 - g;

			visit_node(idx, specs, &group[k], nodes[k], reach, &scratch,
					   &stack, &nstack, &maxstack);
		}
	}
	pfree(stack);
	pfree(reach);
	pfree(scratch.ids);
	pfree(scratch.boxes);
}
