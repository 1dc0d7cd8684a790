/*-------------------------------------------------------------------------
 *
 * fortree_buffer.c
 *	  The FOR-tree's write buffer (Jin, Xie, Wang and Yue, "Optimizing
 *	  R-tree for flash memory", Expert Systems with Applications 42(10),
 *	  2015; Fevgas 2019 §2: "an in-memory write buffer holds all the updates
 *	  to nodes (primary and overflow) using a hash table.  The nodes are
 *	  clustered according to increasing IDs, composing flushing units.  The
 *	  coldest flushing units (i.e. no recent updates) with the most
 *	  in-memory updates are persisted first").
 *
 * The framework 'fortree': a buffering store (buffered.c: the hash of
 * buffered pages, byte accounting, the redo log, restart) that keeps each
 * page's changes as FAST does (fast.c: the whole node when NEW, the
 * changes by position when MOD; FESTIval's FOR-tree buffer keeps the same
 * records, FESTIval inventory §2.5), with the FOR-tree's own flushing
 * units:
 *	- units are made when the buffer is full, not fixed in advance: the
 *	  buffered pages in page order, cut into runs of flushing_unit pages
 *	  (only pages that hold changes, unlike FAST's static units, which
 *	  write every page of the unit);
 *	- a unit holding one of the warm pages, the ratio_flushing percent of
 *	  buffered pages modified most recently (the paper's Warm Node List),
 *	  is not chosen;
 *	- of the others, the unit with the most modifications is written.
 * When every unit holds a warm page (a ratio of 100, or few pages), the
 * unit with the most modifications is written (FESTIval takes the first
 * unit in page order there, which depends only on page numbers).
 * Recency is the logical time of each page's last change (BufPage.last_mod),
 * so the choice repeats exactly run after run.
 *
 * The FOR-tree (src/index/fortree.c) runs under every framework, and this
 * buffer under every structure: the paper's FOR-tree is the structure
 * 'fortree' with the framework 'fortree'.
 *
 * IDENTIFICATION
 *	  src/nodestore/fortree_buffer.c
 *
 *-------------------------------------------------------------------------
 */
#include "nodestore/buffered.h"

#include "stats/jsonbuild.h"

/* The buffer's options, read once when the store is created. */
typedef struct ForBufferOptions
{
	uint32		filled;			/* OPTIONS_FILLED */
	int64		buffer_size;
	int64		flushing_unit;
	double		ratio_flushing;
	int64		log_size;
} ForBufferOptions;

const OptionSpec fortree_buffer_option_table[] = {
	BUFFERED_BUFFER_SIZE_OPTION(ForBufferOptions, buffer_size, 524288),
	BUFFERED_FLUSHING_UNIT_OPTION(ForBufferOptions, flushing_unit),
	{
		.name = "ratio_flushing", .type = OPT_REAL, .default_number = 20,
		.min = 0, .max = 100,
		.description = "Percent of the buffered pages, those modified most recently, that are warm: a flushing unit holding one is not written while another can be (the FOR-tree's Warm Node List, Jin et al. 2015).",
		.offset = offsetof(ForBufferOptions, ratio_flushing)
	},
	BUFFERED_LOG_SIZE_OPTION(ForBufferOptions, log_size),
	{0}
};

typedef struct ForBufferState
{
	double		ratio_flushing;
	int64		warm_flushes;	/* flushes that found no cold unit */
} ForBufferState;

static int
compare_page(const void *a, const void *b)
{
	const BufPage *pa = *(const BufPage *const *) a;
	const BufPage *pb = *(const BufPage *const *) b;

	return pa->page < pb->page ? -1 : (pa->page > pb->page ? 1 : 0);
}

/* Most recent first; ties by page. */
static int
compare_recent(const void *a, const void *b)
{
	return -buffered_oldest_first(a, b);
}

static List *
for_choose_unit(BufferedStore *bs)
{
	ForBufferState *st = (ForBufferState *) bs->fw;
	int			n = hash_get_num_entries(bs->table);
	int			unit_size = bs->cfg.flushing_unit;
	BufPage   **by_page;
	BufPage   **by_time;
	HASH_SEQ_STATUS scan;
	BufPage    *bp;
	int			nwarm;
	uint64		warm_after = 0;
	int			best = -1;
	int64		best_mods = -1;
	int			best_any = -1;
	int64		best_any_mods = -1;
	List	   *result = NIL;
	int			i = 0;

	if (n == 0)
		return NIL;
	by_page = palloc(sizeof(BufPage *) * n);
	by_time = palloc(sizeof(BufPage *) * n);
	hash_seq_init(&scan, bs->table);
	while ((bp = hash_seq_search(&scan)) != NULL)
	{
		by_page[i] = bp;
		by_time[i] = bp;
		i++;
	}
	qsort(by_page, n, sizeof(BufPage *), compare_page);

	/* the warm pages: the nwarm most recently modified */
	nwarm = (int) ((double) n * st->ratio_flushing / 100.0);
	if (nwarm > 0)
	{
		qsort(by_time, n, sizeof(BufPage *), compare_recent);
		warm_after = by_time[Min(nwarm, n) - 1]->last_mod;
	}

	for (int u = 0; u * unit_size < n; u++)
	{
		int64		mods = 0;
		bool		warm = false;

		for (int j = u * unit_size; j < Min(n, (u + 1) * unit_size); j++)
		{
			mods += Max(by_page[j]->mod_count, 1);
			/* every change ticks the clock: times are distinct */
			if (nwarm > 0 && by_page[j]->last_mod >= warm_after)
				warm = true;
		}
		if (!warm && mods > best_mods)
		{
			best = u;
			best_mods = mods;
		}
		if (mods > best_any_mods)
		{
			best_any = u;
			best_any_mods = mods;
		}
	}
	if (best < 0)
	{
		best = best_any;
		st->warm_flushes++;
	}
	for (int j = best * unit_size; j < Min(n, (best + 1) * unit_size); j++)
	{
		PageId	   *id = palloc(sizeof(PageId));

		*id = by_page[j]->page;
		result = lappend(result, id);
	}
	pfree(by_page);
	pfree(by_time);
	Assert(list_length(result) >= 1 && list_length(result) <= unit_size);
	return result;
}

static void
for_flushed(BufferedStore *bs, PageId page, const TreeNode *written)
{
}

/* A freed page is buffered as DEL and joins the units like any other. */
static void
for_deleted(BufferedStore *bs, BufPage *bp)
{
}

/* Units are made anew at every flush: nothing names old pages. */
static void
for_reset(BufferedStore *bs)
{
}

static void
for_describe(BufferedStore *bs, JsonbParseState **state)
{
	ForBufferState *st = (ForBufferState *) bs->fw;

	jb_int(state, "warm_flushes", st->warm_flushes);
}

static const BufferedOps fortree_buffer_ops = {
	.name = "fortree",
	.log_writer = LOG_WRITER_FORTREE,
	.absorb = fast_changes_absorb,
	.materialize = fast_changes_materialize,
	.read_stored = fast_changes_read_stored,
	.replay = fast_changes_replay,
	.emit = fast_changes_emit,
	.choose_unit = for_choose_unit,
	.flushed = for_flushed,
	.forget = fast_changes_forget,
	.deleted = for_deleted,
	.reset = for_reset,
	.describe = for_describe
};

NodeStore *
fortree_buffer_store_create(const NodeStoreArgs *args)
{
	ForBufferState *st = palloc0(sizeof(ForBufferState));
	BufferedConfig cfg;
	ForBufferOptions opts;

	OPTIONS_FILL(args->config, fortree_buffer_option_table, &opts);
	cfg.buffer_size = opts.buffer_size;
	cfg.flushing_unit = (int) opts.flushing_unit;
	cfg.log_size = opts.log_size;
	st->ratio_flushing = opts.ratio_flushing;
	return buffered_store_create(&fortree_buffer_ops, &cfg, st, args);
}

/* The buffer is all it holds. */
int64
fortree_buffer_validate(const FestConfig *config)
{
	ForBufferOptions opts;

	OPTIONS_FILL(config, fortree_buffer_option_table, &opts);
	return opts.buffer_size;
}
