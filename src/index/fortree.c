/*-------------------------------------------------------------------------
 *
 * fortree.c
 *	  The FOR-tree (Jin, Xie, Wang and Yue, "Optimizing R-tree for flash
 *	  memory", Expert Systems with Applications 42(10), 2015): insertion
 *	  with overflow nodes, the access counters, the search, the options.
 *
 * Insertion (Jin et al. 2015, ChooseLeaf and AddElement, Alg. 1).  The
 * descent goes from group to group: at each logical node it examines the
 * entries of every page of the group and follows the one of least
 * enlargement, ties by smaller area (Guttman 1984, CL3), into that entry's
 * group, whose pages it reads together (one ns_read_many).  AddElement puts
 * the entry into the first page of the group with room, the P-node first;
 * when every page is full it takes a new O-node instead of splitting, whose
 * entry goes to the parent group by AddElement one level up.  The
 * rectangles of the group's entries in the parent grow along the path as
 * in the R-tree's AdjustTree (fortree.h: every entry of a group carries the
 * union of the group).  A root needing an O-node grows the tree at once.
 *
 * Merge-back (fortree_merge.c) splits a group once its accesses (tsc) reach
 * floor((5k - 1) / 2) * y / x for k O-nodes, x and y the costs of a page
 * read and a page write: the condition of Jin et al. 2015 as FESTIval 1.1.1
 * implements it (FESTIval inventory §2.5).  It is checked when a group
 * receives an entry, as in AddElement.
 *
 * The access counters and the flaw Carniel et al. 2018 (§2) found.
 * FESTIval counts a group's access when a search reads it and when an
 * insertion passes through it above the level it inserts at, but not at
 * that level, and never for a root that is a leaf: a one-at-a-time build
 * never merges a leaf group back, so its first leaf and its O-nodes grow
 * without end ("an overflowed root node instead of a hierarchical
 * structure").  festival counts every descent that reads a group with
 * O-nodes, the insertion's target included (access_count 'all', the
 * default): an insertion into an overflowed leaf reads its O-nodes, which
 * is the cost the condition weighs.  And its root is never overflowed
 * (fortree.h).  access_count 'festival' keeps FESTIval's counting, to show
 * the flaw (docs/indices.md: heights and group sizes of both).
 *
 * Every modification reads each page once, changes it in memory and
 * writes it once at its end (FtOp), so the same code runs under every
 * node store.
 *
 * IDENTIFICATION
 *	  src/index/fortree.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/fortree.h"

#include <math.h>

#include "stats/jsonbuild.h"
#include "utils/memutils.h"

/* The FOR-tree's options, read once by ft_setup. */
typedef struct FtOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	int64		min_fill;
	int64		max_fill;
	double		x;
	double		y;
	int			access_count;	/* FtAccessCount: index into ft_access_counts */
} FtOptions;

static const char *const ft_access_counts[] = {"all", "festival", NULL};

StaticAssertDecl(lengthof(ft_access_counts) == FT_COUNT_FESTIVAL + 2,
				 "ft_access_counts must list FtAccessCount in its order");

static const OptionSpec ft_options[] = {
	{
		.name = "min_fill", .type = OPT_INT, .default_number = 50,
		.min = 1, .max = 50,
		.description = "Minimum entries of a group (a P-node and its O-nodes) m, in percent of the maximum M; FESTIval's OccupancyRate.",
		.offset = offsetof(FtOptions, min_fill)
	},
	{
		.name = "max_fill", .type = OPT_INT, .default_number = 100,
		.min = 10, .max = 100,
		.description = "Maximum entries of a node page M, in percent of the entries a page holds; FESTIval's OccupancyRate.",
		.offset = offsetof(FtOptions, max_fill)
	},
	{
		.name = "x", .type = OPT_REAL, .default_number = 25,
		.min = 1e-6, .max = 1e9,
		.description = "Cost of a flash page read in the merge-back condition (Jin et al. 2015); only y / x matters. Default: 25 (us, a NAND page read).",
		.offset = offsetof(FtOptions, x)
	},
	{
		.name = "y", .type = OPT_REAL, .default_number = 200,
		.min = 1e-6, .max = 1e9,
		.description = "Cost of a flash page write in the merge-back condition (Jin et al. 2015). Default: 200 (us, a NAND page program).",
		.offset = offsetof(FtOptions, y)
	},
	{
		.name = "access_count", .type = OPT_CHOICE, .default_choice = "all",
		.choices = ft_access_counts,
		.description = "Which descents count as accesses of an overflowed group: all (every descent that reads it) or festival (FESTIval 1.1.1: not an insertion's target level; a one-at-a-time build then never merges a leaf back, Carniel et al. 2018 §2).",
		.offset = offsetof(FtOptions, access_count)
	},
	{0}
};

/* ---- NodeOps ---- */

static int
ft_compare_identity(const void *a, const void *b, uint16 level)
{
	int64		ra = level == 0 ? ((const FtLeafEntry *) a)->id : ((const FtInternalEntry *) a)->child;
	int64		rb = level == 0 ? ((const FtLeafEntry *) b)->id : ((const FtInternalEntry *) b)->child;

	return ra < rb ? -1 : (ra > rb ? 1 : 0);
}

/* Both entry kinds start with the rectangle. */
static void
ft_entry_mbr(const void *entry, uint16 level, Mbr *box)
{
	*box = *(const Mbr *) entry;
}

static int64
ft_entry_ref(const void *entry, uint16 level)
{
	return level == 0 ? ((const FtLeafEntry *) entry)->id
		: ((const FtInternalEntry *) entry)->child;
}

const NodeOps fortree_node_ops = {
	.structure = "fortree",
	.leaf_entry_size = sizeof(FtLeafEntry),
	.internal_entry_size = sizeof(FtInternalEntry),
	.compare_identity = ft_compare_identity,
	.entry_mbr = ft_entry_mbr,
	.entry_ref = ft_entry_ref
};

const Mbr *
ft_entry_box(const TreeNode *node, uint32 slot)
{
	return (const Mbr *) NodeEntry(node, slot);
}

/* ---- the ONT's access counters ---- */

uint64
ft_counter_get(FtState *st, PageId tag)
{
	FtCounter  *c = hash_search(st->ont, &tag, HASH_FIND, NULL);

	return c != NULL ? c->accesses : 0;
}

static void
ft_counter_add(FtState *st, PageId tag)
{
	bool		found;
	FtCounter  *c = hash_search(st->ont, &tag, HASH_ENTER, &found);

	if (!found)
		c->accesses = 0;
	c->accesses++;
}

void
ft_counter_forget(FtState *st, PageId tag)
{
	(void) hash_search(st->ont, &tag, HASH_REMOVE, NULL);
}

/* The group's P-node moved (its old P-node was freed): keep its count. */
void
ft_counter_move(FtState *st, PageId from, PageId to)
{
	uint64		n = ft_counter_get(st, from);

	ft_counter_forget(st, from);
	if (n > 0)
	{
		bool		found;
		FtCounter  *c = hash_search(st->ont, &to, HASH_ENTER, &found);

		c->accesses = n;
	}
}

static void
ft_counters_reset(FtState *st)
{
	HASHCTL		ctl;

	MemoryContextReset(st->cxt);
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(FtCounter);
	ctl.hcxt = st->cxt;
	st->ont = hash_create("fortree overflow node table", 256, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* ---- one modification's nodes (FtOp) ---- */

void
ft_op_begin(FtOp *op, StructIndex *idx)
{
	HASHCTL		ctl;

	memset(op, 0, sizeof(FtOp));
	op->idx = idx;
	op->st = (FtState *) idx->state;
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(FtNodeRef);
	ctl.hcxt = CurrentMemoryContext;
	op->nodes = hash_create("fortree nodes of a modification", 64, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

static int
compare_ref_page(const void *a, const void *b)
{
	PageId		pa = (*(FtNodeRef *const *) a)->page;
	PageId		pb = (*(FtNodeRef *const *) b)->page;

	return pa < pb ? -1 : (pa > pb ? 1 : 0);
}

/* Write every changed page once, in page order. */
void
ft_op_finish(FtOp *op)
{
	HASH_SEQ_STATUS scan;
	FtNodeRef  *ref;
	FtNodeRef **dirty;
	int			n = 0;

	Assert(op->norphans == 0);	/* ft_settle inserted them again */
	dirty = palloc(sizeof(FtNodeRef *) * Max(1, hash_get_num_entries(op->nodes)));
	hash_seq_init(&scan, op->nodes);
	while ((ref = hash_seq_search(&scan)) != NULL)
		if (ref->dirty && !ref->released)
			dirty[n++] = ref;
	qsort(dirty, n, sizeof(FtNodeRef *), compare_ref_page);
	for (int i = 0; i < n; i++)
	{
		TreeNode   *node = dirty[i]->node;

		Assert(node->nentries <= FtMax(op->st, node->level) ||
			   node->page == op->idx->ns->meta->root);
		ns_write(op->idx->ns, node,
				 dirty[i]->fresh ? NS_WRITE_NEW :
				 dirty[i]->replaced ? NS_WRITE_REPLACE : NS_WRITE_UPDATE);
		dirty[i]->dirty = false;
	}
	pfree(dirty);
}

static void
check_level(FtOp *op, TreeNode *node, uint16 level)
{
	if (node->level != level)
		tree_report_bad_level(op->idx, node, level);
}

/* The node at page, expected at level: read once per modification. */
TreeNode *
ft_get(FtOp *op, PageId page, uint16 level)
{
	bool		found;
	FtNodeRef  *ref = hash_search(op->nodes, &page, HASH_ENTER, &found);

	if (!found || ref->released)
	{
		TreeNode   *node = ns_read(op->idx->ns, page);

		if (found)
			elog(ERROR, "index \"%s\": page " UINT64_FORMAT " is referenced after it was freed",
				 op->idx->name, page);
		memset(ref, 0, sizeof(*ref));
		ref->page = page;
		ref->node = node;
		check_level(op, node, level);
	}
	else
		check_level(op, ref->node, level);
	return ref->node;
}

/* Like ft_get for n pages, the ones not read yet read as one batch. */
static void
ft_get_many(FtOp *op, const PageId *pages, int n, uint16 level, TreeNode **out)
{
	PageId	   *missing = palloc(sizeof(PageId) * n);
	TreeNode  **read = palloc(sizeof(TreeNode *) * n);
	int			nmissing = 0;

	for (int i = 0; i < n; i++)
		if (hash_search(op->nodes, &pages[i], HASH_FIND, NULL) == NULL)
			missing[nmissing++] = pages[i];
	if (nmissing > 1)
	{
		ns_read_many(op->idx->ns, missing, nmissing, read);
		for (int i = 0; i < nmissing; i++)
		{
			FtNodeRef  *ref = hash_search(op->nodes, &missing[i], HASH_ENTER, NULL);

			memset(ref, 0, sizeof(*ref));
			ref->page = missing[i];
			ref->node = read[i];
		}
	}
	for (int i = 0; i < n; i++)
		out[i] = ft_get(op, pages[i], level);
	pfree(missing);
	pfree(read);
}

static FtNodeRef *
ft_ref(FtOp *op, const TreeNode *node)
{
	FtNodeRef  *ref = hash_search(op->nodes, &node->page, HASH_FIND, NULL);

	Assert(ref != NULL && ref->node == node && !ref->released);
	return ref;
}

void
ft_dirty(FtOp *op, TreeNode *node)
{
	ft_ref(op, node)->dirty = true;
}

/* The node was rewritten wholesale (a merge-back: eFIND's DEL + NEW). */
void
ft_replaced(FtOp *op, TreeNode *node)
{
	FtNodeRef  *ref = ft_ref(op, node);

	ref->dirty = true;
	ref->replaced = true;
}

TreeNode *
ft_new_page(FtOp *op, uint16 level)
{
	PageId		page = ns_alloc(op->idx->ns, level);
	TreeNode   *node = ns_new_node(op->idx->ns, page, level);
	bool		found;
	FtNodeRef  *ref = hash_search(op->nodes, &page, HASH_ENTER, &found);

	/* a page freed earlier in this modification may come back */
	Assert(!found || ref->released);
	memset(ref, 0, sizeof(*ref));
	ref->page = page;
	ref->node = node;
	ref->dirty = true;
	ref->fresh = true;
	return node;
}

void
ft_release(FtOp *op, TreeNode *node)
{
	FtNodeRef  *ref = ft_ref(op, node);

	ns_release(op->idx->ns, node->page);
	ref->released = true;
	ref->dirty = false;
}

/* ---- groups ---- */

FtGroup *
ft_group_new(uint16 level, PageId tag)
{
	FtGroup    *g = palloc0(sizeof(FtGroup));

	g->level = level;
	g->tag = tag;
	g->maxpages = 4;
	g->pages = palloc(sizeof(TreeNode *) * g->maxpages);
	return g;
}

void
ft_group_add_page(FtGroup *g, TreeNode *page)
{
	if (g->npages == g->maxpages)
	{
		g->maxpages *= 2;
		g->pages = repalloc(g->pages, sizeof(TreeNode *) * g->maxpages);
	}
	g->pages[g->npages++] = page;
}

void
ft_group_box(const FtGroup *g, Mbr *box)
{
	mbr_set_empty(box);
	for (int i = 0; i < g->npages; i++)
		for (uint32 j = 0; j < g->pages[i]->nentries; j++)
			mbr_extend(box, ft_entry_box(g->pages[i], j));
}

uint32
ft_group_entries(const FtGroup *g)
{
	uint32		n = 0;

	for (int i = 0; i < g->npages; i++)
		n += g->pages[i]->nentries;
	return n;
}

FtGroup *
ft_root_group(FtOp *op)
{
	FestMeta   *meta = op->idx->ns->meta;
	FtGroup    *g;

	if (meta->height == 0 || meta->height > FEST_MAX_LEVELS)
		elog(ERROR, "index \"%s\" records height %u", op->idx->name, meta->height);
	g = ft_group_new(meta->height - 1, meta->root);
	ft_group_add_page(g, ft_get(op, meta->root, meta->height - 1));
	return g;
}

static void
report_broken_group(FtOp *op, const FtGroup *parent, PageId tag, const char *detail)
{
	fest_report_corrupt(op->idx->name, parent->pages[0]->page,
						psprintf("The group of P-node " UINT64_FORMAT " %s.", tag, detail));
}

/*
 * The group a parent's entries name by tag: its pages, the P-node first,
 * then the O-nodes in the parent's order, read as one batch.
 */
FtGroup *
ft_child_group(FtOp *op, const FtGroup *parent, PageId tag)
{
	uint32		n = ft_group_entries(parent);
	PageId	   *pages = palloc(sizeof(PageId) * (n + 1));
	int			npages = 1;
	bool		has_p = false;
	FtGroup    *g;

	Assert(parent->level > 0);
	for (int i = 0; i < parent->npages; i++)
	{
		const FtInternalEntry *e = FtInternalEntries(parent->pages[i]);

		for (uint32 j = 0; j < parent->pages[i]->nentries; j++)
		{
			if ((PageId) e[j].group != tag)
				continue;
			if ((PageId) e[j].child == tag)
			{
				if (has_p)
					report_broken_group(op, parent, tag, "has two P-node entries");
				has_p = true;
				pages[0] = tag;
			}
			else
				pages[npages++] = (PageId) e[j].child;
		}
	}
	if (!has_p)
		report_broken_group(op, parent, tag, "has no P-node entry");

	g = ft_group_new(parent->level - 1, tag);
	g->maxpages = Max(npages, 4);
	g->pages = repalloc(g->pages, sizeof(TreeNode *) * g->maxpages);
	ft_get_many(op, pages, npages, parent->level - 1, g->pages);
	g->npages = npages;
	pfree(pages);
	return g;
}

/* Remove an entry by moving the last one into its place (FAST: two positions). */
void
ft_remove_slot(TreeNode *node, uint32 slot)
{
	Assert(slot < node->nentries);
	node->nentries--;
	if (slot != node->nentries)
		memcpy(NodeEntry(node, slot), NodeEntry(node, node->nentries), node->entry_size);
}

static void
append_entry(TreeNode *node, const void *entry)
{
	Assert(node->nentries < node->capacity);
	memcpy(NodeEntry(node, node->nentries), entry, node->entry_size);
	node->nentries++;
}

/*
 * Give every entry of group tag in the parent the rectangle box; true when
 * one of them changed.
 */
static bool
set_group_box(FtOp *op, FtGroup *parent, PageId tag, const Mbr *box)
{
	bool		changed = false;

	for (int i = 0; i < parent->npages; i++)
	{
		FtInternalEntry *e = FtInternalEntries(parent->pages[i]);
		bool		page_changed = false;

		for (uint32 j = 0; j < parent->pages[i]->nentries; j++)
			if ((PageId) e[j].group == tag && !mbr_equals(&e[j].box, box))
			{
				e[j].box = *box;
				page_changed = true;
			}
		if (page_changed)
		{
			ft_dirty(op, parent->pages[i]);
			changed = true;
		}
	}
	return changed;
}

/*
 * AdjustTree after box entered the group at level: each group's entries
 * in its parent grow to cover it, until one already does.
 */
static void
adjust_up(FtOp *op, FtPath *path, int level, const Mbr *box)
{
	for (int l = level; l < path->top; l++)
	{
		FtGroup    *g = path->at[l];
		FtGroup    *parent = path->at[l + 1];
		bool		covered = true;
		Mbr			grown;

		ft_group_box(g, &grown);
		for (int i = 0; i < parent->npages && covered; i++)
		{
			const FtInternalEntry *e = FtInternalEntries(parent->pages[i]);

			for (uint32 j = 0; j < parent->pages[i]->nentries; j++)
				if ((PageId) e[j].group == g->tag && !mbr_contains(&e[j].box, box))
				{
					covered = false;
					break;
				}
		}
		if (covered)
			break;
		(void) set_group_box(op, parent, g->tag, &grown);
	}
}

/*
 * The root group needs an O-node: the tree grows.  The new root holds the
 * old root and its O-node as one group.
 */
static void
grow_root(FtOp *op, FtPath *path, FtGroup *g)
{
	TreeNode   *root = ft_new_page(op, g->level + 1);
	FtInternalEntry e;

	Assert(g->npages == 2 && g->level == path->top);
	ft_group_box(g, &e.box);
	e.group = (int64) g->tag;
	for (int i = 0; i < g->npages; i++)
	{
		e.child = (int64) g->pages[i]->page;
		append_entry(root, &e);
	}
	ns_set_root(op->idx->ns, root->page, op->idx->ns->meta->height + 1);
	path->top++;
	path->at[path->top] = ft_group_new(root->level, root->page);
	ft_group_add_page(path->at[path->top], root);
}

/*
 * AddElement (Jin et al. 2015, Alg. 1) without its merge-back, which the
 * caller checks once the entry is in (ft_insert_at): the entry goes to the
 * first page of the group with room, or to a new O-node.
 */
static void
add_element(FtOp *op, FtPath *path, int level, const void *entry)
{
	FtState    *st = op->st;
	FtGroup    *g = path->at[level];
	uint32		max = FtMax(st, level);
	TreeNode   *target = NULL;
	FtInternalEntry oe;

	g->received = true;
	for (int i = 0; i < g->npages && target == NULL; i++)
		if (g->pages[i]->nentries < max)
			target = g->pages[i];
	if (target != NULL)
	{
		append_entry(target, entry);
		ft_dirty(op, target);
		adjust_up(op, path, level, (const Mbr *) entry);
		return;
	}

	/* every page is full: an O-node instead of a split */
	target = ft_new_page(op, level);
	append_entry(target, entry);
	ft_group_add_page(g, target);
	op->idx->stats->overflow_nodes++;
	if (level == path->top)
	{
		grow_root(op, path, g);
		return;
	}
	ft_group_box(g, &oe.box);
	(void) set_group_box(op, path->at[level + 1], g->tag, &oe.box);
	oe.child = (int64) target->page;
	oe.group = (int64) g->tag;
	add_element(op, path, level + 1, &oe);
}

/*
 * ChooseLeaf's step at a logical node: the entry of least enlargement over
 * every page of the group, ties by smaller area, then the first.  Returns
 * its group's tag.
 */
static PageId
choose_subtree(FtOp *op, const FtGroup *g, const Mbr *box)
{
	PageId		best = InvalidPageId;
	double		best_enlargement = get_float8_infinity();
	double		best_area = get_float8_infinity();

	for (int i = 0; i < g->npages; i++)
	{
		const FtInternalEntry *e = FtInternalEntries(g->pages[i]);

		for (uint32 j = 0; j < g->pages[i]->nentries; j++)
		{
			double		area = mbr_area(&e[j].box);
			double		enlargement = mbr_union_area(&e[j].box, box) - area;

			if (best == InvalidPageId || enlargement < best_enlargement ||
				(enlargement == best_enlargement && area < best_area))
			{
				best = (PageId) e[j].group;
				best_enlargement = enlargement;
				best_area = area;
			}
		}
		op->idx->stats->entries_examined += g->pages[i]->nentries;
	}
	if (best == InvalidPageId)
		fest_report_corrupt(op->idx->name, g->pages[0]->page,
							"An internal node has no entries.");
	return best;
}

/* One access of a group that has O-nodes (the paper's tsc). */
void
ft_count_access(FtOp *op, const FtGroup *g, bool target)
{
	if (g->npages < 2)
		return;
	if (target && op->st->access_count == FT_COUNT_FESTIVAL)
		return;
	ft_counter_add(op->st, g->tag);
}

/*
 * Insert entry (and the entries of more, the other pages of its group
 * when a dissolved node's orphans go back in) into a group at level, then
 * merge back the groups that received an entry and are due, bottom up.
 */
void
ft_insert_at(FtOp *op, const FtAnyEntry *entry, uint16 level,
			 const FtAnyEntry *more, int nmore)
{
	FtPath	   *path = palloc0(sizeof(FtPath));
	const Mbr  *box = (const Mbr *) entry;
	int			l;

	path->at[op->idx->ns->meta->height - 1] = ft_root_group(op);
	path->top = op->idx->ns->meta->height - 1;
	path->bottom = level;
	if (path->top < level)
		elog(ERROR, "cannot insert at level %u of a tree of height %u in index \"%s\"",
			 level, op->idx->ns->meta->height, op->idx->name);
	for (l = path->top; l > level; l--)
	{
		PageId		tag = choose_subtree(op, path->at[l], box);

		path->at[l - 1] = ft_child_group(op, path->at[l], tag);
		ft_count_access(op, path->at[l - 1], l - 1 == level);
	}

	add_element(op, path, level, entry);
	for (int i = 0; i < nmore; i++)
		add_element(op, path, level, &more[i]);

	for (l = level; l < path->top; l++)
		if (path->at[l] != NULL && path->at[l]->received && ft_merge_due(op->st, path->at[l]))
			ft_merge_back(op, path, l);
}

/* ---- search ---- */

/*
 * The window search of the paper: depth first, every page of a group the
 * window reaches is read (its entries in the parent carry the group's
 * rectangle), and each group with O-nodes it reaches counts one access.
 * The answers are the generic search's (traverse.c); only the counting is
 * the FOR-tree's.
 */
static void
ft_search(StructIndex *idx, const SearchSpec *spec)
{
	const NodeOps *nops = idx->ns->node_ops;
	FtState    *st = (FtState *) idx->state;
	PageId	   *stack;
	uint16	   *levels;
	int			maxstack = 64;
	int			nstack = 0;
	PageId	   *counted = NULL;
	int			ncounted = 0;
	int			maxcounted = 0;

	stack = palloc(sizeof(PageId) * maxstack);
	levels = palloc(sizeof(uint16) * maxstack);
	stack[nstack] = idx->ns->meta->root;
	levels[nstack] = idx->ns->meta->height - 1;
	nstack++;
	while (nstack > 0)
	{
		TreeNode   *node;

		nstack--;
		node = tree_read_node(idx, (int64) stack[nstack], levels[nstack]);
		if (node->level != levels[nstack])
			tree_report_bad_level(idx, node, levels[nstack]);
		idx->stats->entries_examined += node->nentries;
		for (uint32 i = 0; i < node->nentries; i++)
		{
			const void *entry = NodeEntry(node, i);
			Mbr			box;

			nops->entry_mbr(entry, node->level, &box);
			if (node->level == 0)
			{
				tree_filter_leaf_entry(spec, nops->entry_ref(entry, 0), &box);
				continue;
			}
			if (!predicate_descend(spec, &box))
				continue;
			{
				const FtInternalEntry *e = (const FtInternalEntry *) entry;
				PageId		tag = (PageId) e->group;
				bool		seen = false;

				/* an O-node's entry: its group has O-nodes; count it once */
				if ((PageId) e->child != tag)
				{
					for (int c = 0; c < ncounted && !seen; c++)
						seen = counted[c] == tag;
					if (!seen)
					{
						if (ncounted == maxcounted)
						{
							maxcounted = Max(16, 2 * maxcounted);
							counted = counted ? repalloc(counted, sizeof(PageId) * maxcounted)
								: palloc(sizeof(PageId) * maxcounted);
						}
						counted[ncounted++] = tag;
						ft_counter_add(st, tag);
					}
				}
			}
			if (nstack == maxstack)
			{
				maxstack *= 2;
				stack = repalloc(stack, sizeof(PageId) * maxstack);
				levels = repalloc(levels, sizeof(uint16) * maxstack);
			}
			stack[nstack] = (PageId) nops->entry_ref(entry, node->level);
			levels[nstack] = node->level - 1;
			nstack++;
		}
		tree_free_node(node);
	}
	pfree(stack);
	pfree(levels);
	if (counted != NULL)
		pfree(counted);
}

/* ---- the StructureOps ---- */

/* For snapshots: an O-node's entry names another page than its group's. */
static bool
ft_entry_overflow(StructIndex *idx, const void *entry, uint16 level)
{
	const FtInternalEntry *e = (const FtInternalEntry *) entry;

	Assert(level > 0);
	return e->child != e->group;
}

static void
ft_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	FtOp		op;
	FtAnyEntry	e;

	ft_op_begin(&op, idx);
	memset(&e, 0, sizeof(e));
	e.leaf.box = *box;
	e.leaf.id = id;
	ft_insert_at(&op, &e, 0, NULL, 0);
	/* a merge-back into fewer pages may have dissolved its parent */
	ft_settle(&op);
	ft_op_finish(&op);
}

static void
ft_init_empty(StructIndex *idx)
{
	FtState    *st = (FtState *) idx->state;
	TreeNode   *root = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);

	ns_write(idx->ns, root, NS_WRITE_NEW);
	ns_set_root(idx->ns, root->page, 1);
	/* the counters named pages of the tree this one replaces */
	ft_counters_reset(st);
}

static void *
ft_setup(const FestConfig *config, uint32 page_size)
{
	FtState    *st = palloc0(sizeof(FtState));
	FtOptions	opts;

	OPTIONS_FILL(config, ft_options, &opts);
	for (int k = 0; k < 2; k++)
	{
		uint32		entry_size = k == 0 ? sizeof(FtLeafEntry) : sizeof(FtInternalEntry);
		uint32		per_page = (page_size - FEST_PAGE_HEADER_SIZE) / entry_size;

		st->max_entries[k] = (uint32) floor((double) per_page * opts.max_fill / 100.0);
		st->min_entries[k] = Max(2, (uint32) ceil((double) st->max_entries[k] * opts.min_fill / 100.0));
		if (st->max_entries[k] < 4)
			config_error(config,
						 psprintf("A %u-byte page with max_fill %d%% holds %u %s entries; a FOR-tree node needs at least 4.",
								  page_size, (int) opts.max_fill, st->max_entries[k],
								  k == 0 ? "leaf" : "internal"),
						 "Use a larger page_size or max_fill.");
		if (2 * st->min_entries[k] > st->max_entries[k] + 1)
			config_error(config,
						 psprintf("min_fill %d%% of M = %u gives m = %u, but a merge-back of M + 1 entries can only guarantee %u per node.",
								  (int) opts.min_fill, st->max_entries[k], st->min_entries[k],
								  (st->max_entries[k] + 1) / 2),
						 "Use a smaller min_fill or a larger page_size.");
	}
	st->read_cost = opts.x;
	st->write_cost = opts.y;
	st->access_count = (FtAccessCount) opts.access_count;
	st->cxt = AllocSetContextCreate(CurrentMemoryContext, "fortree overflow node table",
									ALLOCSET_SMALL_SIZES);
	ft_counters_reset(st);
	return st;
}

static void
ft_describe(StructIndex *idx, JsonbParseState **state)
{
	FtState    *st = (FtState *) idx->state;

	jb_int(state, "max_entries", st->max_entries[0]);
	jb_int(state, "min_entries", st->min_entries[0]);
	jb_int(state, "max_internal_entries", st->max_entries[1]);
	jb_int(state, "min_internal_entries", st->min_entries[1]);
	jb_int(state, "entry_bytes", sizeof(FtLeafEntry));
	jb_int(state, "internal_entry_bytes", sizeof(FtInternalEntry));
	/* accesses that merge back a group with one, two, three O-nodes */
	for (int k = 1; k <= 3; k++)
		jb_int(state, psprintf("merge_accesses_%d_onodes", k),
			   (int64) ceil(ft_merge_threshold(st, k)));
	jb_int(state, "counted_groups", hash_get_num_entries(st->ont));
}

const StructureOps fortree_structure = {
	.name = "fortree",
	.description = "FOR-tree (Jin et al. 2015)",
	.options = ft_options,
	.node_ops = &fortree_node_ops,
	.setup = ft_setup,
	.init_empty = ft_init_empty,
	.insert = ft_insert,
	.remove = ft_remove,
	.contains = ft_contains,
	.search = ft_search,
	.check = ft_check,
	.describe = ft_describe,
	.entry_overflow = ft_entry_overflow
};
