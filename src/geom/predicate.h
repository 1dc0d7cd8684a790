/*-------------------------------------------------------------------------
 *
 * predicate.h
 *	  Spatial predicates: the MBR filter step and exact shortcuts.
 *
 * A query asks for the indexed objects o with ST_<predicate>(o, g).  The
 * filter step works on MBRs and must never lose an answer:
 *
 *	predicate	entry MBR test (leaf)	descend into a subtree when
 *	intersects	MBR(o) meets MBR(g)		node MBR meets MBR(g)
 *	touches		MBR(o) meets MBR(g)		node MBR meets MBR(g)
 *	overlaps	MBR(o) meets MBR(g)		node MBR meets MBR(g)
 *	within		MBR(o) inside MBR(g)	node MBR meets MBR(g)
 *	coveredby	MBR(o) inside MBR(g)	node MBR meets MBR(g)
 *	contains	MBR(o) holds MBR(g)		node MBR holds MBR(g)
 *	covers		MBR(o) holds MBR(g)		node MBR holds MBR(g)
 *	equals		MBR(o) = MBR(g)			node MBR holds MBR(g)
 *	disjoint	every entry				always
 *	dwithin		mindist(MBR(o), MBR(g))	mindist(node MBR, MBR(g))
 *				  <= distance			  <= distance
 *
 * For disjoint, an entry whose MBR misses MBR(g) is an answer without
 * refinement (FILTER_ACCEPT); the others are candidates.
 *
 * dwithin (ST_DWithin(o, g, distance)) takes the distance from SearchSpec;
 * mindist is mbr_min_distance, a lower bound of the geometries' distance.
 * With exact_distance set (every indexed object is a point) a point entry
 * against a point query is decided from its coordinates: the MBR distance
 * of two points is their distance as PostGIS computes it (geom/mbr.h).
 * predicate_eval_point cannot decide dwithin (it has no distance): callers
 * leave exact_points false for it.
 *
 * Refinement is skipped only when the filter is exact: every indexed object
 * is a POINT and g is a point or an axis-aligned rectangle.  Then the answer
 * follows from coordinates (predicate_eval_point), with the boundary rules
 * of the DE-9IM: a point on a rectangle's edge touches it and is covered by
 * it, but is not within it.
 *
 * IDENTIFICATION
 *	  src/geom/predicate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_PREDICATE_H
#define FEST_PREDICATE_H

#include "festival.h"
#include "geom/mbr.h"

typedef enum FestPredicate
{
	PRED_INTERSECTS,
	PRED_CONTAINS,
	PRED_WITHIN,
	PRED_COVERS,
	PRED_COVEREDBY,
	PRED_EQUALS,
	PRED_TOUCHES,
	PRED_OVERLAPS,
	PRED_DISJOINT,
	PRED_DWITHIN				/* needs SearchSpec.distance */
} FestPredicate;

typedef enum FilterVerdict
{
	FILTER_REJECT,				/* cannot satisfy the predicate */
	FILTER_CANDIDATE,			/* may satisfy it: refine */
	FILTER_ACCEPT				/* satisfies it: no refinement needed */
} FilterVerdict;

/* Shape of the query geometry, as far as exact shortcuts care. */
typedef enum QueryShape
{
	QUERY_GENERAL,
	QUERY_RECTANGLE,			/* a POLYGON equal to its MBR, positive area */
	QUERY_POINT
} QueryShape;

/* What one search asks of a structure. */
typedef struct SearchSpec
{
	FestPredicate predicate;
	Mbr			query;			/* MBR of g */
	QueryShape	shape;
	bool		exact_points;	/* decide leaf entries with predicate_eval_point */
	/* called for each leaf entry that is not rejected */
	void		(*emit) (void *arg, int64 id, const Mbr *box, FilterVerdict verdict);
	void	   *arg;
	double		distance;		/* dwithin only: >= 0 */
	bool		exact_distance; /* dwithin: point entries vs a point query
								 * are decided without refinement */
} SearchSpec;

extern const char *const predicate_names[];

extern FestPredicate predicate_parse(const char *name);
extern bool predicate_descend(const SearchSpec *spec, const Mbr *node_box);
extern FilterVerdict predicate_filter(const SearchSpec *spec, const Mbr *entry);
extern bool predicate_eval_point(FestPredicate predicate, QueryShape shape,
								 const Mbr *query, double x, double y);

#endif							/* FEST_PREDICATE_H */
