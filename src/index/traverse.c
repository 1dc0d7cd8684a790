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
 * The window search: depth-first one node at a time, or a level at a
 * time in batches (level_search.c) as the operation was told when it
 * began (StructIndex.window_batch).  Both read the same nodes, examine the
 * same entries and emit the same leaf entries, in another order.
 */
void
tree_search(StructIndex *idx, const SearchSpec *spec)
{
	if (idx->window_batch > 0)
		tree_search_levels(idx, spec, idx->window_batch);
	else
		tree_search_depth_first(idx, spec);
}

/*
 * The first node of a window search, the root, read with ns_read_root,
 * which may hand out the store's decoded copy (root->shared: not freed by
 * the caller), with the union of its entries' rectangles.
 * predicate_descend is monotone in the box (every level of the tree relies
 * on it: a parent's entry covers its child's entries), so a window that
 * fails the union of an internal root's entries fails each of them: one
 * test decides them all, and they count as examined as when they are
 * tested one by one (entries_examined does not change).  This is what
 * makes a window outside the data cost almost nothing.  Returns the root;
 * *ntest is how many of its entries the search tests.
 */
TreeNode *
tree_search_root(StructIndex *idx, const SearchSpec *spec, RootRead *root,
				 uint32 *ntest)
{
	uint16		level = idx->ns->meta->height - 1;
	TreeNode   *node;

	memset(root, 0, sizeof(RootRead));
	/* a logical leaf (read_leaves) is no page: it is read as any node */
	if (!(level == 0 && idx->ops != NULL && idx->ops->read_leaves != NULL))
	{
		ns_read_root(idx->ns, root);
		node = root->node;
	}
	else
		node = tree_read_node(idx, (int64) idx->ns->meta->root, level);
	tree_examine_node(idx, node, level);

	*ntest = node->nentries;
	if (root->has_bounds && node->level > 0 &&
		!predicate_descend(spec, &root->bounds))
		*ntest = 0;
	return node;
}

/*
 * A node a window search has read where it expected one at level: refuse
 * another level (a damaged tree), and count its entries as examined.
 */
void
tree_examine_node(StructIndex *idx, const TreeNode *node, uint16 level)
{
	if (node->level != level)
		tree_report_bad_level(idx, node, level);
	idx->stats->entries_examined += node->nentries;
}

/*
 * Examine the first ntest entries of a node for a window search: emit the
 * leaf entries the filter passes, or append the children the window
 * reaches to out (their level with them when out keeps levels).
 */
void
tree_visit_entries(StructIndex *idx, const SearchSpec *spec, const TreeNode *node,
				   uint32 ntest, PageList *out)
{
	const NodeOps *nops = idx->ns->node_ops;

	for (uint32 i = 0; i < ntest; i++)
	{
		const void *entry = NodeEntry(node, i);
		Mbr			box;

		nops->entry_mbr(entry, node->level, &box);
		if (node->level == 0)
			tree_filter_leaf_entry(spec, nops->entry_ref(entry, 0), &box);
		else if (predicate_descend(spec, &box))
		{
			if (out->n == out->max)
				page_list_grow(out);
			out->pages[out->n] = (PageId) nops->entry_ref(entry, node->level);
			if (out->levels != NULL)
				out->levels[out->n] = node->level - 1;
			out->n++;
		}
	}
}

/*
 * Double a PageList's room.  Arrays the caller gave (on the C stack) are
 * copied to palloc'd memory, so a search that stays within them allocates
 * nothing and leaves the operation's memory context untouched, whose reset
 * is then free.
 */
void
page_list_grow(PageList *list)
{
	int			max = Max(list->max * 2, 16);

	if (!list->palloced)
	{
		PageId	   *pages = palloc(max * sizeof(PageId));
		uint16	   *levels = list->levels ? palloc(max * sizeof(uint16)) : NULL;

		if (list->n > 0)
			memcpy(pages, list->pages, list->n * sizeof(PageId));
		if (levels != NULL && list->n > 0)
			memcpy(levels, list->levels, list->n * sizeof(uint16));
		list->pages = pages;
		list->levels = levels;
		list->palloced = true;
	}
	else
	{
		list->pages = repalloc(list->pages, max * sizeof(PageId));
		if (list->levels != NULL)
			list->levels = repalloc(list->levels, max * sizeof(uint16));
	}
	list->max = max;
}

void
page_list_free(PageList *list)
{
	if (list->palloced)
	{
		pfree(list->pages);
		if (list->levels != NULL)
			pfree(list->levels);
	}
}

/*
 * Depth-first window search with an explicit stack of pages, from the
 * root tree_search_root reads.
 */
void
tree_search_depth_first(StructIndex *idx, const SearchSpec *spec)
{
	/* the stack starts on the C stack (page_list_grow) */
	PageId		stack_start[64];
	uint16		levels_start[64];
	PageList	stack = {stack_start, levels_start, 0, lengthof(stack_start), false};
	bool		at_root = true;

	stack.pages[0] = idx->ns->meta->root;
	stack.levels[0] = idx->ns->meta->height - 1;
	stack.n = 1;

	while (stack.n > 0)
	{
		TreeNode   *node;
		RootRead	root;
		uint32		ntest;

		stack.n--;
		if (at_root)
		{
			Assert(stack.pages[stack.n] == idx->ns->meta->root);
			node = tree_search_root(idx, spec, &root, &ntest);
			at_root = false;
		}
		else
		{
			uint16		level = stack.levels[stack.n];

			root.shared = false;
			node = tree_read_node(idx, (int64) stack.pages[stack.n], level);
			tree_examine_node(idx, node, level);
			ntest = node->nentries;
		}
		tree_visit_entries(idx, spec, node, ntest, &stack);
		if (!root.shared)
			tree_free_node(node);
	}
	page_list_free(&stack);
}
