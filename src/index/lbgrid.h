/*-------------------------------------------------------------------------
 *
 * lbgrid.h
 *	  LB-Grid's log records, bucket translation table and state, shared by
 *	  lbgrid.c (the structure) and lbgrid_check.c (its check); the layout
 *	  and the decisions are described in lbgrid.c.
 *
 * IDENTIFICATION
 *	  src/index/lbgrid.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_LBGRID_H
#define FEST_LBGRID_H

#include "index/gridfile.h"

#include <math.h>

#include "utils/hsearch.h"

/* A log record (the layout is described in lbgrid.c). */
typedef struct LbRecord
{
	double		x;
	double		y;
	int64		id;
	uint64		tag;
} LbRecord;

StaticAssertDecl(sizeof(LbRecord) == 32, "LbRecord must be 32 bytes");

#define LB_DELETE		(UINT64CONST(1) << 63)
#define LB_ADDR(tag)	((tag) & ~LB_DELETE)
#define LB_LOG_PAGE		0x0001	/* TreeNode.flags of a log page */
/*
 * TreeNode.flags of a log page that is an adaptive grid file's in-place
 * bucket (agrid.c), besides LB_LOG_PAGE: it holds one bucket's BEGIN
 * marker and then only that bucket's records, and it is rewritten in
 * place, keeping its sequence number.
 */
#define LB_PLACE_PAGE	0x0002
#define LbRecords(node)	((LbRecord *) (node)->entries)

/*
 * A level-1 entry's child, as the generic algorithms see it (entry_ref):
 * the bucket's region negated, so that it is never taken for a page (dumps
 * list buckets beside pages).
 */
#define LB_REF(addr)		(-(int64) (addr))
#define LB_REF_ADDR(ref)	((uint64) -(ref))

static inline bool
lb_is_begin(const LbRecord *r)
{
	return isnan(r->x);
}

/* A BTT entry: a logical bucket. */
typedef struct LbBucket
{
	uint64		addr;			/* hash key: the region, the bucket id */
	int32		live;			/* its points: inserts less deletes since its
								 * marker, or, once replayed, exactly */
	int32		unverified;		/* delete records appended without reading
								 * the bucket (Alg. 3) since it was last
								 * replayed: live may be that many too low */
	int32		npages;
	int32		maxpages;
	PageId	   *pages;			/* by sequence; pages[0] holds the marker */
	/*
	 * The adaptive grid file's recent operations on the bucket (agrid.c;
	 * LB-Grid leaves them 0): writes (inserts, deletes) and reads (the
	 * bucket read by a query), halved together when their sum reaches
	 * twice the window; a split's halves and a merge's union inherit them.
	 * In memory only.
	 */
	int32		recent_writes;
	int32		recent_reads;
} LbBucket;

/* A log page. */
typedef struct LbPage
{
	PageId		page;			/* hash key */
	uint64		seq;
	int32		refs;			/* BTT lists holding it */
	bool		place;			/* flagged LB_PLACE_PAGE (agrid.c) */
} LbPage;

/* The options, read once (lb_setup_options). */
typedef struct LbOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	OptionBox	extent;
	int64		max_fill;
	int			range_algorithm;	/* index into gf_range_algorithms */
	int			knn_prefetch;	/* index into gf_knn_prefetches */
	int64		merge_fill;
	int64		directory_read_buffer;
	int64		data_read_buffer;
	int			delete_check;	/* index into lb_delete_checks */
	/* the adaptive grid file's (agrid.c); LB-Grid's table has none */
	int64		mode_window;
	int64		log_percent;
	int64		place_percent;
} LbOptions;

/*
 * The options LB-Grid and the adaptive grid file share (the fields of
 * LbOptions above mode_window): the entries of both tables.
 */
#define LB_SHARED_OPTION_SPECS \
	{ \
		.name = "extent", .type = OPT_BOX, \
		.description = "The space the grid divides, [xmin, ymin, xmax, ymax]; points outside it are refused. Default: the source table's extent.", \
		.offset = offsetof(LbOptions, extent) \
	}, \
	{ \
		.name = "max_fill", .type = OPT_INT, .default_number = 100, \
		.min = 10, .max = 100, \
		.description = "Logical bucket and directory page capacity, in percent of what one page holds (a bucket: the records of a log page minus 3).", \
		.offset = offsetof(LbOptions, max_fill) \
	}, \
	{ \
		.name = "range_algorithm", .type = OPT_CHOICE, .default_choice = "rq", \
		.choices = gf_range_algorithms, \
		.description = "Window queries: rq reads one bucket's log pages at a time; p-rq (Fevgas 2019, Alg. 6) reads the sub-directories, then each one's buckets, in next-fit groups the size of the read buffers (a log page shared by buckets of a group read once).", \
		.offset = offsetof(LbOptions, range_algorithm) \
	}, \
	{ \
		.name = "knn_prefetch", .type = OPT_CHOICE, .default_choice = "none", \
		.choices = gf_knn_prefetches, \
		.description = "kNN of a query point (Fevgas 2019, Alg. 7, ring by ring, as for gridfile): none reads one bucket's log pages when its cell is entered; data reads a ring's buckets in next-fit groups of the data read buffer, a page shared by several of them once; all does the same for sub-directories too.", \
		.offset = offsetof(LbOptions, knn_prefetch) \
	}, \
	{ \
		.name = "merge_fill", .type = OPT_INT, .default_number = 30, \
		.min = 0, .max = 50, \
		.description = "After a deletion, a bucket with at most this percent of its capacity merges with its buddy when both fit in one bucket (thesis: 30); sub-directories likewise.", \
		.offset = offsetof(LbOptions, merge_fill) \
	}, \
	{ \
		.name = "directory_read_buffer", .type = OPT_BYTES, .default_number = 0, \
		.min = 0, .max = 1073741824.0, \
		.description = "The thesis's directory-page read buffer (DPB), which a group read of sub-directories fills (Fevgas 2019, Alg. 6-8). 0: the thesis's 10.5 MB.", \
		.offset = offsetof(LbOptions, directory_read_buffer) \
	}, \
	{ \
		.name = "data_read_buffer", .type = OPT_BYTES, .default_number = 0, \
		.min = 0, .max = 1073741824.0, \
		.description = "The thesis's log-bucket read buffer (LBB), the log pages a group read of buckets fills (Fevgas 2019, Alg. 6-8). 0: the thesis's 3.5 MB.", \
		.offset = offsetof(LbOptions, data_read_buffer) \
	}, \
	{ \
		.name = "delete_check", .type = OPT_CHOICE, .default_choice = "none", \
		.choices = lb_delete_checks, \
		.description = "none: a delete appends its record without reading the bucket (Fevgas 2019, Alg. 3), so it returns true for any point of a non-empty bucket, and the entry count is vouched for again by festival.check(); read: a delete reads its bucket first and returns false for an entry that is not there (festival's exact delete).", \
		.offset = offsetof(LbOptions, delete_check) \
	}

struct LbAdaptive;

/* The structure's state: the BTT, in a context of the open index. */
typedef struct LbState
{
	GfState		gf;				/* first: the shared directory code casts */
	uint32		page_records;	/* records a log page holds */
	bool		delete_reads;	/* delete_check read: a delete reads its
								 * bucket first (festival's exact delete),
								 * not the thesis's Alg. 3 */
	MemoryContext cxt;			/* the BTT's, as long as the open index */
	bool		loaded;			/* btt, pages and work are complete: set
								 * only when a load ends (an ERROR or a
								 * cancel in the middle of one leaves a
								 * partial table that must not be used) */
	HTAB	   *btt;			/* LbBucket by addr */
	HTAB	   *pages;			/* LbPage by page */
	TreeNode   *work;			/* the working log page (wLogBucket), or NULL */
	uint64		next_seq;
	struct LbAdaptive *adaptive;	/* agrid.c's thresholds and switch
									 * counts, or NULL (LB-Grid) */
} LbState;

/* lbgrid.c */
extern const char *const lb_delete_checks[];
extern LbState *lb_setup_options(const FestConfig *config, uint32 page_size,
								 const OptionSpec *table, LbOptions *o);
extern LbState *lb_state(StructIndex *idx);
extern LbBucket *lb_btt_find(LbState *st, uint64 addr);
extern LbBucket *lb_bucket_begin(LbState *st, uint64 addr, PageId page);
extern void lb_bucket_drop(StructIndex *idx, LbState *st, uint64 addr);
extern LbPage *lb_page_register(LbState *st, PageId page, uint64 seq, bool place);
extern LbRecord lb_make_begin(uint64 addr);
extern void lb_retire_work(StructIndex *idx, LbState *st);
extern void lb_read_leaves(StructIndex *idx, const int64 *refs, int n, TreeNode **out);
extern void lb_insert_at(StructIndex *idx, LbState *st, GfLookup *lk,
						 const LbRecord *rec, uint64 point);
extern bool lb_remove_at(StructIndex *idx, LbState *st, GfLookup *lk,
						 LbRecord *rec);
extern void lb_merge_after_delete(StructIndex *idx, LbState *st, GfLookup *lk);
extern bool lb_locate(StructIndex *idx, int64 id, const Mbr *box, GfLookup *lk,
					  LbRecord *rec);
extern bool lb_contains(StructIndex *idx, int64 id, const Mbr *box);
extern int	lb_find_record(const TreeNode *bucket, const LbRecord *rec);
extern void lb_init_empty(StructIndex *idx);
extern bool lb_leaf_exists(StructIndex *idx, int64 ref);
extern bool lb_recover(StructIndex *idx);
extern void lb_describe(StructIndex *idx, JsonbParseState **state);
extern LbPage *lb_page_find(LbState *st, PageId page);
extern bool lb_load(StructIndex *idx, LbState *st, bool recovering);
extern TreeNode *lb_read_bucket(StructIndex *idx, uint64 addr);

/* lbgrid_check.c */
extern void lb_check(StructIndex *idx, CheckReport *report);

#endif							/* FEST_LBGRID_H */
