/*-------------------------------------------------------------------------
 *
 * xbrtree_batch.c
 *	  Point location and batch queries of the xBR+-tree (StructureOps
 *	  search and search_batch).
 *
 * Point location (Roumelis et al., JSS 132 (2017)): a query whose answers
 * can only be indexed points equal to the query point (a point query with
 * any predicate but disjoint; dwithin at distance 0) follows, at each node,
 * the one entry whose quadrant is the longest prefix of the point's address
 * (xbr_locate), the path insertion took, to the one leaf that can hold the
 * point.  The generic depth-first search (traverse.c) would follow every
 * entry whose DBR holds the point, and the DBR of an entry with nested
 * entries may hold theirs too.  Other queries (windows, distance ranges,
 * other shapes) use the DBRs as the generic search does.
 *
 * Batch queries (Fevgas 2019 §3.6, after Roumelis et al., MEDI 2018): the
 * point location, window and distance-range queries of a set are cut into
 * batches that fit in memory, and each batch goes through the tree top down,
 * one level at a time: the nodes of the level that some query of the batch
 * needs are read together, as one group read (ns_read_many: one submission
 * under libaio and io_uring, which split it above 256 pages), and each node
 * is examined for every query of the batch that reaches it.  The generic
 * batch search (batch_search.c) goes depth first and reads at most 64
 * nodes of one level at a time, the siblings on top of its stack.
 *
 * Memory: work_mem.  A batch holds at most work_mem / page_size queries (a
 * point query needs a leaf, so the leaves of a batch of point queries fit),
 * in Z order of their centres so that a batch's queries share nodes; a
 * level whose nodes would not fit in work_mem is read in several groups.
 * Answers are the generic search's: each query emits the same entries,
 * in another order (festival.query_batch sorts them).
 *
 * IDENTIFICATION
 *	  src/index/xbrtree_batch.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/xbrtree.h"

#include "miscadmin.h"

/*
 * The address of the point the query locates, when point location answers
 * it (see the file header); false otherwise.  *outside: the point lies
 * outside the extent, where the index has no point.
 */
static bool
locates_point(const XbrState *st, const SearchSpec *spec, XbrAddr *addr, bool *outside)
{
	*outside = false;
	if (spec->shape != QUERY_POINT || !mbr_is_point(&spec->query))
		return false;
	if (spec->predicate == PRED_DISJOINT)
		return false;
	if (spec->predicate == PRED_DWITHIN && spec->distance != 0)
		return false;
	if (!xbr_point_addr(st, spec->query.xmin, spec->query.ymin, addr))
		*outside = true;
	return true;
}

/* Leaf entries for one query, as the generic searches decide them. */
static void
emit_leaf(const SearchSpec *spec, const TreeNode *leaf)
{
	for (uint32 i = 0; i < leaf->nentries; i++)
	{
		const XbrLeafEntry *e = &XbrLeafEntries(leaf)[i];
		Mbr			box;
		FilterVerdict verdict;

		box.xmin = box.xmax = e->x;
		box.ymin = box.ymax = e->y;
		if (spec->exact_points)
			verdict = predicate_eval_point(spec->predicate, spec->shape,
										   &spec->query, e->x, e->y)
				? FILTER_ACCEPT : FILTER_REJECT;
		else
			verdict = predicate_filter(spec, &box);
		if (verdict != FILTER_REJECT)
			spec->emit(spec->arg, e->id, &box, verdict);
	}
}

/*
 * festival.query: point location for the queries it answers, the generic
 * depth-first search for the others.
 */
void
xbr_search(StructIndex *idx, const SearchSpec *spec)
{
	XbrState   *st = (XbrState *) idx->state;
	XbrAddr		addr;
	bool		outside;
	RootRead	root = {0};
	TreeNode   *node;
	bool		shared;

	if (!locates_point(st, spec, &addr, &outside))
	{
		tree_search(idx, spec);
		return;
	}
	if (outside)
		return;

	ns_read_root(idx->ns, &root);
	node = root.node;
	shared = root.shared;
	if (node->level != idx->ns->meta->height - 1)
		tree_report_bad_level(idx, node, (int) idx->ns->meta->height - 1);
	for (;;)
	{
		int			slot;
		TreeNode   *child;

		idx->stats->entries_examined += node->nentries;
		if (node->level == 0)
		{
			emit_leaf(spec, node);
			break;
		}
		slot = xbr_locate(node, addr);
		if (slot < 0)
			break;				/* no entry's region holds the point */
		child = tree_read_child(idx, node, XbrInternalEntries(node)[slot].child);
		if (!shared)
			tree_free_node(node);
		shared = false;
		node = child;
	}
	if (!shared)
		tree_free_node(node);
}

/* ---- batches ---- */

/* One query of a batch. */
typedef struct BatchQuery
{
	int			spec;			/* index into specs */
	bool		locate;			/* point location */
	XbrAddr		addr;			/* the point's (locate) */
	uint64		order;			/* Z order of the query's centre */
} BatchQuery;

/* A node of the level being read and the queries of the batch that reach it. */
typedef struct Frame
{
	PageId		page;
	int			first;			/* its queries: refs[first .. first + n - 1] */
	int			n;
} Frame;

/* Frames of one level and their query references. */
typedef struct Level
{
	Frame	   *frames;
	int			nframes;
	int			maxframes;
	int		   *refs;			/* indexes into the batch */
	int64		nrefs;
	int64		maxrefs;
} Level;

static int
batch_query_cmp(const void *a, const void *b)
{
	const BatchQuery *x = a;
	const BatchQuery *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->spec < y->spec ? -1 : (x->spec > y->spec ? 1 : 0);
}

static int
frame_page_cmp(const void *a, const void *b)
{
	const Frame *x = a;
	const Frame *y = b;

	return x->page < y->page ? -1 : (x->page > y->page ? 1 : 0);
}

static void
level_init(Level *l)
{
	l->maxframes = 64;
	l->frames = palloc(l->maxframes * sizeof(Frame));
	l->nframes = 0;
	l->maxrefs = 256;
	l->refs = palloc(l->maxrefs * sizeof(int));
	l->nrefs = 0;
}

static void
level_free(Level *l)
{
	pfree(l->frames);
	pfree(l->refs);
}

/* A frame for page whose queries are reach[0 .. n - 1]. */
static void
level_add(Level *l, PageId page, const int *reach, int n)
{
	Frame	   *f;

	if (l->nframes == l->maxframes)
	{
		l->maxframes *= 2;
		l->frames = repalloc_huge(l->frames, l->maxframes * sizeof(Frame));
	}
	while (l->nrefs + n > l->maxrefs)
	{
		l->maxrefs *= 2;
		l->refs = repalloc_huge(l->refs, l->maxrefs * sizeof(int));
	}
	f = &l->frames[l->nframes++];
	f->page = page;
	f->first = (int) l->nrefs;
	f->n = n;
	memcpy(&l->refs[l->nrefs], reach, n * sizeof(int));
	l->nrefs += n;
}

/*
 * One node for the queries of its frame: a leaf emits their answers, an
 * internal node adds a frame below for each entry some of them reach.
 */
static void
visit(StructIndex *idx, const SearchSpec *specs, const BatchQuery *batch,
	  const Level *cur, const Frame *f, const TreeNode *node, Level *next,
	  int *reach, int *located)
{
	const int  *refs = &cur->refs[f->first];

	idx->stats->entries_examined += (int64) node->nentries * f->n;
	if (node->level == 0)
	{
		for (int a = 0; a < f->n; a++)
			emit_leaf(&specs[batch[refs[a]].spec], node);
		return;
	}
	/* each located query follows one entry */
	for (int a = 0; a < f->n; a++)
		located[a] = batch[refs[a]].locate ? xbr_locate(node, batch[refs[a]].addr) : -1;
	for (uint32 i = 0; i < node->nentries; i++)
	{
		const XbrInternalEntry *e = &XbrInternalEntries(node)[i];
		int			nreach = 0;

		for (int a = 0; a < f->n; a++)
		{
			const BatchQuery *q = &batch[refs[a]];

			if (q->locate ? located[a] == (int) i
				: predicate_descend(&specs[q->spec], &e->dbr))
				reach[nreach++] = refs[a];
		}
		if (nreach > 0)
			level_add(next, (PageId) e->child, reach, nreach);
	}
}

/* One batch, top down, a level at a time. */
static void
run_batch(StructIndex *idx, const SearchSpec *specs, const BatchQuery *batch, int n,
		  int group_max)
{
	FestMeta   *meta = idx->ns->meta;
	Level		cur;
	int		   *reach = palloc(n * sizeof(int));
	int		   *located = palloc(n * sizeof(int));
	TreeNode  **nodes = palloc(group_max * sizeof(TreeNode *));
	PageId	   *pages = palloc(group_max * sizeof(PageId));
	int			level = (int) meta->height - 1;

	level_init(&cur);
	for (int a = 0; a < n; a++)
		reach[a] = a;
	level_add(&cur, meta->root, reach, n);
	for (; cur.nframes > 0 && level >= 0; level--)
	{
		Level		next;

		level_init(&next);
		/* pages in file order, the order a batched read likes best */
		qsort(cur.frames, cur.nframes, sizeof(Frame), frame_page_cmp);
		for (int g = 0; g < cur.nframes; g += group_max)
		{
			int			m = Min(group_max, cur.nframes - g);

			CHECK_FOR_INTERRUPTS();
			for (int k = 0; k < m; k++)
				pages[k] = cur.frames[g + k].page;
			tree_read_nodes(idx, pages, m, (uint16) level, nodes);
			for (int k = 0; k < m; k++)
			{
				if (nodes[k]->level != level)
					tree_report_bad_level(idx, nodes[k], level);
				visit(idx, specs, batch, &cur, &cur.frames[g + k], nodes[k], &next,
					  reach, located);
				tree_free_node(nodes[k]);
			}
		}
		level_free(&cur);
		cur = next;
	}
	level_free(&cur);
	pfree(reach);
	pfree(located);
	pfree(nodes);
	pfree(pages);
}

/* The Z order of a query's centre, clamped into the extent. */
static uint64
centre_order(const XbrState *st, const Mbr *q)
{
	double		x = Min(Max((q->xmin + q->xmax) / 2, st->extent.xmin), st->extent.xmax);
	double		y = Min(Max((q->ymin + q->ymax) / 2, st->extent.ymin), st->extent.ymax);
	XbrAddr		a;

	if (!xbr_point_addr(st, x, y, &a))
		return 0;				/* a NaN centre: any place will do */
	return a.code;
}

void
xbr_search_batch(StructIndex *idx, const SearchSpec *specs, int nspecs)
{
	XbrState   *st = (XbrState *) idx->state;
	int64		budget = (int64) work_mem * 1024;
	int			group_max = (int) Min((int64) PG_INT32_MAX / 2,
									  Max((int64) 1, budget / (int64) idx->ns->page_size));
	BatchQuery *queries = palloc(Max(nspecs, 1) * sizeof(BatchQuery));
	int			n = 0;

	if (nspecs <= 0)
		return;
	/* a tree has at least its root leaf; tree_read_root reports otherwise */
	if (idx->ns->meta->height == 0)
		(void) tree_read_root(idx);
	for (int i = 0; i < nspecs; i++)
	{
		BatchQuery *q = &queries[n];
		bool		outside;

		q->spec = i;
		q->locate = locates_point(st, &specs[i], &q->addr, &outside);
		if (q->locate && outside)
			continue;			/* no indexed point lies there */
		q->order = centre_order(st, &specs[i].query);
		n++;
	}
	qsort(queries, n, sizeof(BatchQuery), batch_query_cmp);
	for (int first = 0; first < n; first += group_max)
		run_batch(idx, specs, &queries[first], Min(group_max, n - first), group_max);
	pfree(queries);
}
