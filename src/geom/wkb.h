/*-------------------------------------------------------------------------
 *
 * wkb.h
 *	  Reading geometries in (E)WKB.
 *
 * festival receives PostGIS geometries through ST_AsEWKB/ST_AsBinary, the
 * stable OGC format (PostGIS ships no C headers on Debian; see
 * research/build-environment.md).  The reader accepts both byte orders,
 * EWKB flags (Z 0x80000000, M 0x40000000, SRID 0x20000000) and ISO type
 * codes (1000s Z, 2000s M, 3000s ZM), and every OGC type PostGIS writes.
 * Only x and y matter for MBRs and predicates.
 *
 * wkb_inspect computes what the index needs from one geometry: its type,
 * SRID, exact MBR, emptiness, whether it has arcs (which PostGIS
 * linearises before evaluating predicates) and whether it is an
 * axis-aligned rectangle (which makes some filters exact).
 *
 * IDENTIFICATION
 *	  src/geom/wkb.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_WKB_H
#define FEST_WKB_H

#include "festival.h"
#include "geom/mbr.h"

/* OGC / PostGIS geometry type codes */
#define WKB_POINT				1
#define WKB_LINESTRING			2
#define WKB_POLYGON				3
#define WKB_MULTIPOINT			4
#define WKB_MULTILINESTRING		5
#define WKB_MULTIPOLYGON		6
#define WKB_GEOMETRYCOLLECTION	7
#define WKB_CIRCULARSTRING		8
#define WKB_COMPOUNDCURVE		9
#define WKB_CURVEPOLYGON		10
#define WKB_MULTICURVE			11
#define WKB_MULTISURFACE		12
#define WKB_POLYHEDRALSURFACE	15
#define WKB_TIN					16
#define WKB_TRIANGLE			17

/* Nesting deeper than this is refused (collections of collections...). */
#define WKB_MAX_DEPTH			32

typedef struct WkbInfo
{
	uint32		type;			/* type code of the outermost geometry */
	bool		has_srid;
	int32		srid;
	bool		empty;			/* no coordinates at all */
	bool		has_arcs;		/* contains circular strings */
	bool		is_point;		/* a non-empty POINT */
	bool		is_rectangle;	/* POLYGON equal to its MBR, positive area */
	Mbr			box;			/* exact MBR of the coordinates */
} WkbInfo;

/* A cursor over one WKB buffer. */
typedef struct WkbReader
{
	const uint8 *data;
	size_t		len;
	size_t		pos;
	const char *error;			/* set on the first failure */
} WkbReader;

/* Header of one (sub)geometry. */
typedef struct WkbHeader
{
	bool		big_endian;
	uint32		type;			/* base type code */
	int			ndims;			/* 2, 3 or 4 doubles per point */
	bool		has_srid;
	int32		srid;
} WkbHeader;

extern bool wkb_read_header(WkbReader *r, WkbHeader *h);
extern bool wkb_read_uint32(WkbReader *r, bool big_endian, uint32 *value);
extern bool wkb_read_double(WkbReader *r, bool big_endian, double *value);
extern bool wkb_skip(WkbReader *r, size_t bytes);

extern bool wkb_inspect(const uint8 *data, size_t len, WkbInfo *info,
						const char **error);

#endif							/* FEST_WKB_H */
