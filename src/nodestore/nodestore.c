/*-------------------------------------------------------------------------
 *
 * nodestore.c
 *	  Helpers shared by every NodeStore: node images and meta bookkeeping.
 *
 * IDENTIFICATION
 *	  src/nodestore/nodestore.c
 *
 *-------------------------------------------------------------------------
 */
#include "nodestore/nodestore.h"

uint32
ns_entry_size(const NodeStore *ns, uint16 level)
{
	return level == 0 ? ns->node_ops->leaf_entry_size
		: ns->node_ops->internal_entry_size;
}

/* Entries of the given level that fit in one page. */
uint32
ns_page_capacity(const NodeStore *ns, uint16 level)
{
	return (ns->page_size - FEST_PAGE_HEADER_SIZE) / ns_entry_size(ns, level);
}

/*
 * A new empty node in the current memory context, with room for one entry
 * more than a page holds so that an overflowing node can exist until it is
 * split.
 */
TreeNode *
ns_new_node(const NodeStore *ns, PageId page, uint16 level)
{
	TreeNode	   *node = palloc(sizeof(TreeNode));

	node->page = page;
	node->level = level;
	node->flags = 0;
	node->nentries = 0;
	node->link = 0;
	node->entry_size = ns_entry_size(ns, level);
	node->capacity = ns_page_capacity(ns, level) + 1;
	node->entries = palloc((size_t) node->capacity * node->entry_size);
	return node;
}

/*
 * The common part of a store's set-up (ns zeroed by the caller).  A file
 * whose meta page is not clean was not closed cleanly: it stays suspect
 * until a replay, a rebuild or check() vouches for it.
 */
void
ns_init(NodeStore *ns, const NodeStoreOps *ops, PageIO *io, FestMeta *meta,
		const NodeOps *node_ops, const char *index_name, FestStats *stats)
{
	ns->ops = ops;
	ns->node_ops = node_ops;
	ns->io = io;
	ns->meta = meta;
	ns->index_name = index_name;
	ns->stats = stats;
	ns->page_size = io->page_size;
	ns->marked_unclean = (meta->flags & FEST_META_CLEAN) == 0;
	ns->suspect = ns->marked_unclean;
	ns_note_committed(ns);
}

/*
 * The meta in memory is now what the store has made durable: the end of a
 * commit (its pages written through, or its group in the log), an open, a
 * replay.
 */
void
ns_note_committed(NodeStore *ns)
{
	ns_meta_to_logged(ns->meta, &ns->committed_meta);
}

/* Record a new root and height; the meta is written at the next commit. */
void
ns_set_root(NodeStore *ns, PageId root, uint32 height)
{
	ns->meta->root = root;
	ns->meta->height = height;
	ns->meta_dirty = true;
	ns->op_touched = true;
}

void
ns_meta_changed(NodeStore *ns)
{
	ns->meta_dirty = true;
	ns->op_touched = true;
}

/* Write a node into a page buffer (not yet sealed). */
void
ns_serialize(const NodeStore *ns, const TreeNode *node, char *page)
{
	FestPageHeader *hdr = FestPageGetHeader(page);
	size_t		bytes = (size_t) node->nentries * node->entry_size;
	size_t		body = ns->page_size - FEST_PAGE_HEADER_SIZE;
	bool		in_place = node->entries == FestPageGetBody(page);
	size_t		zero_end = body;

	/*
	 * A node read in place (ns_node_in_place) has its entries in this
	 * image already.  Past them the image held zeros from its header's
	 * entry count on, but for the one entry the node may have appended
	 * beyond it (ns_read_to_change's contract): zeroing up to there gives
	 * the bytes a whole serialization gives.
	 */
	if (in_place)
		zero_end = Min(body, (size_t) (hdr->nentries + 1) * node->entry_size);

	if (node->nentries > ns_page_capacity(ns, node->level))
		elog(ERROR, "node with %u entries does not fit page " UINT64_FORMAT " of index \"%s\"",
			 node->nentries, node->page, ns->index_name);

	/*
	 * The image is what fest_page_init and the copy of the entries would
	 * make, byte for byte, but only the header and the unused tail are
	 * zeroed: every modified node is serialized (an insert build does it
	 * about once per row), and zeroing the whole page first was a pass
	 * over 4 kB of which the entries then overwrite most.
	 */
	Assert(FEST_PAGE_HEADER_SIZE + bytes <= ns->page_size);
	memset(page, 0, FEST_PAGE_HEADER_SIZE);
	hdr->magic = FEST_PAGE_MAGIC;
	hdr->version = FEST_FORMAT_VERSION;
	hdr->kind = (uint8) FEST_PAGE_NODE;
	hdr->page_id = node->page;
	hdr->level = node->level;
	hdr->flags = node->flags;
	if (ns->node_ops->level_flags != NULL)
		hdr->flags |= ns->node_ops->level_flags(node->level);
	hdr->nentries = node->nentries;
	hdr->link = node->link;
	if (!in_place)
		memcpy(FestPageGetBody(page), node->entries, bytes);
	if (bytes < zero_end)
		memset(FestPageGetBody(page) + bytes, 0, zero_end - bytes);
}

/* Are the level and entry count of a verified page usable? */
bool
ns_header_plausible(const NodeStore *ns, const char *page)
{
	const FestPageHeader *hdr = (const FestPageHeader *) page;

	return hdr->level < FEST_MAX_LEVELS &&
		hdr->nentries <= ns_page_capacity(ns, hdr->level);
}

/*
 * A node whose entries are the verified page image's own, for a store's
 * ns_read_to_change on an image it keeps and writes back into (its
 * capacity ends at the page's, so that the entry an insert appends before
 * splitting still lies within the image); NULL when the page has no room
 * for one more entry, or when its header is not plausible (ns_deserialize
 * reports that).
 */
TreeNode *
ns_node_in_place(const NodeStore *ns, char *page, PageId page_id)
{
	const FestPageHeader *hdr = (const FestPageHeader *) page;
	TreeNode   *node;
	uint32		capacity;

	Assert(hdr->kind == FEST_PAGE_NODE);
	Assert(hdr->page_id == page_id);
	if (!ns_header_plausible(ns, page))
		return NULL;
	capacity = ns_page_capacity(ns, hdr->level);
	if (hdr->nentries >= capacity)
		return NULL;
	node = palloc(sizeof(TreeNode));
	node->page = page_id;
	node->level = hdr->level;
	node->flags = hdr->flags;
	node->nentries = hdr->nentries;
	node->link = hdr->link;
	node->entry_size = ns_entry_size(ns, hdr->level);
	node->capacity = capacity;
	node->entries = FestPageGetBody(page);
	return node;
}

/*
 * Build a node from a verified page image.  Header fields that would make
 * the node unreadable are checked here, so a page with a valid checksum but
 * impossible contents is still reported as corruption.
 */
TreeNode *
ns_deserialize(const NodeStore *ns, const char *page, PageId page_id)
{
	const FestPageHeader *hdr = (const FestPageHeader *) page;
	TreeNode	   *node;

	/* callers verify the page (fest_page_verify) as a node page first */
	Assert(hdr->kind == FEST_PAGE_NODE);
	Assert(hdr->page_id == page_id);
	if (!ns_header_plausible(ns, page))
		fest_report_corrupt(ns->index_name, page_id,
							psprintf("The page claims level %u and %u entries.",
									 hdr->level, hdr->nentries));

	node = ns_new_node(ns, page_id, hdr->level);
	node->flags = hdr->flags;
	node->nentries = hdr->nentries;
	node->link = hdr->link;
	memcpy(node->entries, FestPageGetBody(page),
		   (size_t) node->nentries * node->entry_size);
	return node;
}

void
ns_write_meta(NodeStore *ns)
{
	fest_meta_write(ns->io, ns->meta);
	ns->meta_dirty = false;
}

/*
 * Before the first page write after an open or a flush, record on disk that
 * the file is not clean, so that a crash in the middle of writing is
 * noticed when the index is opened again.
 */
void
ns_mark_unclean(NodeStore *ns)
{
	LoggedMeta	now;
	bool		dirty = ns->meta_dirty;

	if (ns->marked_unclean)
		return;
	/*
	 * The meta in memory may already hold the modification in progress (a
	 * new root, the entry count), which may yet fail before anything of it
	 * is durable: the copy on disk is the meta as of the last commit, so
	 * that a replay of a log without a complete group after it (the first
	 * modification failed or was cut short) starts from the right state.
	 * Later commits leave it stale (a log or a reload restores the meta;
	 * without either, the index opens suspect and check() recounts), so its
	 * entry count stops vouching for itself once the log records another.
	 * Both writes of the meta pair precede the sync, which orders them
	 * before the pages they cover.
	 */
	ns_meta_to_logged(ns->meta, &now);
	ns_meta_from_logged(&ns->committed_meta, ns->meta);
	ns->meta->flags &= ~FEST_META_CLEAN;
	ns_write_meta(ns);
	ns_meta_from_logged(&now, ns->meta);
	ns->meta_dirty = dirty;
	/* the flag must be on disk before any page it covers */
	pageio_sync(ns->io);
	ns->marked_unclean = true;
}

/*
 * After every page is written: sync the pages, then write and sync the meta
 * pair that says the file is clean.  Its entry count is vouched for as it
 * is in memory (ENTRIES_VALID), never more: a count a crash left unknown
 * stays unknown until check() or a build counts it.  A suspect file (see
 * NodeStore) keeps its clean flag cleared.  A meta copy found damaged at
 * open is rewritten here even if nothing changed.
 */
void
ns_mark_clean(NodeStore *ns)
{
	if (!ns->marked_unclean && !ns->meta_dirty && ns->meta->damaged_slot < 0)
		return;
	pageio_sync(ns->io);
	if (!ns->suspect)
	{
		ns->meta->flags |= FEST_META_CLEAN;
		ns->marked_unclean = false;
	}
	ns_write_meta(ns);
	pageio_sync(ns->io);
	ns_note_committed(ns);
}

/*
 * Raise again, from a PG_CATCH block, the error of a failure that came after
 * the modification was made durable in the store's log (flushing to make
 * room, writing the journaled pages down): the change is kept, which the
 * detail says, so that the error does not read as "nothing changed".  cxt
 * is the memory context current before PG_TRY.
 */
void
ns_raise_kept(MemoryContext cxt, const char *detail)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	ereport(ERROR,
			(errcode(edata->sqlerrcode),
			 errmsg("%s", edata->message),
			 errdetail("%s", detail),
			 edata->hint ? errhint("%s", edata->hint) : 0));
}

/* The meta fields a log record carries (LoggedMeta). */
void
ns_meta_to_logged(const FestMeta *meta, LoggedMeta *lm)
{
	memset(lm, 0, sizeof(*lm));
	lm->root = meta->root;
	lm->page_count = meta->page_count;
	lm->free_head = meta->free_head;
	lm->free_count = meta->free_count;
	lm->entry_count = meta->entry_count;
	lm->height = meta->height;
	lm->flags = meta->flags;
	lm->srid = meta->srid;
	memcpy(lm->structure_state, meta->structure_state, FEST_STRUCTURE_STATE_SIZE);
}

/* Restore the meta fields of a record; the clean flag stays as it is. */
void
ns_meta_from_logged(const LoggedMeta *lm, FestMeta *meta)
{
	meta->root = lm->root;
	meta->page_count = lm->page_count;
	meta->free_head = lm->free_head;
	meta->free_count = lm->free_count;
	meta->entry_count = lm->entry_count;
	meta->height = lm->height;
	meta->flags = (meta->flags & FEST_META_CLEAN) | (lm->flags & ~FEST_META_CLEAN);
	meta->srid = lm->srid;
	memcpy(meta->structure_state, lm->structure_state, FEST_STRUCTURE_STATE_SIZE);
}

/* A private copy of a node in the given context. */
TreeNode *
ns_copy_node(const TreeNode *node, MemoryContext cxt)
{
	TreeNode   *copy = MemoryContextAlloc(cxt, sizeof(TreeNode));

	*copy = *node;
	copy->entries = MemoryContextAlloc(cxt, (size_t) node->capacity * node->entry_size);
	memcpy(copy->entries, node->entries, (size_t) node->nentries * node->entry_size);
	return copy;
}

/*
 * Start an empty file for a rebuild: no node pages, no free list, no
 * entries.  The structure then writes its new tree; the meta is written at
 * the next commit or flush.  A rebuilt index is trusted again.
 */
void
ns_truncate_to_empty(NodeStore *ns)
{
	ns_empty_meta(ns);
	pageio_truncate(ns->io, FEST_FIRST_DATA_PAGE);
	/*
	 * The old tree is gone from the file: the empty one (with the caller's
	 * flags, BUILDING for a build) is what the meta must say from now on,
	 * even before its first commit, and the meta on disk, which still
	 * describes the old tree, is written again (as not clean) by the next
	 * ns_mark_unclean.
	 */
	ns_note_committed(ns);
	ns->marked_unclean = false;
}

/* The meta data of an empty file (ns_truncate_to_empty without the file). */
void
ns_empty_meta(NodeStore *ns)
{
	ns->meta->page_count = FEST_FIRST_DATA_PAGE;
	ns->meta->free_head = InvalidPageId;
	ns->meta->free_count = 0;
	ns->meta->entry_count = 0;
	ns->meta->root = InvalidPageId;
	ns->meta->height = 0;
	ns->meta->flags |= FEST_META_ENTRIES_VALID;
	ns->suspect = false;
	ns->meta_dirty = true;
	ns->op_touched = true;
}

static int
pageid_cmp(const void *a, const void *b)
{
	PageId		x = *(const PageId *) a;
	PageId		y = *(const PageId *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * Read pages[0..n) (reordered in place) with one pageio_read, in page
 * order, each page once.  The images live in the current memory context.
 */
void
ns_prefetch_load(NodeStore *ns, PagePrefetch *pf, PageId *pages, int n)
{
	int			m = 0;

	ns_prefetch_clear(pf);
	if (n <= 0)
		return;
	qsort(pages, n, sizeof(PageId), pageid_cmp);
	pf->reqs = palloc(n * sizeof(PageIORequest));
	for (int i = 0; i < n; i++)
	{
		if (m > 0 && pf->reqs[m - 1].page == pages[i])
			continue;
		pf->reqs[m].page = pages[i];
		pf->reqs[m].buf = pageio_alloc_buffer(ns->page_size);
		m++;
	}
	pageio_read(ns->io, pf->reqs, m);
	pf->n = m;
}

/*
 * The prefetched image of page, or NULL; *verified (if given) gets its
 * request's verified flag (device/pageio.h).
 */
char *
ns_prefetch_find(const PagePrefetch *pf, PageId page, bool *verified)
{
	int			lo = 0,
				hi = pf->n - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (pf->reqs[mid].page == page)
		{
			if (verified != NULL)
				*verified = pf->reqs[mid].verified;
			return pf->reqs[mid].buf;
		}
		if (pf->reqs[mid].page < page)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

void
ns_prefetch_clear(PagePrefetch *pf)
{
	for (int i = 0; i < pf->n; i++)
		pageio_free_buffer(pf->reqs[i].buf);
	if (pf->reqs != NULL)
		pfree(pf->reqs);
	pf->reqs = NULL;
	pf->n = 0;
}
