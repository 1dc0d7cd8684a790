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
 * IDENTIFICATION
 *	  src/index/batch_search.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/batch_search.h"

#include "miscadmin.h"

/* A node to visit and the queries that reach it. */
typedef struct BatchFrame
{
	PageId		page;
	uint16		level;
	int			nactive;
	int		   *active;			/* indexes into specs, increasing */
} BatchFrame;

static void
batch_leaf_entry(const SearchSpec *spec, int64 id, const Mbr *box)
{
	FilterVerdict verdict;

	if (spec->exact_points)
		verdict = predicate_eval_point(spec->predicate, spec->shape,
									   &spec->query, box->xmin, box->ymin)
			? FILTER_ACCEPT : FILTER_REJECT;
	else
		verdict = predicate_filter(spec, box);
	if (verdict != FILTER_REJECT)
		spec->emit(spec->arg, id, box, verdict);
}

void
tree_search_batch(StructIndex *idx, const SearchSpec *specs, int nspecs)
{
	const NodeOps *nops = idx->ns->node_ops;
	int			maxstack = 64;
	int			nstack = 0;
	BatchFrame *stack;
	int		   *reach;

	if (nspecs <= 0)
		return;
	/* a tree has at least its root leaf; tree_read_root reports otherwise */
	if (idx->ns->meta->height == 0)
		(void) tree_read_root(idx);
	stack = palloc(maxstack * sizeof(BatchFrame));
	reach = palloc(nspecs * sizeof(int));

	stack[0].page = idx->ns->meta->root;
	stack[0].level = idx->ns->meta->height - 1;
	stack[0].nactive = nspecs;
	stack[0].active = palloc(nspecs * sizeof(int));
	for (int q = 0; q < nspecs; q++)
		stack[0].active[q] = q;
	nstack = 1;

	while (nstack > 0)
	{
		BatchFrame	frame = stack[--nstack];
		TreeNode   *node;

		CHECK_FOR_INTERRUPTS();
		node = ns_read(idx->ns, frame.page);
		if (node->level != frame.level)
			tree_report_bad_level(idx, node, frame.level);
		idx->stats->entries_examined += (int64) node->nentries * frame.nactive;

		for (uint32 i = 0; i < node->nentries; i++)
		{
			const void *entry = NodeEntry(node, i);
			Mbr			box;

			nops->entry_mbr(entry, node->level, &box);
			if (node->level == 0)
			{
				int64		id = nops->entry_ref(entry, 0);

				for (int a = 0; a < frame.nactive; a++)
					batch_leaf_entry(&specs[frame.active[a]], id, &box);
			}
			else
			{
				int			nreach = 0;

				for (int a = 0; a < frame.nactive; a++)
					if (predicate_descend(&specs[frame.active[a]], &box))
						reach[nreach++] = frame.active[a];
				if (nreach == 0)
					continue;
				if (nstack == maxstack)
				{
					maxstack *= 2;
					stack = repalloc(stack, maxstack * sizeof(BatchFrame));
				}
				stack[nstack].page = (PageId) nops->entry_ref(entry, node->level);
				stack[nstack].level = node->level - 1;
				stack[nstack].nactive = nreach;
				stack[nstack].active = palloc(nreach * sizeof(int));
				memcpy(stack[nstack].active, reach, nreach * sizeof(int));
				nstack++;
			}
		}
		tree_free_node(node);
		pfree(frame.active);
	}
	pfree(stack);
	pfree(reach);
}
