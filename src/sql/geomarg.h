/*-------------------------------------------------------------------------
 *
 * geomarg.h
 *	  Geometry arguments of SQL functions.
 *
 * PostGIS ships no C headers, so a geometry argument is converted by
 * calling PostGIS's own ST_AsEWKB through fmgr (research/
 * build-environment.md, route B) and read with geom/wkb.h.  Geometries with
 * arcs are first linearised with ST_CurveToLine, as PostGIS does before it
 * evaluates predicates, so MBRs and refinement see the same shape.
 *
 * IDENTIFICATION
 *	  src/sql/geomarg.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_GEOMARG_H
#define FEST_GEOMARG_H

#include "festival.h"
#include "geom/wkb.h"
#include "sql/handle.h"

#include "fmgr.h"

typedef struct GeomArg
{
	bytea	   *ewkb;			/* of the (linearised) geometry */
	WkbInfo		info;
} GeomArg;

extern void geomarg_get(FunctionCallInfo fcinfo, int argno, const char *what,
						GeomArg *out);
extern void geomarg_from_datum(FunctionCallInfo fcinfo, int argno, Datum geom,
							   const char *what, GeomArg *out);
extern GeomArg *geomarg_array(FunctionCallInfo fcinfo, int argno,
							  const char *single, int *count);
extern void geomarg_check_wkb(const uint8 *data, size_t len, const char *what,
							  WkbInfo *info);
extern void geomarg_check_srid(OpenIndex *ix, const WkbInfo *info,
							   const char *what, bool adopt);
extern void geomarg_admit(OpenIndex *ix, const WkbInfo *info, const char *what);

#endif							/* FEST_GEOMARG_H */
