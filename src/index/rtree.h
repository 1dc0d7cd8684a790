/*-------------------------------------------------------------------------
 *
 * rtree.h
 *	  The R-tree (Guttman 1984), private declarations.
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
 * FESTIval used 36-byte entries (int4 ids, see seeds 001/002 Table 3);
 * festival's ids are bigint, so the same page holds slightly fewer entries.
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

typedef struct RtreeEntry
{
	Mbr			box;
	int64		ref;
} RtreeEntry;

StaticAssertDecl(sizeof(RtreeEntry) == 40, "RtreeEntry must be 40 bytes");

#define RtreeNodeEntries(node)	((RtreeEntry *) (node)->entries)

/*
 * A split policy distributes the M+1 entries of an overflowing node into
 * two groups of at least m entries each: group[i] is 0 or 1.
 */
typedef void (*RtreeSplitFn) (const RtreeEntry *entries, int n, int min_fill,
							  int *group, FestStats *stats);

typedef struct RtreeSplitPolicy
{
	const char *name;
	RtreeSplitFn split;
} RtreeSplitPolicy;

typedef struct RtreeState
{
	uint32		max_entries;	/* M */
	uint32		min_entries;	/* m */
	const RtreeSplitPolicy *split;
} RtreeState;

/* rtree_split.c */
extern const RtreeSplitPolicy rtree_split_policies[];
extern const char *const rtree_split_names[];

/* rtree_pack.c */
extern const BuildMethod rtree_build_methods[];
extern void rtree_bulk_load(StructIndex *idx, BulkItem *objects, int64 n,
							const char *method);

/* rtree_check.c */
extern void rtree_check(StructIndex *idx, CheckReport *report);

/* shared helpers (rtree.c) */
extern void rtree_node_box(const TreeNode *node, Mbr *box);

#endif							/* FEST_RTREE_H */
