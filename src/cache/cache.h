/*-------------------------------------------------------------------------
 *
 * cache.h
 *	  The general-purpose page cache (options.cache), a PageIO decorator.
 *
 * IDENTIFICATION
 *	  src/cache/cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_CACHE_H
#define FEST_CACHE_H

#include "cache/replacement.h"
#include "device/pageio.h"
#include "options/options.h"

/*
 * The page cache's options (cache.c owns the tables), filled once when the
 * index is opened or created.
 */
typedef struct CacheOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	int			cache;			/* 0 none, 1.. the replacement policies, then clru */
	int64		cache_size;		/* bytes */
	int64		cache_a1in_percent;
	int64		cache_clru_pages;	/* clru only */
	int64		cache_directory_percent;	/* clru only */
} CacheOptions;

extern int	cache_option_tables(Jsonb *user, const OptionSpec **tables);
extern void cache_options_fill(const FestConfig *config, uint32 page_size,
							   CacheOptions *opts);
extern int64 cache_memory_bytes(const CacheOptions *opts);
extern PageIO *cache_pageio_create(PageIO *below, ReplacementPolicy policy,
								   int64 capacity, int a1in_percent);
extern PageIO *cache_wrap(PageIO *below, const CacheOptions *opts);

#endif							/* FEST_CACHE_H */
