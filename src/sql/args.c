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

#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
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
 * The caller's descriptor of the result rows (ReturnSetInfo.expectedDesc)
 * when it has exactly the column types given, else NULL.  Both callers of
 * a set-returning function, a FROM item and a target list, pass one built
 * from the function's declared result; a function that materializes its
 * rows and leaves setDesc NULL is read with it.  Using it saves building
 * (catalog look-ups) and freeing a descriptor on every call, which is a
 * visible part of a call that finds nothing (an empty window, issue 14).
 */
static TupleDesc
expected_desc(ReturnSetInfo *rsinfo, int natts, const Oid *types)
{
	TupleDesc	desc = rsinfo->expectedDesc;

	if (desc == NULL || desc->natts != natts)
		return NULL;
	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || att->atttypid != types[i])
			return NULL;
	}
	return desc;
}

static bool
materialize_allowed(ReturnSetInfo *rsinfo)
{
	return rsinfo != NULL && IsA(rsinfo, ReturnSetInfo) &&
		(rsinfo->allowedModes & SFRM_Materialize) != 0;
}

/*
 * Materialize-mode set-up for a function returning a set of bigint.  A
 * one-column RETURNS TABLE is a scalar set, which InitMaterializedSRF
 * refuses to describe ("return type must be a row type"), so without the
 * caller's descriptor one is built here.  Returns the descriptor to put
 * rows with (rsinfo->setDesc is left NULL when it is the caller's).
 */
TupleDesc
fest_init_int8_set(FunctionCallInfo fcinfo, const char *column)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static const Oid int8_type[1] = {INT8OID};
	MemoryContext old;
	TupleDesc	desc;

	if (!materialize_allowed(rsinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set"),
				 errhint("Call it in a FROM clause: SELECT * FROM festival.f(...).")));

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	desc = expected_desc(rsinfo, 1, int8_type);
	if (desc == NULL)
	{
		desc = CreateTemplateTupleDesc(1);
		TupleDescInitEntry(desc, (AttrNumber) 1, column, INT8OID, -1, 0);
		rsinfo->setDesc = desc;
	}
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap(false, false, work_mem);
	MemoryContextSwitchTo(old);
	return desc;
}

/*
 * InitMaterializedSRF(fcinfo, 0) for a function whose result columns have
 * the given types, without building the descriptor from the catalogs when
 * the caller's matches (see expected_desc).  Returns the descriptor to put
 * rows with.  Anything else (no caller's descriptor, a context that takes
 * no set) goes through InitMaterializedSRF, with its errors.
 */
TupleDesc
fest_init_materialized(FunctionCallInfo fcinfo, int natts, const Oid *types)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	desc;
	MemoryContext old;

	if (!materialize_allowed(rsinfo) ||
		(desc = expected_desc(rsinfo, natts, types)) == NULL)
	{
		InitMaterializedSRF(fcinfo, 0);
		return ((ReturnSetInfo *) fcinfo->resultinfo)->setDesc;
	}
	/* as InitMaterializedSRF: random access only when asked for */
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult =
		tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
							  false, work_mem);
	rsinfo->setDesc = NULL;
	MemoryContextSwitchTo(old);
	return desc;
}

/*
 * Index and device names become file and directory names, so they are
 * restricted to identifier-like spellings.
 */
void
fest_validate_name(const char *what, const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len > FEST_NAME_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("%s name must have 1 to %d characters", what, FEST_NAME_MAXLEN),
				 errhint("Names become file names: use 1 to %d ASCII letters, digits and underscores.", FEST_NAME_MAXLEN)));
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) name[i];

		/* ASCII only: no locale's isalpha() (a call per character, per call) */
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (i > 0 && c >= '0' && c <= '9')))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("invalid %s name \"%s\"", what, name),
					 errhint("Use ASCII letters, digits and underscores, starting with a letter or underscore.")));
	}
}

/*
 * A one-dimensional array of n by-value elements of 4 or 8 bytes (integer,
 * bigint or float8) copied from values, built in place: one copy of the
 * values, no Datum per element (construct_array's way); an empty array
 * for n = 0, as construct_array makes it.  Elements of these types lie
 * back to back from the MAXALIGNed data start, as PostgreSQL lays them.
 */
Datum
flat_array_datum(const void *values, int n, Oid elemtype)
{
	Size		elemsize = elemtype == INT4OID ? sizeof(int32) : sizeof(int64);
	Size		nbytes = ARR_OVERHEAD_NONULLS(1) + (Size) n * elemsize;
	ArrayType  *array;

	Assert(elemtype == INT4OID || elemtype == INT8OID || elemtype == FLOAT8OID);
	Assert(n >= 0);
	if (n == 0)
		return PointerGetDatum(construct_empty_array(elemtype));
	if ((Size) n > MaxArraySize)	/* construct_array's limit and error */
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("array size exceeds the maximum allowed (%d)",
						(int) MaxArraySize)));
	array = palloc(nbytes);
	SET_VARSIZE(array, nbytes);
	array->ndim = 1;
	array->dataoffset = 0;		/* no NULLs */
	array->elemtype = elemtype;
	ARR_DIMS(array)[0] = n;
	ARR_LBOUND(array)[0] = 1;
	memcpy(ARR_DATA_PTR(array), values, (Size) n * elemsize);
	return PointerGetDatum(array);
}
