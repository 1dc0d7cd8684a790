/*-------------------------------------------------------------------------
 *
 * rtree.c
 *	  The R-tree of Guttman, "R-trees: a dynamic index structure for
 *	  spatial searching", SIGMOD 1984.
 *
 * Insert (section 3.2): ChooseLeaf descends by least enlargement, ties by
 * smaller area (CL3); an overflowing node is split by the configured policy
 * (rtree_split.c); AdjustTree walks back up, enlarging the parents' MBRs,
 * adding split siblings to their parents, and stops as soon as an MBR
 * already covers the new entry.  A split of the root grows the tree.
 *
 * Delete (section 3.3): FindLeaf searches every subtree whose MBR covers
 * the entry's; CondenseTree removes underfull nodes on the way up, frees
 * their pages, tightens the MBRs, and reinserts the orphaned entries at
 * their original level; a root left with one child is replaced by it.
 *
 * Search (section 3.1): depth-first, with the predicate's MBR filter
 * (geom/predicate.h).
 *
 * Every node access goes through the NodeStore, so the same code runs
 * write-through, under FAST or under eFIND.
 *
 * This is also the core of the R*-tree (rstartree.c): the choice of
 * subtree and the treatment of an overflowing node are RtreeState's
 * choose_subtree and overflow.  The R-tree chooses by least enlargement and
 * always splits; the R*-tree may instead move entries out for a forced
 * reinsertion, which insert_at_level performs once the path is adjusted.
 *
 * IDENTIFICATION
 *	  src/index/rtree.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/rtree.h"

#include <math.h>

#include "stats/jsonbuild.h"

/* The R-tree's options, read once by rtree_setup. */
typedef struct RtreeOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	int			split;			/* index into rtree_split_names/policies */
	int64		min_fill;
	int64		max_fill;
} RtreeOptions;

static const OptionSpec rtree_options[] = {
	{
		.name = "split", .type = OPT_CHOICE, .default_choice = "quadratic",
		.choices = rtree_split_names,
		.description = "Node split algorithm: linear, quadratic (Guttman 1984), exponential (exhaustive minimum total area), greene (Greene 1989), angtan (Ang & Tan 1997), rstar (Beckmann et al. 1990).",
		.offset = offsetof(RtreeOptions, split)
	},
	{
		.name = "min_fill", .type = OPT_INT, .default_number = 50,
		.min = 1, .max = 100,
		.description = "Minimum node occupancy m, in percent of the maximum M.",
		.offset = offsetof(RtreeOptions, min_fill)
	},
	{
		.name = "max_fill", .type = OPT_INT, .default_number = 100,
		.min = 10, .max = 100,
		.description = "Maximum node occupancy M, in percent of the entries a page holds.",
		.offset = offsetof(RtreeOptions, max_fill)
	},
	{0}
};

static int
compare_ref(const void *a, const void *b, uint16 level)
{
	int64		ra = ((const RtreeEntry *) a)->ref;
	int64		rb = ((const RtreeEntry *) b)->ref;

	return ra < rb ? -1 : (ra > rb ? 1 : 0);
}

static void
entry_mbr(const void *entry, uint16 level, Mbr *box)
{
	*box = ((const RtreeEntry *) entry)->box;
}

static int64
entry_ref(const void *entry, uint16 level)
{
	return ((const RtreeEntry *) entry)->ref;
}

const NodeOps rtree_node_ops = {
	.structure = "rtree",
	.leaf_entry_size = sizeof(RtreeEntry),
	.internal_entry_size = sizeof(RtreeEntry),
	.compare_identity = compare_ref,
	.entry_mbr = entry_mbr,
	.mbr_first = true,			/* RtreeEntry: the box, then the ref */
	.entry_ref = entry_ref
};

/* The union of a node's entry MBRs (empty for an empty node). */
void
rtree_node_box(const TreeNode *node, Mbr *box)
{
	const RtreeEntry *e = RtreeNodeEntries(node);

	mbr_set_empty(box);
	for (uint32 i = 0; i < node->nentries; i++)
		mbr_extend(box, &e[i].box);
}

static void
append_entry(TreeNode *node, const RtreeEntry *entry)
{
	Assert(node->nentries < node->capacity);
	RtreeNodeEntries(node)[node->nentries++] = *entry;
}

/*
 * Remove an entry by moving the last one into its place: an R-tree node is
 * a set, and this changes at most two positions (FAST records changes by
 * position).
 */
static void
remove_entry(TreeNode *node, int slot)
{
	RtreeEntry *e = RtreeNodeEntries(node);

	node->nentries--;
	if (slot != (int) node->nentries)
		e[slot] = e[node->nentries];
}

static TreeNode *
read_child(StructIndex *idx, const TreeNode *parent, int slot)
{
	return tree_read_child(idx, parent, RtreeNodeEntries(parent)[slot].ref);
}

/*
 * ChooseLeaf step CL3: least enlargement, ties by smaller area, then the
 * first entry.
 */
int
rtree_choose_least_enlargement(StructIndex *idx, const TreeNode *node, const Mbr *box)
{
	const RtreeEntry *e = RtreeNodeEntries(node);
	int			best = 0;
	double		best_enlargement = get_float8_infinity();
	double		best_area = get_float8_infinity();

	for (uint32 i = 0; i < node->nentries; i++)
	{
		double		area;
		double		enlargement;

		(void) rtree_entry_keys(&e[i].box, box, &area, &enlargement);
		if (enlargement < best_enlargement ||
			(enlargement == best_enlargement && area < best_area))
		{
			best = i;
			best_enlargement = enlargement;
			best_area = area;
		}
	}
	idx->stats->entries_examined += node->nentries;
	return best;
}

/*
 * Descend from the root to a node at the given level.  path[0..depth-1]
 * record the nodes passed and the entries followed; path[depth].node is the
 * target.  Returns depth.  The nodes are read to be changed
 * (ns_read_to_change): insert_at_level writes each one it changes before
 * anything else reads it, appends one entry at most to each before that
 * (the new entry or a split's sibling), never frees them, and reads the
 * path again from the root for every reinserted entry.
 */
static int
descend(StructIndex *idx, const Mbr *box, uint16 level, PathStep *path)
{
	RtreeState *st = (RtreeState *) idx->state;
	TreeNode	   *node = tree_read_root_to_change(idx);
	int			depth = 0;

	if (node->level < level)
		elog(ERROR, "cannot insert at level %u of a tree of height %u in index \"%s\"",
			 level, idx->ns->meta->height, idx->name);

	while (node->level > level)
	{
		int			slot;

		if (node->nentries == 0)
			fest_report_corrupt(idx->name, node->page,
								"An internal node has no entries.");
		slot = st->choose_subtree(idx, node, box);
		path[depth].node = node;
		path[depth].slot = slot;
		depth++;
		node = tree_read_child_to_change(idx, node, RtreeNodeEntries(node)[slot].ref);
	}
	path[depth].node = node;
	path[depth].slot = -1;
	return depth;
}

/*
 * Split an overflowing node: the node keeps its page with one group, a new
 * sibling gets the other.  Both are written.
 */
TreeNode *
rtree_split_node(StructIndex *idx, TreeNode *node)
{
	RtreeState *st = (RtreeState *) idx->state;
	int			n = node->nentries;
	RtreeEntry *entries = palloc(n * sizeof(RtreeEntry));
	int		   *group = palloc(n * sizeof(int));
	TreeNode	   *sibling;
	int64		start = fest_now_ns();

	memcpy(entries, node->entries, n * sizeof(RtreeEntry));
	st->split->split(entries, n, st->min_entries, group, idx->stats);

	sibling = ns_new_node(idx->ns, ns_alloc(idx->ns, node->level), node->level);
	node->nentries = 0;
	for (int i = 0; i < n; i++)
		append_entry(group[i] == 0 ? node : sibling, &entries[i]);

	if (node->nentries < st->min_entries || sibling->nentries < st->min_entries)
		elog(ERROR, "split policy \"%s\" produced groups of %u and %u entries, below the minimum %u",
			 st->split->name, node->nentries, sibling->nentries, st->min_entries);

	if (node->level == 0)
		idx->stats->splits_leaf++;
	else
		idx->stats->splits_internal++;
	idx->stats->split_ns += fest_now_ns() - start;

	ns_write(idx->ns, node, NS_WRITE_REPLACE);
	ns_write(idx->ns, sibling, NS_WRITE_NEW);
	return sibling;
}

/*
 * Insert an entry into a node at the given level (0 for objects; higher
 * levels reinsert the subtrees orphaned by a deletion), then AdjustTree.
 */
static void
insert_at_level(StructIndex *idx, const RtreeEntry *entry, uint16 level,
				RtreeInsertion *ins)
{
	RtreeState *st = (RtreeState *) idx->state;
	PathStep	path[FEST_MAX_LEVELS];
	int			depth = descend(idx, &entry->box, level, path);
	TreeNode	   *node = path[depth].node;
	TreeNode	   *sibling = NULL;
	bool		exact = false;	/* node's MBR must be recomputed, not extended */

	append_entry(node, entry);
	if (node->nentries > st->max_entries)
	{
		sibling = st->overflow(idx, ins, node, depth == 0);
		exact = true;
	}
	else
		ns_write(idx->ns, node, NS_WRITE_UPDATE);

	for (int d = depth - 1; d >= 0; d--)
	{
		TreeNode	   *parent = path[d].node;
		RtreeEntry *pe = &RtreeNodeEntries(parent)[path[d].slot];

		if (exact)
		{
			/*
			 * The node split or gave entries away for reinsertion: its MBR
			 * may have shrunk, so it is recomputed; once an MBR is the same
			 * as before, and nothing was added, the ancestors are exact.
			 */
			Mbr			tight;
			bool		changed;

			rtree_node_box(node, &tight);
			changed = !mbr_equals(&tight, &pe->box);
			pe->box = tight;
			if (sibling != NULL)
			{
				RtreeEntry	added;

				rtree_node_box(sibling, &added.box);
				added.ref = (int64) sibling->page;
				append_entry(parent, &added);
				changed = true;
			}
			if (!changed)
				break;
			if (parent->nentries > st->max_entries)
				sibling = st->overflow(idx, ins, parent, d == 0);
			else
			{
				sibling = NULL;
				ns_write(idx->ns, parent, NS_WRITE_UPDATE);
			}
		}
		else
		{
			/* AdjustTree stops once an MBR already covers the entry */
			if (mbr_contains(&pe->box, &entry->box))
				break;
			mbr_extend(&pe->box, &entry->box);
			ns_write(idx->ns, parent, NS_WRITE_UPDATE);
		}
		node = parent;
	}

	if (sibling != NULL)
	{
		/* the root split: a new root with the two halves */
		TreeNode	   *root = ns_new_node(idx->ns, ns_alloc(idx->ns, node->level + 1),
									   node->level + 1);
		RtreeEntry	half;

		rtree_node_box(node, &half.box);
		half.ref = (int64) node->page;
		append_entry(root, &half);
		rtree_node_box(sibling, &half.box);
		half.ref = (int64) sibling->page;
		append_entry(root, &half);
		ns_write(idx->ns, root, NS_WRITE_NEW);
		ns_set_root(idx->ns, root->page, idx->ns->meta->height + 1);
	}

	/*
	 * A forced reinsertion (R*-tree) took entries out of a node of the path;
	 * now that the tree is consistent again they go back in, at their
	 * level, as part of the same insertion.
	 */
	if (ins->npending > 0)
	{
		RtreeEntry *pending = ins->pending;
		int			npending = ins->npending;
		uint16		pending_level = ins->pending_level;

		ins->pending = NULL;
		ins->npending = 0;
		for (int i = 0; i < npending; i++)
			insert_at_level(idx, &pending[i], pending_level, ins);
		pfree(pending);
	}
}

/* Insert with a fresh insertion state (an object, or an orphan of delete). */
static void
insert_entry(StructIndex *idx, const RtreeEntry *entry, uint16 level)
{
	RtreeInsertion ins = {0};

	insert_at_level(idx, entry, level, &ins);
}

void
rtree_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	RtreeEntry	entry;

	entry.box = *box;
	entry.ref = id;
	insert_entry(idx, &entry, 0);
}

/*
 * FindLeaf (section 3.3, FL1-FL2): depth-first through every subtree whose
 * MBR covers the entry's.  On success path[0..depth] leads to the leaf and
 * path[depth].slot is the entry.
 */
static bool
find_leaf(StructIndex *idx, TreeNode *node, int depth, int64 id, const Mbr *box,
		  PathStep *path, int *found_depth)
{
	RtreeEntry *e = RtreeNodeEntries(node);

	path[depth].node = node;
	idx->stats->entries_examined += node->nentries;

	if (node->level == 0)
	{
		for (uint32 i = 0; i < node->nentries; i++)
			if (e[i].ref == id && mbr_equals(&e[i].box, box))
			{
				path[depth].slot = i;
				*found_depth = depth;
				return true;
			}
		return false;
	}

	for (uint32 i = 0; i < node->nentries; i++)
	{
		TreeNode	   *child;

		if (!mbr_contains(&e[i].box, box))
			continue;
		path[depth].slot = i;
		child = read_child(idx, node, i);
		if (find_leaf(idx, child, depth + 1, id, box, path, found_depth))
			return true;
		pfree(child->entries);
		pfree(child);
	}
	return false;
}

bool
rtree_contains(StructIndex *idx, int64 id, const Mbr *box)
{
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;

	return find_leaf(idx, tree_read_root(idx), 0, id, box, path, &depth);
}

typedef struct Orphan
{
	RtreeEntry	entry;
	uint16		level;
} Orphan;

/*
 * CondenseTree (CT1-CT6) after an entry left path[depth].node, then the
 * reinsertion of orphans and the shortening of the tree (D4).
 */
static void
condense(StructIndex *idx, PathStep *path, int depth)
{
	RtreeState *st = (RtreeState *) idx->state;
	TreeNode	   *node = path[depth].node;
	bool		changed = true; /* the leaf lost an entry */
	Orphan	   *orphans = NULL;
	int			norphans = 0;
	int			maxorphans = 0;

	for (int d = depth - 1; d >= 0; d--)
	{
		TreeNode	   *parent = path[d].node;
		int			slot = path[d].slot;
		RtreeEntry *pe = &RtreeNodeEntries(parent)[slot];
		bool		parent_changed = false;

		if (node->nentries < st->min_entries)
		{
			/* CT3: eliminate the node, keep its entries for reinsertion */
			if (norphans + node->nentries > maxorphans)
			{
				maxorphans = Max(2 * maxorphans, norphans + node->nentries);
				orphans = orphans ? repalloc(orphans, maxorphans * sizeof(Orphan))
					: palloc(maxorphans * sizeof(Orphan));
			}
			for (uint32 i = 0; i < node->nentries; i++)
			{
				orphans[norphans].entry = RtreeNodeEntries(node)[i];
				orphans[norphans].level = node->level;
				norphans++;
			}
			remove_entry(parent, slot);
			ns_release(idx->ns, node->page);
			parent_changed = true;
		}
		else if (changed)
		{
			/* CT4: tighten the parent's entry */
			Mbr			tight;

			ns_write(idx->ns, node, NS_WRITE_UPDATE);
			rtree_node_box(node, &tight);
			if (!mbr_equals(&tight, &pe->box))
			{
				pe->box = tight;
				parent_changed = true;
			}
		}
		node = parent;
		changed = parent_changed;
	}
	if (changed)
		ns_write(idx->ns, node, NS_WRITE_UPDATE);

	/* CT6: reinsert orphans at the level they came from */
	for (int i = 0; i < norphans; i++)
	{
		insert_entry(idx, &orphans[i].entry, orphans[i].level);
		idx->stats->reinserted_entries++;
	}

	/* D4: a root with a single child is replaced by the child */
	for (;;)
	{
		TreeNode	   *root = tree_read_root(idx);

		if (root->level == 0 || root->nentries != 1)
			break;
		ns_release(idx->ns, root->page);
		ns_set_root(idx->ns, (PageId) RtreeNodeEntries(root)[0].ref,
					idx->ns->meta->height - 1);
	}
}

bool
rtree_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;

	if (!find_leaf(idx, tree_read_root(idx), 0, id, box, path, &depth))
		return false;
	remove_entry(path[depth].node, path[depth].slot);
	condense(idx, path, depth);
	return true;
}

void
rtree_init_empty(StructIndex *idx)
{
	TreeNode	   *root = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);

	ns_write(idx->ns, root, NS_WRITE_NEW);
	ns_set_root(idx->ns, root->page, 1);
}

/* Guttman's overflow treatment: always split (I3). */
static TreeNode *
split_overflow(StructIndex *idx, RtreeInsertion *ins, TreeNode *node, bool is_root)
{
	return rtree_split_node(idx, node);
}

/*
 * M from the page size and max_fill, m from min_fill; Guttman's split
 * needs 2 <= m <= (M + 1) / 2 so that both halves of M + 1 entries can be
 * filled.  Shared by the R-tree family; the caller sets the insertion's
 * policies.
 */
RtreeState *
rtree_state_init(const FestConfig *config, uint32 page_size,
				 int64 min_fill, int64 max_fill, const RtreeSplitPolicy *split)
{
	RtreeState *st = palloc0(sizeof(RtreeState));
	uint32		per_page = (page_size - FEST_PAGE_HEADER_SIZE) / sizeof(RtreeEntry);

	st->max_entries = (uint32) floor((double) per_page * max_fill / 100.0);
	st->min_entries = Max(2, (uint32) ceil((double) st->max_entries * min_fill / 100.0));
	st->split = split;

	if (st->max_entries < 4)
		config_error(config,
					 psprintf("A %u-byte page with max_fill %d%% holds %u entries; an R-tree node needs at least 4.",
							  page_size, (int) max_fill, st->max_entries),
					 "Use a larger page_size or max_fill.");
	if (2 * st->min_entries > st->max_entries + 1)
		config_error(config,
					 psprintf("min_fill %d%% of M = %u gives m = %u, but a split of M + 1 entries can only guarantee %u per node.",
							  (int) min_fill, st->max_entries, st->min_entries,
							  (st->max_entries + 1) / 2),
					 "Use min_fill of at most 50.");
	if (split->max_split_entries > 0 && st->max_entries + 1 > split->max_split_entries)
	{
		/* the largest max_fill with floor(per_page * fill / 100) + 1 <= limit */
		int			fitting_fill = (int) ((split->max_split_entries * 100 - 1) / per_page);

		config_error(config,
					 psprintf("The \"%s\" split examines every partition of the M + 1 entries of a node; a %u-byte page with max_fill %d%% gives M + 1 = %u, and at most %u can be split in reasonable time.",
							  split->name, page_size, (int) max_fill,
							  st->max_entries + 1, split->max_split_entries),
					 fitting_fill >= 10 ?
					 psprintf("Use max_fill of at most %d with %u-byte pages, or another split.",
							  fitting_fill, page_size) :
					 psprintf("Use a smaller page_size and max_fill, so that M + 1 is at most %u, or another split.",
							  split->max_split_entries));
	}
	return st;
}

static void *
rtree_setup(const FestConfig *config, uint32 page_size)
{
	RtreeState *st;
	RtreeOptions opts;

	OPTIONS_FILL(config, rtree_options, &opts);
	st = rtree_state_init(config, page_size, opts.min_fill, opts.max_fill,
						  &rtree_split_policies[opts.split]);
	st->choose_subtree = rtree_choose_least_enlargement;
	st->overflow = split_overflow;
	return st;
}

void
rtree_describe(StructIndex *idx, JsonbParseState **state)
{
	RtreeState *st = (RtreeState *) idx->state;

	jb_int(state, "max_entries", st->max_entries);
	jb_int(state, "min_entries", st->min_entries);
	jb_int(state, "entry_bytes", sizeof(RtreeEntry));
}

const StructureOps rtree_structure = {
	.name = "rtree",
	.description = "R-tree (Guttman 1984)",
	.options = rtree_options,
	.node_ops = &rtree_node_ops,
	.setup = rtree_setup,
	.init_empty = rtree_init_empty,
	.insert = rtree_insert,
	.remove = rtree_remove,
	.contains = rtree_contains,
	.check = rtree_check,
	.describe = rtree_describe,
	.build_methods = rtree_build_methods,
	.bulk_load = rtree_bulk_load,
	.bulk_spill_begin = rtree_spill_begin,
	.bulk_spill_put = rtree_spill_put,
	.bulk_spill_load = rtree_spill_load
};
