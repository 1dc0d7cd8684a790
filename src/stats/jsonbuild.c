/*-------------------------------------------------------------------------
 *
 * jsonbuild.c
 *	  Small helpers for building jsonb objects key by key.
 *
 * Each helper pushes a key and its value into an object being built with
 * pushJsonbValue; a NULL key pushes only the value (for arrays).
 *
 * IDENTIFICATION
 *	  src/stats/jsonbuild.c
 *
 *-------------------------------------------------------------------------
 */
#include "stats/jsonbuild.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

void
jb_key(JsonbParseState **state, const char *key)
{
	JsonbValue	k;

	/* pushJsonbValue keeps the pointer until the document is built */
	k.type = jbvString;
	k.val.string.val = pstrdup(key);
	k.val.string.len = strlen(key);
	pushJsonbValue(state, WJB_KEY, &k);
}

static void
push_value(JsonbParseState **state, const char *key, JsonbValue *v)
{
	if (key != NULL)
	{
		jb_key(state, key);
		pushJsonbValue(state, WJB_VALUE, v);
	}
	else
		pushJsonbValue(state, WJB_ELEM, v);
}

void
jb_numeric(JsonbParseState **state, const char *key, Numeric value)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = value;
	push_value(state, key, &v);
}

void
jb_int(JsonbParseState **state, const char *key, int64 value)
{
	jb_numeric(state, key, int64_to_numeric(value));
}

void
jb_string(JsonbParseState **state, const char *key, const char *value)
{
	JsonbValue	v;

	if (value == NULL)
	{
		jb_null(state, key);
		return;
	}
	v.type = jbvString;
	v.val.string.val = pstrdup(value);
	v.val.string.len = strlen(value);
	push_value(state, key, &v);
}

void
jb_bool(JsonbParseState **state, const char *key, bool value)
{
	JsonbValue	v;

	v.type = jbvBool;
	v.val.boolean = value;
	push_value(state, key, &v);
}

void
jb_null(JsonbParseState **state, const char *key)
{
	JsonbValue	v;

	v.type = jbvNull;
	push_value(state, key, &v);
}

/* Embed a whole jsonb document as the value of key. */
void
jb_jsonb(JsonbParseState **state, const char *key, Jsonb *value)
{
	JsonbValue	v;

	v.type = jbvBinary;
	v.val.binary.data = &value->root;
	v.val.binary.len = VARSIZE(value) - VARHDRSZ;
	push_value(state, key, &v);
}
