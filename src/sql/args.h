/*-------------------------------------------------------------------------
 *
 * args.h
 *	  Reading SQL arguments with festival's NULL and name rules, and
 *	  setting up results (sets, flat arrays).
 *
 * festival's functions are not STRICT: a NULL argument is an error that
 * says which argument, never a silent NULL result.
 *
 * IDENTIFICATION
 *	  src/sql/args.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_ARGS_H
#define FEST_ARGS_H

#include "festival.h"

#include "access/tupdesc.h"
#include "fmgr.h"

/* Index and device names become file names: identifier-like spellings only. */
extern void fest_validate_name(const char *what, const char *name);
extern char *fest_text_arg(FunctionCallInfo fcinfo, int argno, const char *what);
extern char *fest_name_arg(FunctionCallInfo fcinfo, int argno, const char *what);
extern char *fest_sqlname_arg(FunctionCallInfo fcinfo, int argno, const char *what);
extern int64 fest_int64_arg(FunctionCallInfo fcinfo, int argno, const char *what);
extern bool fest_bool_arg(FunctionCallInfo fcinfo, int argno, const char *what);

extern TupleDesc fest_init_int8_set(FunctionCallInfo fcinfo, const char *column);
extern TupleDesc fest_init_materialized(FunctionCallInfo fcinfo, int natts,
										 const Oid *types);
extern Datum flat_array_datum(const void *values, int n, Oid elemtype);

#endif							/* FEST_ARGS_H */
