/*-------------------------------------------------------------------------
 *
 * framework.h
 *	  The node stores an index can use (options.framework).
 *
 *	'none'	write-through (nodestore/writethrough.c), the default
 *	'fast'	FAST, Sarwat et al. 2013 (nodestore/fast.c)
 *	'efind'	eFIND, Carniel et al. 2017, 2019 (nodestore/efind.c)
 *	'fortree' the FOR-tree's write buffer, Jin et al. 2015
 *			(nodestore/fortree_buffer.c)
 *
 * Each framework owns its option table and typed struct (fast.c, efind.c,
 * fortree_buffer.c) and names the table here; the index options accepted are the index
 * file's, the structure's, the chosen framework's and the page cache's.
 *
 * IDENTIFICATION
 *	  src/nodestore/framework.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_FRAMEWORK_H
#define FEST_FRAMEWORK_H

#include "nodestore/nodestore.h"
#include "options/options.h"

/* What a node store is made from (FrameworkDef.create). */
typedef struct NodeStoreArgs
{
	PageIO	   *io;				/* the top of the index's page I/O chain */
	FestMeta   *meta;			/* the open index's, read from the file */
	const NodeOps *node_ops;	/* the structure's entries */
	const char *index_name;
	FestStats  *stats;			/* counters of the current operation */
	const FestConfig *config;	/* the complete configuration */
	/*
	 * Where the store may keep a log (<index file>.log); NULL for a
	 * write-through store whose device does not outlive the session (a
	 * memory device).
	 */
	const char *log_path;
	bool		create;			/* a new index: no log to replay */
} NodeStoreArgs;

typedef NodeStore *(*FrameworkCreateFn) (const NodeStoreArgs *args);

typedef struct FrameworkDef
{
	const char *name;
	const char *description;
	const OptionSpec *options;	/* NULL-terminated; NULL if none */
	/* the store over an open file; fills the typed options from args->config */
	FrameworkCreateFn create;

	/*
	 * Fill the typed options, raise an error for options that are valid
	 * alone but not together, and return the bytes of memory the store's
	 * buffers hold by its options.  NULL: no options, no buffers.
	 */
	int64		(*validate) (const FestConfig *config);
	bool		uses_log;		/* may keep a redo log */
} FrameworkDef;

extern const char *const framework_names[];
extern const OptionSpec framework_option[];
extern const FrameworkDef *framework_lookup(const char *name);
extern const FrameworkDef *framework_choose(Jsonb *user);

/* writethrough.c: the write-through store ('none') */
extern NodeStore *wt_store_create(const NodeStoreArgs *args);

/* GUC-backed settings of the log (sql/festival.c) */
extern int	fest_log_sync_mode;
extern int	fest_log_sync_interval;

#endif							/* FEST_FRAMEWORK_H */
