/*-------------------------------------------------------------------------
 *
 * tier.h
 *	  One index over two devices: a slow tier (the index's device) and a
 *	  fast tier (options.fast_device), with a placement deciding which
 *	  pages live on the fast one (docs/tiers.md).
 *
 * Two PageIO layers share one TierState:
 *
 *	  node store -> observer -> cache -> tracing -> router -> slow device chain
 *	                                                       -> fast device chain
 *
 * This layer also assembles every index's chain, tiered or not
 * (page_chain_open).  Its files: tier_chain.c (assembly, the files beside
 * the index), tier_router.c (the router, the state, the placements and
 * migrations), tier_observer.c and tier_hot.c (Alg. 9), tier_weights.c (the
 * hot-page weights file), tier_map.c (the map file), tier_check.c (check()),
 * tier_options.c (options); tier_state.h is what they share.
 *
 * The router (below the cache) keeps the page -> tier map, sends each read
 * to the tier the map names and each write to the tier the placement
 * assigns; when that differs from the page's current tier the write is a
 * migration: the target is written first, the map (a durable side file,
 * tier/tier_map.c) names the target only after both devices were synced,
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
#include "device/device.h"
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

/* write_buffers: how the detecting placements write (tier_buffer.c) */
typedef enum TierBuffering
{
	TIER_BUFFERS_PER_DEVICE,	/* a write buffer per device (Fevgas 2019, §4.3) */
	TIER_BUFFERS_SHARED_CACHE	/* none: promotions through the page cache */
} TierBuffering;

/* hot_selectivity_tuning: whether s stays as given (tier_hot.c, hot_model_epoch_end) */
typedef enum TierTuning
{
	TIER_TUNING_FIXED,			/* s = hot_selectivity throughout (the thesis) */
	TIER_TUNING_AUTO			/* s starts at hot_selectivity, re-set every epoch */
} TierTuning;

/*
 * The tier options of an index, read once by tier_read_options(): the
 * option tables (tier_options, tier_buffer_options) fill the typed fields
 * (offsetof), tier_read_options derives the rest and checks the
 * combinations.
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
	int64		write_buffer_pages; /* per device, detecting placements */
	int			write_buffers;	/* a TierBuffering (the choice's index) */
	int64		cool_after;		/* accesses idle before a hot page cools; 0 = never */
	int			tuning;			/* a TierTuning (the choice's index) */
	/* derived */
	bool		enabled;		/* the index has a fast device */
	int64		capacity_pages; /* 0 = unlimited (the seeds' setting) */
} TierOptions;

extern const OptionSpec tier_options[];
extern const OptionSpec *const tier_buffer_options[];
extern bool tier_options_given(Jsonb *user);
extern int	tier_option_tables(Jsonb *user, const OptionSpec **tables);
extern void tier_read_options(const FestConfig *config, uint32 page_size,
							  TierOptions *out);
extern void tier_refuse_unused_options(Jsonb *user, const TierOptions *opt);
extern int64 tier_buffer_memory_bytes(const TierOptions *opt, int64 page_size);

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
	double		selectivity;	/* s now (auto tuning moves it) */
	double		selectivity_start;	/* s as given (hot_selectivity) */
	int64		capacity;		/* 0 = unlimited */
	int64		nhot;
	int64		epoch_demotions;	/* capacity demotions since the last epoch's end */
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
extern int	hot_model_cool(HotModel *m, int64 idle, PageId **cooled);

/*
 * hot_selectivity_tuning auto (beyond the seeds; Fevgas 2019, §4.5, leaves
 * tuning s to future work): at the end of every epoch of HOT_TUNE_EPOCH
 * accesses of the model's clock, s moves one HOT_TUNE_STEP within the
 * thesis's range [HOT_TUNE_MIN, HOT_TUNE_MAX] (docs/tiers.md).
 */
#define HOT_TUNE_EPOCH	1000
#define HOT_TUNE_STEP	0.25
#define HOT_TUNE_MIN	1.0
#define HOT_TUNE_MAX	2.5
extern void hot_model_epoch_end(HotModel *m, bool tune);

typedef struct TierState TierState;

/*
 * The page I/O chain of an index, assembled in one place (tier_chain.c),
 * bottom to top:
 *
 *	  device -> fault -> sim           (device_open, device/open.c)
 *	  [-> tier router over a second such chain on the fast device]
 *	  -> tracing -> [tier write buffers] -> [page cache] -> [tier observer]
 *	  -> the node store
 *
 * The caller (the SQL layer) gives what it looked up: the devices and their
 * states, the paths, the counters and the CPU-timing switch of the open
 * index, the run's trace, the typed cache and tier options.
 */
typedef struct PageChainSpec
{
	const char *index_name;
	uint32		page_size;
	bool		create;			/* a new index: the files are made */
	FestStats  *stats;			/* PageIO.stats of every layer */
	const bool *time_cpu;		/* PageIO.time_cpu of every layer */
	bool		passthrough;	/* festival.passthrough_layers (testing) */
	struct IoTrace *trace;		/* where tracing records, or NULL */
	const struct CacheOptions *cache;
	const TierOptions *tier;	/* tier->enabled: the fast device below */
	const DeviceSpec *device;	/* the index's (slow) device */
	DeviceState *state;
	const char *path;			/* the index file */
	const DeviceSpec *fast_device;	/* with tiers: the fast device */
	DeviceState *fast_state;
	const char *fast_path;		/* tier_fast_path */
} PageChainSpec;

typedef struct PageChain
{
	PageIO	   *top;			/* what the node store reads and writes */
	PageIO	   *tracing;		/* for tracing_set_target */
	TierState  *tiers;			/* NULL on one device */
} PageChain;

extern void page_chain_open(const PageChainSpec *spec, PageChain *chain);

/*
 * The files of a tiered index besides the index file (tier_chain.c): the
 * map and the hot-page weights beside it, the fast tier's file (the index
 * file's name in the fast device's directory).  tier_check_devices refuses
 * a pair of devices a tiered index cannot use.
 */
extern char *tier_map_path(const char *index_path);
extern char *tier_weights_path(const char *index_path);
extern char *tier_fast_path(const char *data_directory, const DeviceSpec *fast,
							const char *file_name, bool create);
extern void tier_check_devices(const DeviceSpec *slow, const DeviceSpec *fast);

/* tier_router.c: the tier state of an index over two device chains */
extern TierState *tier_open(const TierOptions *opt, const char *index_name,
							PageIO *slow, PageIO *fast, const char *map_path,
							const char *weights_path, bool create);
extern PageIO *tier_router(TierState *ts);
/* tier_buffer.c: the per-device write buffers below the cache (detecting placements) */
extern PageIO *tier_buffers_wrap(TierState *ts, PageIO *below);
/* tier_observer.c: the observer above the cache (the cache itself without detection) */
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
typedef struct TierHotState
{
	double		selectivity;	/* s now */
	int64		clock;
	int64		hot_pages;
	int64		epoch_demotions;	/* capacity demotions in the epoch so far */
} TierHotState;
extern bool tier_hot_state(TierState *ts, TierHotState *state);
extern int	tier_page_tier(TierState *ts, PageId page);
extern void tier_page_info(TierState *ts, PageId page, TierPageInfo *info);
extern const char *tier_placement_name(TierPlacement p);

/* check(): problems are handed to the callback (the SQL layer's report). */
typedef void (*TierProblem) (void *arg, int64 page, const char *message);
extern void tier_check(TierState *ts, uint64 npages, TierProblem problem,
					   void *arg);


#endif							/* FEST_TIER_H */
