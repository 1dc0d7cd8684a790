/*-------------------------------------------------------------------------
 *
 * batch_search.h
 *	  Many window searches in one traversal of any structure.
 *
 * IDENTIFICATION
 *	  src/index/batch_search.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_BATCH_SEARCH_H
#define FEST_BATCH_SEARCH_H

#include "index/structure.h"

extern void tree_search_batch(StructIndex *idx, const SearchSpec *specs,
							  int nspecs);

#endif							/* FEST_BATCH_SEARCH_H */
