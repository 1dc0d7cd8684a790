/*-------------------------------------------------------------------------
 *
 * framework.h
 *	  The node stores an index can use (options.framework).
 *
 *	'none'	write-through (flash/direct.c), the default
 *	'fast'	FAST, Sarwat et al. 2013 (flash/fast.c)
 *	'efind'	eFIND, Carniel et al. 2017, 2019 (flash/efind.c)
 *
 * Each framework declares its options; the index options accepted are the
 * common ones, the structure's and the chosen framework's.
 *
 * IDENTIFICATION
 *	  src/flash/framework.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_FRAMEWORK_H
#define FEST_FRAMEWORK_H

#include "flash/nodestore.h"
#include "index/options.h"

typedef NodeStore *(*FrameworkCreateFn) (PageIO *io, FestMeta *meta,
										 const NodeOps *node_ops,
										 const char *index_name,
										 FestStats *stats,
										 const FestConfig *config,
										 const char *log_path, bool create);

typedef struct FrameworkDef
{
	const char *name;
	const char *description;
	const OptionSpec *options;	/* NULL-terminated */
	FrameworkCreateFn create;
	/* cross-option checks; NULL if none */
	void		(*validate) (const FestConfig *config);
	bool		uses_log;		/* may keep a redo log */
} FrameworkDef;

extern const char *const framework_names[];
extern const OptionSpec framework_option[];
extern const FrameworkDef *framework_lookup(const char *name);
extern const FrameworkDef *framework_of(const FestConfig *config);

/* GUC-backed settings of the log (sql/festival.c) */
extern int	fest_log_sync_mode;
extern int	fest_log_sync_interval;

#endif							/* FEST_FRAMEWORK_H */
