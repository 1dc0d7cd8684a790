/*-------------------------------------------------------------------------
 *
 * xbrtree_split.c
 *	  Splitting overflowing xBR+-tree nodes by quadrant subdivision.
 *
 * Leaf split (Fevgas 2019 §3.6, efind-fast-xbr-and-peers §3, Carniel et
 * al. 2018 §3.1): the leaf's quadrant is subdivided quadtree-style, descending
 * each time into the sub-quadrant holding the most points, until the
 * sub-quadrant holding at most half of them; of the sub-quadrants met,
 * the one whose point count is closest to half (the most balanced split;
 * ties: the larger quadrant) becomes the region of a new leaf, which takes
 * its points.  The old leaf keeps its region minus the new quadrant.
 *
 * Internal split (same sources: "choose a sub-quadrant whose contained
 * entries form a balanced partition; entries whose regions enclose the
 * split quadrant stay"): the entries whose quadrants lie inside the chosen
 * quadrant move to a new node.  A quadrant strictly inside an entry's
 * quadrant is only a candidate when it is itself an entry's quadrant:
 * otherwise the enclosing entry would keep points that point location
 * then sends to the new node.  Candidates are the sub-quadrants met by
 * the same densest-child descent as for leaves and the quadrants of the
 * node's entries; the one whose entry count is closest to half wins (ties:
 * the descent's, then the first in address order).  The precise candidate
 * set is festival's design: the notes do not give the paper's.
 *
 * The split node keeps its page (written as REPLACE), the new node gets a
 * new page (NEW); the caller adds the new quadrant to the parent.
 *
 * IDENTIFICATION
 *	  src/index/xbrtree_split.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/xbrtree.h"

/* A candidate is better when its count is closer to half of n. */
static bool
more_balanced(int64 n, int64 count, int64 best_count)
{
	return best_count < 0 || Abs(n - 2 * count) < Abs(n - 2 * best_count);
}

TreeNode *
xbr_split_leaf(StructIndex *idx, TreeNode *leaf, XbrAddr region, XbrAddr *new_addr)
{
	XbrState   *st = (XbrState *) idx->state;
	int			n = leaf->nentries;
	XbrAddr    *addr = palloc(n * sizeof(XbrAddr));
	XbrLeafEntry *e = XbrLeafEntries(leaf);
	XbrAddr		cur = region;
	int64		best_count = -1;
	XbrAddr		best = {0, 0};
	TreeNode   *sibling;
	int			kept = 0;
	int64		start = fest_now_ns();

	for (int i = 0; i < n; i++)
		addr[i] = xbr_leaf_entry_addr(st, &e[i]);

	while (cur.len < XBR_MAX_DEPTH)
	{
		int			count[4] = {0, 0, 0, 0};
		int			densest = 0;

		for (int i = 0; i < n; i++)
			if (xbr_addr_contains(cur, addr[i]))
				count[xbr_addr_digit(addr[i], cur.len)]++;
		for (int d = 1; d < 4; d++)
			if (count[d] > count[densest])
				densest = d;
		if (count[densest] < n && more_balanced(n, count[densest], best_count))
		{
			best_count = count[densest];
			best = xbr_addr_child(cur, densest);
		}
		/* deeper quadrants only hold fewer points */
		if (2 * count[densest] <= n)
			break;
		cur = xbr_addr_child(cur, densest);
	}
	if (best_count < 0)
	{
		Mbr			cell;

		xbr_quadrant_box(st, addr[0], &cell);
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("more than %u points of index \"%s\" lie in one cell of its quadtree",
						st->leaf_max, idx->name),
				 errdetail("The xBR+-tree divides the extent at most %d times; the points near (%g %g) share the cell [%g, %g, %g, %g] and cannot be split into two leaves.",
						   XBR_MAX_DEPTH, e[0].x, e[0].y, cell.xmin, cell.ymin, cell.xmax, cell.ymax),
				 errhint("Use a larger page_size (more points per leaf), or another structure for data with many copies of one point.")));
	}

	sibling = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);
	for (int i = 0; i < n; i++)
	{
		if (xbr_addr_contains(best, addr[i]))
			XbrLeafEntries(sibling)[sibling->nentries++] = e[i];
		else
			e[kept++] = e[i];
	}
	leaf->nentries = kept;
	memset(leaf->entries + (size_t) kept * leaf->entry_size, 0,
		   (size_t) (n - kept) * leaf->entry_size);
	*new_addr = best;

	idx->stats->splits_leaf++;
	idx->stats->split_ns += fest_now_ns() - start;
	ns_write(idx->ns, leaf, NS_WRITE_REPLACE);
	ns_write(idx->ns, sibling, NS_WRITE_NEW);
	pfree(addr);
	return sibling;
}

/*
 * The number of entries inside quadrant q, and
 * whether q may be split off: no entry strictly encloses q unless q is an
 * entry's quadrant.
 */
static int
count_inside(const TreeNode *node, XbrAddr q, bool *valid)
{
	const XbrInternalEntry *e = XbrInternalEntries(node);
	int			count = 0;
	bool		is_entry = false;
	bool		enclosed = false;

	for (uint32 i = 0; i < node->nentries; i++)
	{
		XbrAddr		a = xbr_entry_addr(&e[i]);

		if (xbr_addr_contains(q, a))
		{
			count++;
			if (xbr_addr_equal(a, q))
				is_entry = true;
		}
		else if (xbr_addr_contains(a, q))
			enclosed = true;
	}
	*valid = is_entry || !enclosed;
	return count;
}

TreeNode *
xbr_split_internal(StructIndex *idx, TreeNode *node, XbrAddr quadrant, XbrAddr *new_addr)
{
	XbrInternalEntry *e = XbrInternalEntries(node);
	int			n = node->nentries;
	XbrAddr		cur = quadrant;
	int64		best_count = -1;
	XbrAddr		best = {0, 0};
	TreeNode   *sibling;
	int			kept = 0;
	int64		start = fest_now_ns();

	/* the densest-child descent */
	while (cur.len < XBR_MAX_DEPTH)
	{
		int			count[4];
		int			densest = 0;
		bool		valid;
		XbrAddr		child;

		for (int d = 0; d < 4; d++)
			count[d] = count_inside(node, xbr_addr_child(cur, d), &valid);
		for (int d = 1; d < 4; d++)
			if (count[d] > count[densest])
				densest = d;
		if (count[densest] == 0)
			break;
		child = xbr_addr_child(cur, densest);
		count_inside(node, child, &valid);
		if (valid && count[densest] < n && more_balanced(n, count[densest], best_count))
		{
			best_count = count[densest];
			best = child;
		}
		if (2 * count[densest] <= n)
			break;
		cur = child;
	}

	/* the entries' own quadrants */
	for (int i = 0; i < n; i++)
	{
		XbrAddr		a = xbr_entry_addr(&e[i]);
		bool		valid;
		int			count = count_inside(node, a, &valid);

		if (count < n && more_balanced(n, count, best_count))
		{
			best_count = count;
			best = a;
		}
	}
	/* the last entry in address order always qualifies (count 1) */
	Assert(best_count > 0);

	sibling = ns_new_node(idx->ns, ns_alloc(idx->ns, node->level), node->level);
	for (int i = 0; i < n; i++)
	{
		if (xbr_addr_contains(best, xbr_entry_addr(&e[i])))
			XbrInternalEntries(sibling)[sibling->nentries++] = e[i];
		else
			e[kept++] = e[i];
	}
	node->nentries = kept;
	memset(node->entries + (size_t) kept * node->entry_size, 0,
		   (size_t) (n - kept) * node->entry_size);
	xbr_set_flags(node);
	xbr_set_flags(sibling);
	*new_addr = best;

	idx->stats->splits_internal++;
	idx->stats->split_ns += fest_now_ns() - start;
	ns_write(idx->ns, node, NS_WRITE_REPLACE);
	ns_write(idx->ns, sibling, NS_WRITE_NEW);
	return sibling;
}
