/*-------------------------------------------------------------------------
 *
 * point_entry.h
 *	  The point entry (x, y, id) of the point-only structures, and its order.
 *
 * The grid file's bucket entries (GfBucketEntry), LB-Grid's log records
 * (LbRecord, which begin with these fields and add a tag) and the
 * xBR+-tree's leaf entries (XbrLeafEntry) are all a point and the id of its
 * row.  Each orders its entries the same way: by x, then y, then id (an
 * entry's identity: a delete finds its entry by it, a bucket or leaf keeps
 * its entries sorted by it, the bulk loaders sort by it after their cell
 * or quadrant key).  That order lives here once, so the three cannot
 * drift apart; the byte layout of each entry stays documented with its
 * structure (24 bytes: x float8, y float8, id int8, native order).
 *
 * IDENTIFICATION
 *	  src/index/point_entry.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_POINT_ENTRY_H
#define FEST_POINT_ENTRY_H

#include "festival.h"

typedef struct PointEntry
{
	double		x;
	double		y;
	int64		id;
} PointEntry;

StaticAssertDecl(sizeof(PointEntry) == 24, "PointEntry must be 24 bytes");

/* The identity order of point entries: x, then y, then id. */
static inline int
point_entry_cmp(const PointEntry *a, const PointEntry *b)
{
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	if (a->y != b->y)
		return a->y < b->y ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

/* The same order as a qsort comparator. */
static inline int
point_entry_qsort_cmp(const void *a, const void *b)
{
	return point_entry_cmp(a, b);
}

/*
 * Entry types that begin with a PointEntry's fields (LbRecord) assert it
 * with this, so point_entry_cmp may be given their address.
 */
#define PointEntryPrefix(type) \
	StaticAssertDecl(offsetof(type, x) == offsetof(PointEntry, x) && \
					 offsetof(type, y) == offsetof(PointEntry, y) && \
					 offsetof(type, id) == offsetof(PointEntry, id), \
					 #type " must begin with the fields of PointEntry")

#endif							/* FEST_POINT_ENTRY_H */
