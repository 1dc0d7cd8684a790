/*-------------------------------------------------------------------------
 *
 * hilbert.h
 *	  Hilbert values of points on a 2^32 x 2^32 grid over an extent.
 *
 * Used by the Hilbert R-tree (Kamel & Faloutsos 1994), which orders its
 * entries by the Hilbert value of their MBR centres, and by Hilbert-sorted
 * bulk loading.  The extent is the index's (option "extent"); coordinates
 * outside it are clamped to its border, so every point has a value, and
 * points closer than one grid cell may share one.
 *
 * IDENTIFICATION
 *	  src/geom/hilbert.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_HILBERT_H
#define FEST_HILBERT_H

#include "festival.h"
#include "geom/mbr.h"

#define HILBERT_ORDER 32		/* grid of 2^32 cells per axis */

/* Position along the curve of grid cell (x, y), 0 .. 2^64 - 1. */
extern uint64 hilbert_index(uint32 x, uint32 y);

/* The grid cell of (x, y) in extent, clamped, then its Hilbert index. */
extern uint64 hilbert_of_point(const Mbr *extent, double x, double y);

/* The Hilbert value of a rectangle's centre. */
extern uint64 hilbert_of_box(const Mbr *extent, const Mbr *box);

#endif							/* FEST_HILBERT_H */
