/*-------------------------------------------------------------------------
 *
 * lbgrid.c
 *	  LB-Grid, the Log-Bucket Grid File (Fevgas 2019, PhD thesis,
 *	  University of Thessaly, §3.4; Fevgas and Bozanis, Data & Knowledge
 *	  Engineering 121, 2019): GFFM's directory (gridfile.c, shared, not
 *	  copied) whose cells hold logical bucket ids, and buckets kept as log
 *	  records in append-only log pages.
 *
 * Layout.  Levels >= 1 are GFFM's two-level directory (gridfile.h: the
 * root directory in memory and its root pages, one page per
 * sub-directory with its scales and grid array); a level-1
 * entry's child is not a page but the logical bucket id, which is the
 * bucket's region address (a region is a bucket's for as long as the
 * bucket lives, so the id needs no table of its own), stored negated
 * (LB_REF) so that nothing takes it for a page.  Level 0 holds log
 * pages: a TreeNode whose link is the page's sequence number, whose flags
 * are LB_LOG_PAGE (and LB_PLACE_PAGE for an adaptive grid file's bucket in
 * place, agrid.c, lbgrid.h) and whose entries are 32-byte log records,
 *
 *	offset size field
 *	     0    8 x		float8 (NaN: a BEGIN marker, below)
 *	     8    8 y		float8
 *	    16    8 id		int8
 *	    24    8 tag		uint64: the bucket's region address; the top bit
 *						set for a delete record
 *
 * A BEGIN(B) marker says "bucket B starts empty here": the records of B
 * after its last marker are B's content (inserts add, deletes remove one
 * copy).  A split or merge writes the new buckets' compacted content as
 * one group (markers and records) into one page.  The BTT maps each
 * bucket that has a marker to the log pages holding its records from its
 * marker on (the first page holds the marker), with its live count; a
 * directory bucket without a BTT entry is empty.
 *
 * Decisions where the thesis leaves a gap (each is tested in
 * sql/lbgrid.sql or test/shell/lbgrid_crash.sh):
 *	- Split axis and position (§3.4.3 "pick a split boundary"): GFFM's
 *	  buddy halving (gridfile.c), so every bucket is a dyadic region.
 *	  A full bucket plus the new point always splits into exactly two
 *	  non-empty halves (at most one half can exceed the capacity, and it is
 *	  halved again); empty halves get a bucket but no marker.
 *	- Logical bucket capacity (§3.4.1 "fits in one log page"): records a
 *	  page holds minus 3, times max_fill percent, so that a split's group
 *	  (the bucket, the new point and two markers) fits one page.
 *	- Merge partner (§3.4.4 "the prerequisites of [47]"): the buddy region
 *	  when it is a bucket of the same sub-directory and both fit one
 *	  bucket, at <= merge_fill percent (default 30) after a delete;
 *	  repeated while it applies, then directory pages merge as in GFFM.
 *	- Sub-directory capacity: as GFFM's (one page of 56-byte regions).
 *	- Duplicates of one point beyond a bucket: refused with an error, as
 *	  GFFM does (one grid cell cannot be split).
 *	- BTT persistence (§3.4.1 gap): none.  The BTT is rebuilt from the log
 *	  pages whenever the index is opened (two scans of its pages), so it
 *	  cannot disagree with them; the log pages alone determine every
 *	  bucket, which is also the crash recovery (lb_recover).
 *	- Timestamp unit: the position in the log, (page sequence number,
 *	  slot); sequence numbers grow by one per new log page.
 *	- Stale log pages (§3.4.3 gap): each log page counts the BTT lists
 *	  holding it and is freed when the count drops to 0 (a split or merge
 *	  compacted every bucket with records in it), unless it is the working
 *	  page.  A bucket's list only shortens at a split or merge (no separate
 *	  list-length limit).
 *	- Occupancy (§3.4.1 gap): the live count in the BTT entry.
 *	- Delete (Alg. 3): a delete record is appended without reading the
 *	  bucket.  So a delete cannot tell an entry that is not there: it
 *	  returns false only when the bucket is empty, and a delete record
 *	  with no entry to remove removes nothing when the bucket is replayed.
 *	  The live count may then be too low, by at most the delete records
 *	  appended since the bucket was last replayed (LbBucket.unverified):
 *	  every replay sets it exactly, an insert that might fill the bucket
 *	  by the true count reads it first (the thesis reads a full bucket
 *	  anyway), a merge reads both buckets (as Alg. 3 does) and checks them
 *	  again, and the index's entry count is no longer vouched for
 *	  (FEST_META_ENTRIES_VALID) until festival.check() counts it.  With
 *	  delete_check 'read' a delete reads its bucket first, refuses absent
 *	  entries and keeps every count exact (festival's delete before the
 *	  thesis's, a read the thesis does not pay).
 *	- Update: a delete record and an insert record.
 *	- Durability: the working log page is written at each operation's
 *	  commit (write-through), so acknowledged changes survive kill -9 and
 *	  an unclean open rebuilds the directory and the BTT from the log
 *	  pages; FAST and eFIND (whose redo log would duplicate the log pages)
 *	  are refused.
 *
 * Queries are GFFM's (RQ, P-RQ and group point queries of
 * gridfile_query.c, the ring kNN of gridfile_knn.c with knn_prefetch;
 * the generic ones for a kNN that is not a point, snapshots and dumps)
 * over the read_leaves hook and the BTT lists (lb_bucket_pages): a
 * logical bucket is assembled by replaying its log pages, and the buckets
 * of one batch read their pages with one ns_read_many (readBucket,
 * §3.4.2, and the group reads of §3.5).
 *
 * IDENTIFICATION
 *	  src/index/lbgrid.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/lbgrid.h"

#include <math.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "stats/jsonbuild.h"
#include "utils/float.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

const char *const lb_delete_checks[] = {"none", "read", NULL};

static const OptionSpec lb_options[] = {
	LB_SHARED_OPTION_SPECS,
	{0}
};

/* ------------------------------------------------------------------ */
/* NodeOps                                                            */
/* ------------------------------------------------------------------ */

/* Records begin like GFFM's bucket entries: GFFM's NodeOps serve. */
PointEntryPrefix(LbRecord);

/* Records are the same point and id when their point entries are equal. */
static inline int
compare_record(const LbRecord *a, const LbRecord *b)
{
	return point_entry_cmp((const PointEntry *) a, (const PointEntry *) b);
}

static const NodeOps lb_node_ops = {
	.structure = "lbgrid",
	.leaf_entry_size = sizeof(LbRecord),
	.internal_entry_size = sizeof(GfDirEntry),
	.compare_identity = gf_compare_identity,
	.entry_mbr = gf_entry_mbr,
	.entry_ref = gf_entry_ref,
	.level_flags = gf_level_flags
};

/* ------------------------------------------------------------------ */
/* the BTT                                                            */
/* ------------------------------------------------------------------ */

static void
btt_create(LbState *st)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(LbBucket);
	ctl.hcxt = st->cxt;
	st->btt = hash_create("lbgrid BTT", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(LbPage);
	ctl.hcxt = st->cxt;
	st->pages = hash_create("lbgrid log pages", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	st->work = NULL;
	st->next_seq = 1;
}

static void
btt_reset(LbState *st)
{
	st->loaded = false;
	MemoryContextReset(st->cxt);
	btt_create(st);
}

LbBucket *
lb_btt_find(LbState *st, uint64 addr)
{
	return hash_search(st->btt, &addr, HASH_FIND, NULL);
}

LbPage *
lb_page_find(LbState *st, PageId page)
{
	return hash_search(st->pages, &page, HASH_FIND, NULL);
}

/* A log page new to the table, held by no list yet. */
LbPage *
lb_page_register(LbState *st, PageId page, uint64 seq, bool place)
{
	bool		found;
	LbPage	   *lp = hash_search(st->pages, &page, HASH_ENTER, &found);

	Assert(!found);
	lp->seq = seq;
	lp->refs = 0;
	lp->place = place;
	return lp;
}

/* Add page to b's list (it is the newest page of the list or not yet in). */
static void
bucket_add_page(LbState *st, LbBucket *b, PageId page)
{
	LbPage	   *p;

	if (b->npages > 0 && b->pages[b->npages - 1] == page)
		return;
	if (b->npages == b->maxpages)
	{
		b->maxpages = Max(4, 2 * b->maxpages);
		b->pages = b->pages == NULL
			? MemoryContextAlloc(st->cxt, b->maxpages * sizeof(PageId))
			: repalloc(b->pages, b->maxpages * sizeof(PageId));
	}
	b->pages[b->npages++] = page;
	p = lb_page_find(st, page);
	Assert(p != NULL);
	p->refs++;
}

/*
 * Drop bucket addr from the BTT.  Pages no list holds any more are freed
 * through the store when idx is given (not during the load, which only
 * counts), unless one is the working page.
 */
void
lb_bucket_drop(StructIndex *idx, LbState *st, uint64 addr)
{
	LbBucket   *b = lb_btt_find(st, addr);

	if (b == NULL)
		return;
	for (int i = 0; i < b->npages; i++)
	{
		LbPage	   *p = lb_page_find(st, b->pages[i]);

		Assert(p != NULL && p->refs > 0);
		p->refs--;
		if (p->refs == 0 && idx != NULL &&
			(st->work == NULL || st->work->page != p->page))
		{
			PageId		page = p->page;

			ns_release(idx->ns, page);
			hash_search(st->pages, &page, HASH_REMOVE, NULL);
		}
	}
	if (b->pages != NULL)
		pfree(b->pages);
	hash_search(st->btt, &addr, HASH_REMOVE, NULL);
}

/* A new, empty bucket (a BEGIN marker in page). */
LbBucket *
lb_bucket_begin(LbState *st, uint64 addr, PageId page)
{
	bool		found;
	LbBucket   *b = hash_search(st->btt, &addr, HASH_ENTER, &found);

	Assert(!found);
	b->live = 0;
	b->unverified = 0;
	b->npages = 0;
	b->maxpages = 0;
	b->pages = NULL;
	b->recent_writes = 0;
	b->recent_reads = 0;
	bucket_add_page(st, b, page);
	return b;
}

/*
 * Apply one record of a log page to the BTT, as the load replays the log.
 * A marker ends every bucket it supersedes: the bucket it split from (an
 * ancestor region) or the two it merged (its halves); records of buckets
 * with no entry are stale (of a bucket superseded since) and skipped.
 */
static void
btt_apply(LbState *st, const LbRecord *r, PageId page)
{
	uint64		a = LB_ADDR(r->tag);
	LbBucket   *b;

	if (lb_is_begin(r))
	{
		for (uint64 up = a; up >= GF_ROOT_ADDR; up >>= 1)
			lb_bucket_drop(NULL, st, up);
		if (gf_addr_len(a) < GF_MAX_DEPTH)
		{
			lb_bucket_drop(NULL, st, a << 1);
			lb_bucket_drop(NULL, st, (a << 1) | 1);
		}
		(void) lb_bucket_begin(st, a, page);
		return;
	}
	b = lb_btt_find(st, a);
	if (b == NULL)
		return;
	bucket_add_page(st, b, page);
	if ((r->tag & LB_DELETE) == 0)
		b->live++;
	else if (st->delete_reads)
		b->live--;				/* every delete found its entry */
	else
	{
		/* appended without reading (Alg. 3): maybe of no entry */
		b->live = Max(b->live - 1, 0);
		b->unverified++;
	}
}

/* ------------------------------------------------------------------ */
/* loading: the log pages determine every bucket                       */
/* ------------------------------------------------------------------ */

typedef struct SeqPage
{
	uint64		seq;
	PageId		page;
} SeqPage;

static int
seqpage_cmp(const void *a, const void *b)
{
	const SeqPage *x = a,
			   *y = b;

	return x->seq < y->seq ? -1 : (x->seq > y->seq ? 1 : 0);
}

/*
 * Rebuild the BTT from the log pages: one scan to find them (every page of
 * the file but the free list's, read in batches), one to replay them in
 * sequence order, read in batches.  When recovering, the free list is not
 * trusted (every page is read and classified by its kind), a damaged page
 * makes it return false instead of raising.
 */
bool
lb_load(StructIndex *idx, LbState *st, bool recovering)
{
	NodeStore  *ns = idx->ns;
	uint64		npages = ns->meta->page_count;
	SeqPage    *logs = palloc(Max(npages, 1) * sizeof(SeqPage));
	int64		nlogs = 0;

	btt_reset(st);
	if (!recovering)
	{
		/*
		 * A clean file: its free list is right, and every other page is
		 * read in batches (one submission each under a batched engine).
		 */
		HASHCTL		ctl;
		HTAB	   *free_pages;
		PageId		f = ns->meta->free_head;
		PageId		pages[64];
		TreeNode   *nodes[64];
		int			n = 0;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(PageId);
		ctl.entrysize = sizeof(PageId);
		ctl.hcxt = CurrentMemoryContext;
		free_pages = hash_create("lbgrid free pages", 64, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		for (uint64 k = 0; f != InvalidPageId && k < ns->meta->free_count; k++)
		{
			PageId		next;

			if (ns->ops->read_free_link(ns, f, &next) != FEST_PAGE_OK)
				fest_report_corrupt(idx->name, f, "A page of the free list cannot be read.");
			(void) hash_search(free_pages, &f, HASH_ENTER, NULL);
			f = next;
		}
		for (PageId p = FEST_FIRST_DATA_PAGE; p <= npages; p++)
		{
			if (p < npages && hash_search(free_pages, &p, HASH_FIND, NULL) != NULL)
				continue;
			if (p < npages)
				pages[n++] = p;
			if (n == 64 || (p == npages && n > 0))
			{
				CHECK_FOR_INTERRUPTS();
				ns_read_many(ns, pages, n, nodes);
				for (int k = 0; k < n; k++)
				{
					if (nodes[k]->level == 0 && (nodes[k]->flags & LB_LOG_PAGE) != 0)
					{
						logs[nlogs].seq = nodes[k]->link;
						logs[nlogs].page = pages[k];
						nlogs++;
					}
					else if (nodes[k]->level == 0)
						fest_report_corrupt(idx->name, pages[k], "A level-0 page is not a log page.");
					tree_free_node(nodes[k]);
				}
				n = 0;
			}
		}
	}
	else
	{
		/* after a crash: nothing is trusted, damage is reported, not raised */
		for (PageId p = FEST_FIRST_DATA_PAGE; p < npages; p++)
		{
			TreeNode   *node;
			FestPageCheck check = ns->ops->read_checked(ns, p, &node);

			CHECK_FOR_INTERRUPTS();
			if (check == FEST_PAGE_WRONG_KIND || check == FEST_PAGE_NEVER_WRITTEN)
				continue;		/* free, or allocated by a change cut short */
			if (check != FEST_PAGE_OK ||
				(node->level == 0 && (node->flags & LB_LOG_PAGE) == 0))
				return false;
			if (node->level == 0)
			{
				logs[nlogs].seq = node->link;
				logs[nlogs].page = p;
				nlogs++;
			}
			tree_free_node(node);
		}
	}
	qsort(logs, nlogs, sizeof(SeqPage), seqpage_cmp);

	for (int64 i = 0; i < nlogs; i += 64)
	{
		int			n = (int) Min(64, nlogs - i);
		PageId		pages[64];
		TreeNode   *nodes[64];

		for (int k = 0; k < n; k++)
			pages[k] = logs[i + k].page;
		ns_read_many(ns, pages, n, nodes);
		for (int k = 0; k < n; k++)
		{
			bool		place = (nodes[k]->flags & LB_PLACE_PAGE) != 0;

			if (i + k > 0 && logs[i + k].seq == logs[i + k - 1].seq)
			{
				if (recovering)
					return false;
				fest_report_corrupt(idx->name, pages[k], "Two log pages have the same sequence number.");
			}
			(void) lb_page_register(st, pages[k], logs[i + k].seq, place);
			for (uint32 r = 0; r < nodes[k]->nentries; r++)
				btt_apply(st, &LbRecords(nodes[k])[r], pages[k]);
			/*
			 * The newest page is the working page, an in-place bucket's
			 * page excepted (agrid.c: it is rewritten, never appended to).
			 */
			if (!place)
			{
				if (st->work != NULL)
					tree_free_node(st->work);
				st->work = ns_copy_node(nodes[k], st->cxt);
			}
			tree_free_node(nodes[k]);
		}
	}
	if (nlogs > 0)
		st->next_seq = logs[nlogs - 1].seq + 1;
	pfree(logs);

	/*
	 * A bucket with an ancestor in the table is dead: the ancestor's marker
	 * is the later one (an older ancestor was dropped by the descendant's
	 * marker), and the marker that ended the bucket directly (its parent's,
	 * at a merge) may sit on a page freed since.
	 */
	{
		HASH_SEQ_STATUS seq;
		LbBucket   *b;
		List	   *dead = NIL;
		ListCell   *lc;

		hash_seq_init(&seq, st->btt);
		while ((b = hash_seq_search(&seq)) != NULL)
			for (uint64 up = b->addr >> 1; up >= GF_ROOT_ADDR; up >>= 1)
				if (lb_btt_find(st, up) != NULL)
				{
					uint64	   *a = palloc(sizeof(uint64));

					*a = b->addr;
					dead = lappend(dead, a);
					break;
				}
		foreach(lc, dead)
			lb_bucket_drop(NULL, st, *(uint64 *) lfirst(lc));
	}
	st->loaded = true;
	return true;
}

/*
 * The state, its BTT loaded.  A load that failed (a read error, a cancel)
 * left loaded false, so the next use loads again from the start: an
 * ERROR in a read-only operation keeps the handle, and a partial table
 * would answer too few rows and append to the wrong working page.
 */
LbState *
lb_state(StructIndex *idx)
{
	LbState    *st = (LbState *) idx->state;

	if (!st->loaded)
		(void) lb_load(idx, st, false);
	Assert(st->loaded && st->btt != NULL);
	return st;
}

/* ------------------------------------------------------------------ */
/* appending                                                          */
/* ------------------------------------------------------------------ */

/*
 * Stop appending to the working page (it is full, or agrid.c needs a
 * later one): the next append starts a fresh page.  The old one is let go
 * when no bucket's list holds it.
 */
void
lb_retire_work(StructIndex *idx, LbState *st)
{
	TreeNode   *w = st->work;
	LbPage	   *op;

	if (w == NULL)
		return;
	op = lb_page_find(st, w->page);
	if (op != NULL && op->refs == 0)
	{
		PageId		oldpage = w->page;

		ns_release(idx->ns, oldpage);
		hash_search(st->pages, &oldpage, HASH_REMOVE, NULL);
	}
	tree_free_node(w);
	st->work = NULL;
}

/*
 * Append n records, all into one log page: the working page when they fit,
 * otherwise a fresh page, which becomes the working page (a compacted
 * group thus never spans pages, so one page write holds it whole).  The
 * working page is written at the commit; the BTT is not touched here.
 */
static PageId
lb_append(StructIndex *idx, LbState *st, const LbRecord *recs, int n)
{
	NodeStore  *ns = idx->ns;
	TreeNode   *w = st->work;

	Assert(n > 0 && n <= (int) st->page_records);
	if (w == NULL || w->nentries + n > st->page_records)
	{
		PageId		page = ns_alloc(ns, 0);
		MemoryContext old;

		lb_retire_work(idx, st);
		old = MemoryContextSwitchTo(st->cxt);
		w = ns_new_node(ns, page, 0);
		MemoryContextSwitchTo(old);
		w->flags = LB_LOG_PAGE;
		w->link = st->next_seq++;
		st->work = w;
		(void) lb_page_register(st, page, w->link, false);
		memcpy(w->entries, recs, (size_t) n * sizeof(LbRecord));
		w->nentries = n;
		ns_write(ns, w, NS_WRITE_NEW);
		return page;
	}
	memcpy(LbRecords(w) + w->nentries, recs, (size_t) n * sizeof(LbRecord));
	w->nentries += n;
	ns_write(ns, w, NS_WRITE_UPDATE);
	return w->page;
}

LbRecord
lb_make_begin(uint64 addr)
{
	LbRecord	r;

	r.x = get_float8_nan();
	r.y = get_float8_nan();
	r.id = 0;
	r.tag = addr;
	return r;
}

/* ------------------------------------------------------------------ */
/* readBucket (Alg. 1)                                                */
/* ------------------------------------------------------------------ */

/* A page read for a group of buckets. */
typedef struct LbReadPage
{
	PageId		page;			/* hash key */
	TreeNode   *node;
} LbReadPage;

/* Replay bucket addr's records from the pages given (nodes by page). */
static TreeNode *
replay_bucket(StructIndex *idx, LbState *st, uint64 addr, HTAB *nodes)
{
	LbBucket   *b = lb_btt_find(st, addr);
	TreeNode   *out = ns_new_node(idx->ns, (PageId) LB_REF(addr), 0);
	int			maxn = (int) out->capacity;

	if (b == NULL)
		return out;
	for (int i = 0; i < b->npages; i++)
	{
		LbReadPage *np = hash_search(nodes, &b->pages[i], HASH_FIND, NULL);
		TreeNode   *pg;

		if (np == NULL || np->node == NULL)
			fest_report_corrupt(idx->name, b->pages[i], "A page of the bucket's list was not read.");
		pg = np->node;
		idx->stats->entries_examined += pg->nentries;
		for (uint32 r = 0; r < pg->nentries; r++)
		{
			const LbRecord *rec = &LbRecords(pg)[r];

			if (LB_ADDR(rec->tag) != addr)
				continue;
			if (lb_is_begin(rec))
				out->nentries = 0;
			else if (rec->tag & LB_DELETE)
			{
				int			k;

				for (k = (int) out->nentries - 1; k >= 0; k--)
					if (compare_record(&LbRecords(out)[k], rec) == 0)
						break;
				if (k < 0 && !st->delete_reads)
					continue;	/* a delete of an entry that was not there */
				if (k < 0)
					fest_report_corrupt(idx->name, pg->page, "A delete record has no entry to remove.");
				LbRecords(out)[k] = LbRecords(out)[out->nentries - 1];
				out->nentries--;
			}
			else
			{
				if ((int) out->nentries == maxn)
				{
					maxn *= 2;
					out->entries = repalloc(out->entries, (size_t) maxn * sizeof(LbRecord));
					out->capacity = maxn;
				}
				LbRecords(out)[out->nentries++] = *rec;
			}
		}
	}
	/*
	 * The replay is the exact count: deletes appended without reading the
	 * bucket may have found nothing, by at most b->unverified.
	 */
	if ((int32) out->nentries < b->live ||
		(int32) out->nentries > b->live + b->unverified)
		fest_report_corrupt(idx->name, b->pages[0],
							psprintf("Bucket " UINT64_FORMAT " replays to %u entries, but its table entry counts %d (and %d deletes not checked).",
									 addr, out->nentries, b->live, b->unverified));
	b->live = (int32) out->nentries;
	b->unverified = 0;
	return out;
}

/*
 * readBucket for n buckets: the union of their lists (the working page
 * served from memory) is read with one ns_read_many, then each bucket is
 * replayed.  The read_leaves hook of the generic algorithms.
 */
void
lb_read_leaves(StructIndex *idx, const int64 *refs, int n, TreeNode **out)
{
	LbState    *st = lb_state(idx);
	HASHCTL		ctl;
	HTAB	   *nodes;
	PageId	   *pages;
	int			np = 0;
	int			maxp = 16;
	TreeNode  **read;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(LbReadPage);
	ctl.hcxt = CurrentMemoryContext;
	nodes = hash_create("lbgrid bucket read", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	pages = palloc(maxp * sizeof(PageId));
	for (int i = 0; i < n; i++)
	{
		LbBucket   *b = lb_btt_find(st, LB_REF_ADDR(refs[i]));

		if (b == NULL)
			continue;
		for (int k = 0; k < b->npages; k++)
		{
			bool		found;
			LbReadPage *e = hash_search(nodes, &b->pages[k], HASH_ENTER, &found);

			if (found)
				continue;
			e->node = NULL;
			if (st->work != NULL && st->work->page == b->pages[k])
			{
				e->node = st->work;
				continue;
			}
			if (np == maxp)
			{
				maxp *= 2;
				pages = repalloc(pages, maxp * sizeof(PageId));
			}
			pages[np++] = b->pages[k];
		}
	}
	read = palloc(Max(np, 1) * sizeof(TreeNode *));
	if (np > 0)
		ns_read_many(idx->ns, pages, np, read);
	for (int k = 0; k < np; k++)
	{
		LbReadPage *e = hash_search(nodes, &pages[k], HASH_FIND, NULL);

		if (read[k]->level != 0 || (read[k]->flags & LB_LOG_PAGE) == 0)
			fest_report_corrupt(idx->name, pages[k], "A page of a bucket's list is not a log page.");
		e->node = read[k];
	}
	for (int i = 0; i < n; i++)
		out[i] = replay_bucket(idx, st, LB_REF_ADDR(refs[i]), nodes);
	/* a kNN or window search reads many groups in one call: free as we go */
	for (int k = 0; k < np; k++)
		tree_free_node(read[k]);
	pfree(read);
	pfree(pages);
	hash_destroy(nodes);
}

/*
 * Is ref a bucket of the directory?  The region it names is looked up as
 * its first cell would be (the root directory, then one sub-directory) and
 * must be a sub-directory entry itself (an empty bucket has no table
 * entry, yet is one).  Regions that are no bucket (a part or a union of
 * buckets) and refs that name no region are not.
 */
bool
lb_leaf_exists(StructIndex *idx, int64 ref)
{
	uint64		addr;
	int			len;
	GfRoot	   *root;
	int			sub;
	TreeNode   *node;
	int			slot;
	bool		found;

	if (ref >= 0 || ref == PG_INT64_MIN)
		return false;
	addr = LB_REF_ADDR(ref);
	len = gf_addr_len(addr);
	if (len > GF_MAX_DEPTH)
		return false;
	(void) lb_state(idx);
	root = gf_root(idx);
	sub = gf_root_find(root, addr << (GF_MAX_DEPTH - len));
	if (!gf_addr_contains(gf_root_sub_addr(root, sub), addr))
		return false;			/* a region larger than a sub-directory */
	node = tree_read_node(idx, (int64) gf_root_sub_page(root, sub), GF_LEVEL_SUBDIR);
	if (node->level != GF_LEVEL_SUBDIR)
		tree_report_bad_level(idx, node, GF_LEVEL_SUBDIR);
	idx->stats->entries_examined += node->nentries;
	slot = gf_locate(node, addr);
	found = slot >= 0 && GfDirEntries(node)[slot].addr == addr;
	tree_free_node(node);
	return found;
}

/*
 * The log pages reading bucket ref takes (GfState.bucket_pages, the
 * thesis's BTT[B].list): its list, less the working page, which is in
 * memory and newest, so last if there.
 */
static int
lb_bucket_pages(StructIndex *idx, int64 ref, PageId *one, const PageId **pages)
{
	LbState    *st = lb_state(idx);
	LbBucket   *b = lb_btt_find(st, LB_REF_ADDR(ref));
	int			n;

	*pages = one;
	if (b == NULL)
		return 0;
	n = b->npages;
	if (n > 0 && st->work != NULL && b->pages[n - 1] == st->work->page)
		n--;
	*pages = b->pages;
	return n;
}

TreeNode *
lb_read_bucket(StructIndex *idx, uint64 addr)
{
	int64		ref = LB_REF(addr);
	TreeNode   *node;

	lb_read_leaves(idx, &ref, 1, &node);
	return node;
}

/* ------------------------------------------------------------------ */
/* insertion (Alg. 2)                                                 */
/* ------------------------------------------------------------------ */

/*
 * Write the compacted content of new buckets as one group (a marker and
 * the records of each non-empty one) and give them BTT entries.
 */
static void
write_group(StructIndex *idx, LbState *st, List *pieces)
{
	LbRecord   *group = palloc((st->page_records + 1) * sizeof(LbRecord));
	int			n = 0;
	ListCell   *lc;
	PageId		page;

	foreach(lc, pieces)
	{
		GfPiece    *p = lfirst(lc);
		LbRecord   *recs = (LbRecord *) p->entries;

		if (p->n == 0)
			continue;
		Assert(n + 1 + p->n <= (int) st->page_records);
		group[n++] = lb_make_begin(p->addr);
		for (int i = 0; i < p->n; i++)
		{
			group[n] = recs[i];
			group[n].tag = p->addr;
			n++;
		}
	}
	page = lb_append(idx, st, group, n);
	foreach(lc, pieces)
	{
		GfPiece    *p = lfirst(lc);

		if (p->n > 0)
			lb_bucket_begin(st, p->addr, page)->live = p->n;
	}
}

/*
 * Alg. 2 for the point rec of the bucket at lk->slot (rec->tag its
 * region): appended when the bucket is not full, split otherwise.  The
 * adaptive grid file (agrid.c) calls it for its buckets in log mode.
 */
void
lb_insert_at(StructIndex *idx, LbState *st, GfLookup *lk, const LbRecord *rec,
			 uint64 point)
{
	uint64		addr = rec->tag;
	LbBucket   *b = lb_btt_find(st, addr);
	TreeNode   *bucket;
	uint64	   *keys;
	List	   *pieces = NIL;
	GfDirEntry *made;
	int			np = 0;
	int			n;
	int32		writes,
				reads;
	ListCell   *lc;

	Assert(GfDirEntries(lk->subdir)[lk->slot].addr == addr);

	/*
	 * Deletes appended without reading may have left the count too low: a
	 * bucket that might be full by its true count is read (a replay sets
	 * the count) before it is taken for not full.
	 */
	if (b != NULL && b->unverified > 0 &&
		b->live + b->unverified >= (int32) st->gf.bucket_max)
	{
		tree_free_node(lb_read_bucket(idx, addr));
		b = lb_btt_find(st, addr);
	}

	if (b == NULL || b->live < (int32) st->gf.bucket_max)
	{
		/* not full: append, reading nothing (an empty bucket gets a marker) */
		LbRecord	recs[2];
		int			nr = 0;
		PageId		page;

		if (b == NULL)
			recs[nr++] = lb_make_begin(addr);
		recs[nr++] = *rec;
		page = lb_append(idx, st, recs, nr);
		if (b == NULL)
			b = lb_bucket_begin(st, addr, page);
		else
			bucket_add_page(st, b, page);
		b->live++;
		return;
	}

	/* full: read it, split it by buddy halving, write it compacted */
	bucket = lb_read_bucket(idx, addr);
	Assert(bucket->nentries < bucket->capacity);
	LbRecords(bucket)[bucket->nentries++] = *rec;
	n = (int) bucket->nentries;
	keys = palloc(n * sizeof(uint64));
	for (int i = 0; i < n; i++)
		keys[i] = gf_point_addr(&st->gf, LbRecords(bucket)[i].x, LbRecords(bucket)[i].y);
	gf_refuse_copies(idx, keys, n, point, rec->x, rec->y);
	gf_cut(addr, bucket->entries, keys, n, sizeof(LbRecord), st->gf.bucket_max, &pieces);
	Assert(list_length(pieces) >= 2);
	writes = b->recent_writes;
	reads = b->recent_reads;
	lb_bucket_drop(idx, st, addr);
	write_group(idx, st, pieces);
	idx->stats->splits_leaf++;

	/* the sub-directory's entry gives way to the halves' */
	made = palloc(list_length(pieces) * sizeof(GfDirEntry));
	foreach(lc, pieces)
	{
		GfPiece    *p = lfirst(lc);
		LbBucket   *half = lb_btt_find(st, p->addr);

		/* the halves inherit the bucket's recent operations (agrid.c) */
		if (half != NULL)
		{
			half->recent_writes = writes;
			half->recent_reads = reads;
		}
		gf_fill_dir_entry(&st->gf, &made[np++], p->addr, (PageId) LB_REF(p->addr));
	}
	gf_subdir_replace(idx, lk, addr, made, np);
}

static void
lb_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	LbState    *st = lb_state(idx);
	uint64		point = gf_point_admit(idx, box->xmin, box->ymin);
	GfLookup	lk;
	LbRecord	rec;

	gf_lookup(idx, point, false, &lk);
	rec.x = box->xmin;
	rec.y = box->ymin;
	rec.id = id;
	rec.tag = GfDirEntries(lk.subdir)[lk.slot].addr;
	lb_insert_at(idx, st, &lk, &rec, point);
}

/* ------------------------------------------------------------------ */
/* contains, deletion (Alg. 3)                                        */
/* ------------------------------------------------------------------ */

int
lb_find_record(const TreeNode *bucket, const LbRecord *rec)
{
	for (uint32 i = 0; i < bucket->nentries; i++)
		if (compare_record(&LbRecords(bucket)[i], rec) == 0)
			return (int) i;
	return -1;
}

/*
 * The record of object id at point box and the directory slot of its
 * bucket: rec->tag is the bucket's address.  False when box is not a point
 * inside the grid (no bucket can hold it).
 */
bool
lb_locate(StructIndex *idx, int64 id, const Mbr *box, GfLookup *lk, LbRecord *rec)
{
	LbState    *st = lb_state(idx);

	if (!mbr_is_point(box) || !gf_point_inside(&st->gf, box->xmin, box->ymin))
		return false;
	gf_lookup(idx, gf_point_addr(&st->gf, box->xmin, box->ymin), false, lk);
	rec->x = box->xmin;
	rec->y = box->ymin;
	rec->id = id;
	rec->tag = GfDirEntries(lk->subdir)[lk->slot].addr;
	return true;
}

bool
lb_contains(StructIndex *idx, int64 id, const Mbr *box)
{
	GfLookup	lk;
	LbRecord	rec;

	return lb_locate(idx, id, box, &lk, &rec) &&
		lb_find_record(lb_read_bucket(idx, rec.tag), &rec) >= 0;
}

/*
 * Merge the bucket at lk->slot of the sub-directory with its buddy while
 * it holds at most the merge threshold, the buddy is a bucket of the same
 * sub-directory and both fit in one bucket (Alg. 3, lines 6-21): both are
 * read (readBucket, which also makes their counts exact, so the threshold
 * and the fit are checked again) and their content goes compacted under
 * the parent region; the sub-directory's two entries become one (in
 * memory: the caller writes it).  True when anything merged.
 */
static bool
merge_buckets(StructIndex *idx, LbState *st, GfLookup *lk)
{
	TreeNode   *sub = lk->subdir;
	bool		merged = false;

	for (;;)
	{
		GfDirEntry *e = GfDirEntries(sub);
		uint64		a = e[lk->slot].addr;
		bool		high = (a & 1) != 0;
		int			bs = high ? lk->slot - 1 : lk->slot + 1;
		LbBucket   *b = lb_btt_find(st, a);
		LbBucket   *m;
		int32		live = b == NULL ? 0 : b->live;
		int32		mlive;
		int64		refs[2];
		TreeNode   *nodes[2];
		GfPiece		piece;
		List	   *pieces;
		LbBucket   *union_;
		int32		writes,
					reads;

		if (live > (int32) st->gf.bucket_merge || a == lk->sub_addr ||
			bs < 0 || bs >= (int) sub->nentries || e[bs].addr != (a ^ 1))
			break;
		m = lb_btt_find(st, a ^ 1);
		mlive = m == NULL ? 0 : m->live;
		if (live + mlive > (int32) st->gf.bucket_max)
			break;
		refs[0] = LB_REF(a);
		refs[1] = LB_REF(a ^ 1);
		lb_read_leaves(idx, refs, 2, nodes);
		if (nodes[0]->nentries > st->gf.bucket_merge ||
			nodes[0]->nentries + nodes[1]->nentries > st->gf.bucket_max)
		{
			/* deletes that found nothing had made the counts too low */
			tree_free_node(nodes[0]);
			tree_free_node(nodes[1]);
			break;
		}
		piece.addr = a >> 1;
		piece.n = (int) (nodes[0]->nentries + nodes[1]->nentries);
		piece.entries = palloc(Max(piece.n, 1) * sizeof(LbRecord));
		piece.keys = NULL;
		memcpy(piece.entries, nodes[0]->entries, nodes[0]->nentries * sizeof(LbRecord));
		memcpy(piece.entries + nodes[0]->nentries * sizeof(LbRecord), nodes[1]->entries,
			   nodes[1]->nentries * sizeof(LbRecord));
		writes = (b == NULL ? 0 : b->recent_writes) + (m == NULL ? 0 : m->recent_writes);
		reads = (b == NULL ? 0 : b->recent_reads) + (m == NULL ? 0 : m->recent_reads);
		lb_bucket_drop(idx, st, a);
		lb_bucket_drop(idx, st, a ^ 1);
		/* a marker even for an empty union: it ends both halves */
		if (piece.n == 0)
			union_ = lb_bucket_begin(st, piece.addr,
									 lb_append(idx, st, (LbRecord[]) {lb_make_begin(piece.addr)}, 1));
		else
		{
			pieces = list_make1(&piece);
			write_group(idx, st, pieces);
			union_ = lb_btt_find(st, piece.addr);
		}
		/* the union inherits both halves' recent operations (agrid.c) */
		union_->recent_writes = writes;
		union_->recent_reads = reads;
		gf_fill_dir_entry(&st->gf, &e[lk->slot], a >> 1, (PageId) LB_REF(a >> 1));
		gf_remove_slot(sub, bs);
		if (high)
			lk->slot--;
		merged = true;
	}
	return merged;
}

/*
 * Merge the bucket at lk->slot after a delete, then its sub-directory
 * (both when their occupancy has dropped to the threshold), and write
 * what changed.
 */
void
lb_merge_after_delete(StructIndex *idx, LbState *st, GfLookup *lk)
{
	if (merge_buckets(idx, st, lk))
		gf_subdir_merge(idx, lk);
}

/*
 * Delete (Alg. 3) of rec (its tag the region of the bucket at lk->slot):
 * a delete record appended to the working log page, reading no bucket
 * (with delete_check 'read', the bucket is read first and an entry that
 * is not there is refused); then the merge when the bucket's occupancy
 * has dropped to the threshold.  The adaptive grid file (agrid.c) calls
 * it for its buckets in log mode.
 */
bool
lb_remove_at(StructIndex *idx, LbState *st, GfLookup *lk, LbRecord *rec)
{
	uint64		addr = rec->tag;
	LbBucket   *b = lb_btt_find(st, addr);

	if (st->delete_reads)
	{
		if (b == NULL || b->live == 0 || lb_find_record(lb_read_bucket(idx, addr), rec) < 0)
			return false;
	}
	else if (b == NULL || b->live + b->unverified == 0)
		return false;			/* an empty bucket: nothing to delete */

	rec->tag = addr | LB_DELETE;
	bucket_add_page(st, b, lb_append(idx, st, rec, 1));
	if (st->delete_reads)
		b->live--;
	else
	{
		/*
		 * Maybe a delete of an entry that is not there: the count is a
		 * lower bound until the bucket is replayed, and the index's entry
		 * count is no longer vouched for (festival.check() counts it).
		 */
		b->live = Max(b->live - 1, 0);
		b->unverified++;
		if (idx->ns->meta->flags & FEST_META_ENTRIES_VALID)
		{
			idx->ns->meta->flags &= ~FEST_META_ENTRIES_VALID;
			ns_meta_changed(idx->ns);
		}
	}
	lb_merge_after_delete(idx, st, lk);
	return true;
}

static bool
lb_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	GfLookup	lk;
	LbRecord	rec;

	if (!lb_locate(idx, id, box, &lk, &rec))
		return false;
	return lb_remove_at(idx, lb_state(idx), &lk, &rec);
}

/* ------------------------------------------------------------------ */
/* recovery                                                           */
/* ------------------------------------------------------------------ */

/* Regions that contain a bucket of the BTT strictly inside them. */
static HTAB *
inner_regions(LbState *st)
{
	HASHCTL		ctl;
	HTAB	   *inner;
	HASH_SEQ_STATUS seq;
	LbBucket   *b;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(uint64);
	ctl.hcxt = CurrentMemoryContext;
	inner = hash_create("lbgrid inner regions", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	hash_seq_init(&seq, st->btt);
	while ((b = hash_seq_search(&seq)) != NULL)
		for (uint64 up = b->addr >> 1; up >= GF_ROOT_ADDR; up >>= 1)
			(void) hash_search(inner, &up, HASH_ENTER, NULL);
	return inner;
}

/* The bucket regions tiling region: the BTT's, empty ones in the gaps. */
static void
tile(LbState *st, HTAB *inner, uint64 region, GfDirEntry **out, int *n, int *max)
{
	if (lb_btt_find(st, region) == NULL &&
		hash_search(inner, &region, HASH_FIND, NULL) != NULL)
	{
		tile(st, inner, region << 1, out, n, max);
		tile(st, inner, (region << 1) | 1, out, n, max);
		return;
	}
	if (*n == *max)
	{
		*max *= 2;
		*out = repalloc(*out, *max * sizeof(GfDirEntry));
	}
	gf_fill_dir_entry(&st->gf, &(*out)[(*n)++], region, (PageId) LB_REF(region));
}

/*
 * After an unclean shutdown: the log pages say everything (every change
 * was appended to them before it was acknowledged, and they are never
 * overwritten), so the BTT is rebuilt from them, the directory is rebuilt
 * from the buckets' regions, and every other page is freed (the free list
 * too is rebuilt: a change cut short may have left it inconsistent).
 * A change that was cut short is either whole in the log (it is kept) or
 * absent: a split's or merge's group is one page.
 */
bool
lb_recover(StructIndex *idx)
{
	LbState    *st = (LbState *) idx->state;
	NodeStore  *ns = idx->ns;
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "lbgrid recovery",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	HTAB	   *inner;
	GfDirEntry *entries;
	int			n = 0,
				max = 64;
	int64		total = 0;
	int64		unverified = 0;
	HASH_SEQ_STATUS seq;
	LbBucket   *b;
	uint64		npages = ns->meta->page_count;

	/* an older layout is refused until a build, not restored */
	if (!gf_layout_current(ns->meta) || !lb_load(idx, st, true))
	{
		Assert(!st->loaded);
		MemoryContextSwitchTo(old);
		MemoryContextDelete(tmp);
		return false;
	}

	/* a new free list: every page but the log pages still in use */
	ns->meta->free_head = InvalidPageId;
	ns->meta->free_count = 0;
	for (PageId p = npages; p-- > FEST_FIRST_DATA_PAGE;)
	{
		LbPage	   *lp = lb_page_find(st, p);

		if (lp != NULL && (lp->refs > 0 || (st->work != NULL && st->work->page == p)))
			continue;
		if (lp != NULL)
			hash_search(st->pages, &p, HASH_REMOVE, NULL);
		ns_release(ns, p);
	}

	/* the directory, cut from the bucket regions as a bulk load cuts */
	inner = inner_regions(st);
	entries = palloc(max * sizeof(GfDirEntry));
	tile(st, inner, GF_ROOT_ADDR, &entries, &n, &max);
	gf_build_directory(idx, entries, n);

	hash_seq_init(&seq, st->btt);
	while ((b = hash_seq_search(&seq)) != NULL)
	{
		total += b->live;
		unverified += b->unverified;
	}
	ns->meta->entry_count = (uint64) total;
	/* deletes that never read their bucket leave the count unknown */
	if (unverified == 0)
		ns->meta->flags |= FEST_META_ENTRIES_VALID;
	else
		ns->meta->flags &= ~FEST_META_ENTRIES_VALID;
	ns_meta_changed(ns);
	ns_commit(ns);
	ns->ops->end_op(ns);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	return true;
}

/* ------------------------------------------------------------------ */
/* set-up                                                             */
/* ------------------------------------------------------------------ */

void
lb_init_empty(StructIndex *idx)
{
	LbState    *st = (LbState *) idx->state;
	TreeNode   *sub = ns_new_node(idx->ns, ns_alloc(idx->ns, GF_LEVEL_SUBDIR),
								  GF_LEVEL_SUBDIR);

	/* one sub-directory whose one region is the empty bucket 1 */
	gf_fill_dir_entry(&st->gf, GfDirEntries(sub), GF_ROOT_ADDR, (PageId) LB_REF(GF_ROOT_ADDR));
	sub->nentries = 1;
	gf_write_dir(idx, sub, NS_WRITE_NEW);
	gf_root_init(idx, sub->page);
	btt_reset(st);
	st->loaded = true;			/* an empty index's table is empty */
}

/*
 * The state from the options of table (LB-Grid's, or the adaptive grid
 * file's, which has LB-Grid's and its own), filled into *o.
 */
LbState *
lb_setup_options(const FestConfig *config, uint32 page_size,
				 const OptionSpec *table, LbOptions *o)
{
	LbState    *st = palloc0(sizeof(LbState));

	memset(o, 0, sizeof(*o));
	options_fill(config, table, o, sizeof(*o), &o->filled);
	st->page_records = (page_size - FEST_PAGE_HEADER_SIZE) / sizeof(LbRecord);
	gf_state_fill(&st->gf, config, page_size, &o->extent,
				  st->page_records - 3, (int) o->max_fill, (int) o->merge_fill,
				  o->range_algorithm == GF_RANGE_P_RQ, o->knn_prefetch,
				  o->directory_read_buffer, o->data_read_buffer);
	st->gf.bucket_pages = lb_bucket_pages;
	st->delete_reads = o->delete_check == 1;
	st->cxt = AllocSetContextCreate(CurrentMemoryContext, "lbgrid bucket table",
									ALLOCSET_DEFAULT_SIZES);
	st->loaded = false;
	st->btt = NULL;
	st->adaptive = NULL;
	return st;
}

static void *
lb_setup(const FestConfig *config, uint32 page_size)
{
	LbOptions	o;

	return lb_setup_options(config, page_size, lb_options, &o);
}

/*
 * LB-Grid under a framework other than none: refused.  Called by
 * index_options_parse before setup.
 */
static void
lb_check_framework(const char *framework)
{
	if (strcmp(framework, "none") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("structure \"lbgrid\" does not work under framework \"%s\"", framework),
				 errdetail("LB-Grid is log-structured itself (Fevgas 2019, §3.4): its buckets are append-only log pages that survive a crash without a redo log, and a logical bucket spans pages shared with other buckets, which FAST and eFIND cannot buffer as nodes."),
				 errhint("Use framework \"none\" with structure \"lbgrid\" (a cache such as \"clru\" may sit below it), or structure \"gridfile\" under FAST or eFIND.")));
}

void
lb_describe(StructIndex *idx, JsonbParseState **state)
{
	LbState    *st = (LbState *) idx->state;

	gf_describe_common(&st->gf, state);
	jb_int(state, "log_records_per_page", st->page_records);
	jb_int(state, "log_record_bytes", sizeof(LbRecord));
	jb_bool(state, "deletes_read_buckets", st->delete_reads);
	gf_root_describe(idx, state);
	if (st->loaded)
	{
		jb_int(state, "logical_buckets", hash_get_num_entries(st->btt));
		jb_int(state, "log_pages", hash_get_num_entries(st->pages));
	}
}

const StructureOps lbgrid_structure = {
	.name = "lbgrid",
	.description = "log-bucket grid file for flash, LB-Grid (Fevgas 2019), points only",
	.options = lb_options,
	.node_ops = &lb_node_ops,
	.setup = lb_setup,
	.check_framework = lb_check_framework,
	.init_empty = lb_init_empty,
	.insert = lb_insert,
	.remove = lb_remove,
	.contains = lb_contains,
	.search = gf_search,
	.search_batch = gf_search_batch,
	.knn = gf_knn,
	.check = lb_check,
	.check_layout = gf_check_layout,
	.describe = lb_describe,
	.points_only = true,
	.needs_extent = true,
	.build_methods = NULL,
	.bulk_load = NULL,
	.entry_region = gf_entry_region,
	.read_leaves = lb_read_leaves,
	.leaf_exists = lb_leaf_exists,
	.recover = lb_recover
};
