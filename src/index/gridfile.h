/*-------------------------------------------------------------------------
 *
 * gridfile.h
 *	  The Grid File for Flash Memory (GFFM; Fevgas 2019, PhD thesis,
 *	  University of Thessaly, §3.1 and §3.3), the two-level grid file of
 *	  Hinrichs (1985, "Implementation of the grid file: design concepts and
 *	  experience", BIT 25) with buckets updated in place: private
 *	  declarations, shared with LB-Grid (lbgrid.c).
 *
 * Points only, inside a fixed extent (option "extent").  Splits follow a
 * buddy system (Hinrichs 1985; Nievergelt, Hinterberger, Sevcik 1984, ACM
 * TODS 9): every region is a dyadic box reached from the extent by
 * halvings at the midpoint, the axis alternating x, y, x, ...  A region
 * is named by the bits of its halvings (0 = low half, 1 = high half),
 * stored with a marker bit above them: the extent is 1, its halves 2 and
 * 3, and the region of bits b1..bL is (1 << L) | b1..bL.  Buddies differ
 * in the last bit only.
 *
 * The grid.  Points are located on a 2^31 x 2^31 grid of cells
 * (GF_AXIS_BITS); a grid line is an integer 0 .. 2^31, and every scale
 * value of the grid file is such a line (a region's edges are lines, so
 * scales compare exactly, without floating point).  More than a bucket's
 * capacity of points in one cell cannot be split apart and is refused
 * with an error (as the xBR+-tree does).
 *
 * The two levels (thesis §3.1, Fig. 3.2):
 *	- the root directory: the root scales (the x and y lines that cut the
 *	  extent) and the root grid array (each cell names the sub-directory
 *	  holding it), held in memory (gridfile_root.c) and persisted in the
 *	  root pages, levels >= 2;
 *	- sub-directories, level 1, one page each: the sub-scales and grid
 *	  array of the page's region, each cell naming a bucket (LB-Grid: a
 *	  logical bucket);
 *	- buckets, level 0, one page each (LB-Grid: log pages).
 * A point is found by a binary search of the root scales, one read of a
 * sub-directory, a binary search of its scales and one read of its bucket:
 * at most two page accesses (gf_lookup asserts it).
 *
 * Directory pages (levels >= 1) keep their grid array in region form: one
 * 56-byte entry per region (a bucket of a sub-directory, a sub-directory
 * of a root page), holding the region and the box of grid cells it covers
 * in the page's own scales, which are the regions' edges:
 *
 *	offset size field
 *	     0   32 region	4 x float8: the region's box, xmin, ymin, xmax,
 *						ymax (derived from addr by gf_region_box; kept so
 *						that the generic algorithms see it as the entry's
 *						rectangle, structure.h's traversal contract)
 *	    32    8 child	int8: the child's page (LB-Grid level 1: the
 *						logical bucket, lbgrid.h)
 *	    40    8 addr	uint64: the region's bits with the marker bit
 *	    48    2 cx0		uint16: first column of the page's grid array the
 *						region covers
 *	    50    2 cx1		uint16: one past its last column
 *	    52    2 cy0		uint16: first row
 *	    54    2 cy1		uint16: one past its last row
 *
 * Entries are sorted by region (the bits read left to right; regions of
 * one page never nest).  The x-scale of a page is the sorted set of the
 * vertical grid lines of its regions' edges: line k is the left edge of
 * every entry with cx0 = k and the right edge of every entry with cx1 =
 * k; columns are the intervals between consecutive lines, and the
 * entries' cell boxes tile the nx x ny grid array exactly (each cell names
 * exactly one region).  A scale holds a line only while some region uses
 * it (thesis §3.4.4: a merge removes a boundary no longer needed), so the
 * scales and the grid array are what the entries say, and a split or a
 * merge updates them (gf_dir_regrid): a split that needs a new boundary
 * inserts it into the scale and widens every region it crosses by one
 * column or row, as in the grid file.  A literal array of nx x ny cells
 * would not be entries: FAST and eFIND log and merge a node as its
 * entries (DESIGN.md, the composition rule), and the generic algorithms
 * read every entry as a child.  So a page's capacity is counted in
 * regions (entries), not in cells.
 *
 * The root pages (levels >= 2) hold the entries of the sub-directories,
 * each page a grid of its own region; one page at level 2 holds the whole
 * root directory until it outgrows it, then the level-2 pages are cut by
 * halving as a sub-directory is, and pages one level up name them (the
 * thesis's root directory is in RAM and never needs a page; these exist
 * so that the file alone holds the index and the generic algorithms can
 * walk it).  Only opening the index, and changing the root directory,
 * touch them; lookups use the copy in memory.
 *
 * The meta page's structure area (FestMeta.structure_state, 64 bytes):
 *
 *	offset size field
 *	     0    4 magic		GF_META_MAGIC "GRDF"
 *	     4    4 layout		GF_LAYOUT_VERSION (2: this two-level layout;
 *						files of version 1, a multi-level directory of
 *						48-byte entries, hold zeros here and are refused
 *						until festival.build() rewrites them)
 *	     8    8 root_version	changes with every change of the root
 *						directory: what the copy in memory was made from
 *	    16   48 reserved	zero
 *
 * Bucket entries (24 bytes), sorted by (x, y, id) (eFIND's merged nodes
 * must equal written ones, which needs a total order):
 *
 *	offset size field
 *	     0    8 x		float8
 *	     8    8 y		float8
 *	    16    8 id		int8
 *
 * IDENTIFICATION
 *	  src/index/gridfile.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_GRIDFILE_H
#define FEST_GRIDFILE_H

#include "index/point_entry.h"
#include "index/structure.h"

#include "port/pg_bitutils.h"

#define GF_AXIS_BITS	31
#define GF_MAX_DEPTH	(2 * GF_AXIS_BITS)
#define GF_ROOT_ADDR	UINT64CONST(1)
#define GF_LINES		(UINT64CONST(1) << GF_AXIS_BITS)	/* the last grid line */

/* levels of the two-level grid file */
#define GF_LEVEL_BUCKET	0
#define GF_LEVEL_SUBDIR	1
#define GF_LEVEL_ROOT	2		/* the root pages holding sub-directories */
#define GF_MIN_HEIGHT	3

/* the meta page's structure area (above) */
#define GF_META_MAGIC		0x46445247	/* "GRDF" little-endian */
#define GF_LAYOUT_VERSION	2

typedef struct GfMetaState
{
	uint32		magic;
	uint32		layout;
	uint64		root_version;
	uint8		reserved[48];
} GfMetaState;

StaticAssertDecl(sizeof(GfMetaState) == FEST_STRUCTURE_STATE_SIZE,
				 "GfMetaState fills the meta's structure area");

/* A bucket entry: a point and its row's id (index/point_entry.h). */
typedef PointEntry GfBucketEntry;

typedef struct GfDirEntry
{
	Mbr			region;
	int64		child;
	uint64		addr;
	uint16		cx0;
	uint16		cx1;
	uint16		cy0;
	uint16		cy1;
} GfDirEntry;

StaticAssertDecl(sizeof(GfBucketEntry) == 24, "GfBucketEntry must be 24 bytes");
StaticAssertDecl(sizeof(GfDirEntry) == 56, "GfDirEntry must be 56 bytes");

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
 * The pages reading bucket ref takes (thesis Alg. 6, BTT[B].list): GFFM
 * the bucket's page (put in *one), LB-Grid its log-page list (lbgrid.c);
 * pages already in memory are left out.  Returns how many.
 */
typedef int (*GfBucketPages) (StructIndex *idx, int64 ref, PageId *one,
							  const PageId **pages);

typedef struct GfRoot GfRoot;

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
	/*
	 * The read buffers the thesis's group reads fill (Alg. 6-8): DPB, the
	 * directory pages of one group; LBB, the data pages (buckets, log
	 * pages) of one group.
	 */
	uint32		dpb_pages;
	uint32		lbb_pages;
	GfBucketPages bucket_pages; /* NULL: GFFM's bucket pages */
	GfRoot	   *root;			/* the root directory in memory */
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

/* The bits at even positions of v (0, 2, ..., 62), packed. */
static inline uint32
gf_even_bits(uint64 v)
{
	v &= UINT64CONST(0x5555555555555555);
	v = (v | (v >> 1)) & UINT64CONST(0x3333333333333333);
	v = (v | (v >> 2)) & UINT64CONST(0x0F0F0F0F0F0F0F0F);
	v = (v | (v >> 4)) & UINT64CONST(0x00FF00FF00FF00FF);
	v = (v | (v >> 8)) & UINT64CONST(0x0000FFFF0000FFFF);
	v = (v | (v >> 16)) & UINT64CONST(0x00000000FFFFFFFF);
	return (uint32) v;
}

/*
 * The grid lines of a region's edges: [*x0, *x1) x [*y0, *y1), lines
 * 0 .. 2^31.  A point's address (GF_MAX_DEPTH bits) gives its cell.
 */
static inline void
gf_region_lines(uint64 addr, uint64 *x0, uint64 *x1, uint64 *y0, uint64 *y1)
{
	int			len = gf_addr_len(addr);
	int			nx = (len + 1) / 2,
				ny = len / 2;
	/* the bits left-aligned in 62: x at the odd positions, y the even */
	uint64		bits = len == 0 ? 0 :
		(addr ^ (UINT64CONST(1) << len)) << (GF_MAX_DEPTH - len);

	*x0 = gf_even_bits(bits >> 1);
	*y0 = gf_even_bits(bits);
	*x1 = *x0 + (UINT64CONST(1) << (GF_AXIS_BITS - nx));
	*y1 = *y0 + (UINT64CONST(1) << (GF_AXIS_BITS - ny));
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
 * A grid in memory (gridfile_dir.c): scales and the grid array of a
 * directory page or of the root directory.  Region r covers the cells
 * [cx0[r], cx1[r]) x [cy0[r], cy1[r]); cells[j * nx + i] is the region of
 * column i, row j (NULL when not built).
 */
typedef struct GfGrid
{
	int			nx;
	int			ny;
	uint64	   *sx;				/* nx + 1 grid lines */
	uint64	   *sy;				/* ny + 1 grid lines */
	int			nregions;
	int32	   *cx0;
	int32	   *cx1;
	int32	   *cy0;
	int32	   *cy1;
	int32	   *cells;
} GfGrid;

/* The result of a point lookup (gf_lookup). */
typedef struct GfLookup
{
	int			sub;			/* the sub-directory's number in the root */
	uint64		sub_addr;		/* its region */
	TreeNode   *subdir;			/* the sub-directory page, read */
	int			slot;			/* the entry of the bucket holding the point */
	TreeNode   *bucket;			/* the bucket page (GFFM), or NULL */
} GfLookup;

/*
 * gridfile.c.  Besides GFFM itself, the directory code LB-Grid shares
 * (lbgrid.c): its sub-directories and root are GFFM directory pages whose
 * level-1 entries name logical buckets instead of bucket pages.
 */
extern int	gf_compare_identity(const void *a, const void *b, uint16 level);
extern void gf_entry_mbr(const void *entry, uint16 level, Mbr *box);
extern int64 gf_entry_ref(const void *entry, uint16 level);
extern uint16 gf_level_flags(uint16 level);
extern uint64 gf_point_addr(const GfState *st, double x, double y);
extern bool gf_point_inside(const GfState *st, double x, double y);
extern uint64 gf_point_admit(StructIndex *idx, double x, double y);
extern void gf_region_box(const GfState *st, uint64 addr, Mbr *box);
extern double gf_line_x(const GfState *st, uint64 line);
extern double gf_line_y(const GfState *st, uint64 line);
extern int	gf_locate(const TreeNode *node, uint64 point);
extern void gf_fill_dir_entry(const GfState *st, GfDirEntry *e, uint64 addr,
							  PageId child);
extern void gf_cut(uint64 region, char *entries, uint64 *keys, int n,
				   uint32 esize, uint32 max, List **pieces);
extern void gf_refuse_copies(StructIndex *idx, const uint64 *keys, int n,
							 uint64 point, double x, double y);
extern void gf_remove_slot(TreeNode *node, int slot);
/* range_algorithm's choices, shared by GFFM and LB-Grid: rq, then p-rq */
extern const char *const gf_range_algorithms[];
#define GF_RANGE_P_RQ 1
/* knn_prefetch's choices, shared likewise, in GfKnnPrefetch order */
extern const char *const gf_knn_prefetches[];

extern void gf_state_fill(GfState *st, const FestConfig *config,
						  uint32 page_size, const OptionBox *extent,
						  uint32 bucket_max, int max_fill, int merge_fill,
						  bool batched_range, int knn_prefetch,
						  int64 dpb_bytes, int64 lbb_bytes);
extern void gf_describe_common(const GfState *st, JsonbParseState **state);
extern bool gf_entry_region(StructIndex *idx, const void *entry, uint16 level,
							Mbr *region);

/* gridfile_dir.c: directory pages as grid arrays, splits and merges */
extern bool gf_grid_build(GfGrid *grid, const uint64 *addrs, int n, bool cells);
extern void gf_grid_free(GfGrid *grid);
extern int	gf_grid_find(const GfGrid *grid, uint64 px, uint64 py);
extern void gf_grid_range(const GfGrid *grid, uint64 lx0, uint64 lx1, uint64 ly0,
						  uint64 ly1, int *i0, int *i1, int *j0, int *j1);
extern int	gf_scale_interval(const uint64 *s, int n, uint64 v);
extern void gf_dir_grid(StructIndex *idx, const TreeNode *node, GfGrid *grid, bool cells);
extern void gf_entries_inside(const TreeNode *node, uint64 region, int *lo, int *hi);
extern void gf_dir_absorb(TreeNode *node, const TreeNode *buddy, bool buddy_low);
extern void gf_dir_regrid(TreeNode *node);
extern int	gf_dir_locate(StructIndex *idx, const TreeNode *node, uint64 point);
extern void gf_write_dir(StructIndex *idx, TreeNode *node, NodeWriteKind kind);
extern void gf_subdir_replace(StructIndex *idx, GfLookup *lk, uint64 region,
							  const GfDirEntry *ents, int n);
extern void gf_subdir_merge(StructIndex *idx, GfLookup *lk);

/* gridfile_root.c: the root directory in memory */
extern GfRoot *gf_root(StructIndex *idx);
extern int	gf_root_find(const GfRoot *root, uint64 point);
extern int	gf_root_count(const GfRoot *root);
extern PageId gf_root_sub_page(const GfRoot *root, int sub);
extern uint64 gf_root_sub_addr(const GfRoot *root, int sub);
extern int	gf_root_sub_by_addr(const GfRoot *root, uint64 addr);
extern bool gf_root_same_holder(const GfRoot *root, int a, int b);
extern void gf_root_describe(StructIndex *idx, JsonbParseState **state);
extern const GfGrid *gf_root_grid(const GfRoot *root);
extern void gf_root_replace(StructIndex *idx, uint64 region,
							const GfDirEntry *ents, int n);
extern void gf_root_init(StructIndex *idx, PageId subdir);
extern void gf_root_reset(StructIndex *idx);
extern void gf_root_note(StructIndex *idx, const TreeNode *node);
extern void gf_root_changed(StructIndex *idx);
extern GfRoot *gf_root_create(MemoryContext parent);
extern bool gf_layout_current(const FestMeta *meta);
extern void gf_check_layout(StructIndex *idx);
extern void gf_check_root(StructIndex *idx, CheckReport *report);

/* gridfile.c: lookups */
extern void gf_lookup(StructIndex *idx, uint64 point, bool read_bucket,
					  GfLookup *lk);

/* gridfile_query.c: RQ, P-RQ (Alg. 6), group queries (Alg. 8) */
typedef bool (*GfStill) (void *arg, int item);
typedef void (*GfVisit) (void *arg, int item, TreeNode *node);
extern void gf_read_next_fit(StructIndex *idx, const int64 *refs, int n,
							 uint16 level, uint32 limit, GfStill still,
							 GfVisit visit, void *arg);
extern void gf_search(StructIndex *idx, const SearchSpec *spec);
extern void gf_search_batch(StructIndex *idx, const SearchSpec *specs, int n);

/* gridfile_bulk.c */
extern void gf_bulk_load(StructIndex *idx, BulkItem *items, int64 n,
						 const char *method);
typedef struct GfSpill GfSpill;
extern BulkSpill *gf_spill_begin(StructIndex *idx, const char *method);
extern void gf_spill_put(BulkSpill *spill, const BulkItem *item);
extern void gf_spill_load(StructIndex *idx, BulkSpill *spill);
extern void gf_build_directory(StructIndex *idx, GfDirEntry *buckets, int64 n);

/* gridfile_knn.c */
extern int	gf_knn(StructIndex *idx, double x, double y, int k, int64 **ids,
				   double **distances);

/* gridfile_check.c */
typedef void (*GfCheckBucket) (void *arg, CheckReport *report, int64 ref,
							   uint64 region);
extern void gf_check(StructIndex *idx, CheckReport *report);
extern bool gf_check_walk(StructIndex *idx, CheckReport *report,
						  GfCheckBucket bucket, void *arg);
extern bool gf_check_point(CheckReport *report, const GfState *st, int64 page,
						   uint32 i, double x, double y, int64 id,
						   uint64 region);

#endif							/* FEST_GRIDFILE_H */
