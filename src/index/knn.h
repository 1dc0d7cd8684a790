/*-------------------------------------------------------------------------
 *
 * knn.h
 *	  Best-first k-nearest-neighbour search over any structure.
 *
 * The search (Hjaltason & Samet, "Distance browsing in spatial databases",
 * TODS 1999, section 4) only uses the traversal contract of structure.h:
 * an internal entry's entry_mbr covers every object of its subtree, so the
 * minimum distance from the query's MBR to it is a lower bound of the
 * distance of every object below.
 *
 * The caller drives it as an iterator because exact distances come from
 * outside the index (the source table): knn_next() returns either the next
 * object in order of distance, or a batch of candidates whose MBR distance
 * is only a lower bound.  The caller measures those and hands them back
 * with knn_push_exact(), then calls knn_next() again.  Candidates the
 * caller does not hand back (missing from the source) are dropped.
 *
 * IDENTIFICATION
 *	  src/index/knn.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_KNN_H
#define FEST_KNN_H

#include "index/structure.h"

typedef struct KnnSearch KnnSearch;

typedef enum KnnStep
{
	KNN_RESULT,					/* *id, *distance: the next neighbour */
	KNN_REFINE,					/* measure the candidates, push them back */
	KNN_DONE					/* every object has been returned */
} KnnStep;

/* Largest limit for which the search prunes by the k-th distance (knn.c). */
#define KNN_PRUNE_MAX 64

/* Most nodes read with one ns_read_many. */
#define KNN_MAX_GROUP 256

/*
 * How nodes are read (knn.c's header): group <= 1 reads one node at a
 * time; otherwise up to group nodes at the head of the queue are read
 * together: those the search is sure to read (the same nodes as one at a
 * time), and up to speculative nodes more that it may not need.
 */
typedef struct KnnReading
{
	int			group;
	int			speculative;
} KnnReading;

/*
 * exact_leaves: a leaf entry's MBR distance is its object's distance
 * (points against a point query), so no candidate is ever returned.
 * limit: the caller stops after that many results (k); the grouping rule
 * relies on it.
 */
extern KnnSearch *knn_begin(StructIndex *idx, const Mbr *query,
							bool exact_leaves, int64 limit,
							const KnnReading *reading);
extern KnnStep knn_next(KnnSearch *search, int max_refine, int64 *id,
						double *distance, const int64 **refine_ids,
						int *nrefine);
extern void knn_push_exact(KnnSearch *search, int64 id, double distance);

#endif							/* FEST_KNN_H */
