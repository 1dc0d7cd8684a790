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
} LbBucket;

/* A log page. */
typedef struct LbPage
{
	PageId		page;			/* hash key */
	uint64		seq;
	int32		refs;			/* BTT lists holding it */
} LbPage;

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
} LbState;

/* lbgrid.c */
extern LbBucket *lb_btt_find(LbState *st, uint64 addr);
extern LbPage *lb_page_find(LbState *st, PageId page);
extern bool lb_load(StructIndex *idx, LbState *st, bool recovering);
extern TreeNode *lb_read_bucket(StructIndex *idx, uint64 addr);

/* lbgrid_check.c */
extern void lb_check(StructIndex *idx, CheckReport *report);

#endif							/* FEST_LBGRID_H */
