/*-------------------------------------------------------------------------
 *
 * rectset.h
 *	  Areas of sets of rectangles: the area of their union and the sum of
 *	  their pairwise overlaps.
 *
 * Structure statistics (index/measure.c) need both for every node and
 * every level of a tree, so neither may cost a GEOS union per node or a
 * comparison of every pair: the union area is Klee's measure computed by a
 * sweep over x with a segment tree over the distinct y coordinates
 * (O(n log n)); the pairwise overlap is a sweep over the rectangles sorted
 * by xmin that compares a rectangle only with those still open at its
 * left edge (O(n log n + k), k the pairs whose x ranges meet).
 *
 * Rectangles are closed, but a degenerate one (a point or a segment) has no
 * area, adds nothing to a union and overlaps nothing.  Rectangles with a
 * non-finite coordinate are ignored.
 *
 * IDENTIFICATION
 *	  src/geom/rectset.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_RECTSET_H
#define FEST_RECTSET_H

#include "festival.h"
#include "geom/mbr.h"

/* Area covered by at least one of the n rectangles. */
extern double rectset_union_area(const Mbr *rects, int64 n);

/* Sum over unordered pairs {i, j}, i != j, of the area of rects[i] ∩ rects[j]. */
extern double rectset_pairwise_overlap(const Mbr *rects, int64 n);

#endif							/* FEST_RECTSET_H */
