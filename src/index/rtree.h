/*-------------------------------------------------------------------------
 *
 * rtree.h
 *	  The R-tree family (Guttman 1984; the R*-tree), private declarations.
 *
 * Entry format, for leaves and internal nodes alike (40 bytes):
 *
 *	offset size field
 *	     0    8 xmin	float8
 *	     8    8 ymin	float8
 *	    16    8 xmax	float8
 *	    24    8 ymax	float8
 *	    32    8 ref		int8: the object id (leaf) or the child page (internal)
 *
 * so a page of P bytes holds floor((P - 32) / 40) entries; max_fill scales
 * that down to M and min_fill (percent of M) gives m, with 2 <= m <= (M+1)/2.
 * FESTIval used 36-byte entries (int4 ids, see Carniel et al. 2016, 2017 Table
 * 3); festival's ids are bigint, so the same page holds slightly fewer entries.
 *
 * The R*-tree (rstartree.c) is the same tree with another choice of
 * subtree and overflow treatment: both live in RtreeState, so the
 * insertion, deletion, check and search code here serves both.
 *
 * Internal entries always hold the exact MBR of their child's entries:
 * insertion enlarges them along the path, splits and deletions recompute
 * them.  check() verifies it.
 *
 * IDENTIFICATION
 *	  src/index/rtree.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_RTREE_H
#define FEST_RTREE_H

#include "index/structure.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct RtreeEntry
{
	Mbr			box;
	int64		ref;
} RtreeEntry;

StaticAssertDecl(sizeof(RtreeEntry) == 40, "RtreeEntry must be 40 bytes");
StaticAssertDecl(offsetof(RtreeEntry, box) == 0, "RtreeEntry starts with its box (NodeOps.mbr_first)");

#define RtreeNodeEntries(node)	((RtreeEntry *) (node)->entries)

/*
 * A split policy distributes the M+1 entries of an overflowing node into
 * two groups of at least m entries each: group[i] is 0 or 1.  Policies
 * must be deterministic: equal input, equal groups.
 */
typedef void (*RtreeSplitFn) (const RtreeEntry *entries, int n, int min_fill,
							  int *group, FestStats *stats);

typedef struct RtreeSplitPolicy
{
	const char *name;
	RtreeSplitFn split;
	/*
	 * The largest node (M + 1 entries) the policy splits in reasonable
	 * time, 0 for any; setup refuses larger nodes.
	 */
	uint32		max_split_entries;
} RtreeSplitPolicy;

/*
 * The state of one insertion of an object, shared by the reinsertions it
 * causes: the R*-tree treats an overflow by forced reinsertion only once
 * per level per insertion (Beckmann et al. 1990, section 4.3).
 */
typedef struct RtreeInsertion
{
	uint32		reinserted_levels;	/* bit l: level l was treated */
	/* entries removed by a forced reinsertion, waiting to go back in */
	RtreeEntry *pending;
	int			npending;
	uint16		pending_level;
} RtreeInsertion;

typedef struct RtreeState RtreeState;

/*
 * The two points where the R-tree family differs (the rest of the core
 * is shared): the entry of an internal node to descend into, and what to
 * do with a node of M + 1 entries.  overflow returns the new sibling after
 * a split, or NULL after moving entries into ins->pending (the node keeps
 * at least m entries and is written by the callee in both cases).
 */
typedef int (*RtreeChooseSubtreeFn) (StructIndex *idx, const TreeNode *node,
									 const Mbr *box);
typedef TreeNode *(*RtreeOverflowFn) (StructIndex *idx, RtreeInsertion *ins,
									  TreeNode *node, bool is_root);

struct RtreeState
{
	uint32		max_entries;	/* M */
	uint32		min_entries;	/* m */
	const RtreeSplitPolicy *split;
	RtreeChooseSubtreeFn choose_subtree;
	RtreeOverflowFn overflow;
	/* R*-tree only */
	uint32		max_neighbors;	/* candidates of the overlap test */
	uint32		reinsert_count; /* p, entries of a forced reinsertion */
	bool		reinsert_far;	/* farthest first instead of closest */
};

/*
 * An entry's area and area enlargement for box, as mbr_area and
 * mbr_union_area compute them, and whether it contains box
 * (mbr_contains): ChooseSubtree's keys (rtree.c, rstartree.c).  With SSE2
 * the x and y sides go through one instruction each: the same operations
 * on the same values (maxpd and minpd choose as the Max and Min macros do:
 * the first operand when it is the greater, or lesser, else the second),
 * so the same doubles.
 */
static inline bool
rtree_entry_keys(const Mbr *b, const Mbr *box, double *area, double *enlargement)
{
#ifdef __SSE2__
	__m128d		lo = _mm_loadu_pd(&b->xmin);	/* xmin, ymin */
	__m128d		hi = _mm_loadu_pd(&b->xmax);	/* xmax, ymax */
	__m128d		box_lo = _mm_loadu_pd(&box->xmin);
	__m128d		box_hi = _mm_loadu_pd(&box->xmax);
	__m128d		side = _mm_sub_pd(hi, lo);
	__m128d		union_side = _mm_sub_pd(_mm_max_pd(hi, box_hi), _mm_min_pd(lo, box_lo));
	/* (width, union width) * (height, union height) */
	__m128d		areas = _mm_mul_pd(_mm_unpacklo_pd(side, union_side),
								   _mm_unpackhi_pd(side, union_side));
	double		a = _mm_cvtsd_f64(areas);

	*area = a;
	*enlargement = _mm_cvtsd_f64(_mm_unpackhi_pd(areas, areas)) - a;
	return _mm_movemask_pd(_mm_and_pd(_mm_cmple_pd(lo, box_lo),
									  _mm_cmple_pd(box_hi, hi))) == 3;
#else
	*area = mbr_area(b);
	*enlargement = mbr_union_area(b, box) - *area;
	return mbr_contains(b, box);
#endif
}

/* rtree_split.c: the policy table and Guttman's splits */
extern const RtreeSplitPolicy rtree_split_policies[];
extern const char *const rtree_split_names[];
extern void rtree_quadratic_seeds(const RtreeEntry *entries, int n,
								  int *seed0, int *seed1, FestStats *stats);
extern const RtreeSplitPolicy *rtree_split_policy(const char *name);
extern int	rtree_choose_group(const Mbr *boxes, const int *counts, const Mbr *entry);

/* rtree_split_exponential.c */
extern void rtree_split_exponential(const RtreeEntry *entries, int n, int min_fill,
									int *group, FestStats *stats);

/* rtree_split_axis.c: Greene's and Ang & Tan's */
extern void rtree_split_greene(const RtreeEntry *entries, int n, int min_fill,
							   int *group, FestStats *stats);
extern void rtree_split_angtan(const RtreeEntry *entries, int n, int min_fill,
							   int *group, FestStats *stats);

/* rtree_split_rstar.c */
extern void rtree_split_rstar(const RtreeEntry *entries, int n, int min_fill,
							  int *group, FestStats *stats);

/* rtree_bulk.c */
extern const BuildMethod rtree_build_methods[];
extern void rtree_bulk_load(StructIndex *idx, BulkItem *objects, int64 n,
							const char *method);
extern BulkSpill *rtree_spill_begin(StructIndex *idx, const char *method);
extern void rtree_spill_put(BulkSpill *spill, const BulkItem *item);
extern void rtree_spill_load(StructIndex *idx, BulkSpill *spill);

/* rtree_check.c */
extern void rtree_check(StructIndex *idx, CheckReport *report);

/* the shared core (rtree.c) */
extern const NodeOps rtree_node_ops;
extern void rtree_node_box(const TreeNode *node, Mbr *box);
extern RtreeState *rtree_state_init(const FestConfig *config, uint32 page_size,
									int64 min_fill, int64 max_fill,
									const RtreeSplitPolicy *split);
extern int	rtree_choose_least_enlargement(StructIndex *idx, const TreeNode *node,
										   const Mbr *box);
extern TreeNode *rtree_split_node(StructIndex *idx, TreeNode *node);
extern void rtree_init_empty(StructIndex *idx);
extern void rtree_insert(StructIndex *idx, int64 id, const Mbr *box);
extern bool rtree_remove(StructIndex *idx, int64 id, const Mbr *box);
extern bool rtree_contains(StructIndex *idx, int64 id, const Mbr *box);
extern void rtree_describe(StructIndex *idx, JsonbParseState **state);

#endif							/* FEST_RTREE_H */
