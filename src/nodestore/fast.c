/*-------------------------------------------------------------------------
 *
 * fast.c
 *	  FAST: Sarwat, Mokbel, Zhou and Nath, "Generic and efficient framework
 *	  for search trees on flash memory storage systems", GeoInformatica
 *	  17(3), 2013 (SSTD 2011).
 *
 * FAST keeps the *results* of node modifications in memory, per node and
 * in the order they happened (FESTIval inventory §2.6):
 *	- a node created in the buffer (NEW) is held whole;
 *	- a stored node (MOD) gets a list of changes by position: "entry i is
 *	  now e" (SET) and "the node now has n entries" (TRUNCATE), and, for a
 *	  structure whose nodes are ordered, "e goes in at i" (INSERT) and "the
 *	  entry at i goes" (DELETE), which move the later entries; a read
 *	  applies the list to the stored version, so repeated changes of one
 *	  position all stay in the list (the weakness eFIND addresses);
 *	- a split rewrites the node (DEL + NEW), as in FESTIval.
 * Modifications are counted in bytes against buffer_size.
 *
 * Flushing units are static (FAST §5): pages are grouped into units of
 * flushing_unit pages in the order they first enter the buffer, and keep
 * their unit while the index is open.  A flush writes every page of the
 * chosen unit, reading and rewriting unmodified ones (counted as
 * unnecessary_flushed_pages).  Policies:
 *	flush_all	every unit holding modifications
 *	random		a unit holding modifications, drawn with a PRNG seeded by
 *				random_seed (reproducible)
 *	fast		the unit with the most modifications
 *	fast_star	the unit with the highest modifications x age, where age
 *				is the logical time since the unit's last modification:
 *				units that stopped changing go first.  (FAST* combines
 *				the number of modifications with their recency; the
 *				paper's exact formula was not available to us, and
 *				FESTIval's version subtracts a millisecond timestamp from
 *				a count, two incomparable scales.)
 *
 * IDENTIFICATION
 *	  src/nodestore/fast.c
 *
 *-------------------------------------------------------------------------
 */
#include "nodestore/buffered.h"

#include "common/pg_prng.h"
#include "stats/jsonbuild.h"
#include "utils/memutils.h"

/*
 * FAST's options, read once when the store is created.  Defaults are the
 * best values the papers report: a 512 kB buffer, flushing units of 5
 * pages and the FAST* policy (Carniel et al. 2016, 2017); a 10 MB log.
 */
typedef struct FastOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	int64		buffer_size;
	int64		flushing_unit;
	int			flushing_policy;	/* FastPolicy: index into fast_policies */
	int64		random_seed;
	int64		log_size;
} FastOptions;

static const char *const fast_policies[] = {"flush_all", "random", "fast", "fast_star", NULL};

const OptionSpec fast_option_table[] = {
	BUFFERED_BUFFER_SIZE_OPTION(FastOptions, buffer_size, 524288),
	BUFFERED_FLUSHING_UNIT_OPTION(FastOptions, flushing_unit),
	{
		.name = "flushing_policy", .type = OPT_CHOICE, .default_choice = "fast_star",
		.choices = fast_policies,
		.description = "Which flushing unit to write when the buffer is full.",
		.offset = offsetof(FastOptions, flushing_policy)
	},
	{
		.name = "random_seed", .type = OPT_INT, .default_number = 0,
		.min = 0, .max = 2147483647,
		.description = "Seed of the random flushing policy (reproducible runs).",
		.offset = offsetof(FastOptions, random_seed)
	},
	BUFFERED_LOG_SIZE_OPTION(FastOptions, log_size),
	{0}
};

/* Bytes a position change costs besides the entry (position, kind). */
#define FAST_MOD_OVERHEAD 8

typedef enum FastPolicy
{
	FAST_FLUSH_ALL,
	FAST_RANDOM,
	FAST_FAST,
	FAST_STAR
} FastPolicy;

StaticAssertDecl(lengthof(fast_policies) == FAST_STAR + 2,
				 "fast_policies must list FastPolicy in its order");

/*
 * The kinds of change of a MOD page (FastItemHeader.kind; the log's
 * payload format 2, log/log.h; format 1 knew SET and TRUNCATE only).
 * INSERT and DELETE keep an ordered node's one-entry change one item: the
 * xBR+-tree keeps its leaves sorted and its internal entries in address
 * order, the Hilbert R-tree its entries in Hilbert order, so an insertion
 * moves every later entry one place, which by position would be about half
 * a node of SET items (the defect of docs/experiments.md, "Why the eFIND
 * xBR+-tree claims fail").  FESTIval's FAST records such an insertion into
 * a Hilbert R-tree node as one "hole" item (FESTIval inventory §2.6).
 */
typedef enum FastItemKind
{
	FAST_ITEM_SET = 0,			/* entry position is now e */
	FAST_ITEM_TRUNCATE = 1,		/* the node now has position entries */
	FAST_ITEM_INSERT = 2,		/* e goes in at position, later entries move
								 * one place right */
	FAST_ITEM_DELETE = 3		/* the entry at position goes, later entries
								 * move one place left */
} FastItemKind;

/* One change of a MOD page, as logged and as kept. */
typedef struct FastItemHeader
{
	uint32		position;		/* by kind, above */
	uint8		kind;			/* FastItemKind */
	uint8		pad[3];
} FastItemHeader;

StaticAssertDecl(sizeof(FastItemHeader) == 8,
				 "FastItemHeader's layout is documented in log/log.h (MOD)");

/* The modifications of one buffered page (BufPage.mods). */
typedef struct FastPage
{
	TreeNode   *node;			/* NEW: the whole node */
	StringInfoData items;		/* MOD: FastItemHeader + entry, in order */
	uint32		nitems;
	uint32		entry_size;
} FastPage;

typedef struct FastUnit
{
	int			npages;
	PageId		pages[FLEXIBLE_ARRAY_MEMBER];
} FastUnit;

typedef struct UnitOf
{
	PageId		page;			/* hash key */
	int			unit;
} UnitOf;

typedef struct UnitScore
{
	int64		mods;			/* unit_state's modifications */
	uint64		last;			/* and time of the latest */
	bool		stale;			/* to be counted again at the next flush */
} UnitScore;

typedef struct FastState
{
	FastPolicy	policy;
	pg_prng_state prng;
	HTAB	   *unit_of;		/* PageId -> unit */
	FastUnit  **units;
	int			nunits;
	int			maxunits;
	/*
	 * Per unit, what unit_state gives (its buffered modifications and the
	 * time of the latest), kept between flushes and made again only for the
	 * units marked stale since: a page of theirs changed, entered or left
	 * the buffer (assign_unit runs at every change, fast_forget at every
	 * leaving).  A flush then scores every unit from these instead of
	 * looking every unit's pages up in the buffer: the same choices at a
	 * fraction of the CPU (docs/frameworks.md, FAST).
	 */
	UnitScore  *scores;			/* one per unit, as units */
} FastState;

static FastPage *
fast_page(BufferedStore *bs, BufPage *bp, uint16 level)
{
	if (bp->mods == NULL)
	{
		FastPage   *fp = MemoryContextAllocZero(bs->cxt, sizeof(FastPage));
		MemoryContext old = MemoryContextSwitchTo(bs->cxt);

		initStringInfo(&fp->items);
		MemoryContextSwitchTo(old);
		fp->entry_size = ns_entry_size(&bs->ns, level);
		bp->mods = fp;
	}
	return (FastPage *) bp->mods;
}

void
fast_changes_forget(BufferedStore *bs, BufPage *bp)
{
	FastPage   *fp = (FastPage *) bp->mods;

	if (fp == NULL)
		return;
	if (fp->node != NULL)
	{
		pfree(fp->node->entries);
		pfree(fp->node);
	}
	pfree(fp->items.data);
	pfree(fp);
	bp->mods = NULL;
}

/* Put the page in the unit being filled, the first time it is buffered. */
static void
assign_unit(BufferedStore *bs, PageId page)
{
	FastState  *st = (FastState *) bs->fw;
	int			unit_size = bs->cfg.flushing_unit;
	bool		found;
	UnitOf	   *u = hash_search(st->unit_of, &page, HASH_ENTER, &found);
	FastUnit   *last;

	if (found)
	{
		st->scores[u->unit].stale = true;	/* one of its pages changes */
		return;
	}
	if (st->nunits == 0 || st->units[st->nunits - 1]->npages == unit_size)
	{
		if (st->nunits == st->maxunits)
		{
			st->maxunits = Max(16, st->maxunits * 2);
			if (st->units)
			{
				st->units = repalloc(st->units, st->maxunits * sizeof(FastUnit *));
				st->scores = repalloc(st->scores, st->maxunits * sizeof(UnitScore));
			}
			else
			{
				st->units = MemoryContextAlloc(bs->cxt, st->maxunits * sizeof(FastUnit *));
				st->scores = MemoryContextAlloc(bs->cxt, st->maxunits * sizeof(UnitScore));
			}
		}
		st->units[st->nunits++] = MemoryContextAllocZero(bs->cxt,
														 offsetof(FastUnit, pages) + unit_size * sizeof(PageId));
	}
	last = st->units[st->nunits - 1];
	Assert(last->npages < unit_size);
	last->pages[last->npages++] = page;
	u->unit = st->nunits - 1;
	st->scores[u->unit].stale = true;
}

/* A page leaves the buffer (flushed, or replaced in recovery): its unit's
 * aggregates are stale. */
static void
fast_forget(BufferedStore *bs, BufPage *bp)
{
	FastState  *st = (FastState *) bs->fw;
	UnitOf	   *u = hash_search(st->unit_of, &bp->page, HASH_FIND, NULL);

	if (u != NULL)
		st->scores[u->unit].stale = true;
	fast_changes_forget(bs, bp);
}

static void
account_page(BufferedStore *bs, BufPage *bp)
{
	FastPage   *fp = (FastPage *) bp->mods;
	int64		bytes = BUF_PAGE_OVERHEAD;

	if (fp != NULL && fp->node != NULL)
		bytes += (int64) fp->node->nentries * fp->node->entry_size;
	if (fp != NULL)
		bytes += (int64) fp->nitems * (fp->entry_size + FAST_MOD_OVERHEAD);
	buffered_account(bs, bp, bytes);
}

/* Apply one change to a node (a NEW page's, or a stored version). */
static void
apply_item(BufferedStore *bs, TreeNode *node, const FastItemHeader *h,
		   const char *entry)
{
	size_t		es = node->entry_size;

	switch ((FastItemKind) h->kind)
	{
		case FAST_ITEM_TRUNCATE:
			if (h->position > node->nentries)
				goto bad;
			node->nentries = h->position;
			return;
		case FAST_ITEM_SET:
			if (h->position > node->nentries || h->position >= node->capacity)
				goto bad;
			memcpy(NodeEntry(node, h->position), entry, es);
			if (h->position == node->nentries)
				node->nentries++;
			return;
		case FAST_ITEM_INSERT:
			if (h->position > node->nentries || node->nentries >= node->capacity)
				goto bad;
			memmove(NodeEntry(node, h->position + 1), NodeEntry(node, h->position),
					(size_t) (node->nentries - h->position) * es);
			memcpy(NodeEntry(node, h->position), entry, es);
			node->nentries++;
			return;
		case FAST_ITEM_DELETE:
			if (h->position >= node->nentries)
				goto bad;
			memmove(NodeEntry(node, h->position), NodeEntry(node, h->position + 1),
					(size_t) (node->nentries - h->position - 1) * es);
			node->nentries--;
			return;
	}

bad:
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("buffered modifications of page " UINT64_FORMAT " of index \"%s\" do not fit the node",
					node->page, bs->ns.index_name)));
}

/* SET and INSERT carry an entry; TRUNCATE and DELETE zeros in its place. */
static inline bool
item_has_entry(uint8 kind)
{
	return kind == FAST_ITEM_SET || kind == FAST_ITEM_INSERT;
}

static void
append_item(StringInfo buf, const FastItemHeader *h, const char *entry,
			uint32 entry_size)
{
	Assert((entry != NULL) == item_has_entry(h->kind));
	appendBinaryStringInfo(buf, (const char *) h, sizeof(*h));
	if (entry != NULL)
		appendBinaryStringInfo(buf, entry, entry_size);
	else
	{
		enlargeStringInfo(buf, entry_size);
		memset(buf->data + buf->len, 0, entry_size);
		buf->len += entry_size;
		buf->data[buf->len] = '\0';
	}
}

/* Record (and log) one change of a MOD page. */
static void
add_item(BufferedStore *bs, BufPage *bp, StringInfo logbuf, uint32 *logcount,
		 uint32 position, FastItemKind kind, const char *entry)
{
	FastPage   *fp = (FastPage *) bp->mods;
	FastItemHeader h;
	MemoryContext old;

	memset(&h, 0, sizeof(h));
	h.position = position;
	h.kind = (uint8) kind;

	if (fp->node != NULL)
		apply_item(bs, fp->node, &h, entry);	/* a NEW page keeps results */
	else
	{
		old = MemoryContextSwitchTo(bs->cxt);
		append_item(&fp->items, &h, entry, fp->entry_size);
		MemoryContextSwitchTo(old);
		fp->nitems++;
	}
	append_item(logbuf, &h, entry, fp->entry_size);
	(*logcount)++;
	bp->mod_count++;
}

static void apply_items(BufferedStore *bs, TreeNode *node, const char *items,
						uint32 n, uint32 entry_size);

static inline bool
same_entry(const TreeNode *a, uint32 i, const TreeNode *b, uint32 j)
{
	return memcmp(NodeEntry(a, i), NodeEntry(b, j), a->entry_size) == 0;
}

/* Items "entry i is now e" (and a TRUNCATE) that make old into node. */
static uint32
positional_cost(const TreeNode *old, const TreeNode *node)
{
	uint32		cost = node->nentries < old->nentries ? 1 : 0;

	for (uint32 i = 0; i < node->nentries; i++)
		if (i >= old->nentries || !same_entry(old, i, node, i))
			cost++;
	return cost;
}

/*
 * When node is old with one entry inserted (node->nentries = old + 1) or
 * removed (- 1), and perhaps some other positions changed (a parent's
 * MBR of the child that grew, say): the position of the INSERT or DELETE
 * that, followed by SET items for the positions still different, takes
 * the fewest items; returns that number (0: neither shape).  Only the
 * middle between the longest common prefix and the longest common suffix
 * (after the shift) can differ, and the position lies in it.  For an
 * insertion at i, position j < i compares with old[j], j > i with
 * old[j - 1]; for a deletion of old[i], j < i with old[j], j >= i with
 * old[j + 1].  Each move of i changes one comparison on each side.
 */
static uint32
shift_cost(const TreeNode *old, const TreeNode *node, uint32 *best_position)
{
	uint32		nold = old->nentries,
				nnew = node->nentries,
				a = 0,
				b = 0,
				end,
				left = 0,
				right = 0,
				best = 0;
	bool		insert;

	if (nnew == nold + 1)
		insert = true;
	else if (nold > 0 && nnew == nold - 1)
		insert = false;
	else
		return 0;

	while (a < Min(nold, nnew) && same_entry(old, a, node, a))
		a++;
	while (b < Min(nold, nnew) - a && same_entry(old, nold - 1 - b, node, nnew - 1 - b))
		b++;
	end = nnew - b;				/* the middle of node: [a, end) */

	if (insert)
	{
		/* i runs over [a, end): at i = a, every j in (a, end) is shifted */
		for (uint32 j = a + 1; j < end; j++)
			right += same_entry(old, j - 1, node, j) ? 0 : 1;
		for (uint32 i = a; i < end; i++)
		{
			if (i > a)
			{
				left += same_entry(old, i - 1, node, i - 1) ? 0 : 1;
				right -= same_entry(old, i - 1, node, i) ? 0 : 1;
			}
			if (best == 0 || 1 + left + right < best)
			{
				best = 1 + left + right;
				*best_position = i;
			}
		}
	}
	else
	{
		/* old[i] goes, i over [a, nold - b) = [a, end]; j in [a, end) */
		for (uint32 j = a; j < end; j++)
			right += same_entry(old, j + 1, node, j) ? 0 : 1;
		for (uint32 i = a; i <= end; i++)
		{
			if (i > a)
			{
				left += same_entry(old, i - 1, node, i - 1) ? 0 : 1;
				right -= same_entry(old, i, node, i - 1) ? 0 : 1;
			}
			if (best == 0 || 1 + left + right < best)
			{
				best = 1 + left + right;
				*best_position = i;
			}
		}
	}
	return best;
}

/*
 * Take a node's new version into FAST's record of changes (also the
 * FOR-tree's buffer's, fortree_buffer.c): the whole node for NEW and
 * REPLACE; for UPDATE, the positions that changed, or, for a structure
 * that keeps its entries in order (NodeOps.ordered_entries: the xBR+-tree
 * and the Hilbert R-tree) when node is old with one entry more or less, an
 * INSERT or DELETE and the positions still different, if that takes fewer
 * items.  (A set, as an R-tree's node, appends and fills a hole with its
 * last entry: at most two items by position, and its items, so its
 * buffer's flushing decisions, stay what they were before INSERT and
 * DELETE existed.)
 */
void
fast_changes_absorb(BufferedStore *bs, BufPage *bp, const TreeNode *old,
					const TreeNode *node, NodeWriteKind kind)
{
	FastPage   *fp;
	StringInfoData logbuf;
	uint32		logcount = 0;
	uint32		shift_position = 0;
	uint32		by_shift;

	if (kind != NS_WRITE_UPDATE)
	{
		fast_changes_forget(bs, bp);
		buffered_set_status(bp, BUF_NEW);
		fp = fast_page(bs, bp, node->level);
		fp->node = ns_copy_node(node, bs->cxt);
		bp->mod_count++;
		buffered_log(bs, LOG_NEW, bp, node->nentries, node->entries,
					 node->nentries * node->entry_size);
		account_page(bs, bp);
		return;
	}

	fp = fast_page(bs, bp, node->level);
	initStringInfo(&logbuf);
	by_shift = bs->ns.node_ops->ordered_entries ? shift_cost(old, node, &shift_position) : 0;
	if (by_shift > 0 && by_shift < positional_cost(old, node))
	{
		bool		insert = node->nentries > old->nentries;
		uint32		p = shift_position;

		if (insert)
			add_item(bs, bp, &logbuf, &logcount, p, FAST_ITEM_INSERT, NodeEntry(node, p));
		else
			add_item(bs, bp, &logbuf, &logcount, p, FAST_ITEM_DELETE, NULL);
		/* the positions the shift did not make right, in node's numbering */
		for (uint32 j = 0; j < node->nentries; j++)
		{
			uint32		from = j < p ? j : (insert ? j - 1 : j + 1);

			if (insert && j == p)
				continue;
			if (!same_entry(old, from, node, j))
				add_item(bs, bp, &logbuf, &logcount, j, FAST_ITEM_SET, NodeEntry(node, j));
		}
		Assert(logcount == by_shift);
	}
	else
	{
		for (uint32 i = 0; i < node->nentries; i++)
			if (i >= old->nentries || !same_entry(old, i, node, i))
				add_item(bs, bp, &logbuf, &logcount, i, FAST_ITEM_SET, NodeEntry(node, i));
		if (node->nentries < old->nentries)
			add_item(bs, bp, &logbuf, &logcount, node->nentries, FAST_ITEM_TRUNCATE, NULL);
	}
#ifdef USE_ASSERT_CHECKING
	{
		/* the items take old exactly to node (what a read will rebuild) */
		TreeNode	check = *old;

		check.capacity = Max(old->capacity, node->nentries + 1);
		check.entries = palloc((size_t) check.capacity * old->entry_size);
		memcpy(check.entries, old->entries, (size_t) old->nentries * old->entry_size);
		apply_items(bs, &check, logbuf.data, logcount, fp->entry_size);
		Assert(check.nentries == node->nentries);
		Assert(memcmp(check.entries, node->entries,
					  (size_t) node->nentries * node->entry_size) == 0);
		pfree(check.entries);
	}
#endif
	if (logcount > 0)
		buffered_log(bs, LOG_MOD, bp, logcount, logbuf.data, logbuf.len);
	pfree(logbuf.data);
	account_page(bs, bp);
}

static void
apply_items(BufferedStore *bs, TreeNode *node, const char *items, uint32 n,
			uint32 entry_size)
{
	size_t		item = sizeof(FastItemHeader) + entry_size;

	for (uint32 i = 0; i < n; i++)
	{
		FastItemHeader h;

		memcpy(&h, items + i * item, sizeof(h));
		apply_item(bs, node, &h, items + i * item + sizeof(h));
	}
}

TreeNode *
fast_changes_materialize(BufferedStore *bs, BufPage *bp, const TreeNode *stored)
{
	FastPage   *fp = (FastPage *) bp->mods;
	TreeNode   *node;

	if (bp->status == BUF_NEW)
		return ns_copy_node(fp->node, CurrentMemoryContext);
	node = ns_copy_node(stored, CurrentMemoryContext);
	if (fp != NULL)
		apply_items(bs, node, fp->items.data, fp->nitems, fp->entry_size);
	return node;
}

TreeNode *
fast_changes_read_stored(BufferedStore *bs, PageId page, FestPageCheck *check)
{
	return buffered_read_disk(bs, page, check);
}

void
fast_changes_replay(BufferedStore *bs, BufPage *bp, const LogRecord *rec)
{
	uint32		entry_size = ns_entry_size(&bs->ns, rec->hdr.level);
	FastPage   *fp;

	if (rec->hdr.type == LOG_NEW)
	{
		TreeNode   *node;

		if (rec->payload_len != (uint64) rec->hdr.count * entry_size)
			goto bad;
		fp = fast_page(bs, bp, rec->hdr.level);
		node = ns_new_node(&bs->ns, bp->page, rec->hdr.level);
		if (rec->hdr.count >= node->capacity)
			goto bad;
		memcpy(node->entries, rec->payload, rec->payload_len);
		node->nentries = rec->hdr.count;
		fp->node = ns_copy_node(node, bs->cxt);
		bp->mod_count++;
	}
	else
	{
		size_t		item = sizeof(FastItemHeader) + entry_size;
		StringInfoData ignore;
		uint32		count = 0;

		if (rec->payload_len != (uint64) rec->hdr.count * item)
			goto bad;
		fp = fast_page(bs, bp, rec->hdr.level);
		initStringInfo(&ignore);
		for (uint32 i = 0; i < rec->hdr.count; i++)
		{
			FastItemHeader h;
			const char *p = rec->payload + i * item;

			memcpy(&h, p, sizeof(h));
			if (h.kind > FAST_ITEM_DELETE)
				goto bad;
			add_item(bs, bp, &ignore, &count, h.position, (FastItemKind) h.kind,
					 item_has_entry(h.kind) ? p + sizeof(h) : NULL);
		}
		pfree(ignore.data);
	}
	account_page(bs, bp);
	return;

bad:
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("log of index \"%s\" holds a malformed record for page " UINT64_FORMAT,
					bs->ns.index_name, bp->page)));
}

void
fast_changes_emit(BufferedStore *bs, BufPage *bp)
{
	FastPage   *fp = (FastPage *) bp->mods;

	if (fp == NULL)
		return;
	if (bp->status == BUF_NEW)
		log_append(bs->log, LOG_NEW, bp->page, bp->level, fp->node->nentries, 0,
				   fp->node->entries, fp->node->nentries * fp->node->entry_size);
	else if (fp->nitems > 0)
		log_append(bs->log, LOG_MOD, bp->page, bp->level, fp->nitems, 0,
				   fp->items.data, fp->items.len);
}

static void
fast_absorb(BufferedStore *bs, BufPage *bp, const TreeNode *old,
			const TreeNode *node, NodeWriteKind kind)
{
	assign_unit(bs, bp->page);
	fast_changes_absorb(bs, bp, old, node, kind);
}

static void
fast_replay(BufferedStore *bs, BufPage *bp, const LogRecord *rec)
{
	assign_unit(bs, bp->page);
	fast_changes_replay(bs, bp, rec);
}

/* Modifications buffered in a unit, and the time of the latest. */
static void
unit_state(BufferedStore *bs, FastUnit *unit, int64 *mods, uint64 *last)
{
	*mods = 0;
	*last = 0;
	for (int i = 0; i < unit->npages; i++)
	{
		BufPage    *bp = buffered_lookup(bs, unit->pages[i]);

		if (bp != NULL)
		{
			*mods += Max(bp->mod_count, 1);
			*last = Max(*last, bp->last_mod);
		}
	}
}

static void
add_unit_pages(List **result, FastUnit *unit)
{
	for (int i = 0; i < unit->npages; i++)
	{
		PageId	   *id = palloc(sizeof(PageId));

		*id = unit->pages[i];
		*result = lappend(*result, id);
	}
}

static List *
fast_choose_unit(BufferedStore *bs)
{
	FastState  *st = (FastState *) bs->fw;
	List	   *result = NIL;
	int			candidates = 0;
	int			chosen = -1;
	double		best = -1;

	for (int u = 0; u < st->nunits; u++)
	{
		int64		mods;
		uint64		last;
		double		score;

		/* units fill in order: all but the last are full, none is empty */
		Assert(st->units[u]->npages >= 1 &&
			   st->units[u]->npages <= bs->cfg.flushing_unit);
		Assert(u == st->nunits - 1 || st->units[u]->npages == bs->cfg.flushing_unit);
		if (st->scores[u].stale)
		{
			unit_state(bs, st->units[u], &st->scores[u].mods, &st->scores[u].last);
			st->scores[u].stale = false;
		}
#ifdef USE_ASSERT_CHECKING
		else
		{
			/* a unit not marked stale has not changed since it was scored */
			unit_state(bs, st->units[u], &mods, &last);
			Assert(mods == st->scores[u].mods && last == st->scores[u].last);
		}
#endif
		mods = st->scores[u].mods;
		last = st->scores[u].last;
		if (mods == 0)
			continue;
		candidates++;
		switch (st->policy)
		{
			case FAST_FLUSH_ALL:
				add_unit_pages(&result, st->units[u]);
				continue;
			case FAST_RANDOM:
				/* reservoir sampling: each candidate unit equally likely */
				if (pg_prng_uint64_range(&st->prng, 1, candidates) == 1)
					chosen = u;
				continue;
			case FAST_FAST:
				score = (double) mods;
				break;
			default:
				score = (double) mods * (double) (bs->clock - last + 1);
				break;
		}
		if (score > best)
		{
			best = score;
			chosen = u;
		}
	}
	if (st->policy != FAST_FLUSH_ALL && chosen >= 0)
		add_unit_pages(&result, st->units[chosen]);
	Assert(st->policy == FAST_FLUSH_ALL || list_length(result) <= bs->cfg.flushing_unit);
	return result;
}

static void
fast_flushed(BufferedStore *bs, PageId page, const TreeNode *written)
{
}

/* A freed page joins a unit too, or it would never be written. */
static void
fast_deleted(BufferedStore *bs, BufPage *bp)
{
	assign_unit(bs, bp->page);
}

static HTAB *
create_unit_map(BufferedStore *bs)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(UnitOf);
	ctl.hcxt = bs->cxt;
	return hash_create("fast flushing units", 256, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* A rebuild starts the units afresh: the old ones name pages now gone. */
static void
fast_reset(BufferedStore *bs)
{
	FastState  *st = (FastState *) bs->fw;
	int			i;

	for (i = 0; i < st->nunits; i++)
		pfree(st->units[i]);
	st->nunits = 0;
	hash_destroy(st->unit_of);
	st->unit_of = create_unit_map(bs);
}

static void
fast_describe(BufferedStore *bs, JsonbParseState **state)
{
	FastState  *st = (FastState *) bs->fw;

	jb_int(state, "flushing_units", st->nunits);
}

/* The unit map lives in the store's context: made once the store exists. */
static void
fast_setup(BufferedStore *bs)
{
	((FastState *) bs->fw)->unit_of = create_unit_map(bs);
}

static const BufferedOps fast_ops = {
	.name = "fast",
	.log_writer = LOG_WRITER_FAST,
	.setup = fast_setup,
	.absorb = fast_absorb,
	.materialize = fast_changes_materialize,
	.read_stored = fast_changes_read_stored,
	.replay = fast_replay,
	.emit = fast_changes_emit,
	.choose_unit = fast_choose_unit,
	.flushed = fast_flushed,
	.forget = fast_forget,
	.deleted = fast_deleted,
	.reset = fast_reset,
	.describe = fast_describe
};

NodeStore *
fast_store_create(const NodeStoreArgs *args)
{
	FastState  *st = palloc0(sizeof(FastState));
	BufferedConfig cfg;
	FastOptions opts;

	OPTIONS_FILL(args->config, fast_option_table, &opts);
	cfg.buffer_size = opts.buffer_size;
	cfg.flushing_unit = (int) opts.flushing_unit;
	cfg.log_size = opts.log_size;
	st->policy = (FastPolicy) opts.flushing_policy;
	pg_prng_seed(&st->prng, (uint64) opts.random_seed);
	return buffered_store_create(&fast_ops, &cfg, st, args);
}

/* FAST's options go together in every combination; its buffer is all it holds. */
int64
fast_validate(const FestConfig *config)
{
	FastOptions opts;

	OPTIONS_FILL(config, fast_option_table, &opts);
	return opts.buffer_size;
}
