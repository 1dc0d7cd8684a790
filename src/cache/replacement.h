/*-------------------------------------------------------------------------
 *
 * replacement.h
 *	  Replacement policies of byte-sized caches: LRU, HLRU, S2Q, 2Q.
 *
 * Used by eFIND's read buffer (stored versions of nodes) and by the
 * general-purpose page cache below any node store.  A cache holds entries
 * keyed by page, each with a size in bytes, a tree level and an opaque
 * payload the owner manages; the policy decides what to admit and what to
 * evict, and hands evicted payloads back to the owner.
 *
 *	lru		least recently used.
 *	hlru	height-aware LRU: a page may only evict pages at its own level or
 *			below (the least recently used of those); a page that cannot make
 *			room is not admitted and evicts nothing, so upper levels stay.
 *	s2q		simplified 2Q (Johnson and Shasha 1994): a page is admitted on
 *			its second miss; a FIFO of page ids ("A1") remembers first
 *			misses; admitted pages form an LRU ("Am").  eFIND's read buffer
 *			uses its read queue as A1 and admits with force (nodestore/efind.c).
 *	2q		full 2Q: first-time pages enter a FIFO ("A1in"); pages leaving
 *			it are remembered by id ("A1out"); a miss on a remembered page
 *			admits it to the LRU ("Am").  A page is reclaimed only when the
 *			cache is full: from A1in while A1in, the newcomer counted, is
 *			over its share of the bytes, from Am otherwise, so one page in
 *			costs at most one page out.
 *
 * IDENTIFICATION
 *	  src/cache/replacement.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_REPLACEMENT_H
#define FEST_REPLACEMENT_H

#include "festival.h"

#include "lib/ilist.h"
#include "nodes/pg_list.h"
#include "utils/hsearch.h"

typedef enum ReplacementPolicy
{
	REPL_LRU,
	REPL_HLRU,
	REPL_S2Q,
	REPL_2Q
} ReplacementPolicy;

/*
 * The choices of an option naming a replacement policy (options cache and
 * read_buffer_policy): "none", then the policies in enum order, so that
 * choice i > 0 is policy i - 1.  replacement_policy_names is the same list
 * without "none".
 */
extern const char *const replacement_option_choices[];
extern const char *const *const replacement_policy_names;

static inline ReplacementPolicy
replacement_policy_of_choice(int choice)
{
	Assert(choice > 0);
	return (ReplacementPolicy) (choice - 1);
}

typedef enum CacheList
{
	CACHE_AM,					/* resident, LRU order (lru, hlru: the only list) */
	CACHE_A1IN,					/* resident, FIFO (2q) */
	CACHE_GHOST					/* not resident, id only (s2q's A1, 2q's A1out) */
} CacheList;

typedef struct CacheEntry
{
	PageId		page;			/* hash key */
	CacheList	list;
	uint16		level;
	int64		bytes;
	void	   *data;			/* owner's payload; NULL for ghosts */
	dlist_node	link;
} CacheEntry;

typedef struct Replacement
{
	ReplacementPolicy policy;
	int64		capacity;		/* bytes of resident entries */
	int64		used;
	int64		a1in_capacity;	/* 2q: bytes of A1in */
	int64		a1in_used;
	int			ghost_capacity; /* page ids remembered (s2q, 2q) */
	int			nghosts;
	HTAB	   *map;			/* PageId -> CacheEntry */
	dlist_head	am;				/* head = most recently used */
	dlist_head	a1in;			/* head = newest */
	dlist_head	ghosts;			/* head = newest */
} Replacement;

extern Replacement *replacement_create(ReplacementPolicy policy, int64 capacity,
									   int a1in_percent, int ghost_capacity,
									   MemoryContext cxt);
extern void *replacement_lookup(Replacement *r, PageId page);
extern bool replacement_admit(Replacement *r, PageId page, int64 bytes,
							  uint16 level, void *data, bool force,
							  List **evicted);
extern bool replacement_update(Replacement *r, PageId page, int64 bytes, void *data,
							   void **old_data);
extern void *replacement_remove(Replacement *r, PageId page);
extern bool replacement_contains(Replacement *r, PageId page);
extern int	replacement_resident(Replacement *r);
extern List *replacement_all(Replacement *r);
extern List *replacement_clear(Replacement *r);

#endif							/* FEST_REPLACEMENT_H */
