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
 * The gap between two intervals on one axis, as the branching form
 *		a_hi < b_lo ? b_lo - a_hi : b_hi < a_lo ? a_lo - b_hi : 0
 * computes it, bit for bit, without branching on the coordinates (whose
 * comparisons a search cannot predict): both differences are computed and
 * one is selected by masks.  b_lo - a_hi > 0 exactly when a_hi < b_lo
 * (x < y iff y - x > 0, with gradual underflow; infinities and NaN give
 * no positive difference unless x < y), so the selection is the form's.
 */
static inline double
mbr_axis_gap(double a_lo, double a_hi, double b_lo, double b_hi)
{
	double		below = b_lo - a_hi;
	double		above = a_lo - b_hi;
	uint64		below_bits;
	uint64		above_bits;
	uint64		take_below = -(uint64) (below > 0);
	uint64		take_above = -(uint64) (above > 0) & ~take_below;
	uint64		gap_bits;
	double		gap;

	memcpy(&below_bits, &below, sizeof(double));
	memcpy(&above_bits, &above, sizeof(double));
	gap_bits = (below_bits & take_below) | (above_bits & take_above);
	memcpy(&gap, &gap_bits, sizeof(double));	/* all bits clear: +0.0 */
	return gap;
}

/*
 * The square of mbr_min_distance, before its square root: searches that
 * compare many distances against one bound compare squares first
 * (index/knn.c) and take the root only of what they keep.
 */
static inline double
mbr_min_distance_sq(const Mbr *a, const Mbr *b)
{
	double		dx = mbr_axis_gap(a->xmin, a->xmax, b->xmin, b->xmax);
	double		dy = mbr_axis_gap(a->ymin, a->ymax, b->ymin, b->ymax);

	return dx * dx + dy * dy;
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
	return sqrt(mbr_min_distance_sq(a, b));
}

#endif							/* FEST_MBR_H */
