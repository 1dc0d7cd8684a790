/*-------------------------------------------------------------------------
 *
 * hilbert_rtree.h
 *	  The Hilbert R-tree (Kamel & Faloutsos, "Hilbert R-tree: an improved
 *	  R-tree using fractals", VLDB 1994), private declarations.
 *
 * Every object is ordered by the Hilbert value h of its MBR's centre on a
 * 2^32 x 2^32 grid over the index's extent (geom/hilbert.h); ties of h are
 * broken by the object id, so the tree orders its leaf entries by the key
 * (h, id), like a B+-tree, and keeps R-tree MBRs for searching.
 *
 * Leaf entry (48 bytes):
 *
 *	offset size field
 *	     0    8 xmin	float8	the object's MBR
 *	     8    8 ymin	float8
 *	    16    8 xmax	float8
 *	    24    8 ymax	float8
 *	    32    8 id		int8	the object id
 *	    40    8 hilbert	uint8	Hilbert value of the MBR's centre
 *
 * Internal entry (64 bytes):
 *
 *	offset size field
 *	     0   32 box		4 x float8	exact MBR of the child's entries
 *	    32    8 child	int8	the child's page
 *	    40    8 lhv		uint8	largest Hilbert value in the subtree (LHV)
 *	    48    8 lhv_id	int8	the id of the entry holding that value
 *	    56    4 lhv_only uint4	1 when every key of the subtree is (lhv, lhv_id)
 *	    60    4 (zero)
 *
 * The paper's LHV is the largest h of the subtree; festival keeps the id
 * that goes with it as well, so an internal entry carries the largest key
 * (h, id) of its subtree and siblings stay in order even when many objects
 * share one Hilbert value (copies of a point, points closer than one grid
 * cell, or everything clamped onto one corner of the extent).  When one
 * object is inserted again and again with the same centre, a run of equal
 * keys can fill whole nodes; those siblings all have the same LHV, and
 * lhv_only puts the one that also holds smaller keys first.
 *
 * Inside a node, entries are sorted by their key, then by their bytes
 * (hilbert_entry_cmp): the order eFIND rebuilds a node in from its
 * modifications (nodestore/efind.c, keyed by NodeOps.compare_identity), so a
 * node read through any node store is the node as written.  Across
 * siblings, every key of a child is at most every key of the next child.
 *
 * A page of P bytes holds floor((P - 32) / 48) leaf entries and
 * floor((P - 32) / 64) internal ones; max_fill scales both down to M, and
 * min_fill (percent of M) gives m, with 2 <= m <= (M + 1) / 2 so that a
 * 1-to-2 split and a 2-to-1 merge always give legal nodes.
 *
 * IDENTIFICATION
 *	  src/index/hilbert_rtree.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_HILBERT_RTREE_H
#define FEST_HILBERT_RTREE_H

#include "index/structure.h"

typedef struct HilbertLeafEntry
{
	Mbr			box;
	int64		id;
	uint64		hilbert;
} HilbertLeafEntry;

typedef struct HilbertInternalEntry
{
	Mbr			box;
	int64		child;
	uint64		lhv;
	int64		lhv_id;
	uint32		lhv_only;
	uint32		zero;
} HilbertInternalEntry;

StaticAssertDecl(sizeof(HilbertLeafEntry) == 48, "HilbertLeafEntry must be 48 bytes");
StaticAssertDecl(sizeof(HilbertInternalEntry) == 64, "HilbertInternalEntry must be 64 bytes");
StaticAssertDecl(offsetof(HilbertLeafEntry, box) == 0 && offsetof(HilbertInternalEntry, box) == 0,
				 "both entry kinds start with the MBR (NodeOps.mbr_first)");

/* The ordering key of an entry: (h, id) for a leaf, (LHV, its id) above. */
typedef struct HilbertKey
{
	uint64		h;
	int64		id;
} HilbertKey;

typedef struct HilbertState
{
	Mbr			extent;			/* the space the curve covers */
	uint32		max_leaf;		/* M of leaves */
	uint32		min_leaf;		/* m of leaves */
	uint32		max_internal;	/* M of internal nodes */
	uint32		min_internal;	/* m of internal nodes */
	uint32		siblings;		/* s: cooperating siblings (section 3.2) */
} HilbertState;

static inline uint32
hilbert_max_entries(const HilbertState *st, uint16 level)
{
	return level == 0 ? st->max_leaf : st->max_internal;
}

static inline uint32
hilbert_min_entries(const HilbertState *st, uint16 level)
{
	return level == 0 ? st->min_leaf : st->min_internal;
}

static inline int
hilbert_key_cmp(const HilbertKey *a, const HilbertKey *b)
{
	if (a->h != b->h)
		return a->h < b->h ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

/* hilbert_rtree.c: helpers shared with the check and the bulk loader */
extern const NodeOps hilbert_node_ops;
extern void hilbert_entry_key(const void *entry, uint16 level, HilbertKey *key);
extern int	hilbert_entry_cmp(const void *a, const void *b, uint16 level);
extern void hilbert_summary_entry(const TreeNode *child, HilbertInternalEntry *entry);

/* hilbert_rtree_check.c */
extern void hilbert_check(StructIndex *idx, CheckReport *report);

/* hilbert_rtree_bulk.c */
typedef struct HilbertSpill HilbertSpill;
extern void hilbert_bulk_load(StructIndex *idx, BulkItem *items, int64 n,
							  const char *method);
extern BulkSpill *hilbert_spill_begin(StructIndex *idx, const char *method);
extern void hilbert_spill_put(BulkSpill *spill, const BulkItem *item);
extern void hilbert_spill_load(StructIndex *idx, BulkSpill *spill);

#endif							/* FEST_HILBERT_RTREE_H */
