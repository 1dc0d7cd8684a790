/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  Choosing an I/O engine and reporting one the kernel refuses.
 *
 * IDENTIFICATION
 *	  src/device/engine.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/engine.h"

typedef struct EngineEntry
{
	IOEngine   *(*create) (int fd, uint32 page_size, const char *path);
	void		(*probe) (void);
} EngineEntry;

/* In DeviceEngine order (device_engine_names). */
static const EngineEntry engine_table[] = {
	{engine_sync_create, engine_sync_probe},
	{engine_libaio_create, engine_libaio_probe},
	{engine_io_uring_create, engine_io_uring_probe},
	{engine_mmap_create, engine_mmap_probe}
};

StaticAssertDecl(lengthof(engine_table) == DEVICE_ENGINE_MMAP + 1,
				 "one engine_table entry per DeviceEngine");

IOEngine *
io_engine_create(DeviceEngine engine, int fd, uint32 page_size, const char *path)
{
	Assert(engine >= 0 && engine < lengthof(engine_table));
	return engine_table[engine].create(fd, page_size, path);
}

void
io_engine_require(DeviceEngine engine)
{
	Assert(engine >= 0 && engine < lengthof(engine_table));
	engine_table[engine].probe();
}

/*
 * The kernel refused to set up an engine (err from call).  Disabled
 * interfaces (ENOSYS: not built or kernel.io_uring_disabled; EPERM/EACCES:
 * a seccomp filter or the io_uring group setting) are a missing feature;
 * anything else is a shortage of kernel resources.
 */
void
engine_unavailable(const char *engine, int err, const char *call)
{
	const char *other = strcmp(engine, "io_uring") == 0 ? "libaio" : "io_uring";

	errno = err;
	if (err == ENOSYS || err == EPERM || err == EACCES || err == EOPNOTSUPP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("device engine \"%s\" is not available on this server", engine),
				 errdetail("%s failed: %m.", call),
				 errhint("Use engine => 'sync' or '%s'.", other)));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
			 errmsg("could not set up device engine \"%s\"", engine),
			 errdetail("%s failed: %m.", call),
			 strcmp(engine, "libaio") == 0
			 ? errhint("Close other indices, raise the fs.aio-max-nr sysctl, or use engine => 'sync'.")
			 : errhint("Close other indices, raise the locked-memory limit, or use engine => 'sync' or '%s'.",
					   other)));
}
