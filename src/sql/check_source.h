/*-------------------------------------------------------------------------
 *
 * check_source.h
 *	  festival.check()'s comparison of an index with its source table.
 *
 * IDENTIFICATION
 *	  src/sql/check_source.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_CHECK_SOURCE_H
#define FEST_CHECK_SOURCE_H

#include "sql/handle.h"
#include "index/check.h"

/*
 * Report every difference between the index's (id, MBR) entries and its
 * source's rows with a geometry; with tree_sound false (the structure's
 * walk found errors, so a search may not reach every entry) only the
 * counts.  Nothing for an index without a source.
 */
extern void check_source(OpenIndex *ix, CheckReport *report, bool tree_sound);

#endif							/* FEST_CHECK_SOURCE_H */
