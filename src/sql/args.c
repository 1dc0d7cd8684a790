/*-------------------------------------------------------------------------
 *
 * args.c
 *	  Reading SQL arguments with festival's NULL and name rules.
 *
 * IDENTIFICATION
 *	  src/sql/args.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/args.h"

#include "sql/handle.h"
#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

static void
require_not_null(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what),
				 errhint("Give a value; festival's functions never read NULL as a default.")));
}

char *
fest_text_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	require_not_null(fcinfo, argno, what);
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/* An index or device name: not NULL and identifier-like. */
char *
fest_name_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	char	   *name;

	/* the message's words are built only for the error (every call pays) */
	if (PG_ARGISNULL(argno))
		require_not_null(fcinfo, argno, psprintf("%s name", what));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	fest_validate_name(what, name);
	return name;
}

int64
fest_int64_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	require_not_null(fcinfo, argno, what);
	return PG_GETARG_INT64(argno);
}

bool
fest_bool_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	require_not_null(fcinfo, argno, what);
	return PG_GETARG_BOOL(argno);
}

/* An argument of SQL type name (column names). */
char *
fest_sqlname_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	require_not_null(fcinfo, argno, what);
	return pstrdup(NameStr(*PG_GETARG_NAME(argno)));
}

/*
 * Materialize-mode set-up for a function returning a set of bigint.  A
 * one-column RETURNS TABLE is a scalar set, which InitMaterializedSRF
 * refuses to describe ("return type must be a row type"), so the
 * descriptor is built here.
 */
void
fest_init_int8_set(FunctionCallInfo fcinfo, const char *column)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	TupleDesc	desc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set"),
				 errhint("Call it in a FROM clause: SELECT * FROM festival.f(...).")));

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	desc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(desc, (AttrNumber) 1, column, INT8OID, -1, 0);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setDesc = desc;
	rsinfo->setResult = tuplestore_begin_heap(false, false, work_mem);
	MemoryContextSwitchTo(old);
}
