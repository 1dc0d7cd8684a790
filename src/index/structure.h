/*-------------------------------------------------------------------------
 *
 * structure.h
 *	  The interface every index structure implements.
 *
 * A structure (R-tree, later R*-tree, Hilbert R-tree, xBR+-tree) is a
 * StructureOps table.  It sees an open index only as a StructIndex: a
 * NodeStore to read and write nodes through, the counters of the current
 * operation, its validated configuration and its own state.  It never
 * touches files, catalogs or SQL, so every structure works under every node
 * store.
 *
 * Operations run in the caller's memory context, which is reset after each
 * operation; a structure may allocate freely there.
 *
 * IDENTIFICATION
 *	  src/index/structure.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_STRUCTURE_H
#define FEST_STRUCTURE_H

#include "festival.h"
#include "flash/nodestore.h"
#include "geom/mbr.h"
#include "geom/predicate.h"
#include "index/check.h"
#include "index/options.h"

typedef struct StructIndex
{
	NodeStore  *ns;
	FestStats  *stats;			/* counters of the current operation */
	const FestConfig *config;
	void	   *state;			/* returned by setup */
	const char *name;			/* index name, for messages */
} StructIndex;

typedef struct StructureOps
{
	const char *name;
	const char *description;
	const OptionSpec *options;	/* NULL-terminated, structure-specific */
	const NodeOps *node_ops;

	/*
	 * Derive the structure's state from a complete configuration, raising
	 * an error for combinations that cannot work.  Called when an index is
	 * created and each time it is opened.
	 */
	void	   *(*setup) (const FestConfig *config, uint32 page_size);
	/* Create the empty tree (a root leaf) in a freshly reset file. */
	void		(*init_empty) (StructIndex *idx);
	/* Add one object; the structure's own insertion algorithm. */
	void		(*insert) (StructIndex *idx, int64 id, const Mbr *box);
	/* Remove one entry with this id and MBR; false if there is none. */
	bool		(*remove) (StructIndex *idx, int64 id, const Mbr *box);
	/* Is there an entry with this id and MBR? */
	bool		(*contains) (StructIndex *idx, int64 id, const Mbr *box);
	/* The filter step of a spatial selection. */
	void		(*search) (StructIndex *idx, const SearchSpec *spec);
	/* Verify every invariant, reporting problems instead of raising. */
	void		(*check) (StructIndex *idx, CheckReport *report);
	/* Derived parameters worth reporting (capacities...), as JSON pairs. */
	void		(*describe) (StructIndex *idx, JsonbParseState **state);
} StructureOps;

/* registry.c */
extern const OptionSpec common_options[];
extern const StructureOps *structure_lookup(const char *name);
extern FestConfig *index_options_parse(const StructureOps *ops, Jsonb *user,
									   uint32 *page_size, void **state);

/* rtree.c */
extern const StructureOps rtree_structure;

#endif							/* FEST_STRUCTURE_H */
