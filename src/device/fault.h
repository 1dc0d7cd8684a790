/*-------------------------------------------------------------------------
 *
 * fault.h
 *	  The fault-injecting device layer, a testing tool.
 *
 * A FaultState belongs to an open index's DeviceState (it survives the
 * reload after a failed operation, like the simulated drive).  Armed with
 * a target (page writes, page reads, syncs of the index file, writes or
 * syncs of the redo log), a count and an error, it lets `after` operations
 * of the target succeed and makes the next one fail: with ENOSPC or EIO,
 * torn (the first half of the page lands, then the call fails as a full
 * device would), or crash (the process kills itself with SIGKILL).  It is
 * one-shot: firing disarms it.
 *
 * The PageIO decorator (fault_pageio_create) sits directly above the real
 * device, below the simulated drive, tracing and cache, so it sees exactly
 * what reaches the device.  The redo log, which writes its file itself,
 * calls fault_check_log before each write and sync; the hot-page weights
 * file and the tier map of a tiered index call fault_check_file during
 * their writes.
 *
 * IDENTIFICATION
 *	  src/device/fault.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_FAULT_H
#define FEST_FAULT_H

#include "device/pageio.h"

typedef enum FaultTarget
{
	FAULT_WRITE,
	FAULT_READ,
	FAULT_SYNC,
	FAULT_LOG_WRITE,
	FAULT_LOG_SYNC,
	FAULT_TIER_WRITE,			/* a tiered index's weights file (tier/tier_weights.c) */
	FAULT_TIER_MAP_WRITE,		/* a tiered index's page -> tier map (tier/tier_map.c) */
	FAULT_NTARGETS
} FaultTarget;

typedef enum FaultError
{
	FAULT_ENOSPC,
	FAULT_EIO,
	FAULT_TORN,
	FAULT_CRASH
} FaultError;

/* Spellings accepted in SQL, NULL-terminated, in enum order. */
extern const char *const fault_target_names[];
extern const char *const fault_error_names[];

typedef struct FaultState
{
	bool		armed;
	FaultTarget target;
	FaultError	error;
	int64		remaining;		/* operations of the target still to succeed */
	uint64		seen[FAULT_NTARGETS];	/* operations since the state was made */
	uint64		fired;			/* faults injected so far */
} FaultState;

extern void fault_arm(FaultState *fs, FaultTarget target, int64 after,
					  FaultError error);
extern void fault_disarm(FaultState *fs);
extern PageIO *fault_pageio_create(PageIO *below, FaultState *fs);

/*
 * For the redo log: count one operation of target (FAULT_LOG_WRITE or
 * FAULT_LOG_SYNC) and return the errno to fail it with, 0 to go on.
 * *torn is set when only the first half of the bytes should be written.
 * A crash fault never returns.
 */
extern int	fault_check_log(FaultState *fs, FaultTarget target, bool *torn);
extern int	fault_log_hook(void *arg, bool sync, bool *torn);
extern int	fault_check_file(FaultState *fs, FaultTarget target, bool *torn);

#endif							/* FEST_FAULT_H */
