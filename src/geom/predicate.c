/*-------------------------------------------------------------------------
 *
 * predicate.c
 *	  Filter tests on MBRs and exact evaluation for point objects.
 *
 * IDENTIFICATION
 *	  src/geom/predicate.c
 *
 *-------------------------------------------------------------------------
 */
#include "geom/predicate.h"

#include "lib/stringinfo.h"

/* In FestPredicate order; these are the spellings accepted in SQL. */
const char *const predicate_names[] = {
	"intersects", "contains", "within", "covers", "coveredby",
	"equals", "touches", "overlaps", "disjoint", "dwithin", NULL
};

FestPredicate
predicate_parse(const char *name)
{
	StringInfoData accepted;

	/* the usual spelling first: every query pays for this look-up */
	for (int i = 0; predicate_names[i] != NULL; i++)
		if (strcmp(name, predicate_names[i]) == 0)
			return (FestPredicate) i;
	for (int i = 0; predicate_names[i] != NULL; i++)
		if (pg_strcasecmp(name, predicate_names[i]) == 0)
			return (FestPredicate) i;

	initStringInfo(&accepted);
	for (int i = 0; predicate_names[i] != NULL; i++)
		appendStringInfo(&accepted, "%s'%s'", i > 0 ? ", " : "",
						 predicate_names[i]);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown spatial predicate \"%s\"", name),
			 errhint("Accepted predicates: %s.", accepted.data)));
	pg_unreachable();
}

/* May the subtree under an internal entry hold an answer? */
bool
predicate_descend(const SearchSpec *spec, const Mbr *node_box)
{
	switch (spec->predicate)
	{
		case PRED_CONTAINS:
		case PRED_COVERS:
		case PRED_EQUALS:
			return mbr_contains(node_box, &spec->query);
		case PRED_DISJOINT:
			return true;
		case PRED_DWITHIN:
			return mbr_min_distance(node_box, &spec->query) <= spec->distance;
		case PRED_INTERSECTS:
		case PRED_WITHIN:
		case PRED_COVEREDBY:
		case PRED_TOUCHES:
		case PRED_OVERLAPS:
			return mbr_intersects(node_box, &spec->query);
	}
	return true;
}

/* The MBR filter for a leaf entry (see the table in predicate.h). */
FilterVerdict
predicate_filter(const SearchSpec *spec, const Mbr *entry)
{
	bool		pass = false;

	switch (spec->predicate)
	{
		case PRED_INTERSECTS:
		case PRED_TOUCHES:
		case PRED_OVERLAPS:
			pass = mbr_intersects(entry, &spec->query);
			break;
		case PRED_WITHIN:
		case PRED_COVEREDBY:
			pass = mbr_contains(&spec->query, entry);
			break;
		case PRED_CONTAINS:
		case PRED_COVERS:
			pass = mbr_contains(entry, &spec->query);
			break;
		case PRED_EQUALS:
			pass = mbr_equals(entry, &spec->query);
			break;
		case PRED_DISJOINT:
			return mbr_intersects(entry, &spec->query) ? FILTER_CANDIDATE : FILTER_ACCEPT;
		case PRED_DWITHIN:
			if (mbr_min_distance(entry, &spec->query) > spec->distance)
				return FILTER_REJECT;
			return (spec->exact_distance && spec->shape == QUERY_POINT &&
					mbr_is_point(entry)) ? FILTER_ACCEPT : FILTER_CANDIDATE;
	}
	return pass ? FILTER_CANDIDATE : FILTER_REJECT;
}

/*
 * ST_<predicate>(POINT(x y), g) where g is the rectangle or the point
 * described by query.
 */
bool
predicate_eval_point(FestPredicate predicate, QueryShape shape,
					 const Mbr *query, double x, double y)
{
	if (shape == QUERY_POINT)
	{
		bool		same = (x == query->xmin && y == query->ymin);

		switch (predicate)
		{
			case PRED_INTERSECTS:
			case PRED_CONTAINS:
			case PRED_WITHIN:
			case PRED_COVERS:
			case PRED_COVEREDBY:
			case PRED_EQUALS:
				return same;
			case PRED_DISJOINT:
				return !same;
			case PRED_TOUCHES:	/* a point has no boundary */
			case PRED_OVERLAPS: /* two points never overlap */
				return false;
			case PRED_DWITHIN:
				break;
		}
	}
	else
	{
		bool		closed = (x >= query->xmin && x <= query->xmax &&
							  y >= query->ymin && y <= query->ymax);
		bool		interior = (x > query->xmin && x < query->xmax &&
								y > query->ymin && y < query->ymax);

		Assert(shape == QUERY_RECTANGLE);
		switch (predicate)
		{
			case PRED_INTERSECTS:
			case PRED_COVEREDBY:
				return closed;
			case PRED_WITHIN:
				return interior;
			case PRED_TOUCHES:
				return closed && !interior;
			case PRED_DISJOINT:
				return !closed;
			case PRED_CONTAINS: /* a point cannot hold an area */
			case PRED_COVERS:
			case PRED_EQUALS:
			case PRED_OVERLAPS: /* different dimensions */
				return false;
			case PRED_DWITHIN:
				break;
		}
	}
	/* only dwithin gets here: it needs a distance (see predicate.h) */
	elog(ERROR, "predicate_eval_point cannot decide dwithin");
	return false;
}
