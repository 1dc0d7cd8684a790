/*-------------------------------------------------------------------------
 *
 * hilbert.c
 *	  Hilbert values of points on a 2^32 x 2^32 grid over an extent.
 *
 * The index is computed from the most significant bit down: at each
 * level the quadrant of the point adds two bits (quadrant order 0, 1, 3,
 * 2 along the curve), and the remaining coordinates are rotated or
 * reflected so that the sub-square is traversed in the base orientation
 * (the classic xy-to-d conversion, e.g. Hamilton, "Compact Hilbert
 * indices", 2006, for the two-dimensional case).
 *
 * IDENTIFICATION
 *	  src/geom/hilbert.c
 *
 *-------------------------------------------------------------------------
 */
#include "geom/hilbert.h"

#include <math.h>

uint64
hilbert_index(uint32 x, uint32 y)
{
	uint64		d = 0;

	for (uint32 s = UINT32_C(1) << (HILBERT_ORDER - 1); s > 0; s >>= 1)
	{
		uint32		rx = (x & s) ? 1 : 0;
		uint32		ry = (y & s) ? 1 : 0;

		d += (uint64) s * (uint64) s * ((3 * rx) ^ ry);
		/* rotate the sub-square into the base orientation */
		if (ry == 0)
		{
			if (rx == 1)
			{
				x = ~x;
				y = ~y;
			}
			{
				uint32		t = x;

				x = y;
				y = t;
			}
		}
	}
	return d;
}

/* A coordinate's cell along one axis of [lo, hi], clamped. */
static uint32
grid_cell(double v, double lo, double hi)
{
	double		f;

	if (!(hi > lo))
		return 0;
	f = (v - lo) / (hi - lo);
	if (!(f > 0))				/* also NaN */
		return 0;
	if (f >= 1)
		return PG_UINT32_MAX;
	return (uint32) floor(f * 4294967296.0);
}

uint64
hilbert_of_point(const Mbr *extent, double x, double y)
{
	return hilbert_index(grid_cell(x, extent->xmin, extent->xmax),
						 grid_cell(y, extent->ymin, extent->ymax));
}

uint64
hilbert_of_box(const Mbr *extent, const Mbr *box)
{
	return hilbert_of_point(extent, box->xmin / 2 + box->xmax / 2,
							box->ymin / 2 + box->ymax / 2);
}
