/*-------------------------------------------------------------------------
 *
 * check.c
 *	  The check report, and the invariants every index file shares.
 *
 * IDENTIFICATION
 *	  src/index/check.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/check.h"

#include "nodestore/nodestore.h"
#include "format/page.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/hsearch.h"

/*
 * A report for a file whose meta page counts npages pages and which holds
 * file_pages.  Reached pages go into a hash set, so a damaged page count
 * cannot make the check allocate a huge bitmap.
 */
CheckReport *
check_report_create(uint64 npages, uint64 file_pages)
{
	CheckReport *report = palloc0(sizeof(CheckReport));
	HASHCTL		ctl;

	report->npages = npages;
	report->file_pages = file_pages;
	ctl.keysize = sizeof(PageId);
	ctl.entrysize = sizeof(PageId);
	ctl.hcxt = CurrentMemoryContext;
	report->reached = hash_create("festival check pages", 1024, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	return report;
}

static void check_add(CheckReport *report, const char *severity, int64 page,
					  const char *fmt, va_list args) pg_attribute_printf(4, 0);

static void
check_add(CheckReport *report, const char *severity, int64 page,
		  const char *fmt, va_list args)
{
	CheckRow   *row;
	StringInfoData buf;

	if (list_length(report->rows) >= CHECK_MAX_ROWS)
	{
		if (!report->truncated)
		{
			row = palloc(sizeof(CheckRow));
			row->severity = "warning";
			row->page = -1;
			row->message = psprintf("more than %d problems; the rest are not listed",
									CHECK_MAX_ROWS);
			report->rows = lappend(report->rows, row);
			report->truncated = true;
		}
		return;
	}

	initStringInfo(&buf);
	appendStringInfoVA(&buf, fmt, args);
	row = palloc(sizeof(CheckRow));
	row->severity = severity;
	row->page = page;
	row->message = buf.data;
	report->rows = lappend(report->rows, row);
}

void
check_error(CheckReport *report, int64 page, const char *fmt,...)
{
	va_list		args;

	report->nerrors++;
	va_start(args, fmt);
	check_add(report, "error", page, fmt, args);
	va_end(args);
}

void
check_warning(CheckReport *report, int64 page, const char *fmt,...)
{
	va_list		args;

	report->nwarnings++;
	va_start(args, fmt);
	check_add(report, "warning", page, fmt, args);
	va_end(args);
}

/*
 * Record that the walk reached a page.  Returns false (after reporting) if
 * the page is out of range or was reached before: it must not be walked
 * again.
 */
bool
check_mark_reached(CheckReport *report, PageId page)
{
	bool		found;

	if (page < FEST_FIRST_DATA_PAGE || page >= report->npages)
	{
		check_error(report, (int64) page,
					"reference to page " UINT64_FORMAT " outside the file's data pages (2.." UINT64_FORMAT ")",
					page, report->npages - 1);
		return false;
	}
	(void) hash_search(report->reached, &page, HASH_ENTER, &found);
	progress_step(report->progress, 1);
	if (found)
	{
		check_error(report, (int64) page,
					"page " UINT64_FORMAT " is referenced more than once", page);
		return false;
	}
	return true;
}

/*
 * Invariants of the file around the structure: the meta data, the free
 * list, pages that are neither reachable nor free, and the entry count.
 * Runs after the structure's own walk filled in report->reached.
 *
 * Free pages are read straight from the device; buffering node stores must
 * have flushed before a check.
 */
void
check_index_file(NodeStore *ns, CheckReport *report)
{
	FestMeta   *meta = ns->meta;
	PageId		free_page = meta->free_head;
	uint64		free_seen = 0;
	const char *meta_damage[FEST_META_PAGES];

	/*
	 * The meta copies as the device holds them now.  One damaged copy is a
	 * warning: the other holds the latest state (paired writes, meta.h) and
	 * the next meta write repairs it.  Both damaged cannot be open.
	 */
	fest_meta_check_copies(ns->io, meta_damage);
	for (int slot = 0; slot < FEST_META_PAGES; slot++)
		if (meta_damage[slot] != NULL)
			check_warning(report, slot,
						  "meta page %d is damaged (%s); the other copy holds the latest state, and the next meta write (a change, flush or close) rewrites it",
						  slot, meta_damage[slot]);

	while (free_page != InvalidPageId)
	{
		FestPageCheck check;
		PageId		link;

		if (!check_mark_reached(report, free_page))
		{
			check_error(report, (int64) free_page,
						"free list is broken after " UINT64_FORMAT " pages", free_seen);
			break;
		}
		check = ns->ops->read_free_link(ns, free_page, &link);
		if (check != FEST_PAGE_OK)
		{
			check_error(report, (int64) free_page, "free list page: %s",
						fest_page_check_message(check));
			break;
		}
		free_seen++;
		free_page = link;
	}
	if (free_page == InvalidPageId && free_seen != meta->free_count)
		check_error(report, -1,
					"free list holds " UINT64_FORMAT " pages but the meta page counts " UINT64_FORMAT,
					free_seen, meta->free_count);

	if (meta->page_count > report->file_pages)
		check_error(report, -1,
					"the meta page counts " UINT64_FORMAT " pages but the file holds " UINT64_FORMAT,
					meta->page_count, report->file_pages);

	/*
	 * Leaks: pages the file holds that nothing refers to, one row per run
	 * of consecutive pages (an interrupted bulk load leaks thousands in a
	 * row, which would otherwise crowd every other problem out of the
	 * report).
	 */
	{
		PageId		end = Min(report->npages, report->file_pages);
		PageId		run_start = InvalidPageId;

		for (PageId p = FEST_FIRST_DATA_PAGE; p <= end; p++)
		{
			bool		leaked = p < end &&
				hash_search(report->reached, &p, HASH_FIND, NULL) == NULL;

			CHECK_FOR_INTERRUPTS();
			if (leaked && run_start == InvalidPageId)
				run_start = p;
			else if (!leaked && run_start != InvalidPageId)
			{
				if (p - 1 == run_start)
					check_warning(report, (int64) run_start,
								  "page " UINT64_FORMAT " is neither reachable from the root nor on the free list (leaked)",
								  run_start);
				else
					check_warning(report, (int64) run_start,
								  "pages " UINT64_FORMAT " to " UINT64_FORMAT " (" UINT64_FORMAT " pages) are neither reachable from the root nor on the free list (leaked)",
								  run_start, p - 1, p - run_start);
				run_start = InvalidPageId;
			}
		}
	}

	if ((meta->flags & FEST_META_ENTRIES_VALID) &&
		report->leaf_entries != meta->entry_count)
	{
		report->count_mismatch = true;
		check_error(report, -1,
					"the tree holds " UINT64_FORMAT " entries but the meta page counts " UINT64_FORMAT,
					report->leaf_entries, meta->entry_count);
	}

	if ((meta->flags & FEST_META_ALL_POINTS) && report->non_point_seen)
		check_error(report, -1,
					"the meta page says every entry is a point, but some entry MBRs are not points");
}

/*
 * The node of a structure's walk at page, expected at level: NULL, with
 * the problem reported, when the walk was there before (a cycle or a page
 * shared by two parents), the page is damaged, or the node sits at
 * another level.  Every structure's check walks its tree through this.
 */
TreeNode *
check_read_node(NodeStore *ns, CheckReport *report, PageId page, int level)
{
	TreeNode   *node;
	FestPageCheck check;

	CHECK_FOR_INTERRUPTS();
	if (!check_mark_reached(report, page))
		return NULL;
	check = ns->ops->read_checked(ns, page, &node);
	if (check != FEST_PAGE_OK)
	{
		check_error(report, (int64) page, "%s", fest_page_check_message(check));
		return NULL;
	}
	if (node->level != level)
	{
		check_error(report, (int64) page,
					"node is at level %u but its position in the tree is level %d",
					node->level, level);
		return NULL;
	}
	return node;
}

/* A walk can start only from a height the format allows. */
bool
check_height_plausible(CheckReport *report, const FestMeta *meta)
{
	if (meta->height < 1 || meta->height > FEST_MAX_LEVELS)
	{
		check_error(report, -1, "the meta page records height %u", meta->height);
		return false;
	}
	return true;
}
