/*-------------------------------------------------------------------------
 *
 * xbrtree_phases.c
 *	  Bulk loading an xBR+-tree in four phases (build methods 'four_phase'
 *	  and 'four_phase_ssd').
 *
 * The loading of Roumelis et al. (MEDI 2016; Computer Standards &
 * Interfaces 57, 2018) as Fevgas 2019 §3.6 describes it, and its version
 * for SSDs (Roumelis, Fevgas et al., Computing 2019), beside the one-pass
 * loader 'bulk' (xbrtree_bulk.c), which does the quadrant partitioning of
 * the whole input at once:
 *
 *	1. the input is split into 2^d = 4 sub-files, one per quadrant of the
 *	   extent (the first digit of each point's address);
 *	2. a sub-file whose points do not fit in memory is split the same way,
 *	   recursively, into sub-files of its sub-quadrants, until each is a
 *	   block that fits; blocks come in Z order (depth first, digits 0..3);
 *	3. each block is read into memory, its points sorted in Z order, and an
 *	   in-memory xBR+-tree is built over its quadrant (the one-pass
 *	   loader's partitioning, xbr_build_block): every level that does not
 *	   fit in one node is written as nodes, the last one (the block tree's
 *	   root) is not;
 *	4. the block tree is merged into the disk-resident tree built so far:
 *	   every entry of its root is inserted at its level (xbr_insert_at:
 *	   point location of its quadrant, splits climbing as insertion's do).
 *	   The thesis does not say how two trees of different heights merge;
 *	   festival's rule: the shorter tree goes into the taller one.  When the
 *	   block tree is the taller, its root becomes the root and the old
 *	   root's entries (or points) are inserted into it, the old root's page
 *	   released.  A block no larger than a leaf has a leaf for a root: its
 *	   points are inserted one by one.
 *
 * A block's quadrant holds no point of the disk tree (the blocks partition
 * the space), so each merged entry is a subtree of room the tree did not
 * use: point location widens an entry to reach it where none holds it
 * (xbrtree.c), and nothing else of the tree changes.
 *
 * "Fits in memory" is maintenance_work_mem: a block holds at most half of
 * it (XBR_BULK_BYTES_PER_POINT per point, as the one-pass loader counts),
 * the write buffer of phases 3 and 4 a quarter, the sub-files' buffers the
 * rest.  The sub-files are PostgreSQL's temporary files (fd.c, under
 * temp_tablespaces and temp_file_limit, removed at the end of the
 * transaction, also after an error) of 24-byte records (x, y, id, the
 * address being recomputed).
 *
 * The two methods build the same tree, page for page; they differ only in
 * how their I/O goes (the SSD changes of Fevgas 2019 §3.6):
 *	- 'four_phase' (the HDD original) moves the sub-files in requests of
 *	  one block (BLCKSZ, as BufFile does); every node goes to the device in
 *	  a request of its own (NodeStore.write_pages_singly), and every merge
 *	  step of phase 4 is committed at once, so the disk tree's nodes it
 *	  changes are written as it changes them and read back from the device
 *	  by the next step, as a loader without a write buffer does;
 *	- 'four_phase_ssd' moves the sub-files in large requests (1 MB, or a
 *	  sixteenth of maintenance_work_mem when that is less) and keeps the
 *	  nodes of phases 3 and 4 in the write buffer until it is full, then
 *	  writes them as one batch (the write-through store's commit hands them
 *	  to the device as arrays, which libaio and io_uring submit together);
 *	  a node changed again while buffered is written once.
 * The original also commits when the write buffer is full (the new nodes
 * of phase 3 wait for the next commit, written one request each in page
 * order, as they were made): its phase-3 writes are the SSD variant's but
 * for the requests, which favours it slightly.  Under FAST and eFIND,
 * whose write buffers are the frameworks' own, every node is committed
 * alone (as the one-pass loader does) and the write requests are the
 * frameworks'.  The temporary files are not on the index's device: the
 * device model never sees phases 1 and 2, which count only in wall time.
 *
 * IDENTIFICATION
 *	  src/index/xbrtree_phases.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/xbrtree.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "utils/memutils.h"

/* The SSD variant's temporary-file requests (Fevgas 2019 §3.6: "large batches"). */
#define PHASES_SSD_BATCH_BYTES	(1024 * 1024)

/* A sub-file of phases 1 and 2: the points of one quadrant. */
typedef struct SubFile
{
	File		file;			/* -1 until the first write */
	off_t		size;			/* bytes written */
	int64		count;			/* points */
	char	   *buf;			/* the request being filled */
	int			used;
} SubFile;

typedef struct XbrPhases
{
	XbrSpillKind kind;			/* XBR_SPILL_PHASES (xbrtree.h) */
	StructIndex *idx;
	bool		ssd;
	int			batch;			/* bytes per temporary-file request */
	int64		block_points;	/* the most points of one block */
	int64		commit_every;	/* the write buffer of phases 3 and 4, in nodes */
	SubFile		quadrant[4];	/* phase 1 */
	int64		npoints;
	/* what the load did, for its DEBUG1 line */
	int64		blocks;
	int64		splits;
	int64		reads;
	int64		writes;
	XbrWriter	writer;
	MemoryContext merge_cxt;	/* one merged item's reads, reset after it */
} XbrPhases;

bool
xbr_phases_method(const char *method)
{
	return strcmp(method, "four_phase") == 0 || strcmp(method, "four_phase_ssd") == 0;
}

static void
subfile_init(SubFile *sf)
{
	memset(sf, 0, sizeof(*sf));
	sf->file = -1;
}

/* Write the request being filled. */
static void
subfile_flush(XbrPhases *ph, SubFile *sf)
{
	int			written;

	if (sf->used == 0)
		return;
	if (sf->file < 0)
		sf->file = OpenTemporaryFile(false);
	errno = 0;
	written = FileWrite(sf->file, sf->buf, sf->used, sf->size, WAIT_EVENT_BUFFILE_WRITE);
	if (written != sf->used)
	{
		if (written >= 0 && errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write a temporary file of the bulk load of index \"%s\": %m",
						ph->idx->name)));
	}
	sf->size += sf->used;
	sf->used = 0;
	ph->writes++;
}

static void
subfile_put(XbrPhases *ph, SubFile *sf, const XbrLeafEntry *e)
{
	if (sf->buf == NULL)
		sf->buf = palloc(ph->batch);
	if (sf->used + (int) sizeof(XbrLeafEntry) > ph->batch)
		subfile_flush(ph, sf);
	memcpy(sf->buf + sf->used, e, sizeof(XbrLeafEntry));
	sf->used += sizeof(XbrLeafEntry);
	sf->count++;
}

/* Everything written; the buffer goes, the file stays for reading. */
static void
subfile_finish(XbrPhases *ph, SubFile *sf)
{
	subfile_flush(ph, sf);
	if (sf->buf != NULL)
		pfree(sf->buf);
	sf->buf = NULL;
}

static void
subfile_close(SubFile *sf)
{
	if (sf->file >= 0)
		FileClose(sf->file);	/* a temporary file goes with its close */
	if (sf->buf != NULL)
		pfree(sf->buf);
	subfile_init(sf);
}

/*
 * Read a sub-file back in requests of the load's size, calling fn for each
 * point.
 */
static void
subfile_scan(XbrPhases *ph, SubFile *sf,
			 void (*fn) (XbrPhases *ph, const XbrLeafEntry *e, void *arg), void *arg)
{
	int			records = ph->batch / sizeof(XbrLeafEntry);
	char	   *buf = palloc(records * sizeof(XbrLeafEntry));
	off_t		offset = 0;

	while (offset < sf->size)
	{
		int			amount = (int) Min((off_t) records * sizeof(XbrLeafEntry),
									   sf->size - offset);
		int			got;

		CHECK_FOR_INTERRUPTS();
		errno = 0;
		got = FileRead(sf->file, buf, amount, offset, WAIT_EVENT_BUFFILE_READ);
		if (got != amount)
		{
			if (got >= 0 && errno == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("a temporary file of the bulk load of index \"%s\" is shorter than written",
								ph->idx->name)));
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a temporary file of the bulk load of index \"%s\": %m",
							ph->idx->name)));
		}
		ph->reads++;
		for (int i = 0; i < amount / (int) sizeof(XbrLeafEntry); i++)
		{
			XbrLeafEntry e;

			memcpy(&e, buf + i * sizeof(XbrLeafEntry), sizeof(e));
			fn(ph, &e, arg);
			progress_step(ph->idx->progress, 1);
		}
		offset += amount;
	}
	pfree(buf);
}

BulkSpill *
xbr_phases_begin(StructIndex *idx, const char *method)
{
	XbrPhases  *ph = palloc0(sizeof(XbrPhases));
	int64		budget = (int64) maintenance_work_mem * 1024;
	int			records;

	Assert(xbr_phases_method(method));
	ph->kind = XBR_SPILL_PHASES;
	ph->idx = idx;
	ph->ssd = strcmp(method, "four_phase_ssd") == 0;
	ph->batch = ph->ssd ? (int) Min((int64) PHASES_SSD_BATCH_BYTES, Max((int64) BLCKSZ, budget / 16))
		: BLCKSZ;
	/* whole records per request */
	records = ph->batch / sizeof(XbrLeafEntry);
	ph->batch = records * sizeof(XbrLeafEntry);
	ph->block_points = Max((int64) 1, budget / 2 / XBR_BULK_BYTES_PER_POINT);
	/* FAST and eFIND buffer writes themselves: each node alone, as 'bulk' */
	ph->commit_every = idx->ns->buffers ? 1 :
		Max((int64) 1, budget / 4 / (int64) idx->ns->page_size);
	for (int d = 0; d < 4; d++)
		subfile_init(&ph->quadrant[d]);
	return (BulkSpill *) ph;
}

/* Phase 1 for one point: refused outside the extent, to its quadrant's sub-file. */
void
xbr_phases_put(BulkSpill *spill, const BulkItem *item)
{
	XbrPhases  *ph = (XbrPhases *) spill;
	XbrAddr		addr;
	XbrLeafEntry e;

	Assert(ph->kind == XBR_SPILL_PHASES);
	xbr_point_admit(ph->idx, item->box.xmin, item->box.ymin, &addr);
	memset(&e, 0, sizeof(e));
	e.x = item->box.xmin;
	e.y = item->box.ymin;
	e.id = item->id;
	subfile_put(ph, &ph->quadrant[xbr_addr_digit(addr, 0)], &e);
	ph->npoints++;
}

/* ---- phase 2: splitting a sub-file ---- */

typedef struct SplitTarget
{
	XbrAddr		quadrant;		/* of the sub-file being split */
	SubFile    *children;		/* [4] */
} SplitTarget;

static void
split_point(XbrPhases *ph, const XbrLeafEntry *e, void *arg)
{
	SplitTarget *t = arg;
	XbrAddr		a = xbr_leaf_entry_addr((XbrState *) ph->idx->state, e);

	Assert(xbr_addr_contains(t->quadrant, a));
	subfile_put(ph, &t->children[xbr_addr_digit(a, t->quadrant.len)], e);
}

/* ---- phase 3: loading a block ---- */

typedef struct BlockLoad
{
	XbrBulkEntry *items;
	int64		n;
} BlockLoad;

static void
block_point(XbrPhases *ph, const XbrLeafEntry *e, void *arg)
{
	BlockLoad  *b = arg;
	XbrBulkEntry *item = &b->items[b->n++];

	memset(item, 0, sizeof(*item));
	item->addr = xbr_leaf_entry_addr((XbrState *) ph->idx->state, e);
	item->e.leaf = *e;
}

/* ---- phase 4: merging a block tree into the disk-resident tree ---- */

/* Insert items of one level (points at level 0) into the disk tree. */
static void
merge_items(XbrPhases *ph, const XbrBulkEntry *items, int64 n, uint16 level)
{
	StructIndex *idx = ph->idx;

	for (int64 i = 0; i < n; i++)
	{
		Mbr			box;
		MemoryContext old = MemoryContextSwitchTo(ph->merge_cxt);

		CHECK_FOR_INTERRUPTS();
		if (level == 0)
		{
			box.xmin = box.xmax = items[i].e.leaf.x;
			box.ymin = box.ymax = items[i].e.leaf.y;
			xbr_insert_at(idx, 0, &items[i].e.leaf, items[i].addr, &box);
		}
		else
			xbr_insert_at(idx, level, &items[i].e.internal, items[i].addr,
						  &items[i].e.internal.dbr);
		progress_step(idx->progress, 1);
		/* the original writes the disk tree's nodes as each merge changes them */
		if (ph->ssd)
			xbr_writer_wrote(idx, &ph->writer);
		else
			xbr_writer_commit(idx, &ph->writer);
		MemoryContextSwitchTo(old);
		MemoryContextReset(ph->merge_cxt);
	}
}

/*
 * The block tree's root entries (or points), at `level`, join the disk
 * tree: inserted into it when it is at least as tall, else its root becomes
 * the root and the old root's entries are inserted into the block tree.
 */
static void
merge_block(XbrPhases *ph, XbrBulkEntry *top, int64 ntop, uint16 level)
{
	StructIndex *idx = ph->idx;
	FestMeta   *meta = idx->ns->meta;
	uint16		root_level = meta->height - 1;
	PageId		old_root;
	TreeNode   *root;
	TreeNode   *old;
	XbrBulkEntry *old_items;

	if (root_level >= level)
	{
		merge_items(ph, top, ntop, level);
		return;
	}

	/* the block tree is the taller: its root becomes the root */
	old_root = meta->root;
	root = ns_new_node(idx->ns, ns_alloc(idx->ns, level), level);
	for (int64 i = 0; i < ntop; i++)
		XbrInternalEntries(root)[root->nentries++] = top[i].e.internal;
	xbr_sort_entries(root);
	ns_write(idx->ns, root, NS_WRITE_NEW);
	ns_set_root(idx->ns, root->page, level + 1);
	tree_free_node(root);

	old = ns_read(idx->ns, old_root);
	if (old->level != root_level)
		tree_report_bad_level(idx, old, root_level);
	old_items = palloc(Max(old->nentries, 1) * sizeof(XbrBulkEntry));
	for (uint32 i = 0; i < old->nentries; i++)
	{
		memset(&old_items[i], 0, sizeof(XbrBulkEntry));
		if (root_level == 0)
		{
			old_items[i].e.leaf = XbrLeafEntries(old)[i];
			old_items[i].addr = xbr_leaf_entry_addr((XbrState *) idx->state,
													&old_items[i].e.leaf);
		}
		else
		{
			old_items[i].e.internal = XbrInternalEntries(old)[i];
			old_items[i].addr = xbr_entry_addr(&old_items[i].e.internal);
		}
	}
	ns_release(idx->ns, old_root);
	merge_items(ph, old_items, old->nentries, root_level);
	pfree(old_items);
	tree_free_node(old);
}

/* Phases 3 and 4 for one block: its sub-file is closed. */
static void
load_block(XbrPhases *ph, SubFile *sf, XbrAddr q)
{
	BlockLoad	b;
	XbrBulkEntry *top;
	int64		ntop;
	uint16		level;
	char		phase[PROGRESS_PHASE_LEN];

	snprintf(phase, sizeof(phase), "phase 3: reading block %lld",
			 (long long) ph->blocks + 1);
	progress_phase(ph->idx->progress, phase, "points", sf->count);
	b.items = MemoryContextAllocHuge(CurrentMemoryContext,
									 Max(sf->count, 1) * sizeof(XbrBulkEntry));
	b.n = 0;
	subfile_scan(ph, sf, block_point, &b);
	if (b.n != sf->count)
		elog(ERROR, "bulk load of index \"%s\" read %lld points of a block of %lld",
			 ph->idx->name, (long long) b.n, (long long) sf->count);
	subfile_close(sf);
	qsort(b.items, b.n, sizeof(XbrBulkEntry), xbr_bulk_entry_cmp);
	ph->blocks++;

	top = xbr_build_block(ph->idx, b.items, b.n, q, &ph->writer, &ntop, &level);
	snprintf(phase, sizeof(phase), "phase 4: merging block %lld", (long long) ph->blocks);
	progress_phase(ph->idx->progress, phase, "entries", -1);
	merge_block(ph, top, ntop, level);
	pfree(top);
}

/* Phase 2 for the sub-file of quadrant q, then 3 and 4 for its blocks. */
static void
process_subfile(XbrPhases *ph, SubFile *sf, XbrAddr q)
{
	SubFile		children[4];
	SplitTarget t;

	CHECK_FOR_INTERRUPTS();
	check_stack_depth();
	if (sf->count == 0)
	{
		subfile_close(sf);
		return;
	}
	/* a cell cannot be split: partition refuses it if it overflows a leaf */
	if (sf->count <= ph->block_points || q.len == XBR_MAX_DEPTH)
	{
		load_block(ph, sf, q);
		return;
	}
	for (int d = 0; d < 4; d++)
		subfile_init(&children[d]);
	t.quadrant = q;
	t.children = children;
	progress_phase(ph->idx->progress, "phase 2: splitting a sub-file", "points", sf->count);
	subfile_scan(ph, sf, split_point, &t);
	subfile_close(sf);
	for (int d = 0; d < 4; d++)
		subfile_finish(ph, &children[d]);
	ph->splits++;
	for (int d = 0; d < 4; d++)
		process_subfile(ph, &children[d], xbr_addr_child(q, d));
}

/*
 * Phases 2 to 4 over the four sub-files of phase 1, in Z order; the
 * empty root leaf of init_empty becomes the first block's tree's.
 */
void
xbr_phases_finish(StructIndex *idx, BulkSpill *spill)
{
	XbrPhases  *ph = (XbrPhases *) spill;

	Assert(ph->kind == XBR_SPILL_PHASES);
	if (ph->ssd)
		idx->ns->write_pages_singly = false;
	else
		idx->ns->write_pages_singly = true;
	xbr_writer_init(idx, &ph->writer, ph->commit_every);
	ph->merge_cxt = AllocSetContextCreate(CurrentMemoryContext, "xBR+-tree merge",
										  ALLOCSET_DEFAULT_SIZES);
	for (int d = 0; d < 4; d++)
		subfile_finish(ph, &ph->quadrant[d]);
	for (int d = 0; d < 4; d++)
		process_subfile(ph, &ph->quadrant[d], xbr_addr_child(xbr_addr_root(), d));
	xbr_writer_commit(idx, &ph->writer);
	elog(DEBUG1, "four-phase load of index \"%s\": %lld points in %lld blocks after %lld sub-file splits, %lld temporary-file writes and %lld reads of up to %d bytes, a write buffer of %lld nodes",
		 idx->name, (long long) ph->npoints, (long long) ph->blocks, (long long) ph->splits,
		 (long long) ph->writes, (long long) ph->reads, ph->batch,
		 (long long) ph->commit_every);
	MemoryContextDelete(ph->merge_cxt);
	pfree(ph);
}

/* The in-memory entry point: the same phases, so the same tree. */
void
xbr_phases_load(StructIndex *idx, BulkItem *items, int64 n, const char *method)
{
	BulkSpill  *spill = xbr_phases_begin(idx, method);

	for (int64 i = 0; i < n; i++)
		xbr_phases_put(spill, &items[i]);
	xbr_phases_finish(idx, spill);
}
