/*-------------------------------------------------------------------------
 *
 * tier_hot.c
 *	  The hot-page model of Fevgas 2019 (PhD thesis, University of
 *	  Thessaly), Alg. 9 HybridBucketDetect, on its own so that it can be
 *	  tested with hand-computed sequences (festival.tier_hot_simulate); the
 *	  observer (tier_observer.c) runs it on every node page read.
 *
 * Time is a logical clock of observed accesses; F is normalised by the
 * largest count of the same level; the moving average is cumulative, one
 * per level.  A page whose weight exceeds s times its level's average,
 * and whose parent is hot, becomes hot; with a capacity, the least
 * recently used hot page that is no hot page's parent is demoted first.
 * hot_model_cool takes the hot pages idle too long out of the hot set
 * (option cool_after, run at a flush by tier_router.c); hot_model_epoch_end
 * re-sets s at the end of an epoch (hot_selectivity_tuning auto, run by
 * the observer, tier_observer.c).
 *
 * IDENTIFICATION
 *	  src/tier/tier_hot.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier.h"

#include "format/page.h"

void
hot_model_init(HotModel *m, double selectivity, int64 capacity, MemoryContext cxt)
{
	HASHCTL		ctl;

	memset(m, 0, sizeof(HotModel));
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(HotPage);
	ctl.hcxt = cxt;
	m->pages = hash_create("festival hot pages", 256, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	m->selectivity = selectivity;
	m->selectivity_start = selectivity;
	m->capacity = capacity;
}

/*
 * Forget the pages from first on, which a truncation removed from the file
 * (a rebuild empties it, a failed commit cuts off the pages it added): a
 * page of that number written later is another node.  Cut down to the
 * meta pages, the file holds no tree any more, and the model starts over.
 */
void
hot_model_forget_from(HotModel *m, PageId first)
{
	HASH_SEQ_STATUS seq;
	HotPage    *p;

	hash_seq_init(&seq, m->pages);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		if (p->page < first)
			continue;
		if (p->hot)
			m->nhot--;
		(void) hash_search(m->pages, &p->page, HASH_REMOVE, NULL);
	}
	if (first <= FEST_FIRST_DATA_PAGE)
	{
		Assert(m->nhot == 0);
		m->clock = 0;
		m->epoch_demotions = 0;
		m->selectivity = m->selectivity_start;
		memset(m->max_count, 0, sizeof(m->max_count));
		memset(m->wsum, 0, sizeof(m->wsum));
		memset(m->wn, 0, sizeof(m->wn));
	}
}

/* The pages that are a hot page's parent (a set, in the current context). */
static HTAB *
hot_parents(HotModel *m)
{
	HASH_SEQ_STATUS seq;
	HotPage    *p;
	HASHCTL		ctl;
	HTAB	   *parents;

	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(PageId);
	ctl.hcxt = CurrentMemoryContext;
	parents = hash_create("festival hot parents", 64, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	hash_seq_init(&seq, m->pages);
	while ((p = hash_seq_search(&seq)) != NULL)
		if (p->hot && p->parent != InvalidPageId)
			(void) hash_search(parents, &p->parent, HASH_ENTER, NULL);
	return parents;
}

/*
 * The demotion victim: the least recently accessed hot page among those
 * that are no hot page's parent (so that the rule "a page is fast only
 * when its parent is" survives demotion); never keep.  LRU rather than
 * lowest weight: a weight is only refreshed when its page is accessed, so
 * the pages of a hot set that has moved on keep their old, high weights
 * and would never leave.
 */
static HotPage *
coldest(HotModel *m, PageId keep)
{
	HASH_SEQ_STATUS seq;
	HotPage    *p;
	HotPage    *best = NULL;
	HTAB	   *parents = hot_parents(m);

	hash_seq_init(&seq, m->pages);
	while ((p = hash_seq_search(&seq)) != NULL)
		if (p->hot && p->page != keep &&
			hash_search(parents, &p->page, HASH_FIND, NULL) == NULL &&
			(best == NULL || p->last < best->last))
			best = p;
	hash_destroy(parents);
	return best;
}

/*
 * One access to page at level, whose parent is parent (InvalidPageId: a
 * root).  Eq. 4.1/4.2 generalised to any number of levels:
 *	W = W(parent) + F - (T - t) / T
 * with F = count / max count at this level, T the clock after this access
 * and t the clock of the previous access (0: never, so the penalty is 1).
 * The level's cumulative sum counts every evaluated page (step 2 of Alg. 9
 * comes before the parent test).  parent_fast says whether the parent is
 * on the fast tier for a reason other than this model (level_hot).
 */
HotStep
hot_model_access(HotModel *m, PageId page, int level, PageId parent,
				 bool parent_fast)
{
	HotStep		step = {0, 0, false, false, InvalidPageId};
	HotPage    *p;
	HotPage    *par = NULL;
	bool		found;
	double		f;
	double		penalty;

	Assert(level >= 0 && level < FEST_MAX_LEVELS);
	m->clock++;
	p = hash_search(m->pages, &page, HASH_ENTER, &found);
	if (!found)
	{
		p->count = 0;
		p->last = 0;
		p->weight = 0;
		p->hot = false;
	}
	p->count++;
	p->parent = parent;
	if (p->count > m->max_count[level])
		m->max_count[level] = p->count;
	f = (double) p->count / (double) m->max_count[level];
	penalty = (double) (m->clock - p->last) / (double) m->clock;
	if (parent != InvalidPageId)
		par = hash_search(m->pages, &parent, HASH_FIND, NULL);
	step.weight = (par != NULL ? par->weight : 0) + f - penalty;
	p->weight = step.weight;
	p->last = m->clock;

	m->wsum[level] += step.weight;
	m->wn[level]++;
	step.average = m->wsum[level] / (double) m->wn[level];
	step.eligible = parent == InvalidPageId || parent_fast ||
		(par != NULL && par->hot);
	if (p->hot || !step.eligible)
		return step;
	if (step.weight > m->selectivity * step.average)
	{
		if (m->capacity > 0 && m->nhot >= m->capacity)
		{
			HotPage    *victim = coldest(m, page);

			/* every hot page is some hot page's parent: nothing can go */
			if (victim == NULL)
				return step;
			victim->hot = false;
			m->nhot--;
			m->epoch_demotions++;
			step.demoted = victim->page;
		}
		p->hot = true;
		m->nhot++;
		step.promoted = true;
	}
	return step;
}

/*
 * Time-based cooling (beyond the seeds; Fevgas 2019, §4.5, leaves cooling to
 * future work): every hot page whose last access is more than idle accesses
 * of the clock ago leaves the hot set.  A page that is a hot page's parent
 * stays while that child is hot (the rule "fast only when the parent is"),
 * so children cool first and their parents in the next pass.  The pages
 * cooled are returned in a palloc'd array (*cooled, in the current memory
 * context), their number as the result.
 */
int
hot_model_cool(HotModel *m, int64 idle, PageId **cooled)
{
	int			n = 0;
	int			cap = 16;
	bool		changed = true;

	*cooled = palloc(sizeof(PageId) * cap);
	if (idle <= 0)
		return 0;
	while (changed)
	{
		HASH_SEQ_STATUS seq;
		HotPage    *p;
		HTAB	   *parents = hot_parents(m);

		changed = false;
		hash_seq_init(&seq, m->pages);
		while ((p = hash_seq_search(&seq)) != NULL)
		{
			if (!p->hot || m->clock - p->last <= idle ||
				hash_search(parents, &p->page, HASH_FIND, NULL) != NULL)
				continue;
			p->hot = false;
			m->nhot--;
			if (n == cap)
			{
				cap *= 2;
				*cooled = repalloc(*cooled, sizeof(PageId) * cap);
			}
			(*cooled)[n++] = p->page;
			changed = true;
		}
		hash_destroy(parents);
	}
	return n;
}

/*
 * hot_selectivity_tuning auto (beyond the seeds; Fevgas 2019, §4.5, leaves
 * tuning s to future work): the end of an epoch of HOT_TUNE_EPOCH
 * accesses of the clock, under either setting of hot_selectivity_tuning
 * (the epoch's demotions start again from 0, so that they mean the same in
 * both); tune (auto) re-sets s first.  The rule steers the hot set by the fast tier's
 * room, one HOT_TUNE_STEP per epoch within the thesis's range of s:
 *
 *	- the fast tier is full and promotions demoted hot pages in the epoch
 *	  (each such swap costs two migrations): s rises, so that only pages
 *	  clearly hotter than the level's average displace others;
 *	- there is room (no capacity, or fewer hot pages than three quarters
 *	  of it): s falls, so that more of the pages the detector ranks high
 *	  become fast; without a capacity a fast page has no opportunity cost
 *	  and s settles at HOT_TUNE_MIN;
 *	- otherwise (between three quarters full and full, no demotion: the
 *	  hysteresis band) s stays.
 *
 * Time is the model's clock, so the rule is deterministic and, with the
 * epoch's demotions saved in the weights file (tier_weights.c), a workload
 * split by a close tunes as it would in one piece.
 */
void
hot_model_epoch_end(HotModel *m, bool tune)
{
	Assert(m->clock > 0 && m->clock % HOT_TUNE_EPOCH == 0);
	if (tune)
	{
		if (m->capacity > 0 && m->epoch_demotions > 0)
			m->selectivity = Min(HOT_TUNE_MAX, m->selectivity + HOT_TUNE_STEP);
		else if (m->capacity == 0 || m->nhot < (3 * m->capacity) / 4)
			m->selectivity = Max(HOT_TUNE_MIN, m->selectivity - HOT_TUNE_STEP);
	}
	m->epoch_demotions = 0;
}
