/*-------------------------------------------------------------------------
 *
 * refine.c
 *	  WKB to GEOS conversion and exact predicate evaluation.
 *
 * IDENTIFICATION
 *	  src/geom/refine.c
 *
 *-------------------------------------------------------------------------
 */
#include "geom/refine.h"

#include <geos_c.h>

#include "geom/wkb.h"
#include "utils/memutils.h"

struct Refiner
{
	GEOSContextHandle_t ctx;
	GEOSGeometry *query;
	const GEOSPreparedGeometry *prepared;
	GEOSGeometry *current;		/* candidate being tested, if any */
	FestPredicate predicate;
	double		distance;		/* dwithin */
	const char *wkb_error;		/* conversion failure not raised by GEOS */
	char		geos_error[1024];	/* last GEOS error message */
	MemoryContextCallback cleanup;
};

static void
geos_error_handler(const char *message, void *userdata)
{
	Refiner    *rf = (Refiner *) userdata;

	strlcpy(rf->geos_error, message, sizeof(rf->geos_error));
}

/* Release every GEOS object; runs when the owning context is reset. */
static void
refiner_cleanup(void *arg)
{
	Refiner    *rf = (Refiner *) arg;

	if (rf->ctx == NULL)
		return;
	if (rf->current)
		GEOSGeom_destroy_r(rf->ctx, rf->current);
	if (rf->prepared)
		GEOSPreparedGeom_destroy_r(rf->ctx, rf->prepared);
	if (rf->query)
		GEOSGeom_destroy_r(rf->ctx, rf->query);
	GEOS_finish_r(rf->ctx);
	rf->ctx = NULL;
}

static GEOSGeometry *build_geometry(Refiner *rf, WkbReader *r, int depth);

static bool
conversion_failed(Refiner *rf, const char *message)
{
	if (rf->wkb_error == NULL)
		rf->wkb_error = message;
	return false;
}

/*
 * Read n points into a new 2-D coordinate sequence.  Rings are closed and
 * padded to four points, single-point lines doubled, as PostGIS does.
 */
static GEOSCoordSequence *
read_sequence(Refiner *rf, WkbReader *r, const WkbHeader *h, uint32 n,
			  bool ring)
{
	size_t		point_bytes = (size_t) h->ndims * 8;
	uint32		size = n;
	double	   *xy;
	GEOSCoordSequence *seq;

	if (n > (r->len - r->pos) / point_bytes)
	{
		conversion_failed(rf, "WKB point count exceeds the data");
		return NULL;
	}

	xy = palloc((Max(n, 1) + 4) * 2 * sizeof(double));
	for (uint32 i = 0; i < n; i++)
	{
		if (!wkb_read_double(r, h->big_endian, &xy[2 * i]) ||
			!wkb_read_double(r, h->big_endian, &xy[2 * i + 1]) ||
			!wkb_skip(r, (size_t) (h->ndims - 2) * 8))
		{
			conversion_failed(rf, r->error);
			return NULL;
		}
	}

	if (ring && n > 0)
	{
		if (xy[0] != xy[2 * (n - 1)] || xy[1] != xy[2 * (n - 1) + 1])
		{
			xy[2 * size] = xy[0];
			xy[2 * size + 1] = xy[1];
			size++;
		}
		while (size < 4)
		{
			xy[2 * size] = xy[2 * (size - 1)];
			xy[2 * size + 1] = xy[2 * (size - 1) + 1];
			size++;
		}
	}
	else if (!ring && n == 1)
	{
		xy[2] = xy[0];
		xy[3] = xy[1];
		size = 2;
	}

	seq = GEOSCoordSeq_create_r(rf->ctx, size, 2);
	if (seq == NULL)
		return NULL;
	for (uint32 i = 0; i < size; i++)
		if (!GEOSCoordSeq_setXY_r(rf->ctx, seq, i, xy[2 * i], xy[2 * i + 1]))
		{
			GEOSCoordSeq_destroy_r(rf->ctx, seq);
			return NULL;
		}
	pfree(xy);
	return seq;
}

static GEOSGeometry *
build_polygon(Refiner *rf, WkbReader *r, const WkbHeader *h)
{
	uint32		nrings;
	GEOSGeometry **rings;
	GEOSGeometry *polygon;
	uint32		built = 0;

	if (!wkb_read_uint32(r, h->big_endian, &nrings))
	{
		conversion_failed(rf, r->error);
		return NULL;
	}
	if (nrings == 0)
		return GEOSGeom_createEmptyPolygon_r(rf->ctx);
	if (nrings > (r->len - r->pos) / 4)
	{
		conversion_failed(rf, "WKB ring count exceeds the data");
		return NULL;
	}

	rings = palloc(nrings * sizeof(GEOSGeometry *));
	for (; built < nrings; built++)
	{
		uint32		n;
		GEOSCoordSequence *seq;

		if (!wkb_read_uint32(r, h->big_endian, &n))
		{
			conversion_failed(rf, r->error);
			break;
		}
		seq = read_sequence(rf, r, h, n, true);
		if (seq == NULL)
			break;
		rings[built] = GEOSGeom_createLinearRing_r(rf->ctx, seq);
		if (rings[built] == NULL)
			break;
	}
	if (built < nrings)
	{
		for (uint32 i = 0; i < built; i++)
			GEOSGeom_destroy_r(rf->ctx, rings[i]);
		return NULL;
	}

	/* an empty shell makes the whole polygon empty */
	if (GEOSisEmpty_r(rf->ctx, rings[0]) == 1)
	{
		for (uint32 i = 0; i < nrings; i++)
			GEOSGeom_destroy_r(rf->ctx, rings[i]);
		return GEOSGeom_createEmptyPolygon_r(rf->ctx);
	}

	polygon = GEOSGeom_createPolygon_r(rf->ctx, rings[0], rings + 1, nrings - 1);
	pfree(rings);
	return polygon;
}

static GEOSGeometry *
build_collection(Refiner *rf, WkbReader *r, const WkbHeader *h, int depth)
{
	uint32		n;
	int			geos_type;
	GEOSGeometry **members;
	uint32		built = 0;
	GEOSGeometry *result;

	switch (h->type)
	{
		case WKB_MULTIPOINT:
			geos_type = GEOS_MULTIPOINT;
			break;
		case WKB_MULTILINESTRING:
			geos_type = GEOS_MULTILINESTRING;
			break;
		case WKB_MULTIPOLYGON:
			geos_type = GEOS_MULTIPOLYGON;
			break;
		default:				/* GEOMETRYCOLLECTION, TIN */
			geos_type = GEOS_GEOMETRYCOLLECTION;
			break;
	}

	if (!wkb_read_uint32(r, h->big_endian, &n))
	{
		conversion_failed(rf, r->error);
		return NULL;
	}
	if (n == 0)
		return GEOSGeom_createEmptyCollection_r(rf->ctx, geos_type);
	if (n > (r->len - r->pos) / 5)
	{
		conversion_failed(rf, "WKB member count exceeds the data");
		return NULL;
	}

	/*
	 * Empty members add no point to the set, and GEOS 3.11 can crash on them
	 * (a prepared Contains of MULTIPOINT(EMPTY, 1 1)), so they are left out.
	 */
	members = palloc(n * sizeof(GEOSGeometry *));
	for (uint32 i = 0; i < n; i++)
	{
		GEOSGeometry *member = build_geometry(rf, r, depth + 1);

		if (member == NULL)
		{
			for (uint32 j = 0; j < built; j++)
				GEOSGeom_destroy_r(rf->ctx, members[j]);
			return NULL;
		}
		if (GEOSisEmpty_r(rf->ctx, member) == 1)
			GEOSGeom_destroy_r(rf->ctx, member);
		else
			members[built++] = member;
	}
	if (built == 0)
		result = GEOSGeom_createEmptyCollection_r(rf->ctx, geos_type);
	else
		result = GEOSGeom_createCollection_r(rf->ctx, geos_type, members, built);
	pfree(members);
	return result;
}

/* Build one (sub)geometry; NULL on failure with the reason recorded. */
static GEOSGeometry *
build_geometry(Refiner *rf, WkbReader *r, int depth)
{
	WkbHeader	h;

	if (depth > WKB_MAX_DEPTH)
	{
		conversion_failed(rf, "geometry is nested too deeply");
		return NULL;
	}
	if (!wkb_read_header(r, &h))
	{
		conversion_failed(rf, r->error);
		return NULL;
	}

	switch (h.type)
	{
		case WKB_POINT:
			{
				double		x;
				double		y;

				if (!wkb_read_double(r, h.big_endian, &x) ||
					!wkb_read_double(r, h.big_endian, &y) ||
					!wkb_skip(r, (size_t) (h.ndims - 2) * 8))
				{
					conversion_failed(rf, r->error);
					return NULL;
				}
				if (isnan(x) && isnan(y))
					return GEOSGeom_createEmptyPoint_r(rf->ctx);
				return GEOSGeom_createPointFromXY_r(rf->ctx, x, y);
			}
		case WKB_LINESTRING:
			{
				uint32		n;
				GEOSCoordSequence *seq;

				if (!wkb_read_uint32(r, h.big_endian, &n))
				{
					conversion_failed(rf, r->error);
					return NULL;
				}
				if (n == 0)
					return GEOSGeom_createEmptyLineString_r(rf->ctx);
				seq = read_sequence(rf, r, &h, n, false);
				if (seq == NULL)
					return NULL;
				return GEOSGeom_createLineString_r(rf->ctx, seq);
			}
		case WKB_POLYGON:
		case WKB_TRIANGLE:
			return build_polygon(rf, r, &h);
		case WKB_MULTIPOINT:
		case WKB_MULTILINESTRING:
		case WKB_MULTIPOLYGON:
		case WKB_GEOMETRYCOLLECTION:
		case WKB_TIN:
			return build_collection(rf, r, &h, depth);
		case WKB_POLYHEDRALSURFACE:
			conversion_failed(rf, "exact predicates on PolyhedralSurface geometries are not supported (PostGIS refuses them too)");
			return NULL;
		default:
			conversion_failed(rf, "geometries with arcs must be linearised before refinement");
			return NULL;
	}
}

/* Convert a whole WKB buffer; NULL on failure. */
static GEOSGeometry *
wkb_to_geos(Refiner *rf, const uint8 *wkb, size_t len)
{
	WkbReader	r = {wkb, len, 0, NULL};
	GEOSGeometry *g;

	rf->wkb_error = NULL;
	rf->geos_error[0] = '\0';
	g = build_geometry(rf, &r, 0);
	if (g != NULL && r.pos != len)
	{
		GEOSGeom_destroy_r(rf->ctx, g);
		conversion_failed(rf, "WKB has trailing bytes after the geometry");
		return NULL;
	}
	return g;
}

static const char *
failure_reason(Refiner *rf)
{
	if (rf->wkb_error != NULL)
		return rf->wkb_error;
	if (rf->geos_error[0] != '\0')
		return rf->geos_error;
	return "unknown GEOS failure";
}

/*
 * Prepare the query geometry for one predicate.  The Refiner lives in the
 * current memory context and is torn down with it.
 */
Refiner *
refiner_create(const uint8 *query_wkb, size_t query_len, FestPredicate predicate)
{
	Refiner    *rf = palloc0(sizeof(Refiner));

	rf->predicate = predicate;
	rf->ctx = GEOS_init_r();
	if (rf->ctx == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not initialise GEOS")));
	GEOSContext_setErrorMessageHandler_r(rf->ctx, geos_error_handler, rf);
	rf->cleanup.func = refiner_cleanup;
	rf->cleanup.arg = rf;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &rf->cleanup);

	rf->query = wkb_to_geos(rf, query_wkb, query_len);
	if (rf->query == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not convert the query geometry for GEOS"),
				 errdetail("%s", failure_reason(rf))));

	if (predicate != PRED_EQUALS)
	{
		rf->prepared = GEOSPrepare_r(rf->ctx, rf->query);
		if (rf->prepared == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not prepare the query geometry"),
					 errdetail("%s", failure_reason(rf))));
	}
	return rf;
}

/* The distance of dwithin (checked by the caller: finite, >= 0). */
void
refiner_set_distance(Refiner *rf, double distance)
{
	rf->distance = distance;
}

/* ST_<predicate>(object, query) for one candidate object given as WKB. */
bool
refiner_test(Refiner *rf, const uint8 *wkb, size_t len, int64 id)
{
	char		result;
	const GEOSPreparedGeometry *pq = rf->prepared;
	GEOSGeometry *obj;

	obj = wkb_to_geos(rf, wkb, len);
	if (obj == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("could not convert the geometry of object " INT64_FORMAT " for GEOS",
						id),
				 errdetail("%s", failure_reason(rf))));
	rf->current = obj;

	/* the query is prepared, so each predicate is asked from its side */
	switch (rf->predicate)
	{
		case PRED_INTERSECTS:
			result = GEOSPreparedIntersects_r(rf->ctx, pq, obj);
			break;
		case PRED_CONTAINS:		/* o contains g  <=>  g within o */
			result = GEOSPreparedWithin_r(rf->ctx, pq, obj);
			break;
		case PRED_WITHIN:		/* o within g  <=>  g contains o */
			result = GEOSPreparedContains_r(rf->ctx, pq, obj);
			break;
		case PRED_COVERS:		/* o covers g  <=>  g covered by o */
			result = GEOSPreparedCoveredBy_r(rf->ctx, pq, obj);
			break;
		case PRED_COVEREDBY:	/* o covered by g  <=>  g covers o */
			result = GEOSPreparedCovers_r(rf->ctx, pq, obj);
			break;
		case PRED_EQUALS:
			result = GEOSEquals_r(rf->ctx, obj, rf->query);
			break;
		case PRED_TOUCHES:
			result = GEOSPreparedTouches_r(rf->ctx, pq, obj);
			break;
		case PRED_OVERLAPS:
			result = GEOSPreparedOverlaps_r(rf->ctx, pq, obj);
			break;
		case PRED_DISJOINT:
			result = GEOSPreparedDisjoint_r(rf->ctx, pq, obj);
			break;
		case PRED_DWITHIN:		/* symmetric */
			result = GEOSPreparedDistanceWithin_r(rf->ctx, pq, obj, rf->distance);
			break;
		default:
			result = 2;
			break;
	}

	rf->current = NULL;
	GEOSGeom_destroy_r(rf->ctx, obj);

	if (result == 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("GEOS could not evaluate %s for object " INT64_FORMAT,
						predicate_names[rf->predicate], id),
				 errdetail("%s", failure_reason(rf))));
	return result == 1;
}
