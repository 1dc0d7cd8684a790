/*-------------------------------------------------------------------------
 *
 * clru.h
 *	  The flash-aware buffer manager of GFFM and LB-Grid (Fevgas 2019, PhD
 *	  thesis, University of Thessaly, §3.2, Algorithms 4 and 5): cache
 *	  policy 'clru'.
 *
 * Two partitions, directory pages (level >= 1) and data pages (level 0),
 * each a pair of LRU lists: the hot list holds recently used pages, clean
 * or dirty; the cold list holds dirty pages evicted from the hot list.
 * When the cold list must take a page while it is full and its least
 * recently used page is dirty, the whole cold list is written in one
 * batch (one submission) and its pages become clean; clean pages leave
 * the cold list one by one as room is needed.  A hit in the cold list
 * moves the page back to the hot list with its dirty state.
 *
 * The policy (Clru) only orders pages and tracks their dirty state; the
 * owner (the page cache below, or festival.cache_simulate) keeps the
 * payloads, writes the batches it is handed and frees dropped payloads.
 * The name is the thesis's CLRU; festival's 'hlru' is the height-aware
 * LRU, not the thesis's hot list.
 *
 * IDENTIFICATION
 *	  src/cache/clru.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_CLRU_H
#define FEST_CLRU_H

#include "festival.h"

#include "device/pageio.h"
#include "lib/ilist.h"
#include "nodes/pg_list.h"
#include "utils/hsearch.h"

#define CLRU_DIRECTORY	0
#define CLRU_DATA		1

typedef struct ClruEntry
{
	PageId		page;			/* hash key */
	uint8		part;			/* CLRU_DIRECTORY or CLRU_DATA */
	bool		cold;
	bool		dirty;
	void	   *data;			/* owner's payload */
	dlist_node	link;
} ClruEntry;

typedef struct Clru
{
	HTAB	   *map;			/* PageId -> ClruEntry */
	int64		hot_capacity[2];	/* pages */
	int64		cold_capacity;	/* pages, each partition */
	int64		nhot[2];
	int64		ncold[2];
	dlist_head	hot[2];			/* head = most recently used */
	dlist_head	cold[2];
} Clru;

/*
 * What an access did besides the access: payloads to write together now
 * (they stay cached, clean) and payloads that left the cache (clean).
 */
typedef struct ClruEffects
{
	List	   *batch;
	List	   *dropped;
} ClruEffects;

extern Clru *clru_create(int64 hot_directory, int64 hot_data, int64 cold,
						 MemoryContext cxt);
extern void *clru_access(Clru *c, PageId page, bool write, ClruEffects *fx);
extern void clru_insert(Clru *c, PageId page, uint16 level, bool dirty, void *data,
						ClruEffects *fx);
extern void *clru_remove(Clru *c, PageId page);
extern bool clru_is_dirty(Clru *c, PageId page);
extern List *clru_take_dirty(Clru *c);
extern List *clru_all(Clru *c);

/* the page cache under policy clru (cache.c chooses it) */
extern void clru_split_capacity(int64 pages, int64 cold, int64 directory_percent,
								int64 *hot_directory, int64 *hot_data);
extern PageIO *clru_pageio_create(PageIO *below, int64 capacity_bytes, int64 cold_pages,
								  int64 directory_percent);

#endif							/* FEST_CLRU_H */
