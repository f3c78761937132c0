// SPDX-License-Identifier: MIT
/*
 * kfdpool-stat: open files from holders, and the snapshot as JSON.
 *
 * The document is built with json-c and written on one line, so that
 * "--json --watch N" is NDJSON: one document per line, each readable on its
 * own.  Strings are made valid UTF-8 first (json-c escapes control
 * characters but passes other bytes through as they are).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "stat.h"

static int same_file(const struct kps_fdinfo *a, const struct kps_fdinfo *b)
{
	/* Without the file id (an older module) every fd stands alone. */
	return a->file_id && a->file_id == b->file_id && !strcmp(a->id, b->id);
}

int kps_group_files(struct kps_snapshot *s)
{
	size_t i, f;

	s->files = calloc(s->nholders ? s->nholders : 1, sizeof(*s->files));
	if (!s->files)
		return -1;
	s->nfiles = 0;
	for (i = 0; i < s->nholders; i++) {
		struct kps_holder *h = &s->holders[i];
		struct kps_file *file = NULL;
		size_t *nh;

		for (f = 0; f < s->nfiles; f++)
			if (same_file(s->files[f].fi, &h->fi)) {
				file = &s->files[f];
				break;
			}
		if (!file) {
			file = &s->files[s->nfiles++];
			file->fi = &h->fi;
		}
		nh = realloc(file->holders, (file->nholders + 1) * sizeof(*nh));
		if (!nh)
			return -1;
		file->holders = nh;
		file->holders[file->nholders++] = i;
		h->file = (size_t)(file - s->files);
	}
	return 0;
}

static int wanted(const struct kps_opts *o, const char *id)
{
	return !o->pool || !strcmp(o->pool, id);
}

static json_object *jstr(const char *str)
{
	char buf[4 * 256];

	kps_utf8_clean(str, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static void add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

static void addu(json_object *o, const char *key, uint64_t v)
{
	add(o, key, json_object_new_uint64(v));
}

static void addi(json_object *o, const char *key, int64_t v)
{
	add(o, key, json_object_new_int64(v));
}

static const char *mode_name(int mode)
{
	return mode == KFDPOOL_MODE_OWNER ? "owner" :
	       mode == KFDPOOL_MODE_IMPORT ? "import" : "unknown";
}

static json_object *json_holder(const struct kps_holder *h)
{
	json_object *o = json_object_new_object();

	addi(o, "pid", h->pid);
	add(o, "comm", jstr(h->comm));
	addi(o, "fd", h->fd);
	return o;
}

/* An open file of a pool: its mode, its imports and who holds it. */
static json_object *json_file(const struct kps_snapshot *s,
			      const struct kps_file *f)
{
	json_object *o = json_object_new_object(), *hs = json_object_new_array();
	size_t i;

	add(o, "file_id", f->fi->file_id ? json_object_new_uint64(f->fi->file_id) : NULL);
	add(o, "mode", json_object_new_string(mode_name(f->fi->mode)));
	addu(o, "imports", f->fi->fd_imports);
	addu(o, "imported", f->fi->fd_imported);
	for (i = 0; i < f->nholders; i++)
		json_object_array_add(hs, json_holder(&s->holders[f->holders[i]]));
	add(o, "holders", hs);
	return o;
}

static json_object *json_pool(const struct kps_snapshot *s,
			      const struct kps_pool *p)
{
	json_object *o = json_object_new_object(), *files = json_object_new_array();
	size_t i;

	add(o, "id", json_object_new_string(p->id));
	add(o, "name", jstr(p->name));
	addi(o, "owner_pid", p->owner_pid);
	add(o, "uid", p->uid_known ? json_object_new_uint64(p->uid) : NULL);
	addu(o, "limit", p->limit);
	addu(o, "handle_types", p->handle_types);
	addu(o, "reserved", p->reserved);
	addu(o, "reserved_high", p->reserved_high);
	addu(o, "used", p->used);
	addu(o, "used_high", p->used_high);
	addu(o, "draining", p->draining);
	addu(o, "entries", p->entries);
	addu(o, "draining_entries", p->draining_entries);
	addu(o, "records", p->records);
	addu(o, "import_fds", p->import_fds);
	addu(o, "imported", p->imported);
	add(o, "persistent", json_object_new_boolean(p->persistent));
	add(o, "owner_fds", p->list_known ?
	    json_object_new_uint64(p->owner_fds) : NULL);
	add(o, "age_s", p->list_known ?
	    json_object_new_uint64(p->age_ns / 1000000000u) : NULL);
	for (i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].fi->id, p->id))
			json_object_array_add(files, json_file(s, &s->files[i]));
	add(o, "files", files);
	return o;
}

static json_object *json_fd(const struct kps_snapshot *s,
			    const struct kps_holder *h)
{
	const struct kps_fdinfo *f = &h->fi;
	json_object *o = json_holder(h);
	size_t shared = s->files[h->file].nholders;

	add(o, "file_id", f->file_id ? json_object_new_uint64(f->file_id) : NULL);
	addu(o, "file_holders", shared);
	add(o, "mode", json_object_new_string(mode_name(f->mode)));
	add(o, "id", json_object_new_string(f->id));
	add(o, "name", jstr(f->name));
	addi(o, "owner_pid", f->owner_pid);
	addu(o, "limit", f->limit);
	addu(o, "handle_types", f->handle_types);
	addu(o, "reserved", f->reserved);
	addu(o, "reserved_high", f->reserved_high);
	addu(o, "used", f->used);
	addu(o, "used_high", f->used_high);
	addu(o, "draining", f->draining);
	addu(o, "entries", f->entries);
	addu(o, "draining_entries", f->draining_entries);
	addu(o, "records", f->records);
	addu(o, "import_fds", f->import_fds);
	addu(o, "imported", f->imported);
	addu(o, "fd_imports", f->fd_imports);
	addu(o, "fd_imported", f->fd_imported);
	return o;
}

char *kps_json(const struct kps_snapshot *s, const struct kps_opts *o,
	       long long now)
{
	json_object *doc = json_object_new_object(), *a;
	const char *text;
	char *line = NULL;
	size_t i, len;

	if (!doc)
		return NULL;
	addi(doc, "version", 3);
	addi(doc, "time", now);
	add(doc, "device", jstr(o->device));
	add(doc, "source", json_object_new_string(
		s->source == KPS_SOURCE_IOCTL ? "ioctl" : "fdinfo"));
	add(doc, "scope", s->scope == KFDPOOL_POOL_LIST_ALL ? json_object_new_string("all") :
		s->scope == KFDPOOL_POOL_LIST_OWN ? json_object_new_string("own") : NULL);
	a = json_object_new_array();
	for (i = 0; i < s->npools; i++)
		if (wanted(o, s->pools[i].id))
			json_object_array_add(a, json_pool(s, &s->pools[i]));
	add(doc, "pools", a);
	a = json_object_new_array();
	for (i = 0; i < s->nholders; i++)
		if (wanted(o, s->holders[i].fi.id))
			json_object_array_add(a, json_fd(s, &s->holders[i]));
	add(doc, "fds", a);
	addu(doc, "unreadable_processes", s->unreadable_procs);
	a = json_object_new_array();
	for (i = 0; i < (size_t)s->nnotes; i++)
		json_object_array_add(a, jstr(s->notes[i]));
	add(doc, "notes", a);

	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text) {
		len = strlen(text);
		line = malloc(len + 2);
		if (line) {
			memcpy(line, text, len);
			memcpy(line + len, "\n", 2);
		}
	}
	json_object_put(doc);
	return line;
}
