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

#include "fmgr.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

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
							"Seconds between progress notices of long builds (0 disables them).",
							NULL,
							&fest_progress_interval,
							10, 0, 86400,
							PGC_USERSET,
							GUC_UNIT_S,
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

	MarkGUCPrefixReserved("festival");
	handle_register_callbacks();
}
