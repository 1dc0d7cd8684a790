/*-------------------------------------------------------------------------
 *
 * catalog.h
 *	  festival's catalog tables (festival.index, festival.device, profiles), read
 *	  and written through SPI.
 *
 * IDENTIFICATION
 *	  src/sql/catalog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_SQL_CATALOG_H
#define FEST_SQL_CATALOG_H

#include "festival.h"
#include "device/device.h"

#include "nodes/pg_list.h"
#include "storage/lock.h"
#include "utils/jsonb.h"

/* What festival.index (joined with festival.device) says about an index. */
typedef struct IndexCatalog
{
	int64		index_id;
	char	   *name;
	char	   *structure;
	Oid			owner;
	Jsonb	   *options;		/* complete configuration */
	Oid			source;			/* InvalidOid: no source table */
	char	   *id_column;
	char	   *geom_column;
	char	   *file_name;
	DeviceSpec	device;
} IndexCatalog;

/* catalog.c */
extern IndexCatalog *catalog_load_index(const char *name, bool missing_ok);
extern DeviceSpec *catalog_load_device(const char *name);
extern bool catalog_index_exists(const char *name);
extern int64 catalog_insert_index(const IndexCatalog *cat);
extern void catalog_delete_index(int64 index_id);
extern void catalog_insert_device(const DeviceSpec *spec);
extern void catalog_delete_device(const char *name);
extern int	catalog_device_index_count(const char *name);
extern char *catalog_postgis_schema(void);
extern void catalog_set_index_file(int64 index_id, const char *file_name);
extern bool catalog_file_name_in_use(const char *file_name);
extern List *catalog_list_devices(void);
extern uint64 catalog_database_uid(void);
extern char *catalog_lock_holder(const LOCKTAG *tag);
extern void catalog_begin_privileged(Oid *saved_user, int *saved_context);
extern void catalog_end_privileged(Oid saved_user, int saved_context);

/* api_profile.c (the profile table is that file's) */
extern DeviceProfile *catalog_load_profile(const char *name);

#endif							/* FEST_SQL_CATALOG_H */
