/*-------------------------------------------------------------------------
 *
 * agrid.c
 *	  The adaptive grid file: LB-Grid (lbgrid.c) whose buckets each switch
 *	  between log mode (LB-Grid's logical buckets, Fevgas 2019, PhD thesis,
 *	  University of Thessaly, §3.4, Alg. 1-3) and in-place mode (GFFM's
 *	  bucket read, changed and rewritten, §3.3) from the bucket's recent
 *	  share of writes.  The thesis names such a grid file as future work
 *	  (its closing chapter: "a Grid File that combines GFFM and LB-Grid and
 *	  switches automatically between log mode and in-place mode"); this is
 *	  festival's design, not the thesis's.
 *
 * Why per bucket.  The two modes trade one cost for another on the same
 * unit: a write to a bucket in log mode reads nothing and appends one
 * record, a read of it reads every log page of its list; in place, a
 * write reads and rewrites the bucket's one page and a read reads that
 * page.  Which wins depends on that bucket's own mix of reads and writes,
 * and workloads are skewed in space (a hot insert region beside a region
 * only queried), so a bucket, not a region of many buckets, decides.
 * The counters cost 8 bytes of the bucket table's entry.
 *
 * On disk.  An in-place bucket is a log page of its own, flagged
 * LB_PLACE_PAGE besides LB_LOG_PAGE: its BEGIN marker, then only its
 * records (no delete records: it is always written compacted).  It keeps
 * the sequence number it was written with first when it is rewritten
 * (nothing else holds records of its bucket while it is in place, so no
 * later page needs ordering against it), and it is never the working
 * page.  Everything else is LB-Grid's: the log pages alone determine
 * every bucket, so the load, check() and the restore after a crash
 * (lb_recover) are LB-Grid's unchanged.  A bucket is in place exactly when
 * its list is one page flagged LB_PLACE_PAGE, so its mode is recorded by
 * what the pages hold and cannot disagree with them.
 *
 * Switching.  Each bucket counts its recent writes (inserts, deletes) and
 * reads (reads by queries), both halved when their sum reaches twice
 * mode_window.  With at least mode_window operations counted, a bucket in
 * log mode goes in place when writes are at most place_percent of them,
 * one in place goes to log mode when they are at least log_percent; in
 * between it stays (the hysteresis that keeps a bucket at the boundary
 * from flapping).  Queries never write (they run as read operations), so
 * a bucket switches at its next write, which is the write it decides
 * about:
 *	- log to place: the bucket is read (its list), the change applied and
 *	  its records written compacted into a fresh page with the next
 *	  sequence number (one page write: the BEGIN marker supersedes its
 *	  older records whether or not the pages holding them are freed);
 *	- place to log: the record is appended to the working page as LB-Grid
 *	  does; the bucket's list becomes its page and the working page (no
 *	  extra write);
 *	- in place: the page is read, changed and rewritten (one read, one
 *	  write, as GFFM).
 * A split (a full bucket) and a merge are LB-Grid's (one compacted group,
 * written whole or not at all); the new buckets start in log mode with
 * the recent operations of the bucket(s) they replace and switch at
 * their next write.  Every change is thus one write of one log page
 * besides the directory LB-Grid rebuilds from the buckets after a crash.
 *
 * IDENTIFICATION
 *	  src/index/agrid.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/lbgrid.h"

#include "stats/jsonbuild.h"
#include "utils/hsearch.h"

/* The switching thresholds (LbState.adaptive). */
typedef struct LbAdaptive
{
	int32		window;			/* operations counted before a switch */
	int32		log_percent;	/* writes at or above: to log mode */
	int32		place_percent;	/* writes at or below: in place */
	/* since the index was opened, for describe(): switches, rewrites */
	int64		to_place;
	int64		to_log;
	int64		rewrites;
} LbAdaptive;

static const OptionSpec ag_options[] = {
	LB_SHARED_OPTION_SPECS,
	{
		.name = "mode_window", .type = OPT_INT, .default_number = 8,
		.min = 1, .max = 100000,
		.description = "Operations (writes and query reads) of a bucket counted before it may switch mode; the counts are halved when they reach twice this.",
		.offset = offsetof(LbOptions, mode_window)
	},
	{
		.name = "log_percent", .type = OPT_INT, .default_number = 50,
		.min = 1, .max = 100,
		.description = "A bucket in place switches to log mode when writes are at least this percent of its recent operations.",
		.offset = offsetof(LbOptions, log_percent)
	},
	{
		.name = "place_percent", .type = OPT_INT, .default_number = 30,
		.min = 0, .max = 99,
		.description = "A bucket in log mode switches to in-place mode when writes are at most this percent of its recent operations (below log_percent: the band between keeps a bucket's mode).",
		.offset = offsetof(LbOptions, place_percent)
	},
	{0}
};

static const NodeOps ag_node_ops = {
	.structure = "agrid",
	.leaf_entry_size = sizeof(LbRecord),
	.internal_entry_size = sizeof(GfDirEntry),
	.compare_identity = gf_compare_identity,
	.entry_mbr = gf_entry_mbr,
	.entry_ref = gf_entry_ref,
	.level_flags = gf_level_flags
};

/* Is bucket b in place: its list one page flagged LB_PLACE_PAGE? */
static bool
ag_in_place(LbState *st, const LbBucket *b)
{
	LbPage	   *p;

	if (b == NULL || b->npages != 1)
		return false;
	p = lb_page_find(st, b->pages[0]);
	Assert(p != NULL);
	return p->place;
}

/* Count one operation of bucket b. */
static void
ag_note(const LbAdaptive *a, LbBucket *b, bool write)
{
	if (write)
		b->recent_writes++;
	else
		b->recent_reads++;
	if (b->recent_writes + b->recent_reads >= 2 * a->window)
	{
		b->recent_writes /= 2;
		b->recent_reads /= 2;
	}
}

/* Should bucket b (in place or not now) be in place, by its counts? */
static bool
ag_want_place(const LbAdaptive *a, const LbBucket *b, bool in_place)
{
	int32		total = b->recent_writes + b->recent_reads;
	int64		percent;

	if (total < a->window)
		return in_place;
	percent = (int64) b->recent_writes * 100 / total;
	if (in_place)
		return percent < a->log_percent;
	return percent <= a->place_percent;
}

/*
 * Write bucket addr in place: its records (bucket, as replayed, already
 * changed) compacted after its BEGIN marker into page, or into a fresh
 * page with the next sequence number when page is InvalidPageId (the
 * switch from log mode; the bucket's older pages are let go).
 */
static void
ag_write_place(StructIndex *idx, LbState *st, uint64 addr, const TreeNode *bucket,
			   PageId page)
{
	NodeStore  *ns = idx->ns;
	LbBucket   *b = lb_btt_find(st, addr);
	int			n = (int) bucket->nentries;
	TreeNode   *node;
	LbRecord   *recs;
	bool		fresh = page == InvalidPageId;

	Assert(b != NULL && n + 1 <= (int) st->page_records);
	if (fresh)
	{
		int32		writes = b->recent_writes,
					reads = b->recent_reads;
		uint64		seq = st->next_seq++;

		page = ns_alloc(ns, 0);
		node = ns_new_node(ns, page, 0);
		node->link = seq;
		(void) lb_page_register(st, page, seq, true);
		lb_bucket_drop(idx, st, addr);
		b = lb_bucket_begin(st, addr, page);
		b->recent_writes = writes;
		b->recent_reads = reads;
		st->adaptive->to_place++;
	}
	else
	{
		node = ns_new_node(ns, page, 0);
		node->link = lb_page_find(st, page)->seq;
		st->adaptive->rewrites++;
	}
	node->flags = LB_LOG_PAGE | LB_PLACE_PAGE;
	recs = LbRecords(node);
	recs[0] = lb_make_begin(addr);
	for (int i = 0; i < n; i++)
	{
		recs[1 + i] = LbRecords(bucket)[i];
		recs[1 + i].tag = addr;
	}
	node->nentries = (uint32) (n + 1);
	ns_write(ns, node, fresh ? NS_WRITE_NEW : NS_WRITE_UPDATE);
	b->live = n;
	b->unverified = 0;
}

/*
 * Bucket b, in place, goes to log mode: its next record is appended to
 * the working page, which must come after b's page in the log (a record
 * before its bucket's marker would be ignored by a replay), so a working
 * page older than b's page is retired first (the next append starts a
 * fresh one).
 */
static void
ag_leave_place(StructIndex *idx, LbState *st, const LbBucket *b)
{
	if (st->work != NULL && st->work->link < lb_page_find(st, b->pages[0])->seq)
		lb_retire_work(idx, st);
	st->adaptive->to_log++;
}

/*
 * Insert: in place when the bucket is (or should now be) in place and
 * not full, LB-Grid's Alg. 2 otherwise (an append, or a split).
 */
static void
ag_insert(StructIndex *idx, int64 id, const Mbr *box)
{
	LbState    *st = lb_state(idx);
	const LbAdaptive *a = st->adaptive;
	uint64		point = gf_point_admit(idx, box->xmin, box->ymin);
	GfLookup	lk;
	LbRecord	rec;
	LbBucket   *b;
	bool		in_place;

	gf_lookup(idx, point, false, &lk);
	rec.x = box->xmin;
	rec.y = box->ymin;
	rec.id = id;
	rec.tag = GfDirEntries(lk.subdir)[lk.slot].addr;
	b = lb_btt_find(st, rec.tag);
	in_place = ag_in_place(st, b);
	if (b != NULL)
	{
		ag_note(a, b, true);
		if (ag_want_place(a, b, in_place) && b->live < (int32) st->gf.bucket_max)
		{
			TreeNode   *bucket = lb_read_bucket(idx, rec.tag);

			/* the replay makes the count exact: still not full? */
			if (bucket->nentries < st->gf.bucket_max)
			{
				LbRecords(bucket)[bucket->nentries++] = rec;
				ag_write_place(idx, st, rec.tag, bucket,
							   in_place ? b->pages[0] : InvalidPageId);
				return;
			}
		}
		else if (in_place && b->live < (int32) st->gf.bucket_max)
			ag_leave_place(idx, st, b);
	}
	lb_insert_at(idx, st, &lk, &rec, point);
}

/*
 * Delete: in place (the bucket read, so an absent entry is refused and
 * every count stays exact) when the bucket is or should now be in place,
 * LB-Grid's Alg. 3 otherwise; then LB-Grid's merges.
 */
static bool
ag_remove(StructIndex *idx, int64 id, const Mbr *box)
{
	LbState    *st = lb_state(idx);
	GfLookup	lk;
	LbRecord	rec;
	LbBucket   *b;
	bool		in_place;

	if (!lb_locate(idx, id, box, &lk, &rec))
		return false;
	b = lb_btt_find(st, rec.tag);
	if (b == NULL || b->live + b->unverified == 0)
		return false;			/* an empty bucket: nothing to delete */
	in_place = ag_in_place(st, b);
	ag_note(st->adaptive, b, true);
	if (ag_want_place(st->adaptive, b, in_place))
	{
		TreeNode   *bucket = lb_read_bucket(idx, rec.tag);
		int			k = lb_find_record(bucket, &rec);

		if (k < 0)
			return false;
		LbRecords(bucket)[k] = LbRecords(bucket)[bucket->nentries - 1];
		bucket->nentries--;
		ag_write_place(idx, st, rec.tag, bucket, in_place ? b->pages[0] : InvalidPageId);
		lb_merge_after_delete(idx, st, &lk);
		return true;
	}
	if (in_place)
		ag_leave_place(idx, st, b);
	return lb_remove_at(idx, st, &lk, &rec);
}

/* Reads by queries: counted for each bucket, then LB-Grid's readBucket. */
static void
ag_read_leaves(StructIndex *idx, const int64 *refs, int n, TreeNode **out)
{
	LbState    *st = lb_state(idx);

	for (int i = 0; i < n; i++)
	{
		LbBucket   *b = lb_btt_find(st, LB_REF_ADDR(refs[i]));

		if (b != NULL)
			ag_note(st->adaptive, b, false);
	}
	lb_read_leaves(idx, refs, n, out);
}

/*
 * check(): LB-Grid's, then the modes: every page flagged in place is the
 * one page of one bucket's list, or the first of a bucket gone to log
 * mode since, holds that bucket's BEGIN marker and then only that
 * bucket's insert records (at most its capacity), and is not the working
 * page; the table's flag of each page is the page's.
 */
static void
ag_check(StructIndex *idx, CheckReport *report)
{
	LbState    *st = (LbState *) idx->state;
	HASHCTL		ctl;
	HTAB	   *holder;
	HASH_SEQ_STATUS seq;
	LbBucket   *b;
	LbPage	   *lp;

	lb_check(idx, report);
	if (!st->loaded)
		return;					/* reported by lb_check */

	/* the bucket holding each page flagged in place, and where */
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(PageId) + sizeof(uint64) + sizeof(int64);
	ctl.hcxt = CurrentMemoryContext;
	holder = hash_create("agrid check", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	hash_seq_init(&seq, st->btt);
	while ((b = hash_seq_search(&seq)) != NULL)
		for (int i = 0; i < b->npages; i++)
		{
			LbPage	   *p = lb_page_find(st, b->pages[i]);
			bool		found;
			char	   *e;

			if (p == NULL || !p->place)
				continue;
			e = hash_search(holder, &b->pages[i], HASH_ENTER, &found);
			if (found || i != 0)
				check_error(report, (int64) b->pages[i],
							"the in-place page of a bucket is in bucket " UINT64_FORMAT "'s list at position %d%s",
							b->addr, i, found ? ", and in another list" : "");
			*(uint64 *) (e + sizeof(PageId)) = b->addr;
		}

	hash_seq_init(&seq, st->pages);
	while ((lp = hash_seq_search(&seq)) != NULL)
	{
		TreeNode   *node;
		char	   *e;
		uint64		addr;
		bool		flagged;

		if (st->work != NULL && st->work->page == lp->page)
		{
			if (lp->place)
				check_error(report, (int64) lp->page, "the working log page is flagged as a bucket's in-place page");
			continue;
		}
		node = ns_read(idx->ns, lp->page);	/* the page, not its buckets */
		flagged = (node->flags & LB_PLACE_PAGE) != 0;
		if (flagged != lp->place)
			check_error(report, (int64) lp->page,
						"the bucket table takes the log page for %s, its flags say %s",
						lp->place ? "in place" : "a shared log page",
						flagged ? "in place" : "a shared log page");
		if (!flagged)
		{
			tree_free_node(node);
			continue;
		}
		e = hash_search(holder, &lp->page, HASH_FIND, NULL);
		addr = e == NULL ? 0 : *(uint64 *) (e + sizeof(PageId));
		if (e == NULL)
			check_error(report, (int64) lp->page, "an in-place page is held by no bucket");
		else if (node->nentries == 0 || !lb_is_begin(&LbRecords(node)[0]) ||
				 LbRecords(node)[0].tag != addr)
			check_error(report, (int64) lp->page,
						"the in-place page of bucket " UINT64_FORMAT " does not begin with its marker", addr);
		else if (node->nentries - 1 > st->gf.bucket_max)
			check_error(report, (int64) lp->page,
						"the in-place page of bucket " UINT64_FORMAT " holds %u points, over its capacity %u",
						addr, node->nentries - 1, st->gf.bucket_max);
		else
			for (uint32 r = 1; r < node->nentries; r++)
				if (LbRecords(node)[r].tag != addr || lb_is_begin(&LbRecords(node)[r]))
				{
					check_error(report, (int64) lp->page,
								"the in-place page of bucket " UINT64_FORMAT " holds a record that is not one of its points",
								addr);
					break;
				}
		tree_free_node(node);
	}
	hash_destroy(holder);
}

static void *
ag_setup(const FestConfig *config, uint32 page_size)
{
	LbOptions	o;
	LbState    *st = lb_setup_options(config, page_size, ag_options, &o);
	LbAdaptive *a;

	if (o.place_percent >= o.log_percent)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("place_percent (" INT64_FORMAT ") must be below log_percent (" INT64_FORMAT ")",
						o.place_percent, o.log_percent),
				 errhint("A bucket goes in place at or below place_percent writes and to log mode at or above log_percent; the band between keeps its mode.")));
	a = palloc0(sizeof(LbAdaptive));
	a->window = (int32) o.mode_window;
	a->log_percent = (int32) o.log_percent;
	a->place_percent = (int32) o.place_percent;
	st->adaptive = a;
	return st;
}

static void
ag_check_framework(const char *framework)
{
	if (strcmp(framework, "none") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("structure \"agrid\" does not work under framework \"%s\"", framework),
				 errdetail("The adaptive grid file keeps its buckets in LB-Grid's log pages (Fevgas 2019, §3.4), which survive a crash without a redo log; a bucket in log mode spans pages shared with other buckets, which FAST and eFIND cannot buffer as nodes."),
				 errhint("Use framework \"none\" with structure \"agrid\" (a cache such as \"clru\" may sit below it).")));
}

static void
ag_describe(StructIndex *idx, JsonbParseState **state)
{
	LbState    *st = (LbState *) idx->state;
	const LbAdaptive *a = st->adaptive;

	lb_describe(idx, state);
	jb_int(state, "mode_window", a->window);
	jb_int(state, "log_percent", a->log_percent);
	jb_int(state, "place_percent", a->place_percent);
	if (st->loaded)
	{
		HASH_SEQ_STATUS seq;
		LbBucket   *b;
		int64		in_place = 0;

		hash_seq_init(&seq, st->btt);
		while ((b = hash_seq_search(&seq)) != NULL)
			in_place += ag_in_place(st, b) ? 1 : 0;
		jb_int(state, "buckets_in_place", in_place);
		jb_int(state, "switches_to_place", a->to_place);
		jb_int(state, "switches_to_log", a->to_log);
		jb_int(state, "rewrites_in_place", a->rewrites);
	}
}

const StructureOps agrid_structure = {
	.name = "agrid",
	.description = "adaptive grid file: each bucket in log mode (LB-Grid) or in place (GFFM) by its recent writes, festival's own (Fevgas 2019 future work), points only",
	.options = ag_options,
	.node_ops = &ag_node_ops,
	.setup = ag_setup,
	.check_framework = ag_check_framework,
	.init_empty = lb_init_empty,
	.insert = ag_insert,
	.remove = ag_remove,
	.contains = lb_contains,
	.search = gf_search,
	.search_batch = gf_search_batch,
	.knn = gf_knn,
	.check = ag_check,
	.check_layout = gf_check_layout,
	.describe = ag_describe,
	.points_only = true,
	.needs_extent = true,
	.build_methods = NULL,
	.bulk_load = NULL,
	.entry_region = gf_entry_region,
	.read_leaves = ag_read_leaves,
	.leaf_exists = lb_leaf_exists,
	.recover = lb_recover
};
