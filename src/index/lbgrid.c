/*-------------------------------------------------------------------------
 *
 * lbgrid.c
 *	  LB-Grid, the Log-Bucket Grid File (Fevgas 2019, PhD thesis,
 *	  University of Thessaly, §3.4; Fevgas and Bozanis, Data & Knowledge
 *	  Engineering 121, 2019): GFFM's directory (gridfile.c, shared, not
 *	  copied) whose cells hold logical bucket ids, and buckets kept as log
 *	  records in append-only log pages.
 *
 * Layout.  Levels >= 1 are GFFM directory pages (gridfile.h); a level-1
 * entry's child is not a page but the logical bucket id, which is the
 * bucket's region address (a region is a bucket's for as long as the
 * bucket lives, so the id needs no table of its own), stored negated
 * (LB_REF) so that nothing takes it for a page.  Level 0 holds log
 * pages: a TreeNode whose link is the page's sequence number and whose
 * entries are 32-byte log records,
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
 *	- Sub-directory capacity: as GFFM's (one page of 48-byte regions).
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
 *	- Occupancy (§3.4.1 gap): the live count in the BTT entry.  A delete
 *	  reads its bucket first, to refuse absent entries and keep the count
 *	  exact (a read the thesis does not pay).
 *	- Update: a delete record and an insert record.
 *	- Durability: the working log page is written at each operation's
 *	  commit (write-through), so acknowledged changes survive kill -9 and
 *	  an unclean open rebuilds the directory and the BTT from the log
 *	  pages; FAST and eFIND (whose redo log would duplicate the log pages)
 *	  are refused.
 *
 * Queries are GFFM's and the generic ones (P-RQ of gridfile.c, the ring
 * kNN of gridfile_knn.c with knn_prefetch, traverse.c, knn.c for a query
 * that is not a point, batch_search.c) over the read_leaves hook: a
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

/* The options, read once (lb_read_options). */
typedef struct LbOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	OptionBox	extent;
	int64		max_fill;
	int			range_algorithm;	/* index into gf_range_algorithms */
	int			knn_prefetch;	/* index into gf_knn_prefetches */
	int64		merge_fill;
} LbOptions;



static const OptionSpec lb_options[] = {
	{
		.name = "extent", .type = OPT_BOX,
		.description = "The space the grid divides, [xmin, ymin, xmax, ymax]; points outside it are refused. Default: the source table's extent.",
		.offset = offsetof(LbOptions, extent)
	},
	{
		.name = "max_fill", .type = OPT_INT, .default_number = 100,
		.min = 10, .max = 100,
		.description = "Logical bucket and directory page capacity, in percent of what one page holds (a bucket: the records of a log page minus 3).",
		.offset = offsetof(LbOptions, max_fill)
	},
	{
		.name = "range_algorithm", .type = OPT_CHOICE, .default_choice = "rq",
		.choices = gf_range_algorithms,
		.description = "Window queries: rq reads one bucket's log pages at a time, depth first; p-rq (Fevgas 2019, Alg. 6) reads the log pages of up to 64 buckets in one batch.",
		.offset = offsetof(LbOptions, range_algorithm)
	},
	{
		.name = "knn_prefetch", .type = OPT_CHOICE, .default_choice = "none",
		.choices = gf_knn_prefetches,
		.description = "kNN of a query point (Fevgas 2019, Alg. 7, ring by ring, as for gridfile): none reads one bucket's log pages when its cell is entered; data reads the log pages of up to 64 buckets of a ring in one batch, a page shared by several of them once; all does the same for sub-directories too.",
		.offset = offsetof(LbOptions, knn_prefetch)
	},
	{
		.name = "merge_fill", .type = OPT_INT, .default_number = 30,
		.min = 0, .max = 50,
		.description = "After a deletion, a bucket with at most this percent of its capacity merges with its buddy when both fit in one bucket (thesis: 30); directory pages likewise.",
		.offset = offsetof(LbOptions, merge_fill)
	},
	{0}
};

/* ------------------------------------------------------------------ */
/* NodeOps                                                            */
/* ------------------------------------------------------------------ */

/* Records begin like GFFM's bucket entries: GFFM's NodeOps serve. */
StaticAssertDecl(offsetof(LbRecord, x) == offsetof(GfBucketEntry, x) &&
				 offsetof(LbRecord, y) == offsetof(GfBucketEntry, y) &&
				 offsetof(LbRecord, id) == offsetof(GfBucketEntry, id),
				 "LbRecord must begin with the fields of GfBucketEntry");

static inline int
compare_record(const LbRecord *a, const LbRecord *b)
{
	return gf_compare_identity(a, b, 0);
}

static const NodeOps lb_node_ops = {
	.structure = "lbgrid",
	.leaf_entry_size = sizeof(LbRecord),
	.internal_entry_size = sizeof(GfDirEntry),
	.compare_identity = gf_compare_identity,
	.entry_mbr = gf_entry_mbr,
	.entry_ref = gf_entry_ref
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
static void
bucket_drop(StructIndex *idx, LbState *st, uint64 addr)
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
static LbBucket *
bucket_begin(LbState *st, uint64 addr, PageId page)
{
	bool		found;
	LbBucket   *b = hash_search(st->btt, &addr, HASH_ENTER, &found);

	Assert(!found);
	b->live = 0;
	b->npages = 0;
	b->maxpages = 0;
	b->pages = NULL;
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
			bucket_drop(NULL, st, up);
		if (gf_addr_len(a) < GF_MAX_DEPTH)
		{
			bucket_drop(NULL, st, a << 1);
			bucket_drop(NULL, st, (a << 1) | 1);
		}
		(void) bucket_begin(st, a, page);
		return;
	}
	b = lb_btt_find(st, a);
	if (b == NULL)
		return;
	bucket_add_page(st, b, page);
	b->live += (r->tag & LB_DELETE) ? -1 : 1;
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

static void
report_bad_log_page(StructIndex *idx, PageId page, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("index \"%s\" is corrupted at page " UINT64_FORMAT, idx->name, page),
			 errdetail("%s", what),
			 errhint("Run festival.check('%s'), then rebuild the index with festival.build('%s').",
					 idx->name, idx->name)));
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
				report_bad_log_page(idx, f, "A page of the free list cannot be read.");
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
						report_bad_log_page(idx, pages[k], "A level-0 page is not a log page.");
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
		{
			bool		found;
			LbPage	   *lp = hash_search(st->pages, &logs[i + k].page, HASH_ENTER, &found);

			lp->seq = logs[i + k].seq;
			lp->refs = 0;
			pages[k] = logs[i + k].page;
		}
		ns_read_many(ns, pages, n, nodes);
		for (int k = 0; k < n; k++)
		{
			if (i + k > 0 && logs[i + k].seq == logs[i + k - 1].seq)
			{
				if (recovering)
					return false;
				report_bad_log_page(idx, pages[k], "Two log pages have the same sequence number.");
			}
			for (uint32 r = 0; r < nodes[k]->nentries; r++)
				btt_apply(st, &LbRecords(nodes[k])[r], pages[k]);
			if (i + k == nlogs - 1)
			{
				/* the newest page is the working page */
				st->work = ns_copy_node(nodes[k], st->cxt);
				st->next_seq = logs[i + k].seq + 1;
			}
			tree_free_node(nodes[k]);
		}
	}
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
			bucket_drop(NULL, st, *(uint64 *) lfirst(lc));
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
static LbState *
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
		bool		found;
		LbPage	   *lp;
		MemoryContext old;

		if (w != NULL)
		{
			LbPage	   *op = lb_page_find(st, w->page);

			/* the old working page is let go when no bucket needs it */
			if (op != NULL && op->refs == 0)
			{
				PageId		oldpage = w->page;

				ns_release(ns, oldpage);
				hash_search(st->pages, &oldpage, HASH_REMOVE, NULL);
			}
			tree_free_node(w);
		}
		old = MemoryContextSwitchTo(st->cxt);
		w = ns_new_node(ns, page, 0);
		MemoryContextSwitchTo(old);
		w->flags = LB_LOG_PAGE;
		w->link = st->next_seq++;
		st->work = w;
		lp = hash_search(st->pages, &page, HASH_ENTER, &found);
		Assert(!found);
		lp->seq = w->link;
		lp->refs = 0;
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

static LbRecord
make_begin(uint64 addr)
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
			report_bad_log_page(idx, b->pages[i], "A page of the bucket's list was not read.");
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
				if (k < 0)
					report_bad_log_page(idx, pg->page, "A delete record has no entry to remove.");
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
	if ((int32) out->nentries != b->live)
		report_bad_log_page(idx, b->pages[0],
							psprintf("Bucket " UINT64_FORMAT " replays to %u entries, but its table entry counts %d.",
									 addr, out->nentries, b->live));
	return out;
}

/*
 * readBucket for n buckets: the union of their lists (the working page
 * served from memory) is read with one ns_read_many, then each bucket is
 * replayed.  The read_leaves hook of the generic algorithms.
 */
static void
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
			report_bad_log_page(idx, pages[k], "A page of a bucket's list is not a log page.");
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
 * Is ref a bucket of the directory?  The region it names is followed down
 * the directory as a point would be, and must be a level-1 entry itself
 * (an empty bucket has no table entry, yet is one).  Regions that are no
 * bucket (a part or a union of buckets) and refs that name no region are
 * not.
 */
static bool
lb_leaf_exists(StructIndex *idx, int64 ref)
{
	uint64		addr;
	TreeNode   *node;

	if (ref >= 0 || ref == PG_INT64_MIN)
		return false;
	addr = LB_REF_ADDR(ref);
	if (gf_addr_len(addr) > GF_MAX_DEPTH)
		return false;
	(void) lb_state(idx);
	node = tree_read_root(idx);
	while (node->level >= 1)
	{
		int			slot = gf_locate(node, addr);

		idx->stats->entries_examined += node->nentries;
		if (slot < 0)
			return false;
		if (node->level == 1)
			return GfDirEntries(node)[slot].addr == addr;
		node = tree_read_child(idx, node, GfDirEntries(node)[slot].child);
	}
	return false;
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

/* The sub-directory (path[depth]) and slot of the bucket holding point. */
static int
locate_bucket(StructIndex *idx, uint64 point, PathStep *path)
{
	int			depth = gf_descend(idx, point, path, 1);
	TreeNode   *sub = path[depth].node;

	idx->stats->entries_examined += sub->nentries;
	path[depth].slot = gf_locate(sub, point);
	if (path[depth].slot < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" is corrupted at page " UINT64_FORMAT,
						idx->name, sub->page),
				 errdetail("No region of the sub-directory holds the point."),
				 errhint("Run festival.check('%s'), then rebuild the index with festival.build('%s').",
						 idx->name, idx->name)));
	return depth;
}

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
		group[n++] = make_begin(p->addr);
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
			bucket_begin(st, p->addr, page)->live = p->n;
	}
}

static void
lb_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	LbState    *st = lb_state(idx);
	PathStep	path[FEST_MAX_LEVELS];
	uint64		point = gf_point_admit(idx, box->xmin, box->ymin);
	int			depth = locate_bucket(idx, point, path);
	TreeNode   *sub = path[depth].node;
	int			slot = path[depth].slot;
	uint64		addr = GfDirEntries(sub)[slot].addr;
	LbBucket   *b = lb_btt_find(st, addr);
	LbRecord	rec;
	TreeNode   *bucket;
	uint64	   *keys;
	List	   *pieces = NIL;
	GfDirEntry *pe;
	uint64	   *pkeys;
	int			np;
	int			n;
	ListCell   *lc;
	int			k;

	rec.x = box->xmin;
	rec.y = box->ymin;
	rec.id = id;
	rec.tag = addr;

	if (b == NULL || b->live < (int32) st->gf.bucket_max)
	{
		/* not full: append, reading nothing (an empty bucket gets a marker) */
		LbRecord	recs[2];
		int			nr = 0;
		PageId		page;

		if (b == NULL)
			recs[nr++] = make_begin(addr);
		recs[nr++] = rec;
		page = lb_append(idx, st, recs, nr);
		if (b == NULL)
			b = bucket_begin(st, addr, page);
		else
			bucket_add_page(st, b, page);
		b->live++;
		return;
	}

	/* full: read it, split it by buddy halving, write it compacted */
	bucket = lb_read_bucket(idx, addr);
	LbRecords(bucket)[bucket->nentries++] = rec;
	n = (int) bucket->nentries;
	keys = palloc(n * sizeof(uint64));
	for (int i = 0; i < n; i++)
		keys[i] = gf_point_addr(&st->gf, LbRecords(bucket)[i].x, LbRecords(bucket)[i].y);
	gf_refuse_copies(idx, keys, n, point, rec.x, rec.y);
	gf_cut(addr, bucket->entries, keys, n, sizeof(LbRecord), st->gf.bucket_max, &pieces);
	Assert(list_length(pieces) >= 2);
	bucket_drop(idx, st, addr);
	write_group(idx, st, pieces);
	idx->stats->splits_leaf++;

	/* the sub-directory's entry gives way to the halves' */
	np = list_length(pieces);
	n = (int) sub->nentries + np - 1;
	pe = palloc(n * sizeof(GfDirEntry));
	pkeys = palloc(n * sizeof(uint64));
	memcpy(pe, GfDirEntries(sub), slot * sizeof(GfDirEntry));
	k = slot;
	foreach(lc, pieces)
	{
		GfPiece    *p = lfirst(lc);

		gf_fill_dir_entry(&st->gf, &pe[k++], p->addr, (PageId) LB_REF(p->addr));
	}
	memcpy(pe + k, GfDirEntries(sub) + slot + 1,
		   (sub->nentries - slot - 1) * sizeof(GfDirEntry));
	for (int i = 0; i < n; i++)
		pkeys[i] = pe[i].addr;
	if (n <= (int) st->gf.dir_max)
	{
		memcpy(sub->entries, pe, n * sizeof(GfDirEntry));
		sub->nentries = n;
		ns_write(idx->ns, sub, NS_WRITE_UPDATE);
		return;
	}
	gf_split_up(idx, path, depth, sub, (char *) pe, pkeys, n, sizeof(GfDirEntry));
}

/* ------------------------------------------------------------------ */
/* contains, deletion (Alg. 3)                                        */
/* ------------------------------------------------------------------ */

static int
find_record(const TreeNode *bucket, const LbRecord *rec)
{
	for (uint32 i = 0; i < bucket->nentries; i++)
		if (compare_record(&LbRecords(bucket)[i], rec) == 0)
			return (int) i;
	return -1;
}

static bool
lb_contains(StructIndex *idx, int64 id, const Mbr *box)
{
	LbState    *st = lb_state(idx);
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;
	LbRecord	rec;

	if (!mbr_is_point(box) || !gf_point_inside(&st->gf, box->xmin, box->ymin))
		return false;
	depth = locate_bucket(idx, gf_point_addr(&st->gf, box->xmin, box->ymin), path);
	rec.x = box->xmin;
	rec.y = box->ymin;
	rec.id = id;
	return find_record(lb_read_bucket(idx, GfDirEntries(path[depth].node)[path[depth].slot].addr),
					   &rec) >= 0;
}

/*
 * Merge the bucket at slot of sub with its buddy while it holds at most
 * the merge threshold, the buddy is a bucket of the same sub-directory and
 * both fit in one bucket: their content goes compacted under the parent
 * region.  True when anything merged.
 */
static bool
merge_buckets(StructIndex *idx, LbState *st, TreeNode *sub, int *slot)
{
	bool		merged = false;

	for (;;)
	{
		GfDirEntry *e = GfDirEntries(sub);
		uint64		a = e[*slot].addr;
		bool		high = (a & 1) != 0;
		int			bs = high ? *slot - 1 : *slot + 1;
		LbBucket   *b = lb_btt_find(st, a);
		LbBucket   *m;
		int32		live = b == NULL ? 0 : b->live;
		int32		mlive;
		int64		refs[2];
		TreeNode   *nodes[2];
		GfPiece		piece;
		List	   *pieces;

		if (live > (int32) st->gf.bucket_merge || a == GF_ROOT_ADDR ||
			bs < 0 || bs >= (int) sub->nentries || e[bs].addr != (a ^ 1))
			break;
		m = lb_btt_find(st, a ^ 1);
		mlive = m == NULL ? 0 : m->live;
		if (live + mlive > (int32) st->gf.bucket_max)
			break;
		refs[0] = LB_REF(a);
		refs[1] = LB_REF(a ^ 1);
		lb_read_leaves(idx, refs, 2, nodes);
		piece.addr = a >> 1;
		piece.n = (int) (nodes[0]->nentries + nodes[1]->nentries);
		piece.entries = palloc(Max(piece.n, 1) * sizeof(LbRecord));
		piece.keys = NULL;
		memcpy(piece.entries, nodes[0]->entries, nodes[0]->nentries * sizeof(LbRecord));
		memcpy(piece.entries + nodes[0]->nentries * sizeof(LbRecord), nodes[1]->entries,
			   nodes[1]->nentries * sizeof(LbRecord));
		bucket_drop(idx, st, a);
		bucket_drop(idx, st, a ^ 1);
		/* a marker even for an empty union: it ends both halves */
		if (piece.n == 0)
			(void) bucket_begin(st, piece.addr,
								lb_append(idx, st, (LbRecord[]) {make_begin(piece.addr)}, 1));
		else
		{
			pieces = list_make1(&piece);
			write_group(idx, st, pieces);
		}
		gf_fill_dir_entry(&st->gf, &e[*slot], a >> 1, (PageId) LB_REF(a >> 1));
		gf_remove_slot(sub, bs);
		if (high)
			(*slot)--;
		merged = true;
	}
	return merged;
}

static bool
lb_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	LbState    *st = lb_state(idx);
	PathStep	path[FEST_MAX_LEVELS];
	int			depth;
	TreeNode   *sub;
	uint64		addr;
	LbBucket   *b;
	LbRecord	rec;
	bool		changed;

	if (!mbr_is_point(box) || !gf_point_inside(&st->gf, box->xmin, box->ymin))
		return false;
	depth = locate_bucket(idx, gf_point_addr(&st->gf, box->xmin, box->ymin), path);
	sub = path[depth].node;
	addr = GfDirEntries(sub)[path[depth].slot].addr;
	b = lb_btt_find(st, addr);
	rec.x = box->xmin;
	rec.y = box->ymin;
	rec.id = id;
	if (b == NULL || b->live == 0 || find_record(lb_read_bucket(idx, addr), &rec) < 0)
		return false;

	rec.tag = addr | LB_DELETE;
	bucket_add_page(st, b, lb_append(idx, st, &rec, 1));
	b->live--;

	changed = merge_buckets(idx, st, sub, &path[depth].slot);
	if (changed)
		gf_merge_up(idx, path, depth, true, 1);
	return true;
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
static bool
lb_recover(StructIndex *idx)
{
	LbState    *st = (LbState *) idx->state;
	NodeStore  *ns = idx->ns;
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "lbgrid recovery",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	HTAB	   *inner;
	GfDirEntry *entries;
	uint64	   *keys;
	int			n = 0,
				max = 64;
	int			level = 1;
	int64		total = 0;
	HASH_SEQ_STATUS seq;
	LbBucket   *b;
	uint64		npages = ns->meta->page_count;

	if (!lb_load(idx, st, true))
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
	for (;;)
	{
		List	   *pieces = NIL;
		ListCell   *lc;
		GfDirEntry *up;
		int			k = 0;

		keys = palloc(n * sizeof(uint64));
		for (int i = 0; i < n; i++)
			keys[i] = entries[i].addr;
		gf_cut(GF_ROOT_ADDR, (char *) entries, keys, n, sizeof(GfDirEntry),
			   st->gf.dir_max, &pieces);
		up = palloc(list_length(pieces) * sizeof(GfDirEntry));
		foreach(lc, pieces)
		{
			GfPiece    *p = lfirst(lc);
			TreeNode   *node = ns_new_node(ns, ns_alloc(ns, level), level);

			memcpy(node->entries, p->entries, p->n * sizeof(GfDirEntry));
			node->nentries = p->n;
			ns_write(ns, node, NS_WRITE_NEW);
			gf_fill_dir_entry(&st->gf, &up[k++], p->addr, node->page);
		}
		if (k == 1)
		{
			ns_set_root(ns, (PageId) up[0].child, level + 1);
			break;
		}
		entries = up;
		n = k;
		level++;
	}

	hash_seq_init(&seq, st->btt);
	while ((b = hash_seq_search(&seq)) != NULL)
		total += b->live;
	ns->meta->entry_count = (uint64) total;
	ns->meta->flags |= FEST_META_ENTRIES_VALID;
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

static void
lb_init_empty(StructIndex *idx)
{
	LbState    *st = (LbState *) idx->state;
	TreeNode   *root = ns_new_node(idx->ns, ns_alloc(idx->ns, 1), 1);

	/* a root sub-directory whose one region is the empty bucket 1 */
	gf_fill_dir_entry(&st->gf, GfDirEntries(root), GF_ROOT_ADDR, (PageId) LB_REF(GF_ROOT_ADDR));
	root->nentries = 1;
	ns_write(idx->ns, root, NS_WRITE_NEW);
	ns_set_root(idx->ns, root->page, 2);
	btt_reset(st);
	st->loaded = true;			/* an empty index's table is empty */
}

static void *
lb_setup(const FestConfig *config, uint32 page_size)
{
	LbState    *st = palloc0(sizeof(LbState));
	LbOptions	o;

	OPTIONS_FILL(config, lb_options, &o);
	st->page_records = (page_size - FEST_PAGE_HEADER_SIZE) / sizeof(LbRecord);
	gf_state_fill(&st->gf, config, page_size, &o.extent,
				  st->page_records - 3, (int) o.max_fill, (int) o.merge_fill,
				  o.range_algorithm == GF_RANGE_P_RQ, o.knn_prefetch);
	st->cxt = AllocSetContextCreate(CurrentMemoryContext, "lbgrid bucket table",
									ALLOCSET_DEFAULT_SIZES);
	st->loaded = false;
	st->btt = NULL;
	return st;
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

static void
lb_describe(StructIndex *idx, JsonbParseState **state)
{
	LbState    *st = (LbState *) idx->state;

	jb_int(state, "bucket_max_entries", st->gf.bucket_max);
	jb_int(state, "directory_max_entries", st->gf.dir_max);
	jb_int(state, "bucket_merge_at_most", st->gf.bucket_merge);
	jb_int(state, "directory_merge_at_most", st->gf.dir_merge);
	jb_int(state, "log_records_per_page", st->page_records);
	jb_int(state, "log_record_bytes", sizeof(LbRecord));
	jb_int(state, "directory_entry_bytes", sizeof(GfDirEntry));
	jb_int(state, "grid_bits_per_axis", GF_AXIS_BITS);
	jb_bool(state, "batched_range_queries", st->gf.batched_range);
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
	.knn = gf_knn,
	.check = lb_check,
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
