/*-------------------------------------------------------------------------
 *
 * gridfile.h
 *	  The Grid File for Flash Memory (GFFM; Fevgas 2019, PhD thesis,
 *	  University of Thessaly, §3.3), a two-level grid file (Hinrichs 1985,
 *	  "Implementation of the grid file: design concepts and experience",
 *	  BIT 25) with buckets updated in place, private declarations.
 *
 * Points only, inside a fixed extent (option "extent").  The extent is cut
 * by a buddy system (Hinrichs 1985; Nievergelt, Hinterberger, Sevcik 1984,
 * ACM TODS 9): every region is a dyadic box reached from the extent by
 * halvings at the midpoint, the axis alternating x, y, x, ...  A region is
 * named by the bits of its halvings (0 = low half, 1 = high half), stored
 * with a marker bit above them: the extent is 1, its halves 2 and 3, and
 * the region of bits b1..bL is (1 << L) | b1..bL.  Buddies differ in the
 * last bit only.
 *
 * Points are located on a 2^31 x 2^31 grid of cells (GF_AXIS_BITS): the
 * address of a point is its cell's, GF_MAX_DEPTH bits long.  More than a
 * bucket's capacity of points in one cell cannot be split apart and is
 * refused with an error (as the xBR+-tree does).
 *
 * Levels.  Level 0 holds buckets, level 1 sub-directories (the thesis's
 * directory pages), level 2 the root directory (the thesis keeps it in
 * RAM; festival reads it through the node store, see gridfile.c).  An
 * empty index is a root bucket, a small one a root sub-directory; a root
 * directory that outgrows its page gains a level, which the thesis's
 * data sizes never need.  The entries of a node at levels >= 1 tile its
 * region exactly: they are the grid array of the sub-directory, kept as
 * the list of its distinct bucket regions (the scales and cell array of
 * the thesis follow from them by CPU work only; the I/O is the same).
 *
 * Bucket entries (24 bytes), sorted by (x, y, id) (eFIND's merged nodes
 * must equal written ones, which needs a total order):
 *
 *	offset size field
 *	     0    8 x		float8
 *	     8    8 y		float8
 *	    16    8 id		int8
 *
 * Directory entries (48 bytes), sorted by region (the bits read left to
 * right; regions of one node never nest, so that order is total):
 *
 *	offset size field
 *	     0   32 region	4 x float8: the region's box, xmin, ymin, xmax,
 *						ymax (derived from addr by gf_region_box; kept so
 *						that the generic algorithms see it as the entry's
 *						rectangle)
 *	    32    8 child	int8: the child's page
 *	    40    8 addr	uint64: the region's bits with the marker bit
 *
 * IDENTIFICATION
 *	  src/index/gridfile.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_GRIDFILE_H
#define FEST_GRIDFILE_H

#include "index/structure.h"

#include "port/pg_bitutils.h"

#define GF_AXIS_BITS	31
#define GF_MAX_DEPTH	(2 * GF_AXIS_BITS)
#define GF_ROOT_ADDR	UINT64CONST(1)

typedef struct GfBucketEntry
{
	double		x;
	double		y;
	int64		id;
} GfBucketEntry;

typedef struct GfDirEntry
{
	Mbr			region;
	int64		child;
	uint64		addr;
} GfDirEntry;

StaticAssertDecl(sizeof(GfBucketEntry) == 24, "GfBucketEntry must be 24 bytes");
StaticAssertDecl(sizeof(GfDirEntry) == 48, "GfDirEntry must be 48 bytes");

#define GfBucketEntries(node)	((GfBucketEntry *) (node)->entries)
#define GfDirEntries(node)		((GfDirEntry *) (node)->entries)

/* knn_prefetch (gridfile_knn.c) */
typedef enum GfKnnPrefetch
{
	GF_KNN_PREFETCH_NONE,
	GF_KNN_PREFETCH_DATA,
	GF_KNN_PREFETCH_ALL
} GfKnnPrefetch;

/*
 * Pages the ring kNN reads in one group (one ns_read_many; LB-Grid: logical
 * buckets, their log pages in one ns_read_many), standing in for the
 * thesis's read buffers like P-RQ's groups (batch_search.c).
 */
#define GF_KNN_GROUP	64

typedef struct GfState
{
	Mbr			extent;
	uint32		bucket_max;		/* points a bucket holds */
	uint32		dir_max;		/* regions a directory page holds */
	uint32		bucket_merge;	/* a bucket left with at most this many
								 * points merges with its buddy if they fit */
	uint32		dir_merge;
	bool		batched_range;	/* range_algorithm p-rq */
	GfKnnPrefetch knn_prefetch;
} GfState;

/* ---- region addresses ---- */

/* Number of halvings (bits) of an address; 0 for the extent. */
static inline int
gf_addr_len(uint64 a)
{
	Assert(a != 0);
	return pg_leftmost_one_pos64(a);
}

/* The region's bits left-aligned in 64 bits: the sort key. */
static inline uint64
gf_addr_key(uint64 a)
{
	int			len = gf_addr_len(a);

	return len == 0 ? 0 : (a ^ (UINT64CONST(1) << len)) << (64 - len);
}

static inline int
gf_addr_cmp(uint64 a, uint64 b)
{
	uint64		ka = gf_addr_key(a),
				kb = gf_addr_key(b);

	if (ka != kb)
		return ka < kb ? -1 : 1;
	return gf_addr_len(a) < gf_addr_len(b) ? -1 :
		(gf_addr_len(a) > gf_addr_len(b) ? 1 : 0);
}

/* Region a contains region b (a is a prefix of b, or equal). */
static inline bool
gf_addr_contains(uint64 a, uint64 b)
{
	int			la = gf_addr_len(a),
				lb = gf_addr_len(b);

	return la <= lb && (b >> (lb - la)) == a;
}

/* A run of entries, and the region it is to fill (gf_cut). */
typedef struct GfPiece
{
	uint64		addr;
	char	   *entries;
	uint64	   *keys;			/* address of each entry */
	int			n;
} GfPiece;

/*
 * gridfile.c.  Besides GFFM itself, the directory code LB-Grid shares
 * (lbgrid.c): its sub-directories and root are GFFM directory pages whose
 * level-1 entries name logical buckets instead of bucket pages.
 */
extern int	gf_compare_identity(const void *a, const void *b, uint16 level);
extern void gf_entry_mbr(const void *entry, uint16 level, Mbr *box);
extern int64 gf_entry_ref(const void *entry, uint16 level);
extern uint64 gf_point_addr(const GfState *st, double x, double y);
extern bool gf_point_inside(const GfState *st, double x, double y);
extern uint64 gf_point_admit(StructIndex *idx, double x, double y);
extern void gf_region_box(const GfState *st, uint64 addr, Mbr *box);
extern int	gf_locate(const TreeNode *node, uint64 point);
extern void gf_fill_dir_entry(const GfState *st, GfDirEntry *e, uint64 addr,
							  PageId child);
extern int	gf_descend(StructIndex *idx, uint64 point, PathStep *path,
					   int stop_level);
extern uint64 gf_path_region(const PathStep *path, int d);
extern void gf_cut(uint64 region, char *entries, uint64 *keys, int n,
				   uint32 esize, uint32 max, List **pieces);
extern void gf_refuse_copies(StructIndex *idx, const uint64 *keys, int n,
							 uint64 point, double x, double y);
extern void gf_split_up(StructIndex *idx, PathStep *path, int depth,
						TreeNode *node, char *entries, uint64 *keys, int n,
						uint32 esize);
extern void gf_remove_slot(TreeNode *node, int slot);
extern void gf_merge_up(StructIndex *idx, PathStep *path, int depth,
						bool changed, int min_root_level);
/* range_algorithm's choices, shared by GFFM and LB-Grid: rq, then p-rq */
extern const char *const gf_range_algorithms[];
#define GF_RANGE_P_RQ 1
/* knn_prefetch's choices, shared likewise, in GfKnnPrefetch order */
extern const char *const gf_knn_prefetches[];

extern void gf_state_fill(GfState *st, const FestConfig *config,
						  uint32 page_size, const OptionBox *extent,
						  uint32 bucket_max, int max_fill, int merge_fill,
						  bool batched_range, int knn_prefetch);
extern void gf_search(StructIndex *idx, const SearchSpec *spec);
extern bool gf_entry_region(StructIndex *idx, const void *entry, uint16 level,
							Mbr *region);

/* gridfile_bulk.c */
extern void gf_bulk_load(StructIndex *idx, BulkItem *items, int64 n,
						 const char *method);
typedef struct GfSpill GfSpill;
extern BulkSpill *gf_spill_begin(StructIndex *idx, const char *method);
extern void gf_spill_put(BulkSpill *spill, const BulkItem *item);
extern void gf_spill_load(StructIndex *idx, BulkSpill *spill);

/* gridfile_knn.c */
extern int	gf_knn(StructIndex *idx, double x, double y, int k, int64 **ids,
				   double **distances);

/* gridfile_check.c */
typedef void (*GfCheckBucket) (void *arg, CheckReport *report, int64 ref,
							   uint64 region);
extern void gf_check(StructIndex *idx, CheckReport *report);
extern void gf_check_walk(StructIndex *idx, CheckReport *report,
						  GfCheckBucket bucket, void *arg);
extern bool gf_check_point(CheckReport *report, const GfState *st, int64 page,
						   uint32 i, double x, double y, int64 id,
						   uint64 region);

#endif							/* FEST_GRIDFILE_H */
