/*-------------------------------------------------------------------------
 *
 * mbr.h
 *	  Axis-aligned rectangles (MBRs) in double precision.
 *
 * MBRs are computed exactly from the geometries' coordinates (PostGIS's
 * cached boxes are float4 rounded outward; festival does not use them), so
 * a point's MBR is the point itself and filters on points are exact.
 * Boxes are closed: touching boxes intersect.
 *
 * IDENTIFICATION
 *	  src/geom/mbr.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_MBR_H
#define FEST_MBR_H

#include "festival.h"

#include <math.h>

#include "utils/float.h"

typedef struct Mbr
{
	double		xmin;
	double		ymin;
	double		xmax;
	double		ymax;
} Mbr;

static inline void
mbr_set_empty(Mbr *b)
{
	b->xmin = b->ymin = get_float8_infinity();
	b->xmax = b->ymax = -get_float8_infinity();
}

static inline bool
mbr_is_empty(const Mbr *b)
{
	return b->xmin > b->xmax || b->ymin > b->ymax;
}

static inline void
mbr_extend(Mbr *b, const Mbr *other)
{
	if (other->xmin < b->xmin)
		b->xmin = other->xmin;
	if (other->ymin < b->ymin)
		b->ymin = other->ymin;
	if (other->xmax > b->xmax)
		b->xmax = other->xmax;
	if (other->ymax > b->ymax)
		b->ymax = other->ymax;
}

static inline void
mbr_extend_point(Mbr *b, double x, double y)
{
	if (x < b->xmin)
		b->xmin = x;
	if (x > b->xmax)
		b->xmax = x;
	if (y < b->ymin)
		b->ymin = y;
	if (y > b->ymax)
		b->ymax = y;
}

static inline double
mbr_area(const Mbr *b)
{
	return (b->xmax - b->xmin) * (b->ymax - b->ymin);
}

/* The low and high side of a box on an axis (0 = x, 1 = y). */
static inline double
mbr_low(const Mbr *b, int axis)
{
	return axis == 0 ? b->xmin : b->ymin;
}

static inline double
mbr_high(const Mbr *b, int axis)
{
	return axis == 0 ? b->xmax : b->ymax;
}

/* Half the perimeter: the R*-tree's "margin". */
static inline double
mbr_margin(const Mbr *b)
{
	return (b->xmax - b->xmin) + (b->ymax - b->ymin);
}

/* Area of the smallest box covering both. */
static inline double
mbr_union_area(const Mbr *a, const Mbr *b)
{
	double		w = Max(a->xmax, b->xmax) - Min(a->xmin, b->xmin);
	double		h = Max(a->ymax, b->ymax) - Min(a->ymin, b->ymin);

	return w * h;
}

/* Closed boxes share at least one point. */
static inline bool
mbr_intersects(const Mbr *a, const Mbr *b)
{
	return a->xmin <= b->xmax && b->xmin <= a->xmax &&
		a->ymin <= b->ymax && b->ymin <= a->ymax;
}

/* inner lies inside outer (boundary included). */
static inline bool
mbr_contains(const Mbr *outer, const Mbr *inner)
{
	return outer->xmin <= inner->xmin && inner->xmax <= outer->xmax &&
		outer->ymin <= inner->ymin && inner->ymax <= outer->ymax;
}

static inline bool
mbr_equals(const Mbr *a, const Mbr *b)
{
	return a->xmin == b->xmin && a->ymin == b->ymin &&
		a->xmax == b->xmax && a->ymax == b->ymax;
}

static inline bool
mbr_is_point(const Mbr *b)
{
	return b->xmin == b->xmax && b->ymin == b->ymax;
}

/* Area of the intersection, 0 when disjoint. */
static inline double
mbr_overlap_area(const Mbr *a, const Mbr *b)
{
	double		w = Min(a->xmax, b->xmax) - Max(a->xmin, b->xmin);
	double		h = Min(a->ymax, b->ymax) - Max(a->ymin, b->ymin);

	return (w > 0 && h > 0) ? w * h : 0.0;
}

/*
 * Minimum Euclidean distance between two closed boxes, 0 when they meet.
 * It never exceeds the distance between any geometries the boxes hold, so
 * it is the lower bound of distance filters and best-first kNN.  For two
 * points it is computed as PostGIS computes point distances,
 * sqrt(dx * dx + dy * dy), so the value equals ST_Distance's bit for bit.
 */
static inline double
mbr_min_distance(const Mbr *a, const Mbr *b)
{
	double		dx = 0.0;
	double		dy = 0.0;

	if (a->xmax < b->xmin)
		dx = b->xmin - a->xmax;
	else if (b->xmax < a->xmin)
		dx = a->xmin - b->xmax;
	if (a->ymax < b->ymin)
		dy = b->ymin - a->ymax;
	else if (b->ymax < a->ymin)
		dy = a->ymin - b->ymax;
	return sqrt(dx * dx + dy * dy);
}

#endif							/* FEST_MBR_H */
