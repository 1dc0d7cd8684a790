/*-------------------------------------------------------------------------
 *
 * gridfile_root.c
 *	  The grid file's root directory, held in memory (Fevgas 2019, §3.1,
 *	  §3.3; Hinrichs 1985): the root scales, the root grid array, and the
 *	  root pages that persist them (layouts: gridfile.h).
 *
 * The thesis keeps the root directory in RAM: a lookup costs a binary
 * search of the root scales and no page access.  festival keeps it in the
 * structure's state, which belongs to the open index (a handle of one
 * session), together with a decoded copy of every root page (levels >= 2).
 * A copy in memory could go stale in two ways, and neither can happen:
 *
 *	- Something other than this state changes the file: a FAST or eFIND
 *	  log replay, LB-Grid's restore, a reload after an ERROR, another
 *	  session.  Replays and restores run when an index is opened, and every
 *	  open (a reload included) sets the structure up afresh, so the copy is
 *	  made from the file as it is then; another session can change the
 *	  index only after this one let go of it (one session at a time holds
 *	  an index, DESIGN.md §4), and a handle that let go is discarded.
 *	- The copy and the file part ways inside one session: every change of
 *	  the root directory goes through gf_root_replace, which marks the copy
 *	  invalid before it starts and makes it again from the pages it wrote
 *	  when it ends, and an ERROR in between leaves it invalid (and the
 *	  handle to be reloaded: the operation touched its store).
 *
 * As a check of both, the meta page's structure area carries a version of
 * the root directory (GfMetaState.root_version, changed with every change
 * of the root directory and kept in the meta FAST and eFIND log and the
 * write-through store commits), and every operation compares it, the root
 * page and the height with what the copy was made from (gf_root): any
 * difference, whatever its cause, makes the copy again from the pages,
 * through the node store.  festival.check() compares the copy with one
 * made afresh from the pages.
 *
 * The root pages are written only when the root directory changes (a
 * sub-directory split or merge) and read only to make the copy (the first
 * operation after an open); a lookup never reads them.
 *
 * IDENTIFICATION
 *	  src/index/gridfile_root.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"

#include "miscadmin.h"
#include "stats/jsonbuild.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* A root page, decoded. */
typedef struct GfRootPage
{
	PageId		page;			/* hash key */
	TreeNode   *node;			/* in GfRoot.cxt */
} GfRootPage;

struct GfRoot
{
	MemoryContext cxt;			/* the copies: emptied at each load */
	MemoryContext grid_cxt;		/* the grid and the sub-directories: made
								 * again at each change */
	bool		valid;			/* made from the pages, and whole */
	uint64		version;		/* the meta's root_version it was made from */
	PageId		top;
	uint32		height;
	HTAB	   *pages;			/* GfRootPage by page */
	/* the root directory: its sub-directories in region order */
	int			nsubs;
	uint64	   *sub_addr;
	PageId	   *sub_page;
	PageId	   *sub_holder;		/* the level-2 page holding its entry */
	GfGrid		grid;			/* the root scales and grid array */
};

static GfMetaState *
meta_state(FestMeta *meta)
{
	return (GfMetaState *) meta->structure_state;
}

/* Does the file hold this version's layout (gridfile.h)? */
bool
gf_layout_current(const FestMeta *meta)
{
	const GfMetaState *ms = (const GfMetaState *) meta->structure_state;

	return ms->magic == GF_META_MAGIC && ms->layout == GF_LAYOUT_VERSION;
}

static void
refuse_layout(StructIndex *idx)
{
	const GfMetaState *ms = (const GfMetaState *) idx->ns->meta->structure_state;

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("index \"%s\" was written by an older layout of the grid file", idx->name),
			 ms->magic == 0
			 ? errdetail("Its directory is a multi-level tree of 48-byte regions (grid file layout 1); this version keeps the two-level grid file, its root directory in memory and each directory page a grid array (layout %d).",
						 GF_LAYOUT_VERSION)
			 : errdetail("Its meta page names grid file layout %u (magic %08X); this version reads layout %d.",
						 ms->layout, ms->magic, GF_LAYOUT_VERSION),
			 errhint("Rebuild it with festival.build('%s').", idx->name)));
}

/* StructureOps.check_layout of both grid files. */
void
gf_check_layout(StructIndex *idx)
{
	if (!gf_layout_current(idx->ns->meta))
		refuse_layout(idx);
}

GfRoot *
gf_root_create(MemoryContext parent)
{
	GfRoot	   *root = MemoryContextAllocZero(parent, sizeof(GfRoot));

	root->cxt = AllocSetContextCreate(parent, "grid file root pages",
									  ALLOCSET_DEFAULT_SIZES);
	root->grid_cxt = AllocSetContextCreate(parent, "grid file root directory",
										   ALLOCSET_DEFAULT_SIZES);
	root->valid = false;
	return root;
}

static void
empty_copies(GfRoot *root)
{
	HASHCTL		ctl;

	root->valid = false;
	MemoryContextReset(root->cxt);
	MemoryContextReset(root->grid_cxt);
	memset(&root->grid, 0, sizeof(GfGrid));
	root->nsubs = 0;
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(GfRootPage);
	ctl.hcxt = root->cxt;
	root->pages = hash_create("grid file root pages", 16, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

static GfRoot *
state_root(StructIndex *idx)
{
	GfRoot	   *root = ((GfState *) idx->state)->root;

	if (root->pages == NULL)
		empty_copies(root);
	return root;
}

/* Keep (a copy of) a root page just read or written. */
static void
note_page(GfRoot *root, const TreeNode *node)
{
	bool		found;
	GfRootPage *rp = hash_search(root->pages, &node->page, HASH_ENTER, &found);

	if (found)
		tree_free_node(rp->node);
	rp->node = ns_copy_node(node, root->cxt);
}

void
gf_root_note(StructIndex *idx, const TreeNode *node)
{
	Assert(node->level >= GF_LEVEL_ROOT);
	note_page(state_root(idx), node);
}

static void
forget_page(GfRoot *root, PageId page)
{
	GfRootPage *rp = hash_search(root->pages, &page, HASH_FIND, NULL);

	if (rp == NULL)
		return;
	tree_free_node(rp->node);
	hash_search(root->pages, &page, HASH_REMOVE, NULL);
}

/*
 * The copy of root page `page` at `level`, read through the store when
 * there is none (loading; a copy a change did not keep).
 */
static const TreeNode *
root_page(StructIndex *idx, GfRoot *root, PageId page, int level)
{
	GfRootPage *rp = hash_search(root->pages, &page, HASH_FIND, NULL);
	TreeNode   *node;

	if (rp != NULL)
	{
		if (rp->node->level != level)
			tree_report_bad_level(idx, rp->node, level);
		return rp->node;
	}
	node = tree_read_node(idx, (int64) page, (uint16) level);
	if (node->level != level)
		tree_report_bad_level(idx, node, level);
	note_page(root, node);
	tree_free_node(node);
	rp = hash_search(root->pages, &page, HASH_FIND, NULL);
	return rp->node;
}

/* A copy of a root page to change (in the current context). */
static TreeNode *
root_page_to_change(StructIndex *idx, GfRoot *root, PageId page, int level)
{
	return ns_copy_node(root_page(idx, root, page, level), CurrentMemoryContext);
}

/*
 * Read every root page not yet copied, level by level from the top, each
 * level's pages in batches (one submission each under a batched engine).
 */
static void
read_root_pages(StructIndex *idx, GfRoot *root)
{
	FestMeta   *meta = idx->ns->meta;
	PageId	   *level = palloc(sizeof(PageId));
	int			nlevel = 1;

	level[0] = meta->root;
	for (int lv = (int) meta->height - 1; lv >= GF_LEVEL_ROOT; lv--)
	{
		PageId	   *next = NULL;
		int			nnext = 0;
		int			maxnext = 0;

		for (int i = 0; i < nlevel; i += 64)
		{
			PageId		pages[64];
			TreeNode   *nodes[64];
			int			n = 0;

			CHECK_FOR_INTERRUPTS();
			for (int k = i; k < Min(i + 64, nlevel); k++)
				if (hash_search(root->pages, &level[k], HASH_FIND, NULL) == NULL)
					pages[n++] = level[k];
			if (n > 0)
				ns_read_many(idx->ns, pages, n, nodes);
			for (int k = 0; k < n; k++)
			{
				if (nodes[k]->level != lv)
					tree_report_bad_level(idx, nodes[k], lv);
				note_page(root, nodes[k]);
				tree_free_node(nodes[k]);
			}
			if (lv == GF_LEVEL_ROOT)
				continue;
			for (int k = i; k < Min(i + 64, nlevel); k++)
			{
				const TreeNode *node = root_page(idx, root, level[k], lv);

				for (uint32 e = 0; e < node->nentries; e++)
				{
					if (nnext == maxnext)
					{
						maxnext = Max(16, 2 * maxnext);
						next = next == NULL ? palloc(maxnext * sizeof(PageId))
							: repalloc(next, maxnext * sizeof(PageId));
					}
					next[nnext++] = (PageId) GfDirEntries(node)[e].child;
				}
			}
		}
		pfree(level);
		level = next;
		nlevel = nnext;
	}
	if (level != NULL)
		pfree(level);
}

typedef struct RootWalk
{
	int			n;
	int			max;
	uint64	   *addr;
	PageId	   *page;
	PageId	   *holder;
} RootWalk;

/*
 * Collect the level-2 entries below page, reached through an entry of
 * region `region`.  Only entries inside that region count: a crash in the
 * middle of a write-through commit can leave a root page that split with
 * its old content while the page above already names its halves (the
 * commit writes parents first: entries are then duplicated, never lost),
 * and each copy counts where its parent's entry puts it.
 */
static void
walk_root(StructIndex *idx, GfRoot *root, RootWalk *w, PageId page, int level,
		  uint64 region)
{
	const TreeNode *node = root_page(idx, root, page, level);

	CHECK_FOR_INTERRUPTS();
	check_stack_depth();
	if (node->nentries == 0)
		fest_report_corrupt(idx->name, page, "A root directory page has no entries.");
	for (uint32 i = 0; i < node->nentries; i++)
	{
		const GfDirEntry *e = &GfDirEntries(node)[i];

		if (e->addr == 0 || gf_addr_len(e->addr) > GF_MAX_DEPTH)
			fest_report_corrupt(idx->name, page,
								"A root directory page holds a malformed region.");
		if (!gf_addr_contains(region, e->addr))
			continue;
		if (w->n > 0 && level == GF_LEVEL_ROOT && gf_addr_cmp(w->addr[w->n - 1], e->addr) >= 0)
			fest_report_corrupt(idx->name, page,
								"A root directory page holds a misplaced region.");
		if (level > GF_LEVEL_ROOT)
		{
			walk_root(idx, root, w, (PageId) e->child, level - 1, e->addr);
			continue;
		}
		if (w->n == w->max)
		{
			w->max *= 2;
			w->addr = repalloc_huge(w->addr, w->max * sizeof(uint64));
			w->page = repalloc_huge(w->page, w->max * sizeof(PageId));
			w->holder = repalloc_huge(w->holder, w->max * sizeof(PageId));
		}
		w->addr[w->n] = e->addr;
		w->page[w->n] = (PageId) e->child;
		w->holder[w->n] = page;
		w->n++;
	}
}

/*
 * Make the root directory (its sub-directories, scales and grid array)
 * from the copies of the root pages, reading those not copied.
 */
static void
root_rebuild(StructIndex *idx, GfRoot *root)
{
	FestMeta   *meta = idx->ns->meta;
	MemoryContext old;
	RootWalk	w;

	root->valid = false;
	if (meta->height < GF_MIN_HEIGHT || meta->height > FEST_MAX_LEVELS)
		fest_report_corrupt(idx->name, meta->root,
							psprintf("The index has %u levels; a two-level grid file has at least %d.",
									 meta->height, GF_MIN_HEIGHT));
	MemoryContextReset(root->grid_cxt);
	memset(&root->grid, 0, sizeof(GfGrid));
	old = MemoryContextSwitchTo(root->grid_cxt);
	w.n = 0;
	w.max = 16;
	w.addr = palloc(w.max * sizeof(uint64));
	w.page = palloc(w.max * sizeof(PageId));
	w.holder = palloc(w.max * sizeof(PageId));
	walk_root(idx, root, &w, meta->root, (int) meta->height - 1, GF_ROOT_ADDR);
	/* the regions must tile the extent (gf_grid_build reports a gap) */
	root->nsubs = w.n;
	root->sub_addr = w.addr;
	root->sub_page = w.page;
	root->sub_holder = w.holder;
	if (w.n == 0 || !gf_grid_build(&root->grid, w.addr, w.n, true))
		fest_report_corrupt(idx->name, meta->root,
							"The sub-directories of the root directory do not tile the extent.");
	MemoryContextSwitchTo(old);
	root->version = meta_state(meta)->root_version;
	root->top = meta->root;
	root->height = meta->height;
	root->valid = true;
}

/*
 * The root directory of the index, made from the pages when the copy in
 * memory is not the one the meta names (see the header).  Refuses a file
 * of an older layout.
 */
GfRoot *
gf_root(StructIndex *idx)
{
	GfRoot	   *root = state_root(idx);
	FestMeta   *meta = idx->ns->meta;

	if (!gf_layout_current(meta))
		refuse_layout(idx);
	if (root->valid && root->version == meta_state(meta)->root_version &&
		root->top == meta->root && root->height == meta->height)
		return root;
	empty_copies(root);
	if (meta->height < GF_MIN_HEIGHT || meta->height > FEST_MAX_LEVELS)
		fest_report_corrupt(idx->name, meta->root,
							psprintf("The index has %u levels; a two-level grid file has at least %d.",
									 meta->height, GF_MIN_HEIGHT));
	read_root_pages(idx, root);
	root_rebuild(idx, root);
	return root;
}

/* The sub-directory whose region holds point (a full address). */
int
gf_root_find(const GfRoot *root, uint64 point)
{
	uint64		px,
				px1,
				py,
				py1;
	int			sub;

	Assert(root->valid);
	gf_region_lines(point, &px, &px1, &py, &py1);
	sub = gf_grid_find(&root->grid, px, py);
	Assert(sub >= 0 && gf_addr_contains(root->sub_addr[sub], point));
	return sub;
}

int
gf_root_count(const GfRoot *root)
{
	return root->nsubs;
}

PageId
gf_root_sub_page(const GfRoot *root, int sub)
{
	Assert(sub >= 0 && sub < root->nsubs);
	return root->sub_page[sub];
}

uint64
gf_root_sub_addr(const GfRoot *root, int sub)
{
	Assert(sub >= 0 && sub < root->nsubs);
	return root->sub_addr[sub];
}

const GfGrid *
gf_root_grid(const GfRoot *root)
{
	return &root->grid;
}

/* The sub-directory of region addr, or -1. */
int
gf_root_sub_by_addr(const GfRoot *root, uint64 addr)
{
	int			a = 0,
				b = root->nsubs - 1;

	while (a <= b)
	{
		int			mid = (a + b) / 2;
		int			c = gf_addr_cmp(root->sub_addr[mid], addr);

		if (c == 0)
			return mid;
		if (c < 0)
			a = mid + 1;
		else
			b = mid - 1;
	}
	return -1;
}

/*
 * The root directory's shape for stats()->'config'->'derived' (when the
 * copy is made): sub-directories and the root grid array's columns and
 * rows.
 */
void
gf_root_describe(StructIndex *idx, JsonbParseState **state)
{
	GfRoot	   *root = ((GfState *) idx->state)->root;

	if (root == NULL || !root->valid)
		return;
	jb_int(state, "root_sub_directories", root->nsubs);
	jb_int(state, "root_grid_columns", root->grid.nx);
	jb_int(state, "root_grid_rows", root->grid.ny);
	jb_int(state, "root_pages", hash_get_num_entries(root->pages));
}

bool
gf_root_same_holder(const GfRoot *root, int a, int b)
{
	return root->sub_holder[a] == root->sub_holder[b];
}

/*
 * The root directory changed (or was made): a new version in the meta,
 * and the copy made again from the root pages.
 */
void
gf_root_changed(StructIndex *idx)
{
	GfRoot	   *root = state_root(idx);
	GfMetaState *ms = meta_state(idx->ns->meta);

	ms->root_version++;
	ns_meta_changed(idx->ns);
	root_rebuild(idx, root);
}

/* Forget every copy: the index is about to be made anew (build). */
void
gf_root_reset(StructIndex *idx)
{
	empty_copies(state_root(idx));
}

/*
 * The root directory of an empty index: one root page whose one cell, the
 * whole extent, is the sub-directory subdir.  Stamps the layout.
 */
void
gf_root_init(StructIndex *idx, PageId subdir)
{
	const GfState *st = (const GfState *) idx->state;
	GfMetaState *ms = meta_state(idx->ns->meta);
	TreeNode   *top;

	gf_root_reset(idx);
	ms->magic = GF_META_MAGIC;
	ms->layout = GF_LAYOUT_VERSION;
	memset(ms->reserved, 0, sizeof(ms->reserved));
	top = ns_new_node(idx->ns, ns_alloc(idx->ns, GF_LEVEL_ROOT), GF_LEVEL_ROOT);
	gf_fill_dir_entry(st, GfDirEntries(top), GF_ROOT_ADDR, subdir);
	top->nentries = 1;
	gf_write_dir(idx, top, NS_WRITE_NEW);
	ns_set_root(idx->ns, top->page, GF_MIN_HEIGHT);
	tree_free_node(top);
	gf_root_changed(idx);
}

/*
 * Write the pieces (gf_cut) of a root page of `level` that overflowed, the
 * first on `page` (kind first_kind), and describe each in made.
 */
static int
write_root_pieces(StructIndex *idx, List *pieces, int level, PageId page,
				  NodeWriteKind first_kind, GfDirEntry *made)
{
	const GfState *st = (const GfState *) idx->state;
	ListCell   *lc;
	int			k = 0;

	foreach(lc, pieces)
	{
		GfPiece    *p = lfirst(lc);
		PageId		pg = (k == 0 && page != InvalidPageId) ? page
			: ns_alloc(idx->ns, (uint16) level);
		TreeNode   *node = ns_new_node(idx->ns, pg, (uint16) level);

		Assert(p->n > 0);
		memcpy(node->entries, p->entries, (size_t) p->n * sizeof(GfDirEntry));
		node->nentries = p->n;
		gf_write_dir(idx, node, (k == 0 && page != InvalidPageId) ? first_kind : NS_WRITE_NEW);
		gf_fill_dir_entry(st, &made[k], p->addr, pg);
		tree_free_node(node);
		k++;
	}
	idx->stats->splits_internal++;
	return k;
}

static void
cut_entries(uint64 region, GfDirEntry *all, int n, uint32 max, List **pieces)
{
	uint64	   *keys = palloc(n * sizeof(uint64));

	for (int i = 0; i < n; i++)
		keys[i] = all[i].addr;
	gf_cut(region, (char *) all, keys, n, sizeof(GfDirEntry), max, pieces);
}

/*
 * The root directory's entries inside region (one sub-directory that
 * split, or the two buddies that merged) give way to the n entries ents,
 * which tile it.  The level-2 page holding them is written; one that
 * overflows is halved as a sub-directory is, and the pages above take its
 * halves (a new top page when the top splits; the first half keeps the
 * page, so after a crash between the writes the page above may name an
 * old, whole page for a half, which walk_root reads for that half only);
 * one left with at most the merge threshold merges with its buddy page
 * onto a new page, as sub-directories do, and a top page with one region
 * above level 2 gives way to its child.  Then the copy in memory is made
 * again (gf_root_changed).
 */
void
gf_root_replace(StructIndex *idx, uint64 region, const GfDirEntry *ents, int n)
{
	const GfState *st = (const GfState *) idx->state;
	GfRoot	   *root = gf_root(idx);
	NodeStore  *ns = idx->ns;
	FestMeta   *meta = ns->meta;
	PathStep	path[FEST_MAX_LEVELS];
	uint64		path_addr[FEST_MAX_LEVELS];
	int			depth = 0;
	TreeNode   *node;
	int			lo,
				hi;
	GfDirEntry *all;
	int			total;

	/* until the copy is made again from what is written below */
	root->valid = false;

	/* the root pages from the top down to the level-2 page holding region */
	node = root_page_to_change(idx, root, meta->root, (int) meta->height - 1);
	path_addr[0] = GF_ROOT_ADDR;
	while (node->level > GF_LEVEL_ROOT)
	{
		int			slot = gf_locate(node, region);

		if (slot < 0)
			fest_report_corrupt(idx->name, node->page,
								"No region of the root directory page holds a sub-directory's region.");
		path[depth].node = node;
		path[depth].slot = slot;
		depth++;
		path_addr[depth] = GfDirEntries(node)[slot].addr;
		node = root_page_to_change(idx, root, (PageId) GfDirEntries(node)[slot].child,
								   node->level - 1);
	}
	path[depth].node = node;
	path[depth].slot = -1;

	gf_entries_inside(node, region, &lo, &hi);
	if (hi == lo)
		fest_report_corrupt(idx->name, node->page,
							"The root directory page holds no region of the sub-directory changed.");
	total = (int) node->nentries - (hi - lo) + n;
	all = palloc(total * sizeof(GfDirEntry));
	memcpy(all, GfDirEntries(node), lo * sizeof(GfDirEntry));
	memcpy(all + lo, ents, n * sizeof(GfDirEntry));
	memcpy(all + lo + n, GfDirEntries(node) + hi, (node->nentries - hi) * sizeof(GfDirEntry));

	for (;;)
	{
		node = path[depth].node;
		if (total > (int) st->dir_max)
		{
			List	   *pieces = NIL;
			GfDirEntry *made;
			int			np;
			TreeNode   *parent;
			int			slot;

			cut_entries(path_addr[depth], all, total, st->dir_max, &pieces);
			made = palloc(list_length(pieces) * sizeof(GfDirEntry));
			np = write_root_pieces(idx, pieces, node->level, node->page,
								   NS_WRITE_REPLACE, made);
			if (depth == 0)
			{
				/* the top page split: new top levels over its pieces */
				int			level = node->level + 1;
				TreeNode   *top;

				for (;;)
				{
					if (level + 1 > FEST_MAX_LEVELS)
						ereport(ERROR,
								(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
								 errmsg("index \"%s\" would exceed %d levels", idx->name, FEST_MAX_LEVELS),
								 errhint("Use a larger page_size.")));
					if (np <= (int) st->dir_max)
						break;
					pieces = NIL;
					cut_entries(GF_ROOT_ADDR, made, np, st->dir_max, &pieces);
					all = palloc(list_length(pieces) * sizeof(GfDirEntry));
					np = write_root_pieces(idx, pieces, level, InvalidPageId,
										   NS_WRITE_NEW, all);
					made = all;
					level++;
				}
				top = ns_new_node(ns, ns_alloc(ns, (uint16) level), (uint16) level);
				memcpy(top->entries, made, np * sizeof(GfDirEntry));
				top->nentries = np;
				gf_write_dir(idx, top, NS_WRITE_NEW);
				ns_set_root(ns, top->page, (uint32) level + 1);
				break;
			}
			parent = path[depth - 1].node;
			slot = path[depth - 1].slot;
			total = (int) parent->nentries + np - 1;
			all = palloc(total * sizeof(GfDirEntry));
			memcpy(all, GfDirEntries(parent), slot * sizeof(GfDirEntry));
			memcpy(all + slot, made, np * sizeof(GfDirEntry));
			memcpy(all + slot + np, GfDirEntries(parent) + slot + 1,
				   (parent->nentries - slot - 1) * sizeof(GfDirEntry));
			depth--;
			continue;
		}

		memcpy(node->entries, all, total * sizeof(GfDirEntry));
		node->nentries = total;
		if (total <= (int) st->dir_merge && depth > 0)
		{
			/* the buddy page of the same parent, when both fit one page */
			TreeNode   *parent = path[depth - 1].node;
			int			slot = path[depth - 1].slot;
			GfDirEntry *pe = GfDirEntries(parent);
			uint64		a = pe[slot].addr;
			bool		high = (a & 1) != 0;
			int			b = high ? slot - 1 : slot + 1;

			if (a != GF_ROOT_ADDR && b >= 0 && b < (int) parent->nentries &&
				pe[b].addr == (a ^ 1))
			{
				const TreeNode *buddy = root_page(idx, root, (PageId) pe[b].child,
												  node->level);

				if (node->nentries + buddy->nentries <= st->dir_max)
				{
					PageId		gone = buddy->page;

					gf_dir_absorb(node, buddy, high);
					forget_page(root, gone);
					ns_release(ns, gone);
					/*
					 * The union on a page of its own, as for sub-directories
					 * (gf_subdir_merge): the page above names it only once
					 * it is written
					 */
					gone = node->page;
					node->page = ns_alloc(ns, node->level);
					gf_write_dir(idx, node, NS_WRITE_NEW);
					forget_page(root, gone);
					ns_release(ns, gone);
					gf_fill_dir_entry(st, &pe[slot], a >> 1, node->page);
					gf_remove_slot(parent, b);
					if (high)
						path[depth - 1].slot--;
					total = (int) parent->nentries;
					all = palloc(total * sizeof(GfDirEntry));
					memcpy(all, GfDirEntries(parent), total * sizeof(GfDirEntry));
					depth--;
					continue;
				}
			}
		}
		gf_write_dir(idx, node, NS_WRITE_UPDATE);
		break;
	}

	/* a top page with one region above level 2 gives way to its child */
	for (;;)
	{
		const TreeNode *top = root_page(idx, root, meta->root, (int) meta->height - 1);
		PageId		child;

		if (top->level <= GF_LEVEL_ROOT || top->nentries != 1)
			break;
		Assert(GfDirEntries(top)[0].addr == GF_ROOT_ADDR);
		child = (PageId) GfDirEntries(top)[0].child;
		ns_release(ns, top->page);
		forget_page(root, top->page);
		ns_set_root(ns, child, meta->height - 1);
	}
	gf_root_changed(idx);
}

/*
 * festival.check(): the root directory in memory (when made) is the one
 * the root pages give now; the root pages themselves are checked by the
 * walk (gridfile_check.c).
 */
void
gf_check_root(StructIndex *idx, CheckReport *report)
{
	GfRoot	   *root = state_root(idx);
	GfRoot	   *fresh;
	MemoryContext cxt = CurrentMemoryContext;
	bool		ok = true;

	/* a copy made from another state is not used: gf_root makes it again */
	if (!root->valid || root->version != meta_state(idx->ns->meta)->root_version ||
		root->top != idx->ns->meta->root || root->height != idx->ns->meta->height)
		return;
	fresh = gf_root_create(CurrentMemoryContext);
	empty_copies(fresh);
	PG_TRY();
	{
		GfState		tmp = *(GfState *) idx->state;
		StructIndex tidx = *idx;

		tmp.root = fresh;
		tidx.state = &tmp;
		read_root_pages(&tidx, fresh);
		root_rebuild(&tidx, fresh);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		ok = false;
	}
	PG_END_TRY();
	if (!ok)
		return;					/* the walk reports the damaged root pages */
	if (fresh->nsubs != root->nsubs ||
		memcmp(fresh->sub_addr, root->sub_addr, root->nsubs * sizeof(uint64)) != 0 ||
		memcmp(fresh->sub_page, root->sub_page, root->nsubs * sizeof(PageId)) != 0 ||
		fresh->grid.nx != root->grid.nx || fresh->grid.ny != root->grid.ny ||
		memcmp(fresh->grid.sx, root->grid.sx, (root->grid.nx + 1) * sizeof(uint64)) != 0 ||
		memcmp(fresh->grid.sy, root->grid.sy, (root->grid.ny + 1) * sizeof(uint64)) != 0 ||
		memcmp(fresh->grid.cells, root->grid.cells,
			   (size_t) root->grid.nx * root->grid.ny * sizeof(int32)) != 0)
		check_error(report, (int64) idx->ns->meta->root,
					"the root directory in memory (%d sub-directories, %d x %d cells) differs from the one its pages hold (%d, %d x %d)",
					root->nsubs, root->grid.nx, root->grid.ny,
					fresh->nsubs, fresh->grid.nx, fresh->grid.ny);
	MemoryContextDelete(fresh->cxt);
	MemoryContextDelete(fresh->grid_cxt);
}
