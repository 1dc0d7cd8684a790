/*-------------------------------------------------------------------------
 *
 * geomarg.c
 *	  Reading geometry arguments through PostGIS's ST_AsEWKB.
 *
 * IDENTIFICATION
 *	  src/sql/geomarg.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/geomarg.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/*
 * PostGIS functions, set up once per call site (fn_extra).  A call site
 * lives as long as one execution of its statement, so a function called
 * once per statement (a query in a PL/pgSQL loop) would look them up by
 * name on every call; the OIDs found are therefore also kept for the
 * session in postgis_oids, forgotten whenever a function or type changes.
 */
typedef struct GeomFuncs
{
	Oid			geometry_type;
	FmgrInfo	as_ewkb;
	Oid			curve_to_line_oid;
	FmgrInfo	curve_to_line;	/* set up at the first arc */
} GeomFuncs;

typedef struct PostgisOids
{
	Oid			geometry_type;	/* InvalidOid: nothing cached */
	Oid			as_ewkb;
	Oid			curve_to_line;
	uint64		invalidations;	/* callbacks seen; see geom_funcs */
} PostgisOids;

static PostgisOids postgis_oids;
static bool postgis_oids_callbacks;

static void
postgis_oids_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	postgis_oids.geometry_type = InvalidOid;
	postgis_oids.invalidations++;
}

/*
 * A PostGIS function in the geometry type's schema.  It can be missing
 * when PostGIS was changed by hand in a way CREATE EXTENSION would not
 * leave it: say so in festival's terms rather than as a bare lookup error.
 */
static Oid
lookup_postgis_function(Oid nsp, const char *name, int nargs, Oid *argtypes)
{
	char	   *nspname = get_namespace_name(nsp);
	List	   *qualified = list_make2(makeString(nspname),
									   makeString(pstrdup(name)));
	Oid			fn = LookupFuncName(qualified, nargs, argtypes, true);

	if (!OidIsValid(fn))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("function %s.%s(%s) of PostGIS does not exist",
						nspname, name, format_type_be(argtypes[0])),
				 errdetail("Geometry arguments are read through PostGIS's ST_AsEWKB and ST_CurveToLine."),
				 errhint("Repair PostGIS: ALTER EXTENSION postgis UPDATE, or DROP and CREATE EXTENSION postgis.")));
	return fn;
}

static GeomFuncs *
geom_funcs(FunctionCallInfo fcinfo, int argno)
{
	GeomFuncs  *funcs = (GeomFuncs *) fcinfo->flinfo->fn_extra;
	Oid			argtype;
	HeapTuple	tup;
	Oid			nsp;
	uint64		invalidations_before;

	if (funcs != NULL)
		return funcs;

	if (!postgis_oids_callbacks)
	{
		CacheRegisterSyscacheCallback(PROCOID, postgis_oids_invalidate, (Datum) 0);
		CacheRegisterSyscacheCallback(TYPEOID, postgis_oids_invalidate, (Datum) 0);
		postgis_oids_callbacks = true;
	}

	invalidations_before = postgis_oids.invalidations;
	argtype = get_fn_expr_argtype(fcinfo->flinfo, argno);
	/* an array of geometries (query_batch): the element type */
	if (OidIsValid(argtype) && OidIsValid(get_element_type(argtype)))
		argtype = get_element_type(argtype);
	if (OidIsValid(argtype) && argtype == postgis_oids.geometry_type)
	{
		funcs = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(GeomFuncs));
		funcs->geometry_type = argtype;
		fmgr_info_cxt(postgis_oids.as_ewkb, &funcs->as_ewkb, fcinfo->flinfo->fn_mcxt);
		funcs->curve_to_line_oid = postgis_oids.curve_to_line;
		fcinfo->flinfo->fn_extra = funcs;
		return funcs;
	}
	if (!OidIsValid(argtype))
		argtype = TypenameGetTypid("geometry");
	if (!OidIsValid(argtype))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("type \"geometry\" is not available"),
				 errhint("Install PostGIS with CREATE EXTENSION postgis.")));
	/*
	 * These look-ups (and get_element_type's above) read the catalogs and
	 * so may process invalidations (another session's DDL): OIDs found
	 * before one arrived may be stale, and are then used for this call site
	 * only, not kept for the session (invalidations_before).
	 */
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(argtype));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for type %u", argtype);
	nsp = ((Form_pg_type) GETSTRUCT(tup))->typnamespace;
	ReleaseSysCache(tup);

	funcs = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(GeomFuncs));
	funcs->geometry_type = argtype;
	fmgr_info_cxt(lookup_postgis_function(nsp, "st_asewkb", 1, &argtype),
				  &funcs->as_ewkb, fcinfo->flinfo->fn_mcxt);
	{
		/* ST_CurveToLine(geom, tol, toltype, flags) */
		Oid			types[4] = {argtype, FLOAT8OID, INT4OID, INT4OID};

		funcs->curve_to_line_oid = lookup_postgis_function(nsp, "st_curvetoline", 4, types);
	}
	if (postgis_oids.invalidations == invalidations_before)
	{
		postgis_oids.as_ewkb = funcs->as_ewkb.fn_oid;
		postgis_oids.curve_to_line = funcs->curve_to_line_oid;
		postgis_oids.geometry_type = argtype;
	}
	fcinfo->flinfo->fn_extra = funcs;
	return funcs;
}

/*
 * Inspect EWKB for use as an index entry or query: it must parse and must
 * not be empty.
 */
void
geomarg_check_wkb(const uint8 *data, size_t len, const char *what,
				  WkbInfo *info)
{
	const char *error;

	if (!wkb_inspect(data, len, info, &error))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s cannot be read: %s", what, error),
				 errhint("Pass a valid geometry; ST_IsValidReason() and ST_AsText() help find what is wrong.")));
	if (info->empty)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is empty", what),
				 errdetail("An empty geometry has no bounding box and cannot be indexed or searched for."),
				 errhint("Filter empty geometries out, for example with WHERE NOT ST_IsEmpty(geom).")));
}

/* Read argument argno, a PostGIS geometry, linearising arcs. */
void
geomarg_get(FunctionCallInfo fcinfo, int argno, const char *what, GeomArg *out)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what),
				 errhint("Give a geometry; festival's functions never read NULL as a default.")));
	geomarg_from_datum(fcinfo, argno, PG_GETARG_DATUM(argno), what, out);
}

/*
 * Read one geometry given as a datum, for argument argno of type geometry
 * or geometry[] (an element of the array), linearising arcs.
 */
void
geomarg_from_datum(FunctionCallInfo fcinfo, int argno, Datum geom,
				   const char *what, GeomArg *out)
{
	GeomFuncs  *funcs = geom_funcs(fcinfo, argno);

	out->ewkb = DatumGetByteaPP(FunctionCall1(&funcs->as_ewkb, geom));
	geomarg_check_wkb((const uint8 *) VARDATA_ANY(out->ewkb),
					  VARSIZE_ANY_EXHDR(out->ewkb), what, &out->info);
	if (out->info.has_arcs)
	{
		Datum		linear;

		if (!OidIsValid(funcs->curve_to_line.fn_oid))
			fmgr_info_cxt(funcs->curve_to_line_oid, &funcs->curve_to_line,
						  fcinfo->flinfo->fn_mcxt);
		/* PostGIS's defaults: 32 segments per quarter circle */
		linear = FunctionCall4(&funcs->curve_to_line, geom,
										   Float8GetDatum(32.0), Int32GetDatum(0),
										   Int32GetDatum(0));

		out->ewkb = DatumGetByteaPP(FunctionCall1(&funcs->as_ewkb, linear));
		geomarg_check_wkb((const uint8 *) VARDATA_ANY(out->ewkb),
						  VARSIZE_ANY_EXHDR(out->ewkb), what, &out->info);
	}
}

/*
 * Read argument argno, a one-dimensional array of geometries (the batches:
 * festival.query_batch, query_batch_ids, knn_batch_ids), each linearised
 * as geomarg_get does.  A NULL or empty array and NULL elements are
 * errors; an element's errors name its 1-based position.  single: the
 * function that takes one geometry, for the hint.
 */
GeomArg *
geomarg_array(FunctionCallInfo fcinfo, int argno, const char *single, int *count)
{
	ArrayType  *array;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	GeomArg    *out;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("array of query geometries must not be NULL"),
				 errhint("Pass an array of geometries, such as ARRAY['POINT(0 0)'::geometry].")));
	array = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("array of query geometries must have one dimension, not %d",
						ARR_NDIM(array)),
				 errhint("Pass a one-dimensional array of geometries.")));
	if (ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("array of query geometries is empty"),
				 errhint("Pass at least one geometry, for example ARRAY[g1, g2], or use %s for one.",
						 single)));

	get_typlenbyvalalign(ARR_ELEMTYPE(array), &typlen, &typbyval, &typalign);
	deconstruct_array(array, ARR_ELEMTYPE(array), typlen, typbyval, typalign,
					  &elems, &nulls, &n);
	out = palloc0(n * sizeof(GeomArg));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("query geometry %d of the array is NULL", i + 1),
					 errhint("Leave NULLs out, for example with array_remove(gs, NULL).")));
		geomarg_from_datum(fcinfo, argno, elems[i],
						   psprintf("query geometry %d of the array", i + 1), &out[i]);
	}
	*count = n;
	return out;
}

/*
 * An index holds geometries of one SRID, like a PostGIS column: the first
 * geometry inserted fixes it (adopt), later ones must match.
 */
void
geomarg_check_srid(OpenIndex *ix, const WkbInfo *info, const char *what,
				   bool adopt)
{
	int32		srid = info->has_srid ? info->srid : 0;
	FestMeta   *meta = &ix->meta;

	if (meta->flags & FEST_META_HAS_SRID)
	{
		if (srid != meta->srid)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has SRID %d but index \"%s\" holds geometries with SRID %d",
							what, srid, ix->name, meta->srid),
					 errhint("Transform it with ST_Transform or set it with ST_SetSRID.")));
	}
	else if (adopt)
	{
		meta->srid = srid;
		meta->flags |= FEST_META_HAS_SRID;
		ns_meta_changed(ix->ns);
	}
}

/*
 * A geometry about to be indexed: its SRID must match (or is adopted),
 * a points-only structure takes only POINTs, and the first non-point
 * clears the index's all-points flag (which enables exact filtering).
 */
void
geomarg_admit(OpenIndex *ix, const WkbInfo *info, const char *what)
{
	geomarg_check_srid(ix, info, what, true);
	if (ix->structure->points_only && !info->is_point)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("structure \"%s\" of index \"%s\" indexes only points", ix->structure->name,
						ix->name),
				 errdetail("The %s is not a non-empty POINT.", what),
				 errhint("Index other geometries with structure 'rtree', 'rstartree' or 'hilbert', or index their centroids (ST_Centroid) in a points-only index.")));
	if (!info->is_point && (ix->meta.flags & FEST_META_ALL_POINTS))
	{
		ix->meta.flags &= ~FEST_META_ALL_POINTS;
		ns_meta_changed(ix->ns);
	}
}
