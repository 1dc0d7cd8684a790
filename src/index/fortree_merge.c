/*-------------------------------------------------------------------------
 *
 * fortree_merge.c
 *	  The FOR-tree's merge-back, deletion and the condensing they share.
 *
 * Merge-back (Jin et al. 2015, Alg. 1).  A group of a P-node and k O-nodes
 * whose accesses reached floor((5k - 1) / 2) * y / x (fortree.c) is split:
 * its entries are distributed over new nodes that reuse its pages, each
 * node a group of its own, so that the parent's entries for them are
 * ordinary R-tree entries again.  The paper reuses the O-nodes' pages ("the
 * same amount of flash memory space as traditional R-tree, or even less"):
 * the k + 1 pages keep their entries in the parent when each node can
 * still hold at least m entries, which after insertions alone it always
 * can (the P-node and all O-nodes but the last are full); after deletions
 * fewer nodes are made and the pages left over are freed.  How the paper
 * distributes the entries is not in our sources (FESTIval fills the P-node
 * in entry order, then the next page, which leaves nodes spatially
 * scattered); festival sorts them along the longer side of the group's
 * rectangle by their centres and cuts the sequence into nodes of equal
 * size (the first stage of the sort-tile-recursive packing, Leutenegger et
 * al. 1997), so a merge-back of one O-node is a median split.  At internal
 * levels the entries of one child group move together (they must stay in
 * one logical node); when that leaves a node outside [m, M], the
 * merge-back is skipped and its counter starts again.
 *
 * Deletion (Guttman 1984, section 3.3, over groups).  FindLeaf searches
 * every group whose rectangle covers the entry's; CondenseTree then, from
 * the leaf group up: frees pages a deletion emptied (a P-node's successor
 * is the group's next page, whose page becomes the group's name), packs a
 * group below m entries into one page, dissolves a single page below m
 * (its entries are inserted again at their level, a child group's entries
 * together) unless it is all the root holds, and tightens the group's
 * rectangle in its parent.  A root left with one entry is replaced by its
 * child.
 *
 * IDENTIFICATION
 *	  src/index/fortree_merge.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/fortree.h"

#include <math.h>

/* ---- merge-back ---- */

/* Accesses after which a group with k O-nodes is merged back. */
double
ft_merge_threshold(const FtState *st, int k)
{
	return floor((5.0 * k - 1.0) / 2.0) * st->write_cost / st->read_cost;
}

bool
ft_merge_due(FtState *st, const FtGroup *g)
{
	int			k = g->npages - 1;

	return k >= 1 && (double) ft_counter_get(st, g->tag) >= ft_merge_threshold(st, k);
}

/* Entries of one child group (or one leaf entry): they move together. */
typedef struct FtUnit
{
	double		key;			/* centre on the axis of the cut */
	int64		ident;			/* object id or group, for ties */
	int			first;			/* into the entries array */
	int			count;
} FtUnit;

static int
compare_units(const void *a, const void *b)
{
	const FtUnit *ua = a;
	const FtUnit *ub = b;

	if (ua->key != ub->key)
		return ua->key < ub->key ? -1 : 1;
	if (ua->ident != ub->ident)
		return ua->ident < ub->ident ? -1 : 1;
	return ua->first - ub->first;
}

/* Internal entries ordered by (group, child): a child group is a run. */
static int
compare_by_group(const void *a, const void *b)
{
	const FtInternalEntry *ea = a;
	const FtInternalEntry *eb = b;

	if (ea->group != eb->group)
		return ea->group < eb->group ? -1 : 1;
	return ea->child < eb->child ? -1 : (ea->child > eb->child ? 1 : 0);
}

/*
 * Cut n entries (of entry_size bytes, in entries) into nparts nodes along
 * the longer side of box: part[u] for each unit.  False when a node would
 * fall outside [min, max].
 */
static bool
partition(char *entries, int n, uint32 entry_size, uint16 level, const Mbr *box,
		  int nparts, uint32 min, uint32 max, FtUnit **units_out, int *nunits_out,
		  int **part_out)
{
	int			axis = (box->xmax - box->xmin) >= (box->ymax - box->ymin) ? 0 : 1;
	FtUnit	   *units = palloc(sizeof(FtUnit) * n);
	int		   *part;
	int			nunits = 0;
	int			p = 0;
	int64		cum = 0;
	int64	   *sizes = palloc0(sizeof(int64) * nparts);

	if (level > 0)
		qsort(entries, n, entry_size, compare_by_group);
	for (int i = 0; i < n; i++)
	{
		const Mbr  *b = (const Mbr *) (entries + (size_t) i * entry_size);
		int64		ident = level == 0 ? ((const FtLeafEntry *) b)->id
			: ((const FtInternalEntry *) b)->group;

		if (level > 0 && nunits > 0 && units[nunits - 1].ident == ident)
		{
			units[nunits - 1].count++;
			continue;
		}
		units[nunits].key = (mbr_low(b, axis) + mbr_high(b, axis)) / 2.0;
		units[nunits].ident = ident;
		units[nunits].first = i;
		units[nunits].count = 1;
		nunits++;
	}
	qsort(units, nunits, sizeof(FtUnit), compare_units);

	part = palloc(sizeof(int) * nunits);
	for (int u = 0; u < nunits; u++)
	{
		/* node p ends where (p + 1) / nparts of the entries do */
		while (p < nparts - 1 && cum >= (int64) (p + 1) * n / nparts)
			p++;
		part[u] = p;
		sizes[p] += units[u].count;
		cum += units[u].count;
	}
	*units_out = units;
	*nunits_out = nunits;
	*part_out = part;
	for (int i = 0; i < nparts; i++)
		if (sizes[i] < min || sizes[i] > max)
			return false;
	return true;
}

/* Find the slot of page child in the parent group's pages. */
static bool
find_slot(const FtGroup *parent, PageId child, int *page_index, uint32 *slot)
{
	for (int i = 0; i < parent->npages; i++)
	{
		const FtInternalEntry *e = FtInternalEntries(parent->pages[i]);

		for (uint32 j = 0; j < parent->pages[i]->nentries; j++)
			if ((PageId) e[j].child == child)
			{
				*page_index = i;
				*slot = j;
				return true;
			}
	}
	return false;
}

static void
remove_parent_slot(FtOp *op, FtGroup *parent, PageId child)
{
	int			i;
	uint32		slot;

	if (!find_slot(parent, child, &i, &slot))
		elog(ERROR, "index \"%s\": no entry for page " UINT64_FORMAT " in its parent",
			 op->idx->name, child);
	ft_remove_slot(parent->pages[i], slot);
	ft_dirty(op, parent->pages[i]);
}

/*
 * Merge back the group at path->at[level] (its parent is at level + 1:
 * the root group is never overflowed).
 */
void
ft_merge_back(FtOp *op, FtPath *path, int level)
{
	FtState    *st = op->st;
	FtGroup    *g = path->at[level];
	FtGroup    *parent = path->at[level + 1];
	uint32		entry_size = g->pages[0]->entry_size;
	int			n = (int) ft_group_entries(g);
	int			k = g->npages - 1;
	uint32		min = FtMin(st, level);
	uint32		max = FtMax(st, level);
	int			nparts;
	char	   *entries;
	Mbr			box;
	FtUnit	   *units;
	int			nunits;
	int		   *part;
	int			off = 0;

	Assert(k >= 1 && level < path->top);
	nparts = n >= (k + 1) * (int) min ? k + 1 : Max(1, n / (int) min);
	entries = palloc((size_t) n * entry_size);
	for (int i = 0; i < g->npages; i++)
	{
		memcpy(entries + (size_t) off * entry_size, g->pages[i]->entries,
			   (size_t) g->pages[i]->nentries * entry_size);
		off += g->pages[i]->nentries;
	}
	ft_group_box(g, &box);
	if (!partition(entries, n, entry_size, level, &box, nparts, min, max,
				   &units, &nunits, &part))
	{
		/* child groups too large to balance: try again after as many accesses */
		ft_counter_forget(st, g->tag);
		return;
	}

	/* node i goes to the group's i-th page; the pages left over are freed */
	for (int i = 0; i < nparts; i++)
	{
		g->pages[i]->nentries = 0;
		ft_replaced(op, g->pages[i]);
	}
	for (int u = 0; u < nunits; u++)
	{
		TreeNode   *node = g->pages[part[u]];

		memcpy(NodeEntry(node, node->nentries),
			   entries + (size_t) units[u].first * entry_size,
			   (size_t) units[u].count * entry_size);
		node->nentries += units[u].count;
	}
	for (int i = 0; i < parent->npages; i++)
	{
		TreeNode   *pp = parent->pages[i];
		FtInternalEntry *e = FtInternalEntries(pp);

		for (int j = (int) pp->nentries - 1; j >= 0; j--)
		{
			int			at = -1;

			if ((PageId) e[j].group != g->tag)
				continue;
			for (int q = 0; q < g->npages && at < 0; q++)
				if (g->pages[q]->page == (PageId) e[j].child)
					at = q;
			Assert(at >= 0);
			if (at < nparts)
			{
				Mbr			nb;

				mbr_set_empty(&nb);
				for (uint32 s = 0; s < g->pages[at]->nentries; s++)
					mbr_extend(&nb, ft_entry_box(g->pages[at], s));
				e[j].box = nb;
				e[j].group = e[j].child;
			}
			else
				ft_remove_slot(pp, (uint32) j);
			ft_dirty(op, pp);
		}
	}
	for (int i = nparts; i < g->npages; i++)
		ft_release(op, g->pages[i]);
	ft_counter_forget(st, g->tag);
	op->idx->stats->merge_backs++;
	path->at[level] = NULL;

	if (nparts < k + 1)
	{
		/* the parent lost entries */
		parent->changed = true;
		ft_condense(op, path, level + 1);
	}
}

/* ---- condensing ---- */

static void
add_orphan(FtOp *op, const void *entry, uint32 entry_size, uint16 level)
{
	if (op->norphans == op->maxorphans)
	{
		op->maxorphans = Max(64, 2 * op->maxorphans);
		op->orphans = op->orphans
			? repalloc(op->orphans, sizeof(FtAnyEntry) * op->maxorphans)
			: palloc(sizeof(FtAnyEntry) * op->maxorphans);
		op->orphan_levels = op->orphan_levels
			? repalloc(op->orphan_levels, sizeof(uint16) * op->maxorphans)
			: palloc(sizeof(uint16) * op->maxorphans);
	}
	memset(&op->orphans[op->norphans], 0, sizeof(FtAnyEntry));
	memcpy(&op->orphans[op->norphans], entry, entry_size);
	op->orphan_levels[op->norphans] = level;
	op->norphans++;
}

/* Drop page i of g from the group (its parent entry goes too). */
static void
drop_page(FtOp *op, FtGroup *parent, FtGroup *g, int i)
{
	TreeNode   *page = g->pages[i];

	remove_parent_slot(op, parent, page->page);
	ft_release(op, page);
	memmove(&g->pages[i], &g->pages[i + 1], sizeof(TreeNode *) * (g->npages - i - 1));
	g->npages--;
	if (i == 0 && g->npages > 0)
	{
		/* the P-node is gone: the next page names the group */
		PageId		tag = g->pages[0]->page;

		for (int p = 0; p < parent->npages; p++)
		{
			FtInternalEntry *e = FtInternalEntries(parent->pages[p]);

			for (uint32 j = 0; j < parent->pages[p]->nentries; j++)
				if ((PageId) e[j].group == g->tag)
				{
					e[j].group = (int64) tag;
					ft_dirty(op, parent->pages[p]);
				}
		}
		ft_counter_move(op->st, g->tag, tag);
		g->tag = tag;
	}
	if (g->npages < 2)
		ft_counter_forget(op->st, g->tag);
}

/*
 * CondenseTree from the group at path->at[level], which lost entries or
 * whose rectangle may have shrunk, up to the root's children.  Dissolved
 * groups' entries wait in op->orphans (ft_settle).
 */
void
ft_condense(FtOp *op, FtPath *path, int level)
{
	FtState    *st = op->st;

	for (int l = level; l < path->top; l++)
	{
		FtGroup    *g = path->at[l];
		FtGroup    *parent = path->at[l + 1];
		uint32		n;
		Mbr			box;

		if (g == NULL || !g->changed)
			break;
		g->changed = false;

		/* pages a deletion emptied */
		for (int i = g->npages - 1; i >= 0 && g->npages > 1; i--)
			if (g->pages[i]->nentries == 0)
			{
				drop_page(op, parent, g, i);
				parent->changed = true;
			}

		n = ft_group_entries(g);
		if (n < FtMin(st, l) && g->npages > 1)
		{
			/* fewer than m entries fit one page */
			TreeNode   *p = g->pages[0];

			while (g->npages > 1)
			{
				TreeNode   *o = g->pages[1];

				memcpy(NodeEntry(p, p->nentries), o->entries,
					   (size_t) o->nentries * o->entry_size);
				p->nentries += o->nentries;
				o->nentries = 0;
				ft_dirty(op, p);
				drop_page(op, parent, g, 1);
			}
			parent->changed = true;
		}
		if (n < FtMin(st, l) &&
			!(l + 1 == path->top && ft_group_entries(parent) == 1))
		{
			/* CT3: dissolve the node, keep its entries */
			TreeNode   *p = g->pages[0];

			Assert(g->npages == 1);
			for (uint32 j = 0; j < p->nentries; j++)
				add_orphan(op, NodeEntry(p, j), p->entry_size, (uint16) l);
			remove_parent_slot(op, parent, p->page);
			ft_release(op, p);
			ft_counter_forget(st, g->tag);
			path->at[l] = NULL;
			parent->changed = true;
			continue;
		}

		/* CT4: tighten the group's rectangle */
		ft_group_box(g, &box);
		if (!mbr_is_empty(&box))
		{
			for (int i = 0; i < parent->npages; i++)
			{
				FtInternalEntry *e = FtInternalEntries(parent->pages[i]);

				for (uint32 j = 0; j < parent->pages[i]->nentries; j++)
					if ((PageId) e[j].group == g->tag && !mbr_equals(&e[j].box, &box))
					{
						e[j].box = box;
						ft_dirty(op, parent->pages[i]);
						parent->changed = true;
					}
			}
		}
	}
}

static int
compare_orphans(const void *a, const void *b, void *arg)
{
	const FtOp *op = arg;
	int			ia = *(const int *) a;
	int			ib = *(const int *) b;
	uint16		la = op->orphan_levels[ia];
	uint16		lb = op->orphan_levels[ib];

	if (la != lb)
		return la > lb ? -1 : 1;	/* higher levels first */
	if (la > 0 && op->orphans[ia].internal.group != op->orphans[ib].internal.group)
		return op->orphans[ia].internal.group < op->orphans[ib].internal.group ? -1 : 1;
	return ia - ib;
}

/*
 * After a modification: insert the orphans again (CT6), a child group's
 * entries together, then shorten the tree while the root has one entry
 * (D4).
 */
void
ft_settle(FtOp *op)
{
	while (op->norphans > 0)
	{
		int			n = op->norphans;
		FtAnyEntry *orphans = op->orphans;
		uint16	   *levels = op->orphan_levels;
		int		   *order = palloc(sizeof(int) * n);
		FtAnyEntry *unit = palloc(sizeof(FtAnyEntry) * n);

		for (int i = 0; i < n; i++)
			order[i] = i;
		qsort_arg(order, n, sizeof(int), compare_orphans, op);
		op->orphans = NULL;
		op->orphan_levels = NULL;
		op->norphans = 0;
		op->maxorphans = 0;
		for (int i = 0; i < n;)
		{
			int			j = i + 1;
			uint16		level = levels[order[i]];

			unit[0] = orphans[order[i]];
			while (j < n && level > 0 && levels[order[j]] == level &&
				   orphans[order[j]].internal.group == unit[0].internal.group)
			{
				unit[j - i] = orphans[order[j]];
				j++;
			}
			ft_insert_at(op, &unit[0], level, &unit[1], j - i - 1);
			op->idx->stats->reinserted_entries += j - i;
			i = j;
		}
		pfree(order);
		pfree(unit);
		pfree(orphans);
		pfree(levels);
	}

	for (;;)
	{
		FestMeta   *meta = op->idx->ns->meta;
		TreeNode   *root = ft_get(op, meta->root, meta->height - 1);
		PageId		child;

		if (root->level == 0 || root->nentries != 1)
			break;
		child = (PageId) FtInternalEntries(root)[0].child;
		Assert((PageId) FtInternalEntries(root)[0].group == child);
		ft_release(op, root);
		ns_set_root(op->idx->ns, child, meta->height - 1);
	}
}

/* ---- deletion ---- */

/*
 * FindLeaf over groups: depth first through every group whose rectangle
 * covers box.  On success path->at[0..level] lead to the leaf group and
 * *page_index, *slot name the entry.
 */
static bool
find_entry(FtOp *op, FtPath *path, int level, int64 id, const Mbr *box,
		   int *page_index, uint32 *slot)
{
	FtGroup    *g = path->at[level];
	PageId	   *tried;
	int			ntried = 0;

	for (int i = 0; i < g->npages; i++)
		op->idx->stats->entries_examined += g->pages[i]->nentries;
	if (level == 0)
	{
		for (int i = 0; i < g->npages; i++)
		{
			const FtLeafEntry *e = FtLeafEntries(g->pages[i]);

			for (uint32 j = 0; j < g->pages[i]->nentries; j++)
				if (e[j].id == id && mbr_equals(&e[j].box, box))
				{
					*page_index = i;
					*slot = j;
					return true;
				}
		}
		return false;
	}

	tried = palloc(sizeof(PageId) * Max(1, ft_group_entries(g)));
	for (int i = 0; i < g->npages; i++)
	{
		for (uint32 j = 0; j < g->pages[i]->nentries; j++)
		{
			const FtInternalEntry *e = &FtInternalEntries(g->pages[i])[j];
			bool		seen = false;
			FtGroup    *child;

			if (!mbr_contains(&e->box, box))
				continue;
			for (int t = 0; t < ntried && !seen; t++)
				seen = tried[t] == (PageId) e->group;
			if (seen)
				continue;
			tried[ntried++] = (PageId) e->group;
			child = ft_child_group(op, g, (PageId) e->group);
			ft_count_access(op, child, level - 1 == 0);
			path->at[level - 1] = child;
			if (find_entry(op, path, level - 1, id, box, page_index, slot))
				return true;
		}
	}
	pfree(tried);
	return false;
}

/*
 * FindLeaf from the root in a fresh modification: the path to the leaf
 * group holding (id, box), or NULL.
 */
static FtPath *
locate(FtOp *op, StructIndex *idx, int64 id, const Mbr *box, int *page_index,
	   uint32 *slot)
{
	FtPath	   *path = palloc0(sizeof(FtPath));

	ft_op_begin(op, idx);
	path->top = idx->ns->meta->height - 1;
	path->at[path->top] = ft_root_group(op);
	if (!find_entry(op, path, path->top, id, box, page_index, slot))
		return NULL;
	return path;
}

bool
ft_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	FtOp		op;
	FtPath	   *path;
	int			page_index;
	uint32		slot;
	TreeNode   *leaf;

	path = locate(&op, idx, id, box, &page_index, &slot);
	if (path == NULL)
		return false;
	leaf = path->at[0]->pages[page_index];
	ft_remove_slot(leaf, slot);
	ft_dirty(&op, leaf);
	path->at[0]->changed = true;
	ft_condense(&op, path, 0);
	ft_settle(&op);
	ft_op_finish(&op);
	return true;
}

bool
ft_contains(StructIndex *idx, int64 id, const Mbr *box)
{
	FtOp		op;
	int			page_index;
	uint32		slot;

	return locate(&op, idx, id, box, &page_index, &slot) != NULL;
}
