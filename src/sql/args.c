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
#include "utils/builtins.h"

static void
require_not_null(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what)));
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
	char	   *name = fest_text_arg(fcinfo, argno, psprintf("%s name", what));

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
