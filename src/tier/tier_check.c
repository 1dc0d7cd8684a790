/*-------------------------------------------------------------------------
 *
 * tier_check.c
 *	  The tier part of festival.check(): every written page valid on exactly
 *	  the tier the map names, the capacity kept, the placement's rules, and
 *	  the write buffers' invariants (tier_buffer_check).
 *
 * IDENTIFICATION
 *	  src/tier/tier_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier_state.h"

static const char *const tier_names[] = {"slow", "fast"};

/*
 * Migrated since the last sync: the source copy is still valid, on purpose
 * (the map on disk still names it), until the next sync releases it.
 */
static bool
release_pending(const TierState *ts, PageId page)
{
	for (int i = 0; i < ts->nreleased; i++)
		if (ts->released[i] == page)
			return true;
	return false;
}

/*
 * The tier part of check(): every written page valid on exactly the tier
 * the map names, the capacity kept, and the placement's rules.
 */
void
tier_check(TierState *ts, uint64 npages, TierProblem problem, void *arg)
{
	char	   *buf = ts->scratch;

	tier_buffer_check(ts, problem, arg);
	if (ts->opt.capacity_pages > 0 && ts->nfast > (uint64) ts->opt.capacity_pages)
		problem(arg, -1, psprintf("the fast tier holds " UINT64_FORMAT " pages, more than its capacity of " INT64_FORMAT,
								  ts->nfast, ts->opt.capacity_pages));
	for (PageId page = 0; page < Max(npages, ts->nentries); page++)
	{
		uint8		e = page < ts->nentries ? ts->entry[page] : 0;
		int			tier = e & ENTRY_FAST;
		int			level = ENTRY_LEVEL(e);
		PageIORequest req = {page, buf};
		FestPageCheck c;

		/* not written through the router yet (a node store may buffer it) */
		if ((e & ENTRY_PRESENT) == 0)
			continue;
		tier_io(ts, tier, &req, 1, false);
		c = fest_page_verify(buf, ts->page_size, page, FestPageGetHeader(buf)->kind);
		if (c != FEST_PAGE_OK)
			problem(arg, page, psprintf("page " UINT64_FORMAT " is not valid on the %s tier the map names: %s",
										page, tier_names[tier], fest_page_check_message(c)));
		tier_io(ts, 1 - tier, &req, 1, false);
		c = fest_page_verify(buf, ts->page_size, page, FestPageGetHeader(buf)->kind);
		if (c == FEST_PAGE_OK && !release_pending(ts, page))
			problem(arg, page, psprintf("page " UINT64_FORMAT " has a second valid copy on the %s tier",
										page, tier_names[1 - tier]));
		if (page >= npages || level < 0 || ts->want[page] != WANT_NONE)
			continue;
		/* the placement's rules (a full capacity may keep pages slow) */
		if (ts->opt.placement == TIER_SINGLE && tier == TIER_FAST)
			problem(arg, page, psprintf("page " UINT64_FORMAT " is fast under placement \"single\"", page));
		if (ts->opt.capacity_pages == 0)
		{
			bool		want_fast = ts->opt.placement == TIER_ALL_FAST ||
				is_level_fast(ts, level);

			if (want_fast && tier != TIER_FAST)
				problem(arg, page, psprintf("node page " UINT64_FORMAT " at level %d is slow, but placement \"%s\" puts it on the fast tier",
											page, level, tier_placement_name(ts->opt.placement)));
			if (ts->opt.placement == TIER_LEVEL && !want_fast && tier == TIER_FAST)
				problem(arg, page, psprintf("node page " UINT64_FORMAT " at level %d is fast, but placement \"level\" keeps it slow",
											page, level));
		}
		if ((ts->opt.placement == TIER_HOT || ts->opt.placement == TIER_LEVEL_HOT) &&
			!is_level_fast(ts, level))
		{
			/* after a flush the fast pages are exactly the detector's hot set */
			HotPage    *p = hash_search(ts->hot.pages, &page, HASH_FIND, NULL);
			bool		hot = p != NULL && p->hot;

			if (hot && tier != TIER_FAST && ts->opt.capacity_pages == 0)
				problem(arg, page, psprintf("hot page " UINT64_FORMAT " is on the slow tier", page));
			if (!hot && tier == TIER_FAST)
				problem(arg, page, psprintf("page " UINT64_FORMAT " is fast but not hot", page));
		}
	}
}
