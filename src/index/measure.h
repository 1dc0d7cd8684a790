/*-------------------------------------------------------------------------
 *
 * measure.h
 *	  Structure statistics of any tree, through the traversal contract.
 *
 * tree_measure() walks every node reachable from the root through the
 * NodeStore (so buffered changes of FAST and eFIND are included) and
 * describes the tree the way the R-tree literature compares structures
 * (Beckmann et al. 1990, §2: coverage, overlap, dead space, fill):
 *
 *	node MBR	the union of the node's entries' entry_mbr (for the R-tree
 *				family the parent's entry; xBR+: its DBR); empty when the
 *				node has no entry
 *	fill		entries / (nodes × capacity), capacity being what a page
 *				physically holds at that level (ns_page_capacity: page size
 *				minus the page header, divided by the entry size)
 *	coverage	Σ area of the node MBRs of a level
 *	overlap		Σ over unordered pairs of nodes of one level of the area
 *				their MBRs share (each pair once)
 *	dead space	Σ over the nodes of a level of the node MBR's area that no
 *				entry MBR covers: area(node MBR) − area(∪ entry MBRs)
 *	overflow	nodes (and their entries) that are overflow nodes, for a
 *				structure that has them (StructureOps.entry_overflow: the
 *				FOR-tree's O-nodes); they count among the nodes too
 *
 * Every node is also kept (page, level, parent, entries, MBR, region) for
 * dumps.  The fingerprint hashes every node's page, level, parent and
 * entries (entry_mbr and entry_ref), independent of the order of entries
 * or nodes: equal fingerprints mean the same tree.
 *
 * IDENTIFICATION
 *	  src/index/measure.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_MEASURE_H
#define FEST_MEASURE_H

#include "index/structure.h"

typedef struct MeasuredNode
{
	PageId		page;
	PageId		parent;			/* InvalidPageId for the root */
	uint16		level;
	uint32		nentries;
	Mbr			mbr;			/* union of the entries; empty if none */
	bool		has_region;		/* StructureOps.entry_region gave one */
	Mbr			region;
	double		dead_space;
	bool		overflow;		/* StructureOps.entry_overflow: an O-node */
} MeasuredNode;

typedef struct LevelMeasure
{
	int64		nodes;
	int64		entries;
	uint32		capacity;		/* entries per page at this level */
	double		fill;			/* entries / (nodes × capacity) */
	double		coverage;
	double		overlap;
	double		dead_space;
	int64		overflow_nodes; /* of nodes, those that are overflow nodes */
	int64		overflow_entries;	/* their entries */
} LevelMeasure;

typedef struct TreeMeasure
{
	uint32		height;			/* levels; leaves are level 0 */
	LevelMeasure levels[FEST_MAX_LEVELS];
	int64		nodes;
	int64		entries;		/* all levels */
	int64		objects;		/* leaf entries */
	double		fill;			/* Σ entries / Σ (nodes × capacity) */
	double		coverage;
	double		overlap;
	double		dead_space;
	uint64		fingerprint;
	bool		has_overflow;	/* the structure has overflow nodes */
	int64		overflow_nodes;
	MeasuredNode *node_list;	/* every node, in depth-first order */
	int64		nnodes;
} TreeMeasure;

extern TreeMeasure *tree_measure(StructIndex *idx, const StructureOps *ops);

#endif							/* FEST_MEASURE_H */
