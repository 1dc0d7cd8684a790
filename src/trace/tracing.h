/*-------------------------------------------------------------------------
 *
 * tracing.h
 *	  The PageIO that feeds a run's I/O trace (trace/iotrace.h).
 *
 * IDENTIFICATION
 *	  src/trace/tracing.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_TRACING_H
#define FEST_TRACING_H

#include "trace/iotrace.h"
#include "device/pageio.h"

extern PageIO *tracing_pageio_wrap(PageIO *device, const char *index_name,
								   IoTrace *target);
extern void tracing_set_target(PageIO *tracing, IoTrace *target);

#endif							/* FEST_TRACING_H */
