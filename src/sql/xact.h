/*-------------------------------------------------------------------------
 *
 * xact.h
 *	  Transaction and session callbacks of the open indices, and file
 *	  removals that wait for the transaction's end.
 *
 * IDENTIFICATION
 *	  src/sql/xact.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_SQL_XACT_H
#define FEST_SQL_XACT_H

#include "festival.h"

extern void handle_register_callbacks(void);

/* files removed when the (sub)transaction ends */
extern void pending_unlink_on_abort(const char *path);
extern void pending_unlink_on_commit(const char *path);
extern bool pending_unlink_scheduled(const char *path);

#endif							/* FEST_SQL_XACT_H */
