/*-------------------------------------------------------------------------
 *
 * tier.h
 *	  One index over two devices: a slow tier (the index's device) and a
 *	  fast tier (options.fast_device), with a placement deciding which
 *	  pages live on the fast one (docs/tiers.md).
 *
 * Two PageIO decorators share one TierState:
 *
 *	  node store -> observer -> cache -> tracing -> router -> slow device chain
 *	                                                       -> fast device chain
 *
 * The router (below the cache) keeps the page -> tier map, sends each read
 * to the tier the map names and each write to the tier the placement
 * assigns; when that differs from the page's current tier the write is a
 * migration: the target is written first, the map (a durable side file,
 * tier/tiermap.c) names the target only after both devices were synced,
 * and the source copy is released (zeroed) only after the map is durable.
 * The observer (above the cache) sees every node access, cache hits
 * included, as the thesis's HybridBucketDetect (Fevgas 2019, Alg. 9)
 * requires, and marks hot pages for promotion.  Levels come from the page
 * headers, so no structure and no node store knows about tiers.
 *
 * IDENTIFICATION
 *	  src/tier/tier.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_TIER_H
#define FEST_TIER_H

#include "festival.h"
#include "device/fault.h"
#include "device/pageio.h"
#include "gen/prng.h"
#include "options/options.h"
#include "utils/hsearch.h"

#define TIER_SLOW	0
#define TIER_FAST	1

typedef enum TierPlacement
{
	TIER_SINGLE,				/* every page on the slow tier */
	TIER_ALL_FAST,				/* every page on the fast tier */
	TIER_LEVEL,					/* nodes at level >= fast_min_level fast (sHR-tree) */
	TIER_HOT,					/* hot pages fast (H-Grid, Alg. 9) */
	TIER_LEVEL_HOT,				/* level plus hot (H-Grid "special") */
	TIER_RANDOM					/* as many random pages fast as hot would */
} TierPlacement;

/*
 * The tier options of an index, read once by tier_read_options(): the
 * option table fills the fields from filled to fast_capacity (offsetof),
 * tier_read_options derives the rest and checks the combinations.
 */
typedef struct TierOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	const char *fast_device;	/* NULL: one device */
	int			placement;		/* a TierPlacement (the choice's index) */
	int64		min_level;
	double		selectivity;	/* Alg. 9's s */
	const char *fast_capacity;	/* as given; NULL = unlimited */
	int64		seed;			/* random placement */
	/* derived */
	bool		enabled;		/* the index has a fast device */
	int64		capacity_pages; /* 0 = unlimited (the seeds' setting) */
} TierOptions;

extern const OptionSpec tier_options[];
extern bool tier_options_given(Jsonb *user);
extern void tier_read_options(const FestConfig *config, uint32 page_size,
							  TierOptions *out);
extern void tier_refuse_unused_options(Jsonb *user, const TierOptions *opt);

/*
 * Alg. 9's model, on its own so it can be tested with hand-computed
 * sequences (festival.tier_hot_simulate).  Time is a logical clock of
 * observed accesses; F is normalised by the largest count of the same
 * level; the moving average is cumulative, one per level.
 */
typedef struct HotPage
{
	PageId		page;			/* hash key */
	int64		count;			/* accesses */
	int64		last;			/* clock of the previous access, 0 = none */
	double		weight;			/* at the last access */
	PageId		parent;			/* InvalidPageId (0, a meta page): none */
	bool		hot;			/* selected by the detector */
} HotPage;

typedef struct HotModel
{
	HTAB	   *pages;
	int64		clock;
	double		selectivity;
	int64		capacity;		/* 0 = unlimited */
	int64		nhot;
	int64		max_count[FEST_MAX_LEVELS];
	double		wsum[FEST_MAX_LEVELS];
	int64		wn[FEST_MAX_LEVELS];
} HotModel;

typedef struct HotStep
{
	double		weight;
	double		average;		/* CMA after this access */
	bool		eligible;		/* parent hot (or none) */
	bool		promoted;
	PageId		demoted;		/* InvalidPageId: none */
} HotStep;

extern void hot_model_init(HotModel *m, double selectivity, int64 capacity,
						   MemoryContext cxt);
extern HotStep hot_model_access(HotModel *m, PageId page, int level,
								PageId parent, bool parent_fast);
extern void hot_model_forget_from(HotModel *m, PageId first);

typedef struct TierState TierState;

/* Opening (tier.c): the router over two device chains, the observer. */
extern TierState *tier_open(const TierOptions *opt, const char *index_name,
							PageIO *slow, PageIO *fast, const char *map_path,
							const char *weights_path, bool create);
extern PageIO *tier_router(TierState *ts);
extern PageIO *tier_observer_wrap(TierState *ts, PageIO *cache);

/* One page as festival.tier_pages shows it. */
typedef struct TierPageInfo
{
	PageId		page;
	int			tier;
	int			level;			/* -1: not a node page */
	double		weight;			/* NaN: never observed */
	int64		accesses;
	bool		hot;
} TierPageInfo;

extern uint64 tier_page_count(TierState *ts);
extern int	tier_page_tier(TierState *ts, PageId page);
extern void tier_page_info(TierState *ts, PageId page, TierPageInfo *info);
extern const char *tier_placement_name(TierPlacement p);

/* check(): problems are handed to the callback (the SQL layer's report). */
typedef void (*TierProblem) (void *arg, int64 page, const char *message);
extern void tier_check(TierState *ts, uint64 npages, TierProblem problem,
					   void *arg);


/*
 * tiermap.c: the durable page -> tier map.  TIERMAP_OPEN is set in every
 * map written before pages are written in a session and cleared by the
 * router's flush (PageIOOps.flush, after the node store's): an open that finds it set follows a crash,
 * after which a migration's target copy may exist without the map naming
 * it, and the open releases such orphans (reading every page's other copy).
 */
#define TIERMAP_OPEN	0x0001
extern void tiermap_write(const char *path, uint16 flags, const uint8 *entries,
						  uint64 n, const PageId *released, int nreleased,
						  FaultState *fs);
extern uint8 *tiermap_read(const char *path, const char *index_name,
						   uint16 *flags, uint64 *n, PageId **released,
						   int *nreleased, MemoryContext cxt);

/*
 * tiermap.c: the hot-page weights file ("<index file>.tierhot"), written
 * at a flush and a close, read at an open (tier.c lays out the body).
 */
extern void tierweights_write(const char *path, const void *body, size_t len,
							  FaultState *fs);
extern char *tierweights_read(const char *path, size_t *len,
							  const char **problem, MemoryContext cxt);

#endif							/* FEST_TIER_H */
