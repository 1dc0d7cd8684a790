/*-------------------------------------------------------------------------
 *
 * jsonbuild.h
 *	  Small helpers for building jsonb objects key by key.
 *
 * IDENTIFICATION
 *	  src/stats/jsonbuild.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_JSONBUILD_H
#define FEST_JSONBUILD_H

#include "festival.h"

#include "utils/jsonb.h"
#include "utils/numeric.h"

extern void jb_key(JsonbParseState **state, const char *key);
extern void jb_int(JsonbParseState **state, const char *key, int64 value);
extern void jb_numeric(JsonbParseState **state, const char *key, Numeric value);
extern void jb_string(JsonbParseState **state, const char *key, const char *value);
extern void jb_bool(JsonbParseState **state, const char *key, bool value);
extern void jb_null(JsonbParseState **state, const char *key);
extern void jb_jsonb(JsonbParseState **state, const char *key, Jsonb *value);

#endif							/* FEST_JSONBUILD_H */
