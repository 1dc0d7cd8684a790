/*-------------------------------------------------------------------------
 *
 * replacement.c
 *	  LRU, HLRU, S2Q and 2Q over byte-sized entries.
 *
 * IDENTIFICATION
 *	  src/cache/replacement.c
 *
 *-------------------------------------------------------------------------
 */
#include "cache/replacement.h"

#include "utils/memutils.h"

const char *const replacement_option_choices[] = {"none", "lru", "hlru", "s2q", "2q", NULL};
const char *const *const replacement_policy_names = replacement_option_choices + 1;

Replacement *
replacement_create(ReplacementPolicy policy, int64 capacity, int a1in_percent,
				   int ghost_capacity, MemoryContext cxt)
{
	Replacement *r = MemoryContextAllocZero(cxt, sizeof(Replacement));
	HASHCTL		ctl;

	r->policy = policy;
	r->capacity = capacity;
	r->a1in_capacity = capacity * a1in_percent / 100;
	r->ghost_capacity = Max(ghost_capacity, 1);
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(CacheEntry);
	ctl.hcxt = cxt;
	r->map = hash_create("festival cache", 256, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	dlist_init(&r->am);
	dlist_init(&r->a1in);
	dlist_init(&r->ghosts);
	return r;
}

static CacheEntry *
find(Replacement *r, PageId page)
{
	return hash_search(r->map, &page, HASH_FIND, NULL);
}

static void
forget_entry(Replacement *r, CacheEntry *e)
{
	PageId		page = e->page;

	dlist_delete(&e->link);
	if (e->list == CACHE_GHOST)
		r->nghosts--;
	else
	{
		r->used -= e->bytes;
		if (e->list == CACHE_A1IN)
			r->a1in_used -= e->bytes;
	}
	hash_search(r->map, &page, HASH_REMOVE, NULL);
}

/* Remember a page id in the ghost FIFO, dropping the oldest ids. */
static void
add_ghost(Replacement *r, PageId page)
{
	bool		found;
	CacheEntry *e = hash_search(r->map, &page, HASH_ENTER, &found);

	Assert(!found);
	e->list = CACHE_GHOST;
	e->level = 0;
	e->bytes = 0;
	e->data = NULL;
	dlist_push_head(&r->ghosts, &e->link);
	r->nghosts++;
	while (r->nghosts > r->ghost_capacity)
		forget_entry(r, dlist_tail_element(CacheEntry, link, &r->ghosts));
}

/*
 * Evict one resident entry that a page of the given level may displace.
 * 2q takes the oldest first-timer (demoted to a ghost) while A1in, with
 * the incoming page's a1in_bytes counted, is over its share, and Am's
 * least recently used page otherwise; hlru only takes pages at the same
 * level or below.  Returns false if nothing may be evicted.
 */
static bool
evict_one(Replacement *r, uint16 level, int64 a1in_bytes, List **evicted)
{
	CacheEntry *victim = NULL;

	if (r->policy == REPL_2Q && !dlist_is_empty(&r->a1in) &&
		(r->a1in_used + a1in_bytes > r->a1in_capacity || dlist_is_empty(&r->am)))
		victim = dlist_tail_element(CacheEntry, link, &r->a1in);
	else if (r->policy == REPL_HLRU)
	{
		dlist_iter	it;

		dlist_reverse_foreach(it, &r->am)
		{
			CacheEntry *e = dlist_container(CacheEntry, link, it.cur);

			if (e->level <= level)
			{
				victim = e;
				break;
			}
		}
	}
	else if (!dlist_is_empty(&r->am))
		victim = dlist_tail_element(CacheEntry, link, &r->am);
	else if (!dlist_is_empty(&r->a1in))
		victim = dlist_tail_element(CacheEntry, link, &r->a1in);

	if (victim == NULL)
		return false;
	*evicted = lappend(*evicted, victim->data);
	{
		PageId		page = victim->page;
		bool		to_ghost = (victim->list == CACHE_A1IN);

		forget_entry(r, victim);
		if (to_ghost)
			add_ghost(r, page);
	}
	return true;
}

/*
 * hlru: whether the pages a page of this level may displace, with the
 * free bytes, make room for it.  Checked before evicting anything, so a
 * page that cannot be admitted costs the cache nothing.
 */
static bool
hlru_can_make_room(Replacement *r, int64 bytes, uint16 level)
{
	int64		room = r->capacity - r->used;
	dlist_iter	it;

	dlist_foreach(it, &r->am)
	{
		CacheEntry *e = dlist_container(CacheEntry, link, it.cur);

		if (room >= bytes)
			break;
		if (e->level <= level)
			room += e->bytes;
	}
	return room >= bytes;
}

/* A resident page's payload (a hit refreshes its recency), or NULL. */
void *
replacement_lookup(Replacement *r, PageId page)
{
	CacheEntry *e = find(r, page);

	if (e == NULL || e->list == CACHE_GHOST)
		return NULL;
	if (e->list == CACHE_AM)
	{
		dlist_delete(&e->link);
		dlist_push_head(&r->am, &e->link);
	}
	/* a hit in A1in leaves the FIFO order alone (2Q) */
	return e->data;
}

/* Is page resident?  Unlike a lookup, no replacement order changes. */
bool
replacement_contains(Replacement *r, PageId page)
{
	CacheEntry *e = find(r, page);

	return e != NULL && e->list != CACHE_GHOST;
}

/*
 * Offer a page that missed.  Returns true if it was admitted (the cache
 * then owns data); payloads evicted to make room are appended to
 * *evicted.  force skips the first-time filters of s2q and 2q (used for
 * pages known to be wanted again, eFIND's pre-caching at flushes).
 */
bool
replacement_admit(Replacement *r, PageId page, int64 bytes, uint16 level,
				  void *data, bool force, List **evicted)
{
	CacheEntry *e = find(r, page);
	CacheList	target = CACHE_AM;
	bool		found;

	if (e != NULL && e->list != CACHE_GHOST)
		elog(ERROR, "page " UINT64_FORMAT " is already cached", page);
	if (bytes > r->capacity)
		return false;

	if (!force)
	{
		if (r->policy == REPL_S2Q && e == NULL)
		{
			add_ghost(r, page);	/* first miss: remember only */
			return false;
		}
		if (r->policy == REPL_2Q && e == NULL)
			target = CACHE_A1IN;
	}
	if (r->policy == REPL_HLRU && !hlru_can_make_room(r, bytes, level))
		return false;
	if (e != NULL)
		forget_entry(r, e);		/* a ghost comes back */

	while (r->used + bytes > r->capacity)
		if (!evict_one(r, level, target == CACHE_A1IN ? bytes : 0, evicted))
			elog(ERROR, "cache could not make room for page " UINT64_FORMAT, page);

	e = hash_search(r->map, &page, HASH_ENTER, &found);
	e->list = target;
	e->level = level;
	e->bytes = bytes;
	e->data = data;
	r->used += bytes;
	if (target == CACHE_A1IN)
	{
		/*
		 * A1in may exceed its share while the cache has free room (2Q
		 * reclaims from A1in only when a page must go).
		 */
		r->a1in_used += bytes;
		dlist_push_head(&r->a1in, &e->link);
	}
	else
		dlist_push_head(&r->am, &e->link);
	return true;
}

/*
 * Replace the payload of a resident page (its stored version changed).
 * Returns false if the page is not resident; *old_data gets the previous
 * payload otherwise.  The page's recency is left alone.
 */
bool
replacement_update(Replacement *r, PageId page, int64 bytes, void *data,
				   void **old_data)
{
	CacheEntry *e = find(r, page);

	if (e == NULL || e->list == CACHE_GHOST)
		return false;
	*old_data = e->data;
	r->used += bytes - e->bytes;
	if (e->list == CACHE_A1IN)
		r->a1in_used += bytes - e->bytes;
	e->bytes = bytes;
	e->data = data;
	return true;
}

/* Drop a page (resident or remembered); returns its payload or NULL. */
void *
replacement_remove(Replacement *r, PageId page)
{
	CacheEntry *e = find(r, page);
	void	   *data;

	if (e == NULL)
		return NULL;
	data = e->data;
	forget_entry(r, e);
	return data;
}

int
replacement_resident(Replacement *r)
{
	return hash_get_num_entries(r->map) - r->nghosts;
}

/* Payloads of every resident page, least recently used first. */
List *
replacement_all(Replacement *r)
{
	List	   *all = NIL;
	dlist_iter	it;

	dlist_reverse_foreach(it, &r->a1in)
		all = lappend(all, dlist_container(CacheEntry, link, it.cur)->data);
	dlist_reverse_foreach(it, &r->am)
		all = lappend(all, dlist_container(CacheEntry, link, it.cur)->data);
	return all;
}

/* Forget every page, resident or remembered; returns the payloads. */
List *
replacement_clear(Replacement *r)
{
	List	   *payloads = NIL;
	HASH_SEQ_STATUS seq;
	CacheEntry *e;

	hash_seq_init(&seq, r->map);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->list != CACHE_GHOST)
			payloads = lappend(payloads, e->data);
		forget_entry(r, e);
	}
	Assert(r->used == 0 && r->a1in_used == 0 && r->nghosts == 0);
	return payloads;
}
