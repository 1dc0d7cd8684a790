/*-------------------------------------------------------------------------
 *
 * wkb.c
 *	  The (E)WKB reader and wkb_inspect.
 *
 * Every count read from the buffer is checked against the bytes left
 * before it is used, so damaged or hostile input is rejected with a
 * message instead of looping or reading past the end.
 *
 * IDENTIFICATION
 *	  src/geom/wkb.c
 *
 *-------------------------------------------------------------------------
 */
#include "geom/wkb.h"

#include <math.h>

#include "port/pg_bswap.h"

#define EWKB_Z_FLAG		0x80000000
#define EWKB_M_FLAG		0x40000000
#define EWKB_SRID_FLAG	0x20000000

static bool
fail(WkbReader *r, const char *message)
{
	if (r->error == NULL)
		r->error = message;
	return false;
}

bool
wkb_skip(WkbReader *r, size_t bytes)
{
	if (r->len - r->pos < bytes)
		return fail(r, "WKB ends in the middle of a geometry");
	r->pos += bytes;
	return true;
}

bool
wkb_read_uint32(WkbReader *r, bool big_endian, uint32 *value)
{
	uint32		v;

	if (r->len - r->pos < 4)
		return fail(r, "WKB ends in the middle of a geometry");
	memcpy(&v, r->data + r->pos, 4);
	r->pos += 4;
	*value = big_endian ? pg_bswap32(v) : v;
	return true;
}

bool
wkb_read_double(WkbReader *r, bool big_endian, double *value)
{
	uint64		v;

	if (r->len - r->pos < 8)
		return fail(r, "WKB ends in the middle of a geometry");
	memcpy(&v, r->data + r->pos, 8);
	r->pos += 8;
	if (big_endian)
		v = pg_bswap64(v);
	memcpy(value, &v, 8);
	return true;
}

/* Read a byte-order mark and a type word, decoding EWKB and ISO variants. */
bool
wkb_read_header(WkbReader *r, WkbHeader *h)
{
	uint32		word;
	uint32		iso;
	bool		has_z;
	bool		has_m;

	if (r->len - r->pos < 1)
		return fail(r, "WKB ends in the middle of a geometry");
	if (r->data[r->pos] > 1)
		return fail(r, "WKB has an invalid byte-order mark");
	h->big_endian = (r->data[r->pos] == 0);
	r->pos++;

	if (!wkb_read_uint32(r, h->big_endian, &word))
		return false;

	has_z = (word & EWKB_Z_FLAG) != 0;
	has_m = (word & EWKB_M_FLAG) != 0;
	h->has_srid = (word & EWKB_SRID_FLAG) != 0;
	word &= 0x0FFFFFFF;

	/* ISO codes: 1000 + t (Z), 2000 + t (M), 3000 + t (ZM) */
	iso = word / 1000;
	h->type = word % 1000;
	if (iso == 1 || iso == 3)
		has_z = true;
	if (iso == 2 || iso == 3)
		has_m = true;
	if (iso > 3)
		return fail(r, "WKB has an unknown geometry type code");
	if (h->type < WKB_POINT || h->type > WKB_TRIANGLE ||
		h->type == 13 || h->type == 14)
		return fail(r, "WKB has an unknown geometry type code");

	h->ndims = 2 + (has_z ? 1 : 0) + (has_m ? 1 : 0);
	h->srid = 0;
	if (h->has_srid)
	{
		uint32		srid;

		if (!wkb_read_uint32(r, h->big_endian, &srid))
			return false;
		h->srid = (int32) srid;
	}
	return true;
}

/* State of one wkb_inspect call. */
typedef struct InspectState
{
	WkbReader	r;
	WkbInfo    *info;
} InspectState;

/*
 * Read n points, extending the MBR.  When keep is not NULL the first
 * keep_max points are copied there (used to recognise rectangles).
 */
static bool
inspect_points(InspectState *st, const WkbHeader *h, uint32 n,
			   double (*keep)[2], int keep_max)
{
	size_t		point_bytes = (size_t) h->ndims * 8;
	const uint8 *p;

	if (n > (st->r.len - st->r.pos) / point_bytes)
		return fail(&st->r, "WKB point count exceeds the data");

	/*
	 * The n points are in the buffer (checked above), so they are read
	 * without a bounds check per coordinate: every query's geometry passes
	 * here, which shows in the cost of a query that finds nothing.
	 */
	p = st->r.data + st->r.pos;
	for (uint32 i = 0; i < n; i++, p += point_bytes)
	{
		uint64		bits[2];
		double		x;
		double		y;

		memcpy(bits, p, 16);
		if (h->big_endian)
		{
			bits[0] = pg_bswap64(bits[0]);
			bits[1] = pg_bswap64(bits[1]);
		}
		memcpy(&x, &bits[0], 8);
		memcpy(&y, &bits[1], 8);
		if (!isfinite(x) || !isfinite(y))
		{
			st->r.pos = p - st->r.data;
			return fail(&st->r, "geometry has a non-finite coordinate");
		}
		mbr_extend_point(&st->info->box, x, y);
		if (keep != NULL && (int) i < keep_max)
		{
			keep[i][0] = x;
			keep[i][1] = y;
		}
	}
	if (n > 0)
		st->info->empty = false;
	st->r.pos += (size_t) n * point_bytes;
	return true;
}

/*
 * A 5-point closed ring that visits the four corners of its MBR, each once,
 * moving along one axis per side (in either direction).  Degenerate rings
 * that go back and forth along an edge are not rectangles.
 */
static bool
ring_is_rectangle(double (*p)[2], const Mbr *box)
{
	int			corners_seen = 0;

	if (box->xmin >= box->xmax || box->ymin >= box->ymax)
		return false;
	if (p[0][0] != p[4][0] || p[0][1] != p[4][1])
		return false;
	for (int i = 0; i < 4; i++)
	{
		bool		same_x = p[i][0] == p[i + 1][0];
		bool		same_y = p[i][1] == p[i + 1][1];
		int			corner;

		if ((p[i][0] != box->xmin && p[i][0] != box->xmax) ||
			(p[i][1] != box->ymin && p[i][1] != box->ymax))
			return false;
		/* each side moves along exactly one axis */
		if (same_x == same_y)
			return false;
		corner = (p[i][0] == box->xmax ? 1 : 0) | (p[i][1] == box->ymax ? 2 : 0);
		if (corners_seen & (1 << corner))
			return false;
		corners_seen |= 1 << corner;
	}
	return corners_seen == 0xF;
}

static bool inspect_geometry(InspectState *st, int depth, bool outermost);

static bool
inspect_geometry(InspectState *st, int depth, bool outermost)
{
	WkbHeader	h;
	uint32		n;

	if (depth > WKB_MAX_DEPTH)
		return fail(&st->r, "geometry is nested too deeply");
	if (!wkb_read_header(&st->r, &h))
		return false;

	if (outermost)
	{
		st->info->type = h.type;
		st->info->has_srid = h.has_srid;
		st->info->srid = h.srid;
	}
	if (h.type == WKB_CIRCULARSTRING)
		st->info->has_arcs = true;

	switch (h.type)
	{
		case WKB_POINT:
			{
				double		x;
				double		y;

				if (!wkb_read_double(&st->r, h.big_endian, &x) ||
					!wkb_read_double(&st->r, h.big_endian, &y) ||
					!wkb_skip(&st->r, (size_t) (h.ndims - 2) * 8))
					return false;
				/* POINT EMPTY is written with NaN coordinates */
				if (isnan(x) && isnan(y))
					return true;
				if (!isfinite(x) || !isfinite(y))
					return fail(&st->r, "geometry has a non-finite coordinate");
				mbr_extend_point(&st->info->box, x, y);
				st->info->empty = false;
				if (outermost)
					st->info->is_point = true;
				return true;
			}
		case WKB_LINESTRING:
		case WKB_CIRCULARSTRING:
			if (!wkb_read_uint32(&st->r, h.big_endian, &n))
				return false;
			return inspect_points(st, &h, n, NULL, 0);

		case WKB_POLYGON:
		case WKB_TRIANGLE:
			{
				uint32		nrings;
				double		corners[5][2];
				uint32		first_ring_points = 0;

				if (!wkb_read_uint32(&st->r, h.big_endian, &nrings))
					return false;
				if (nrings > (st->r.len - st->r.pos) / 4)
					return fail(&st->r, "WKB ring count exceeds the data");
				for (uint32 i = 0; i < nrings; i++)
				{
					if (!wkb_read_uint32(&st->r, h.big_endian, &n))
						return false;
					if (i == 0)
						first_ring_points = n;
					if (!inspect_points(st, &h, n, i == 0 ? corners : NULL, 5))
						return false;
				}
				if (outermost && h.type == WKB_POLYGON && nrings == 1 &&
					first_ring_points == 5)
					st->info->is_rectangle = ring_is_rectangle(corners,
															   &st->info->box);
				return true;
			}

		case WKB_MULTIPOINT:
		case WKB_MULTILINESTRING:
		case WKB_MULTIPOLYGON:
		case WKB_GEOMETRYCOLLECTION:
		case WKB_COMPOUNDCURVE:
		case WKB_CURVEPOLYGON:
		case WKB_MULTICURVE:
		case WKB_MULTISURFACE:
		case WKB_POLYHEDRALSURFACE:
		case WKB_TIN:
			if (!wkb_read_uint32(&st->r, h.big_endian, &n))
				return false;
			/* each member needs at least a 5-byte header */
			if (n > (st->r.len - st->r.pos) / 5)
				return fail(&st->r, "WKB member count exceeds the data");
			for (uint32 i = 0; i < n; i++)
				if (!inspect_geometry(st, depth + 1, false))
					return false;
			return true;
	}
	return fail(&st->r, "WKB has an unknown geometry type code");
}

/*
 * The shape of nearly every query window: a little-endian 2D POLYGON of one
 * ring of five points, with or without an SRID, as PostGIS writes it on
 * this (little-endian) machine.  Fills info as inspect_geometry would and
 * returns true; anything else (another shape, a length that does not fit
 * exactly, a non-finite coordinate) returns false for the general reader,
 * which then also reports what is wrong.  Every query passes here, so its
 * cost shows in a query that finds nothing.
 */
static bool
inspect_window(const uint8 *data, size_t len, WkbInfo *info)
{
#ifdef WORDS_BIGENDIAN
	return false;
#else
	uint32		type;
	uint32		counts[2];
	size_t		pos = 5;
	double		corners[5][2];

	if (len < 5 || data[0] != 1)
		return false;
	memcpy(&type, data + 1, 4);
	if (type == (WKB_POLYGON | EWKB_SRID_FLAG))
		pos += 4;
	else if (type != WKB_POLYGON)
		return false;
	if (len != pos + 8 + 5 * 16)
		return false;
	memcpy(counts, data + pos, 8);
	if (counts[0] != 1 || counts[1] != 5)
		return false;
	memcpy(corners, data + pos + 8, sizeof(corners));

	memset(info, 0, sizeof(WkbInfo));
	mbr_set_empty(&info->box);
	for (int i = 0; i < 5; i++)
	{
		if (!isfinite(corners[i][0]) || !isfinite(corners[i][1]))
			return false;
		mbr_extend_point(&info->box, corners[i][0], corners[i][1]);
	}
	info->type = WKB_POLYGON;
	if (pos == 9)
	{
		info->has_srid = true;
		memcpy(&info->srid, data + 5, 4);
	}
	info->is_rectangle = ring_is_rectangle(corners, &info->box);
	return true;
#endif
}

/*
 * Inspect one geometry.  Returns false with *error set when the WKB is
 * malformed or has non-finite coordinates.
 */
bool
wkb_inspect(const uint8 *data, size_t len, WkbInfo *info, const char **error)
{
	InspectState st;

	if (inspect_window(data, len, info))
		return true;

	memset(info, 0, sizeof(WkbInfo));
	info->empty = true;
	mbr_set_empty(&info->box);

	st.r.data = data;
	st.r.len = len;
	st.r.pos = 0;
	st.r.error = NULL;
	st.info = info;

	if (!inspect_geometry(&st, 0, true))
	{
		*error = st.r.error;
		return false;
	}
	if (st.r.pos != len)
	{
		*error = "WKB has trailing bytes after the geometry";
		return false;
	}
	if (info->empty)
		info->is_rectangle = false;
	return true;
}
