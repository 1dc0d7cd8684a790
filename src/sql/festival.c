/*-------------------------------------------------------------------------
 *
 * festival.c
 *	  Module initialisation: settings and callbacks.
 *
 * IDENTIFICATION
 *	  src/sql/festival.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/xact.h"
#include "sql/progress.h"

#include "nodestore/framework.h"
#include "index/knn.h"
#include "device/engine.h"
#include "fmgr.h"
#include "log/log.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * The settings of the SQL layer (declared in handle.h), which PostgreSQL
 * sets and festival only reads: at the beginning of an operation (handed
 * down from there), or when an index is opened.
 */
char	   *fest_data_directory_setting = NULL;
int			fest_max_index_memory_kb = 1024 * 1024;
int			fest_progress_interval = 10;
bool		fest_track_io_cpu = false;
bool		fest_passthrough_layers = false;
bool		fest_track_cpu_time = false;
int			fest_build_commit_rows = 0;
int			fest_knn_batch = 64;
bool		fest_generic_query_batch = false;
int			fest_knn_speculative = 0;
int			fest_window_search = WINDOW_SEARCH_DEPTH_FIRST;
int			fest_queue_depth = 32;

static const struct config_enum_entry log_sync_options[] = {
	{"operation", LOG_SYNC_OPERATION, false},
	{"timer", LOG_SYNC_TIMER, false},
	{"never", LOG_SYNC_NEVER, false},
	{NULL, 0, false}
};

static const struct config_enum_entry window_search_options[] = {
	{"depth-first", WINDOW_SEARCH_DEPTH_FIRST, false},
	{"level", WINDOW_SEARCH_LEVEL, false},
	{NULL, 0, false}
};

void
_PG_init(void)
{
	DefineCustomStringVariable("festival.data_directory",
							   "Directory under which festival devices keep index files.",
							   "Device directories are resolved inside it and cannot leave it. "
							   "Empty means \"festival\" inside the data directory; a relative "
							   "path is taken relative to the data directory.",
							   &fest_data_directory_setting,
							   "",
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("festival.progress_interval",
							"Seconds between progress notices of long operations (0 disables them).",
							"Builds, bulk loads, festival.insert_many and festival.check(); the festival.progress view "
							"shows them whatever this says when festival is in shared_preload_libraries.",
							&fest_progress_interval,
							10, 0, 86400,
							PGC_USERSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("festival.log_sync",
							 "When the redo logs (FAST's and eFIND's, the write-through store's journal) are synced.",
							 "never (the default, as FESTIval and the papers' experiments): only when the "
							 "index is flushed or closed; every modification is still written at once, so "
							 "nothing acknowledged is lost when a backend dies, but an operating-system "
							 "crash or power loss may lose what was not synced; operation: at the end of "
							 "every modification (nothing acknowledged is lost even then); timer: at the end "
							 "of a modification when the last sync is older than festival.log_sync_interval.",
							 &fest_log_sync_mode,
							 LOG_SYNC_NEVER,
							 log_sync_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("festival.log_sync_interval",
							"Milliseconds between log syncs when festival.log_sync is timer.",
							NULL,
							&fest_log_sync_interval,
							1000, 1, 3600000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("festival.track_io_cpu",
							 "Measures the CPU time of every device call (io_cpu_seconds).",
							 "Off by default: reading a thread's CPU clock is a system call "
							 "that costs about as much as a cached page read.",
							 &fest_track_io_cpu,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("festival.passthrough_layers",
							 "Puts a page I/O layer that changes nothing above every layer of the chains of indices opened from now on.",
							 "A test of the layers' forwarding (device/passthrough.c): files, answers and "
							 "counters stay exactly as without it.",
							 &fest_passthrough_layers,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("festival.track_cpu_time",
							 "Measures the CPU time of index work and of refinement (index_cpu_seconds, refine_cpu_seconds).",
							 "Off by default: reading a thread's CPU clock is a system call, "
							 "and an operation reads it twice (four times with refinement).",
							 &fest_track_cpu_time,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("festival.generic_query_batch",
							 "festival.query_batch uses the generic depth-first batch search even for a structure with a batch search of its own.",
							 "For comparisons: the xBR+-tree reads the nodes a batch needs a level at a time "
							 "(Fevgas 2019 section 3.6); the generic search (every other structure) reads groups "
							 "of up to 64 nodes depth first. Answers are the same.",
							 &fest_generic_query_batch,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("festival.build_commit_rows",
							"Rows of an 'insert' build of a write-through index committed together (0: as many as hold maintenance_work_mem of page images).",
							"1 commits (writes) every row as festival.insert does, which is what the papers' one-at-a-time "
							"builds measure; larger batches write a page changed by many rows once.",
							&fest_build_commit_rows,
							0, 0, 1000000,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("festival.write_through_per_access",
							 "Charges the write-through store's device for every node access, as FESTIval's disk-based indices.",
							 "Off, a modification reads a node it has already written from memory and writes each "
							 "page once at its commit; on, such a read also reads the page from the device and a node "
							 "written k times is written k times (Carniel et al. 2016, 2017 read and wrote every node "
							 "access with direct I/O). The index built is the same either way.",
							 &fest_write_through_per_access,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("festival.knn_batch",
							"Most nodes festival.knn reads with one batch of device reads (0 or 1: one at a time).",
							"Only nodes the search is sure to read join a batch, so answers and the "
							"nodes read are those of one at a time; libaio and io_uring submit a "
							"batch with one system call.",
							&fest_knn_batch,
							64, 0, KNN_MAX_GROUP,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("festival.knn_speculative",
							"Most nodes festival.knn adds to a batch without knowing it needs them (0: none).",
							"Fewer submissions for small k, at the price of extra node reads "
							"(counted in nodes_visited and pages_read); answers do not change. "
							"A batch still holds at most festival.knn_batch nodes.",
							&fest_knn_speculative,
							0, 0, KNN_MAX_GROUP,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("festival.window_search",
							 "How the R-tree family and the xBR+-tree read the nodes of a window search.",
							 "depth-first (the default, as the papers' trees): one node at a time; level: "
							 "the children a window reaches on one level are read together, in batches of "
							 "the device's queue depth (one submission each under libaio and io_uring). "
							 "Answers and the nodes read are the same.",
							 &fest_window_search,
							 WINDOW_SEARCH_DEPTH_FIRST,
							 window_search_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("festival.queue_depth",
							"Most pages a level-at-a-time window search submits at once to a device without a profile.",
							"A device with a profile uses its channels. Choose the smallest queue depth at which "
							"the drive's random 4 kB read rate stops growing (docs/devices.md).",
							&fest_queue_depth,
							32, 1, IO_ENGINE_MAX_DEPTH,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("festival.open_timeout",
							"How long opening an index waits for another session to release it.",
							"A session that ends, closes the index or (reading another role's "
							"index) ends its transaction releases it; 0 fails at once.",
							&fest_open_timeout_ms,
							5000, 0, 3600000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("festival.max_index_memory",
							"Most memory one open index may use for its buffers and page cache.",
							"buffer_size (FAST, eFIND) plus cache_size (when cache is not none); "
							"checked when an index is created and opened.",
							&fest_max_index_memory_kb,
							1024 * 1024, 64, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("festival");
	progress_shmem_register();
	handle_register_callbacks();
}
