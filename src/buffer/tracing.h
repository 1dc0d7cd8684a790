/*-------------------------------------------------------------------------
 *
 * tracing.h
 *	  The PageIO that feeds a run's I/O trace (stats/iotrace.h).
 *
 * IDENTIFICATION
 *	  src/buffer/tracing.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_TRACING_H
#define FEST_TRACING_H

#include "device/pageio.h"

extern PageIO *tracing_pageio_wrap(PageIO *device, const char *index_name);

#endif							/* FEST_TRACING_H */
