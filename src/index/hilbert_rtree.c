/*-------------------------------------------------------------------------
 *
 * hilbert_rtree.c
 *	  The Hilbert R-tree of Kamel and Faloutsos, "Hilbert R-tree: an
 *	  improved R-tree using fractals", VLDB 1994.
 *
 * Insert (section 3.2): ChooseLeaf descends, at each level, into the first
 * entry whose LHV exceeds the new key (the last entry if none does); the
 * entry goes into the leaf at its place in Hilbert order.  An overflowing
 * node first gives entries to its s - 1 cooperating siblings; only when
 * all s are full is a new node made, and the s full nodes are shared out
 * evenly among s + 1 (the s-to-(s+1) split).  AdjustTree walks back up,
 * refreshing the MBRs and LHVs of the parents and propagating the splits;
 * a split of the root grows the tree.
 *
 * Delete (section 3.3): the leaf is found by a search pruned by MBR and by
 * key; an underflowing node borrows from its s cooperating siblings, or,
 * when they would all underflow too, the s + 1 nodes are merged into s.
 * MBRs and LHVs are adjusted up to the root, and a root left with a single
 * child is replaced by it.
 *
 * Search: the generic depth-first search (traverse.c); internal entries
 * hold the exact MBR of their child.
 *
 * Cooperating siblings are the children of the same parent next to the
 * node: the node and the ones right after it, or before it at the end of
 * the parent.  Shared-out entries are dealt in Hilbert order into
 * consecutive nodes as evenly as possible, so the concatenation of the
 * nodes stays sorted.
 *
 * IDENTIFICATION
 *	  src/index/hilbert_rtree.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/hilbert_rtree.h"

#include <math.h>

#include "geom/hilbert.h"
#include "stats/jsonbuild.h"

/* The Hilbert R-tree's options, read once by hilbert_setup. */
typedef struct HilbertOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	OptionBox	extent;
	int64		siblings;
	int64		min_fill;
	int64		max_fill;
} HilbertOptions;

static const OptionSpec hilbert_options[] = {
	{
		.name = "extent", .type = OPT_BOX,
		.description = "The space the Hilbert curve covers [xmin, ymin, xmax, ymax]; the source's extent when not given. Objects outside it are clamped to its border.",
		.offset = offsetof(HilbertOptions, extent)
	},
	{
		.name = "siblings", .type = OPT_INT, .default_number = 2,
		.min = 1, .max = 8,
		.description = "Cooperating siblings s: an overflow is shared among s nodes and splits s into s + 1 (Kamel & Faloutsos 1994, section 3.2).",
		.offset = offsetof(HilbertOptions, siblings)
	},
	{
		.name = "min_fill", .type = OPT_INT, .default_number = 40,
		.min = 1, .max = 100,
		.description = "Minimum node occupancy m, in percent of the maximum M.",
		.offset = offsetof(HilbertOptions, min_fill)
	},
	{
		.name = "max_fill", .type = OPT_INT, .default_number = 100,
		.min = 10, .max = 100,
		.description = "Maximum node occupancy M, in percent of the entries a page holds.",
		.offset = offsetof(HilbertOptions, max_fill)
	},
	{0}
};

static const BuildMethod hilbert_build_methods[] = {
	{"hilbert", "Hilbert-sorted packing: objects sorted by the Hilbert value of their centres, leaves filled to M, levels built bottom-up"},
	{NULL, NULL}
};

/* ------------------------------------------------------------------ */
/* entries                                                            */
/* ------------------------------------------------------------------ */

void
hilbert_entry_key(const void *entry, uint16 level, HilbertKey *key)
{
	if (level == 0)
	{
		const HilbertLeafEntry *e = (const HilbertLeafEntry *) entry;

		key->h = e->hilbert;
		key->id = e->id;
	}
	else
	{
		const HilbertInternalEntry *e = (const HilbertInternalEntry *) entry;

		key->h = e->lhv;
		key->id = e->lhv_id;
	}
}

/*
 * Identity for eFIND: the key, then for internal entries lhv_only (the
 * child that also holds smaller keys comes first among equal LHVs) and the
 * child page.  Leaf entries with equal keys (the same object inserted
 * twice with the same centre) are told apart by eFIND through their bytes,
 * as hilbert_entry_cmp does.
 */
static int
compare_identity(const void *a, const void *b, uint16 level)
{
	HilbertKey	ka;
	HilbertKey	kb;
	int			c;

	hilbert_entry_key(a, level, &ka);
	hilbert_entry_key(b, level, &kb);
	c = hilbert_key_cmp(&ka, &kb);
	if (c != 0 || level == 0)
		return c;
	{
		const HilbertInternalEntry *ea = (const HilbertInternalEntry *) a;
		const HilbertInternalEntry *eb = (const HilbertInternalEntry *) b;

		if (ea->lhv_only != eb->lhv_only)
			return ea->lhv_only < eb->lhv_only ? -1 : 1;
		return ea->child < eb->child ? -1 : (ea->child > eb->child ? 1 : 0);
	}
}

/* The order of entries inside a node: eFIND's order (see the header). */
int
hilbert_entry_cmp(const void *a, const void *b, uint16 level)
{
	int			c = compare_identity(a, b, level);

	if (c != 0)
		return c;
	return memcmp(a, b, level == 0 ? sizeof(HilbertLeafEntry) : sizeof(HilbertInternalEntry));
}

static int
entry_cmp_qsort(const void *a, const void *b, void *arg)
{
	return hilbert_entry_cmp(a, b, *(const uint16 *) arg);
}

static void
entry_mbr(const void *entry, uint16 level, Mbr *box)
{
	/* both entry kinds start with the MBR */
	*box = *(const Mbr *) entry;
}

static int64
entry_ref(const void *entry, uint16 level)
{
	if (level == 0)
		return ((const HilbertLeafEntry *) entry)->id;
	return ((const HilbertInternalEntry *) entry)->child;
}

const NodeOps hilbert_node_ops = {
	.structure = "hilbert",
	.leaf_entry_size = sizeof(HilbertLeafEntry),
	.internal_entry_size = sizeof(HilbertInternalEntry),
	.compare_identity = compare_identity,
	.entry_mbr = entry_mbr,
	.mbr_first = true,			/* both entry kinds start with the MBR */
	.entry_ref = entry_ref,
	.ordered_entries = true		/* entries in Hilbert order */
};

/*
 * The parent's entry for a child: its MBR, page, LHV (the key of its last
 * entry, as a node is sorted) and whether every key below equals the LHV
 * (among equal keys, an internal entry whose subtree holds smaller ones
 * sorts first, so the first entry tells).  An empty child gets an empty
 * box and the smallest key.
 */
void
hilbert_summary_entry(const TreeNode *child, HilbertInternalEntry *entry)
{
	HilbertKey	first;
	HilbertKey	last;

	memset(entry, 0, sizeof(*entry));
	mbr_set_empty(&entry->box);
	for (uint32 i = 0; i < child->nentries; i++)
		mbr_extend(&entry->box, (const Mbr *) NodeEntry(child, i));
	entry->child = (int64) child->page;
	if (child->nentries == 0)
	{
		entry->lhv_id = PG_INT64_MIN;
		return;
	}
	hilbert_entry_key(NodeEntry(child, 0), child->level, &first);
	hilbert_entry_key(NodeEntry(child, child->nentries - 1), child->level, &last);
	entry->lhv = last.h;
	entry->lhv_id = last.id;
	entry->lhv_only = hilbert_key_cmp(&first, &last) == 0 &&
		(child->level == 0 ||
		 ((const HilbertInternalEntry *) NodeEntry(child, 0))->lhv_only);
}

static void
sort_node(TreeNode *node)
{
	uint16		level = node->level;

	qsort_arg(node->entries, node->nentries, node->entry_size, entry_cmp_qsort, &level);
}

/* Put an entry at its place in the node's order. */
static void
insert_sorted(TreeNode *node, const void *entry)
{
	uint32		lo = 0;
	uint32		hi = node->nentries;

	Assert(node->nentries < node->capacity);
	while (lo < hi)
	{
		uint32		mid = (lo + hi) / 2;

		if (hilbert_entry_cmp(NodeEntry(node, mid), entry, node->level) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(NodeEntry(node, lo + 1), NodeEntry(node, lo),
			(size_t) (node->nentries - lo) * node->entry_size);
	memcpy(NodeEntry(node, lo), entry, node->entry_size);
	node->nentries++;
}

/* Remove an entry, keeping the others in order. */
static void
remove_at(TreeNode *node, int slot)
{
	memmove(NodeEntry(node, slot), NodeEntry(node, slot + 1),
			(size_t) (node->nentries - slot - 1) * node->entry_size);
	node->nentries--;
}

static void
report_empty_internal(StructIndex *idx, const TreeNode *node)
{
	fest_report_corrupt(idx->name, node->page, "An internal node has no entries.");
}

/* ------------------------------------------------------------------ */
/* cooperating siblings                                               */
/* ------------------------------------------------------------------ */

/*
 * Up to want children of parent around slot: the window starts at slot
 * and is shifted left when it would pass the parent's last entry.
 */
static int
sibling_window(const TreeNode *parent, int slot, int want, int *count)
{
	int			n = (int) parent->nentries;
	int			first;

	*count = Min(want, n);
	first = Min(slot, n - *count);
	return first;
}

/*
 * The nodes of a window, the one on the path (already changed in memory)
 * included, and all their entries sorted.
 */
static char *
gather_window(StructIndex *idx, TreeNode *parent, int first, int count,
			  int path_slot, TreeNode *path_node, TreeNode **nodes, uint32 *total)
{
	uint32		esize = path_node->entry_size;
	uint32		n = 0;
	char	   *all;
	uint16		level = path_node->level;

	for (int i = 0; i < count; i++)
	{
		if (first + i == path_slot)
			nodes[i] = path_node;
		else
			nodes[i] = tree_read_child(idx, parent,
									   ((HilbertInternalEntry *) NodeEntry(parent, first + i))->child);
		n += nodes[i]->nentries;
	}
	all = palloc((size_t) Max(n, 1) * esize);
	n = 0;
	for (int i = 0; i < count; i++)
	{
		memcpy(all + (size_t) n * esize, nodes[i]->entries, (size_t) nodes[i]->nentries * esize);
		n += nodes[i]->nentries;
	}
	/* already in order when the tree is; sorting keeps it so regardless */
	qsort_arg(all, n, esize, entry_cmp_qsort, &level);
	*total = n;
	return all;
}

/*
 * Deal total sorted entries into nnodes consecutive nodes as evenly as
 * possible (the first total % nnodes get one more), writing each node
 * whose contents change; the path node is always written, as its version
 * in memory differs from the stored one.  Nodes marked fresh were just
 * allocated.
 */
static void
deal_entries(StructIndex *idx, const char *all, uint32 total, TreeNode **nodes,
			 int nnodes, const TreeNode *path_node, const bool *fresh)
{
	uint32		esize = nodes[0]->entry_size;
	uint32		offset = 0;

	for (int i = 0; i < nnodes; i++)
	{
		uint32		take = total / nnodes + ((uint32) i < total % nnodes ? 1 : 0);
		const char *chunk = all + (size_t) offset * esize;
		TreeNode   *node = nodes[i];

		offset += take;
		if (!fresh[i] && node != path_node && node->nentries == take &&
			memcmp(node->entries, chunk, (size_t) take * esize) == 0)
			continue;
		memcpy(node->entries, chunk, (size_t) take * esize);
		node->nentries = take;
		ns_write(idx->ns, node, fresh[i] ? NS_WRITE_NEW : NS_WRITE_REPLACE);
	}
}

/* Refresh the parent's entries for nodes[0..count-1] at slots first.. */
static void
refresh_window_entries(TreeNode *parent, int first, TreeNode **nodes, int count)
{
	for (int i = 0; i < count; i++)
		hilbert_summary_entry(nodes[i], (HilbertInternalEntry *) NodeEntry(parent, first + i));
}

/*
 * HandleOverflow (section 3.2, H1-H4): the node at parent's slot holds
 * M + 1 entries.  Share them with s - 1 cooperating siblings; if all s are
 * full, add a node and share among s + 1.  The parent's entries are
 * refreshed (and a new one added) in memory; the caller writes it.
 */
static void
handle_overflow(StructIndex *idx, TreeNode *parent, int slot, TreeNode *node)
{
	HilbertState *st = (HilbertState *) idx->state;
	uint32		max = hilbert_max_entries(st, node->level);
	int			count;
	int			first = sibling_window(parent, slot, (int) st->siblings, &count);
	TreeNode  **nodes = palloc((count + 1) * sizeof(TreeNode *));
	bool	   *fresh = palloc0((count + 1) * sizeof(bool));
	uint32		total;
	char	   *all;
	int			nnodes = count;
	int64		start = fest_now_ns();

	all = gather_window(idx, parent, first, count, slot, node, nodes, &total);
	if (total > (uint32) count * max)
	{
		/* all s siblings are full: split s into s + 1 */
		nodes[count] = ns_new_node(idx->ns, ns_alloc(idx->ns, node->level), node->level);
		fresh[count] = true;
		nnodes = count + 1;
		if (node->level == 0)
			idx->stats->splits_leaf++;
		else
			idx->stats->splits_internal++;
	}
	deal_entries(idx, all, total, nodes, nnodes, node, fresh);
	refresh_window_entries(parent, first, nodes, count);
	if (nnodes > count)
	{
		HilbertInternalEntry added;

		hilbert_summary_entry(nodes[count], &added);
		insert_sorted(parent, &added);
	}
	sort_node(parent);
	if (nnodes > count)
		idx->stats->split_ns += fest_now_ns() - start;
}

/*
 * HandleUnderflow (section 3.3, D3): the node at parent's slot holds fewer
 * than m entries.  Borrow from s cooperating siblings when together they
 * hold enough for every one of the s + 1 nodes; otherwise merge the s + 1
 * into s, freeing the last page of the window.
 */
static void
handle_underflow(StructIndex *idx, TreeNode *parent, int slot, TreeNode *node)
{
	HilbertState *st = (HilbertState *) idx->state;
	uint32		min = hilbert_min_entries(st, node->level);
	int			count;
	int			first = sibling_window(parent, slot, (int) st->siblings + 1, &count);
	TreeNode  **nodes = palloc(count * sizeof(TreeNode *));
	bool	   *fresh = palloc0(count * sizeof(bool));
	uint32		total;
	char	   *all;

	all = gather_window(idx, parent, first, count, slot, node, nodes, &total);
	if (count == 1 || total >= (uint32) count * min)
	{
		deal_entries(idx, all, total, nodes, count, node, fresh);
		refresh_window_entries(parent, first, nodes, count);
	}
	else
	{
		/* merge s + 1 into s: the last node of the window goes */
		TreeNode   *gone = nodes[count - 1];

		deal_entries(idx, all, total, nodes, count - 1, node, fresh);
		refresh_window_entries(parent, first, nodes, count - 1);
		ns_release(idx->ns, gone->page);
		remove_at(parent, first + count - 1);
	}
	sort_node(parent);
}

/*
 * Refresh the parent's entry for a child that changed without splitting
 * or underflowing; true if the entry changed.
 */
static bool
refresh_parent_entry(TreeNode *parent, int slot, const TreeNode *child)
{
	HilbertInternalEntry *pe = (HilbertInternalEntry *) NodeEntry(parent, slot);
	HilbertInternalEntry fresh;

	hilbert_summary_entry(child, &fresh);
	if (memcmp(pe, &fresh, sizeof(fresh)) == 0)
		return false;
	*pe = fresh;
	/* a changed LHV may move the entry (only among equal keys) */
	sort_node(parent);
	return true;
}

/* A root with M + 1 entries: split it in two under a new root. */
static void
grow_root(StructIndex *idx, TreeNode *root)
{
	TreeNode   *halves[2];
	bool		fresh[2] = {false, true};
	TreeNode   *new_root;
	HilbertInternalEntry half;
	char	   *all = palloc((size_t) root->nentries * root->entry_size);
	uint32		total = root->nentries;
	int64		start = fest_now_ns();

	memcpy(all, root->entries, (size_t) total * root->entry_size);
	halves[0] = root;
	halves[1] = ns_new_node(idx->ns, ns_alloc(idx->ns, root->level), root->level);
	deal_entries(idx, all, total, halves, 2, root, fresh);
	if (root->level == 0)
		idx->stats->splits_leaf++;
	else
		idx->stats->splits_internal++;

	new_root = ns_new_node(idx->ns, ns_alloc(idx->ns, root->level + 1), root->level + 1);
	hilbert_summary_entry(halves[0], &half);
	insert_sorted(new_root, &half);
	hilbert_summary_entry(halves[1], &half);
	insert_sorted(new_root, &half);
	ns_write(idx->ns, new_root, NS_WRITE_NEW);
	ns_set_root(idx->ns, new_root->page, idx->ns->meta->height + 1);
	idx->stats->split_ns += fest_now_ns() - start;
}

/*
 * AdjustTree (sections 3.2 and 3.3): path[depth].node was changed in
 * memory.  From it up to the root, overflowing nodes are split,
 * underflowing ones borrow or merge, and parents' MBRs and LHVs are
 * refreshed; the walk stops at the first level where nothing changed.
 * Then the root is grown or shortened as needed.
 */
static void
adjust_tree(StructIndex *idx, PathStep *path, int depth)
{
	HilbertState *st = (HilbertState *) idx->state;
	bool		changed = true;
	TreeNode   *root;

	for (int d = depth; d > 0; d--)
	{
		TreeNode   *node = path[d].node;
		TreeNode   *parent = path[d - 1].node;
		int			slot = path[d - 1].slot;

		if (!changed)
			return;
		if (node->nentries > hilbert_max_entries(st, node->level))
		{
			handle_overflow(idx, parent, slot, node);
			changed = true;
		}
		else if (node->nentries < hilbert_min_entries(st, node->level))
		{
			handle_underflow(idx, parent, slot, node);
			changed = true;
		}
		else
		{
			ns_write(idx->ns, node, NS_WRITE_UPDATE);
			changed = refresh_parent_entry(parent, slot, node);
		}
	}
	if (!changed)
		return;

	root = path[0].node;
	if (root->nentries > hilbert_max_entries(st, root->level))
	{
		grow_root(idx, root);
		return;
	}
	ns_write(idx->ns, root, NS_WRITE_UPDATE);

	/* D4: a root with a single child is replaced by the child */
	while (root->level > 0 && root->nentries == 1)
	{
		PageId		child = (PageId) ((HilbertInternalEntry *) NodeEntry(root, 0))->child;

		ns_release(idx->ns, root->page);
		ns_set_root(idx->ns, child, idx->ns->meta->height - 1);
		root = tree_read_root(idx);
	}
}

/* ------------------------------------------------------------------ */
/* insert                                                             */
/* ------------------------------------------------------------------ */

/* ChooseLeaf step C3: the first entry whose LHV exceeds key, else the last. */
static int
choose_child(StructIndex *idx, const TreeNode *node, const HilbertKey *key)
{
	uint32		lo = 0;
	uint32		hi = node->nentries;

	/* binary search: the node is sorted by LHV */
	while (lo < hi)
	{
		uint32		mid = (lo + hi) / 2;
		HilbertKey	k;

		hilbert_entry_key(NodeEntry(node, mid), node->level, &k);
		if (hilbert_key_cmp(&k, key) > 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	idx->stats->entries_examined += (int64) ceil(log2((double) node->nentries + 1));
	return (int) Min(lo, node->nentries - 1);
}

static void
hilbert_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	HilbertState *st = (HilbertState *) idx->state;
	HilbertLeafEntry entry;
	HilbertKey	key;
	PathStep	path[FEST_MAX_LEVELS];
	TreeNode   *node = tree_read_root(idx);
	int			depth = 0;

	entry.box = *box;
	entry.id = id;
	entry.hilbert = hilbert_of_box(&st->extent, box);
	key.h = entry.hilbert;
	key.id = id;

	while (node->level > 0)
	{
		int			slot;

		if (node->nentries == 0)
			report_empty_internal(idx, node);
		slot = choose_child(idx, node, &key);
		path[depth].node = node;
		path[depth].slot = slot;
		depth++;
		node = tree_read_child(idx, node, ((HilbertInternalEntry *) NodeEntry(node, slot))->child);
	}
	path[depth].node = node;
	path[depth].slot = -1;

	insert_sorted(node, &entry);
	adjust_tree(idx, path, depth);
}

/* ------------------------------------------------------------------ */
/* find, delete                                                       */
/* ------------------------------------------------------------------ */

/*
 * FindLeaf: depth-first through every child whose MBR covers the box and
 * whose LHV is at least the key (both hold for the subtree holding the
 * entry, whatever the order of equal keys).  On success path[0..depth]
 * leads to the leaf and path[depth].slot is the entry.
 */
static bool
find_leaf(StructIndex *idx, TreeNode *node, int depth, const HilbertLeafEntry *target,
		  PathStep *path, int *found_depth)
{
	HilbertKey	key = {target->hilbert, target->id};

	path[depth].node = node;
	idx->stats->entries_examined += node->nentries;

	if (node->level == 0)
	{
		for (uint32 i = 0; i < node->nentries; i++)
		{
			HilbertLeafEntry *e = (HilbertLeafEntry *) NodeEntry(node, i);

			if (e->id == target->id && e->hilbert == target->hilbert &&
				mbr_equals(&e->box, &target->box))
			{
				path[depth].slot = i;
				*found_depth = depth;
				return true;
			}
		}
		return false;
	}

	for (uint32 i = 0; i < node->nentries; i++)
	{
		HilbertInternalEntry *e = (HilbertInternalEntry *) NodeEntry(node, i);
		HilbertKey	lhv = {e->lhv, e->lhv_id};
		TreeNode   *child;

		if (hilbert_key_cmp(&lhv, &key) < 0 || !mbr_contains(&e->box, &target->box))
			continue;
		path[depth].slot = i;
		child = tree_read_child(idx, node, e->child);
		if (find_leaf(idx, child, depth + 1, target, path, found_depth))
			return true;
		tree_free_node(child);
	}
	return false;
}

static bool
locate(StructIndex *idx, int64 id, const Mbr *box, PathStep *path, int *depth)
{
	HilbertState *st = (HilbertState *) idx->state;
	HilbertLeafEntry target;

	target.box = *box;
	target.id = id;
	target.hilbert = hilbert_of_box(&st->extent, box);
	return find_leaf(idx, tree_read_root(idx), 0, &target, path, depth);
}

static bool
hilbert_contains(StructIndex *idx, int64 id, const Mbr *box)
{
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;

	return locate(idx, id, box, path, &depth);
}

static bool
hilbert_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;

	if (!locate(idx, id, box, path, &depth))
		return false;
	remove_at(path[depth].node, path[depth].slot);
	adjust_tree(idx, path, depth);
	return true;
}

/* ------------------------------------------------------------------ */
/* set-up                                                             */
/* ------------------------------------------------------------------ */

static void
hilbert_init_empty(StructIndex *idx)
{
	TreeNode   *root = ns_new_node(idx->ns, ns_alloc(idx->ns, 0), 0);

	ns_write(idx->ns, root, NS_WRITE_NEW);
	ns_set_root(idx->ns, root->page, 1);
}

/*
 * M per level from the page size and max_fill, m from min_fill.  Sharing
 * s full nodes among s + 1 and merging s + 1 nodes into s both stay within
 * [m, M] when 2 <= m <= (M + 1) / 2 (the case s = 1 is the tightest).
 */
static void
capacities(const FestConfig *config, const HilbertOptions *opts,
		   uint32 page_size, uint32 entry_size,
		   const char *what, uint32 *max_entries, uint32 *min_entries)
{
	uint32		per_page = (page_size - FEST_PAGE_HEADER_SIZE) / entry_size;
	int64		max_fill = opts->max_fill;
	int64		min_fill = opts->min_fill;

	OPTIONS_ASSERT_FILLED(opts);

	*max_entries = (uint32) floor((double) per_page * max_fill / 100.0);
	*min_entries = Max(2, (uint32) ceil((double) *max_entries * min_fill / 100.0));
	if (*max_entries < 4)
		config_error(config,
					 psprintf("A %u-byte page with max_fill %d%% holds %u %s entries of %u bytes; a Hilbert R-tree node needs at least 4.",
							  page_size, (int) max_fill, *max_entries, what, entry_size),
					 "Use a larger page_size or max_fill.");
	if (2 * *min_entries > *max_entries + 1)
		config_error(config,
					 psprintf("min_fill %d%% of M = %u (%s nodes) gives m = %u, but splitting a full node in two can only guarantee %u per node.",
							  (int) min_fill, *max_entries, what, *min_entries,
							  (*max_entries + 1) / 2),
					 "Use min_fill of at most 50.");
}

static void *
hilbert_setup(const FestConfig *config, uint32 page_size)
{
	HilbertState *st = palloc0(sizeof(HilbertState));
	HilbertOptions opts;

	OPTIONS_FILL(config, hilbert_options, &opts);
	if (!opts.extent.set)
		config_error(config,
					 "The Hilbert R-tree maps its space onto a Hilbert curve and needs the extent of that space.",
					 "Give options => '{\"extent\": [xmin, ymin, xmax, ymax]}', or create the index with a source table.");
	st->extent.xmin = opts.extent.xmin;
	st->extent.ymin = opts.extent.ymin;
	st->extent.xmax = opts.extent.xmax;
	st->extent.ymax = opts.extent.ymax;
	capacities(config, &opts, page_size, sizeof(HilbertLeafEntry), "leaf",
			   &st->max_leaf, &st->min_leaf);
	capacities(config, &opts, page_size, sizeof(HilbertInternalEntry), "internal",
			   &st->max_internal, &st->min_internal);
	st->siblings = (uint32) opts.siblings;
	return st;
}

static void
hilbert_describe(StructIndex *idx, JsonbParseState **state)
{
	HilbertState *st = (HilbertState *) idx->state;

	jb_int(state, "max_leaf_entries", st->max_leaf);
	jb_int(state, "min_leaf_entries", st->min_leaf);
	jb_int(state, "max_internal_entries", st->max_internal);
	jb_int(state, "min_internal_entries", st->min_internal);
	jb_int(state, "leaf_entry_bytes", sizeof(HilbertLeafEntry));
	jb_int(state, "internal_entry_bytes", sizeof(HilbertInternalEntry));
	jb_int(state, "siblings", st->siblings);
}

const StructureOps hilbert_rtree_structure = {
	.name = "hilbert",
	.description = "Hilbert R-tree (Kamel & Faloutsos 1994)",
	.options = hilbert_options,
	.node_ops = &hilbert_node_ops,
	.setup = hilbert_setup,
	.init_empty = hilbert_init_empty,
	.insert = hilbert_insert,
	.remove = hilbert_remove,
	.contains = hilbert_contains,
	.check = hilbert_check,
	.describe = hilbert_describe,
	.needs_extent = true,
	.build_methods = hilbert_build_methods,
	.bulk_load = hilbert_bulk_load,
	.bulk_spill_begin = hilbert_spill_begin,
	.bulk_spill_put = hilbert_spill_put,
	.bulk_spill_load = hilbert_spill_load
};
