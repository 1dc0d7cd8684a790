/*-------------------------------------------------------------------------
 *
 * tracing.h
 *	  The PageIO that feeds a run's I/O trace (buffer/iotrace.h).
 *
 * IDENTIFICATION
 *	  src/buffer/tracing.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_TRACING_H
#define FEST_TRACING_H

#include "buffer/iotrace.h"
#include "device/pageio.h"

extern PageIO *tracing_pageio_wrap(PageIO *device, const char *index_name,
								   IoTrace *target);
extern void tracing_set_target(PageIO *tracing, IoTrace *target);

#endif							/* FEST_TRACING_H */
