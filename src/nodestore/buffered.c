/*-------------------------------------------------------------------------
 *
 * buffered.c
 *	  The write buffer, its log and its flushes, shared by FAST and eFIND.
 *
 * IDENTIFICATION
 *	  src/nodestore/buffered.c
 *
 *-------------------------------------------------------------------------
 */
#include "nodestore/buffered.h"

#include "device/device.h"
#include "device/fault.h"

#include "nodestore/framework.h"

#include "format/page.h"
#include "stats/jsonbuild.h"
#include "utils/memutils.h"

typedef struct ReturnedNode
{
	PageId		page;			/* hash key */
	TreeNode   *node;
} ReturnedNode;

static void
create_tables(BufferedStore *bs)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(BufPage);
	ctl.hcxt = bs->cxt;
	bs->table = hash_create("festival write buffer", 256, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	bs->returned = NULL;
}

BufPage *
buffered_lookup(BufferedStore *bs, PageId page)
{
	return hash_search(bs->table, &page, HASH_FIND, NULL);
}

/* The buffer entry of a page, created as MOD if absent. */
BufPage *
buffered_enter_page(BufferedStore *bs, PageId page, uint16 level)
{
	bool		found;
	BufPage    *bp = hash_search(bs->table, &page, HASH_ENTER, &found);

	if (!found)
	{
		bp->status = BUF_MOD;
		bp->level = level;
		bp->mod_count = 0;
		bp->last_mod = 0;
		bp->link = InvalidPageId;
		bp->bytes = 0;
		bp->mods = NULL;
		buffered_account(bs, bp, BUF_PAGE_OVERHEAD);
	}
	return bp;
}

/* Set bp's size in the buffer, keeping the total in step. */
void
buffered_account(BufferedStore *bs, BufPage *bp, int64 new_bytes)
{
	Assert(new_bytes >= BUF_PAGE_OVERHEAD);
	bs->used += new_bytes - bp->bytes;
	bp->bytes = new_bytes;
	Assert(bs->used >= 0);
}

/*
 * Move a buffered page to another status.  The legal moves: any page may
 * become NEW (written whole: a creation, a split's replacement, a freed
 * page allocated again); a NEW or MOD page may become DEL (freed once).
 * MOD is only ever the status an entry is created with (enter_page): a
 * page never goes back from NEW or DEL to a list of changes.
 */
void
buffered_set_status(BufPage *bp, BufStatus to)
{
	Assert(to == BUF_NEW || to == BUF_DEL);
	Assert(to != BUF_DEL || bp->status != BUF_DEL);
	bp->status = to;
}

#ifdef USE_ASSERT_CHECKING
/*
 * The write buffer's byte accounting: bs->used is the sum of the entries'
 * bytes, and every entry has a status and at least its own overhead.  A
 * walk over the buffer, so it runs only at the end of a modification and
 * of a flush, and only in assertion builds.
 */
static void
check_accounting(BufferedStore *bs)
{
	HASH_SEQ_STATUS status;
	BufPage    *bp;
	int64		sum = 0;

	hash_seq_init(&status, bs->table);
	while ((bp = hash_seq_search(&status)) != NULL)
	{
		Assert(bp->status == BUF_NEW || bp->status == BUF_MOD || bp->status == BUF_DEL);
		Assert(bp->bytes >= BUF_PAGE_OVERHEAD);
		sum += bp->bytes;
	}
	Assert(sum == bs->used);
}
#else
#define check_accounting(bs) ((void) 0)
#endif

void
buffered_remove_page(BufferedStore *bs, BufPage *bp)
{
	PageId		page = bp->page;

	bs->ops->forget(bs, bp);
	bs->used -= bp->bytes;
	hash_search(bs->table, &page, HASH_REMOVE, NULL);
}

/*
 * Close the current log group.  festival.log_sync is read at every commit,
 * so a SET takes effect on the next modification of an open index.
 */
static void
commit_log_group(BufferedStore *bs)
{
	log_commit(bs->log, (LogSyncMode) fest_log_sync_mode, fest_log_sync_interval);
}


/* Append a record about bp, unless replaying or the log is off. */
void
buffered_log(BufferedStore *bs, LogRecordType type, const BufPage *bp,
			 uint32 count, const void *payload, uint32 len)
{
	if (bs->log == NULL || bs->replaying)
		return;
	log_append(bs->log, type, bp ? bp->page : InvalidPageId, bp ? bp->level : 0,
			   count, 0, payload, len);
	bs->op_logged = true;
}

void
buffered_entry_mbr(const BufferedStore *bs, const void *entry, uint16 level,
				   Mbr *box)
{
	bs->ns.node_ops->entry_mbr(entry, level, box);
}

/*
 * Read and verify the stored version of a node, straight from the device.
 * On failure returns NULL with *check set.
 */
TreeNode *
buffered_read_disk(BufferedStore *bs, PageId page, FestPageCheck *check)
{
	NodeStore  *ns = &bs->ns;
	char	   *image;
	const char *prefetched;
	bool		verified;
	TreeNode   *node;

	if (page < FEST_FIRST_DATA_PAGE || page >= ns->meta->page_count)
	{
		*check = FEST_PAGE_WRONG_ID;
		return NULL;
	}
	image = pageio_alloc_buffer(ns->page_size);
	if ((prefetched = ns_prefetch_find(&bs->prefetch, page, &verified)) != NULL)
		memcpy(image, prefetched, ns->page_size);
	else
		verified = pageio_read_one(ns->io, page, image);
	/* a cache's verified image needs no second checksum */
	*check = fest_page_verify_known(image, ns->page_size, page, FEST_PAGE_NODE, verified);
	if (*check == FEST_PAGE_OK && !ns_header_plausible(ns, image))
		*check = FEST_PAGE_IMPOSSIBLE;
	if (*check != FEST_PAGE_OK)
	{
		pageio_free_buffer(image);
		return NULL;
	}
	node = ns_deserialize(ns, image, page);
	ns->stats->reads_per_level[node->level]++;
	pageio_free_buffer(image);
	return node;
}

static void
report_unreadable(NodeStore *ns, PageId page, FestPageCheck check)
{
	if (check == FEST_PAGE_WRONG_ID)
		fest_report_page_out_of_range(ns->index_name, page, ns->meta->page_count);
	fest_report_corrupt(ns->index_name, page,
						psprintf("%s.", fest_page_check_message(check)));
}

/*
 * The latest version of a page: buffered changes over the stored version.
 * Returns NULL with *check set when the stored version cannot be read.
 */
static TreeNode *
latest_version(BufferedStore *bs, PageId page, FestPageCheck *check)
{
	BufPage    *bp = buffered_lookup(bs, page);

	*check = FEST_PAGE_OK;
	if (bp == NULL)
		return bs->ops->read_stored(bs, page, check);
	if (bp->status == BUF_DEL)
	{
		*check = FEST_PAGE_WRONG_KIND;
		return NULL;
	}
	if (bp->status == BUF_NEW)
		return bs->ops->materialize(bs, bp, NULL);
	{
		TreeNode   *stored = bs->ops->read_stored(bs, page, check);

		if (stored == NULL)
			return NULL;
		bs->ns.stats->merges++;
		return bs->ops->materialize(bs, bp, stored);
	}
}

/*
 * Remember the version returned, to learn later what a write changed.
 * Read-only operations never write, so they skip the copy.
 */
static void
remember_returned(BufferedStore *bs, const TreeNode *node)
{
	ReturnedNode *r;
	bool		found;

	if (!bs->ns.modifying_op)
		return;
	if (bs->returned == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(PageId);
		ctl.entrysize = sizeof(ReturnedNode);
		ctl.hcxt = bs->op_cxt;
		bs->returned = hash_create("festival returned nodes", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	r = hash_search(bs->returned, &node->page, HASH_ENTER, &found);
	r->node = ns_copy_node(node, bs->op_cxt);
}

static TreeNode *
buffered_read(NodeStore *ns, PageId page)
{
	BufferedStore *bs = (BufferedStore *) ns;
	FestPageCheck check;
	TreeNode   *node;

	ns->stats->nodes_visited++;
	node = latest_version(bs, page, &check);
	if (node == NULL)
		report_unreadable(ns, page, check);
	remember_returned(bs, node);
	return node;
}

/*
 * Read the stored versions of pages ahead, as one batch: those the device
 * must deliver to read_stored (pages not buffered or buffered as MOD, not
 * held in memory by the framework, inside the file).  Pages with raw set
 * are read whatever the buffer holds (a FAST unit's unchanged pages).
 */
static void
prefetch_stored(BufferedStore *bs, const PageId *pages, int n, bool raw)
{
	NodeStore  *ns = &bs->ns;
	PageId	   *fetch = palloc(Max(n, 1) * sizeof(PageId));
	int			nfetch = 0;

	for (int i = 0; i < n; i++)
	{
		BufPage    *bp = buffered_lookup(bs, pages[i]);

		if (pages[i] < FEST_FIRST_DATA_PAGE || pages[i] >= ns->meta->page_count)
			continue;
		if (bp == NULL && raw)
			fetch[nfetch++] = pages[i];
		else if ((bp == NULL || bp->status == BUF_MOD) &&
				 (bs->ops->stored_in_memory == NULL ||
				  !bs->ops->stored_in_memory(bs, pages[i])))
			fetch[nfetch++] = pages[i];
	}
	ns_prefetch_load(ns, &bs->prefetch, fetch, nfetch);
	pfree(fetch);
}

/*
 * Read several nodes: the stored versions the device must deliver are
 * read as one batch, then each node is read as buffered_read does (merged
 * with its buffered changes, counted the same way).
 */
static pg_noinline void
read_each(NodeStore *ns, const PageId *pages, int n, TreeNode **out)
{
	prefetch_stored((BufferedStore *) ns, pages, n, false);
	for (int i = 0; i < n; i++)
		out[i] = buffered_read(ns, pages[i]);
}

static void
buffered_read_many(NodeStore *ns, const PageId *pages, int n, TreeNode **out)
{
	BufferedStore *bs = (BufferedStore *) ns;

	PG_TRY();
	{
		read_each(ns, pages, n, out);
	}
	PG_CATCH();
	{
		ns_prefetch_clear(&bs->prefetch);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ns_prefetch_clear(&bs->prefetch);
}

static FestPageCheck
buffered_read_checked(NodeStore *ns, PageId page, TreeNode **node)
{
	BufferedStore *bs = (BufferedStore *) ns;
	FestPageCheck check;

	ns->stats->nodes_visited++;
	*node = latest_version(bs, page, &check);
	return check;
}

static void
buffered_write(NodeStore *ns, const TreeNode *node, NodeWriteKind kind)
{
	BufferedStore *bs = (BufferedStore *) ns;
	const TreeNode *old = NULL;
	BufPage    *bp;

	ns->op_touched = true;
	ns->stats->nodes_written++;
	ns->stats->buffered_modifications++;

	if (kind == NS_WRITE_UPDATE)
	{
		ReturnedNode *r = bs->returned
			? hash_search(bs->returned, &node->page, HASH_FIND, NULL) : NULL;

		if (r != NULL)
			old = r->node;
		else
		{
			/* a structure that writes without reading first */
			FestPageCheck check;

			old = latest_version(bs, node->page, &check);
			if (old == NULL)
				report_unreadable(ns, node->page, check);
		}
	}

	bp = buffered_enter_page(bs, node->page, node->level);
	if (bp->status == BUF_DEL && kind == NS_WRITE_UPDATE)
		elog(ERROR, "index \"%s\": page " UINT64_FORMAT " was written after being freed",
			 ns->index_name, node->page);
	bp->level = node->level;
	bp->last_mod = ++bs->clock;
	/* absorb counts the modifications, as its framework defines them */
	bs->ops->absorb(bs, bp, old, node, kind);
	remember_returned(bs, node);
}

static PageId
buffered_alloc(NodeStore *ns, uint16 level)
{
	BufferedStore *bs = (BufferedStore *) ns;
	FestMeta   *meta = ns->meta;
	PageId		page;

	ns->op_touched = true;
	ns->stats->nodes_allocated++;
	ns->meta_dirty = true;
	if (meta->free_head == InvalidPageId)
		return meta->page_count++;

	page = meta->free_head;
	{
		BufPage    *bp = buffered_lookup(bs, page);

		if (bp != NULL && bp->status == BUF_DEL)
			meta->free_head = bp->link;
		else
		{
			/* a free page on disk: its header holds the link */
			char	   *image = pageio_alloc_buffer(ns->page_size);
			FestPageCheck check;

			if (page >= meta->page_count)
				report_unreadable(ns, page, FEST_PAGE_WRONG_ID);
			pageio_read_one(ns->io, page, image);
			check = fest_page_verify(image, ns->page_size, page, FEST_PAGE_FREE);
			if (check != FEST_PAGE_OK)
				report_unreadable(ns, page, check);
			meta->free_head = FestPageGetHeader(image)->link;
			pageio_free_buffer(image);
		}
	}
	meta->free_count--;
	return page;
}

/*
 * The level of a page being freed that may not be buffered yet.  The
 * flushing policies weigh a deletion by its level (eFIND's mh, mha,
 * mhao), so a freed internal node must not pass for a leaf.  Structures
 * read a node before freeing it; a page freed unread is read here.
 */
static uint16
level_of_released(BufferedStore *bs, PageId page)
{
	BufPage    *bp = buffered_lookup(bs, page);
	ReturnedNode *r;
	FestPageCheck check;
	TreeNode   *node;

	if (bp != NULL)
		return bp->level;
	r = bs->returned ? hash_search(bs->returned, &page, HASH_FIND, NULL) : NULL;
	if (r != NULL)
		return r->node->level;
	node = latest_version(bs, page, &check);
	if (node == NULL)
		report_unreadable(&bs->ns, page, check);
	return node->level;
}

static void
buffered_release(NodeStore *ns, PageId page)
{
	BufferedStore *bs = (BufferedStore *) ns;
	BufPage    *bp = buffered_enter_page(bs, page, level_of_released(bs, page));

	ns->op_touched = true;
	ns->stats->nodes_freed++;
	ns->stats->buffered_modifications++;
	bs->ops->forget(bs, bp);
	buffered_set_status(bp, BUF_DEL);	/* a double free is caught here */
	bp->mod_count++;
	bp->last_mod = ++bs->clock;
	bp->link = ns->meta->free_head;
	buffered_account(bs, bp, BUF_PAGE_OVERHEAD);
	bs->ops->deleted(bs, bp);
	buffered_log(bs, LOG_DEL, bp, 0, &bp->link, sizeof(bp->link));

	ns->meta->free_head = page;
	ns->meta->free_count++;
	ns->meta_dirty = true;
}

StaticAssertDecl(sizeof(LoggedMeta) <= 128, "LoggedMeta must fit logged_meta");

/*
 * Log the meta data if it differs from what was last logged: the entry
 * count changes with every insert without marking the meta dirty.
 */
static void
log_meta(BufferedStore *bs, bool always)
{
	LoggedMeta	lm;

	ns_meta_to_logged(bs->ns.meta, &lm);
	if (!always && memcmp(&lm, bs->logged_meta, sizeof(lm)) == 0)
		return;
	buffered_log(bs, LOG_META, NULL, 0, &lm, sizeof(lm));
	memcpy(bs->logged_meta, &lm, sizeof(lm));
}

/* The meta data as it is now counts as logged (after open or replay). */
void
buffered_meta_logged_now(BufferedStore *bs)
{
	LoggedMeta	lm;

	ns_meta_to_logged(bs->ns.meta, &lm);
	memcpy(bs->logged_meta, &lm, sizeof(lm));
}

/* Every buffered page, oldest modification first. */
int
buffered_oldest_first(const void *a, const void *b)
{
	const BufPage *pa = *(const BufPage *const *) a;
	const BufPage *pb = *(const BufPage *const *) b;

	if (pa->last_mod != pb->last_mod)
		return pa->last_mod < pb->last_mod ? -1 : 1;
	return pa->page < pb->page ? -1 : (pa->page > pb->page ? 1 : 0);
}

/* All buffered pages as a List of BufPage pointers, in page order. */
List *
buffered_pages(BufferedStore *bs)
{
	HASH_SEQ_STATUS status;
	BufPage    *bp;
	int			n = hash_get_num_entries(bs->table);
	BufPage   **all = palloc(Max(n, 1) * sizeof(BufPage *));
	int			i = 0;
	List	   *list = NIL;

	hash_seq_init(&status, bs->table);
	while ((bp = hash_seq_search(&status)) != NULL)
		all[i++] = bp;
	for (int j = 1; j < n; j++)
	{
		BufPage    *x = all[j];
		int			k = j - 1;

		while (k >= 0 && all[k]->page > x->page)
		{
			all[k + 1] = all[k];
			k--;
		}
		all[k + 1] = x;
	}
	for (int j = 0; j < n; j++)
		list = lappend(list, all[j]);
	pfree(all);
	return list;
}

static int
page_cmp(const void *a, const void *b)
{
	PageId		x = *(const PageId *) a;
	PageId		y = *(const PageId *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * Before a unit is written, log which buffered pages it writes and the
 * checksums of their new images (LOG_FLUSH_BEGIN, its own group, synced
 * as the log_sync mode says).  A crash after some of the writes but before
 * LOG_FLUSH leaves pages on disk that already hold records the log still
 * has; replay recognizes them by checksum and drops those records, since
 * FAST's position changes cannot be applied twice.
 */
static void
log_flush_intent(BufferedStore *bs, const PageIORequest *reqs, int n)
{
	StringInfoData payload;
	uint32		count = 0;

	if (bs->log == NULL || bs->replaying)
		return;
	initStringInfo(&payload);
	for (int i = 0; i < n; i++)
	{
		FlushIntentItem item;

		/*
		 * Every page of the unit, even one rewritten unchanged (it has no
		 * records): replay must find each page the unit may have torn.
		 */
		memset(&item, 0, sizeof(item));
		item.page = reqs[i].page;
		item.checksum = FestPageGetHeader(reqs[i].buf)->checksum;
		appendBinaryStringInfo(&payload, (const char *) &item, sizeof(item));
		count++;
	}
	if (count > 0)
	{
		log_append(bs->log, LOG_FLUSH_BEGIN, InvalidPageId, 0, count, 0,
				   payload.data, payload.len);
		commit_log_group(bs);
	}
	pfree(payload.data);
}


/*
 * The images of a flushing unit's pages (ids sorted): each page's latest
 * version, a free page for a DEL page, or for a page the buffer does not
 * hold its stored image again.
 */
static void
prepare_unit(BufferedStore *bs, const PageId *ids, int n, PageIORequest *reqs,
			 TreeNode **written)
{
	NodeStore  *ns = &bs->ns;
	int			i;

	for (i = 0; i < n; i++)
	{
		PageId		page = ids[i];
		BufPage    *bp = buffered_lookup(bs, page);
		char	   *image = pageio_alloc_buffer(ns->page_size);
		FestPageCheck check;

		reqs[i].page = page;
		reqs[i].buf = image;
		if (bp == NULL)
		{
			/*
			 * FAST writes whole static units: a page without buffered
			 * changes is read and written back as it is (a node or a free
			 * page), an unnecessary write.
			 */
			if (ns_prefetch_find(&bs->prefetch, page, NULL) != NULL)
				memcpy(image, ns_prefetch_find(&bs->prefetch, page, NULL), ns->page_size);
			else
				pageio_read_one(ns->io, page, image);
			check = fest_page_verify(image, ns->page_size, page, 0);
			if (check != FEST_PAGE_OK)
				report_unreadable(ns, page, check);
			ns->stats->unnecessary_flushed_pages++;
			written[i] = NULL;
			continue;
		}
		if (bp->status == BUF_DEL)
		{
			fest_page_init(image, ns->page_size, page, FEST_PAGE_FREE);
			FestPageGetHeader(image)->link = bp->link;
		}
		else
		{
			TreeNode   *node;

			bs->flushing = true;
			node = latest_version(bs, page, &check);
			bs->flushing = false;

			if (node == NULL)
				report_unreadable(ns, page, check);
			ns_serialize(ns, node, image);
			ns->stats->writes_per_level[node->level]++;
			written[i] = node;
		}
		fest_page_seal(image, ns->page_size);
	}
}

/*
 * Write a flushing unit: each page's latest version (or, for a page the
 * buffer does not hold, its stored version again: FAST's unnecessary
 * writes), in page order as one batch; sync the index file; then log the
 * flush so that a replay drops the pages' older records.
 */
void
buffered_write_unit(BufferedStore *bs, List *pages)
{
	NodeStore  *ns = &bs->ns;
	int			n = list_length(pages);
	PageId	   *ids;
	PageIORequest *reqs;
	TreeNode  **written;
	int			i = 0;
	ListCell   *lc;
	int64		start = fest_now_ns();
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "festival flush", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	if (n == 0)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return;
	}
	ns_mark_unclean(ns);

	ids = palloc(n * sizeof(PageId));
	foreach(lc, pages)
		ids[i++] = *(PageId *) lfirst(lc);
	qsort(ids, n, sizeof(PageId), page_cmp);

	reqs = palloc(n * sizeof(PageIORequest));
	written = palloc0(n * sizeof(TreeNode *));

	/*
	 * The stored versions the unit needs (pages merged with their changes,
	 * FAST's unchanged pages) are read as one batch first, like the unit
	 * is written as one; the prefetch is dropped with the flush's memory.
	 */
	PG_TRY();
	{
		prefetch_stored(bs, ids, n, true);
		prepare_unit(bs, ids, n, reqs, written);
	}
	PG_CATCH();
	{
		ns_prefetch_clear(&bs->prefetch);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ns_prefetch_clear(&bs->prefetch);

	log_flush_intent(bs, reqs, n);
	pageio_write(ns->io, reqs, n);
	pageio_sync(ns->io);
	if (bs->log != NULL && !bs->replaying)
	{
		log_append(bs->log, LOG_FLUSH, InvalidPageId, 0, n, 0, ids, n * sizeof(PageId));
		commit_log_group(bs);
	}

	for (i = 0; i < n; i++)
	{
		BufPage    *bp = buffered_lookup(bs, ids[i]);

		if (bp == NULL)
			continue;			/* rewritten unchanged */
		bs->ops->flushed(bs, ids[i], written[i]);
		buffered_remove_page(bs, bp);
	}
	ns->stats->flushes++;
	ns->stats->flushed_pages += n;
	ns->stats->flush_ns += fest_now_ns() - start;

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

static List *
buffered_flush_some(NodeStore *ns)
{
	BufferedStore *bs = (BufferedStore *) ns;
	List	   *unit;

	if (hash_get_num_entries(bs->table) == 0)
		return NIL;
	unit = bs->ops->choose_unit(bs);
	buffered_write_unit(bs, unit);
	return unit;				/* PageId pointers, for the caller to report */
}

/*
 * Flush units chosen by the policy until the buffer holds at most limit
 * bytes.  A unit that frees nothing ends the loop (a policy that cannot
 * help must not spin).
 */
static void
flush_until(BufferedStore *bs, int64 limit)
{
	while (bs->used > limit && hash_get_num_entries(bs->table) > 0)
	{
		int64		before = bs->used;
		List	   *unit = bs->ops->choose_unit(bs);

		if (unit == NIL)
			break;
		buffered_write_unit(bs, unit);
		list_free_deep(unit);
		if (bs->used >= before)
			break;
	}
}

/*
 * Rewrite the log with the records that rebuild the current buffer (eFIND
 * algorithm 7).  If that alone would exceed half of log_size, flush units
 * first: nothing else can be dropped.
 */
static void
compact_log(BufferedStore *bs)
{
	List	   *pages;
	ListCell   *lc;

	flush_until(bs, bs->cfg.log_size / 2);

	log_rewrite_begin(bs->log);
	pages = buffered_pages(bs);
	foreach(lc, pages)
	{
		BufPage    *bp = (BufPage *) lfirst(lc);

		if (bp->status == BUF_DEL)
			log_append(bs->log, LOG_DEL, bp->page, bp->level, 0, 0, &bp->link, sizeof(bp->link));
		else
			bs->ops->emit(bs, bp);
	}
	log_meta(bs, true);
	log_rewrite_end(bs->log);
	list_free(pages);
}

/*
 * After a modification's group is in the log: flush units until the buffer
 * fits again and compact the log if it outgrew log_size.  The modification
 * is durable already, so an error here (a full disk, say) must not read as
 * "nothing changed": it is raised again with a detail saying the change is
 * kept (the reload that follows replays it from the log).
 */
static void
restore_capacity(BufferedStore *bs)
{
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		flush_until(bs, bs->cfg.buffer_size);
		if (log_size(bs->log) > (uint64) bs->cfg.log_size)
			compact_log(bs);
	}
	PG_CATCH();
	{
		ns_raise_kept(cxt, "The change was logged before this failure and is kept; making room in the buffer or the log failed.");
	}
	PG_END_TRY();
}

/*
 * End of a modification: log its records with the meta data as one group,
 * then restore the buffer's capacity by flushing units, then compact the
 * log if it outgrew log_size.
 */
static void
buffered_commit(NodeStore *ns)
{
	BufferedStore *bs = (BufferedStore *) ns;
	if (bs->log != NULL)
	{
		log_meta(bs, false);
		ns->meta_dirty = false;
	}
	if (bs->op_logged)
	{
		/*
		 * Before the first record counts, the meta page must say "replay";
		 * it holds the state the log replays from, not this modification
		 * (ns_mark_unclean writes the committed meta).
		 */
		ns_mark_unclean(ns);
		commit_log_group(bs);
		bs->op_logged = false;
		ns_note_committed(ns);
	}
	else if (bs->log == NULL && hash_get_num_entries(bs->table) > 0)
		ns_mark_unclean(ns);

	if (bs->log == NULL)
	{
		flush_until(bs, bs->cfg.buffer_size);
		ns_note_committed(ns);
	}
	else
		restore_capacity(bs);

	bs->returned = NULL;
	MemoryContextReset(bs->op_cxt);
	ns->op_touched = false;
	check_accounting(bs);
}

static FestPageCheck
buffered_read_free_link(NodeStore *ns, PageId page, PageId *link)
{
	BufPage    *bp = buffered_lookup((BufferedStore *) ns, page);
	char	   *image;
	FestPageCheck check;

	if (bp != NULL)
	{
		if (bp->status != BUF_DEL)
			return FEST_PAGE_WRONG_KIND;
		*link = bp->link;
		return FEST_PAGE_OK;
	}
	if (page >= pageio_npages(ns->io))
		return FEST_PAGE_NEVER_WRITTEN;
	image = pageio_alloc_buffer(ns->page_size);
	pageio_read_one(ns->io, page, image);
	check = fest_page_verify(image, ns->page_size, page, FEST_PAGE_FREE);
	if (check == FEST_PAGE_OK)
		*link = FestPageGetHeader(image)->link;
	pageio_free_buffer(image);
	return check;
}

static uint64
buffered_pages_available(NodeStore *ns)
{
	BufferedStore *bs = (BufferedStore *) ns;
	uint64		pages = pageio_npages(ns->io);
	HASH_SEQ_STATUS status;
	BufPage    *bp;

	hash_seq_init(&status, bs->table);
	while ((bp = hash_seq_search(&status)) != NULL)
		pages = Max(pages, bp->page + 1);
	return pages;
}

static void
buffered_end_op(NodeStore *ns)
{
	BufferedStore *bs = (BufferedStore *) ns;

	bs->returned = NULL;
	bs->flushing = false;		/* an ERROR may have left it set */
	MemoryContextReset(bs->op_cxt);
}

/*
 * Write everything: every buffered page in page order, then a clean meta
 * page; the log is then empty.
 */
static void
buffered_flush(NodeStore *ns)
{
	BufferedStore *bs = (BufferedStore *) ns;
	List	   *pages = buffered_pages(bs);
	List	   *ids = NIL;
	ListCell   *lc;

	buffered_commit(ns);
	foreach(lc, pages)
	{
		PageId	   *id = palloc(sizeof(PageId));

		*id = ((BufPage *) lfirst(lc))->page;
		ids = lappend(ids, id);
	}
	if (ids != NIL)
		buffered_write_unit(bs, ids);
	/* the meta page (stale while changes were logged) is written clean */
	ns_mark_clean(ns);
	if (bs->log != NULL && !ns->suspect)
	{
		log_truncate(bs->log);
		/* the meta on disk is where an empty log starts from */
		buffered_meta_logged_now(bs);
	}
	list_free_deep(ids);
	list_free(pages);
	check_accounting(bs);
}

static void
drop_all(BufferedStore *bs)
{
	List	   *pages = buffered_pages(bs);
	ListCell   *lc;

	foreach(lc, pages)
		buffered_remove_page(bs, (BufPage *) lfirst(lc));
	list_free(pages);
	Assert(bs->used == 0);
	bs->used = 0;
}

static void
buffered_reset(NodeStore *ns)
{
	BufferedStore *bs = (BufferedStore *) ns;

	drop_all(bs);
	/* page-keyed state of the framework (units, read buffer) is stale now */
	bs->ops->reset(bs);
	bs->returned = NULL;
	MemoryContextReset(bs->op_cxt);
	ns_truncate_to_empty(ns);
	if (bs->log != NULL)
		log_truncate(bs->log);
	/* the emptied file is what a replay starts from now */
	buffered_meta_logged_now(bs);
}

static void
buffered_close(NodeStore *ns)
{
	BufferedStore *bs = (BufferedStore *) ns;

	if (bs->log != NULL)
		log_close(bs->log);
	pageio_close(ns->io);
}

void
buffered_describe(BufferedStore *bs, JsonbParseState **state)
{
	jb_int(state, "write_buffer_bytes", bs->used);
	jb_int(state, "write_buffer_capacity", bs->cfg.buffer_size);
	jb_int(state, "write_buffer_pages", hash_get_num_entries(bs->table));
	if (bs->log != NULL)
		jb_int(state, "log_bytes", (int64) log_size(bs->log));
	else
		jb_null(state, "log_bytes");
	bs->ops->describe(bs, state);
}

static List *
buffered_list(NodeStore *ns)
{
	List	   *pages = buffered_pages((BufferedStore *) ns);
	List	   *out = NIL;
	ListCell   *lc;
	static const char *const names[] = {"", "new", "mod", "del"};

	foreach(lc, pages)
	{
		BufPage    *bp = (BufPage *) lfirst(lc);
		BufferedPageInfo *info = palloc(sizeof(BufferedPageInfo));

		info->page = bp->page;
		info->status = names[bp->status];
		info->level = bp->level;
		info->modifications = bp->mod_count;
		info->last_modified = bp->last_mod;
		info->bytes = bp->bytes;
		out = lappend(out, info);
	}
	list_free(pages);
	return out;
}

static void
describe_store(NodeStore *ns, JsonbParseState **state)
{
	buffered_describe((BufferedStore *) ns, state);
}

const NodeStoreOps buffered_store_ops = {
	.read = buffered_read,
	.read_checked = buffered_read_checked,
	.write = buffered_write,
	.alloc = buffered_alloc,
	.release = buffered_release,
	.commit = buffered_commit,
	.flush = buffered_flush,
	.reset = buffered_reset,
	.close = buffered_close,
	.read_free_link = buffered_read_free_link,
	.pages_available = buffered_pages_available,
	.end_op = buffered_end_op,
	.flush_some = buffered_flush_some,
	.buffered = buffered_list,
	.describe = describe_store,
	.read_many = buffered_read_many
};



/*
 * Set up the shared part of a buffering store.  The framework sets ops and
 * its own state; buffered_recover is called last, once both are ready.
 */
static void
buffered_init(BufferedStore *bs, const BufferedOps *ops, PageIO *io,
			  FestMeta *meta, const NodeOps *node_ops, const char *index_name,
			  FestStats *stats, const BufferedConfig *cfg, const char *log_path,
			  bool create)
{
	ns_init(&bs->ns, &buffered_store_ops, io, meta, node_ops, index_name, stats);
	bs->ns.has_log = cfg->log_size > 0;
	bs->ns.buffers = true;
	bs->ops = ops;
	bs->cfg = *cfg;
	bs->cxt = CurrentMemoryContext;
	bs->op_cxt = AllocSetContextCreate(bs->cxt, "festival buffered operation",
									   ALLOCSET_DEFAULT_SIZES);
	create_tables(bs);
	if (cfg->log_size > 0)
	{
		bool		missing = !create && !device_file_exists(log_path);

		/*
		 * A missing log (removed by hand) is replaced by an empty one, so
		 * the index opens (and build() can rewrite it).  A clean index had
		 * nothing in it; an unclean one lost its changes since the last
		 * flush, and buffered_recover opens it suspect.
		 */
		if (missing && (meta->flags & FEST_META_CLEAN) != 0)
			ereport(WARNING,
					(errcode(ERRCODE_UNDEFINED_FILE),
					 errmsg("log file \"%s\" of index \"%s\" was missing; an empty log replaces it",
							log_path, index_name),
					 errdetail("The index was closed cleanly, so its log held nothing to replay.")));
		bs->log_lost = missing && (meta->flags & FEST_META_CLEAN) == 0;
		bs->log = log_open(log_path, meta->index_uid, ops->log_writer, create || missing,
						   index_name, stats);
		if (io->fault != NULL)
			log_set_fault_hook(bs->log, fault_log_hook, io->fault);
	}
	buffered_meta_logged_now(bs);
}

/*
 * Make a buffering store (FAST, eFIND, the FOR-tree's buffer), in the
 * current memory context (the open index's): the write buffer and the log
 * as cfg says, the framework's state fw attached, its setup run once the
 * store exists, then the log replayed (buffered_recover).  The one way
 * every buffering store is made.
 */
NodeStore *
buffered_store_create(const BufferedOps *ops, const BufferedConfig *cfg,
					  void *fw, const NodeStoreArgs *args)
{
	BufferedStore *bs = palloc0(sizeof(BufferedStore));

	buffered_init(bs, ops, args->io, args->meta, args->node_ops,
				  args->index_name, args->stats, cfg, args->log_path,
				  args->create);
	bs->fw = fw;
	if (ops->setup != NULL)
		ops->setup(bs);
	buffered_recover(bs);
	return &bs->ns;
}
