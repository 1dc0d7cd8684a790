/*-------------------------------------------------------------------------
 *
 * cache.h
 *	  The general-purpose page cache (options.cache), a PageIO decorator.
 *
 * IDENTIFICATION
 *	  src/buffer/cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_CACHE_H
#define FEST_CACHE_H

#include "buffer/replacement.h"
#include "device/pageio.h"
#include "index/options.h"

extern const OptionSpec cache_options[];
extern const OptionSpec cache_clru_options[];
extern bool cache_is_clru(const char *choice);
extern PageIO *cache_pageio_create(PageIO *below, ReplacementPolicy policy,
								   int64 capacity, int a1in_percent);
extern PageIO *cache_wrap(PageIO *below, const FestConfig *config);
extern void cache_validate(const FestConfig *config, uint32 page_size);

#endif							/* FEST_CACHE_H */
