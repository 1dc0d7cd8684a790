/*-------------------------------------------------------------------------
 *
 * spill_sort.h
 *	  The external sort of the bounded bulk loads: rows of int8 and float8
 *	  columns through PostgreSQL's tuplesort.
 *
 * Every bounded load (rtree_bulk.c, hilbert_rtree_bulk.c, gridfile_bulk.c,
 * xbrtree_bulk.c) sorts its objects as rows of a few int8/float8 columns,
 * the first K of them ascending sort keys, in half of maintenance_work_mem;
 * this is that sort, once.  What else a load holds that grows with its
 * input (per-leaf or per-node records) goes to temporary files (BufFile,
 * spill_file_*) or to a further sort, or stays in memory only within the
 * half that the one sort alive leaves (an STR slice, a packed level's
 * parents), so the loads stay within maintenance_work_mem.  The leading key is an int8 made from the
 * load's own key by one of the order-preserving maps below: int8 is pass
 * by value with PostgreSQL's fastest comparator, so most comparisons end
 * on the first key without touching the tuple.
 *
 *	spill_sort_begin	the sort over ncols columns of the given types
 *						(INT8OID or FLOAT8OID), the first nkeys ascending
 *	spill_sort_put		one row (ncols Datums, none null)
 *	spill_sort_perform	sort what was put
 *	spill_sort_next		the next row, or NULL at the end
 *	spill_sort_get		the next row; the end is an error (the caller knows
 *						how many rows remain)
 *	spill_sort_rescan	read again from the start (TUPLESORT_RANDOMACCESS)
 *	spill_sort_count	the rows put
 *	spill_sort_end		release the sort, its slots and descriptor
 *
 * A row returned by next/get is valid until the next call on the sort.
 *
 * The grid file and the xBR+-tree sort their points alike, by (address,
 * x, y, id): spill_points_* is that sort, the address (a uint64) kept as
 * sort_key_u64 and given back as it was put.
 *
 * IDENTIFICATION
 *	  src/index/spill_sort.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_SPILL_SORT_H
#define FEST_SPILL_SORT_H

#include "festival.h"

#include "storage/buffile.h"
#include "utils/tuplesort.h"

typedef struct SpillSort SpillSort;

extern SpillSort *spill_sort_begin(int ncols, const Oid *types, int nkeys, int sortopt);
extern void spill_sort_put(SpillSort *ss, const Datum *values);
extern void spill_sort_perform(SpillSort *ss);
extern const Datum *spill_sort_next(SpillSort *ss);
extern const Datum *spill_sort_get(SpillSort *ss, const char *what);
extern void spill_sort_rescan(SpillSort *ss);
extern int64 spill_sort_count(const SpillSort *ss);
extern void spill_sort_end(SpillSort *ss);

/*
 * The loads' temporary files (BufFile) of fixed-size records, written in
 * order and read back: a short read or a failed rewind is an error.
 */
extern void spill_file_read(BufFile *file, void *data, size_t size);
extern void spill_file_rewind(BufFile *file);

extern SpillSort *spill_points_begin(void);
extern void spill_points_put(SpillSort *ss, uint64 key, double x, double y, int64 id);
extern uint64 spill_points_get(SpillSort *ss, double *x, double *y, int64 *id);

/*
 * A uint64 key as an int8 of the same order: int8 compares signed, so the
 * top bit is flipped (0 becomes PG_INT64_MIN, 2^63 becomes 0, UINT64_MAX
 * becomes PG_INT64_MAX).  The map is its own inverse.
 */
static inline int64
sort_key_u64(uint64 u)
{
	return (int64) (u ^ (UINT64CONST(1) << 63));
}

/* The uint64 key that sort_key_u64 made k from. */
static inline uint64
sort_key_to_u64(int64 k)
{
	return (uint64) k ^ (UINT64CONST(1) << 63);
}

/*
 * A float8 as an int8 of the same order, for finite values and the
 * infinities: the bits of a non-negative double order as integers; a
 * negative one's magnitude bits are flipped so that larger magnitudes come
 * first, below every non-negative one.  -0 is made +0 first, as float8
 * compares them equal.  NaNs are not ordered as float8 orders them (the
 * loads' coordinates are finite, geomarg_check_wkb); no inverse is needed,
 * as the loads carry the double itself in a float8 column.
 */
static inline int64
sort_key_f8(double d)
{
	int64		bits;

	if (d == 0)
		d = 0;
	memcpy(&bits, &d, sizeof(bits));
	return bits < 0 ? bits ^ PG_INT64_MAX : bits;
}

#endif							/* FEST_SPILL_SORT_H */
