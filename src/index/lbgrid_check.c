/*-------------------------------------------------------------------------
 *
 * lbgrid_check.c
 *	  festival.check() of an LB-Grid: the directory as for GFFM, every
 *	  bucket's replay, the bucket table against the directory and against a
 *	  fresh replay of the log pages, and the log pages' reference counts.
 *
 * IDENTIFICATION
 *	  src/index/lbgrid_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/lbgrid.h"

#include "utils/memutils.h"

typedef struct LbCheck
{
	StructIndex *idx;
	LbState    *st;
	HTAB	   *seen;			/* buckets met in the directory */
} LbCheck;

static void
check_bucket(void *arg, CheckReport *report, int64 ref, uint64 region)
{
	LbCheck    *c = arg;
	LbState    *st = c->st;
	LbBucket   *b;
	TreeNode   *node;
	bool		found;
	MemoryContext cxt = CurrentMemoryContext;

	if (ref != LB_REF(region))
	{
		check_error(report, -1, "the sub-directory entry of region " UINT64_FORMAT " names bucket " INT64_FORMAT,
					region, -ref);
		return;
	}
	(void) hash_search(c->seen, &region, HASH_ENTER, &found);
	if (found)
	{
		check_error(report, -1, "bucket " UINT64_FORMAT " appears twice in the directory", region);
		return;
	}
	b = lb_btt_find(st, region);
	if (b == NULL)
		return;					/* empty, never written */
	if (b->live < 0 || b->live > (int32) st->gf.bucket_max)
		check_error(report, -1, "bucket " UINT64_FORMAT " holds %d points, outside 0 .. its capacity %u",
					region, b->live, st->gf.bucket_max);
	PG_TRY();
	{
		node = lb_read_bucket(c->idx, region);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		check_error(report, -1, "bucket " UINT64_FORMAT " does not replay cleanly", region);
		node = NULL;
	}
	PG_END_TRY();
	if (node == NULL)
		return;
	report->leaf_entries += node->nentries;
	for (uint32 i = 0; i < node->nentries; i++)
		(void) gf_check_point(report, &st->gf, (int64) b->pages[0], i,
							  LbRecords(node)[i].x, LbRecords(node)[i].y,
							  LbRecords(node)[i].id, region);
}

/* The BTT equals a fresh replay of the log pages. */
static void
check_btt_against_log(StructIndex *idx, LbState *st, CheckReport *report)
{
	LbState		fresh = *st;
	HASH_SEQ_STATUS seq;
	LbBucket   *b;
	MemoryContext cxt = CurrentMemoryContext;

	fresh.cxt = AllocSetContextCreate(CurrentMemoryContext, "lbgrid check",
									  ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		(void) lb_load(idx, &fresh, false);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		check_error(report, -1, "the log pages cannot be replayed");
		MemoryContextDelete(fresh.cxt);
		return;
	}
	PG_END_TRY();
	if (hash_get_num_entries(fresh.btt) != hash_get_num_entries(st->btt))
		check_error(report, -1, "the bucket table has %ld buckets, a replay of the log pages %ld",
					hash_get_num_entries(st->btt), hash_get_num_entries(fresh.btt));
	hash_seq_init(&seq, st->btt);
	while ((b = hash_seq_search(&seq)) != NULL)
	{
		LbBucket   *f = lb_btt_find(&fresh, b->addr);

		/*
		 * A replay of the log pages counts each delete record; deletes
		 * appended without reading (Alg. 3) may have found nothing, and a
		 * bucket replayed since knows its exact count: at least the log's
		 * count, at most that plus its unchecked deletes.
		 */
		if (f == NULL || f->npages != b->npages ||
			memcmp(f->pages, b->pages, b->npages * sizeof(PageId)) != 0 ||
			(st->delete_reads ? f->live != b->live
			 : (b->live < f->live || b->live + b->unverified > f->live + f->unverified)))
			check_error(report, -1, "bucket " UINT64_FORMAT " of the bucket table differs from a replay of the log pages",
						b->addr);
	}
	hash_seq_init(&seq, fresh.btt);
	while ((b = hash_seq_search(&seq)) != NULL)
		if (lb_btt_find(st, b->addr) == NULL)
			check_error(report, (int64) b->pages[0], "a replay of the log pages has bucket " UINT64_FORMAT ", the bucket table has not",
						b->addr);
	MemoryContextDelete(fresh.cxt);
}

/*
 * check() reports what it finds instead of failing: a bucket table that
 * cannot be loaded from the log pages is one error row, and nothing else
 * of the structure can be checked without it (the file checks follow).
 */
static bool
lb_check_load(StructIndex *idx, LbState *st, CheckReport *report)
{
	MemoryContext cxt = CurrentMemoryContext;

	if (st->loaded)
		return true;
	PG_TRY();
	{
		(void) lb_load(idx, st, false);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		check_error(report, -1, "the bucket table cannot be loaded from the log pages: %s%s%s",
					edata->message, edata->detail ? ": " : "", edata->detail ? edata->detail : "");
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return st->loaded;
}

void
lb_check(StructIndex *idx, CheckReport *report)
{
	LbState    *st = (LbState *) idx->state;
	LbCheck		c;
	HASHCTL		ctl;
	HASH_SEQ_STATUS seq;
	LbBucket   *b;
	LbPage	   *lp;
	HTAB	   *refs;

	if (!lb_check_load(idx, st, report))
		return;
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(uint64);
	ctl.hcxt = CurrentMemoryContext;
	c.idx = idx;
	c.st = st;
	c.seen = hash_create("lbgrid check buckets", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	if (!gf_check_walk(idx, report, check_bucket, &c))
		return;

	/* every bucket of the BTT is in the directory */
	hash_seq_init(&seq, st->btt);
	while ((b = hash_seq_search(&seq)) != NULL)
		if (hash_search(c.seen, &b->addr, HASH_FIND, NULL) == NULL)
			check_error(report, -1, "bucket " UINT64_FORMAT " of the bucket table is not in the directory",
						b->addr);

	/* reference counts: the lists holding each page */
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(PageId) + sizeof(int64);
	ctl.hcxt = CurrentMemoryContext;
	refs = hash_create("lbgrid check refs", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	hash_seq_init(&seq, st->btt);
	while ((b = hash_seq_search(&seq)) != NULL)
		for (int i = 0; i < b->npages; i++)
		{
			bool		found;
			char	   *e = hash_search(refs, &b->pages[i], HASH_ENTER, &found);

			if (!found)
				*(int64 *) (e + sizeof(PageId)) = 0;
			(*(int64 *) (e + sizeof(PageId)))++;
			if (i > 0 && lb_page_find(st, b->pages[i - 1]) != NULL &&
				lb_page_find(st, b->pages[i]) != NULL &&
				lb_page_find(st, b->pages[i - 1])->seq >= lb_page_find(st, b->pages[i])->seq)
				check_error(report, (int64) b->pages[i],
							"bucket " UINT64_FORMAT "'s list is not in log order", b->addr);
		}
	hash_seq_init(&seq, st->pages);
	while ((lp = hash_seq_search(&seq)) != NULL)
	{
		char	   *e = hash_search(refs, &lp->page, HASH_FIND, NULL);
		int64		count = e == NULL ? 0 : *(int64 *) (e + sizeof(PageId));

		if (count != lp->refs)
			check_error(report, (int64) lp->page,
						"log page has reference count %d, but " INT64_FORMAT " bucket lists hold it",
						lp->refs, count);
		if (count == 0 && (st->work == NULL || st->work->page != lp->page))
			check_error(report, (int64) lp->page, "log page is held by no bucket and not freed");
		if (!check_mark_reached(report, lp->page))
			check_error(report, (int64) lp->page, "log page reached twice");
	}
	hash_seq_init(&seq, refs);
	{
		PageId	   *pg;

		while ((pg = hash_seq_search(&seq)) != NULL)
			if (lb_page_find(st, *pg) == NULL)
				check_error(report, (int64) *pg, "a bucket's list holds a page that is not a log page");
	}
	check_btt_against_log(idx, st, report);
}
