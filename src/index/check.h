/*-------------------------------------------------------------------------
 *
 * check.h
 *	  Collecting the findings of festival.check().
 *
 * A structure's check walks its tree and reports every broken invariant as
 * a row (severity, page, message) instead of raising an error, so one call
 * lists every problem.  The report also records which pages the walk
 * reached, so that the generic part (check.c) can find pages that are
 * neither reachable nor on the free list.
 *
 * IDENTIFICATION
 *	  src/index/check.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_CHECK_H
#define FEST_CHECK_H

#include "festival.h"
#include "format/meta.h"
#include "nodes/pg_list.h"
#include "stats/progress.h"

/* At most this many rows are returned; the last one says so. */
#define CHECK_MAX_ROWS 1000

typedef struct CheckRow
{
	const char *severity;		/* "error" or "warning" */
	int64		page;			/* -1 when not about one page */
	char	   *message;
} CheckRow;

typedef struct CheckReport
{
	List	   *rows;
	int			nerrors;
	int			nwarnings;
	bool		truncated;
	uint64		npages;			/* pages the meta page counts */
	uint64		file_pages;		/* pages the file holds */
	struct HTAB *reached;		/* pages reached by the walk */
	uint64		leaf_entries;	/* counted by the structure's walk */
	bool		count_mismatch; /* the meta page vouches for another count */
	bool		non_point_seen; /* a leaf entry whose MBR is not a point */
	Progress   *progress;		/* counts the pages reached, or NULL */
} CheckReport;

extern CheckReport *check_report_create(uint64 npages, uint64 file_pages);
extern void check_error(CheckReport *report, int64 page, const char *fmt,...) pg_attribute_printf(3, 4);
extern void check_warning(CheckReport *report, int64 page, const char *fmt,...) pg_attribute_printf(3, 4);
extern bool check_mark_reached(CheckReport *report, PageId page);

struct NodeStore;
struct TreeNode;
extern void check_index_file(struct NodeStore *ns, CheckReport *report);
extern struct TreeNode *check_read_node(struct NodeStore *ns, CheckReport *report,
										PageId page, int level);
extern bool check_height_plausible(CheckReport *report, const FestMeta *meta);

#endif							/* FEST_CHECK_H */
