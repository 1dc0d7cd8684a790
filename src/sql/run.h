/*-------------------------------------------------------------------------
 *
 * run.h
 *	  The run in progress (festival.begin_run / end_run): what operations
 *	  account to it, and the I/O trace the handles pass down.
 *
 * IDENTIFICATION
 *	  src/sql/run.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_SQL_RUN_H
#define FEST_SQL_RUN_H

#include "sql/handle.h"

extern FestStats *run_account(OpenIndex *ix);
extern void run_discard_failed_io(void);
extern IoTrace *run_current_trace(void);
extern int64 run_current_id(void);

#endif							/* FEST_SQL_RUN_H */
