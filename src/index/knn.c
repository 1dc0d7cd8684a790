/*-------------------------------------------------------------------------
 *
 * knn.c
 *	  Best-first k-nearest-neighbour search (Hjaltason & Samet 1999).
 *
 * One priority queue holds three kinds of items, keyed by a distance:
 *
 *	node		a subtree not read yet; key = mindist(entry MBR, MBR(g)),
 *				a lower bound of every object below (traversal contract)
 *	candidate	a leaf entry whose key is only a lower bound of its
 *				object's distance (its MBR distance)
 *	object		a leaf entry with its exact distance
 *
 * The item with the smallest key comes out first (Hjaltason & Samet,
 * section 4.1, "incremental nearest neighbour"): a node is read and its
 * entries queued; a candidate is measured by the caller and comes back as
 * an object; an object is the next neighbour, because every item still
 * queued has a key, and so every object still to come a distance, at
 * least as large.
 *
 * Ties: at equal keys nodes and candidates come out before objects, so
 * when an object is at the head no queued item can still hide an object
 * at the same distance; objects at equal distance come out by increasing
 * id.  Hence the order is (distance, id) and with ties at the k-th
 * distance the smallest ids win.
 *
 * An id queued twice (the same object indexed twice) is returned once.
 *
 * Reading nodes in groups (issue 14).  When a node is at the head, the
 * nodes right behind it (the next items, as long as they are nodes) may be
 * read with it in one ns_read_many, which the libaio and io_uring engines
 * submit at once; each is then expanded in queue order.  Expanding a node
 * early only queues its entries earlier; since items come out in (key,
 * kind, ref) order whatever the order they were queued in, the answer
 * (ids, distances, tie order) does not change.
 *
 * Which nodes may join the group without changing which nodes are read
 * (the default, "exact" rule):  with distances of objects never below
 * their keys, the search reads a node N of key d exactly when fewer than
 * `limit` ids have a distance below d: N comes out before every object at
 * d or farther (nodes first at equal keys; by induction on depth, N is
 * queued before any of them is returned), and the caller stops after
 * `limit` results.  With the group n_1..n_j-1 taken from the head, every
 * object still to come below d_j = key(n_j) lies below some n_i with
 * key(n_i) < d_j (every other queued item has key >= d_j), so at most
 *		returned + sum of maxobj(n_i) over i < j with key(n_i) < d_j
 * ids have a distance below d_j, where maxobj is the most leaf entries a
 * subtree of that level can hold (pages hold at most ns_page_capacity
 * entries).  n_j joins while that sum is below the limit: it is read in
 * any case.  Nodes at the head's own key always join (nothing can come
 * before them).  Leaves that are not pages (read_leaves: LB-Grid's logical
 * buckets) have no such bound, so only nodes at equal keys join there.
 *
 * Speculation (KnnReading.speculative = m > 0): besides the nodes proved
 * needed, up to m nodes at the head without that proof join a group (the
 * group still holds at most reading.group): fewer submissions for small
 * k, where a leaf's capacity exceeds k and the proof rarely holds, at the
 * price of nodes the one-at-a-time search would not read (counted in
 * nodes_visited and pages_read).  The proof of a later node still holds:
 * its bound counts every node ahead of it in the group, proved or not.
 *
 * Pruning by the k-th distance (after Roussopoulos, Kelley & Vincent,
 * "Nearest neighbor queries", SIGMOD 1995: a subtree farther than the k-th
 * candidate found so far holds no answer).  For a limit of at most
 * KNN_PRUNE_MAX objects the search keeps the `limit` smallest distances of
 * distinct ids among the objects queued so far (exact distances).  Once it
 * has `limit` of them, with the largest b, an item whose key exceeds b is
 * not queued: `limit` distinct ids have a distance <= b < key, all of them
 * returned before it, so it never reaches the head before the caller
 * stops.  Items at b itself are kept (ties by id).  The answer, and the
 * nodes read one at a time or by the exact grouping rule (a node of key d
 * is read only when fewer than `limit` ids lie below d), do not change;
 * what goes is queueing, and later discarding, most entries of the leaves
 * read (a leaf page holds some 100 points, k = 10 needs 10).  An entry is
 * tested by its squared distance against the smallest square whose root
 * exceeds the bound (knn_square_beyond), the same test bit for bit, so an
 * entry left out costs no square root.
 *
 * The queue keeps a node's entries together (see "The queue" below): a
 * binary heap of runs, each run the entries of one node in no order but
 * its smallest first.  Items come out in the same (key, kind, ref) order;
 * queueing costs a store per entry instead of a heap insertion, where a
 * search queues every entry of each internal node it reads and takes out
 * one or two of them.
 *
 * IDENTIFICATION
 *	  src/index/knn.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/knn.h"

#include "miscadmin.h"
#include "utils/hsearch.h"

/* Levels with a maxobj bound; nodes above have none (trees are lower). */
#define KNN_BOUND_LEVELS 16

/* The order of kinds at equal keys (see above). */
typedef enum KnnItemKind
{
	KNN_ITEM_NODE,
	KNN_ITEM_CANDIDATE,
	KNN_ITEM_OBJECT
} KnnItemKind;

typedef struct KnnItem
{
	double		key;
	int64		ref;			/* nodes: the page; otherwise the object id */
	uint16		level;			/* nodes: the child's level */
	uint8		kind;			/* KnnItemKind */
} KnnItem;

/*
 * A run: the items one node's expansion queued (or one item queued alone),
 * slots[start .. start + n) in no order but for the smallest at
 * slots[start], of which first is a copy (compared without indirection).
 */
typedef struct KnnRun
{
	KnnItem		first;
	int64		start;
	int64		n;
} KnnRun;

/* Slots and runs allocated first; the arrays double as needed. */
#define KNN_SLOTS_INITIAL 512
#define KNN_RUNS_INITIAL 16

/* Ids returned kept in an array up to this many, then in a hash table. */
#define KNN_RETURNED_FEW 64

struct KnnSearch
{
	StructIndex *idx;
	Mbr			query;
	bool		exact_leaves;
	/* the queue (see "The queue" below) */
	KnnItem    *slots;			/* the items of every run */
	int64		nslots;
	int64		maxslots;
	int64		run_start;		/* slots[run_start ..] join the next run */
	int64		run_min;		/* the smallest of them, when there are any */
	KnnRun	   *runs;			/* a binary heap by first, the top at [0] */
	int64		nruns;
	int64		maxruns;
	/* ids already returned: the first ones in returned_few, all in returned */
	int64		returned_few[KNN_RETURNED_FEW];
	HTAB	   *returned;		/* from the (KNN_RETURNED_FEW + 1)-th on */
	int64	   *batch;			/* candidates handed to the caller */
	int			maxbatch;
	int64		limit;			/* the caller stops after this many results */
	int64		nresults;		/* results returned so far */
	KnnReading	reading;
	int64		maxobj[KNN_BOUND_LEVELS];	/* leaf entries below a node of a
											 * level, at most; -1: no bound */
	KnnItem    *group;			/* nodes read together */
	PageId	   *pages;			/* their pages, internal then leaves */
	TreeNode  **nodes;			/* what was read, as pages */
	/* pruning (file header): the nbound smallest distances of distinct ids */
	bool		prune;			/* limit <= KNN_PRUNE_MAX */
	int			nbound;
	double		bound_key[KNN_PRUNE_MAX];	/* ascending */
	int64		bound_id[KNN_PRUNE_MAX];
	double		bound_sq;		/* with nbound == limit: the smallest square
								 * whose root exceeds bound_key[limit - 1]
								 * (knn_square_beyond) */
};

/*
 * The queue's order: smaller key first, then the earlier kind, then the
 * smaller ref.  Keys are never NaN (coordinates are finite), so this is a
 * total order on what tells items apart: any priority queue hands them out
 * in the same sequence.
 */
static inline bool
knn_item_before(const KnnItem *x, const KnnItem *y)
{
	if (x->key != y->key)
		return x->key < y->key;
	if (x->kind != y->kind)
		return x->kind < y->kind;
	return x->ref < y->ref;
}

/*
 * The queue.  Items are queued in runs: the entries one node's expansion
 * queues form one run, an item queued alone (a measured candidate) a run
 * of its own.  A run's items lie in the slots array in no order but for
 * the smallest first; a binary heap (Williams 1964) orders the runs by
 * their smallest.  Taking the smallest item of the top run takes the
 * smallest item queued; a scan of that run's rest then finds its next
 * smallest and the run sinks to its place.  Items thus come out in the
 * order one heap of all items would hand them out (the order is total),
 * but queueing an entry costs a store, not a heap insertion: a search
 * queues every entry of each internal node it reads and takes out one or
 * two of them (a root of 70 entries leads to one or two of its children),
 * and with the pruning below most leaf entries are not queued at all.
 * Memory: the slots hold every item queued (at most the entries of the
 * nodes read, as the items of one heap would), the runs one per node read;
 * both arrays double as needed, in the search's memory context, freed with
 * it (knn_batch_ids resets it between its queries).
 */
static void
knn_runs_sift_up(KnnSearch *s, int64 i)
{
	KnnRun		run = s->runs[i];

	while (i > 0)
	{
		int64		parent = (i - 1) / 2;

		if (!knn_item_before(&run.first, &s->runs[parent].first))
			break;
		s->runs[i] = s->runs[parent];
		i = parent;
	}
	s->runs[i] = run;
}

static void
knn_runs_sift_down(KnnSearch *s, int64 i)
{
	KnnRun		run = s->runs[i];
	int64		n = s->nruns;

	for (;;)
	{
		int64		child = 2 * i + 1;

		if (child >= n)
			break;
		if (child + 1 < n &&
			knn_item_before(&s->runs[child + 1].first, &s->runs[child].first))
			child++;
		if (!knn_item_before(&s->runs[child].first, &run.first))
			break;
		s->runs[i] = s->runs[child];
		i = child;
	}
	s->runs[i] = run;
}

/* Move the smallest of slots[start .. start + n) to slots[start]. */
static void
knn_slots_min_first(KnnSearch *s, int64 start, int64 n)
{
	KnnItem    *items = s->slots + start;
	int64		min = 0;
	double		min_key = items[0].key;

	/* the smallest key held in a register: most items are larger */
	for (int64 i = 1; i < n; i++)
		if (unlikely(items[i].key <= min_key) &&
			knn_item_before(&items[i], &items[min]))
		{
			min = i;
			min_key = items[i].key;
		}
	if (min != 0)
	{
		KnnItem		tmp = items[0];

		items[0] = items[min];
		items[min] = tmp;
	}
}

/*
 * Append an item to the run being gathered (knn_run_end queues it),
 * keeping track of its smallest.
 */
static inline void
knn_run_add(KnnSearch *s, double key, int64 ref, uint16 level, KnnItemKind kind)
{
	KnnItem    *item;

	if (s->nslots == s->maxslots)
	{
		s->maxslots *= 2;
		s->slots = repalloc_huge(s->slots, s->maxslots * sizeof(KnnItem));
	}
	item = &s->slots[s->nslots];
	item->key = key;
	item->ref = ref;
	item->level = level;
	item->kind = (uint8) kind;
	if (s->nslots == s->run_start || knn_item_before(item, &s->slots[s->run_min]))
		s->run_min = s->nslots;
	s->nslots++;
}

/* Queue the items added since the last run as one run. */
static void
knn_run_end(KnnSearch *s)
{
	int64		n = s->nslots - s->run_start;
	KnnRun	   *run;

	if (n == 0)
		return;
	if (s->nruns == s->maxruns)
	{
		s->maxruns *= 2;
		s->runs = repalloc_huge(s->runs, s->maxruns * sizeof(KnnRun));
	}
	if (s->run_min != s->run_start)
	{
		KnnItem		tmp = s->slots[s->run_start];

		s->slots[s->run_start] = s->slots[s->run_min];
		s->slots[s->run_min] = tmp;
	}
	run = &s->runs[s->nruns];
	run->start = s->run_start;
	run->n = n;
	run->first = s->slots[s->run_start];
	s->run_start = s->nslots;
	knn_runs_sift_up(s, s->nruns++);
}

/* The first item, or NULL; valid until the queue changes. */
static inline const KnnItem *
knn_queue_first(const KnnSearch *s)
{
	return s->nruns > 0 ? &s->runs[0].first : NULL;
}

/* Take the first item out (into *out when out is not NULL). */
static void
knn_queue_pop(KnnSearch *s, KnnItem *out)
{
	KnnRun	   *top = &s->runs[0];

	Assert(s->nruns > 0 && s->run_start == s->nslots);
	if (out != NULL)
		*out = top->first;
	top->start++;
	top->n--;
	if (top->n > 0)
	{
		knn_slots_min_first(s, top->start, top->n);
		top->first = s->slots[top->start];
	}
	else
		s->runs[0] = s->runs[--s->nruns];
	if (s->nruns > 1)
		knn_runs_sift_down(s, 0);
}

/*
 * The smallest t >= 0 whose square root exceeds b, or NaN when there is
 * none (b infinite or NaN).  A correctly rounded square root (IEEE 754,
 * as sqrt is) never decreases, so for a square d2 >= 0
 *		sqrt(d2) > b  exactly when  d2 >= t
 * and d2 >= NaN never holds, as sqrt(d2) > b then never does: an entry's
 * square against t is the same test as its distance against b, without
 * the root.  b * b lies within a few units in the last place of t; the
 * loops step to it.
 */
static inline double
knn_double_step(double t, int64 ulps)
{
	uint64		bits;

	/* for t >= +0: the next double up (ulps 1) or down (-1, t > 0) */
	memcpy(&bits, &t, sizeof(double));
	bits += (uint64) ulps;
	memcpy(&t, &bits, sizeof(double));
	return t;
}

static double
knn_square_beyond(double b)
{
	double		t;

	if (isnan(b) || isinf(b))
		return get_float8_nan();
	Assert(b >= 0);
	t = b * b;					/* +0 up to +infinity */
	while (t > 0 && sqrt(knn_double_step(t, -1)) > b)
		t = knn_double_step(t, -1);
	while (!(sqrt(t) > b))		/* never past +infinity: sqrt(inf) > b */
		t = knn_double_step(t, 1);
	Assert(sqrt(t) > b && (t == 0 || !(sqrt(nextafter(t, 0.0)) > b)));
	return t;
}

/*
 * An object of exact distance key joins the smallest distances of
 * distinct ids (an id already there keeps its smaller distance).
 */
static void
knn_bound_add(KnnSearch *s, double key, int64 id)
{
	int			pos;

	for (int i = 0; i < s->nbound; i++)
		if (s->bound_id[i] == id)
		{
			if (key >= s->bound_key[i])
				return;
			memmove(&s->bound_key[i], &s->bound_key[i + 1], (s->nbound - i - 1) * sizeof(double));
			memmove(&s->bound_id[i], &s->bound_id[i + 1], (s->nbound - i - 1) * sizeof(int64));
			s->nbound--;
			break;
		}
	if (s->nbound == s->limit)
	{
		if (key >= s->bound_key[s->nbound - 1])
			return;
		s->nbound--;			/* the largest leaves */
	}
	for (pos = s->nbound; pos > 0 && s->bound_key[pos - 1] > key; pos--)
	{
		s->bound_key[pos] = s->bound_key[pos - 1];
		s->bound_id[pos] = s->bound_id[pos - 1];
	}
	s->bound_key[pos] = key;
	s->bound_id[pos] = id;
	s->nbound++;
	Assert(s->nbound <= s->limit);
	if (s->nbound == s->limit)
		s->bound_sq = knn_square_beyond(s->bound_key[s->nbound - 1]);
}

static inline void
knn_enqueue(KnnSearch *s, KnnItemKind kind, double key, int64 ref, uint16 level)
{
	if (s->prune)
	{
		/* beyond the limit-th distance: never at the head before the end */
		if (s->nbound == s->limit && key > s->bound_key[s->nbound - 1])
			return;
		if (kind == KNN_ITEM_OBJECT)
			knn_bound_add(s, key, ref);
	}
	knn_run_add(s, key, ref, level, kind);
}

/*
 * maxobj per level: a leaf holds at most a page's entries, a node above
 * that many subtrees; saturates to "no bound" (-1) past a sum that could
 * overflow, and is -1 at every level when leaves are not pages.
 */
static void
knn_fill_maxobj(KnnSearch *s)
{
	StructIndex *idx = s->idx;
	bool		page_leaves = idx->ops == NULL || idx->ops->read_leaves == NULL;
	int64		below = page_leaves ? (int64) ns_page_capacity(idx->ns, 0) : -1;

	for (int level = 0; level < KNN_BOUND_LEVELS; level++)
	{
		if (level > 0 && below >= 0)
		{
			int64		fan = (int64) ns_page_capacity(idx->ns, level);

			below = below > (PG_INT64_MAX / 4) / Max(fan, 1) ? -1 : below * fan;
		}
		s->maxobj[level] = below;
	}
}

static void knn_expand(KnnSearch *s, const KnnItem *item, TreeNode *node,
					   bool free_node);

KnnSearch *
knn_begin(StructIndex *idx, const Mbr *query, bool exact_leaves, int64 limit,
		  const KnnReading *reading)
{
	KnnSearch  *s = palloc0(sizeof(KnnSearch));
	FestMeta   *meta = idx->ns->meta;

	Assert(limit > 0);
	s->idx = idx;
	s->query = *query;
	s->exact_leaves = exact_leaves;
	s->maxslots = KNN_SLOTS_INITIAL;
	s->slots = palloc(s->maxslots * sizeof(KnnItem));
	s->maxruns = KNN_RUNS_INITIAL;
	s->runs = palloc(s->maxruns * sizeof(KnnRun));
	s->limit = limit;
	s->prune = limit <= KNN_PRUNE_MAX;
	s->reading = *reading;
	if (s->reading.group > KNN_MAX_GROUP)
		s->reading.group = KNN_MAX_GROUP;
	if (s->reading.group > 1)
	{
		knn_fill_maxobj(s);
		s->group = palloc(s->reading.group * sizeof(KnnItem));
		s->pages = palloc(s->reading.group * sizeof(PageId));
		s->nodes = palloc(s->reading.group * sizeof(TreeNode *));
	}


	/* a tree has at least its root leaf; tree_read_root reports otherwise */
	if (meta->height == 0)
		(void) tree_read_root(idx);
	if (meta->height == 1 && idx->ops != NULL && idx->ops->read_leaves != NULL)
	{
		/* a logical leaf (read_leaves) is no page: it is read as any node */
		knn_enqueue(s, KNN_ITEM_NODE, 0.0, (int64) meta->root, 0);
		knn_run_end(s);
	}
	else
	{
		/*
		 * The root is the first node read whatever the query, alone: read
		 * it as window searches do (ns_read_root: the store's decoded copy
		 * where it keeps one, the same counters and page accesses) and
		 * queue its entries.
		 */
		RootRead	root;
		KnnItem		item = {.kind = KNN_ITEM_NODE, .level = meta->height - 1,
		.ref = (int64) meta->root};

		ns_read_root(idx->ns, &root);
		knn_expand(s, &item, root.node, !root.shared);
	}
	return s;
}

/* Queue the entries of a node read for a queued item; free it if asked. */
static void
knn_expand(KnnSearch *s, const KnnItem *item, TreeNode *node, bool free_node)
{
	StructIndex *idx = s->idx;
	const NodeOps *nops = idx->ns->node_ops;
	KnnItemKind kind;
	uint16		child_level;

	if (node->level != item->level)
		tree_report_bad_level(idx, node, item->level);
	/* the grouping rule's bound: a leaf page holds at most a page's entries */
	Assert(s->reading.group <= 1 || node->level > 0 || s->maxobj[0] < 0 ||
		   node->nentries <= (uint64) s->maxobj[0]);
	idx->stats->entries_examined += node->nentries;
	kind = node->level > 0 ? KNN_ITEM_NODE
		: s->exact_leaves ? KNN_ITEM_OBJECT : KNN_ITEM_CANDIDATE;
	child_level = node->level > 0 ? node->level - 1 : 0;

	for (uint32 i = 0; i < node->nentries; i++)
	{
		const void *entry = NodeEntry(node, i);
		Mbr			box;
		double		key_sq;
		double		key;

		if (nops->mbr_first)
			memcpy(&box, entry, sizeof(Mbr));
		else
			nops->entry_mbr(entry, node->level, &box);
		key_sq = mbr_min_distance_sq(&box, &s->query);
		if (s->nbound == s->limit && key_sq >= s->bound_sq)
		{
			/* beyond the bound: knn_enqueue would drop it; no root taken */
			Assert(s->prune && sqrt(key_sq) > s->bound_key[s->nbound - 1]);
			continue;
		}
		key = sqrt(key_sq);		/* mbr_min_distance, bit for bit */
		knn_enqueue(s, kind, key, nops->entry_ref(entry, node->level), child_level);
	}
	knn_run_end(s);
	if (free_node)
		tree_free_node(node);
}

/*
 * Is the node at the head sure to be read, given the group ahead of it?
 * below_key: leaf entries of the group's nodes with a key below the
 * head's, at most (-1: no bound).  See the file header.
 */
static bool
knn_needed(KnnSearch *s, int64 below_key)
{
	if (below_key == 0)
		return true;
	if (below_key < 0)
		return false;
	return s->nresults + below_key < s->limit;
}

/*
 * The head is a node: take it and the nodes behind it that may join (at
 * most reading.group), read them with one ns_read_many (leaves that are
 * not pages with one read_leaves besides), and queue their entries in
 * queue order.
 */
static void
knn_expand_group(KnnSearch *s)
{
	StructIndex *idx = s->idx;
	int			n = 0;
	int			ninternal = 0;
	int64		below_key = 0;	/* maxobj of group nodes with a smaller key */
	int64		at_key = 0;		/* maxobj of group nodes at the last key */
	int			unproved = 0;	/* nodes joined by speculation */
	bool		page_leaves = idx->ops == NULL || idx->ops->read_leaves == NULL;

	while (n < s->reading.group && s->nruns > 0)
	{
		const KnnItem *item = knn_queue_first(s);
		int64		mo;

		if (item->kind != KNN_ITEM_NODE)
			break;
		if (n > 0 && item->key > s->group[n - 1].key)
		{
			below_key = (below_key < 0 || at_key < 0 ||
						 below_key > PG_INT64_MAX / 2 - at_key)
				? -1 : below_key + at_key;
			at_key = 0;
		}
		if (n > 0 && !knn_needed(s, below_key))
		{
			if (unproved >= s->reading.speculative)
				break;
			unproved++;
		}
		knn_queue_pop(s, &s->group[n]);
		item = &s->group[n++];
		mo = item->level < KNN_BOUND_LEVELS ? s->maxobj[item->level] : -1;
		at_key = (at_key < 0 || mo < 0 || at_key > PG_INT64_MAX / 2 - mo)
			? -1 : at_key + mo;
	}
	Assert(n > 0);
	if (n == 1)
	{
		/* alone: exactly the one-at-a-time read */
		knn_expand(s, &s->group[0], tree_read_node(idx, s->group[0].ref,
												   s->group[0].level), true);
		return;
	}

	/* pages first (internal nodes, and leaves that are pages) */
	for (int i = 0; i < n; i++)
		if (page_leaves || s->group[i].level > 0)
			s->pages[ninternal++] = (PageId) s->group[i].ref;
	if (ninternal > 0)
		ns_read_many(idx->ns, s->pages, ninternal, s->nodes);
	if (ninternal < n)
	{
		int			nleaves = 0;

		for (int i = 0; i < n; i++)
			if (s->group[i].level == 0)
				s->pages[ninternal + nleaves++] = (PageId) s->group[i].ref;
		tree_read_nodes(idx, s->pages + ninternal, nleaves, 0,
						s->nodes + ninternal);
	}

	/* expand in queue order; nodes[] holds pages first, then logical leaves */
	for (int i = 0, p = 0, l = ninternal; i < n; i++)
	{
		const KnnItem *item = &s->group[i];
		TreeNode   *node = (page_leaves || item->level > 0)
			? s->nodes[p++] : s->nodes[l++];

		knn_expand(s, item, node, true);
	}
}

/*
 * Has id been returned?  The first KNN_RETURNED_FEW ids returned are
 * looked up in an array (a kNN search with k <= 64 never needs more); the
 * hash table is made when one more is returned.
 */
static bool
knn_already_returned(KnnSearch *s, int64 id)
{
	if (s->returned != NULL)
		return hash_search(s->returned, &id, HASH_FIND, NULL) != NULL;
	for (int64 i = 0; i < s->nresults; i++)
		if (s->returned_few[i] == id)
			return true;
	return false;
}

static void
knn_note_returned(KnnSearch *s, int64 id)
{
	Assert(!knn_already_returned(s, id));
	if (s->returned == NULL && s->nresults == KNN_RETURNED_FEW)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(int64);
		ctl.hcxt = CurrentMemoryContext;
		s->returned = hash_create("festival knn returned ids", 4 * KNN_RETURNED_FEW,
								  &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		for (int i = 0; i < KNN_RETURNED_FEW; i++)
			hash_search(s->returned, &s->returned_few[i], HASH_ENTER, NULL);
	}
	if (s->returned != NULL)
		hash_search(s->returned, &id, HASH_ENTER, NULL);
	else
		s->returned_few[s->nresults] = id;
	s->nresults++;
}

/*
 * Advance to the next neighbour, or to a batch of at most max_refine
 * candidates (those at the head of the queue) for the caller to measure.
 */
KnnStep
knn_next(KnnSearch *s, int max_refine, int64 *id, double *distance,
		 const int64 **refine_ids, int *nrefine)
{
	Assert(max_refine > 0);
	while (s->nruns > 0)
	{
		const KnnItem *first = knn_queue_first(s);

		CHECK_FOR_INTERRUPTS();
		switch ((KnnItemKind) first->kind)
		{
			case KNN_ITEM_NODE:
				if (s->reading.group > 1)
					knn_expand_group(s);
				else
				{
					KnnItem		item;

					knn_queue_pop(s, &item);
					knn_expand(s, &item, tree_read_node(s->idx, item.ref,
														item.level), true);
				}
				break;

			case KNN_ITEM_OBJECT:
				{
					KnnItem		item;

					knn_queue_pop(s, &item);
					if (!knn_already_returned(s, item.ref))
					{
						knn_note_returned(s, item.ref);
						*id = item.ref;
						*distance = item.key;
						return KNN_RESULT;
					}
				}
				break;

			case KNN_ITEM_CANDIDATE:
				{
					int			n = 0;

					if (s->maxbatch < max_refine)
					{
						s->maxbatch = max_refine;
						s->batch = s->batch
							? repalloc(s->batch, max_refine * sizeof(int64))
							: palloc(max_refine * sizeof(int64));
					}
					/* every candidate at the head, up to max_refine */
					while (n < max_refine && s->nruns > 0 &&
						   s->runs[0].first.kind == KNN_ITEM_CANDIDATE)
					{
						KnnItem		item;

						knn_queue_pop(s, &item);
						if (!knn_already_returned(s, item.ref))
							s->batch[n++] = item.ref;
					}
					if (n > 0)
					{
						*refine_ids = s->batch;
						*nrefine = n;
						return KNN_REFINE;
					}
				}
				break;
		}
	}
	return KNN_DONE;
}

/* A measured candidate comes back as an object with its exact distance. */
void
knn_push_exact(KnnSearch *s, int64 id, double distance)
{
	knn_enqueue(s, KNN_ITEM_OBJECT, distance, id, 0);
	knn_run_end(s);
}
