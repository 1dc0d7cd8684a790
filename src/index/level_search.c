/*-------------------------------------------------------------------------
 *
 * level_search.c
 *	  The window search a level at a time: every tree's P-RQ.
 *
 * Fevgas 2019 (doctoral thesis, University of Thessaly), §3.5.1, batches
 * a grid file's window query (P-RQ, Alg. 6): the pages a window needs are
 * gathered first and read with one submission each group, so that an SSD
 * serves them in parallel instead of one queue-depth-1 read after the
 * other.  The same idea serves every tree whose internal entries bound
 * their subtrees (the traversal contract, structure.h: R-tree, R*-tree,
 * Hilbert R-tree, xBR+-tree): the children of one level that a window
 * reaches are all known once their parents are examined, so they are read
 * together, in batches of at most `batch` pages (the device's queue depth,
 * set by the SQL layer when the operation begins), each one ns_read_many
 * (one submission under libaio and io_uring; the node stores serve from
 * their buffers and caches first and read only the rest).
 *
 * What it keeps from the depth-first search (traverse.c): the root is
 * read and tested the same way (tree_search_root), and a node is read
 * exactly when its parent's entry passes predicate_descend, so both read
 * the same nodes, each once, examine the same entries and emit the same
 * leaf entries; only the order changes (a level at a time, each level in
 * its parents' entry order).  nodes_visited, entries_examined and
 * reads_per_level are therefore equal, and so is pages_read unless a page
 * cache or eFIND's read buffer evicts during the search (the order of
 * accesses then decides which of them hit: docs/measurements.md).  Memory:
 * the next level's page numbers (8 bytes a node) and one batch of nodes.
 *
 * IDENTIFICATION
 *	  src/index/level_search.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/structure.h"

#include "miscadmin.h"

void
tree_search_levels(StructIndex *idx, const SearchSpec *spec, int batch)
{
	RootRead	root;
	uint32		ntest;
	TreeNode   *node;
	uint16		level;
	PageList	cur = {0};
	PageList	next = {0};
	TreeNode  **nodes;

	Assert(batch > 0);
	node = tree_search_root(idx, spec, &root, &ntest);
	level = node->level;
	/* the root's children that the window reaches, in entry order */
	tree_visit_entries(idx, spec, node, ntest, &next);
	if (!root.shared)
		tree_free_node(node);
	if (next.n == 0)
	{
		page_list_free(&next);
		return;
	}

	nodes = palloc(batch * sizeof(TreeNode *));
	while (next.n > 0)
	{
		PageList	swap = cur;

		Assert(level > 0);
		level--;
		cur = next;
		next = swap;
		next.n = 0;

		for (int first = 0; first < cur.n; first += batch)
		{
			int			n = Min(batch, cur.n - first);

			CHECK_FOR_INTERRUPTS();
			tree_read_nodes(idx, cur.pages + first, n, level, nodes);
			for (int i = 0; i < n; i++)
			{
				tree_examine_node(idx, nodes[i], level);
				tree_visit_entries(idx, spec, nodes[i], nodes[i]->nentries, &next);
				tree_free_node(nodes[i]);
			}
		}
	}
	pfree(nodes);
	page_list_free(&cur);
	page_list_free(&next);
}
