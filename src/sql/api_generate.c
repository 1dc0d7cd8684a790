/*-------------------------------------------------------------------------
 *
 * api_generate.c
 *	  Seeded data and query generators: the coordinate streams behind
 *	  festival.generate_points, generate_windows and generate_knn_points.
 *
 * The SQL functions (festival--0.2.sql) check the table name and create
 * the table; these set-returning functions produce the coordinates from a
 * seed with gen/prng.h, so equal arguments give bit-identical rows on
 * every run and platform, and a different seed a different data set.
 *
 * Distributions (a small table of generators, see point_distributions):
 *	uniform				x, y uniform over the extent.
 *	gaussian_clusters	Carniel et al. 2018: 1,000,000 points in 125
 *						clusters of 8,000 around centers uniform in the
 *						extent.  The number of clusters follows n:
 *						k = round(n / 8000) clamped to [1, 125]; point id i
 *						belongs to cluster (i - 1) mod k.  The paper gives no
 *						spread: we take sigma = 1% of the extent's width
 *						(x) and height (y), keep centers 3 sigma inside the
 *						extent, and draw again the rare point that falls
 *						outside.
 *	zipf				skewed: the extent is cut into 32 x 32 cells, the
 *						cells are ranked by a seeded shuffle, and a point
 *						falls in the cell of rank r (1-based) with
 *						probability proportional to 1/r (Zipf, s = 1), then
 *						uniformly inside it.  The busiest cell holds about
 *						1/H(1024) = 13.3% of the points, twice the second.
 *
 * IDENTIFICATION
 *	  src/sql/api_generate.c
 *
 *-------------------------------------------------------------------------
 */
#include "festival.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "gen/prng.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#define CLUSTER_POINTS		8000	/* per cluster, full size (Carniel et al. 2018) */
#define CLUSTER_MAX			125
#define CLUSTER_SIGMA		0.01	/* share of the extent's side */
#define ZIPF_GRID			32

typedef struct Extent
{
	double		xmin;
	double		ymin;
	double		xmax;
	double		ymax;
} Extent;

typedef struct PointGenerator PointGenerator;

typedef struct PointDistribution
{
	const char *name;
	void		(*init) (PointGenerator *g);
	/* the coordinates of point id (1-based) */
	void		(*next) (PointGenerator *g, int64 id, double *x, double *y);
} PointDistribution;

struct PointGenerator
{
	Prng		prng;
	Extent		extent;
	int64		n;
	/* gaussian_clusters */
	int			nclusters;
	double	   *cx;
	double	   *cy;
	/* zipf */
	int		   *cell_of_rank;
	double	   *cumulative;		/* cumulative weight of ranks 0..r */
};

static double
width(const Extent *e)
{
	return e->xmax - e->xmin;
}

static double
height(const Extent *e)
{
	return e->ymax - e->ymin;
}

static void
uniform_init(PointGenerator *g)
{
}

static void
uniform_next(PointGenerator *g, int64 id, double *x, double *y)
{
	*x = g->extent.xmin + prng_uniform(&g->prng) * width(&g->extent);
	*y = g->extent.ymin + prng_uniform(&g->prng) * height(&g->extent);
}

static void
clusters_init(PointGenerator *g)
{
	int64		k = (g->n + CLUSTER_POINTS / 2) / CLUSTER_POINTS;
	double		insetx = 3 * CLUSTER_SIGMA * width(&g->extent);
	double		insety = 3 * CLUSTER_SIGMA * height(&g->extent);

	g->nclusters = (int) Max(1, Min(CLUSTER_MAX, k));
	g->cx = palloc(g->nclusters * sizeof(double));
	g->cy = palloc(g->nclusters * sizeof(double));
	for (int c = 0; c < g->nclusters; c++)
	{
		g->cx[c] = g->extent.xmin + insetx + prng_uniform(&g->prng) * (width(&g->extent) - 2 * insetx);
		g->cy[c] = g->extent.ymin + insety + prng_uniform(&g->prng) * (height(&g->extent) - 2 * insety);
	}
}

static void
clusters_next(PointGenerator *g, int64 id, double *x, double *y)
{
	int			c = (int) ((id - 1) % g->nclusters);
	const Extent *e = &g->extent;

	/* redraw until inside: deterministic, and rare with the 3-sigma inset */
	do
	{
		*x = g->cx[c] + prng_normal(&g->prng) * CLUSTER_SIGMA * width(e);
		*y = g->cy[c] + prng_normal(&g->prng) * CLUSTER_SIGMA * height(e);
	} while (*x < e->xmin || *x > e->xmax || *y < e->ymin || *y > e->ymax);
}

static void
zipf_init(PointGenerator *g)
{
	int			ncells = ZIPF_GRID * ZIPF_GRID;
	double		sum = 0;

	g->cell_of_rank = palloc(ncells * sizeof(int));
	g->cumulative = palloc(ncells * sizeof(double));
	for (int i = 0; i < ncells; i++)
		g->cell_of_rank[i] = i;
	/* Fisher-Yates: which cell gets which rank */
	for (int i = ncells - 1; i > 0; i--)
	{
		int			j = (int) prng_below(&g->prng, (uint32) (i + 1));
		int			t = g->cell_of_rank[i];

		g->cell_of_rank[i] = g->cell_of_rank[j];
		g->cell_of_rank[j] = t;
	}
	for (int r = 0; r < ncells; r++)
	{
		sum += 1.0 / (r + 1);
		g->cumulative[r] = sum;
	}
}

static void
zipf_next(PointGenerator *g, int64 id, double *x, double *y)
{
	int			ncells = ZIPF_GRID * ZIPF_GRID;
	double		target = prng_uniform(&g->prng) * g->cumulative[ncells - 1];
	int			lo = 0;
	int			hi = ncells - 1;
	int			cell;

	/* the first rank whose cumulative weight exceeds the target */
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (g->cumulative[mid] > target)
			hi = mid;
		else
			lo = mid + 1;
	}
	cell = g->cell_of_rank[lo];
	*x = g->extent.xmin + ((cell % ZIPF_GRID) + prng_uniform(&g->prng)) / ZIPF_GRID * width(&g->extent);
	*y = g->extent.ymin + ((cell / ZIPF_GRID) + prng_uniform(&g->prng)) / ZIPF_GRID * height(&g->extent);
}

static const PointDistribution point_distributions[] = {
	{"uniform", uniform_init, uniform_next},
	{"gaussian_clusters", clusters_init, clusters_next},
	{"zipf", zipf_init, zipf_next},
	{NULL}
};

static const PointDistribution *
lookup_distribution(const char *name)
{
	for (const PointDistribution *d = point_distributions; d->name != NULL; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown point distribution \"%s\"", name),
			 errhint("Use uniform, gaussian_clusters or zipf.")));
	return NULL;				/* keep the compiler quiet */
}

static void
read_extent(FunctionCallInfo fcinfo, int first, Extent *e)
{
	e->xmin = PG_GETARG_FLOAT8(first);
	e->ymin = PG_GETARG_FLOAT8(first + 1);
	e->xmax = PG_GETARG_FLOAT8(first + 2);
	e->ymax = PG_GETARG_FLOAT8(first + 3);
	if (!isfinite(e->xmin) || !isfinite(e->ymin) || !isfinite(e->xmax) || !isfinite(e->ymax) ||
		!(e->xmin < e->xmax) || !(e->ymin < e->ymax))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("extent must be a finite box with a positive width and height"),
				 errhint("Pass a box2d such as 'BOX(0 0,1 1)'::box2d.")));
}

/*
 * Most rows one generator call produces: 10^8 points are a table of about
 * 7 GB and take minutes; a mistyped count must not run until cancelled.
 * generator_target (festival--0.2.sql) checks the same bound.
 */
#define GENERATE_MAX_ROWS INT64CONST(100000000)

static void
check_count(int64 n)
{
	if (n <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of rows to generate must be positive, not " INT64_FORMAT, n),
				 errhint("Ask for at least one row.")));
	if (n > GENERATE_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot generate more than " INT64_FORMAT " rows in one call, not " INT64_FORMAT,
						GENERATE_MAX_ROWS, n),
				 errhint("Generate in several calls (different seeds, or ids offset by the earlier counts).")));
}

PG_FUNCTION_INFO_V1(festival_generated_points);
PG_FUNCTION_INFO_V1(festival_generated_windows);

/*
 * festival.generated_points(n, distribution, seed, xmin, ymin, xmax, ymax,
 * stream) -> (id, x, y): stream 'data' or 'knn' picks the sequence, so kNN
 * query points never repeat the data points of the same seed.
 */
Datum
festival_generated_points(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		n = PG_GETARG_INT64(0);
	char	   *distribution = text_to_cstring(PG_GETARG_TEXT_PP(1));
	int32		seed = PG_GETARG_INT32(2);
	char	   *stream = text_to_cstring(PG_GETARG_TEXT_PP(7));
	const PointDistribution *d;
	PointGenerator g;

	check_count(n);
	d = lookup_distribution(distribution);
	memset(&g, 0, sizeof(g));
	read_extent(fcinfo, 3, &g.extent);
	g.n = n;
	prng_init(&g.prng, seed, strcmp(stream, "knn") == 0 ? PRNG_STREAM_KNN : PRNG_STREAM_POINTS);
	d->init(&g);

	InitMaterializedSRF(fcinfo, 0);
	for (int64 id = 1; id <= n; id++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};
		double		x;
		double		y;

		CHECK_FOR_INTERRUPTS();
		d->next(&g, id, &x, &y);
		values[0] = Int64GetDatum(id);
		values[1] = Float8GetDatum(x);
		values[2] = Float8GetDatum(y);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * festival.generated_windows(n, area_percent, seed, xmin, ymin, xmax, ymax)
 * -> (id, xmin, ymin, xmax, ymax): squares of area_percent of the extent's
 * area, lower-left corner uniform over the positions that keep the square
 * inside the extent (as the papers' query windows: a share of the extent).
 */
Datum
festival_generated_windows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		n = PG_GETARG_INT64(0);
	double		area_percent = PG_GETARG_FLOAT8(1);
	int32		seed = PG_GETARG_INT32(2);
	Extent		e;
	double		side;
	Prng		prng;

	check_count(n);
	if (!(area_percent > 0 && area_percent <= 100))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("area_percent must be in (0, 100], not %g", area_percent),
				 errhint("Carniel et al. 2018 use 0.001, 0.01 and 0.1, Carniel et al. 2016 and 2017 (JIDM) 0.1, 0.5 and 1 (percent of the extent's area).")));
	read_extent(fcinfo, 3, &e);
	side = sqrt(area_percent / 100.0 * width(&e) * height(&e));
	if (side > width(&e) || side > height(&e))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a square window of %g%% of the extent's area does not fit inside the extent", area_percent),
				 errhint("Use a smaller share or an extent closer to a square.")));
	prng_init(&prng, seed, PRNG_STREAM_WINDOWS);

	InitMaterializedSRF(fcinfo, 0);
	for (int64 id = 1; id <= n; id++)
	{
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		double		x = e.xmin + prng_uniform(&prng) * (width(&e) - side);
		double		y = e.ymin + prng_uniform(&prng) * (height(&e) - side);

		CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(id);
		values[1] = Float8GetDatum(x);
		values[2] = Float8GetDatum(y);
		values[3] = Float8GetDatum(x + side);
		values[4] = Float8GetDatum(y + side);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
