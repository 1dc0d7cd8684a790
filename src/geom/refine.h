/*-------------------------------------------------------------------------
 *
 * refine.h
 *	  The refinement step: exact predicates with GEOS.
 *
 * A Refiner holds a GEOS context and the prepared query geometry for one
 * query.  refiner_test() evaluates ST_<predicate>(object, query) for one
 * candidate given as WKB, with the same conventions PostGIS uses when it
 * hands geometries to GEOS: triangles become polygons, TINs collections of
 * polygons, one-point lines are doubled, short or open rings are closed and
 * padded.  Arcs must have been linearised before (ST_CurveToLine, as
 * PostGIS does for predicates); polyhedral surfaces are refused, as in
 * PostGIS.
 *
 * dwithin needs refiner_set_distance() before the first test; it is
 * decided with GEOS's prepared distance test on the linearised shapes
 * (PostGIS's ST_DWithin measures arcs themselves, so for geometries with
 * arcs the two may differ by the linearisation's tiny error).
 *
 * GEOS objects are malloc'd by GEOS.  They are released by a reset
 * callback on the memory context the Refiner lives in, so an ERROR in the
 * middle of a query leaks nothing.  GEOS errors are caught by a message
 * handler and raised with ereport after the GEOS call has returned (never a
 * longjmp through C++).
 *
 * IDENTIFICATION
 *	  src/geom/refine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_REFINE_H
#define FEST_REFINE_H

#include "festival.h"
#include "geom/predicate.h"

typedef struct Refiner Refiner;

extern Refiner *refiner_create(const uint8 *query_wkb, size_t query_len,
							   FestPredicate predicate);
extern void refiner_set_distance(Refiner *refiner, double distance);
extern bool refiner_test(Refiner *refiner, const uint8 *wkb, size_t len,
						 int64 id);

#endif							/* FEST_REFINE_H */
