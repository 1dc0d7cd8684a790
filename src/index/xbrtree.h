/*-------------------------------------------------------------------------
 *
 * xbrtree.h
 *	  The xBR+-tree (Roumelis, Vassilakopoulos, Corral, Manolopoulos: DEXA
 *	  2015, JSS 132 (2017); Carniel et al. 2018 section 3.1), private
 *	  declarations.
 *
 * A balanced tree over a regular quadtree decomposition of the index's
 * extent (option "extent"), for points only.  Every quadrant has an
 * address: the string of directional digits 0 = NW, 1 = NE, 2 = SW, 3 = SE
 * (Carniel et al. 2018 §3.1: the Z order) that leads to it from the whole
 * extent, whose address is empty ("*").
 *
 * Leaf entries (24 bytes), sorted by (x, y, id) (Carniel et al. 2018 §3.1: by
 * x, for plane sweep; y and id break ties so that the order is total and
 * eFIND's merged nodes equal the written ones):
 *
 *	offset size field
 *	     0    8 x		float8
 *	     8    8 y		float8
 *	    16    8 id		int8
 *
 * Internal entries (56 bytes), sorted by address (see xbr_addr_cmp):
 *
 *	offset size field
 *	     0   32 dbr		4 x float8: xmin, ymin, xmax, ymax of the points
 *						of the subtree (the xBR+ "data bounding rectangle")
 *	    32    8 child	int8: the child's page
 *	    40    8 code	uint64: the address's digits, two bits each, the
 *						first digit in the two most significant bits, the
 *						bits after the last digit zero
 *	    48    1 len		uint8: number of digits (0..XBR_MAX_DEPTH)
 *	    49    1 flags	XBR_COMPLETE: no other entry of the node lies
 *						inside this quadrant (the paper's shape flag: a
 *						complete square, "SQ", rather than "nSQ");
 *						XBR_EMPTY: the subtree holds no point, and dbr is
 *						a degenerate box where its last point was (only
 *						while a deletion removes the subtree)
 *	    50    6 zero
 *
 * The paper stores the address relative to the node's own quadrant (its
 * qside and the node header give the rest); festival stores it absolute,
 * so that an entry can be interpreted alone (dumps, eFIND's buffered
 * entries) at the price of a few bytes.
 *
 * Regions.  The region of an entry is its quadrant minus the quadrants of
 * the entries of the same node nested in it (Carniel et al. 2018 §3.1; the
 * paper's "nSQ" shapes).  A point belongs to the entry whose address is the
 * longest prefix of the point's own address (point location); parts of a node's
 * quadrant that no entry covers hold no point yet, and the first insertion
 * there widens an entry (see xbrtree.c).  Every point of a subtree lies in
 * the region its ancestors' entries lead to; check() verifies it point by
 * point.
 *
 * Points are located on a 2^32 x 2^32 grid over the extent (XBR_MAX_DEPTH
 * digits): more than a leaf's capacity of points in one grid cell cannot
 * be split apart and is refused with an error.
 *
 * IDENTIFICATION
 *	  src/index/xbrtree.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_XBRTREE_H
#define FEST_XBRTREE_H

#include "index/point_entry.h"
#include "index/structure.h"

#include "port/pg_bitutils.h"

#define XBR_MAX_DEPTH	32

#define XBR_COMPLETE	0x01
#define XBR_EMPTY		0x02

/* A quadrant address: len digits in the top 2 * len bits of code. */
typedef struct XbrAddr
{
	uint64		code;
	uint8		len;
} XbrAddr;

/* A leaf entry: a point and its row's id (index/point_entry.h). */
typedef PointEntry XbrLeafEntry;

typedef struct XbrInternalEntry
{
	Mbr			dbr;
	int64		child;
	uint64		code;
	uint8		len;
	uint8		flags;
	uint8		zero[6];
} XbrInternalEntry;

StaticAssertDecl(sizeof(XbrLeafEntry) == 24, "XbrLeafEntry must be 24 bytes");
StaticAssertDecl(sizeof(XbrInternalEntry) == 56, "XbrInternalEntry must be 56 bytes");

#define XbrLeafEntries(node)		((XbrLeafEntry *) (node)->entries)
#define XbrInternalEntries(node)	((XbrInternalEntry *) (node)->entries)

typedef struct XbrState
{
	Mbr			extent;
	uint32		leaf_max;		/* points a leaf holds */
	uint32		internal_max;	/* entries an internal node holds */
	uint32		leaf_merge;		/* a leaf with fewer points after a
								 * deletion is merged when possible */
	uint32		internal_merge;
} XbrState;

/* ---- addresses ---- */

static inline XbrAddr
xbr_entry_addr(const XbrInternalEntry *e)
{
	XbrAddr		a;

	a.code = e->code;
	a.len = e->len;
	return a;
}

static inline XbrAddr
xbr_addr_root(void)
{
	XbrAddr		a = {0, 0};

	return a;
}

/* Digit i (0-based) of an address. */
static inline int
xbr_addr_digit(XbrAddr a, int i)
{
	return (int) ((a.code >> (62 - 2 * i)) & 3);
}

static inline XbrAddr
xbr_addr_child(XbrAddr a, int digit)
{
	XbrAddr		c;

	Assert(a.len < XBR_MAX_DEPTH);
	c.code = a.code | ((uint64) digit << (62 - 2 * a.len));
	c.len = a.len + 1;
	return c;
}

/* The first len digits of a. */
static inline XbrAddr
xbr_addr_prefix(XbrAddr a, int len)
{
	XbrAddr		p;

	p.len = (uint8) len;
	if (len == 0)
		p.code = 0;
	else if (len >= 32)
		p.code = a.code;
	else
		p.code = a.code & ~(~UINT64CONST(0) >> (2 * len));
	return p;
}

/* Quadrant a contains quadrant b (a is a prefix of b, or equal). */
static inline bool
xbr_addr_contains(XbrAddr a, XbrAddr b)
{
	return a.len <= b.len && xbr_addr_prefix(b, a.len).code == a.code;
}

static inline bool
xbr_addr_equal(XbrAddr a, XbrAddr b)
{
	return a.len == b.len && a.code == b.code;
}

/*
 * Lexicographic order of digit strings, a prefix before its extensions:
 * the quadrants nested in an entry's quadrant follow it immediately.
 */
static inline int
xbr_addr_cmp(XbrAddr a, XbrAddr b)
{
	if (a.code != b.code)
		return a.code < b.code ? -1 : 1;
	return a.len < b.len ? -1 : (a.len > b.len ? 1 : 0);
}

/* The smallest quadrant containing both. */
static inline XbrAddr
xbr_addr_common(XbrAddr a, XbrAddr b)
{
	uint64		diff = a.code ^ b.code;
	int			len = Min(a.len, b.len);

	/* 63 - (leftmost differing bit) bits agree: half as many digits */
	if (diff != 0)
		len = Min(len, (63 - pg_leftmost_one_pos64(diff)) / 2);
	return xbr_addr_prefix(a, len);
}

/*
 * One object of a level a bulk algorithm builds: its quadrant (a point's
 * cell address, or an entry's quadrant) and its entry (xbrtree_bulk.c).
 */
typedef struct XbrBulkEntry
{
	XbrAddr		addr;
	union
	{
		XbrLeafEntry leaf;
		XbrInternalEntry internal;
	}			e;
} XbrBulkEntry;

/*
 * How the bulk algorithms hand their nodes to the node store: a commit after
 * every `commit_every` node writes (1: each node alone, the one-pass loader's
 * way, which lets FAST and eFIND flush as the tree grows; more: the write
 * buffer of Fevgas 2019 §3.6, persisted in one batch when full).  Counted by
 * the operation's nodes_written, so splits and merges count too.
 */
typedef struct XbrWriter
{
	int64		commit_every;
	int64		written_at_commit;
} XbrWriter;

/*
 * The first field of every BulkSpill of the xBR+-tree, so that the
 * structure's bulk_spill_put and bulk_spill_load find the loader it
 * belongs to.
 */
typedef enum XbrSpillKind
{
	XBR_SPILL_ONE_PASS = 1,		/* 'bulk', xbrtree_bulk.c */
	XBR_SPILL_PHASES,			/* 'four_phase*', xbrtree_phases.c */
	XBR_SPILL_INSERT			/* bulk insertion, xbrtree_bulkins.c */
} XbrSpillKind;

/* xbrtree.c */
extern bool xbr_point_addr(const XbrState *st, double x, double y, XbrAddr *addr);
extern void xbr_point_admit(StructIndex *idx, double x, double y, XbrAddr *addr);
extern void xbr_quadrant_box(const XbrState *st, XbrAddr a, Mbr *box);
extern XbrAddr xbr_leaf_entry_addr(const XbrState *st, const XbrLeafEntry *e);
extern void xbr_node_dbr(const TreeNode *node, Mbr *box, bool *empty);
extern void xbr_set_flags(TreeNode *node);
extern void xbr_sort_entries(TreeNode *node);
extern int	xbr_locate(const TreeNode *node, XbrAddr point);
extern void xbr_fill_entry(XbrInternalEntry *e, XbrAddr a, const TreeNode *child);
extern int	xbr_insert_internal_entry(TreeNode *node, const XbrInternalEntry *e);
extern void xbr_insert_at(StructIndex *idx, uint16 level, const void *item,
						  XbrAddr addr, const Mbr *box);
extern void xbr_node_reserve(TreeNode *node, uint32 n);
extern int	xbr_widen_to_cover(StructIndex *idx, TreeNode *node, XbrAddr point);

/* xbrtree_split.c */
extern TreeNode *xbr_split_leaf(StructIndex *idx, TreeNode *leaf, XbrAddr region,
								XbrAddr *new_addr);
extern TreeNode *xbr_split_internal(StructIndex *idx, TreeNode *node,
									XbrAddr quadrant, XbrAddr *new_addr);

/* xbrtree_bulk.c */
/*
 * What xbr_bulk_load holds per point besides the gathered BulkItem: its
 * entry (XbrBulkEntry, 72 bytes) and build_level's node and place of each
 * (4 + 8).
 */
#define XBR_BULK_BYTES_PER_POINT 84

extern void xbr_bulk_load(StructIndex *idx, BulkItem *items, int64 n,
						  const char *method);
typedef struct XbrSpill XbrSpill;
extern BulkSpill *xbr_spill_begin(StructIndex *idx, const char *method);
extern void xbr_spill_put(BulkSpill *spill, const BulkItem *item);
extern void xbr_spill_load(StructIndex *idx, BulkSpill *spill);
extern int	xbr_bulk_entry_cmp(const void *a, const void *b);
extern void xbr_writer_init(StructIndex *idx, XbrWriter *w, int64 commit_every);
extern void xbr_writer_wrote(StructIndex *idx, XbrWriter *w);
extern void xbr_writer_commit(StructIndex *idx, XbrWriter *w);
extern XbrBulkEntry *xbr_build_block(StructIndex *idx, XbrBulkEntry *items, int64 n,
									 XbrAddr quadrant, XbrWriter *w,
									 int64 *ntop, uint16 *top_level);
extern int64 xbr_partition_nodes(StructIndex *idx, const XbrBulkEntry *items, int64 n,
								 uint16 level, XbrAddr quadrant, TreeNode ***nodes,
								 XbrAddr **quadrants);

/* xbrtree_phases.c: bulk loading in four phases (Fevgas 2019 §3.6) */
extern bool xbr_phases_method(const char *method);
extern void xbr_phases_load(StructIndex *idx, BulkItem *items, int64 n,
							const char *method);
extern BulkSpill *xbr_phases_begin(StructIndex *idx, const char *method);
extern void xbr_phases_put(BulkSpill *spill, const BulkItem *item);
extern void xbr_phases_finish(StructIndex *idx, BulkSpill *spill);

/* xbrtree_bulkins.c: bulk insertion (Fevgas 2019 §3.6) */
extern const BuildMethod xbr_insert_methods[];
extern BulkSpill *xbr_bulkins_begin(StructIndex *idx, const char *method);
extern void xbr_bulkins_put(BulkSpill *spill, const BulkItem *item);
extern void xbr_bulkins_finish(StructIndex *idx, BulkSpill *spill);

/* xbrtree_batch.c: point location and batch queries (Fevgas 2019 §3.6) */
extern void xbr_search(StructIndex *idx, const SearchSpec *spec);
extern void xbr_search_batch(StructIndex *idx, const SearchSpec *specs, int nspecs);

/* xbrtree_check.c */
extern void xbr_check(StructIndex *idx, CheckReport *report);

#endif							/* FEST_XBRTREE_H */
