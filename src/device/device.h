/*-------------------------------------------------------------------------
 *
 * device.h
 *	  Devices: where index files live and how their pages are moved.
 *
 * A device (a row of festival.device) names a directory inside the
 * superuser-only setting festival.data_directory, an I/O mode (O_DIRECT or
 * through the OS cache), an engine (how requests are submitted) and an
 * optional device profile.  Opening an index file on a device yields a
 * PageIO (device/pageio.h).
 *
 * Paths given in SQL never leave the data directory: device directories
 * must be relative, may not contain "." or ".." components, and are
 * checked with realpath() after creation, so a symlink pointing elsewhere
 * is refused as well.
 *
 * IDENTIFICATION
 *	  src/device/device.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_DEVICE_H
#define FEST_DEVICE_H

#include "festival.h"
#include "device/pageio.h"
#include "device/profile.h"

#include "datatype/timestamp.h"

typedef enum DeviceKind
{
	DEVICE_KIND_FILE,
	DEVICE_KIND_MEMORY
} DeviceKind;

typedef enum DeviceIOMode
{
	DEVICE_IO_DIRECT,
	DEVICE_IO_BUFFERED
} DeviceIOMode;

typedef enum DeviceEngine
{
	DEVICE_ENGINE_SYNC,
	DEVICE_ENGINE_LIBAIO,
	DEVICE_ENGINE_IO_URING,
	DEVICE_ENGINE_MMAP			/* reads out of a mapping: buffered only */
} DeviceEngine;

/* Does the engine hand the kernel an array of pages in one submission? */
#define device_engine_batches(engine) \
	((engine) == DEVICE_ENGINE_LIBAIO || (engine) == DEVICE_ENGINE_IO_URING)

/*
 * What a device kind offers the layers above, which ask for a capability
 * and never test a kind: a new kind (a tier, a remote store) declares its
 * capabilities here and the SQL layer needs no change.
 */
typedef enum DeviceCapability
{
	DEVICE_CAP_PERSISTENT = 1 << 0, /* pages outlive the open index and the
									 * session that wrote them */
	DEVICE_CAP_FILE = 1 << 1	/* the index is a file in the device's
								 * directory (it has a path that exists) */
} DeviceCapability;

typedef struct DeviceSpec
{
	char	   *name;
	char	   *directory;		/* relative to the data directory */
	DeviceKind	kind;
	DeviceIOMode io_mode;
	DeviceEngine engine;
	char	   *profile;		/* NULL = no device model */
} DeviceSpec;

extern bool device_has(const DeviceSpec *spec, DeviceCapability cap);

/* Spellings accepted in SQL, NULL-terminated, in enum order. */
extern const char *const device_kind_names[];
extern const char *const device_io_names[];
extern const char *const device_engine_names[];

/* device.c */
extern int	device_parse_choice(const char *what, const char *value,
								const char *const *choices);
extern void device_validate_spec(const DeviceSpec *spec);
extern void device_validate_directory(const char *directory);
extern char *device_data_directory(const char *setting, bool create);
extern char *device_locate_directory(const char *data_directory,
									 const char *directory, bool create,
									 char **problem, int *code);
extern char *device_resolve_directory(const char *data_directory,
									  const char *directory, bool create);
extern char *device_file_path(const char *device_directory,
							  const char *file_name);

/* file.c */
extern PageIO *device_file_open(const DeviceSpec *spec, const char *path,
								uint32 page_size, bool create,
								FestStats *stats, const bool *time_cpu);
extern bool device_file_exists(const char *path);

/*
 * Waiting for an index another session holds (festival.open_timeout, in
 * milliseconds; 0 means do not wait).  A caller polls: it tries to take
 * the lock, and while device_wait_for_holder() returns true tries again.
 */
extern int	fest_open_timeout_ms;
extern bool device_wait_for_holder(TimestampTz started);
extern void device_file_unlink(const char *path);

/* memory.c: the pages of a memory device */
typedef struct MemoryPages MemoryPages;
extern MemoryPages *memory_pages_create(uint32 page_size);
extern uint64 memory_pages_count(const MemoryPages *mem);
extern PageIO *memory_pageio_create(MemoryPages *mem, const char *label,
									bool batched, FestStats *stats,
									const bool *time_cpu);

/*
 * open.c: what an open index keeps of its storage beyond one PageIO (see
 * open.c): memory pages and the simulated drive, in their own context.
 */
struct SimDevice;
struct FaultState;
typedef struct DeviceState
{
	MemoryContext cxt;			/* owns everything below */
	DeviceProfile *profile;		/* NULL: no device model */
	MemoryPages *pages;			/* memory devices */
	struct SimDevice *sim;		/* with a profile */
	struct FaultState *fault;	/* the fault layer's (device/fault.h) */
} DeviceState;

extern DeviceState *device_state_create(MemoryContext parent,
										const DeviceProfile *profile);
extern PageIO *device_open(const DeviceSpec *spec, DeviceState *state,
						   const char *path, uint32 page_size, bool create,
						   FestStats *stats, const bool *time_cpu);
extern bool device_state_holds_pages(const DeviceState *state);
extern int	device_queue_depth(const DeviceState *state, int setting);

/* passthrough.c: a layer that changes nothing (festival.passthrough_layers) */
extern PageIO *passthrough_pageio_create(PageIO *below);

#endif							/* FEST_DEVICE_H */
