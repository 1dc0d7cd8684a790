/*-------------------------------------------------------------------------
 *
 * progress.h
 *	  Progress of long operations: notices every festival.progress_interval
 *	  and the festival.progress view (progress.c).
 *
 * IDENTIFICATION
 *	  src/sql/progress.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_SQL_PROGRESS_H
#define FEST_SQL_PROGRESS_H

#include "stats/progress.h"

struct OpenIndex;

extern void progress_shmem_register(void);
extern Progress *ix_progress_begin(struct OpenIndex *ix, const char *operation);
extern void ix_progress_end(struct OpenIndex *ix);
extern void progress_slot_clear(void);

#endif							/* FEST_SQL_PROGRESS_H */
