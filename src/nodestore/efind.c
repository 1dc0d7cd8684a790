/*-------------------------------------------------------------------------
 *
 * efind.c
 *	  eFIND: Carniel, Ciferri and Ciferri, "A generic and efficient
 *	  framework for flash-aware spatial indexing", Information Systems 82
 *	  (2019); for the xBR+-tree, Carniel et al. 2018 section 3.
 *
 * Write buffer (IS §4.2, Carniel et al. 2018 §3.2): per page its height,
 * number of modifications, timestamp, status NEW/MOD/DEL and a red-black tree
 * (lib/rbtree) with the latest version of each modified entry, or a mark
 * that the entry was removed.  The tree is keyed by the structure's own
 * entry order (NodeOps.compare_identity) and, among entries of equal
 * identity, by rank; a node read is the sorted merge of the stored entries
 * and the tree, the tree winning on equal keys (Carniel et al. 2018 §3.3).  A
 * split (REPLACE) discards the page's modifications and makes it NEW: DEL +
 * NEW.
 *
 * Read buffer (IS §4.2): a share of the memory caches stored versions of
 * nodes under LRU, HLRU, S2Q or 2Q (cache/replacement.c).  S2Q's FIFO of
 * first misses is the read queue (IS §6.3): a page read from the device
 * while the queue remembers it is admitted.
 *
 * Flushing (IS algorithm 3): the oldest timestamp_percent of buffered
 * nodes are candidates; temporal control of writes (algorithm 4) keeps
 * those near (sequential) or far from (stride) the last pages written,
 * if that still fills a unit; the candidates are sorted by page and cut
 * into units of flushing_unit pages, scored by the policy (IS eq. 4-7):
 *	m		sum of modifications
 *	mh		sum of modifications x (height + 1)
 *	mha		mh x share of the modified area
 *	mhao	mha x share of the modified overlap
 * and the best unit is written.  Temporal control of reads (algorithm 5)
 * refreshes flushed pages held by the read buffer and pre-caches those in
 * the read queue (the ids of pages recently read from the device).
 *
 * IDENTIFICATION
 *	  src/nodestore/efind.c
 *
 *-------------------------------------------------------------------------
 */
#include "nodestore/buffered.h"

#include <math.h>

#include "cache/replacement.h"
#include "common/int.h"
#include "lib/rbtree.h"
#include "stats/jsonbuild.h"
#include "utils/memutils.h"

/*
 * Bytes a modified entry costs in the write buffer besides the entry: its
 * key (rank and removal flag), as FAST is charged for a position.
 */
#define EFIND_MOD_OVERHEAD 8
/* Bytes a cached node costs in the read buffer besides its entries. */
#define EFIND_CACHED_OVERHEAD 64

typedef enum EfindPolicy
{
	EFIND_M,
	EFIND_MH,
	EFIND_MHA,
	EFIND_MHAO
} EfindPolicy;

/*
 * eFIND's options, read once when the store is created.  Defaults are the
 * best values the papers report (Carniel et al. 2017, 2018, 2019): a 512 kB
 * buffer of which 20% for reads, flushing units of 5 pages, the oldest 60%
 * of buffered nodes as flush candidates, the MH policy, S2Q with temporal
 * control; a 10 MB log.  Where the papers give no value (the sizes of the
 * temporal-control queues) the default is festival's own and
 * docs/frameworks.md says so.
 */
typedef struct EfindOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	int64		buffer_size;	/* read and write buffers together */
	int64		read_buffer_percent;
	int			read_buffer_policy; /* index into replacement_option_choices */
	int64		timestamp_percent;
	int64		flushing_unit;
	int			flushing_policy;	/* EfindPolicy */
	int			temporal_control;	/* EFIND_TC_* */
	int64		write_tc_min_distance;
	int64		write_tc_stride;
	int64		write_tc_size;
	int64		read_tc_percent;
	int64		twoq_a1in_percent;
	int64		log_size;
} EfindOptions;

static const char *const efind_policies[] = {"m", "mh", "mha", "mhao", NULL};

StaticAssertDecl(lengthof(efind_policies) == EFIND_MHAO + 2,
				 "efind_policies must list EfindPolicy in its order");

/* temporal_control, in the order of tc_modes */
#define EFIND_TC_NONE	0
#define EFIND_TC_READ	1
#define EFIND_TC_WRITE	2
#define EFIND_TC_BOTH	3
static const char *const tc_modes[] = {"none", "read", "write", "both", NULL};

const OptionSpec efind_option_table[] = {
	BUFFERED_BUFFER_SIZE_OPTION(EfindOptions, buffer_size, 524288),
	{
		.name = "read_buffer_percent", .type = OPT_INT, .default_number = 20,
		.min = 0, .max = 90,
		.description = "Share of buffer_size given to the read buffer.",
		.offset = offsetof(EfindOptions, read_buffer_percent)
	},
	{
		.name = "read_buffer_policy", .type = OPT_CHOICE, .default_choice = "s2q",
		.choices = replacement_option_choices,
		.description = "Replacement policy of the read buffer.",
		.offset = offsetof(EfindOptions, read_buffer_policy)
	},
	{
		.name = "timestamp_percent", .type = OPT_INT, .default_number = 60,
		.min = 1, .max = 100,
		.description = "Share of buffered nodes, oldest first, considered for a flush.",
		.offset = offsetof(EfindOptions, timestamp_percent)
	},
	BUFFERED_FLUSHING_UNIT_OPTION(EfindOptions, flushing_unit),
	{
		.name = "flushing_policy", .type = OPT_CHOICE, .default_choice = "mh",
		.choices = efind_policies,
		.description = "Score of a flushing unit: modifications (m), by height (mh), by modified area (mha), and overlap (mhao).",
		.offset = offsetof(EfindOptions, flushing_policy)
	},
	{
		.name = "temporal_control", .type = OPT_CHOICE, .default_choice = "both",
		.choices = tc_modes,
		.description = "Temporal control of reads (read queue), of writes (write queue), both or none.",
		.offset = offsetof(EfindOptions, temporal_control)
	},
	{
		.name = "write_tc_min_distance", .type = OPT_INT, .default_number = 10,
		.min = 0, .max = 1000000,
		.description = "Pages at most this far from a recently written page are sequential.",
		.offset = offsetof(EfindOptions, write_tc_min_distance)
	},
	{
		.name = "write_tc_stride", .type = OPT_INT, .default_number = 100,
		.min = 1, .max = 1000000000,
		.description = "Pages at least this far from every recently written page are a stride.",
		.offset = offsetof(EfindOptions, write_tc_stride)
	},
	{
		.name = "write_tc_size", .type = OPT_INT, .default_number = 50,
		.min = 1, .max = 1000000,
		.description = "Pages remembered by the write queue.",
		.offset = offsetof(EfindOptions, write_tc_size)
	},
	{
		.name = "read_tc_percent", .type = OPT_INT, .default_number = 25,
		.min = 1, .max = 100,
		.description = "Size of the read queue, in percent of the pages both buffers hold (at least 10 pages).",
		.offset = offsetof(EfindOptions, read_tc_percent)
	},
	{
		.name = "twoq_a1in_percent", .type = OPT_INT, .default_number = 25,
		.min = 1, .max = 90,
		.description = "Share of the read buffer for first-time pages under the 2q policy.",
		.offset = offsetof(EfindOptions, twoq_a1in_percent)
	},
	BUFFERED_LOG_SIZE_OPTION(EfindOptions, log_size),
	{0}
};

/* One element of a page's modification tree. */
typedef struct EfindMod
{
	RBTNode		rbt;			/* must be first */
	uint32		occ;			/* rank among entries of equal identity */
	bool		present;		/* false: the entry was removed */
	char		entry[FLEXIBLE_ARRAY_MEMBER];
} EfindMod;

/* The modifications of one buffered page (BufPage.mods). */
typedef struct EfindTree
{
	RBTree	   *rbt;
	MemoryContext cxt;			/* the tree's nodes */
	const NodeOps *node_ops;
	uint16		level;
	uint32		entry_size;
	int			count;			/* elements */
} EfindTree;

/* A FIFO of page ids with membership counts (read and write queues). */
typedef struct PageQueue
{
	PageId	   *ring;
	int			capacity;
	int			head;			/* next slot to write */
	int			n;
	HTAB	   *members;		/* PageId -> count */
} PageQueue;

typedef struct QueueMember
{
	PageId		page;
	int			count;
} QueueMember;

typedef struct EfindState
{
	EfindOptions opts;			/* as filled when the store was made */
	int64		rb_bytes;		/* the read buffer's share of buffer_size */
	EfindPolicy policy;
	int			timestamp_percent;
	bool		tc_read;
	bool		tc_write;
	int			min_distance;
	int			stride;
	Replacement *rb;			/* NULL: no read buffer */
	MemoryContext rb_cxt;		/* cached node versions */
	PageQueue	rq;
	PageQueue	wq;
} EfindState;

/* An entry of a node with its rank among entries of equal identity. */
typedef struct KeyedEntry
{
	const char *entry;
	uint32		occ;
} KeyedEntry;

typedef struct KeyOrder
{
	const NodeOps *ops;
	uint16		level;
	uint32		entry_size;
} KeyOrder;

/* Log item: a modified entry. */
typedef struct EfindItemHeader
{
	uint32		occ;
	uint8		present;
	uint8		pad[3];
} EfindItemHeader;

StaticAssertDecl(sizeof(EfindItemHeader) == 8,
				 "EfindItemHeader's layout is documented in log/log.h (MOD)");

/* ------------------------------------------------------------------ */
/* page queues                                                        */
/* ------------------------------------------------------------------ */

static void
queue_init(PageQueue *q, int capacity, MemoryContext cxt)
{
	HASHCTL		ctl;

	q->capacity = Max(capacity, 1);
	q->ring = MemoryContextAllocZero(cxt, q->capacity * sizeof(PageId));
	q->head = 0;
	q->n = 0;
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(QueueMember);
	ctl.hcxt = cxt;
	q->members = hash_create("festival page queue", 64, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

static void
queue_push(PageQueue *q, PageId page)
{
	QueueMember *m;
	bool		found;

	if (q->n == q->capacity)
	{
		PageId		oldest = q->ring[(q->head - q->n + q->capacity) % q->capacity];

		m = hash_search(q->members, &oldest, HASH_FIND, NULL);
		if (m != NULL && --m->count == 0)
			hash_search(q->members, &oldest, HASH_REMOVE, NULL);
		q->n--;
	}
	q->ring[q->head] = page;
	q->head = (q->head + 1) % q->capacity;
	q->n++;
	m = hash_search(q->members, &page, HASH_ENTER, &found);
	m->count = found ? m->count + 1 : 1;
}

static void
queue_clear(PageQueue *q)
{
	HASH_SEQ_STATUS seq;
	QueueMember *m;

	hash_seq_init(&seq, q->members);
	while ((m = hash_seq_search(&seq)) != NULL)
		hash_search(q->members, &m->page, HASH_REMOVE, NULL);
	q->head = 0;
	q->n = 0;
}

static bool
queue_contains(PageQueue *q, PageId page)
{
	return hash_search(q->members, &page, HASH_FIND, NULL) != NULL;
}

static PageId
queue_at(PageQueue *q, int i)
{
	return q->ring[(q->head - q->n + i + q->capacity) % q->capacity];
}

/* ------------------------------------------------------------------ */
/* keys and modification trees                                        */
/* ------------------------------------------------------------------ */

static int
keyed_cmp(const void *a, const void *b, void *arg)
{
	const KeyOrder *ko = (const KeyOrder *) arg;
	const KeyedEntry *x = (const KeyedEntry *) a;
	const KeyedEntry *y = (const KeyedEntry *) b;
	int			c = ko->ops->compare_identity(x->entry, y->entry, ko->level);

	if (c != 0)
		return c;
	return memcmp(x->entry, y->entry, ko->entry_size);
}

/*
 * The entries of a node in key order, each with its rank among entries of
 * equal identity (ties ordered by content, so the ranks are a function of
 * the node's contents).
 */
static KeyedEntry *
keyed_entries(const TreeNode *node, const NodeOps *ops)
{
	KeyedEntry *keyed = palloc(Max(node->nentries, 1) * sizeof(KeyedEntry));
	KeyOrder	ko = {ops, node->level, node->entry_size};

	for (uint32 i = 0; i < node->nentries; i++)
	{
		keyed[i].entry = NodeEntry(node, i);
		keyed[i].occ = 0;
	}
	qsort_arg(keyed, node->nentries, sizeof(KeyedEntry), keyed_cmp, &ko);
	for (uint32 i = 1; i < node->nentries; i++)
		if (ops->compare_identity(keyed[i - 1].entry, keyed[i].entry, node->level) == 0)
			keyed[i].occ = keyed[i - 1].occ + 1;
	return keyed;
}

/* Order of (identity, rank) keys. */
static int
key_cmp(const NodeOps *ops, uint16 level, const char *ea, uint32 oa,
		const char *eb, uint32 ob)
{
	int			c = ops->compare_identity(ea, eb, level);

	if (c != 0)
		return c;
	return oa < ob ? -1 : (oa > ob ? 1 : 0);
}

static int
mod_cmp(const RBTNode *a, const RBTNode *b, void *arg)
{
	const EfindTree *t = (const EfindTree *) arg;
	const EfindMod *x = (const EfindMod *) a;
	const EfindMod *y = (const EfindMod *) b;

	return key_cmp(t->node_ops, t->level, x->entry, x->occ, y->entry, y->occ);
}

/* A key already in the tree takes the newer version. */
static void
mod_combine(RBTNode *existing, const RBTNode *newdata, void *arg)
{
	const EfindTree *t = (const EfindTree *) arg;
	EfindMod   *x = (EfindMod *) existing;
	const EfindMod *y = (const EfindMod *) newdata;

	x->present = y->present;
	memcpy(x->entry, y->entry, t->entry_size);
}

static RBTNode *
mod_alloc(void *arg)
{
	EfindTree  *t = (EfindTree *) arg;

	return MemoryContextAlloc(t->cxt, offsetof(EfindMod, entry) + t->entry_size);
}

static void
mod_free(RBTNode *x, void *arg)
{
	pfree(x);
}

static EfindTree *
tree_create(BufferedStore *bs, uint16 level)
{
	EfindTree  *t = MemoryContextAllocZero(bs->cxt, sizeof(EfindTree));
	MemoryContext old;

	t->cxt = AllocSetContextCreate(bs->cxt, "efind modification tree",
								   ALLOCSET_SMALL_SIZES);
	t->node_ops = bs->ns.node_ops;
	t->level = level;
	t->entry_size = ns_entry_size(&bs->ns, level);
	/* rbt_create allocates in the current context: the tree's own */
	old = MemoryContextSwitchTo(t->cxt);
	t->rbt = rbt_create(offsetof(EfindMod, entry) + t->entry_size,
						mod_cmp, mod_combine, mod_alloc, mod_free, t);
	MemoryContextSwitchTo(old);
	return t;
}

static EfindTree *
page_tree(BufferedStore *bs, BufPage *bp)
{
	if (bp->mods == NULL)
		bp->mods = tree_create(bs, bp->level);
	return (EfindTree *) bp->mods;
}

static void
efind_forget(BufferedStore *bs, BufPage *bp)
{
	EfindTree  *t = (EfindTree *) bp->mods;

	if (t == NULL)
		return;
	MemoryContextDelete(t->cxt);	/* the RBTree and its nodes */
	pfree(t);
	bp->mods = NULL;
}

/* Set one key of a page's tree; on a NEW page a removal just deletes. */
static void
tree_set(EfindTree *t, BufStatus status, const char *entry, uint32 occ,
		 bool present)
{
	EfindMod   *probe = palloc(offsetof(EfindMod, entry) + t->entry_size);
	bool		isnew;

	probe->occ = occ;
	probe->present = present;
	memcpy(probe->entry, entry, t->entry_size);

	if (!present && status == BUF_NEW)
	{
		RBTNode    *found = rbt_find(t->rbt, &probe->rbt);

		if (found != NULL)
		{
			rbt_delete(t->rbt, found);
			t->count--;
		}
	}
	else
	{
		rbt_insert(t->rbt, &probe->rbt, &isnew);
		if (isnew)
			t->count++;
	}
	pfree(probe);
}

static void
account_tree(BufferedStore *bs, BufPage *bp)
{
	EfindTree  *t = (EfindTree *) bp->mods;
	int64		bytes = BUF_PAGE_OVERHEAD;

	if (t != NULL)
		bytes += (int64) t->count * (t->entry_size + EFIND_MOD_OVERHEAD);
	buffered_account(bs, bp, bytes);
}

/* ------------------------------------------------------------------ */
/* taking writes in, and giving nodes out                             */
/* ------------------------------------------------------------------ */

/* Log items, collected while a write is taken in. */
typedef struct ItemLog
{
	StringInfoData buf;
	uint32		count;
	uint32		entry_size;
} ItemLog;

static void
item_add(ItemLog *log, const char *entry, uint32 occ, bool present)
{
	EfindItemHeader h;

	memset(&h, 0, sizeof(h));
	h.occ = occ;
	h.present = present ? 1 : 0;
	appendBinaryStringInfo(&log->buf, (const char *) &h, sizeof(h));
	appendBinaryStringInfo(&log->buf, entry, log->entry_size);
	log->count++;
}

static void
apply_and_log(BufferedStore *bs, BufPage *bp, ItemLog *items,
			  const char *entry, uint32 occ, bool present)
{
	tree_set(page_tree(bs, bp), bp->status, entry, occ, present);
	item_add(items, entry, occ, present);
	bp->mod_count++;
}

/*
 * Take a node's new version in.  NEW and REPLACE (a split: DEL + NEW)
 * start the page afresh with all its entries; UPDATE records, key by key,
 * what differs from the version last returned.
 */
static void
efind_absorb(BufferedStore *bs, BufPage *bp, const TreeNode *old,
			 const TreeNode *node, NodeWriteKind kind)
{
	const NodeOps *ops = bs->ns.node_ops;
	KeyedEntry *nk = keyed_entries(node, ops);
	ItemLog		items;

	initStringInfo(&items.buf);
	items.count = 0;
	items.entry_size = node->entry_size;

	if (kind != NS_WRITE_UPDATE)
	{
		if (kind == NS_WRITE_REPLACE)
			bp->mod_count++;	/* the deletion of the split node */
		efind_forget(bs, bp);
		buffered_set_status(bp, BUF_NEW);
		bp->mod_count++;		/* the creation */
		buffered_log(bs, LOG_NEW, bp, 0, NULL, 0);
		for (uint32 j = 0; j < node->nentries; j++)
			apply_and_log(bs, bp, &items, nk[j].entry, nk[j].occ, true);
	}
	else
	{
		KeyedEntry *ok = keyed_entries(old, ops);
		uint32		i = 0;
		uint32		j = 0;

		while (i < old->nentries || j < node->nentries)
		{
			int			c;

			if (i == old->nentries)
				c = 1;
			else if (j == node->nentries)
				c = -1;
			else
				c = key_cmp(ops, node->level, ok[i].entry, ok[i].occ,
							nk[j].entry, nk[j].occ);

			if (c < 0)
			{
				apply_and_log(bs, bp, &items, ok[i].entry, ok[i].occ, false);
				i++;
			}
			else if (c > 0)
			{
				apply_and_log(bs, bp, &items, nk[j].entry, nk[j].occ, true);
				j++;
			}
			else
			{
				if (memcmp(ok[i].entry, nk[j].entry, node->entry_size) != 0)
					apply_and_log(bs, bp, &items, nk[j].entry, nk[j].occ, true);
				i++;
				j++;
			}
		}
	}

	if (items.count > 0)
		buffered_log(bs, LOG_MOD, bp, items.count, items.buf.data, items.buf.len);
	account_tree(bs, bp);
}

/*
 * The latest version: the sorted merge of the stored entries (NULL for a
 * NEW page) and the modification tree, the tree winning on equal keys and
 * removed entries left out (Carniel et al. 2018 §3.3).
 */
static TreeNode *
efind_materialize(BufferedStore *bs, BufPage *bp, const TreeNode *stored)
{
	NodeStore  *ns = &bs->ns;
	const NodeOps *ops = ns->node_ops;
	TreeNode   *out = ns_new_node(ns, bp ? bp->page : stored->page,
								  stored ? stored->level : bp->level);
	EfindTree  *t = (EfindTree *) bp->mods;
	KeyedEntry *sk = stored ? keyed_entries(stored, ops) : NULL;
	uint32		ns_count = stored ? stored->nentries : 0;
	uint32		i = 0;
	RBTreeIterator it;
	EfindMod   *m = NULL;
#ifdef USE_ASSERT_CHECKING
	EfindMod   *prev = NULL;
	int			walked = 0;
#endif

	if (stored)
	{
		out->flags = stored->flags;
		out->link = stored->link;
	}
	if (t != NULL)
	{
		rbt_begin_iterate(t->rbt, LeftRightWalk, &it);
		m = (EfindMod *) rbt_iterate(&it);
	}

	while (i < ns_count || m != NULL)
	{
		int			c;
		const char *take = NULL;

		if (m == NULL)
			c = -1;
		else if (i == ns_count)
			c = 1;
		else
			c = key_cmp(ops, out->level, sk[i].entry, sk[i].occ, m->entry, m->occ);

		if (c < 0)
			take = sk[i++].entry;
		else
		{
			if (m->present)
				take = m->entry;
			if (c == 0)
				i++;
#ifdef USE_ASSERT_CHECKING
			/*
			 * The modification tree: one latest version per key, in key
			 * order, and on a NEW page only entries (a removal deletes).
			 */
			Assert(m->present || bp->status != BUF_NEW);
			Assert(prev == NULL ||
				   key_cmp(ops, out->level, prev->entry, prev->occ, m->entry, m->occ) < 0);
			prev = m;
			walked++;
#endif
			m = (EfindMod *) rbt_iterate(&it);
		}
		if (take != NULL)
		{
			if (out->nentries >= out->capacity - 1)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("buffered modifications of page " UINT64_FORMAT " of index \"%s\" overflow the node",
								out->page, ns->index_name)));
			memcpy(NodeEntry(out, out->nentries), take, out->entry_size);
			out->nentries++;
		}
	}
	Assert(t == NULL || walked == t->count);
	return out;
}

static void
free_cached(void *data)
{
	TreeNode   *node = (TreeNode *) data;

	pfree(node->entries);
	pfree(node);
}

static void
free_all(List *payloads)
{
	ListCell   *lc;

	foreach(lc, payloads)
		free_cached(lfirst(lc));
	list_free(payloads);
}

static int64
cached_bytes(const TreeNode *node)
{
	return (int64) node->nentries * node->entry_size + EFIND_CACHED_OVERHEAD;
}

/* The stored version, through the read buffer. */
static TreeNode *
efind_read_stored(BufferedStore *bs, PageId page, FestPageCheck *check)
{
	EfindState *st = (EfindState *) bs->fw;
	TreeNode   *node;
	bool		seen_recently;

	if (st->rb != NULL)
	{
		TreeNode   *cached = replacement_lookup(st->rb, page);

		if (cached != NULL)
		{
			bs->ns.stats->read_buffer_hits++;
			*check = FEST_PAGE_OK;
			return ns_copy_node(cached, CurrentMemoryContext);
		}
		bs->ns.stats->read_buffer_misses++;
	}

	node = buffered_read_disk(bs, page, check);
	if (node == NULL || bs->flushing)
		return node;			/* a flush's read is no read request (IS alg. 5) */
	/* s2q's A1 is the read queue (IS section 6.3): a page read again while
	 * the queue remembers it is admitted, a first read only remembered */
	seen_recently = st->tc_read && queue_contains(&st->rq, page);
	if (st->tc_read)
		queue_push(&st->rq, page);
	if (st->rb != NULL && (st->rb->policy != REPL_S2Q || seen_recently))
	{
		TreeNode   *copy = ns_copy_node(node, st->rb_cxt);
		List	   *evicted = NIL;

		if (!replacement_admit(st->rb, page, cached_bytes(copy), copy->level,
							   copy, st->rb->policy == REPL_S2Q, &evicted))
			free_cached(copy);
		free_all(evicted);
	}
	return node;
}

/* Would efind_read_stored find page in the read buffer? */
static bool
efind_stored_in_memory(BufferedStore *bs, PageId page)
{
	EfindState *st = (EfindState *) bs->fw;

	return st->rb != NULL && replacement_contains(st->rb, page);
}

/*
 * Temporal control of reads (IS algorithm 5) after a page was written: a
 * cached copy is refreshed; a page in the read queue is pre-cached.  The
 * write queue remembers the page for the temporal control of writes.
 */
static void
efind_flushed(BufferedStore *bs, PageId page, const TreeNode *written)
{
	EfindState *st = (EfindState *) bs->fw;

	if (st->tc_write)
		queue_push(&st->wq, page);
	if (st->rb == NULL)
		return;
	if (written == NULL)
	{
		void	   *old = replacement_remove(st->rb, page);

		if (old != NULL)
			free_cached(old);
		return;
	}
	{
		TreeNode   *copy = ns_copy_node(written, st->rb_cxt);
		void	   *old;

		if (replacement_update(st->rb, page, cached_bytes(copy), copy, &old))
			free_cached(old);
		else if (st->tc_read && queue_contains(&st->rq, page))
		{
			List	   *evicted = NIL;

			if (replacement_admit(st->rb, page, cached_bytes(copy), copy->level,
								  copy, true, &evicted))
				bs->ns.stats->read_buffer_precached++;
			else
				free_cached(copy);
			free_all(evicted);
		}
		else
			free_cached(copy);
	}
}

/* ------------------------------------------------------------------ */
/* flushing                                                           */
/* ------------------------------------------------------------------ */

/* Modified area and overlap of a page, for mha and mhao (IS eq. 6-7). */
static void
modified_area(BufferedStore *bs, BufPage *bp, double *area, double *overlap)
{
	EfindTree  *t = (EfindTree *) bp->mods;
	RBTreeIterator it;
	EfindMod   *m;
	Mbr		   *boxes;
	int			n = 0;
	Mbr			all;

	*area = 0;
	*overlap = 0;
	if (t == NULL || t->count == 0)
		return;
	boxes = palloc(t->count * sizeof(Mbr));
	mbr_set_empty(&all);
	rbt_begin_iterate(t->rbt, LeftRightWalk, &it);
	while ((m = (EfindMod *) rbt_iterate(&it)) != NULL)
	{
		buffered_entry_mbr(bs, m->entry, t->level, &boxes[n]);
		mbr_extend(&all, &boxes[n]);
		n++;
	}
	*area = mbr_area(&all);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			*overlap += mbr_overlap_area(&boxes[i], &boxes[j]);
	pfree(boxes);
}

static int
bufpage_by_page(const void *a, const void *b)
{
	const BufPage *pa = *(const BufPage *const *) a;
	const BufPage *pb = *(const BufPage *const *) b;

	return pa->page < pb->page ? -1 : (pa->page > pb->page ? 1 : 0);
}

/* Distance from a page to the nearest page of the write queue. */
static uint64
distance_to_wq(EfindState *st, PageId page)
{
	uint64		best = PG_UINT64_MAX;

	for (int i = 0; i < st->wq.n; i++)
	{
		PageId		w = queue_at(&st->wq, i);
		uint64		d = page > w ? page - w : w - page;

		best = Min(best, d);
	}
	return best;
}

/*
 * Temporal control of writes (IS algorithm 4): keep the sequential
 * candidates if they fill a unit, else the strides, else both, else all.
 */
static int
filter_by_wq(BufferedStore *bs, BufPage **cand, int n)
{
	EfindState *st = (EfindState *) bs->fw;
	int			unit = bs->cfg.flushing_unit;
	BufPage   **seq = palloc(n * sizeof(BufPage *));
	BufPage   **str = palloc(n * sizeof(BufPage *));
	int			nseq = 0;
	int			nstr = 0;

	for (int i = 0; i < n; i++)
	{
		uint64		d = distance_to_wq(st, cand[i]->page);

		if (d <= (uint64) st->min_distance)
			seq[nseq++] = cand[i];
		else if (d >= (uint64) st->stride)
			str[nstr++] = cand[i];
	}

	if (nseq >= unit)
	{
		memcpy(cand, seq, nseq * sizeof(BufPage *));
		bs->ns.stats->tc_sequential++;
		return nseq;
	}
	if (nstr >= unit)
	{
		memcpy(cand, str, nstr * sizeof(BufPage *));
		bs->ns.stats->tc_stride++;
		return nstr;
	}
	if (nseq + nstr >= unit)
	{
		memcpy(cand, seq, nseq * sizeof(BufPage *));
		memcpy(cand + nseq, str, nstr * sizeof(BufPage *));
		bs->ns.stats->tc_both++;
		return nseq + nstr;
	}
	bs->ns.stats->tc_unfiltered++;
	return n;
}

/* IS algorithm 3: the flushing unit to write next. */
static List *
efind_choose_unit(BufferedStore *bs)
{
	EfindState *st = (EfindState *) bs->fw;
	int			unit = bs->cfg.flushing_unit;
	int			n = hash_get_num_entries(bs->table);
	BufPage   **all = palloc(Max(n, 1) * sizeof(BufPage *));
	HASH_SEQ_STATUS status;
	BufPage    *bp;
	int			ncand;
	int			i = 0;
	double		total_area = 0;
	double		total_overlap = 0;
	double	   *area = NULL;
	double	   *overlap = NULL;
	double		best = -1;
	int			best_start = 0;
	int			best_len = 0;
	List	   *result = NIL;

	hash_seq_init(&status, bs->table);
	while ((bp = hash_seq_search(&status)) != NULL)
		all[i++] = bp;
	if (n == 0)
		return NIL;

	/* the oldest timestamp_percent, but at least a unit */
	qsort(all, n, sizeof(BufPage *), buffered_oldest_first);
	ncand = Min(n, Max(unit, (int) ceil((double) n * st->timestamp_percent / 100.0)));

	if (st->tc_write && st->wq.n > 0)
		ncand = filter_by_wq(bs, all, ncand);
	qsort(all, ncand, sizeof(BufPage *), bufpage_by_page);

	if (st->policy == EFIND_MHA || st->policy == EFIND_MHAO)
	{
		/* shares are relative to everything buffered */
		BufPage   **every = palloc(n * sizeof(BufPage *));
		int			k = 0;

		hash_seq_init(&status, bs->table);
		while ((bp = hash_seq_search(&status)) != NULL)
		{
			double		a;
			double		o;

			every[k++] = bp;
			modified_area(bs, bp, &a, &o);
			total_area += a;
			total_overlap += o;
		}
		area = palloc(ncand * sizeof(double));
		overlap = palloc(ncand * sizeof(double));
		for (int c = 0; c < ncand; c++)
			modified_area(bs, all[c], &area[c], &overlap[c]);
		pfree(every);
	}

	for (int start = 0; start < ncand; start += unit)
	{
		int			len = Min(unit, ncand - start);
		double		mods = 0;
		double		weighted = 0;
		double		unit_area = 0;
		double		unit_overlap = 0;
		double		score;

		for (int c = start; c < start + len; c++)
		{
			mods += all[c]->mod_count;
			weighted += (double) all[c]->mod_count * (all[c]->level + 1);
			if (area != NULL)
			{
				unit_area += area[c];
				unit_overlap += overlap[c];
			}
		}
		switch (st->policy)
		{
			case EFIND_M:
				score = mods;
				break;
			case EFIND_MH:
				score = weighted;
				break;
			case EFIND_MHA:
				score = weighted * (total_area > 0 ? unit_area / total_area : 1.0);
				break;
			default:
				score = weighted * (total_area > 0 ? unit_area / total_area : 1.0) *
					(total_overlap > 0 ? unit_overlap / total_overlap : 1.0);
				break;
		}
		if (score > best)
		{
			best = score;
			best_start = start;
			best_len = len;
		}
	}

	for (int c = best_start; c < best_start + best_len; c++)
	{
		PageId	   *id = palloc(sizeof(PageId));

		*id = all[c]->page;
		result = lappend(result, id);
	}
	pfree(all);
	return result;
}

/* ------------------------------------------------------------------ */
/* log: replay and compaction                                         */
/* ------------------------------------------------------------------ */

static void
efind_replay(BufferedStore *bs, BufPage *bp, const LogRecord *rec)
{
	uint32		entry_size = ns_entry_size(&bs->ns, rec->hdr.level);
	uint32		item = sizeof(EfindItemHeader) + entry_size;

	if (rec->hdr.type == LOG_NEW)
	{
		bp->mod_count++;
		account_tree(bs, bp);
		return;
	}
	if (rec->payload_len != (uint64) rec->hdr.count * item)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("log of index \"%s\" holds a malformed record for page " UINT64_FORMAT,
						bs->ns.index_name, bp->page)));
	for (uint32 i = 0; i < rec->hdr.count; i++)
	{
		EfindItemHeader h;
		const char *p = rec->payload + (size_t) i * item;

		memcpy(&h, p, sizeof(h));
		tree_set(page_tree(bs, bp), bp->status, p + sizeof(h), h.occ, h.present != 0);
		bp->mod_count++;
	}
	account_tree(bs, bp);
}

static void
efind_emit(BufferedStore *bs, BufPage *bp)
{
	EfindTree  *t = (EfindTree *) bp->mods;
	ItemLog		items;
	RBTreeIterator it;
	EfindMod   *m;

	if (bp->status == BUF_NEW)
		log_append(bs->log, LOG_NEW, bp->page, bp->level, 0, 0, NULL, 0);
	if (t == NULL)
		return;
	initStringInfo(&items.buf);
	items.count = 0;
	items.entry_size = t->entry_size;
	rbt_begin_iterate(t->rbt, LeftRightWalk, &it);
	while ((m = (EfindMod *) rbt_iterate(&it)) != NULL)
		item_add(&items, m->entry, m->occ, m->present);
	if (items.count > 0)
		log_append(bs->log, LOG_MOD, bp->page, bp->level, items.count, 0,
				   items.buf.data, items.buf.len);
	pfree(items.buf.data);
}

static void
efind_deleted(BufferedStore *bs, BufPage *bp)
{
}

/* A rebuild: cached versions and remembered ids describe pages now gone. */
static void
efind_reset(BufferedStore *bs)
{
	EfindState *st = (EfindState *) bs->fw;

	if (st->rb != NULL)
		free_all(replacement_clear(st->rb));
	queue_clear(&st->rq);
	queue_clear(&st->wq);
}

static void
efind_describe(BufferedStore *bs, JsonbParseState **state)
{
	EfindState *st = (EfindState *) bs->fw;

	if (st->rb != NULL)
	{
		jb_int(state, "read_buffer_bytes", st->rb->used);
		jb_int(state, "read_buffer_capacity", st->rb->capacity);
		jb_int(state, "read_buffer_pages", replacement_resident(st->rb));
	}
	jb_int(state, "read_queue_pages", st->rq.n);
	jb_int(state, "write_queue_pages", st->wq.n);
}

/* The queues and the read buffer live in the store's context. */
static void
efind_setup(BufferedStore *bs)
{
	EfindState *st = (EfindState *) bs->fw;
	const EfindOptions *opts = &st->opts;
	/* read queue: a share of the pages both buffers hold, at least 10 */
	int			page_pages = (int) ((bs->cfg.buffer_size + st->rb_bytes) / bs->ns.page_size);

	queue_init(&st->rq, Max(10, page_pages * (int) opts->read_tc_percent / 100),
			   bs->cxt);
	queue_init(&st->wq, (int) opts->write_tc_size, bs->cxt);

	if (opts->read_buffer_policy != 0 && st->rb_bytes > 0)
	{
		st->rb_cxt = AllocSetContextCreate(bs->cxt, "efind read buffer",
										   ALLOCSET_DEFAULT_SIZES);
		st->rb = replacement_create(replacement_policy_of_choice(opts->read_buffer_policy),
									st->rb_bytes, (int) opts->twoq_a1in_percent,
									st->rq.capacity, bs->cxt);
	}
}

static const BufferedOps efind_ops = {
	.name = "efind",
	.log_writer = LOG_WRITER_EFIND,
	.setup = efind_setup,
	.absorb = efind_absorb,
	.materialize = efind_materialize,
	.read_stored = efind_read_stored,
	.replay = efind_replay,
	.emit = efind_emit,
	.choose_unit = efind_choose_unit,
	.flushed = efind_flushed,
	.forget = efind_forget,
	.deleted = efind_deleted,
	.reset = efind_reset,
	.describe = efind_describe,
	.stored_in_memory = efind_stored_in_memory
};

NodeStore *
efind_store_create(const NodeStoreArgs *args)
{
	EfindState *st = palloc0(sizeof(EfindState));
	EfindOptions *opts = &st->opts;
	BufferedConfig cfg;

	OPTIONS_FILL(args->config, efind_option_table, opts);
	cfg.buffer_size = opts->buffer_size;
	cfg.flushing_unit = (int) opts->flushing_unit;
	cfg.log_size = opts->log_size;
	st->rb_bytes = cfg.buffer_size * opts->read_buffer_percent / 100;
	cfg.buffer_size -= st->rb_bytes;	/* the rest is the write buffer */

	st->policy = (EfindPolicy) opts->flushing_policy;
	st->timestamp_percent = (int) opts->timestamp_percent;
	st->tc_read = opts->temporal_control == EFIND_TC_READ ||
		opts->temporal_control == EFIND_TC_BOTH;
	st->tc_write = opts->temporal_control == EFIND_TC_WRITE ||
		opts->temporal_control == EFIND_TC_BOTH;
	st->min_distance = (int) opts->write_tc_min_distance;
	st->stride = (int) opts->write_tc_stride;
	return buffered_store_create(&efind_ops, &cfg, st, args);
}

/*
 * Fill eFIND's options and refuse the combinations that cannot work;
 * returns buffer_size, the memory both buffers hold.
 */
int64
efind_validate(const FestConfig *config)
{
	EfindOptions opts;
	const char *policy;
	bool		tc_read;

	OPTIONS_FILL(config, efind_option_table, &opts);
	policy = replacement_option_choices[opts.read_buffer_policy];
	tc_read = opts.temporal_control == EFIND_TC_READ ||
		opts.temporal_control == EFIND_TC_BOTH;

	if (strcmp(policy, "s2q") == 0 && !tc_read)
		config_error(config,
					 "The s2q read buffer admits pages found in the read queue, which only temporal control of reads keeps.",
					 "Use temporal_control 'read' or 'both', or another read_buffer_policy.");
	if (opts.read_buffer_percent == 0 && opts.read_buffer_policy != 0)
		config_error(config,
					 psprintf("read_buffer_percent 0 leaves no memory for the %s read buffer.", policy),
					 "Set read_buffer_policy to 'none', or give the read buffer a share.");
	if (opts.read_buffer_percent > 0 && opts.read_buffer_policy == 0)
		config_error(config,
					 "read_buffer_policy 'none' takes no share of the buffer.",
					 "Set read_buffer_percent to 0, or choose a read_buffer_policy.");
	return opts.buffer_size;
}
