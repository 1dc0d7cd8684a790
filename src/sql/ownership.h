/*-------------------------------------------------------------------------
 *
 * ownership.h
 *	  Which database owns an index file (docs/durability.md, "One database
 *	  owns an index's files").
 *
 * Every index file records its owner in its meta page (FestFileOwner,
 * format/meta.h): the cluster's system identifier, the database's OID and
 * the database's random identifier (festival.database_identity).  Only the
 * owner opens, changes or removes the file; a catalog row copied into
 * another database (pg_dump and restore, CREATE DATABASE ... TEMPLATE) is
 * refused until festival.adopt_index() makes that database its own copy.
 *
 * IDENTIFICATION
 *	  src/sql/ownership.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_SQL_OWNERSHIP_H
#define FEST_SQL_OWNERSHIP_H

#include "sql/catalog.h"
#include "format/meta.h"

/* How a file stands to this database. */
typedef enum FileStanding
{
	FILE_OURS,					/* its owner is this database */
	FILE_UNCLAIMED_OURS,		/* no owner recorded; its name says this
								 * database's OID (claimed at its next open) */
	FILE_OTHERS					/* another database's, or unknown */
} FileStanding;

/* What is known of a file's owner, from its meta page or its name. */
typedef struct FileOwnerInfo
{
	bool		exists;
	bool		readable;		/* a valid meta copy was found */
	FestFileOwner owner;		/* from the meta page; zero if none */
	Oid			name_oid;		/* the OID in its name "db<oid>_", or 0 */
} FileOwnerInfo;

extern void ownership_self(FestFileOwner *self);
extern Oid	ownership_name_oid(const char *file_name);
extern void ownership_inspect(const char *path, const char *file_name,
							  FileOwnerInfo *info);
extern FileStanding ownership_standing(const FileOwnerInfo *info,
									   const FestFileOwner *self);
extern char *ownership_describe(const FileOwnerInfo *info,
								const FestFileOwner *self);
extern void ownership_refuse(const char *index_name, const char *path,
							 const FileOwnerInfo *info,
							 const FestFileOwner *self) pg_attribute_noreturn();
extern void ownership_settle_open(const char *index_name, const char *path,
								  const char *file_name, FestMeta *meta,
								  PageIO *io);

#endif							/* FEST_SQL_OWNERSHIP_H */
