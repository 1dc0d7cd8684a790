/*-------------------------------------------------------------------------
 *
 * gridfile_query.c
 *	  Window queries (RQ and P-RQ, Fevgas 2019, §3.5.1, Alg. 6) and group
 *	  point queries (§3.5.3, Alg. 8 GroupQueryR / GroupQueryS) of the grid
 *	  files, GFFM and LB-Grid alike (the thesis: "GFFM uses the same
 *	  algorithms with one-page buckets").
 *
 * Both start from the root directory in memory (gridfile_root.c): the
 * root scales turn the query's box into a range of columns and rows, and
 * walking that range of the root grid array, row by row, gives the
 * sub-directories, each once, in the order the walk meets them; inside a
 * sub-directory its scales and grid array give its buckets the same way
 * (Alg. 6, lines 2-4).  A region whose box fails the query's filter
 * (predicate_descend) is left out.
 *
 * Reads (gf_read_next_fit): the thesis reads a set of pages in groups that
 * fit its read buffers, formed next-fit: a bucket joins the group while
 * the group's pages and its own (BTT[B].list: GFFM one page, LB-Grid its
 * log pages, a page already in the group counted once) fit the data read
 * buffer (LBB); otherwise the group is read (one ns_read_many, one
 * submission under libaio or io_uring) and processed, and a new one
 * begins (Alg. 6, lines 5-22).  Sub-directories likewise, one page each,
 * in groups of the directory read buffer (DPB).  A bucket whose pages
 * alone exceed the buffer is a group of its own.  The buffers are the
 * options directory_read_buffer and data_read_buffer (GfState.dpb_pages,
 * lbb_pages).
 *
 *	RQ		page at a time, through the buffer: each sub-directory read when
 *			the walk reaches it, then each of its buckets (LB-Grid: one
 *			bucket's log pages, one submission);
 *	P-RQ	the sub-directories in groups of DPB; inside each one (locally,
 *			as the thesis batches), its buckets in next-fit groups of LBB.
 *	Group point queries (Alg. 8): every query's sub-directories go to the
 *			subdir table (sub-directory -> its queries), read in groups of
 *			DPB; the buckets of one group's sub-directories, for all their
 *			queries, go to the bucket table (bucket -> its queries), read in
 *			next-fit groups of LBB that mix sub-directories (a group point
 *			query has little locality); each bucket then answers its
 *			queries.  So a group of points inside one sub-directory's
 *			buckets, fewer than DPB sub-directories and LBB pages, costs
 *			two submissions (the thesis's Table 3.6: 2.00E+06 for 1M
 *			groups).  Any window works, not only points.
 *
 * Answers are those of the generic search (traverse.c): the same filter on
 * the same regions and points; only the reads differ.
 *
 * IDENTIFICATION
 *	  src/index/gridfile_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/gridfile.h"


#include "miscadmin.h"
#include "utils/hsearch.h"

/* ------------------------------------------------------------------ */
/* next-fit group reads                                               */
/* ------------------------------------------------------------------ */

typedef struct GroupPage
{
	PageId		page;			/* hash key */
} GroupPage;

static void
read_group(StructIndex *idx, const int64 *refs, const int *items, int nitems,
		   uint16 level, GfVisit visit, void *arg)
{
	PageId	   *pages = palloc(nitems * sizeof(PageId));
	TreeNode  **nodes = palloc(nitems * sizeof(TreeNode *));

	for (int i = 0; i < nitems; i++)
		pages[i] = (PageId) refs[items[i]];
	tree_read_nodes(idx, pages, nitems, level, nodes);
	for (int i = 0; i < nitems; i++)
	{
		if (nodes[i]->level != level)
			tree_report_bad_level(idx, nodes[i], level);
		visit(arg, items[i], nodes[i]);
		tree_free_node(nodes[i]);
	}
	pfree(pages);
	pfree(nodes);
}

/*
 * Read the n items refs[] (level 1: sub-directory pages; level 0:
 * buckets) in next-fit groups of at most `limit` pages (one item per group
 * when limit is 0), each group one read (tree_read_nodes), in order.
 * still (optional) is asked before an item joins a group: false leaves it
 * unread.  visit gets each item read, in order; the node is freed after.
 */
void
gf_read_next_fit(StructIndex *idx, const int64 *refs, int n, uint16 level,
				 uint32 limit, GfStill still, GfVisit visit, void *arg)
{
	const GfState *st = (const GfState *) idx->state;
	int		   *items = palloc(Max(n, 1) * sizeof(int));
	int			nitems = 0;
	PageId	   *group_pages = NULL;
	int			ngroup_pages = 0;
	int			max_group_pages = 0;
	HTAB	   *in_group = NULL;

	if (limit > 0)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(PageId);
		ctl.entrysize = sizeof(GroupPage);
		ctl.hcxt = CurrentMemoryContext;
		in_group = hash_create("grid file read group", 64, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	for (int i = 0; i < n; i++)
	{
		PageId		one;
		const PageId *pages;
		int			np;

		CHECK_FOR_INTERRUPTS();
		if (still != NULL && !still(arg, i))
			continue;
		if (level == GF_LEVEL_BUCKET && st->bucket_pages != NULL)
			np = st->bucket_pages(idx, refs[i], &one, &pages);
		else
		{
			one = (PageId) refs[i];
			pages = &one;
			np = 1;
		}
		if (nitems > 0)
		{
			bool		full = limit == 0;

			if (!full)
			{
				int			fresh = 0;

				for (int k = 0; k < np; k++)
					if (hash_search(in_group, &pages[k], HASH_FIND, NULL) == NULL)
						fresh++;
				full = ngroup_pages + fresh > (int) limit;
			}
			if (full)
			{
				/* the group is full: read it, process it, start the next */
				read_group(idx, refs, items, nitems, level, visit, arg);
				nitems = 0;
				for (int k = 0; k < ngroup_pages; k++)
					(void) hash_search(in_group, &group_pages[k], HASH_REMOVE, NULL);
				ngroup_pages = 0;
				if (still != NULL && !still(arg, i))
					continue;
			}
		}
		items[nitems++] = i;
		if (limit == 0)
			continue;
		for (int k = 0; k < np; k++)
		{
			bool		found;

			(void) hash_search(in_group, &pages[k], HASH_ENTER, &found);
			if (found)
				continue;
			if (ngroup_pages == max_group_pages)
			{
				max_group_pages = Max(64, 2 * max_group_pages);
				group_pages = group_pages == NULL
					? palloc(max_group_pages * sizeof(PageId))
					: repalloc(group_pages, max_group_pages * sizeof(PageId));
			}
			group_pages[ngroup_pages++] = pages[k];
		}
	}
	if (nitems > 0)
		read_group(idx, refs, items, nitems, level, visit, arg);
	if (in_group != NULL)
		hash_destroy(in_group);
	if (group_pages != NULL)
		pfree(group_pages);
	pfree(items);
}

/* ------------------------------------------------------------------ */
/* what a query reaches                                               */
/* ------------------------------------------------------------------ */

/*
 * The grid cells [*lx0, *lx1] x [*ly0, *ly1] (full cell coordinates) that
 * can hold an answer of spec: its box (widened by the distance for
 * dwithin; the whole extent for disjoint) clipped to the extent.  False
 * when it misses the extent.
 */
static bool
reach_cells(const GfState *st, const SearchSpec *spec, uint64 *lx0, uint64 *lx1,
			uint64 *ly0, uint64 *ly1)
{
	Mbr			b;
	uint64		x1,
				y1;

	if (spec->predicate == PRED_DISJOINT)
		b = st->extent;
	else
	{
		b = spec->query;
		if (spec->predicate == PRED_DWITHIN)
		{
			b.xmin -= spec->distance;
			b.ymin -= spec->distance;
			b.xmax += spec->distance;
			b.ymax += spec->distance;
		}
	}
	if (!(b.xmax >= st->extent.xmin && b.xmin <= st->extent.xmax &&
		  b.ymax >= st->extent.ymin && b.ymin <= st->extent.ymax))
		return false;
	gf_region_lines(gf_point_addr(st, Max(b.xmin, st->extent.xmin), Max(b.ymin, st->extent.ymin)),
					lx0, &x1, ly0, &y1);
	gf_region_lines(gf_point_addr(st, Min(b.xmax, st->extent.xmax), Min(b.ymax, st->extent.ymax)),
					lx1, &x1, ly1, &y1);
	return true;
}

/*
 * The regions of grid (a GfGrid over n regions) in the cells a query
 * reaches, each once, in the order a walk of those cells, row by row, meets
 * them (Alg. 6, line 4); into out (room for grid->nregions), returns how
 * many.
 */
static int
walk_regions(const GfGrid *grid, uint64 lx0, uint64 lx1, uint64 ly0, uint64 ly1,
			 int *out)
{
	bool	   *seen = palloc0(grid->nregions * sizeof(bool));
	int			i0,
				i1,
				j0,
				j1;
	int			n = 0;

	gf_grid_range(grid, lx0, lx1, ly0, ly1, &i0, &i1, &j0, &j1);
	for (int j = j0; j <= j1; j++)
		for (int i = i0; i <= i1; i++)
		{
			int			r = grid->cells[(int64) j * grid->nx + i];

			if (!seen[r])
			{
				seen[r] = true;
				out[n++] = r;
			}
		}
	pfree(seen);
	return n;
}

/* The sub-directories spec reaches (and passes the filter), into *subs. */
static int
reached_subdirs(StructIndex *idx, GfRoot *root, const SearchSpec *spec, int **subs)
{
	const GfState *st = (const GfState *) idx->state;
	const GfGrid *grid = gf_root_grid(root);
	uint64		lx0,
				lx1,
				ly0,
				ly1;
	int			n = 0;
	int			k = 0;

	*subs = palloc(grid->nregions * sizeof(int));
	if (!reach_cells(st, spec, &lx0, &lx1, &ly0, &ly1))
		return 0;
	n = walk_regions(grid, lx0, lx1, ly0, ly1, *subs);
	idx->stats->entries_examined += n;
	for (int i = 0; i < n; i++)
	{
		Mbr			box;

		gf_region_box(st, gf_root_sub_addr(root, (*subs)[i]), &box);
		if (predicate_descend(spec, &box))
			(*subs)[k++] = (*subs)[i];
	}
	return k;
}

/*
 * The buckets (entry slots) of a sub-directory spec reaches, into out.
 * Only entries inside the sub-directory's region (sub_addr) count: after a
 * crash in the middle of a write-through commit a split sub-directory's
 * page may still hold its old content while the root names its halves (a
 * parent is written first), and each half then answers for its own region.
 */
static int
reached_buckets(StructIndex *idx, const TreeNode *sub, const GfGrid *grid,
				uint64 sub_addr, const SearchSpec *spec, int *out)
{
	const GfState *st = (const GfState *) idx->state;
	uint64		lx0,
				lx1,
				ly0,
				ly1;
	int			n;
	int			k = 0;

	if (!reach_cells(st, spec, &lx0, &lx1, &ly0, &ly1))
		return 0;
	n = walk_regions(grid, lx0, lx1, ly0, ly1, out);
	for (int i = 0; i < n; i++)
		if (gf_addr_contains(sub_addr, GfDirEntries(sub)[out[i]].addr) &&
			predicate_descend(spec, &GfDirEntries(sub)[out[i]].region))
			out[k++] = out[i];
	return k;
}

/* A bucket's points for one query, as tree_search emits them. */
static void
emit_bucket(StructIndex *idx, const SearchSpec *spec, const TreeNode *node)
{
	const NodeOps *nops = idx->ns->node_ops;

	idx->stats->entries_examined += node->nentries;
	for (uint32 i = 0; i < node->nentries; i++)
	{
		const void *entry = NodeEntry(node, i);
		Mbr			box;

		nops->entry_mbr(entry, 0, &box);
		tree_filter_leaf_entry(spec, nops->entry_ref(entry, 0), &box);
	}
}

/* ------------------------------------------------------------------ */
/* RQ and P-RQ (Alg. 6)                                               */
/* ------------------------------------------------------------------ */

typedef struct RangeQuery
{
	StructIndex *idx;
	const SearchSpec *spec;
	bool		batched;
	const uint64 *sub_addr;		/* the region of each sub-directory read */
} RangeQuery;

static void
visit_bucket(void *arg, int item, TreeNode *node)
{
	RangeQuery *rq = arg;

	emit_bucket(rq->idx, rq->spec, node);
}

static void
visit_subdir(void *arg, int item, TreeNode *sub)
{
	RangeQuery *rq = arg;
	StructIndex *idx = rq->idx;
	const GfState *st = (const GfState *) idx->state;
	GfGrid		grid;
	int		   *slots = palloc(sub->nentries * sizeof(int));
	int64	   *refs = palloc(sub->nentries * sizeof(int64));
	int			n;

	idx->stats->entries_examined += sub->nentries;
	gf_dir_grid(idx, sub, &grid, true);
	n = reached_buckets(idx, sub, &grid, rq->sub_addr[item], rq->spec, slots);
	for (int i = 0; i < n; i++)
		refs[i] = GfDirEntries(sub)[slots[i]].child;
	gf_read_next_fit(idx, refs, n, GF_LEVEL_BUCKET, rq->batched ? st->lbb_pages : 0,
					 NULL, visit_bucket, rq);
	gf_grid_free(&grid);
	pfree(slots);
	pfree(refs);
}

/* StructureOps.search: RQ, or P-RQ with range_algorithm p-rq. */
void
gf_search(StructIndex *idx, const SearchSpec *spec)
{
	const GfState *st = (const GfState *) idx->state;
	GfRoot	   *root = gf_root(idx);
	RangeQuery	rq;
	int		   *subs;
	int64	   *refs;
	uint64	   *addrs;
	int			n;

	rq.idx = idx;
	rq.spec = spec;
	rq.batched = st->batched_range;
	n = reached_subdirs(idx, root, spec, &subs);
	refs = palloc(Max(n, 1) * sizeof(int64));
	addrs = palloc(Max(n, 1) * sizeof(uint64));
	for (int i = 0; i < n; i++)
	{
		refs[i] = (int64) gf_root_sub_page(root, subs[i]);
		addrs[i] = gf_root_sub_addr(root, subs[i]);
	}
	rq.sub_addr = addrs;
	gf_read_next_fit(idx, refs, n, GF_LEVEL_SUBDIR, rq.batched ? st->dpb_pages : 0,
					 NULL, visit_subdir, &rq);
	pfree(subs);
	pfree(refs);
	pfree(addrs);
}

/* ------------------------------------------------------------------ */
/* group point queries (Alg. 8)                                       */
/* ------------------------------------------------------------------ */

/* A list of query numbers. */
typedef struct QueryList
{
	int			n;
	int			max;
	int		   *q;
} QueryList;

static void
query_list_add(QueryList *l, int q)
{
	if (l->n > 0 && l->q[l->n - 1] == q)
		return;
	if (l->n == l->max)
	{
		l->max = Max(4, 2 * l->max);
		l->q = l->q == NULL ? palloc(l->max * sizeof(int)) : repalloc(l->q, l->max * sizeof(int));
	}
	l->q[l->n++] = q;
}

/* The bucket table of one group of sub-directories. */
typedef struct BucketEntry
{
	int64		ref;			/* hash key */
	int			order;			/* position in the table */
} BucketEntry;

typedef struct GroupQuery
{
	StructIndex *idx;
	const SearchSpec *specs;
	/* the subdir table */
	QueryList  *sub_queries;	/* by position in the table */
	uint64	   *sub_addr;		/* by position in the table */
	/* the bucket table of the sub-directories read */
	HTAB	   *bucket_pos;
	int			nbuckets;
	int			maxbuckets;
	int64	   *bucket_ref;
	QueryList  *bucket_queries;
	int			chunk_start;	/* the table position of the group's first */
} GroupQuery;

static void
bucket_table_add(GroupQuery *g, int64 ref, int q)
{
	bool		found;
	BucketEntry *b = hash_search(g->bucket_pos, &ref, HASH_ENTER, &found);

	if (!found)
	{
		if (g->nbuckets == g->maxbuckets)
		{
			g->maxbuckets = Max(16, 2 * g->maxbuckets);
			g->bucket_ref = g->bucket_ref == NULL
				? palloc(g->maxbuckets * sizeof(int64))
				: repalloc(g->bucket_ref, g->maxbuckets * sizeof(int64));
			g->bucket_queries = g->bucket_queries == NULL
				? palloc0(g->maxbuckets * sizeof(QueryList))
				: repalloc(g->bucket_queries, g->maxbuckets * sizeof(QueryList));
			for (int i = g->nbuckets; i < g->maxbuckets; i++)
				memset(&g->bucket_queries[i], 0, sizeof(QueryList));
		}
		b->order = g->nbuckets++;
		g->bucket_ref[b->order] = ref;
	}
	query_list_add(&g->bucket_queries[b->order], q);
}

/* GroupQueryS for one bucket: its queries' answers. */
static void
visit_group_bucket(void *arg, int item, TreeNode *node)
{
	GroupQuery *g = arg;
	QueryList  *l = &g->bucket_queries[item];

	for (int i = 0; i < l->n; i++)
		emit_bucket(g->idx, &g->specs[l->q[i]], node);
}

/* Subdir.preprocessQuery: the buckets of a sub-directory its queries need. */
static void
visit_group_subdir(void *arg, int item, TreeNode *sub)
{
	GroupQuery *g = arg;
	StructIndex *idx = g->idx;
	QueryList  *l = &g->sub_queries[g->chunk_start + item];
	GfGrid		grid;
	int		   *slots = palloc(sub->nentries * sizeof(int));

	gf_dir_grid(idx, sub, &grid, true);
	for (int i = 0; i < l->n; i++)
	{
		const SearchSpec *spec = &g->specs[l->q[i]];
		int			n;

		idx->stats->entries_examined += sub->nentries;
		n = reached_buckets(idx, sub, &grid, g->sub_addr[g->chunk_start + item], spec, slots);
		for (int k = 0; k < n; k++)
			bucket_table_add(g, GfDirEntries(sub)[slots[k]].child, l->q[i]);
	}
	gf_grid_free(&grid);
	pfree(slots);
}

/* StructureOps.search_batch: GroupQueryR (Alg. 8). */
void
gf_search_batch(StructIndex *idx, const SearchSpec *specs, int nspecs)
{
	const GfState *st = (const GfState *) idx->state;
	GfRoot	   *root = gf_root(idx);
	int			nroot = gf_root_count(root);
	int		   *table_pos = palloc(nroot * sizeof(int));
	int64	   *table_page = palloc(nroot * sizeof(int64));
	int			ntable = 0;
	GroupQuery	g;
	HASHCTL		ctl;

	memset(&g, 0, sizeof(g));
	g.idx = idx;
	g.specs = specs;
	g.sub_queries = palloc0(nroot * sizeof(QueryList));
	g.sub_addr = palloc(nroot * sizeof(uint64));
	for (int s = 0; s < nroot; s++)
		table_pos[s] = -1;

	/* lines 1-10: the subdir table, sub-directory -> its queries */
	for (int q = 0; q < nspecs; q++)
	{
		int		   *subs;
		int			n = reached_subdirs(idx, root, &specs[q], &subs);

		for (int i = 0; i < n; i++)
		{
			int			s = subs[i];

			if (table_pos[s] < 0)
			{
				table_pos[s] = ntable;
				table_page[ntable] = (int64) gf_root_sub_page(root, s);
				g.sub_addr[ntable] = gf_root_sub_addr(root, s);
				ntable++;
			}
			query_list_add(&g.sub_queries[table_pos[s]], q);
		}
		pfree(subs);
	}

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(BucketEntry);
	ctl.hcxt = CurrentMemoryContext;
	/* lines 11-31: groups of sub-directories, then their buckets */
	for (int start = 0; start < ntable; start += (int) st->dpb_pages)
	{
		int			nchunk = Min((int) st->dpb_pages, ntable - start);

		CHECK_FOR_INTERRUPTS();
		g.chunk_start = start;
		g.nbuckets = 0;
		g.bucket_pos = hash_create("grid file bucket table", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		/* prefetch_subdirectories: one group read, then preprocessQuery */
		gf_read_next_fit(idx, table_page + start, nchunk, GF_LEVEL_SUBDIR,
						 st->dpb_pages, NULL, visit_group_subdir, &g);
		/* prefetch_logbuckets: next-fit groups across sub-directories */
		gf_read_next_fit(idx, g.bucket_ref, g.nbuckets, GF_LEVEL_BUCKET,
						 st->lbb_pages, NULL, visit_group_bucket, &g);
		for (int i = 0; i < g.nbuckets; i++)
			if (g.bucket_queries[i].q != NULL)
				pfree(g.bucket_queries[i].q);
		for (int i = 0; i < g.maxbuckets; i++)
			memset(&g.bucket_queries[i], 0, sizeof(QueryList));
		hash_destroy(g.bucket_pos);
	}
	pfree(table_pos);
	pfree(table_page);
}
