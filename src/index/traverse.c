/*-------------------------------------------------------------------------
 *
 * traverse.c
 *	  Algorithms every structure shares through the traversal contract
 *	  (structure.h): reading nodes with level checks, and the window search.
 *
 * A structure whose internal entries bound their subtrees needs no search
 * of its own: the depth-first search below asks the structure's NodeOps
 * for each entry's rectangle and reference, so the R-tree family and the
 * xBR+-tree (whose entries carry DBRs) answer through the same code.
 *
 * IDENTIFICATION
 *	  src/index/traverse.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/structure.h"

void
tree_report_bad_level(StructIndex *idx, const TreeNode *node, int expected)
{
	fest_report_corrupt(idx->name, node->page,
						psprintf("The node is at level %u where level %d was expected.",
								 node->level, expected));
}

/*
 * The node a reference at a level stands for: a page, or a leaf the
 * structure assembles (StructureOps.read_leaves).
 */
TreeNode *
tree_read_node(StructIndex *idx, int64 ref, uint16 level)
{
	TreeNode   *node;

	if (level != 0 || idx->ops == NULL || idx->ops->read_leaves == NULL)
		return ns_read(idx->ns, (PageId) ref);
	idx->ops->read_leaves(idx, &ref, 1, &node);
	return node;
}

/* Like tree_read_node for n references of one level, read as one batch. */
void
tree_read_nodes(StructIndex *idx, const PageId *refs, int n, uint16 level,
				TreeNode **out)
{
	if (level != 0 || idx->ops == NULL || idx->ops->read_leaves == NULL)
		ns_read_many(idx->ns, refs, n, out);
	else
		idx->ops->read_leaves(idx, (const int64 *) refs, n, out);
}

static TreeNode *
read_root(StructIndex *idx, bool to_change)
{
	FestMeta   *meta = idx->ns->meta;
	TreeNode   *root = to_change ? ns_read_to_change(idx->ns, meta->root) :
		ns_read(idx->ns, meta->root);

	if (meta->height == 0 || root->level != meta->height - 1)
		tree_report_bad_level(idx, root, (int) meta->height - 1);
	return root;
}

TreeNode *
tree_read_root(StructIndex *idx)
{
	return read_root(idx, false);
}

static TreeNode *
read_child(StructIndex *idx, const TreeNode *parent, int64 child_page, bool to_change)
{
	TreeNode   *child;

	if (to_change && (parent->level != 1 || idx->ops == NULL ||
					  idx->ops->read_leaves == NULL))
		child = ns_read_to_change(idx->ns, (PageId) child_page);
	else
		child = tree_read_node(idx, child_page, parent->level - 1);
	if (child->level != parent->level - 1)
		tree_report_bad_level(idx, child, parent->level - 1);
	return child;
}

TreeNode *
tree_read_child(StructIndex *idx, const TreeNode *parent, int64 child_page)
{
	return read_child(idx, parent, child_page, false);
}

/*
 * The root and a child as above, for an insertion that changes them under
 * the promises of ns_read_to_change (nodestore.h): a store may hand out
 * its own image of the page.
 */
TreeNode *
tree_read_root_to_change(StructIndex *idx)
{
	return read_root(idx, true);
}

TreeNode *
tree_read_child_to_change(StructIndex *idx, const TreeNode *parent, int64 child_page)
{
	return read_child(idx, parent, child_page, true);
}

void
tree_free_node(TreeNode *node)
{
	pfree(node->entries);
	pfree(node);
}

/*
 * A leaf entry (object id, rectangle box) against a search: emitted unless
 * the filter rejects it (decided exactly for points when the search says
 * so).  The window searches (tree_search, batch_search.c, the FOR-tree's)
 * share it.
 */
void
tree_filter_leaf_entry(const SearchSpec *spec, int64 id, const Mbr *box)
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

/*
 * Depth-first window search with an explicit stack of pages.
 *
 * The root is read with ns_read_root, which may hand out the store's
 * decoded copy (not freed here), with the union of its entries'
 * rectangles.  predicate_descend is monotone in the box (every level of
 * the tree relies on it: a parent's entry covers its child's entries), so
 * a window that fails the union of an internal root's entries fails each
 * of them: one test decides them all, and they count as examined as when
 * they are tested one by one (entries_examined does not change).  This is
 * what makes a window outside the data cost almost nothing.
 */
void
tree_search(StructIndex *idx, const SearchSpec *spec)
{
	const NodeOps *nops = idx->ns->node_ops;
	/*
	 * The stack starts on the C stack and moves to palloc'd memory only if
	 * it outgrows it: a search that allocates nothing leaves the
	 * operation's memory context untouched, whose reset is then free.
	 */
	PageId		stack_start[64];
	uint16		levels_start[64];
	int			maxstack = lengthof(stack_start);
	int			nstack = 0;
	PageId	   *stack = stack_start;
	uint16	   *levels = levels_start;
	FestStats  *stats = idx->stats;
	bool		at_root = true;

	stack[nstack] = idx->ns->meta->root;
	levels[nstack] = idx->ns->meta->height - 1;
	nstack++;

	while (nstack > 0)
	{
		TreeNode   *node;
		RootRead	root = {0};
		uint32		ntest;

		nstack--;
		/* a logical leaf (read_leaves) is no page: it is read as any node */
		if (at_root && !(levels[nstack] == 0 && idx->ops != NULL &&
						 idx->ops->read_leaves != NULL))
		{
			Assert(stack[nstack] == idx->ns->meta->root);
			ns_read_root(idx->ns, &root);
			node = root.node;
		}
		else
			node = tree_read_node(idx, (int64) stack[nstack], levels[nstack]);
		at_root = false;
		if (node->level != levels[nstack])
			tree_report_bad_level(idx, node, levels[nstack]);
		stats->entries_examined += node->nentries;

		ntest = node->nentries;
		if (root.has_bounds && node->level > 0 &&
			!predicate_descend(spec, &root.bounds))
			ntest = 0;

		for (uint32 i = 0; i < ntest; i++)
		{
			const void *entry = NodeEntry(node, i);
			Mbr			box;

			nops->entry_mbr(entry, node->level, &box);
			if (node->level == 0)
				tree_filter_leaf_entry(spec, nops->entry_ref(entry, 0), &box);
			else if (predicate_descend(spec, &box))
			{
				if (nstack == maxstack)
				{
					maxstack *= 2;
					if (stack == stack_start)
					{
						stack = palloc(maxstack * sizeof(PageId));
						levels = palloc(maxstack * sizeof(uint16));
						memcpy(stack, stack_start, sizeof(stack_start));
						memcpy(levels, levels_start, sizeof(levels_start));
					}
					else
					{
						stack = repalloc(stack, maxstack * sizeof(PageId));
						levels = repalloc(levels, maxstack * sizeof(uint16));
					}
				}
				stack[nstack] = (PageId) nops->entry_ref(entry, node->level);
				levels[nstack] = node->level - 1;
				nstack++;
			}
		}
		if (!root.shared)
			tree_free_node(node);
	}
	if (stack != stack_start)
	{
		pfree(stack);
		pfree(levels);
	}
}
