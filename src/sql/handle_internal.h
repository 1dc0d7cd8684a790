/*-------------------------------------------------------------------------
 *
 * handle_internal.h
 *	  What the files of the open-index handles share (not for the rest of
 *	  the SQL layer, which sees sql/handle.h).
 *
 *	  handle_registry.c	the session's handles by name; making and discarding one
 *	  handle_lock.c		the index's advisory lock
 *	  handle_chain.c	the paths, device states and page I/O chain
 *	  handle_open.c		opening and creating an index, and what an unclean
 *						file means
 *	  handle_op.c		an operation's lifecycle: begin, commit, flush, end,
 *						close
 *	  handle_failure.c	a handle an ERROR interrupted, and its reload
 *
 * IDENTIFICATION
 *	  src/sql/handle_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_HANDLE_INTERNAL_H
#define FEST_HANDLE_INTERNAL_H

#include "sql/handle.h"

/* handle_registry.c: a new handle in its own context, registered and busy */
extern OpenIndex *handle_create(const char *name);

/* handle_lock.c: take the session-level lock of a new handle */
extern void handle_lock(OpenIndex *ix);

/* handle_chain.c */
extern char *handle_file_path(OpenIndex *ix, bool create);
extern DeviceState *handle_device_state(OpenIndex *ix);
extern PageIO *handle_open_chain(OpenIndex *ix, uint32 page_size, bool create);

/* handle_open.c: open an index (reload: what an ERROR left, else NULL) */
extern OpenIndex *handle_open_index(const char *name, const ReloadInfo *reload,
									DeviceState *kept);

/* handle_op.c: an operation begins (the counters, the trace, the clocks) */
extern void handle_start_op(OpenIndex *ix, bool modifying);

/* handle_failure.c: reopen a handle an ERROR interrupted */
extern OpenIndex *handle_reload(OpenIndex *ix);

#endif							/* FEST_HANDLE_INTERNAL_H */
