/*-------------------------------------------------------------------------
 *
 * describe.h
 *	  Describing an open index as JSON (configuration and live figures).
 *
 * IDENTIFICATION
 *	  src/sql/describe.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_DESCRIBE_H
#define FEST_DESCRIBE_H

#include "sql/handle.h"

extern Jsonb *ix_config_jsonb(OpenIndex *ix);

#endif							/* FEST_DESCRIBE_H */
