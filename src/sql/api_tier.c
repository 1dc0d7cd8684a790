/*-------------------------------------------------------------------------
 *
 * api_tier.c
 *	  SQL functions of tiered indexes (tier/tier.h, docs/tiers.md):
 *	  festival.tier_pages(index) shows where each page lives, and
 *	  festival.tier_hot_simulate() runs the hot-page model (Fevgas 2019,
 *	  Alg. 9) over a given access sequence, so that its weights can be
 *	  compared with hand-computed ones.
 *
 * IDENTIFICATION
 *	  src/sql/api_tier.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "tier/tier.h"

#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(festival_tier_pages);
PG_FUNCTION_INFO_V1(festival_tier_hot_simulate);

static const char *const tier_labels[] = {"slow", "fast"};

/*
 * festival.tier_pages(index): page, tier, level, weight, accesses, hot for
 * every page the tier map knows.
 */
Datum
festival_tier_pages(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OpenIndex  *ix;

	InitMaterializedSRF(fcinfo, 0);
	ix = ix_begin_op(name, IX_READ);
	if (ix->tier == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" has no fast device", name),
				 errhint("Tiers are chosen at creation: festival.create_index(..., options => '{\"fast_device\": \"...\", \"placement\": \"level\"}').")));
	for (PageId page = 0; page < tier_page_count(ix->tier); page++)
	{
		TierPageInfo info;
		Datum		values[6];
		bool		nulls[6] = {false};

		tier_page_info(ix->tier, page, &info);
		if (info.tier < 0)
			continue;
		values[0] = Int64GetDatum((int64) page);
		values[1] = CStringGetTextDatum(tier_labels[info.tier]);
		values[2] = Int32GetDatum(info.level);
		nulls[2] = info.level < 0;
		values[3] = Float8GetDatum(info.weight);
		nulls[3] = isnan(info.weight);
		values[4] = Int64GetDatum(info.accesses);
		values[5] = BoolGetDatum(info.hot);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	ix_end_op(ix);
	return (Datum) 0;
}

static int64 *
int8_array(ArrayType *a, const char *what, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int64	   *out;

	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what),
				 errhint("Give one element per access, e.g. ARRAY[2, 3, 2].")));
	deconstruct_array(a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, n);
	out = palloc(sizeof(int64) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain NULL", what),
					 errhint("Use 0 for \"no parent\".")));
		out[i] = DatumGetInt64(elems[i]);
	}
	return out;
}

/* The level a page was last read at (refuse_impossible_parents). */
typedef struct SimLevel
{
	int64		page;			/* hash key */
	int64		level;
} SimLevel;

/*
 * A parent is the page read last one level up (docs/tiers.md), so a page
 * cannot be its own parent, and a parent read before must have been read
 * one level above its child: that rules out cycles too, since levels grow
 * strictly along every chain of parents.  A parent not read yet has no
 * weight and is taken as given.
 */
static void
refuse_impossible_parents(const int64 *pages, const int64 *levels,
						  const int64 *parents, int n)
{
	HASHCTL		ctl;
	HTAB	   *seen;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(SimLevel);
	ctl.hcxt = CurrentMemoryContext;
	seen = hash_create("tier_hot_simulate levels", Max(n, 16), &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int i = 0; i < n; i++)
	{
		SimLevel   *p;

		if (parents[i] == pages[i])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("access %d names page " INT64_FORMAT " as its own parent", i + 1, pages[i]),
					 errhint("A parent is the page read last one level up; 0 means none (a root).")));
		if (parents[i] != 0 &&
			(p = hash_search(seen, &parents[i], HASH_FIND, NULL)) != NULL &&
			p->level != levels[i] + 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("access %d reads page " INT64_FORMAT " at level " INT64_FORMAT " under parent " INT64_FORMAT ", which was last read at level " INT64_FORMAT,
							i + 1, pages[i], levels[i], parents[i], p->level),
					 errhint("A parent is read one level above its child (level + 1); any other level would make the pages' parents a cycle.")));
		p = hash_search(seen, &pages[i], HASH_ENTER, NULL);
		p->level = levels[i];
	}
	hash_destroy(seen);
}

/*
 * festival.tier_hot_simulate(pages, levels, parents, selectivity, capacity):
 * one row per access with the weight, the level's moving average and the
 * decision.  parents[i] = 0 means a root (no parent).
 */
Datum
festival_tier_hot_simulate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n,
				nl,
				np;
	int64	   *pages;
	int64	   *levels;
	int64	   *parents;
	double		s;
	int64		capacity;
	HotModel	model;

	for (int i = 0; i < 5; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("arguments of festival.tier_hot_simulate must not be NULL"),
					 errhint("Give pages, levels, parents (0: none), the selectivity and a capacity (0: unlimited).")));
	pages = int8_array(PG_GETARG_ARRAYTYPE_P(0), "pages", &n);
	levels = int8_array(PG_GETARG_ARRAYTYPE_P(1), "levels", &nl);
	parents = int8_array(PG_GETARG_ARRAYTYPE_P(2), "parents", &np);
	s = PG_GETARG_FLOAT8(3);
	capacity = PG_GETARG_INT64(4);
	if (nl != n || np != n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pages, levels and parents must have the same length"),
				 errhint("Give one level and one parent per access.")));
	if (!(s >= 1.0 && s <= 2.5))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("selectivity %g is outside 1.0 to 2.5", s),
				 errhint("The thesis used s from 1.0 to 2.5.")));
	if (capacity < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must not be negative"),
				 errhint("Use 0 for an unlimited fast tier.")));
	for (int i = 0; i < n; i++)
		if (pages[i] <= 0 || levels[i] < 0 || levels[i] >= FEST_MAX_LEVELS ||
			parents[i] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("access %d is invalid: pages are positive, levels from 0 to %d, parents 0 or positive",
							i + 1, FEST_MAX_LEVELS - 1),
					 errhint("Page 0 stands for \"no parent\".")));
	refuse_impossible_parents(pages, levels, parents, n);

	InitMaterializedSRF(fcinfo, 0);
	hot_model_init(&model, s, capacity, CurrentMemoryContext);
	for (int i = 0; i < n; i++)
	{
		HotStep		step = hot_model_access(&model, (PageId) pages[i], (int) levels[i],
											(PageId) parents[i], false);
		Datum		values[7];
		bool		nulls[7] = {false};

		values[0] = Int32GetDatum(i + 1);
		values[1] = Int64GetDatum(pages[i]);
		values[2] = Float8GetDatum(step.weight);
		values[3] = Float8GetDatum(step.average);
		values[4] = BoolGetDatum(step.eligible);
		values[5] = BoolGetDatum(step.promoted);
		values[6] = Int64GetDatum((int64) step.demoted);
		nulls[6] = step.demoted == InvalidPageId;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
